// PostgreSQL restarted under load: catalog-service keeps running, answers
// UNAVAILABLE while the database is down (never a crash, never a hang past
// the caller's deadline), reconnects by itself when it returns, and loses no
// write it acknowledged. Runs alone (RUN_SERIAL): it stops the server every
// other PostgreSQL test uses.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "tests/e2e/end_to_end.h"
#include "tests/e2e/soak.h"
#include "tests/testing/grpc_testing.h"
#include "tests/testing/postgres.h"

namespace modelatlas {
namespace {

constexpr int kRestarts = 3;
constexpr int kWriters = 4;
constexpr int kCallDeadlineMs = 2000;

class PostgresRestartTest : public EndToEndTest {
 protected:
  struct Load {
    std::mutex mutex;
    std::map<std::string, int> codes;  // "CreateModel UNAVAILABLE" -> calls
    std::vector<std::pair<std::string, double>> acknowledged;
    std::atomic<int64_t> acknowledged_count{0};
    std::atomic<int64_t> slowest_call_ms{0};
    std::atomic<bool> stop{false};
  };

  void Record(Load& load, const std::string& method, const grpc::Status& status,
              int64_t elapsed_ms) {
    std::lock_guard<std::mutex> lock(load.mutex);
    ++load.codes[absl::StrCat(method, " ", GrpcCodeName(status.error_code()))];
    int64_t slowest = load.slowest_call_ms;
    while (elapsed_ms > slowest &&
           !load.slowest_call_ms.compare_exchange_weak(slowest, elapsed_ms)) {
    }
  }

