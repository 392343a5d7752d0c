// What both servers share: the gRPC server with health (separate liveness
// and readiness names), reflection and per-RPC metrics; the Prometheus
// /metrics endpoint on its own port; graceful shutdown on SIGTERM/SIGINT.
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/server/grpc_metrics.h"
#include "common/server/load_shedding.h"
#include "common/server/message_limits.h"
#include "common/server/security.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"

namespace modelatlas {

// Health-check service names (grpc.health.v1). The empty name reports the
// server as a whole; Kubernetes probes use the two below.
inline constexpr char kLivenessService[] = "liveness";
inline constexpr char kReadinessService[] = "readiness";

struct ServerOptions {
  // Program name for logs, e.g. "catalog-service".
  std::string program;
  // gRPC listen address, host:port; port 0 picks a free port.
  std::string grpc_address;
  // Prometheus listen address, host:port; port 0 picks a free port.
  std::string metrics_address;
  // When set, "grpc_port=N\nmetrics_port=M\n" is written here once serving.
  std::string port_file;
  // TLS for the gRPC port (mutual TLS when tls.ca_file is set); empty = plaintext.
  TlsFiles tls;
  // After a shutdown signal: time readiness reports NOT_SERVING before the
  // server stops taking calls (longer than a probe period in production).
  absl::Duration readiness_drain = absl::Seconds(0);
  // Deadline for in-flight calls to finish once shutdown starts.
  absl::Duration shutdown_deadline = absl::Seconds(10);
  // Maximum connection age: clients reconnect (and re-resolve) after it.
  absl::Duration max_connection_age = absl::Minutes(5);
  // Largest request accepted, bytes.
  int max_receive_message_bytes = kMaxRequestBytes;
  // Calls worked on at once; beyond it calls are refused with
  // RESOURCE_EXHAUSTED (load_shedding.h). 0 = no limit.
  int max_concurrent_calls = 0;
  // HTTP/2 streams one connection may open at once (further calls wait in
  // the client, not in this server). 0 = gRPC's default (no limit).
  int max_concurrent_streams_per_connection = 0;
  // Memory gRPC may use for its buffers, bytes; under pressure it stops
  // reading from connections. 0 = no limit.
  int64_t grpc_memory_limit_bytes = 0;
};

// Builds, runs and stops one gRPC server. Usage: construct, AddService(),
// Start(), SetReady(true) when dependencies are up, then
// WaitForShutdownSignal() (or Shutdown() from a test).
class ServerRunner {
 public:
  explicit ServerRunner(ServerOptions options);
  ~ServerRunner();

  // Process-wide settings of a server; call first in main. Blocks SIGTERM
  // and SIGINT in the calling thread and every thread created after it, so
  // that WaitForShutdownSignal() receives them. Turns off abseil's mutex
  // deadlock detection: Debian's abseil is built with it on, and it runs on
  // every lock, gRPC's own included (about a tenth of a busy server's CPU
  // under perf; docs/BENCHMARKS.md).
  static void PrepareProcess();

  prometheus::Registry& registry() { return *registry_; }
  GrpcMetrics& server_metrics() { return server_metrics_; }
  // The limit on calls in flight; services call Check() first.
  const CallLimiter* call_limiter() const { return &call_limiter_; }

  // Registers a service by its full name (e.g. "modelatlas.catalog.v1.CatalogService");
  // its methods' metrics are created at zero and readiness is reported under that name too.
  // A request whose bytes do not parse as its message is answered INVALID_ARGUMENT on every
  // method (request_parsing.h).
  void AddService(grpc::Service* service, absl::string_view full_name);

  // Adds metrics computed at scrape time (see scrape_metrics.h); call before Start().
  void AddCollectable(std::shared_ptr<prometheus::Collectable> collectable);

  // Binds both ports and starts serving. Readiness starts NOT_SERVING.
  absl::Status Start();
  void SetReady(bool ready);
  bool ready() const { return ready_; }

  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  grpc::Server* server() { return server_.get(); }

  // Waits for SIGTERM/SIGINT (or Shutdown()), then shuts down gracefully:
  // readiness off, wait readiness_drain, stop accepting, drain in-flight
  // calls until shutdown_deadline.
  void WaitForShutdownSignal();

  // Called once shutdown starts (after the readiness drain, before the
  // server stops taking calls): services end their long-lived streams
  // cleanly there, so that an open Watch neither holds shutdown for the
  // whole deadline nor ends in UNAVAILABLE.
  void OnShutdown(std::function<void()> end_streams) {
    on_shutdown_.push_back(std::move(end_streams));
  }
  // Starts the same graceful shutdown from any thread; idempotent.
  void Shutdown();

 private:
  void ShutdownNow();
  absl::Status WritePortFile() const;

  ServerOptions options_;
  std::shared_ptr<prometheus::Registry> registry_;
  // The exposer holds collectables by weak_ptr: they live here.
  std::shared_ptr<prometheus::Collectable> process_metrics_;
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  GrpcMetrics server_metrics_;
  CallLimiter call_limiter_;
  std::vector<grpc::Service*> services_;
  // What is registered in place of each service (request_parsing.h).
  std::vector<std::unique_ptr<grpc::Service>> guarded_services_;
  std::vector<std::string> readiness_names_;
  std::unique_ptr<grpc::Server> server_;
  std::vector<std::function<void()>> on_shutdown_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::atomic<bool> ready_{false};
  int grpc_port_ = 0;
  int metrics_port_ = 0;
  absl::Notification shutdown_requested_;
  std::atomic<bool> stopped_{false};
};

}  // namespace modelatlas
