#include "common/server/grpc_metrics.h"

#include <chrono>
#include <utility>

#include "common/status/grpc_status.h"

namespace modelatlas {
namespace {

using grpc::experimental::InterceptionHookPoints;

const char* GrpcTypeLabel(bool client_streaming, bool server_streaming) {
  if (client_streaming && server_streaming) return "bidi_stream";
  if (client_streaming) return "client_stream";
  if (server_streaming) return "server_stream";
  return "unary";
}

template <typename RpcInfoType>
const char* GrpcTypeOf(const RpcInfoType* info) {
  using Type = typename RpcInfoType::Type;
  switch (info->type()) {
    case Type::UNARY:
      return "unary";
    case Type::CLIENT_STREAMING:
      return "client_stream";
    case Type::SERVER_STREAMING:
      return "server_stream";
    case Type::BIDI_STREAMING:
      return "bidi_stream";
    default:
      return "unknown";
  }
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void RecordHandled(MethodMetrics* metrics, grpc::StatusCode code,
                   std::chrono::steady_clock::time_point start) {
  const int index = static_cast<int>(code);
  if (index >= 0 && index < kGrpcCodeCount) metrics->handled[index]->Increment();
  metrics->handling_seconds->Observe(SecondsSince(start));
}

class ServerMetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit ServerMetricsInterceptor(MethodMetrics* metrics) : metrics_(metrics) {
    metrics_->started->Increment();
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      metrics_->msg_received->Increment();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      metrics_->msg_sent->Increment();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      RecordHandled(metrics_, methods->GetSendStatus().error_code(), start_);
    }
    methods->Proceed();
  }

 private:
  MethodMetrics* metrics_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

class ClientMetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit ClientMetricsInterceptor(MethodMetrics* metrics) : metrics_(metrics) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      metrics_->started->Increment();
      start_ = std::chrono::steady_clock::now();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      metrics_->msg_sent->Increment();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      metrics_->msg_received->Increment();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_STATUS)) {
      RecordHandled(metrics_, methods->GetRecvStatus()->error_code(), start_);
    }
    methods->Proceed();
  }

 private:
  MethodMetrics* metrics_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

class ServerFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit ServerFactory(GrpcMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new ServerMetricsInterceptor(
        metrics_->ForServerMethod(info->method(), GrpcTypeOf(info)));
  }

 private:
  GrpcMetrics* metrics_;
};

class ClientFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit ClientFactory(GrpcMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    return new ClientMetricsInterceptor(metrics_->ForMethod(info->method(), GrpcTypeOf(info)));
  }

 private:
  GrpcMetrics* metrics_;
};

// Splits "/pkg.Service/Method" into ("pkg.Service", "Method").
std::pair<std::string, std::string> SplitFullMethod(absl::string_view full_method) {
  const size_t slash = full_method.rfind('/');
  if (full_method.empty() || full_method[0] != '/' || slash == 0 ||
      slash == absl::string_view::npos) {
    return {"unknown", std::string(full_method)};
  }
  return {std::string(full_method.substr(1, slash - 1)),
          std::string(full_method.substr(slash + 1))};
}

}  // namespace

const prometheus::Histogram::BucketBoundaries& HandlingSecondsBuckets() {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return *buckets;
}

GrpcMetrics::GrpcMetrics(prometheus::Registry& registry, std::string side)
    : started_(prometheus::BuildCounter()
                   .Name("grpc_" + side + "_started_total")
                   .Help("RPCs started, by method.")
                   .Register(registry)),
      handled_(prometheus::BuildCounter()
                   .Name("grpc_" + side + "_handled_total")
                   .Help("RPCs completed, by method and gRPC status code.")
                   .Register(registry)),
      msg_received_(prometheus::BuildCounter()
                        .Name("grpc_" + side + "_msg_received_total")
                        .Help("Stream messages received, by method.")
                        .Register(registry)),
      msg_sent_(prometheus::BuildCounter()
                    .Name("grpc_" + side + "_msg_sent_total")
                    .Help("Stream messages sent, by method.")
                    .Register(registry)),
      handling_seconds_(prometheus::BuildHistogram()
                            .Name("grpc_" + side + "_handling_seconds")
                            .Help("Time from start to completion of RPCs, seconds.")
                            .Register(registry)) {}

void GrpcMetrics::RegisterService(const google::protobuf::ServiceDescriptor& service) {
  absl::MutexLock lock(&mutex_);
  for (int i = 0; i < service.method_count(); ++i) {
    const google::protobuf::MethodDescriptor* method = service.method(i);
    CreateLocked("/" + service.full_name() + "/" + method->name(),
                 GrpcTypeLabel(method->client_streaming(), method->server_streaming()));
  }
}

MethodMetrics* GrpcMetrics::Find(absl::string_view full_method) {
  absl::ReaderMutexLock lock(&mutex_);
  auto it = methods_.find(full_method);
  return it == methods_.end() ? nullptr : it->second.get();
}

MethodMetrics* GrpcMetrics::ForMethod(absl::string_view full_method, const char* grpc_type) {
  if (MethodMetrics* found = Find(full_method); found != nullptr) return found;
  absl::MutexLock lock(&mutex_);
  return CreateLocked(full_method, grpc_type);
}

MethodMetrics* GrpcMetrics::ForServerMethod(absl::string_view full_method, const char* grpc_type) {
  // Every call after a method's first takes this path.
  if (MethodMetrics* found = Find(full_method); found != nullptr) return found;
  // Services every server has besides its own, created on first use.
  static constexpr absl::string_view kBuiltIn[] = {
      "/grpc.health.v1.Health/Check",
      "/grpc.health.v1.Health/Watch",
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
  };
  absl::MutexLock lock(&mutex_);
  for (absl::string_view known : kBuiltIn) {
    if (full_method == known) return CreateLocked(full_method, grpc_type);
  }
  // "/unknown/unknown" splits into service "unknown", method "unknown".
  return CreateLocked("/unknown/unknown", "unknown");
}

MethodMetrics* GrpcMetrics::CreateLocked(absl::string_view full_method, const char* grpc_type) {
  // Another thread may have created it between Find and the writer lock.
  auto& slot = methods_[full_method];
  if (slot != nullptr) return slot.get();
  auto [service, method] = SplitFullMethod(full_method);
  const prometheus::Labels labels{
      {"grpc_type", grpc_type}, {"grpc_service", service}, {"grpc_method", method}};
  auto metrics = std::make_unique<MethodMetrics>();
  metrics->started = &started_.Add(labels);
  metrics->msg_received = &msg_received_.Add(labels);
  metrics->msg_sent = &msg_sent_.Add(labels);
  for (int code = 0; code < kGrpcCodeCount; ++code) {
    prometheus::Labels with_code = labels;
    with_code["grpc_code"] = GrpcCodeLabel(static_cast<grpc::StatusCode>(code));
    metrics->handled[code] = &handled_.Add(with_code);
  }
  metrics->handling_seconds = &handling_seconds_.Add(labels, HandlingSecondsBuckets());
  slot = std::move(metrics);
  return slot.get();
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
GrpcMetrics::ServerInterceptorFactory() {
  return std::make_unique<ServerFactory>(this);
}

std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>
GrpcMetrics::ClientInterceptorFactory() {
  return std::make_unique<ClientFactory>(this);
}

}  // namespace modelatlas
