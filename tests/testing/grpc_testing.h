// Helpers for tests that talk gRPC: health checks, error details, metrics.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>
#include <vector>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "prometheus/registry.h"

namespace modelatlas::testing {

// The grpc.health.v1 status of `service` ("" = whole server): "SERVING",
// "NOT_SERVING", "SERVICE_UNKNOWN", or the call's error.
std::string HealthStatus(const std::shared_ptr<grpc::Channel>& channel, const std::string& service);

// Polls HealthStatus until it is "SERVING" or `timeout_ms` passes.
bool WaitUntilServing(const std::shared_ptr<grpc::Channel>& channel, const std::string& service,
                      int timeout_ms);

// The google.rpc.Status carried in a gRPC status's details.
google::rpc::Status DecodeDetails(const grpc::Status& status);
// The first detail of type T, if any.
template <typename T>
bool FindDetail(const google::rpc::Status& status, T* out) {
  for (const auto& any : status.details()) {
    if (any.Is<T>()) return any.UnpackTo(out);
  }
  return false;
}

// The value of a series in Prometheus text exposition, e.g.
// SeriesValue(text, "grpc_server_handled_total", {"grpc_method=\"GetModel\"",
// "grpc_code=\"OK\""}); -1 when no series matches.
double SeriesValue(const std::string& exposition, const std::string& metric,
                   const std::vector<std::string>& label_matchers);

// The registry rendered as Prometheus text.
std::string Render(prometheus::Registry& registry);

// GET http://127.0.0.1:port/path; the body, or "" on failure.
std::string HttpGet(int port, const std::string& path);

std::chrono::system_clock::time_point DeadlineFromNow(int milliseconds);

// A loopback TCP port free right now (bound to port 0, then released), for
// servers that cannot report the port they picked (Prometheus).
int FreePort();

// Percent-encodes `text` for a URL query value.
std::string UrlEncode(const std::string& text);

}  // namespace modelatlas::testing
