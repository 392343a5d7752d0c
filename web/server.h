// The web front's HTTP server: pages, the JSON API, static assets, health
// (/healthz liveness, /readyz when both services answer) and per-route
// metrics. Stateless: every request calls the services.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "prometheus/registry.h"

namespace modelatlas::web {

struct WebOptions {
  std::string catalog_address;
  std::string estimator_address;
  std::string http_address = "0.0.0.0:8080";
  int call_timeout_ms = 10000;
};

class WebServer {
 public:
  WebServer(WebOptions options, std::shared_ptr<prometheus::Registry> registry);
  ~WebServer();

  // Binds the HTTP port (0 = any free one) and serves on a thread.
  absl::Status Start();
  int http_port() const;
  // From now on /readyz answers 503 (shutting down), so that load balancers
  // stop sending requests before Stop().
  void Drain();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace modelatlas::web
