// Command-line flags both servers take for overload protection, and how
// they fill ServerOptions.
#pragma once

#include <string>
#include <vector>

#include "common/server.h"

namespace modelatlas {

// Their names, for ParseFlagsWithEnvironment (MODELATLAS_<SERVICE>_<NAME>).
const std::vector<std::string>& LoadFlagNames();

// Sets options.max_concurrent_calls, max_concurrent_streams_per_connection
// and grpc_memory_limit_bytes from the flags.
void ApplyLoadFlags(ServerOptions& options);

}  // namespace modelatlas
