#include "common/server/logging.h"

#include <atomic>
#include <cstdio>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace modelatlas {
namespace {

std::atomic<int> g_min_level{static_cast<int>(LogLevel::kInfo)};
absl::Mutex g_mutex;
std::string* g_program = new std::string("modelatlas");  // never destroyed: logs may run at exit

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO ";
    case LogLevel::kWarning:
      return "WARN ";
    case LogLevel::kError:
      return "ERROR";
  }
  return "?";
}

}  // namespace

void InitLogging(absl::string_view program, LogLevel min_level) {
  absl::MutexLock lock(&g_mutex);
  *g_program = std::string(program);
  g_min_level = static_cast<int>(min_level);
}

bool ParseLogLevel(absl::string_view text, LogLevel* level) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower == "debug")
    *level = LogLevel::kDebug;
  else if (lower == "info")
    *level = LogLevel::kInfo;
  else if (lower == "warning" || lower == "warn")
    *level = LogLevel::kWarning;
  else if (lower == "error")
    *level = LogLevel::kError;
  else
    return false;
  return true;
}

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_min_level.load(); }

void LogLine(LogLevel level, absl::string_view message) {
  const std::string stamp =
      absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(), absl::UTCTimeZone());
  absl::MutexLock lock(&g_mutex);
  std::fprintf(stderr, "%s %s %s: %.*s\n", stamp.c_str(), LevelName(level), g_program->c_str(),
               static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
}

}  // namespace modelatlas
