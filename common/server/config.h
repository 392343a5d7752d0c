// Configuration: command-line flags (absl) with environment-variable
// fallbacks. A flag --grpc_address of catalog-service can also be given as
// MODELATLAS_CATALOG_GRPC_ADDRESS; the command line wins over the environment.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace modelatlas {

// The environment variable consulted for `flag_name` under `env_prefix`:
// EnvVarName("MODELATLAS_CATALOG_", "grpc_address") = "MODELATLAS_CATALOG_GRPC_ADDRESS".
std::string EnvVarName(absl::string_view env_prefix, absl::string_view flag_name);

// Returns argv with "--flag=value" inserted after argv[0] for every flag in
// `flag_names` whose environment variable is set, so that absl's parser
// validates those values like any other and a later command-line occurrence
// overrides them.
std::vector<std::string> ArgsWithEnvironment(int argc, char** argv, absl::string_view env_prefix,
                                             const std::vector<std::string>& flag_names);

// Parses flags (after applying the environment) and returns the positional
// arguments, argv[0] first. Exits with a message on an unknown or bad flag.
std::vector<std::string> ParseFlagsWithEnvironment(int argc, char** argv,
                                                   absl::string_view env_prefix,
                                                   const std::vector<std::string>& flag_names);

}  // namespace modelatlas
