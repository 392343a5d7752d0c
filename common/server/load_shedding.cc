#include "common/server/load_shedding.h"

#include <grpcpp/server_context.h>

#include "absl/strings/str_cat.h"
#include "common/server/scrape_metrics.h"
#include "common/status/errors.h"

namespace modelatlas {

using grpc::experimental::InterceptionHookPoints;

namespace {

// "ipv4:10.0.0.7:41234" -> "ipv4:10.0.0.7"; "ipv6:[::1]:5000" -> "ipv6:[::1]".
std::string HostOf(absl::string_view peer) {
  const size_t colon = peer.rfind(':');
  const size_t bracket = peer.rfind(']');
  if (colon == absl::string_view::npos || peer.find(':') == colon ||
      (bracket != absl::string_view::npos && colon < bracket)) {
    return std::string(peer);
  }
  return std::string(peer.substr(0, colon));
}

}  // namespace

// One per call: entered when the call is created, left when it is destroyed.
// A stream is also counted under its caller's host.
class InFlightInterceptor : public grpc::experimental::Interceptor {
 public:
  InFlightInterceptor(CallLimiter* limiter, grpc::experimental::ServerRpcInfo* info)
      : limiter_(limiter) {
    limiter_->Enter();
    if (info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY) {
      host_ = HostOf(info->server_context()->peer());
      stream_ = true;
      limiter_->EnterStream(host_);
    }
  }
  ~InFlightInterceptor() override {
    if (stream_) limiter_->LeaveStream(host_);
    limiter_->Leave();
  }
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    methods->Proceed();
  }

 private:
  CallLimiter* limiter_;
  bool stream_ = false;
  std::string host_;
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
    return new InFlightInterceptor(limiter_, info);
  }

 private:
  CallLimiter* limiter_;
  const absl::flat_hash_set<std::string>* services_;
};

}  // namespace

CallLimiter::CallLimiter(std::string program, int max_in_flight, prometheus::Registry& registry)
    : program_(std::move(program)),
      max_in_flight_(max_in_flight),
      shed_total_(&prometheus::BuildCounter()
                       .Name("modelatlas_server_calls_shed_total")
                       .Help("Calls refused with RESOURCE_EXHAUSTED: too many in flight")
                       .Register(registry)
                       .Add({})) {}

void CallLimiter::CountService(absl::string_view full_service_name) {
  counted_services_.emplace(full_service_name);
}

void CallLimiter::Enter() { in_flight_.fetch_add(1, std::memory_order_relaxed); }

void CallLimiter::Leave() { in_flight_.fetch_sub(1, std::memory_order_relaxed); }

std::shared_ptr<prometheus::Collectable> CallLimiter::InFlightCollectable() const {
  return ScrapeTimeCollectable([this] {
    return std::vector<prometheus::MetricFamily>{
        SampleFamily("modelatlas_server_calls_in_flight",
                     "Calls to the service being worked on (health checks excluded)",
                     {{Labels{}, static_cast<double>(in_flight())}})};
  });
}

void CallLimiter::EnterStream(const std::string& host) {
  absl::MutexLock lock(&streams_mutex_);
  ++streams_;
  ++streams_by_host_[host];
}

void CallLimiter::LeaveStream(const std::string& host) {
  absl::MutexLock lock(&streams_mutex_);
  --streams_;
  auto it = streams_by_host_.find(host);
  if (it != streams_by_host_.end() && --it->second <= 0) streams_by_host_.erase(it);
}

absl::Status CallLimiter::CheckStream(absl::string_view peer) const {
  if (absl::Status busy = Check(); !busy.ok()) return busy;
  if (max_in_flight_ <= 0) return absl::OkStatus();
  const std::string host = HostOf(peer);
  int others = 0;
  int others_of_caller = 0;
  {
    absl::MutexLock lock(&streams_mutex_);
    // The stream being checked has entered already.
    others = streams_ - 1;
    auto it = streams_by_host_.find(host);
    others_of_caller = (it == streams_by_host_.end() ? 0 : it->second) - 1;
  }
  std::string why;
  if (others >= max_streams()) {
    why = absl::StrCat(others, " streams open, limit ", max_streams(),
                       " (half of --max_concurrent_calls=", max_in_flight_,
                       "; the other half is kept for unary calls)");
  } else if (others_of_caller >= max_streams_per_caller()) {
    why = absl::StrCat(others_of_caller, " streams open from ", host, ", limit ",
                       max_streams_per_caller(),
                       " per caller (a quarter of the streams' share, so that other callers' "
                       "streams keep room)");
  } else {
    return absl::OkStatus();
  }
  shed_total_->Increment();
  return WithReason(
      absl::ResourceExhaustedError(absl::StrCat(program_, " refuses another stream: ", why,
                                                "; close streams or retry with backoff")),
      "SERVER_OVERLOADED");
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
