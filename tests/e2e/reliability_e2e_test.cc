// Issue 16 end to end, on the real binaries: an import whose CLI process is
// killed mid-upload writes nothing, and bytes that are not a request answer
// INVALID_ARGUMENT on every method of both services.
#include <fcntl.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "google/protobuf/descriptor.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"
#include "tests/e2e/end_to_end.h"
#include "tests/testing/grpc_testing.h"
#include "tests/testing/process.h"

extern char** environ;

namespace modelatlas {
namespace {

namespace v1 = catalog::v1;

// The CLI with its standard input on a pipe the test writes to.
struct PipedProcess {
  pid_t pid = -1;
  int input = -1;  // the write end of the CLI's standard input
};

PipedProcess SpawnReadingPipe(const std::vector<std::string>& argv, const std::string& log) {
  PipedProcess process;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return process;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  if (posix_spawn(&process.pid, args[0], &actions, nullptr, args.data(), environ) != 0) {
    process.pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  close(fds[0]);
  process.input = fds[1];
  return process;
}

int WaitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class ReliabilityEndToEndTest : public EndToEndTest {
 protected:
  void SetUp() override {
    EndToEndTest::SetUp();
    signal(SIGPIPE, SIG_IGN);  // a write to a killed CLI's pipe must not kill the test
    catalog_ = Start({CATALOG_SERVICE_BIN, "--sqlite_path=" + dir_ + "/catalog.db"}, "catalog");
    stub_ = v1::CatalogService::NewStub(Channel(catalog_));
  }

  v1::CatalogInfo Info() {
    grpc::ClientContext context;
    v1::CatalogInfo info;
    EXPECT_TRUE(stub_->GetCatalogInfo(&context, {}, &info).ok());
    return info;
  }

  grpc::StatusCode GetModelCode(const std::string& name) {
    grpc::ClientContext context;
    v1::GetModelRequest request;
    request.set_name(name);
    common::v1::Model model;
    return stub_->GetModel(&context, request, &model).error_code();
  }

  // The catalog's ImportRecords counters.
  double ImportSeries(const std::string& metric, const std::string& code = "") {
    std::vector<std::string> matchers = {"grpc_method=\"ImportRecords\""};
    if (!code.empty()) matchers.push_back("grpc_code=\"" + code + "\"");
    const double value =
        testing::SeriesValue(testing::HttpGet(catalog_.metrics_port, "/metrics"), metric, matchers);
    return value < 0 ? 0 : value;
  }

  std::unique_ptr<v1::CatalogService::Stub> stub_;
};

struct KillCase {
  std::string label;
  std::vector<std::string> flags;
  std::string written;  // what reaches the CLI's standard input before the kill
};

TEST_F(ReliabilityEndToEndTest, AnImportWhoseCliIsKilledMidUploadWritesNothing) {
  const std::string csv = "Model,Parameters\nKillTest1,175000000000\nKillTest2,175000000000\n";
  const std::string json = R"({"models": [{"display_name": "KillJson", "parameters": 7e9,
      "provenance": {"source": "test"}}]})";
  const std::string config = R"({"model_type": "llama", "num_hidden_layers": 3,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
      "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 256})";
  std::vector<KillCase> cases;
  for (const std::string atomic : {"--atomic=false", "--atomic=true"}) {
    // Cut 9 bytes short (a cancelled stream taken as the end of the file
    // stored KillTest2 with 1750 parameters), and whole but never ended:
    // a file the CLI has not finished reading is not a whole file.
    cases.push_back({"csv cut " + atomic,
                     {"--format=epoch-models-csv", atomic},
                     csv.substr(0, csv.size() - 9)});
    cases.push_back({"csv whole " + atomic, {"--format=epoch-models-csv", atomic}, csv});
    cases.push_back({"json " + atomic, {"--format=json", atomic}, json});
    cases.push_back(
        {"config " + atomic, {"--format=hf-config", "--model=megatron bert", atomic}, config});
  }
  const v1::CatalogInfo before = Info();
  ASSERT_GT(before.model_count(), 0);
  for (const KillCase& c : cases) {
    SCOPED_TRACE(c.label);
    const double received = ImportSeries("grpc_server_msg_received_total");
    const double cancelled = ImportSeries("grpc_server_handled_total", "Canceled");
    std::vector<std::string> argv = {MODELATLAS_CLI_BIN, "--catalog=" + catalog_.address(),
                                     "import", "-"};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    PipedProcess cli = SpawnReadingPipe(argv, dir_ + "/cli.log");
    ASSERT_GT(cli.pid, 0);
    ASSERT_EQ(write(cli.input, c.written.data(), c.written.size()),
              static_cast<ssize_t>(c.written.size()));
    // The catalog has the bytes (its first message) before the kill.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ImportSeries("grpc_server_msg_received_total") <= received &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GT(ImportSeries("grpc_server_msg_received_total"), received)
        << "the catalog received nothing from the CLI";
    kill(cli.pid, SIGKILL);
    EXPECT_EQ(WaitExit(cli.pid), 128 + SIGKILL);
    close(cli.input);
    // The catalog ends the call (CANCELLED) before anything is checked, so a
    // call it had gone on to import would be seen below.
    while (ImportSeries("grpc_server_handled_total", "Canceled") <= cancelled &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(ImportSeries("grpc_server_handled_total", "Canceled"), cancelled + 1)
        << "the catalog did not end the killed client's import as cancelled";
    const v1::CatalogInfo after = Info();
    EXPECT_EQ(after.revision(), before.revision()) << "a killed client's import wrote";
    EXPECT_EQ(after.model_count(), before.model_count());
    EXPECT_EQ(after.hardware_count(), before.hardware_count());
    for (const char* name : {"KillTest1", "KillTest2", "KillJson"}) {
      EXPECT_EQ(GetModelCode(name), grpc::StatusCode::NOT_FOUND) << name;
    }
  }
  EXPECT_EQ(ImportSeries("grpc_server_handled_total", "OK"), 0);

  // The same file through the same pipe, ended: imported whole.
  PipedProcess cli = SpawnReadingPipe({MODELATLAS_CLI_BIN, "--catalog=" + catalog_.address(),
                                       "import", "-", "--atomic", "--format=epoch-models-csv"},
                                      dir_ + "/cli.log");
  ASSERT_GT(cli.pid, 0);
  ASSERT_EQ(write(cli.input, csv.data(), csv.size()), static_cast<ssize_t>(csv.size()));
  close(cli.input);
  EXPECT_EQ(WaitExit(cli.pid), 0) << testing::ReadFile(dir_ + "/cli.log");
  grpc::ClientContext context;
  v1::GetModelRequest request;
  request.set_name("KillTest2");
  common::v1::Model model;
  ASSERT_TRUE(stub_->GetModel(&context, request, &model).ok());
  EXPECT_EQ(model.parameters(), 175000000000.0);
  EXPECT_EQ(Info().revision(), before.revision() + 1);
}

