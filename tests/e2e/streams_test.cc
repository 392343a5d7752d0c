// Long-lived streams against the real binaries (issue 16, points 7 and 14):
// a quiet catalog tells its watchers it is alive, and shutting down ends
// open Watch streams cleanly instead of waiting out the deadline.
#include <chrono>
#include <csignal>
#include <thread>

#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "tests/e2e/end_to_end.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas {
namespace {

TEST_F(EndToEndTest, AQuietCatalogSendsProgressSoTheSnapshotAgeMeasuresStaleness) {
  catalog_ = Start({CATALOG_SERVICE_BIN, "--sqlite_path=" + dir_ + "/catalog.db",
                    "--watch_progress_interval=1s"},
                   "catalog");
  estimator_ = Start({ESTIMATOR_SERVICE_BIN, "--catalog_address=" + catalog_.address(),
                      "--readiness_interval=200ms"},
                     "estimator");
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", 30000));
  // Nothing is written for several progress intervals.
  std::this_thread::sleep_for(std::chrono::milliseconds(4000));
  const std::string metrics = testing::HttpGet(estimator_.metrics_port, "/metrics");
  const double age = testing::SeriesValue(metrics, "modelatlas_estimator_snapshot_age_seconds", {});
  // Without progress messages the age would be the whole quiet time (4 s+).
  EXPECT_GE(age, 0);
  EXPECT_LT(age, 2.5) << metrics;
}

TEST_F(EndToEndTest, ShutdownEndsOpenWatchStreamsCleanlyWithinSeconds) {
  catalog_ = Start(
      {CATALOG_SERVICE_BIN, "--sqlite_path=" + dir_ + "/catalog.db", "--shutdown_deadline=30s"},
      "catalog");
  auto stub = catalog::v1::CatalogService::NewStub(Channel(catalog_));
  grpc::ClientContext context;
  catalog::v1::WatchRequest request;
  auto reader = stub->Watch(&context, request);
  catalog::v1::WatchResponse first;
  ASSERT_TRUE(reader->Read(&first));  // the stream is open

  const auto start = std::chrono::steady_clock::now();
  const int exit_code = catalog_.process->Stop(SIGTERM, 40000);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(exit_code, 0);
  // The deadline is 30 s: an open Watch no longer holds shutdown for it (the
  // gRPC drain itself takes about 0.1 s; the process exits within seconds).
  EXPECT_LT(seconds, 10.0);
  catalog::v1::WatchResponse more;
  while (reader->Read(&more)) {
  }
  const grpc::Status status = reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
}

}  // namespace
}  // namespace modelatlas
