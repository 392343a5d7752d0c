// End to end: two catalog-service replicas on one PostgreSQL database, each
// with its record cache (--postgres_record_cache), written through one (A)
// and read through the other (B), with an estimator-service following B.
// What a user of several replicas must be able to believe (README,
// "Configuration"; docs/ARCHITECTURE.md, "Replicas"):
//   - B serves A's writes within about a poll interval (its change follower
//     makes its cache forget what A wrote);
//   - once B has reported a revision (a Watch message, GetCatalogInfo), every
//     read from B reflects at least that revision;
//   - no read from B goes back in time for a record, and B converges to A's
//     final values;
//   - an estimator following B sees A's writes once B reports them;
//   - B restarted while A writes serves A's writes on its return.
// Waits poll with generous deadlines; nothing asserts on timing.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"
#include "tests/e2e/end_to_end.h"
#include "tests/testing/grpc_testing.h"
#include "tests/testing/postgres.h"
#include "tests/testing/process.h"

namespace modelatlas {
namespace {

using catalog::v1::CatalogService;
using testing::RunCommand;

// Short polls keep the tests to a few seconds: the Watch streams' and the
// change follower's (both --watch_poll_interval).
constexpr char kPollInterval[] = "--watch_poll_interval=50ms";
// How long a replica may take to show another's write: many poll
// intervals, for a loaded machine. Only an upper bound: never a timing claim.
constexpr int kConvergeTimeoutMs = 20000;
constexpr int kCallTimeoutMs = 10000;

std::unique_ptr<CatalogService::Stub> CatalogStub(const RunningServer& server) {
  return CatalogService::NewStub(
      grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
}

// A model's record read through `stub`: its status and record.
struct ReadModel {
  grpc::Status status;
  common::v1::Model model;
};

ReadModel GetModel(CatalogService::Stub& stub, const std::string& id) {
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(kCallTimeoutMs));
  catalog::v1::GetModelRequest request;
  request.set_name("models/" + id);
  ReadModel read;
  read.status = stub.GetModel(&context, request, &read.model);
  return read;
}

// Creates models/`id` with `parameters`; false (and a test failure) if not.
bool CreateModel(CatalogService::Stub& stub, const std::string& id, const std::string& display_name,
                 double parameters) {
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(kCallTimeoutMs));
  catalog::v1::CreateModelRequest request;
  request.set_model_id(id);
  request.mutable_model()->set_display_name(display_name);
  request.mutable_model()->set_parameters(parameters);
  request.mutable_model()->mutable_provenance()->set_source("replicas e2e test");
  common::v1::Model created;
  const grpc::Status status = stub.CreateModel(&context, request, &created);
  EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
  return status.ok();
}

bool SetParameters(CatalogService::Stub& stub, const std::string& id, double parameters) {
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(kCallTimeoutMs));
  catalog::v1::UpdateModelRequest request;
  request.mutable_model()->set_name("models/" + id);
  request.mutable_model()->set_parameters(parameters);
  request.mutable_update_mask()->add_paths("parameters");
  common::v1::Model updated;
  const grpc::Status status = stub.UpdateModel(&context, request, &updated);
  EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
  return status.ok();
}

bool DeleteModel(CatalogService::Stub& stub, const std::string& id) {
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(kCallTimeoutMs));
  catalog::v1::DeleteModelRequest request;
  request.set_name("models/" + id);
  google::protobuf::Empty empty;
  const grpc::Status status = stub.DeleteModel(&context, request, &empty);
  EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
  return status.ok();
}

// The catalog's revision as `stub`'s replica reports it; -1 on an error.
int64_t CatalogRevision(CatalogService::Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(kCallTimeoutMs));
  catalog::v1::CatalogInfo info;
  if (!stub.GetCatalogInfo(&context, {}, &info).ok()) return -1;
  return info.revision();
}

