// Child processes for end-to-end tests: the real binaries, started with
// their output in files, stopped with a signal, always reaped.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace modelatlas::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs a command to completion, capturing stdout and stderr.
CommandResult RunCommand(const std::vector<std::string>& argv);

class ChildProcess {
 public:
  // Starts argv with stdout and stderr appended to `log_path`.
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path);
  ~ChildProcess();  // SIGKILL and reap if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Sends `signal` and waits up to timeout_ms; the exit code, or -1 on timeout
  // (or 128 + signal when killed by a signal).
  int Stop(int signal, int timeout_ms);

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

// Reads "key=value" lines of a port file written by a server, waiting up to
// timeout_ms for it to appear; empty on timeout.
std::map<std::string, std::string> WaitForPortFile(const std::string& path, int timeout_ms);

}  // namespace modelatlas::testing