// Sends one message of `bytes` to `method` and half-closes; the status.
class GarbageCall : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  GarbageCall(grpc::GenericStub* stub, const std::string& method, const std::string& bytes) {
    context_.set_deadline(testing::DeadlineFromNow(10000));
    grpc::Slice slice(bytes);
    request_ = grpc::ByteBuffer(&slice, 1);
    stub->PrepareBidiStreamingCall(&context_, method, grpc::StubOptions(), this);
    StartWriteLast(&request_, grpc::WriteOptions());
    StartRead(&response_);
    StartCall();
  }
  void OnDone(const grpc::Status& status) override {
    status_ = status;
    done_.Notify();
  }
  grpc::Status Wait() {
    done_.WaitForNotification();
    return status_;
  }

 private:
  grpc::ClientContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  grpc::Status status_;
  absl::Notification done_;
};

TEST_F(ReliabilityEndToEndTest, EveryMethodOfBothServicesRefusesBytesThatAreNotItsRequest) {
  estimator_ =
      Start({ESTIMATOR_SERVICE_BIN, "--catalog_address=" + catalog_.address()}, "estimator");
  // Field 1 declared as 100 bytes with 3 following: no message parses it.
  const std::string truncated(
      "\x0a\x64"
      "abc",
      5);
  // A varint of eleven bytes.
  const std::string overlong_varint("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
  const int64_t revision = Info().revision();
  int methods = 0;
  const google::protobuf::DescriptorPool& pool =
      *google::protobuf::DescriptorPool::generated_pool();
  for (const auto& [name, server] :
       {std::pair{v1::CatalogService::service_full_name(), &catalog_},
        std::pair{estimator::v1::EstimatorService::service_full_name(), &estimator_}}) {
    const google::protobuf::ServiceDescriptor* descriptor = pool.FindServiceByName(name);
    ASSERT_NE(descriptor, nullptr) << name;
    grpc::GenericStub stub(Channel(*server));
    // Every method the service declares, so a method added later is covered.
    for (int i = 0; i < descriptor->method_count(); ++i) {
      const google::protobuf::MethodDescriptor& method = *descriptor->method(i);
      const std::string path = absl::StrCat("/", descriptor->full_name(), "/", method.name());
      for (const std::string& bytes : {truncated, overlong_varint}) {
        GarbageCall call(&stub, path, bytes);
        const grpc::Status status = call.Wait();
        EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
            << path << ": " << status.error_message();
        EXPECT_NE(status.error_message().find("not a valid " + method.input_type()->full_name()),
                  std::string::npos)
            << path << ": " << status.error_message();
      }
      ++methods;
    }
  }
  EXPECT_GE(methods, 30);
  // The catalog wrote nothing and both still answer.
  EXPECT_EQ(Info().revision(), revision);
  EXPECT_EQ(GetModelCode("GPT-2 (124M)"), grpc::StatusCode::OK);
}

// ---------------------------------------------------------------------------
// Every answer that read catalog records says how current they were.

estimator::v1::EstimateInferenceMemoryResponse Estimate(const RunningServer& estimator,
                                                        const std::string& model,
                                                        grpc::Status* status) {
  auto stub = estimator::v1::EstimatorService::NewStub(
      grpc::CreateChannel(estimator.address(), grpc::InsecureChannelCredentials()));
  estimator::v1::EstimateInferenceMemoryRequest request;
  if (model.empty()) {
    request.mutable_inline_model()->set_parameters(7e9);
  } else {
    request.set_model(model);
  }
  estimator::v1::EstimateInferenceMemoryResponse response;
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(10000));
  *status = stub->EstimateInferenceMemory(&context, request, &response);
  return response;
}