// Calls `done` every 20 ms until it returns true or `timeout_ms` passes.
template <typename Done>
bool WaitFor(Done done, int timeout_ms = kConvergeTimeoutMs) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// One Watch stream on a replica, read message by message.
class WatchStream {
 public:
  WatchStream(CatalogService::Stub& stub, int64_t start_revision) {
    context_.set_deadline(testing::DeadlineFromNow(60000));
    catalog::v1::WatchRequest request;
    request.set_start_revision(start_revision);
    stream_ = stub.Watch(&context_, request);
  }
  ~WatchStream() {
    context_.TryCancel();
    catalog::v1::WatchResponse ignored;
    while (stream_->Read(&ignored)) {
    }
    stream_->Finish().IgnoreError();
  }

  // Reads messages until one reports `revision` or later; false if the
  // stream ends first. Every change read on the way is kept in changes().
  bool ReadThrough(int64_t revision) {
    catalog::v1::WatchResponse message;
    while (stream_->Read(&message)) {
      for (const auto& change : message.changes()) changes_.push_back(change);
      if (message.revision() >= revision) return true;
    }
    return false;
  }
  const std::vector<catalog::v1::RecordChange>& changes() const { return changes_; }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<catalog::v1::WatchResponse>> stream_;
  std::vector<catalog::v1::RecordChange> changes_;
};

class ReplicasTest : public EndToEndTest {
 protected:
  std::vector<std::string> ReplicaArgs() const {
    // A short drain: the test's own channels stay open to the end.
    return {
        CATALOG_SERVICE_BIN,       "--store=postgres", "--postgres_url=" + database_->conninfo(),
        "--postgres_record_cache", kPollInterval,      "--shutdown_deadline=300ms"};
  }

  // Starts A, then B (A loads the shipped dataset first), both ready.
  void StartReplicas() {
    database_ = std::make_unique<testing::PostgresTestDatabase>();
    ASSERT_TRUE(database_->ok()) << database_->error();
    a_ = Start(ReplicaArgs(), "catalog-a");
    ASSERT_TRUE(testing::WaitUntilServing(Channel(a_), "readiness", kStartTimeoutMs));
    b_ = Start(ReplicaArgs(), "catalog-b");
    ASSERT_TRUE(testing::WaitUntilServing(Channel(b_), "readiness", kStartTimeoutMs));
    a_stub_ = CatalogStub(a_);
    b_stub_ = CatalogStub(b_);
  }

  void TearDown() override {
    // All drain at once (a second SIGTERM changes nothing); each exits cleanly.
    for (RunningServer* server : {&estimator_, &b_, &a_}) {
      if (server->process) ::kill(server->process->pid(), SIGTERM);
    }
    for (RunningServer* server : {&estimator_, &b_, &a_}) {
      if (server->process) {
        EXPECT_EQ(server->process->Stop(SIGTERM, 15000), 0);
      }
    }
    EndToEndTest::TearDown();
    database_.reset();  // after the replicas' connections are closed
  }

  // B's read of `id`: its parameters (whole numbers here, printed as such
  // when a check fails), or -1 when it fails (NOT_FOUND...).
  int64_t ParametersOnB(const std::string& id) {
    ReadModel read = GetModel(*b_stub_, id);
    return read.status.ok() ? std::llround(read.model.parameters()) : -1;
  }

  std::unique_ptr<testing::PostgresTestDatabase> database_;
  RunningServer a_;
  RunningServer b_;
  std::unique_ptr<CatalogService::Stub> a_stub_;
  std::unique_ptr<CatalogService::Stub> b_stub_;
};

