// Durability: catalog-service killed with SIGKILL under concurrent writes,
// again and again; after each restart every write it acknowledged is there,
// whole, and SQLite's integrity check is clean. The same against
// PostgreSQL (the service killed; the database stays).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "tests/e2e/end_to_end.h"
#include "tests/testing/grpc_testing.h"
#include "tests/testing/postgres.h"

namespace modelatlas {
namespace {

constexpr int kCycles = 20;
constexpr int kWriters = 4;

struct Written {
  std::string id;
  double parameters = 0;
};

class DurabilityTest : public EndToEndTest {
 protected:
  // Writes from kWriters threads until the server dies; returns the writes
  // it acknowledged and those whose fate is unknown (the call failed).
  void WriteUntilKilled(int cycle, std::vector<Written>* acknowledged,
                        std::vector<Written>* unknown) {
    auto stub = catalog::v1::CatalogService::NewStub(Channel(catalog_));
    std::atomic<bool> stop{false};
    std::mutex mutex;
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        for (int n = 0; !stop; ++n) {
          Written write{absl::StrCat("kill-c", cycle, "-w", w, "-", n), 1000.0 * cycle + n};
          catalog::v1::CreateModelRequest request;
          request.set_model_id(write.id);
          request.mutable_model()->set_display_name(write.id);
          request.mutable_model()->set_parameters(write.parameters);
          request.mutable_model()->set_abstract(std::string(2000, 'x'));  // a record of some size
          request.mutable_model()->mutable_provenance()->set_source("durability test");
          common::v1::Model created;
          grpc::ClientContext context;
          context.set_deadline(testing::DeadlineFromNow(2000));
          const grpc::Status status = stub->CreateModel(&context, request, &created);
          std::lock_guard<std::mutex> lock(mutex);
          (status.ok() ? acknowledged : unknown)->push_back(write);
          if (!status.ok()) return;  // the server is gone
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(catalog_.process->Stop(SIGKILL, 5000), 128 + SIGKILL);
    stop = true;
    for (auto& writer : writers) writer.join();
  }

  // Every acknowledged write present and whole; unknown ones whole if present.
  void Verify(const std::vector<Written>& acknowledged, const std::vector<Written>& unknown) {
    auto stub = catalog::v1::CatalogService::NewStub(Channel(catalog_));
    auto fetch = [&](const Written& write, common::v1::Model* model) {
      grpc::ClientContext context;
      catalog::v1::GetModelRequest request;
      request.set_name("models/" + write.id);
      return stub->GetModel(&context, request, model);
    };
    for (const Written& write : acknowledged) {
      common::v1::Model model;
      const grpc::Status status = fetch(write, &model);
      ASSERT_TRUE(status.ok()) << "acknowledged write lost: " << write.id << ": "
                               << status.error_message();
      EXPECT_EQ(model.parameters(), write.parameters) << write.id;
      EXPECT_EQ(model.abstract().size(), 2000u) << write.id << " is half-written";
    }
    for (const Written& write : unknown) {
      common::v1::Model model;
      if (fetch(write, &model).ok()) {
        EXPECT_EQ(model.parameters(), write.parameters) << write.id;
        EXPECT_EQ(model.abstract().size(), 2000u) << write.id << " is half-written";
      }
    }
  }

  void RunCycles(const std::vector<std::string>& args, bool sqlite) {
    int64_t total_acknowledged = 0;
    for (int cycle = 0; cycle < kCycles; ++cycle) {
      catalog_ = Start(args, "catalog");
      ASSERT_TRUE(testing::WaitUntilServing(Channel(catalog_), "readiness", 30000));
      std::vector<Written> acknowledged, unknown;
      WriteUntilKilled(cycle, &acknowledged, &unknown);
      EXPECT_GT(acknowledged.size(), 0u) << "cycle " << cycle << " wrote nothing";
      total_acknowledged += static_cast<int64_t>(acknowledged.size());
      if (sqlite) {
        auto check = testing::RunCommand(
            {"/usr/bin/sqlite3", dir_ + "/catalog.db", "PRAGMA integrity_check;"});
        EXPECT_EQ(check.out, "ok\n") << "cycle " << cycle << ": " << check.out << check.err;
      }
      catalog_ = Start(args, "catalog");
      ASSERT_TRUE(testing::WaitUntilServing(Channel(catalog_), "readiness", 30000));
      Verify(acknowledged, unknown);
      catalog_.process->Stop(SIGKILL, 5000);  // the next cycle starts it again
      if (HasFailure()) return;
    }
    std::printf("durability: %d kill cycles, %lld acknowledged writes checked\n", kCycles,
                static_cast<long long>(total_acknowledged));
    RecordProperty("acknowledged_writes", std::to_string(total_acknowledged));
  }
};

TEST_F(DurabilityTest, SqliteSurvivesSigkillUnderConcurrentWrites) {
  REQUIRE_TOOL("/usr/bin/sqlite3");
  RunCycles({CATALOG_SERVICE_BIN, "--sqlite_path=" + dir_ + "/catalog.db"}, true);
}

TEST_F(DurabilityTest, PostgresCatalogSurvivesSigkillUnderConcurrentWrites) {
  REQUIRE_POSTGRES();
  testing::PostgresTestDatabase database;
  ASSERT_TRUE(database.ok()) << database.error();
  RunCycles({CATALOG_SERVICE_BIN, "--store=postgres", "--postgres_url=" + database.conninfo()},
            false);
}

}  // namespace
}  // namespace modelatlas
