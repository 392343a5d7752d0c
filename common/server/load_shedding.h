// Load shedding: a server works on at most a set number of calls at once and
// refuses the rest at once with RESOURCE_EXHAUSTED, so that under overload
// clients back off or go to another replica and the server's memory stays
// bounded, instead of queueing without limit. A server interceptor counts the
// calls in flight (from arrival to final status, so a call waiting on the
// catalog or a long stream holds its place); handlers ask Check() first.
// Health checks and reflection are neither counted nor refused.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"

namespace modelatlas {

class CallLimiter {
 public:
  // `max_in_flight` 0 means no limit. `program` names the server in errors.
  CallLimiter(std::string program, int max_in_flight, prometheus::Registry& registry);

  // Counts calls to this service's methods (call before the interceptor is used).
  void CountService(absl::string_view full_service_name);

  // OK, or RESOURCE_EXHAUSTED (reason SERVER_OVERLOADED) when more calls than
  // the limit are in flight, the one asking included.
  absl::Status Check() const;

  // For a stream (a call that stays open: Watch, import, export), besides
  // Check(): streams may hold at most half of the call slots, so that the
  // other half stays for unary calls (writes, lookups), and one caller (the
  // host in `peer`, gRPC's "ipv4:10.0.0.7:41234") at most a quarter of the
  // streams' half, so that one client's idle streams leave room for the
  // estimators' Watch. RESOURCE_EXHAUSTED (reason SERVER_OVERLOADED) naming
  // the share.
  absl::Status CheckStream(absl::string_view peer) const;
  int max_streams() const { return max_in_flight_ <= 0 ? 0 : std::max(1, max_in_flight_ / 2); }
  int max_streams_per_caller() const {
    return max_in_flight_ <= 0 ? 0 : std::max(1, max_streams() / 4);
  }

  int in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  int max_in_flight() const { return max_in_flight_; }

  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> InterceptorFactory();

  // modelatlas_server_calls_in_flight, read from in_flight() when Prometheus
  // scrapes (register it with the exposer). Not a prometheus::Gauge changed
  // on every call: its Increment and Decrement are two compare-and-swap
  // loops on a double per call, on a cache line every serving thread
  // writes, where the atomic count is kept anyway.
  std::shared_ptr<prometheus::Collectable> InFlightCollectable() const;

 private:
  friend class InFlightInterceptor;
  void Enter();
  void Leave();
  void EnterStream(const std::string& host);
  void LeaveStream(const std::string& host);

  std::string program_;
  int max_in_flight_;
  std::atomic<int> in_flight_{0};
  // Streams in flight, in all and per caller host.
  mutable absl::Mutex streams_mutex_;
  int streams_ ABSL_GUARDED_BY(streams_mutex_) = 0;
  absl::flat_hash_map<std::string, int> streams_by_host_ ABSL_GUARDED_BY(streams_mutex_);
  absl::flat_hash_set<std::string> counted_services_;
  prometheus::Counter* shed_total_;
};

}  // namespace modelatlas