TEST_F(ReliabilityEndToEndTest, AnswersSayHowOldTheEstimatorsViewOfTheCatalogWas) {
  estimator_ = Start({ESTIMATOR_SERVICE_BIN, "--catalog_address=" + catalog_.address(),
                      "--readiness_interval=200ms"},
                     "estimator");
  RunningServer live =
      Start({ESTIMATOR_SERVICE_BIN, "--catalog_address=" + catalog_.address(), "--snapshot=false"},
            "estimator-live");
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", kStartTimeoutMs));
  const int64_t revision = Info().revision();

  // From the snapshot: its revision and an age of at most a few seconds.
  grpc::Status status;
  auto fresh = Estimate(estimator_, "GPT-2 (124M)", &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(fresh.has_catalog_view());
  EXPECT_TRUE(fresh.catalog_view().from_snapshot());
  EXPECT_FALSE(fresh.catalog_view().read_live());
  EXPECT_EQ(fresh.catalog_view().snapshot_revision(), revision);
  EXPECT_GE(fresh.catalog_view().snapshot_age_seconds(), 0);
  EXPECT_LT(fresh.catalog_view().snapshot_age_seconds(), 5);

  // Read live from the catalog by an estimator without a snapshot.
  auto read_live = Estimate(live, "GPT-2 (124M)", &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(read_live.catalog_view().read_live());
  EXPECT_FALSE(read_live.catalog_view().from_snapshot());

  // An inline model reads no record: no view.
  auto inline_answer = Estimate(estimator_, "", &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(inline_answer.has_catalog_view());

  // The streamed list carries it on its first message.
  {
    auto stub = estimator::v1::EstimatorService::NewStub(Channel(estimator_));
    estimator::v1::ListRunnableModelsRequest request;
    request.set_hardware("NVIDIA H100 SXM5 80GB");
    request.set_filter("parameters < 2e8");
    grpc::ClientContext context;
    context.set_deadline(testing::DeadlineFromNow(10000));
    auto reader = stub->ListRunnableModels(&context, request);
    estimator::v1::ListRunnableModelsResponse first;
    ASSERT_TRUE(reader->Read(&first));
    EXPECT_TRUE(first.catalog_view().from_snapshot());
    EXPECT_EQ(first.catalog_view().snapshot_revision(), revision);
    estimator::v1::ListRunnableModelsResponse more;
    while (reader->Read(&more)) EXPECT_FALSE(more.has_catalog_view());
    EXPECT_TRUE(reader->Finish().ok());
  }

  // The catalog gone, the snapshot still answers, and says how stale it is:
  // its age grows with the time since it last heard from the catalog.
  catalog_.process->Stop(SIGKILL, 5000);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  auto stale = Estimate(estimator_, "GPT-2 (124M)", &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(stale.catalog_view().from_snapshot());
  EXPECT_GE(stale.catalog_view().snapshot_age_seconds(), 2.5);
  EXPECT_LT(stale.catalog_view().snapshot_age_seconds(), 60);
  EXPECT_EQ(stale.catalog_view().snapshot_revision(), revision);
}

// ---------------------------------------------------------------------------
// Records above gRPC's default 4 MiB message limit reach the estimator: its
// first load and its Watch take them, and it stays ready.

common::v1::Model LargeModel(const std::string& name) {
  common::v1::Model model;
  model.set_display_name(name);
  model.set_parameters(1e9);
  model.mutable_provenance()->set_source("test");
  // 100 entries of 50,000 bytes: 5 MB, within the catalog's limits (64 KiB
  // per string, 10,000 entries per list, 16 MiB per request).
  for (int i = 0; i < 100; ++i) {
    model.add_domains(absl::StrCat(i, std::string(50000, 'd')));
  }
  return model;
}

TEST_F(ReliabilityEndToEndTest, RecordsAboveFourMebibytesReachTheEstimatorsSnapshot) {
  // The reply is the 5 MB record: this client takes it too.
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(64 << 20);
  auto writer = v1::CatalogService::NewStub(
      grpc::CreateCustomChannel(catalog_.address(), grpc::InsecureChannelCredentials(), arguments));
  auto create = [&writer](const std::string& id, const std::string& name) {
    grpc::ClientContext context;
    context.set_deadline(testing::DeadlineFromNow(30000));
    v1::CreateModelRequest request;
    request.set_model_id(id);
    *request.mutable_model() = LargeModel(name);
    common::v1::Model created;
    return writer->CreateModel(&context, request, &created);
  };
  // Before the estimator starts: its first List page holds it.
  grpc::Status status = create("large-one", "Large One");
  ASSERT_TRUE(status.ok()) << status.error_message();
  estimator_ = Start({ESTIMATOR_SERVICE_BIN, "--catalog_address=" + catalog_.address(),
                      "--readiness_interval=200ms"},
                     "estimator");
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", kStartTimeoutMs));
  auto answer = Estimate(estimator_, "Large One", &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(answer.catalog_view().from_snapshot());

  // While it runs: the Watch message carrying it arrives.
  status = create("large-two", "Large Two");
  ASSERT_TRUE(status.ok()) << status.error_message();
  const int64_t revision = Info().revision();
  bool followed = false;
  for (int i = 0; i < 100 && !followed; ++i) {
    answer = Estimate(estimator_, "Large Two", &status);
    followed = status.ok() && answer.catalog_view().from_snapshot() &&
               answer.catalog_view().snapshot_revision() >= revision;
    if (!followed) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(followed) << "the snapshot did not take the second 5 MB record";
  EXPECT_EQ(testing::HealthStatus(Channel(estimator_), "readiness"), "SERVING");
}

// ---------------------------------------------------------------------------
// Per-caller bounds: streams cannot take the unary calls' slots, one caller
// cannot take every stream, uploads and unread exports share a byte budget.

TEST_F(ReliabilityEndToEndTest, StreamsAndTransfersAreBoundedPerCaller) {
  // On every address (IPv4 and IPv6 loopback are two callers), 16 call slots:
  // at most 8 streams, at most 2 per caller.
  catalog_ =
      Start({CATALOG_SERVICE_BIN, "--sqlite_path=" + dir_ + "/bounded.db", "--grpc_address=[::]:0",
             "--max_concurrent_calls=16", "--transfer_memory_limit_bytes=4000000"},
            "catalog-a");
  stub_ = v1::CatalogService::NewStub(Channel(catalog_));
  const int64_t revision = Info().revision();
  auto open_watch = [](v1::CatalogService::Stub& stub, grpc::ClientContext* context,
                       grpc::Status* refused) {
    v1::WatchRequest request;
    auto reader = stub.Watch(context, request);
    v1::WatchResponse first;
    if (reader->Read(&first)) return reader;
    *refused = reader->Finish();
    return std::unique_ptr<grpc::ClientReader<v1::WatchResponse>>();
  };
  // One caller: two Watch streams, then refused, naming the per-caller share.
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::WatchResponse>>> watches;
  grpc::Status refused;
  for (int i = 0; i < 3; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    auto watch = open_watch(*stub_, contexts.back().get(), &refused);
    if (watch == nullptr) break;
    watches.push_back(std::move(watch));
  }
  EXPECT_EQ(watches.size(), 2u);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("per caller"), std::string::npos)
      << refused.error_message();
  // An import (a stream too) from the same caller is refused as well...
  {
    grpc::ClientContext context;
    v1::ImportRecordsResponse response;
    auto writer = stub_->ImportRecords(&context, &response);
    v1::ImportRecordsRequest request;
    request.mutable_options()->set_source_name("x.csv");
    request.set_data("Model,Parameters\nBounded,1000\n");
    writer->Write(request);
    writer->WritesDone();
    EXPECT_EQ(writer->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  }
  // ...while unary calls keep their slots, and another caller (IPv6) watches.
  EXPECT_EQ(GetModelCode("GPT-2 (124M)"), grpc::StatusCode::OK);
  auto other = v1::CatalogService::NewStub(grpc::CreateChannel(
      "[::1]:" + std::to_string(catalog_.grpc_port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext other_context;
  grpc::Status other_refused;
  auto other_watch = open_watch(*other, &other_context, &other_refused);
  EXPECT_NE(other_watch, nullptr) << other_refused.error_message();
  for (auto& context : contexts) context->TryCancel();
  other_context.TryCancel();
  watches.clear();
  other_watch.reset();

  // Uploads in progress share 4,000,000 bytes: one holding 3,000,000, a
  // second upload of 2,000,000 is refused, naming the budget; so is an
  // export while they are held.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the streams above end
  grpc::ClientContext held_context;
  v1::ImportRecordsResponse held_response;
  auto held = stub_->ImportRecords(&held_context, &held_response);
  v1::ImportRecordsRequest chunk;
  chunk.mutable_options()->set_source_name("held.csv");
  chunk.set_data("Model,Parameters\n" + std::string(3000000, 'x'));
  ASSERT_TRUE(held->Write(chunk));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // received and reserved
  {
    grpc::ClientContext context;
    v1::ImportRecordsResponse response;
    auto writer = stub_->ImportRecords(&context, &response);
    chunk.set_data(std::string(2000000, 'y'));
    writer->Write(chunk);
    writer->WritesDone();
    const grpc::Status status = writer->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(status.error_message().find("--transfer_memory_limit_bytes"), std::string::npos)
        << status.error_message();
  }
  {
    grpc::ClientContext context;
    v1::ExportRecordsRequest request;
    request.set_format(v1::FILE_FORMAT_EPOCH_MODELS_CSV);
    auto reader = stub_->ExportRecords(&context, request);
    v1::ExportRecordsResponse message;
    while (reader->Read(&message)) {
    }
    const grpc::Status status = reader->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  }
  // The held upload given up: its bytes are free again, the export goes through.
  held_context.TryCancel();
  held->Finish();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  {
    grpc::ClientContext context;
    v1::ExportRecordsRequest request;
    request.set_format(v1::FILE_FORMAT_EPOCH_MODELS_CSV);
    request.set_filter("parameters < 2e8");
    auto reader = stub_->ExportRecords(&context, request);
    v1::ExportRecordsResponse message;
    while (reader->Read(&message)) {
    }
    const grpc::Status status = reader->Finish();
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
  EXPECT_EQ(Info().revision(), revision);
}

}  // namespace
}  // namespace modelatlas