// Point 1: B has read (cached) the records A then updates, deletes and
// imports over; B serves every change, and once B's Watch stream (or
// GetCatalogInfo) reports a revision, B's reads reflect it at once.
TEST_F(ReplicasTest, ReplicaWithRecordCacheServesAnotherReplicasWrites) {
  REQUIRE_POSTGRES();
  StartReplicas();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(CreateModel(*a_stub_, "cached-one", "Cached One", 1e9));
  ASSERT_TRUE(CreateModel(*a_stub_, "doomed", "Doomed", 2e9));
  ASSERT_TRUE(CreateModel(*a_stub_, "imported-over", "Imported Over", 3e9));
  // B reads them: now in its cache.
  ASSERT_TRUE(WaitFor([&] { return ParametersOnB("imported-over") == 3e9; }));
  EXPECT_EQ(ParametersOnB("cached-one"), 1e9);
  EXPECT_EQ(ParametersOnB("doomed"), 2e9);

  const int64_t start = CatalogRevision(*b_stub_);
  ASSERT_GT(start, 0);
  WatchStream watch(*b_stub_, start);

  ASSERT_TRUE(SetParameters(*a_stub_, "cached-one", 11e9));
  ASSERT_TRUE(DeleteModel(*a_stub_, "doomed"));
  ASSERT_TRUE(CreateModel(*a_stub_, "newcomer", "Newcomer", 4e9));
  const std::string file = dir_ + "/replicas.csv";
  std::ofstream(file) << "Model,Organization,Parameters\n"
                         "Imported Over,Replica Co,33000000000\n"
                         "Replica Csv Model,Replica Co,5000000000\n";
  // --overwrite: the file's parameters replace the record's (from another source).
  const auto imported = RunCommand(
      {MODELATLAS_CLI_BIN, "--catalog=" + a_.address(), "import", file, "--overwrite=parameters"});
  ASSERT_EQ(imported.exit_code, 0) << imported.err << imported.out;
  const int64_t written = CatalogRevision(*a_stub_);
  ASSERT_GE(written, start + 4);  // an update, a delete, a create, an import

  // Once the watch reports A's last revision, B's reads reflect every write
  // at once: no waiting here.
  ASSERT_TRUE(watch.ReadThrough(written));
  EXPECT_EQ(ParametersOnB("cached-one"), 11e9);
  EXPECT_EQ(GetModel(*b_stub_, "doomed").status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ParametersOnB("newcomer"), 4e9);
  EXPECT_EQ(ParametersOnB("imported-over"), 33e9);
  const ReadModel csv_model = GetModel(*b_stub_, "replica-csv-model");
  ASSERT_TRUE(csv_model.status.ok()) << csv_model.status.error_message();
  EXPECT_EQ(csv_model.model.parameters(), 5e9);
  // The changes the watch carried hold the records as written, not B's
  // cached copies of them.
  std::map<std::string, catalog::v1::RecordChange> last_change;
  for (const auto& change : watch.changes()) last_change[change.name()] = change;
  EXPECT_EQ(last_change["models/cached-one"].model().parameters(), 11e9);
  EXPECT_EQ(last_change["models/doomed"].type(), catalog::v1::CHANGE_TYPE_DELETED);
  EXPECT_EQ(last_change["models/imported-over"].model().parameters(), 33e9);

  // The same, many times over, each write racing B's change follower: B
  // reads (caches) the record, A updates it, B's watch reports the write,
  // B's read at once must show it, as must the change the watch carried.
  // Then the same with GetCatalogInfo's revision instead of the watch.
  for (int round = 1; round <= 15; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    const int64_t before = ParametersOnB("cached-one");
    ASSERT_GT(before, 0);
    const int64_t after = before + 1;
    const size_t changes_before = watch.changes().size();
    ASSERT_TRUE(SetParameters(*a_stub_, "cached-one", after));
    const int64_t revision = CatalogRevision(*a_stub_);
    ASSERT_TRUE(watch.ReadThrough(revision));
    ASSERT_EQ(ParametersOnB("cached-one"), after) << "B read a record older than its watch";
    ASSERT_GT(watch.changes().size(), changes_before);
    EXPECT_EQ(watch.changes().back().model().parameters(), after)
        << "the watch carried B's cached copy, not the record written";

    const int64_t third = after + 1;
    ASSERT_TRUE(SetParameters(*a_stub_, "cached-one", third));
    const int64_t info_revision = CatalogRevision(*a_stub_);
    ASSERT_TRUE(WaitFor([&] { return CatalogRevision(*b_stub_) >= info_revision; }));
    ASSERT_EQ(ParametersOnB("cached-one"), third) << "B read a record older than its revision";
  }
}

