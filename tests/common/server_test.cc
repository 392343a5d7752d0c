// ServerRunner: health names, readiness, per-RPC metrics, /metrics, shutdown.
#include "common/server/server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "catalog-service/catalog.h"
#include "catalog-service/service.h"
#include "catalog-service/store/sqlite_store.h"
#include "common/server/metrics_exposer.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas {
namespace {

using catalog::v1::CatalogService;
using testing::HealthStatus;
using testing::SeriesValue;

class ServerRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = catalog::SqliteStore::Open(":memory:");
    ASSERT_TRUE(store.ok()) << store.status();
    catalog_ = std::make_unique<catalog::Catalog>(*std::move(store));
    service_ = std::make_unique<catalog::CatalogServiceImpl>(catalog_.get());
    runner_ = std::make_unique<ServerRunner>(ServerOptions{
        .program = "test", .grpc_address = "127.0.0.1:0", .metrics_address = "127.0.0.1:0"});
    runner_->AddService(service_.get(), CatalogService::service_full_name());
    ASSERT_TRUE(runner_->Start().ok());
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(runner_->grpc_port()),
                                   grpc::InsecureChannelCredentials());
  }

  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<catalog::CatalogServiceImpl> service_;
  std::unique_ptr<ServerRunner> runner_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(ServerRunnerTest, LivenessAndReadinessAreSeparate) {
  EXPECT_EQ(HealthStatus(channel_, ""), "SERVING");
  EXPECT_EQ(HealthStatus(channel_, kLivenessService), "SERVING");
  EXPECT_EQ(HealthStatus(channel_, kReadinessService), "NOT_SERVING");
  EXPECT_EQ(HealthStatus(channel_, "modelatlas.catalog.v1.CatalogService"), "NOT_SERVING");
  runner_->SetReady(true);
  EXPECT_EQ(HealthStatus(channel_, kReadinessService), "SERVING");
  EXPECT_EQ(HealthStatus(channel_, "modelatlas.catalog.v1.CatalogService"), "SERVING");
  runner_->SetReady(false);
  EXPECT_EQ(HealthStatus(channel_, kReadinessService), "NOT_SERVING");
  EXPECT_EQ(HealthStatus(channel_, kLivenessService), "SERVING");
}

