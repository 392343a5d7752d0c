// Faults between the services: the estimator without its catalog (never
// started, stopped, or hung) reports not ready, still answers requests that
// carry their data, fails catalog-dependent ones fast with UNAVAILABLE
// naming the catalog and never past the caller's deadline, and recovers by
// itself when the catalog returns.
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"
#include "tests/e2e/end_to_end.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas {
namespace {

using estimator::v1::EstimateInferenceMemoryRequest;
using estimator::v1::EstimateInferenceMemoryResponse;

struct TimedStatus {
  grpc::Status status;
  int64_t elapsed_ms = 0;
};

// A TCP port that completes connections (the kernel's backlog) but never
// speaks HTTP/2: a catalog that hangs.
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), length) == 0 && listen(fd_, 16) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      port_ = ntohs(address.sin_port);
    }
  }
  ~SilentListener() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class FaultsTest : public EndToEndTest {
 protected:
  RunningServer StartEstimator(const std::string& catalog_address, const std::string& timeout) {
    return Start({ESTIMATOR_SERVICE_BIN, "--catalog_address=" + catalog_address,
                  "--catalog_timeout=" + timeout, "--readiness_interval=200ms"},
                 "estimator");
  }

  // EstimateInferenceMemory with `deadline_ms` (0 = none), timed.
  TimedStatus Estimate(const EstimateInferenceMemoryRequest& request, int deadline_ms) {
    auto stub = estimator::v1::EstimatorService::NewStub(Channel(estimator_));
    grpc::ClientContext context;
    if (deadline_ms > 0) context.set_deadline(testing::DeadlineFromNow(deadline_ms));
    EstimateInferenceMemoryResponse response;
    const auto started = std::chrono::steady_clock::now();
    TimedStatus result;
    result.status = stub->EstimateInferenceMemory(&context, request, &response);
    result.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started)
                            .count();
    return result;
  }

  static EstimateInferenceMemoryRequest Catalogued() {
    EstimateInferenceMemoryRequest request;
    request.set_model("Llama 3.1 8B");
    return request;
  }
  static EstimateInferenceMemoryRequest Inline() {
    EstimateInferenceMemoryRequest request;
    request.mutable_inline_model()->set_parameters(7e9);
    return request;
  }
};

