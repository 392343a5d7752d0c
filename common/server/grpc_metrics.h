// Per-RPC Prometheus metrics under the names existing dashboards use
// (go-grpc-prometheus): grpc_server_started_total, grpc_server_handled_total,
// grpc_server_msg_received_total, grpc_server_msg_sent_total,
// grpc_server_handling_seconds, and the grpc_client_* twins for outgoing
// calls. Labels: grpc_type, grpc_service, grpc_method (and grpc_code).
// Every method of a registered service is created at zero for every code, so
// rates exist from the first scrape.
#pragma once

#include <grpcpp/support/client_interceptor.h>
#include <grpcpp/support/server_interceptor.h>

#include <array>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "google/protobuf/descriptor.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace modelatlas {

// Number of gRPC status codes (OK .. UNAUTHENTICATED).
inline constexpr int kGrpcCodeCount = 17;

// The metrics of one method on one side (server or client).
struct MethodMetrics {
  prometheus::Counter* started = nullptr;
  prometheus::Counter* msg_received = nullptr;
  prometheus::Counter* msg_sent = nullptr;
  std::array<prometheus::Counter*, kGrpcCodeCount> handled{};
  prometheus::Histogram* handling_seconds = nullptr;
};

// The metric families of one side; `side` is "server" or "client".
class GrpcMetrics {
 public:
  GrpcMetrics(prometheus::Registry& registry, std::string side);

  // Creates every method of `service` at zero.
  void RegisterService(const google::protobuf::ServiceDescriptor& service);
  // Metrics for a full method name ("/pkg.Service/Method"); methods not
  // registered up front are created on first use (the client side: our
  // own code picks the methods).
  MethodMetrics* ForMethod(absl::string_view full_method, const char* grpc_type);
  // The server side, where callers pick the method name: methods of
  // registered services, health and reflection have their own series; any
  // other name shares one set (grpc_service="unknown", grpc_method="unknown",
  // grpc_type="unknown"), so callers cannot grow the metrics without bound.
  // Called once per call: a method seen before costs a shared (reader) lock
  // and a lookup by the name's view, no copy of the name (a 40-60 character
  // method name is a heap allocation as a std::string).
  MethodMetrics* ForServerMethod(absl::string_view full_method, const char* grpc_type);

  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> ServerInterceptorFactory();
  std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface> ClientInterceptorFactory();

 private:
  // The metrics of `full_method` if created already (reader lock).
  MethodMetrics* Find(absl::string_view full_method) ABSL_LOCKS_EXCLUDED(mutex_);
  MethodMetrics* CreateLocked(absl::string_view full_method, const char* grpc_type)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  prometheus::Family<prometheus::Counter>& started_;
  prometheus::Family<prometheus::Counter>& handled_;
  prometheus::Family<prometheus::Counter>& msg_received_;
  prometheus::Family<prometheus::Counter>& msg_sent_;
  prometheus::Family<prometheus::Histogram>& handling_seconds_;
  absl::Mutex mutex_;
  absl::flat_hash_map<std::string, std::unique_ptr<MethodMetrics>> methods_ ABSL_GUARDED_BY(mutex_);
};

// Bucket bounds of the handling-time histograms, seconds: finer than
// go-grpc-prometheus's defaults at the low end, because these RPCs take
// microseconds to milliseconds.
const prometheus::Histogram::BucketBoundaries& HandlingSecondsBuckets();

}  // namespace modelatlas