// Point 2: writers bump a counter (the parameters) of a few models through
// A while readers read them through B: no read from B returns a value older
// than one B returned before it began; once the writers stop, B converges to
// A's values. A bounded number of operations, not a timed run.
TEST_F(ReplicasTest, ReadsFromAReplicaNeverGoBackInTimeAndConverge) {
  REQUIRE_POSTGRES();
  StartReplicas();
  if (HasFatalFailure()) return;
  constexpr int kModels = 4;
  constexpr int kWriters = 2;
  constexpr int kUpdatesPerWriter = 120;
  constexpr int kReaders = 3;
  constexpr int kReadsPerReader = 600;
  std::vector<std::string> ids;
  for (int m = 0; m < kModels; ++m) {
    ids.push_back(absl::StrCat("counter-", m));
    ASSERT_TRUE(CreateModel(*a_stub_, ids.back(), absl::StrCat("Counter ", m), 1));
  }
  for (const std::string& id : ids) {
    ASSERT_TRUE(WaitFor([&] { return ParametersOnB(id) == 1; }));
  }

  // A model's counter: the value last written through A. One writer at a
  // time per model, so the stored values only grow.
  std::vector<std::mutex> write_locks(kModels);
  std::vector<double> written(kModels, 1);
  // The largest value B has returned for each model, noted after the read.
  absl::Mutex seen_mutex;
  std::vector<double> seen(kModels, 1);
  std::atomic<int> went_back{0};
  std::atomic<int> failed_calls{0};
  std::string first_violation;

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      auto a = CatalogStub(a_);
      std::mt19937 random(1000 + w);
      for (int i = 0; i < kUpdatesPerWriter; ++i) {
        const int m = static_cast<int>(random() % kModels);
        std::lock_guard<std::mutex> lock(write_locks[m]);
        if (SetParameters(*a, ids[m], written[m] + 1)) {
          written[m] += 1;
        } else {
          ++failed_calls;
        }
      }
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      auto b = CatalogStub(b_);
      std::mt19937 random(2000 + r);
      for (int i = 0; i < kReadsPerReader; ++i) {
        const int m = static_cast<int>(random() % kModels);
        double floor = 0;
        {
          absl::MutexLock lock(&seen_mutex);
          floor = seen[m];
        }
        const ReadModel read = GetModel(*b, ids[m]);
        if (!read.status.ok()) {
          ADD_FAILURE() << "read " << ids[m] << " through B: " << read.status.error_code() << " "
                        << read.status.error_message();
          ++failed_calls;
          continue;
        }
        const double value = read.model.parameters();
        absl::MutexLock lock(&seen_mutex);
        if (value < floor) {
          if (went_back++ == 0) {
            first_violation =
                absl::StrCat(ids[m], ": read ", value, " after B had returned ", floor);
          }
        }
        seen[m] = std::max(seen[m], value);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failed_calls.load(), 0);
  EXPECT_EQ(went_back.load(), 0) << "first: " << first_violation;
  // Each writer's updates all landed.
  double total = 0;
  for (double value : written) total += value - 1;
  EXPECT_EQ(total, kWriters * kUpdatesPerWriter);
  for (int m = 0; m < kModels; ++m) {
    EXPECT_TRUE(WaitFor([&] { return ParametersOnB(ids[m]) == written[m]; }))
        << ids[m] << ": B serves " << ParametersOnB(ids[m]) << ", A wrote " << written[m];
  }
}

