// The flags only a gRPC server has (TLS, admission, connection limits), kept
// apart from the process flags in server_flags.cc so that the web front,
// which serves no gRPC, neither links nor lists them.
#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "common/server/server_flags.h"

ABSL_FLAG(absl::Duration, shutdown_deadline, absl::Seconds(10),
          "On SIGTERM, time in-flight calls get to finish");
ABSL_FLAG(absl::Duration, max_connection_age, absl::Minutes(5),
          "Close client connections after this long (clients reconnect), so that load spreads "
          "over replicas added since");
ABSL_FLAG(std::string, tls_cert_file, "", "PEM certificate chain: serve gRPC over TLS");
ABSL_FLAG(std::string, tls_key_file, "", "PEM private key of --tls_cert_file");
ABSL_FLAG(std::string, tls_client_ca_file, "",
          "PEM CA: require client certificates it signed (mutual TLS)");
ABSL_FLAG(int32_t, max_concurrent_calls, 512,
          "Calls worked on at once (streams included, health checks not); beyond it calls are "
          "refused with RESOURCE_EXHAUSTED; 0 = no limit");
ABSL_FLAG(int32_t, max_concurrent_streams_per_connection, 256,
          "HTTP/2 streams one client connection may open at once (further calls wait in the "
          "client); 0 = no limit");
ABSL_FLAG(int64_t, grpc_memory_limit_bytes, int64_t{256} << 20,
          "Memory gRPC may use for connection buffers, bytes (default 256 MiB); under pressure "
          "it stops reading requests; 0 = no limit");

namespace modelatlas {

ServerOptions BootstrapServer(int argc, char** argv, const ServiceIdentity& identity) {
  ServerOptions options =
      BootstrapProcess(argc, argv, identity,
                       {"shutdown_deadline", "max_connection_age", "tls_cert_file", "tls_key_file",
                        "tls_client_ca_file", "max_concurrent_calls",
                        "max_concurrent_streams_per_connection", "grpc_memory_limit_bytes"});
  const std::string& program = identity.program;
  options.tls = {absl::GetFlag(FLAGS_tls_cert_file), absl::GetFlag(FLAGS_tls_key_file),
                 absl::GetFlag(FLAGS_tls_client_ca_file)};
  options.shutdown_deadline = absl::GetFlag(FLAGS_shutdown_deadline);
  options.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  options.max_concurrent_calls = absl::GetFlag(FLAGS_max_concurrent_calls);
  options.max_concurrent_streams_per_connection =
      absl::GetFlag(FLAGS_max_concurrent_streams_per_connection);
  options.grpc_memory_limit_bytes = absl::GetFlag(FLAGS_grpc_memory_limit_bytes);
  CheckNonNegativeFlag(program, "shutdown_deadline", options.shutdown_deadline);
  if (options.max_connection_age <= absl::ZeroDuration()) {
    ExitWithFlagError(program, "--max_connection_age must be positive");
  }
  CheckNonNegativeFlag(program, "max_concurrent_calls", options.max_concurrent_calls);
  CheckNonNegativeFlag(program, "max_concurrent_streams_per_connection",
                       options.max_concurrent_streams_per_connection);
  CheckNonNegativeFlag(program, "grpc_memory_limit_bytes", options.grpc_memory_limit_bytes);
  return options;
}

}  // namespace modelatlas
