#include "common/server_flags.h"

#include "absl/flags/flag.h"

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

const std::vector<std::string>& LoadFlagNames() {
  static const auto* names = new std::vector<std::string>{
      "max_concurrent_calls", "max_concurrent_streams_per_connection", "grpc_memory_limit_bytes"};
  return *names;
}

void ApplyLoadFlags(ServerOptions& options) {
  options.max_concurrent_calls = absl::GetFlag(FLAGS_max_concurrent_calls);
  options.max_concurrent_streams_per_connection =
      absl::GetFlag(FLAGS_max_concurrent_streams_per_connection);
  options.grpc_memory_limit_bytes = absl::GetFlag(FLAGS_grpc_memory_limit_bytes);
}

}  // namespace modelatlas
