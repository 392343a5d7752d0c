// Leveled, timestamped log lines on stderr:
//   2026-11-29T20:17:20.123456Z INFO  catalog-service: listening on 127.0.0.1:50051
// absl 20220623 has no absl/log, and gRPC's gpr_log is not meant for
// applications, so this is the project's one small logger.
#pragma once

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace modelatlas {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Sets the program name shown on every line and the lowest level printed.
void InitLogging(absl::string_view program, LogLevel min_level);
// Parses "debug", "info", "warning" or "error" (any case).
bool ParseLogLevel(absl::string_view text, LogLevel* level);
bool LogEnabled(LogLevel level);
void LogLine(LogLevel level, absl::string_view message);

template <typename... Args>
void Log(LogLevel level, const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (LogEnabled(level)) LogLine(level, absl::StrFormat(format, args...));
}

}  // namespace modelatlas

#define MA_LOG_DEBUG(...) ::modelatlas::Log(::modelatlas::LogLevel::kDebug, __VA_ARGS__)
#define MA_LOG_INFO(...) ::modelatlas::Log(::modelatlas::LogLevel::kInfo, __VA_ARGS__)
#define MA_LOG_WARNING(...) ::modelatlas::Log(::modelatlas::LogLevel::kWarning, __VA_ARGS__)
#define MA_LOG_ERROR(...) ::modelatlas::Log(::modelatlas::LogLevel::kError, __VA_ARGS__)
