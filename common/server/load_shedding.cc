#include "common/server/load_shedding.h"

#include "absl/strings/str_cat.h"
#include "common/status/errors.h"

namespace modelatlas {

using grpc::experimental::InterceptionHookPoints;

// One per call: entered when the call is created, left when it is destroyed.
class InFlightInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit InFlightInterceptor(CallLimiter* limiter) : limiter_(limiter) { limiter_->Enter(); }
  ~InFlightInterceptor() override { limiter_->Leave(); }
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    methods->Proceed();
  }

 private:
  CallLimiter* limiter_;
};

namespace {

// "/pkg.Service/Method" -> "pkg.Service".
absl::string_view ServiceOf(absl::string_view full_method) {
  if (!full_method.empty() && full_method.front() == '/') full_method.remove_prefix(1);
  const size_t slash = full_method.find('/');
  return slash == absl::string_view::npos ? full_method : full_method.substr(0, slash);
}

class InFlightFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  InFlightFactory(CallLimiter* limiter, const absl::flat_hash_set<std::string>* services)
      : limiter_(limiter), services_(services) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    if (!services_->contains(ServiceOf(info->method()))) return nullptr;
    return new InFlightInterceptor(limiter_);
  }

 private:
  CallLimiter* limiter_;
  const absl::flat_hash_set<std::string>* services_;
};

}  // namespace

CallLimiter::CallLimiter(std::string program, int max_in_flight, prometheus::Registry& registry)
    : program_(std::move(program)),
      max_in_flight_(max_in_flight),
      in_flight_gauge_(&prometheus::BuildGauge()
                            .Name("modelatlas_server_calls_in_flight")
                            .Help("Calls to the service being worked on (health checks excluded)")
                            .Register(registry)
                            .Add({})),
      shed_total_(&prometheus::BuildCounter()
                       .Name("modelatlas_server_calls_shed_total")
                       .Help("Calls refused with RESOURCE_EXHAUSTED: too many in flight")
                       .Register(registry)
                       .Add({})) {}

void CallLimiter::CountService(absl::string_view full_service_name) {
  counted_services_.emplace(full_service_name);
}

void CallLimiter::Enter() {
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  in_flight_gauge_->Increment();
}

void CallLimiter::Leave() {
  in_flight_.fetch_sub(1, std::memory_order_relaxed);
  in_flight_gauge_->Decrement();
}

absl::Status CallLimiter::Check() const {
  // The call being checked has entered already: the others are in flight.
  const int others = in_flight_.load(std::memory_order_relaxed) - 1;
  if (max_in_flight_ <= 0 || others < max_in_flight_) return absl::OkStatus();
  shed_total_->Increment();
  return WithReason(
      absl::ResourceExhaustedError(absl::StrCat(
          program_, " is overloaded: ", others, " calls in flight, limit ", max_in_flight_,
          " (--max_concurrent_calls); retry with backoff or another replica")),
      "SERVER_OVERLOADED");
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
CallLimiter::InterceptorFactory() {
  return std::make_unique<InFlightFactory>(this, &counted_services_);
}

}  // namespace modelatlas
