// The load benchmark's baseline and client (bench/echo_server.cc,
// bench/loadgen.cc): echo's reply is the size it is asked for, on the wire,
// and it spends the CPU per call it is told to; loadgen reports the mean
// reply size and the CPU and context switches per call of both sides over
// its measured window, with requests that vary per call.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "bench/echo_reply.h"
#include "modelatlas/bench/v1/echo.pb.h"
#include "tests/testing/process.h"

namespace modelatlas {
namespace {

// Some length of payload serializes to exactly `bytes`.
bool SomePayloadMakes(size_t bytes) {
  for (size_t payload = 0; payload <= bytes; ++payload) {
    bench::v1::EchoResponse response;
    response.set_payload(std::string(payload, 'x'));
    if (response.ByteSizeLong() == bytes) return true;
  }
  return false;
}

TEST(EchoReplyTest, AResponseIsTheBytesAskedForOrOneFewerWhereNoneIs) {
  int short_by_one = 0;
  for (int32_t asked = 0; asked <= 20000; asked = asked < 300 ? asked + 1 : asked + 97) {
    bench::v1::EchoResponse response;
    response.set_payload(std::string(bench::PayloadBytesFor(asked), 'x'));
    const auto bytes = static_cast<int64_t>(response.ByteSizeLong());
    if (asked < 3) {  // the smallest payload on the wire is 3 bytes
      EXPECT_EQ(bytes, 0) << asked;
    } else if (bytes == asked - 1) {
      // Only where no payload gives the size asked for (a varint boundary).
      EXPECT_FALSE(SomePayloadMakes(static_cast<size_t>(asked))) << asked;
      ++short_by_one;
    } else {
      EXPECT_EQ(bytes, asked);
    }
  }
  EXPECT_EQ(short_by_one, 1);  // 130: 127 bytes and a 1-byte length, or 128 and 2
}

TEST(EchoReplyTest, SpendThreadCpuSpendsAtLeastThatMuchOfTheThreadsCpuTime) {
  for (const int64_t ns : {int64_t{1'000'000}, int64_t{20'000'000}}) {
    const int64_t before = bench::ThreadCpuNanos();
    bench::SpendThreadCpu(ns);
    EXPECT_GE(bench::ThreadCpuNanos() - before, ns);
  }
}

// A JSON number field of loadgen's one-line report, or -1.
double Field(const std::string& json, const std::string& name) {
  std::smatch match;
  if (!std::regex_search(json, match, std::regex("\"" + name + "\": ([0-9.e+-]+)"))) return -1;
  return std::stod(match[1]);
}

// An echo-server on a free port, in its own directory, stopped and removed
// at the end of the test.
class EchoForTest {
 public:
  explicit EchoForTest(const std::string& name, const std::string& extra_flag = "")
      : dir_(Prepare(::testing::TempDir() + "/" + name + "_" + std::to_string(getpid()))),
        echo_(Command(dir_, extra_flag), dir_ + "/echo.log"),
        ports_(testing::WaitForPortFile(dir_ + "/echo.ports", 30000)) {}
  ~EchoForTest() { std::filesystem::remove_all(dir_); }

  bool started() const { return !ports_.empty(); }
  std::string target() const { return "--target=127.0.0.1:" + ports_.at("grpc_port"); }
  int pid() const { return echo_.pid(); }