  // Writers create records; one reader lists them. Failed calls back off 20 ms.
  std::vector<std::thread> StartLoad(Load& load) {
    std::vector<std::thread> threads;
    for (int w = 0; w < kWriters; ++w) {
      threads.emplace_back([this, &load, w] {
        auto stub = catalog::v1::CatalogService::NewStub(Channel(catalog_));
        for (int n = 0; !load.stop; ++n) {
          const std::string id = absl::StrCat("pg-restart-w", w, "-", n);
          catalog::v1::CreateModelRequest request;
          request.set_model_id(id);
          request.mutable_model()->set_display_name(id);
          request.mutable_model()->set_parameters(1000.0 + n);
          request.mutable_model()->mutable_provenance()->set_source("postgres restart test");
          common::v1::Model created;
          grpc::ClientContext context;
          context.set_deadline(testing::DeadlineFromNow(kCallDeadlineMs));
          const auto started = std::chrono::steady_clock::now();
          const grpc::Status status = stub->CreateModel(&context, request, &created);
          Record(load, "CreateModel", status, ElapsedMs(started));
          if (status.ok()) {
            std::lock_guard<std::mutex> lock(load.mutex);
            load.acknowledged.emplace_back(id, 1000.0 + n);
            ++load.acknowledged_count;
          } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }
      });
    }
    threads.emplace_back([this, &load] {
      auto stub = catalog::v1::CatalogService::NewStub(Channel(catalog_));
      while (!load.stop) {
        catalog::v1::ListModelsRequest request;
        request.set_filter("parameters > 1500");
        request.set_page_size(20);
        catalog::v1::ListModelsResponse response;
        grpc::ClientContext context;
        context.set_deadline(testing::DeadlineFromNow(kCallDeadlineMs));
        const auto started = std::chrono::steady_clock::now();
        const grpc::Status status = stub->ListModels(&context, request, &response);
        Record(load, "ListModels", status, ElapsedMs(started));
        if (!status.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    return threads;
  }

  static int64_t ElapsedMs(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 since)
        .count();
  }

  // True once `load` acknowledges a write after this call, within `timeout_ms`.
  static bool WritesResume(Load& load, int timeout_ms) {
    const int64_t before = load.acknowledged_count;
    for (int waited = 0; waited < timeout_ms; waited += 50) {
      if (load.acknowledged_count > before) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
};

TEST_F(PostgresRestartTest, CatalogAnswersUnavailableAndReconnectsWhenPostgresRestarts) {
  REQUIRE_POSTGRES();
  if (!testing::PostgresRestartable()) {
    if (testing::RunningUnderCi()) FAIL() << "under CI the suite runs in pg_virtualenv";
    GTEST_SKIP() << "PostgreSQL is not pg_virtualenv's cluster: cannot restart it";
  }
  testing::PostgresTestDatabase database;
  ASSERT_TRUE(database.ok()) << database.error();
  catalog_ =
      Start({CATALOG_SERVICE_BIN, "--store=postgres", "--postgres_url=" + database.conninfo()},
            "catalog");
  ASSERT_TRUE(testing::WaitUntilServing(Channel(catalog_), "readiness", kStartTimeoutMs));

  Load load;
  std::vector<std::thread> threads = StartLoad(load);
  bool restarted_cleanly = true;
  for (int restart = 0; restart < kRestarts && restarted_cleanly; ++restart) {
    EXPECT_TRUE(WritesResume(load, 10000)) << "no write before restart " << restart;
    const std::string stopped = testing::StopPostgres();
    EXPECT_EQ(stopped, "");
    // Down for a while: calls fail meanwhile, the service stays up.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_TRUE(catalog_.process->running()) << "catalog-service died with PostgreSQL down";
    const std::string started = testing::StartPostgres();
    EXPECT_EQ(started, "");
    restarted_cleanly = stopped.empty() && started.empty();
    EXPECT_TRUE(WritesResume(load, 30000))
        << "catalog-service did not reconnect within 30 s of restart " << restart;
  }
  load.stop = true;
  for (auto& thread : threads) thread.join();
  ASSERT_TRUE(restarted_cleanly);
  EXPECT_TRUE(catalog_.process->running());

  // While the database was down calls failed with UNAVAILABLE, nothing else
  // (and never past their deadline: a hang would show DEADLINE_EXCEEDED).
  int64_t unavailable = 0;
  std::string summary;
  for (const auto& [key, calls] : load.codes) {
    absl::StrAppend(&summary, "  ", key, ": ", calls, "\n");
    const bool expected = absl::EndsWith(key, " OK") || absl::EndsWith(key, " UNAVAILABLE");
    EXPECT_TRUE(expected) << key << " answered " << calls << " times";
    if (absl::EndsWith(key, " UNAVAILABLE")) unavailable += calls;
  }
  EXPECT_GT(unavailable, 0) << "the outage was never seen:\n" << summary;
  EXPECT_LT(load.slowest_call_ms, kCallDeadlineMs + 500);

  // Every acknowledged write is there.
  auto stub = catalog::v1::CatalogService::NewStub(Channel(catalog_));
  for (const auto& [id, parameters] : load.acknowledged) {
    catalog::v1::GetModelRequest request;
    request.set_name("models/" + id);
    common::v1::Model model;
    grpc::ClientContext context;
    const grpc::Status status = stub->GetModel(&context, request, &model);
    ASSERT_TRUE(status.ok()) << "acknowledged write lost: " << id << ": " << status.error_message();
    EXPECT_EQ(model.parameters(), parameters) << id;
  }
  std::printf("postgres restarts: %d, %zu acknowledged writes checked, slowest call %lld ms\n%s",
              kRestarts, load.acknowledged.size(), static_cast<long long>(load.slowest_call_ms),
              summary.c_str());
}

// The soak on PostgreSQL: the catalog killed, PostgreSQL restarted and an
// estimator replica killed in turn.
TEST_F(SoakTest, PostgresWithTheDatabaseRestartedLosesNoWrite) {
  REQUIRE_POSTGRES();
  if (!testing::PostgresRestartable()) {
    if (testing::RunningUnderCi()) FAIL() << "under CI the suite runs in pg_virtualenv";
    GTEST_SKIP() << "PostgreSQL is not pg_virtualenv's cluster: cannot restart it";
  }
  testing::PostgresTestDatabase database;
  ASSERT_TRUE(database.ok()) << database.error();
  RunSoak({.store_args = {"--store=postgres", "--postgres_url=" + database.conninfo()},
           .faults = {Fault::kKillCatalog, Fault::kRestartPostgres, Fault::kKillEstimator}});
}

}  // namespace
}  // namespace modelatlas
