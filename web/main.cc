// modelatlas-web: the web front. Renders model and hardware pages and serves
// the JSON API, calling catalog-service and estimator-service over gRPC.
#include <signal.h>

#include <cstdlib>
#include <fstream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/server/logging.h"
#include "common/server/metrics_exposer.h"
#include "common/server/process_metrics.h"
#include "common/server/server_flags.h"
#include "prometheus/exposer.h"
#include "web/server.h"

ABSL_FLAG(std::string, http_address, "0.0.0.0:8080",
          "HTTP listen address of the pages and the JSON API (host:port; port 0 = any free port)");
ABSL_FLAG(std::string, metrics_address, "0.0.0.0:9466",
          "Prometheus /metrics listen address (host:port; port 0 = any free port)");
ABSL_FLAG(std::string, catalog_address, "localhost:50051",
          "Address of catalog-service (host:port, or a gRPC target such as dns:///catalog:50051)");
ABSL_FLAG(std::string, estimator_address, "localhost:50052",
          "Address of estimator-service (host:port, or a gRPC target)");
ABSL_FLAG(absl::Duration, call_timeout, absl::Seconds(10),
          "Longest a call to either service may take while rendering a page");

int main(int argc, char** argv) {
  using namespace modelatlas;
  const ServerOptions options =
      BootstrapProcess(argc, argv,
                       {.program = "modelatlas-web",
                        .usage = "Serves ModelAtlas pages and its JSON API over HTTP.",
                        .env_prefix = "MODELATLAS_WEB_",
                        .flag_names = {"http_address", "metrics_address", "catalog_address",
                                       "estimator_address", "call_timeout"}});
  if (absl::GetFlag(FLAGS_call_timeout) <= absl::ZeroDuration()) {
    ExitWithFlagError("modelatlas-web", "--call_timeout must be positive");
  }
  auto registry = std::make_shared<prometheus::Registry>();
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(absl::GetFlag(FLAGS_metrics_address));
  } catch (const std::exception& e) {
    MA_LOG_ERROR("cannot serve metrics on %s: %s", absl::GetFlag(FLAGS_metrics_address), e.what());
    return EXIT_FAILURE;
  }
  auto process_metrics = ProcessMetricsCollectable();
  exposer->RegisterCollectable(registry);
  exposer->RegisterCollectable(process_metrics);

  web::WebServer server({.catalog_address = absl::GetFlag(FLAGS_catalog_address),
                         .estimator_address = absl::GetFlag(FLAGS_estimator_address),
                         .http_address = absl::GetFlag(FLAGS_http_address),
                         .call_timeout_ms = static_cast<int>(
                             absl::ToInt64Milliseconds(absl::GetFlag(FLAGS_call_timeout)))},
                        registry);
  if (absl::Status status = server.Start(); !status.ok()) {
    MA_LOG_ERROR("%s", status.ToString());
    return EXIT_FAILURE;
  }
  const int metrics_port = exposer->GetListeningPorts().front();
  MA_LOG_INFO("serving pages on port %d (catalog %s, estimator %s), metrics on port %d",
              server.http_port(), absl::GetFlag(FLAGS_catalog_address),
              absl::GetFlag(FLAGS_estimator_address), metrics_port);
  if (!options.port_file.empty()) {
    const std::string tmp = options.port_file + ".tmp";
    {
      std::ofstream out(tmp);
      out << "http_port=" << server.http_port() << "\nmetrics_port=" << metrics_port << "\n";
    }
    std::rename(tmp.c_str(), options.port_file.c_str());
  }
  // PrepareProcess (in BootstrapServer) blocked these in every thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  // Not ready first (probes and balancers move away), then stop taking requests.
  MA_LOG_INFO("signal %d: not ready for %s, then stopping", signal_number,
              absl::FormatDuration(options.readiness_drain));
  server.Drain();
  absl::SleepFor(options.readiness_drain);
  server.Stop();
  // Not left to ~Exposer, which alone waits up to 2 s (metrics_exposer.h).
  StopExposer(std::move(exposer), absl::GetFlag(FLAGS_metrics_address));
  return EXIT_SUCCESS;
}
