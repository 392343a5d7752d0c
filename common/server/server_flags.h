// The start of every server's main(): the flags they share, parsed from the
// command line with environment fallbacks, logging, and the ServerOptions
// those flags fill. Each service keeps only its own flags (its listen
// addresses, whose defaults differ, and what it alone needs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/server/server.h"

namespace modelatlas {

struct ServiceIdentity {
  // Program name for logs and messages, e.g. "catalog-service".
  std::string program;
  // First line of --help.
  std::string usage;
  // Environment prefix of every flag, e.g. "MODELATLAS_CATALOG_".
  std::string env_prefix;
  // The service's own flags (the shared ones are added).
  std::vector<std::string> flag_names;
};

// Process setup (ServerRunner::PrepareProcess), flags (command line over
// environment; --help lists every flag of the program), logging, then the
// options the process flags set (port file, readiness drain). For a process
// that serves no gRPC (the web front); `more_flag_names` are further flags
// that read the environment too.
ServerOptions BootstrapProcess(int argc, char** argv, const ServiceIdentity& identity,
                               const std::vector<std::string>& more_flag_names = {});

// BootstrapProcess plus the gRPC server flags (TLS, admission, connection
// limits, shutdown deadline; grpc_server_flags.cc). Exits with a message
// naming the flag when one is out of range. The caller fills grpc_address
// and metrics_address from its own flags.
ServerOptions BootstrapServer(int argc, char** argv, const ServiceIdentity& identity);

// Exits the process with `message` (a flag that cannot be used), as a bad
// flag value does.
[[noreturn]] void ExitWithFlagError(const std::string& program, const std::string& message);

// Exit with ExitWithFlagError when `value` is negative.
void CheckNonNegativeFlag(const std::string& program, const char* flag, absl::Duration value);
void CheckNonNegativeFlag(const std::string& program, const char* flag, int64_t value);

}  // namespace modelatlas