TEST_F(FaultsTest, EstimatorWithoutItsCatalogFailsFastAndRecoversByItself) {
  // A port the catalog will use, free until it starts.
  const int catalog_port = testing::FreePort();
  const std::string catalog_address = "127.0.0.1:" + std::to_string(catalog_port);
  estimator_ = StartEstimator(catalog_address, "5s");
  const auto channel = Channel(estimator_);
  ASSERT_TRUE(testing::WaitUntilServing(channel, "liveness", kStartTimeoutMs));
  EXPECT_EQ(testing::HealthStatus(channel, "readiness"), "NOT_SERVING");

  // Data in the request: answered.
  TimedStatus inline_call = Estimate(Inline(), 2000);
  EXPECT_TRUE(inline_call.status.ok()) << inline_call.status.error_message();
  // Data in the catalog: UNAVAILABLE at once, naming the catalog.
  for (int i = 0; i < 5; ++i) {
    TimedStatus call = Estimate(Catalogued(), 2000);
    EXPECT_EQ(call.status.error_code(), grpc::StatusCode::UNAVAILABLE)
        << call.status.error_message();
    EXPECT_NE(call.status.error_message().find(catalog_address), std::string::npos)
        << call.status.error_message();
    EXPECT_LT(call.elapsed_ms, 1000) << "not failed fast";
  }

  // The catalog starts: the estimator loads it and becomes ready, no restart.
  catalog_ = Start({CATALOG_SERVICE_BIN, "--sqlite_path=" + dir_ + "/catalog.db"}, "catalog",
                   catalog_port);
  ASSERT_TRUE(testing::WaitUntilServing(channel, "readiness", kStartTimeoutMs));
  TimedStatus recovered = Estimate(Catalogued(), 5000);
  EXPECT_TRUE(recovered.status.ok()) << recovered.status.error_message();

  // Stopped again: the snapshot keeps answering catalogued models; a model
  // the snapshot lacks is UNAVAILABLE, fast.
  EXPECT_EQ(catalog_.process->Stop(SIGKILL, 5000), 128 + SIGKILL);
  TimedStatus from_snapshot = Estimate(Catalogued(), 2000);
  EXPECT_TRUE(from_snapshot.status.ok()) << from_snapshot.status.error_message();
  EstimateInferenceMemoryRequest unknown;
  unknown.set_model("a model created after the snapshot");
  TimedStatus missing = Estimate(unknown, 2000);
  EXPECT_EQ(missing.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << missing.status.error_message();
  EXPECT_LT(missing.elapsed_ms, 1000);
}

TEST_F(FaultsTest, CallersDeadlineBoundsCallsToAHungCatalog) {
  SilentListener hung_catalog;
  ASSERT_NE(hung_catalog.port(), 0);
  const std::string catalog_address = "127.0.0.1:" + std::to_string(hung_catalog.port());
  // The estimator's own bound on catalog calls: 3 s.
  estimator_ = StartEstimator(catalog_address, "3s");
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "liveness", kStartTimeoutMs));

  // The caller's 300 ms deadline travels to the catalog call: the answer
  // comes at the caller's deadline, not after the estimator's 3 s.
  TimedStatus short_deadline = Estimate(Catalogued(), 300);
  EXPECT_EQ(short_deadline.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << short_deadline.status.error_message();
  EXPECT_LT(short_deadline.elapsed_ms, 1500);
  // And the estimator's own call to the catalog ended then too (its client
  // metrics), not when its 3 s bound would have ended it.
  std::this_thread::sleep_for(std::chrono::milliseconds(1000 - short_deadline.elapsed_ms));
  const std::string metrics = testing::HttpGet(estimator_.metrics_port, "/metrics");
  double ended = 0;
  for (const char* code : {"DeadlineExceeded", "Canceled"}) {
    ended += std::max(0.0, testing::SeriesValue(metrics, "grpc_client_handled_total",
                                                {"grpc_method=\"GetModel\"",
                                                 std::string("grpc_code=\"") + code + "\""}));
  }
  EXPECT_EQ(ended, 1) << "the catalog call outlived its caller's deadline:\n" << metrics;

  // Without a deadline of its own the caller gets UNAVAILABLE naming the
  // catalog once the estimator's bound passes.
  TimedStatus no_deadline = Estimate(Catalogued(), 0);
  EXPECT_EQ(no_deadline.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << no_deadline.status.error_message();
  EXPECT_NE(no_deadline.status.error_message().find(catalog_address), std::string::npos)
      << no_deadline.status.error_message();
  EXPECT_GE(no_deadline.elapsed_ms, 2900);
  EXPECT_LT(no_deadline.elapsed_ms, 6000);

  // Inline data never waits for the catalog.
  TimedStatus inline_call = Estimate(Inline(), 1000);
  EXPECT_TRUE(inline_call.status.ok()) << inline_call.status.error_message();
  EXPECT_LT(inline_call.elapsed_ms, 500);
}

// Beyond --max_concurrent_calls both servers refuse at once with
// RESOURCE_EXHAUSTED (health checks still answered), and take calls again
// as soon as the calls in flight end.
TEST_F(FaultsTest, BothServersShedCallsBeyondTheirLimit) {
  catalog_ = Start(
      {CATALOG_SERVICE_BIN, "--sqlite_path=" + dir_ + "/catalog.db", "--max_concurrent_calls=2"},
      "catalog");
  ASSERT_TRUE(testing::WaitUntilServing(Channel(catalog_), "readiness", kStartTimeoutMs));
  auto catalog = catalog::v1::CatalogService::NewStub(Channel(catalog_));
  auto get_model = [&] {
    catalog::v1::GetModelRequest request;
    request.set_name("Llama 3.1 8B");
    common::v1::Model model;
    grpc::ClientContext context;
    context.set_deadline(testing::DeadlineFromNow(2000));
    return catalog->GetModel(&context, request, &model);
  };
  ASSERT_TRUE(get_model().ok());

  // Streams hold at most half of the places: one Watch takes it, a second
  // Watch is refused at once, and unary calls keep the other half.
  // The second is opened only once the first has its place: opened
  // together, either could reach the server first.
  grpc::ClientContext watch_contexts[2];
  std::vector<std::unique_ptr<grpc::ClientReader<catalog::v1::WatchResponse>>> watches;
  watches.push_back(catalog->Watch(&watch_contexts[0], catalog::v1::WatchRequest()));
  catalog::v1::WatchResponse first;
  ASSERT_TRUE(watches[0]->Read(&first));
  watches.push_back(catalog->Watch(&watch_contexts[1], catalog::v1::WatchRequest()));
  EXPECT_FALSE(watches[1]->Read(&first));
  const grpc::Status refused = watches[1]->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(refused.error_message().find("limit 1"), std::string::npos) << refused.error_message();
  google::rpc::ErrorInfo info;
  EXPECT_TRUE(testing::FindDetail(testing::DecodeDetails(refused), &info));
  EXPECT_EQ(info.reason(), "SERVER_OVERLOADED");
  // The refused call's place is released on the server after its client
  // has the status: a unary call is served once it is (while the first
  // Watch still holds the streams' half).
  bool unary_served = false;
  for (int i = 0; i < 40 && !unary_served; ++i) {
    unary_served = get_model().ok();
    if (!unary_served) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(unary_served);
  EXPECT_EQ(testing::HealthStatus(Channel(catalog_), "readiness"), "SERVING");
  std::string metrics = testing::HttpGet(catalog_.metrics_port, "/metrics");
  EXPECT_GE(testing::SeriesValue(metrics, "modelatlas_server_calls_shed_total", {}), 1) << metrics;
  for (int i = 0;
       i < 40 && testing::SeriesValue(metrics, "modelatlas_server_calls_in_flight", {}) != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    metrics = testing::HttpGet(catalog_.metrics_port, "/metrics");
  }
  EXPECT_EQ(testing::SeriesValue(metrics, "modelatlas_server_calls_in_flight", {}), 1) << metrics;

  // The stream ends: another is taken again.
  watch_contexts[0].TryCancel();
  watches[0]->Finish();
  bool opened = false;
  for (int i = 0; i < 40 && !opened; ++i) {
    grpc::ClientContext context;
    auto again = catalog->Watch(&context, catalog::v1::WatchRequest());
    opened = again->Read(&first);
    context.TryCancel();
    again->Finish().IgnoreError();
    if (!opened) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(opened);

  // The estimator: one call waiting on a hung catalog holds its one place.
  SilentListener hung_catalog;
  estimator_ = Start(
      {ESTIMATOR_SERVICE_BIN, "--catalog_address=127.0.0.1:" + std::to_string(hung_catalog.port()),
       "--catalog_timeout=2s", "--max_concurrent_calls=1"},
      "estimator");
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "liveness", kStartTimeoutMs));
  std::thread waiting([&] {
    TimedStatus call = Estimate(Catalogued(), 0);
    EXPECT_EQ(call.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  TimedStatus shed = Estimate(Inline(), 1000);
  EXPECT_EQ(shed.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << shed.status.error_message();
  EXPECT_LT(shed.elapsed_ms, 500) << "refused, not queued";
  waiting.join();
  // Its place is released on the server when gRPC destroys the call, which
  // may be just after the client has its status (as the catalog's above):
  // a call is taken again once it is.
  TimedStatus taken = Estimate(Inline(), 1000);
  for (int i = 0; i < 40 && taken.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    taken = Estimate(Inline(), 1000);
  }
  EXPECT_TRUE(taken.status.ok()) << taken.status.error_message();
}

// The catalog binary killed: the estimator's snapshot stops hearing from it,
// its age and last-sync metrics say so, the stale gauge turns 1 past
// --snapshot_max_age and readiness is NOT_SERVING (liveness SERVING), while
// catalogued models are still answered from the snapshot. Restarted, all
// return to normal without restarting the estimator.
TEST_F(FaultsTest, AStaleSnapshotShowsInMetricsAndReadiness) {
  const int catalog_port = testing::FreePort();
  const std::vector<std::string> catalog_args = {
      CATALOG_SERVICE_BIN, "--sqlite_path=" + dir_ + "/catalog.db",
      // A quiet catalog still speaks twice a second, well within the
      // estimator's 4 s bound below, however loaded the machine.
      "--watch_progress_interval=500ms"};
  catalog_ = Start(catalog_args, "catalog", catalog_port);
  estimator_ = Start({ESTIMATOR_SERVICE_BIN, "--catalog_address=" + catalog_.address(),
                      "--readiness_interval=200ms", "--snapshot_max_age=4s"},
                     "estimator");
  const auto channel = Channel(estimator_);
  ASSERT_TRUE(testing::WaitUntilServing(channel, "readiness", kStartTimeoutMs));
  auto metric = [this](const char* name) {
    return testing::SeriesValue(testing::HttpGet(estimator_.metrics_port, "/metrics"), name, {});
  };
  EXPECT_EQ(metric("modelatlas_estimator_snapshot_stale"), 0);
  const double synced = metric("modelatlas_estimator_snapshot_last_sync_timestamp_seconds");
  EXPECT_GT(synced, 1.7e9);  // a Unix time, seconds (after 2023)
  EXPECT_LT(metric("modelatlas_estimator_snapshot_age_seconds"), 4.0);

  EXPECT_EQ(catalog_.process->Stop(SIGKILL, 5000), 128 + SIGKILL);
  // Polled with a generous bound: the gauge turns once the age passes 4 s.
  bool stale = false;
  for (int i = 0; i < 600 && !stale; ++i) {
    stale = metric("modelatlas_estimator_snapshot_stale") == 1;
    if (!stale) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(stale);
  EXPECT_GE(metric("modelatlas_estimator_snapshot_age_seconds"), 4.0);
  const double last_sync = metric("modelatlas_estimator_snapshot_last_sync_timestamp_seconds");
  EXPECT_GE(last_sync, synced);
  bool not_ready = false;
  for (int i = 0; i < 300 && !not_ready; ++i) {
    not_ready = testing::HealthStatus(channel, "readiness") == "NOT_SERVING";
    if (!not_ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(not_ready);
  EXPECT_EQ(testing::HealthStatus(channel, "liveness"), "SERVING");
  TimedStatus from_snapshot = Estimate(Catalogued(), 5000);
  EXPECT_TRUE(from_snapshot.status.ok()) << from_snapshot.status.error_message();
  // The age keeps growing, the last sync stays where it was.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(metric("modelatlas_estimator_snapshot_last_sync_timestamp_seconds"), last_sync);

  // Back on its port and database: followed again, ready again, not stale.
  catalog_ = Start(catalog_args, "catalog", catalog_port);
  ASSERT_TRUE(testing::WaitUntilServing(channel, "readiness", 60000));
  bool fresh = false;
  for (int i = 0; i < 600 && !fresh; ++i) {
    fresh = metric("modelatlas_estimator_snapshot_stale") == 0;
    if (!fresh) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(fresh);
  EXPECT_GT(metric("modelatlas_estimator_snapshot_last_sync_timestamp_seconds"), last_sync);
}

}  // namespace
}  // namespace modelatlas
