// The load benchmark's baseline and client (bench/echo_server.cc,
// bench/loadgen.cc): echo's reply is the size it is asked for, on the wire,
// and loadgen reports the mean reply size and the CPU per call of both
// sides over its measured window, with requests that vary per call.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

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
  explicit EchoForTest(const std::string& name)
      : dir_(Prepare(::testing::TempDir() + "/" + name + "_" + std::to_string(getpid()))),
        echo_({ECHO_SERVER_BIN, "--grpc_address=127.0.0.1:0", "--metrics_address=127.0.0.1:0",
               "--port_file=" + dir_ + "/echo.ports"},
              dir_ + "/echo.log"),
        ports_(testing::WaitForPortFile(dir_ + "/echo.ports", 30000)) {}
  ~EchoForTest() { std::filesystem::remove_all(dir_); }

  bool started() const { return !ports_.empty(); }
  std::string target() const { return "--target=127.0.0.1:" + ports_.at("grpc_port"); }
  int pid() const { return echo_.pid(); }

 private:
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
  EXPECT_EQ(run.out.find("server_cpu_us_per_call"), std::string::npos) << run.out;
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
