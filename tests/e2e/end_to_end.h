// The end-to-end fixture: the real binaries started on free loopback
// ports (a port file reports them), their logs kept in a temporary
// directory and printed when a test fails, stopped when it ends.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/testing/process.h"
#include "tests/testing/shared_data.h"

namespace modelatlas {

using testing::ChildProcess;

constexpr int kStartTimeoutMs = 30000;

struct RunningServer {
  std::unique_ptr<ChildProcess> process;
  int grpc_port = 0;
  int metrics_port = 0;
  std::string address() const { return "127.0.0.1:" + std::to_string(grpc_port); }
};

class EndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/e2e_" + std::to_string(getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (HasFailure() || std::getenv("E2E_LOGS") != nullptr) {
      for (const char* name :
           {"catalog", "catalog-a", "catalog-b", "estimator", "estimator-live"}) {
        const std::string log = testing::ReadFile(dir_ + "/" + name + ".log");
        if (!log.empty()) std::fprintf(stderr, "--- %s log ---\n%s\n", name, log.c_str());
      }
    }
    catalog_.process.reset();
    estimator_.process.reset();
    std::filesystem::remove_all(dir_);
  }

  // `grpc_port` 0 picks a free port; a restart passes the old one.
  RunningServer Start(const std::vector<std::string>& argv, const std::string& name,
                      int grpc_port = 0) {
    RunningServer server;
    const std::string port_file = dir_ + "/" + name + ".ports";
    std::remove(port_file.c_str());
    std::vector<std::string> args = argv;
    // A test may bind another address (e.g. [::]:0 for IPv4 and IPv6 callers).
    if (std::none_of(argv.begin(), argv.end(),
                     [](const std::string& arg) { return arg.rfind("--grpc_address", 0) == 0; })) {
      args.push_back("--grpc_address=127.0.0.1:" + std::to_string(grpc_port));
    }
    args.push_back("--metrics_address=127.0.0.1:0");
    args.push_back("--port_file=" + port_file);
    // Open client channels keep a draining server waiting up to this deadline
    // (unless the test sets its own).
    if (std::none_of(argv.begin(), argv.end(), [](const std::string& arg) {
          return arg.rfind("--shutdown_deadline", 0) == 0;
        })) {
      args.push_back("--shutdown_deadline=1s");
    }
    server.process = std::make_unique<ChildProcess>(args, dir_ + "/" + name + ".log");
    auto ports = testing::WaitForPortFile(port_file, kStartTimeoutMs);
    EXPECT_FALSE(ports.empty()) << name << " did not start";
    if (!ports.empty()) {
      server.grpc_port = std::stoi(ports["grpc_port"]);
      server.metrics_port = std::stoi(ports["metrics_port"]);
    }
    return server;
  }

  void StartBoth() {
    catalog_ = Start({CATALOG_SERVICE_BIN, "--sqlite_path=" + dir_ + "/catalog.db"}, "catalog");
    estimator_ = Start({ESTIMATOR_SERVICE_BIN, "--catalog_address=" + catalog_.address(),
                        "--readiness_interval=200ms"},
                       "estimator");
  }

  std::shared_ptr<grpc::Channel> Channel(const RunningServer& server) {
    return grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  }

  std::string dir_;
  RunningServer catalog_;
  RunningServer estimator_;
};

// A tool the test needs: skip with a message elsewhere, fail under CI.
#define REQUIRE_TOOL(path)                                                   \
  if (!std::filesystem::exists(path)) {                                      \
    if (testing::RunningUnderCi()) FAIL() << "missing under CI: " << (path); \
    GTEST_SKIP() << "not installed, skipping: " << (path);                   \
  }

}  // namespace modelatlas