TEST_F(ServerRunnerTest, EveryMethodStartsAtZeroAndCallsAreCountedByCode) {
  const std::string before = testing::Render(runner_->registry());
  for (const char* method : {"GetModel", "ListModels", "GetHardware", "ListHardware"}) {
    const std::string matcher = std::string("grpc_method=\"") + method + "\"";
    EXPECT_EQ(SeriesValue(before, "grpc_server_started_total", {matcher}), 0) << method;
    EXPECT_EQ(SeriesValue(before, "grpc_server_handled_total", {matcher, "grpc_code=\"NotFound\""}),
              0)
        << method;
  }
  auto stub = CatalogService::NewStub(channel_);
  for (int i = 0; i < 3; ++i) {
    grpc::ClientContext context;
    catalog::v1::GetModelRequest request;
    request.set_name("models/missing");
    common::v1::Model model;
    EXPECT_EQ(stub->GetModel(&context, request, &model).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  grpc::ClientContext context;
  catalog::v1::ListModelsResponse page;
  ASSERT_TRUE(stub->ListModels(&context, {}, &page).ok());

  const std::string after = testing::Render(runner_->registry());
  const std::string get = "grpc_method=\"GetModel\"";
  EXPECT_EQ(SeriesValue(after, "grpc_server_started_total", {get}), 3);
  EXPECT_EQ(SeriesValue(after, "grpc_server_handled_total", {get, "grpc_code=\"NotFound\""}), 3);
  EXPECT_EQ(SeriesValue(after, "grpc_server_handled_total", {get, "grpc_code=\"OK\""}), 0);
  EXPECT_EQ(SeriesValue(after, "grpc_server_msg_received_total", {get}), 3);
  EXPECT_EQ(SeriesValue(after, "grpc_server_handling_seconds_count", {get}), 3);
  EXPECT_EQ(SeriesValue(after, "grpc_server_handled_total",
                        {"grpc_method=\"ListModels\"", "grpc_code=\"OK\"", "grpc_type=\"unary\"",
                         "grpc_service=\"modelatlas.catalog.v1.CatalogService\""}),
            1);
}

TEST_F(ServerRunnerTest, MetricsEndpointServesRpcAndProcessMetrics) {
  ASSERT_GT(runner_->metrics_port(), 0);
  const std::string body = testing::HttpGet(runner_->metrics_port(), "/metrics");
  EXPECT_GE(SeriesValue(body, "grpc_server_started_total", {"grpc_method=\"GetModel\""}), 0);
  EXPECT_GT(SeriesValue(body, "process_resident_memory_bytes", {}), 1e6);
  EXPECT_GT(SeriesValue(body, "process_start_time_seconds", {}), 1.6e9);
  EXPECT_GT(SeriesValue(body, "process_open_fds", {}), 0);
}

// The in-flight count is read from the limiter's atomic when Prometheus
// scrapes (no gauge changed per call): the endpoint shows a gauge of the
// calls open at that moment, 0 when none, and the registry no longer holds
// a second copy of it.
TEST_F(ServerRunnerTest, CallsInFlightAreReadWhenScraped) {
  const auto in_flight = [this](std::string* body) {
    *body = testing::HttpGet(runner_->metrics_port(), "/metrics");
    return SeriesValue(*body, "modelatlas_server_calls_in_flight", {});
  };
  std::string body;
  EXPECT_EQ(in_flight(&body), 0) << body;
  EXPECT_NE(body.find("# TYPE modelatlas_server_calls_in_flight gauge"), std::string::npos) << body;
  EXPECT_EQ(testing::Render(runner_->registry()).find("modelatlas_server_calls_in_flight"),
            std::string::npos);

  auto stub = CatalogService::NewStub(channel_);
  grpc::ClientContext watch_context;
  auto watch = stub->Watch(&watch_context, catalog::v1::WatchRequest());
  catalog::v1::WatchResponse first;
  ASSERT_TRUE(watch->Read(&first));  // the stream is open on the server
  EXPECT_EQ(in_flight(&body), 1) << body;

  // The server's Watch worker notices the cancellation within about a
  // second (its wait for changes), then the call ends.
  watch_context.TryCancel();
  watch->Finish();
  double after = 1;
  for (int i = 0; i < 200 && after != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    after = in_flight(&body);
  }
  EXPECT_EQ(after, 0) << body;
}

TEST_F(ServerRunnerTest, ShutdownStopsServingAndReadinessStaysOff) {
  runner_->SetReady(true);
  std::thread waiter([this] { runner_->WaitForShutdownSignal(); });
  runner_->Shutdown();
  waiter.join();
  runner_->SetReady(true);  // too late: shutdown has begun
  EXPECT_NE(HealthStatus(channel_, kReadinessService), "SERVING");
}

// A scrape restarts civetweb's 2 s poll, which ~Exposer alone waited out
// (common/server/metrics_exposer.h): shutdown took 2.0-2.1 s here before.
// Whatever is left of the drain and the stop is well under a second.
TEST_F(ServerRunnerTest, ShutdownRightAfterAScrapeDoesNotWaitForTheMetricsEndpoint) {
  ASSERT_NE(testing::HttpGet(runner_->metrics_port(), "/metrics"), "");
  const auto start = std::chrono::steady_clock::now();
  std::thread waiter([this] { runner_->WaitForShutdownSignal(); });
  runner_->Shutdown();
  waiter.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ(testing::HttpGet(runner_->metrics_port(), "/metrics"), "");  // closed
}

TEST(StopExposerTest, ConnectsToLoopbackForAWildcardAddressAndToTheHostOtherwise) {
  EXPECT_EQ(HostToReach("0.0.0.0:9464"), "127.0.0.1");
  EXPECT_EQ(HostToReach(":9464"), "127.0.0.1");
  EXPECT_EQ(HostToReach("*:9464"), "127.0.0.1");
  EXPECT_EQ(HostToReach("[::]:9465"), "::1");
  EXPECT_EQ(HostToReach("127.0.0.1:0"), "127.0.0.1");
  EXPECT_EQ(HostToReach("10.1.2.3:9464"), "10.1.2.3");
  EXPECT_EQ(HostToReach("[fe80::1]:9464"), "fe80::1");
  EXPECT_EQ(HostToReach("metrics.internal:9464"), "metrics.internal");
}

TEST(ServerRunnerStartTest, TakenPortIsAClearError) {
  ServerRunner first(
      {.program = "a", .grpc_address = "127.0.0.1:0", .metrics_address = "127.0.0.1:0"});
  ASSERT_TRUE(first.Start().ok());
  ServerRunner second({.program = "b",
                       .grpc_address = "127.0.0.1:0",
                       .metrics_address = "127.0.0.1:" + std::to_string(first.metrics_port())});
  const absl::Status status = second.Start();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("cannot listen for metrics"), absl::string_view::npos);
}

}  // namespace
}  // namespace modelatlas
