// echo-server: the load benchmarks' baseline. A trivial gRPC service run by
// the same ServerRunner as catalog-service and estimator-service (same
// callback API, threads, interceptors, metrics, message limits), so the
// difference between its throughput and theirs is what their own work costs.
// It takes the services' server flags through the same BootstrapServer, with
// the same defaults: until session 13 it ran with ServerOptions' bare
// defaults, without the 256 MiB gRPC memory quota, the per-connection stream
// limit and the call limit the services run with. On a loaded machine this
// echo cost the same as the one before it (0.93x and 1.00x its CPU per call
// in two runs, with the same branch's lighter per-call metrics;
// docs/BENCHMARKS.md, branch s13-shell): the point is the same
// configuration on both sides.
#include <cstdlib>

#include "absl/flags/flag.h"
#include "bench/echo_reply.h"
#include "common/server/logging.h"
#include "common/server/server.h"
#include "common/server/server_flags.h"
#include "modelatlas/bench/v1/echo.grpc.pb.h"

ABSL_FLAG(std::string, grpc_address, "127.0.0.1:0", "gRPC listen address");
ABSL_FLAG(std::string, metrics_address, "127.0.0.1:0", "Prometheus listen address");

namespace {

class EchoService final : public modelatlas::bench::v1::EchoService::CallbackService {
  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* context,
                                 const modelatlas::bench::v1::EchoRequest* request,
                                 modelatlas::bench::v1::EchoResponse* response) override {
    if (request->response_bytes() > 0) {
      response->mutable_payload()->assign(
          modelatlas::bench::PayloadBytesFor(request->response_bytes()), 'x');
    } else {
      response->set_payload(request->payload());
    }
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

}  // namespace

int main(int argc, char** argv) {
  using namespace modelatlas;
  ServerOptions options =
      BootstrapServer(argc, argv,
                      {.program = "echo-server",
                       .usage = "The load benchmarks' baseline: echoes a payload over gRPC.",
                       .env_prefix = "MODELATLAS_ECHO_",
                       .flag_names = {"grpc_address", "metrics_address"}});
  options.grpc_address = absl::GetFlag(FLAGS_grpc_address);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  ServerRunner runner(std::move(options));
  EchoService service;
  runner.AddService(&service, bench::v1::EchoService::service_full_name());
  if (absl::Status started = runner.Start(); !started.ok()) {
    MA_LOG_ERROR("%s", started.ToString());
    return EXIT_FAILURE;
  }
  runner.SetReady(true);
  runner.WaitForShutdownSignal();
  return EXIT_SUCCESS;
}
