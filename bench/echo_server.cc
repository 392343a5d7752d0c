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
// configuration on both sides. For the same reason it keeps its freed heap
// as the estimator does (KeepHeapForLargeReplies): with glibc's defaults its
// cost per 297 KB reply moved by a third from process to process (session
// 17, branch s17-plan).
//
// --cpu_ns_per_call=N makes each call spend N ns of the handling thread's CPU
// before it replies: an echo that costs as much server CPU per call as a
// service, sending the same bytes, tells what the client's own cost does when
// only the server's time per call changes (docs/BENCHMARKS.md, session 16,
// branch s16-transport).
#include <cstdlib>

#include "absl/flags/flag.h"
#include "bench/echo_reply.h"
#include "common/server/allocator.h"
#include "common/server/logging.h"
#include "common/server/server.h"
#include "common/server/server_flags.h"
#include "modelatlas/bench/v1/echo.grpc.pb.h"

ABSL_FLAG(std::string, grpc_address, "127.0.0.1:0", "gRPC listen address");
ABSL_FLAG(std::string, metrics_address, "127.0.0.1:0", "Prometheus listen address");
ABSL_FLAG(int64_t, cpu_ns_per_call, 0,
          "CPU time each call spends before replying, nanoseconds (a baseline as costly per "
          "call as the service it is compared with); 0 = none");

namespace {

class EchoService final : public modelatlas::bench::v1::EchoService::CallbackService {
 public:
  explicit EchoService(int64_t cpu_ns_per_call) : cpu_ns_per_call_(cpu_ns_per_call) {}

 private:
  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* context,
                                 const modelatlas::bench::v1::EchoRequest* request,
                                 modelatlas::bench::v1::EchoResponse* response) override {
    if (request->response_bytes() > 0) {
      response->mutable_payload()->assign(
          modelatlas::bench::PayloadBytesFor(request->response_bytes()), 'x');
    } else {
      response->set_payload(request->payload());
    }
    modelatlas::bench::SpendThreadCpu(cpu_ns_per_call_);
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  const int64_t cpu_ns_per_call_;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace modelatlas;
  ServerOptions options =
      BootstrapServer(argc, argv,
                      {.program = "echo-server",
                       .usage = "The load benchmarks' baseline: echoes a payload over gRPC.",
                       .env_prefix = "MODELATLAS_ECHO_",
                       .flag_names = {"grpc_address", "metrics_address", "cpu_ns_per_call"}});
  options.grpc_address = absl::GetFlag(FLAGS_grpc_address);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  KeepHeapForLargeReplies();
  const int64_t cpu_ns_per_call = absl::GetFlag(FLAGS_cpu_ns_per_call);
  CheckNonNegativeFlag("echo-server", "cpu_ns_per_call", cpu_ns_per_call);
  ServerRunner runner(std::move(options));
  EchoService service(cpu_ns_per_call);
  runner.AddService(&service, bench::v1::EchoService::service_full_name());
  if (absl::Status started = runner.Start(); !started.ok()) {
    MA_LOG_ERROR("%s", started.ToString());
    return EXIT_FAILURE;
  }
  runner.SetReady(true);
  runner.WaitForShutdownSignal();
  return EXIT_SUCCESS;
}