// Point 3: an estimator following B (its snapshot follows B's Watch)
// answers from a write made through A once B reports it; B had the model
// in its cache.
TEST_F(ReplicasTest, EstimatorFollowingAReplicaSeesAnotherReplicasWrite) {
  REQUIRE_POSTGRES();
  StartReplicas();
  if (HasFatalFailure()) return;
  estimator_ = Start({ESTIMATOR_SERVICE_BIN, "--catalog_address=" + b_.address(),
                      "--readiness_interval=200ms", "--shutdown_deadline=300ms"},
                     "estimator");
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", kStartTimeoutMs));
  auto estimator = estimator::v1::EstimatorService::NewStub(Channel(estimator_));
  // Weight bytes of Llama 3.1 8B: its parameters x 2 bytes (BF16).
  const auto weight_bytes = [&]() -> int64_t {
    estimator::v1::EstimateInferenceMemoryRequest request;
    request.set_model("llama 3.1 8b");
    request.mutable_workload()->set_context_length_tokens(8192);
    estimator::v1::EstimateInferenceMemoryResponse response;
    grpc::ClientContext context;
    context.set_deadline(testing::DeadlineFromNow(kCallTimeoutMs));
    if (!estimator->EstimateInferenceMemory(&context, request, &response).ok()) return -1;
    if (response.lines_size() == 0) return -1;
    return response.lines(0).bytes();
  };
  EXPECT_EQ(weight_bytes(), 16060522496);                // 8,030,261,248 x 2 bytes
  ASSERT_EQ(ParametersOnB("llama-3-1-8b"), 8030261248);  // now in B's cache

  ASSERT_TRUE(SetParameters(*a_stub_, "llama-3-1-8b", 9e9));
  EXPECT_TRUE(WaitFor([&] { return weight_bytes() == 18000000000; }))
      << "the estimator answers " << weight_bytes() << " bytes";
  EXPECT_EQ(ParametersOnB("llama-3-1-8b"), 9e9);
}

// Point 4: B restarted while A writes: on its return it serves A's writes
// (no cached record survives), and its follower resumes: A's later writes
// reach it too.
TEST_F(ReplicasTest, RestartedReplicaServesWritesMadeWhileItWasDown) {
  REQUIRE_POSTGRES();
  StartReplicas();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(CreateModel(*a_stub_, "restarted", "Restarted", 1));
  ASSERT_TRUE(WaitFor([&] { return ParametersOnB("restarted") == 1; }));  // cached on B

  // A writer through A for the whole restart, one update at a time.
  std::atomic<bool> stop_writing{false};
  std::atomic<double> last_written{1};
  std::thread writer([&] {
    auto a = CatalogStub(a_);
    for (double value = 2; !stop_writing.load() && value < 10000; ++value) {
      if (!SetParameters(*a, "restarted", value)) return;
      last_written.store(value);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  ASSERT_TRUE(WaitFor([&] { return last_written.load() >= 5; }));
  const int port = b_.grpc_port;
  ASSERT_EQ(b_.process->Stop(SIGTERM, 15000), 0);
  b_.process.reset();
  const double stopped_at = last_written.load();
  ASSERT_TRUE(WaitFor([&] { return last_written.load() >= stopped_at + 5; }));
  const double written_while_down = last_written.load();
  b_ = Start(ReplicaArgs(), "catalog-b", port);
  ASSERT_TRUE(testing::WaitUntilServing(Channel(b_), "readiness", kStartTimeoutMs));
  b_stub_ = CatalogStub(b_);
  // Every write made before B returned is served at once.
  EXPECT_GE(ParametersOnB("restarted"), written_while_down);
  // Writes go on after the restart: B reads (caches) them as they come.
  const double after_restart = last_written.load();
  ASSERT_TRUE(WaitFor([&] { return last_written.load() >= after_restart + 5; }));
  stop_writing = true;
  writer.join();
  const double final_value = last_written.load();
  // The follower resumed: B forgets its cached copy and serves the last.
  EXPECT_TRUE(WaitFor([&] { return ParametersOnB("restarted") == final_value; }))
      << "B serves " << ParametersOnB("restarted") << ", A wrote " << final_value;
  // And a write after the writer stopped, to a record B has just cached.
  ASSERT_TRUE(SetParameters(*a_stub_, "restarted", final_value + 100));
  EXPECT_TRUE(WaitFor([&] { return ParametersOnB("restarted") == final_value + 100; }));
}

}  // namespace
}  // namespace modelatlas
