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

ABSL_FLAG(std::string, port_file, "",
          "If set, write the bound ports here once serving (for tests and scripts)");
ABSL_FLAG(std::string, log_level, "info", "Lowest log level printed: debug, info, warning, error");
ABSL_FLAG(absl::Duration, readiness_drain, absl::Seconds(0),
          "On SIGTERM, report not-ready for this long before refusing new calls");
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
namespace {

const std::vector<std::string>& SharedFlagNames() {
  static const auto* names = new std::vector<std::string>{"port_file",
                                                          "log_level",
                                                          "readiness_drain",
                                                          "shutdown_deadline",
                                                          "max_connection_age",
                                                          "tls_cert_file",
                                                          "tls_key_file",
                                                          "tls_client_ca_file",
                                                          "max_concurrent_calls",
                                                          "max_concurrent_streams_per_connection",
                                                          "grpc_memory_limit_bytes"};
  return *names;
}

// --help lists the flags of every file of this project (absl's default
// lists only those of a file named like the program, which none is), and
// none of the libraries'.
bool IsProjectFlagFile(absl::string_view file) { return !absl::StrContains(file, "absl/"); }

void CheckNonNegative(const std::string& program, const char* flag, absl::Duration value) {
  if (value < absl::ZeroDuration()) {
    ExitWithFlagError(program, absl::StrCat("--", flag, " must not be negative, got ",
                                            absl::FormatDuration(value)));
  }
}

void CheckNonNegative(const std::string& program, const char* flag, int64_t value) {
  if (value < 0) {
    ExitWithFlagError(program,
                      absl::StrCat("--", flag, " must be 0 (no limit) or more, got ", value));
  }
}

}  // namespace

void ExitWithFlagError(const std::string& program, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program.c_str(), message.c_str());
  std::exit(EXIT_FAILURE);
}

ServerOptions BootstrapServer(int argc, char** argv, const ServiceIdentity& identity) {
  absl::SetProgramUsageMessage(
      absl::StrCat(identity.usage, " Every flag can also be set through the environment as ",
                   identity.env_prefix, "<FLAG NAME IN UPPER CASE>; the command line wins."));
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = IsProjectFlagFile;
  usage_config.contains_helpshort_flags = IsProjectFlagFile;
  absl::SetFlagsUsageConfig(usage_config);
  ServerRunner::PrepareProcess();

  std::vector<std::string> flag_names = identity.flag_names;
  flag_names.insert(flag_names.end(), SharedFlagNames().begin(), SharedFlagNames().end());
  ParseFlagsWithEnvironment(argc, argv, identity.env_prefix, flag_names);
  LogLevel level = LogLevel::kInfo;
  if (!ParseLogLevel(absl::GetFlag(FLAGS_log_level), &level)) {
    ExitWithFlagError(identity.program, "--log_level must be debug, info, warning or error");
  }
  InitLogging(identity.program, level);

  ServerOptions options;
  options.program = identity.program;
  options.port_file = absl::GetFlag(FLAGS_port_file);
  options.tls = {absl::GetFlag(FLAGS_tls_cert_file), absl::GetFlag(FLAGS_tls_key_file),
                 absl::GetFlag(FLAGS_tls_client_ca_file)};
  options.readiness_drain = absl::GetFlag(FLAGS_readiness_drain);
  options.shutdown_deadline = absl::GetFlag(FLAGS_shutdown_deadline);
  options.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  options.max_concurrent_calls = absl::GetFlag(FLAGS_max_concurrent_calls);
  options.max_concurrent_streams_per_connection =
      absl::GetFlag(FLAGS_max_concurrent_streams_per_connection);
  options.grpc_memory_limit_bytes = absl::GetFlag(FLAGS_grpc_memory_limit_bytes);
  CheckNonNegative(identity.program, "readiness_drain", options.readiness_drain);
  CheckNonNegative(identity.program, "shutdown_deadline", options.shutdown_deadline);
  if (options.max_connection_age <= absl::ZeroDuration()) {
    ExitWithFlagError(identity.program, "--max_connection_age must be positive");
  }
  CheckNonNegative(identity.program, "max_concurrent_calls", options.max_concurrent_calls);
  CheckNonNegative(identity.program, "max_concurrent_streams_per_connection",
                   options.max_concurrent_streams_per_connection);
  CheckNonNegative(identity.program, "grpc_memory_limit_bytes", options.grpc_memory_limit_bytes);
  return options;
}

}  // namespace modelatlas