 private:
  static std::vector<std::string> Command(const std::string& dir, const std::string& extra_flag) {
    std::vector<std::string> command = {ECHO_SERVER_BIN, "--grpc_address=127.0.0.1:0",
                                        "--metrics_address=127.0.0.1:0",
                                        "--port_file=" + dir + "/echo.ports"};
    if (!extra_flag.empty()) command.push_back(extra_flag);
    return command;
  }
  static std::string Prepare(const std::string& dir) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
  }
  const std::string dir_;
  testing::ChildProcess echo_;
  std::map<std::string, std::string> ports_;
};

TEST(LoadgenTest, ReportsTheMeanReplyAndBothSidesCpuPerCallWithVariedRequests) {
  EchoForTest echo("loadgen");
  ASSERT_TRUE(echo.started()) << "echo-server did not start";
  // GetModel's request text in echo's `name`, a different one per call.
  const testing::CommandResult run = testing::RunCommand(
      {LOADGEN_BIN, echo.target(), "--method=modelatlas.bench.v1.EchoService/Echo",
       R"(--request={"name": "models/generated-model-{i}", "response_bytes": 208})", "--vary=1000",
       "--concurrency=4", "--duration=1s", "--warmup=100ms", "--json",
       "--server_pid=" + std::to_string(echo.pid())});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_GT(Field(run.out, "calls"), 0) << run.out;
  EXPECT_EQ(Field(run.out, "errors"), 0) << run.out;
  EXPECT_EQ(Field(run.out, "response_bytes"), 208) << run.out;
  EXPECT_EQ(Field(run.out, "response_bytes_mean"), 208) << run.out;
  // Both measured: CPU was spent on each side during the second of calls.
  EXPECT_GT(Field(run.out, "client_cpu_us_per_call"), 0) << run.out;
  EXPECT_GT(Field(run.out, "server_cpu_us_per_call"), 0) << run.out;
  // Each side's threads slept waiting for the other's bytes and were woken
  // (4 calls in flight cannot keep two processes busy without a wait).
  EXPECT_GT(Field(run.out, "client_context_switches_per_call"), 0) << run.out;
  EXPECT_GT(Field(run.out, "server_context_switches_per_call"), 0) << run.out;
}

// Echo told to spend 2 ms of CPU per call costs at least about that per call
// in the server's CPU time that loadgen reads (/proc, in clock ticks of 10 ms:
// a few hundred calls put that rounding far below the 10% allowed).
TEST(LoadgenTest, EchoSpendsTheCpuPerCallItIsToldTo) {
  EchoForTest echo("loadgen_cpu", "--cpu_ns_per_call=2000000");
  ASSERT_TRUE(echo.started()) << "echo-server did not start";
  const testing::CommandResult run = testing::RunCommand(
      {LOADGEN_BIN, echo.target(), "--method=modelatlas.bench.v1.EchoService/Echo",
       R"(--request={"name": "Llama 3.1 8B", "response_bytes": 830})", "--concurrency=1",
       "--duration=1s", "--warmup=100ms", "--json", "--server_pid=" + std::to_string(echo.pid())});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_GT(Field(run.out, "calls"), 20) << run.out;
  EXPECT_EQ(Field(run.out, "response_bytes_mean"), 830) << run.out;
  EXPECT_GE(Field(run.out, "server_cpu_us_per_call"), 1800) << run.out;
}

TEST(LoadgenTest, EchoRefusesANegativeCpuPerCall) {
  const testing::CommandResult run =
      testing::RunCommand({ECHO_SERVER_BIN, "--cpu_ns_per_call=-1", "--grpc_address=127.0.0.1:0",
                           "--metrics_address=127.0.0.1:0"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("cpu_ns_per_call"), std::string::npos) << run.err;
}

TEST(LoadgenTest, WithoutAServerPidOnlyItsOwnCpuIsReported) {
  EchoForTest echo("loadgen_own");
  ASSERT_TRUE(echo.started()) << "echo-server did not start";
  const testing::CommandResult run = testing::RunCommand(
      {LOADGEN_BIN, echo.target(), "--method=modelatlas.bench.v1.EchoService/Echo",
       R"(--request={"payload": "aGVsbG8="})", "--concurrency=2", "--duration=300ms",
       "--warmup=50ms", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(Field(run.out, "response_bytes_mean"), 7) << run.out;  // "hello", tag and length
  EXPECT_GE(Field(run.out, "client_cpu_us_per_call"), 0) << run.out;
  EXPECT_GE(Field(run.out, "client_context_switches_per_call"), 0) << run.out;
  EXPECT_EQ(run.out.find("server_cpu_us_per_call"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("server_context_switches_per_call"), std::string::npos) << run.out;
}

// Requests that differ in more than a number: one per line of a file, each
// call given one at random; a line that is not a request is named.
TEST(LoadgenTest, GivesEachCallOneRequestOfTheFileAtRandom) {
  EchoForTest echo("loadgen_file");
  ASSERT_TRUE(echo.started()) << "echo-server did not start";
  const std::string file = ::testing::TempDir() + "/loadgen_requests_" + std::to_string(getpid());
  std::ofstream(file) << R"({"name": "Llama 3.1 8B", "response_bytes": 100})"
                      << "\n\n"
                      << R"({"name": "Qwen3 32B", "response_bytes": 300})"
                      << "\n";
  const testing::CommandResult run = testing::RunCommand(
      {LOADGEN_BIN, echo.target(), "--method=modelatlas.bench.v1.EchoService/Echo",
       "--requests_file=" + file, "--concurrency=4", "--duration=500ms", "--warmup=50ms",
       "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_GT(Field(run.out, "calls"), 100) << run.out;
  // Both requests were sent: the mean reply lies strictly between their sizes.
  EXPECT_GT(Field(run.out, "response_bytes_mean"), 100) << run.out;
  EXPECT_LT(Field(run.out, "response_bytes_mean"), 300) << run.out;

  std::ofstream(file) << R"({"name": "ok"})"
                      << "\n"
                      << R"({"nmae": "typo"})"
                      << "\n";
  const testing::CommandResult bad = testing::RunCommand(
      {LOADGEN_BIN, echo.target(), "--method=modelatlas.bench.v1.EchoService/Echo",
       "--requests_file=" + file, "--duration=100ms"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("line 2"), std::string::npos) << bad.err;
  const testing::CommandResult both = testing::RunCommand(
      {LOADGEN_BIN, echo.target(), "--method=modelatlas.bench.v1.EchoService/Echo",
       "--requests_file=" + file, "--vary=10", "--duration=100ms"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("not with --vary"), std::string::npos) << both.err;
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace modelatlas
