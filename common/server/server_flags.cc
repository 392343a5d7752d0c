#include "common/server/server_flags.h"

#include <cstdio>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/server/config.h"
#include "common/server/logging.h"

// The flags of every long-running process of the project (both gRPC services
// and the web front). The gRPC servers' own flags are in
// grpc_server_flags.cc, so a process that serves no gRPC does not list them.
ABSL_FLAG(std::string, port_file, "",
          "If set, write the bound ports here once serving (for tests and scripts)");
ABSL_FLAG(std::string, log_level, "info", "Lowest log level printed: debug, info, warning, error");
ABSL_FLAG(absl::Duration, readiness_drain, absl::Seconds(0),
          "On SIGTERM, report not-ready for this long before refusing new calls");

namespace modelatlas {
namespace {

const std::vector<std::string>& ProcessFlagNames() {
  static const auto* names =
      new std::vector<std::string>{"port_file", "log_level", "readiness_drain"};
  return *names;
}

// --help lists the flags of every file of this project (absl's default
// lists only those of a file named like the program, which none is), and
// none of the libraries'.
bool IsProjectFlagFile(absl::string_view file) { return !absl::StrContains(file, "absl/"); }

}  // namespace

void ExitWithFlagError(const std::string& program, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program.c_str(), message.c_str());
  std::exit(EXIT_FAILURE);
}

void CheckNonNegativeFlag(const std::string& program, const char* flag, absl::Duration value) {
  if (value < absl::ZeroDuration()) {
    ExitWithFlagError(program, absl::StrCat("--", flag, " must not be negative, got ",
                                            absl::FormatDuration(value)));
  }
}

void CheckNonNegativeFlag(const std::string& program, const char* flag, int64_t value) {
  if (value < 0) {
    ExitWithFlagError(program,
                      absl::StrCat("--", flag, " must be 0 (no limit) or more, got ", value));
  }
}

ServerOptions BootstrapProcess(int argc, char** argv, const ServiceIdentity& identity,
                               const std::vector<std::string>& more_flag_names) {
  absl::SetProgramUsageMessage(
      absl::StrCat(identity.usage, " Every flag can also be set through the environment as ",
                   identity.env_prefix, "<FLAG NAME IN UPPER CASE>; the command line wins."));
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = IsProjectFlagFile;
  usage_config.contains_helpshort_flags = IsProjectFlagFile;
  absl::SetFlagsUsageConfig(usage_config);
  ServerRunner::PrepareProcess();

  std::vector<std::string> flag_names = identity.flag_names;
  flag_names.insert(flag_names.end(), ProcessFlagNames().begin(), ProcessFlagNames().end());
  flag_names.insert(flag_names.end(), more_flag_names.begin(), more_flag_names.end());
  ParseFlagsWithEnvironment(argc, argv, identity.env_prefix, flag_names);
  LogLevel level = LogLevel::kInfo;
  if (!ParseLogLevel(absl::GetFlag(FLAGS_log_level), &level)) {
    ExitWithFlagError(identity.program, "--log_level must be debug, info, warning or error");
  }
  InitLogging(identity.program, level);

  ServerOptions options;
  options.program = identity.program;
  options.port_file = absl::GetFlag(FLAGS_port_file);
  options.readiness_drain = absl::GetFlag(FLAGS_readiness_drain);
  CheckNonNegativeFlag(identity.program, "readiness_drain", options.readiness_drain);
  return options;
}

}  // namespace modelatlas
