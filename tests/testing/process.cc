#include "tests/testing/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/testing/shared_data.h"

extern char** environ;

namespace modelatlas::testing {
namespace {

pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path,
            const std::string& err_path, bool append) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const int flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), flags, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), flags, 0644);
  // Children start with no blocked signals, whatever the test runner blocked.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  return pid;
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv) {
  static int counter = 0;
  const std::string base =
      ::testing::TempDir() + "/cmd_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  CommandResult result;
  const pid_t pid = Spawn(argv, base + ".out", base + ".err", false);
  if (pid < 0) return result;
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = ExitCodeOf(status);
  result.out = ReadFile(base + ".out");
  result.err = ReadFile(base + ".err");
  return result;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path) {
  pid_ = Spawn(argv, log_path, log_path, true);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) Stop(SIGKILL, 5000);
}

bool ChildProcess::running() {
  if (pid_ <= 0 || reaped_) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

int ChildProcess::Stop(int signal, int timeout_ms) {
  if (pid_ <= 0) return -1;
  if (!reaped_) kill(pid_, signal);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!reaped_ && std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid_, &status_, WNOHANG) == pid_) {
      reaped_ = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
    reaped_ = true;
    return -1;
  }
  return ExitCodeOf(status_);
}

std::map<std::string, std::string> WaitForPortFile(const std::string& path, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    std::map<std::string, std::string> values;
    for (std::string line; std::getline(in, line);) {
      const size_t eq = line.find('=');
      if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
    }
    if (values.count("grpc_port") && values.count("metrics_port")) return values;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return {};
}

}  // namespace modelatlas::testing
