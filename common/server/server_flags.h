// The start of both servers' main(): the flags they share, parsed from the
// command line with environment fallbacks, logging, and the ServerOptions
// those flags fill. Each service keeps only its own flags (its listen
// addresses, whose defaults differ, and what it alone needs).
#pragma once

#include <string>
#include <vector>

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
// options the shared flags set. Exits with a message naming the flag when a
// shared flag is out of range. The caller fills grpc_address and
// metrics_address from its own flags.
ServerOptions BootstrapServer(int argc, char** argv, const ServiceIdentity& identity);

// Exits the process with `message` (a flag that cannot be used), as a bad
// flag value does.
[[noreturn]] void ExitWithFlagError(const std::string& program, const std::string& message);

}  // namespace modelatlas
