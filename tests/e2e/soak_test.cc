// Soak: mixed reads, writes and estimates against a catalog and two
// estimator replicas, with a fault injected at every tenth of the run (the
// catalog or an estimator replica killed with SIGKILL and restarted on its
// port). Reports errors by code, p99 latency per operation and resident
// memory growth; fails on a lost acknowledged write or a server that died
// on its own. MODELATLAS_SOAK_SECONDS sets the length (default 20 s, the CI
// smoke); scripts/soak.sh runs ten minutes.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/channels.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"
#include "tests/e2e/end_to_end.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas {
namespace {

double ResidentMiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024;  // kB -> MiB
  }
  return 0;
}

struct Tally {
  std::mutex mutex;
  std::map<std::string, std::vector<double>> latency_ms;  // by operation
  std::map<std::string, int64_t> codes;                   // "operation CODE" -> calls
  std::vector<std::string> acknowledged_ids;

  void Record(const std::string& op, double ms, const grpc::Status& status) {
    std::lock_guard<std::mutex> lock(mutex);
    latency_ms[op].push_back(ms);
    ++codes[absl::StrCat(
        op, " ", absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())))];
  }
};

class SoakTest : public EndToEndTest {};

TEST_F(SoakTest, MixedLoadWithAFaultEveryTenthSurvivesAndLosesNoWrite) {
  const char* env = std::getenv("MODELATLAS_SOAK_SECONDS");
  const int seconds = env != nullptr ? std::max(10, std::atoi(env)) : 20;
  const std::string db = "--sqlite_path=" + dir_ + "/catalog.db";
  catalog_ = Start({CATALOG_SERVICE_BIN, db}, "catalog");
  const int catalog_port = catalog_.grpc_port;
  auto start_estimator = [&](const std::string& name, int port) {
    return Start({ESTIMATOR_SERVICE_BIN, "--catalog_address=" + catalog_.address(),
                  "--readiness_interval=200ms"},
                 name, port);
  };
  estimator_ = start_estimator("estimator", 0);
  RunningServer second = start_estimator("estimator-b", 0);
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", 30000));
  ASSERT_TRUE(testing::WaitUntilServing(Channel(second), "readiness", 30000));

  auto catalog = catalog::v1::CatalogService::NewStub(grpc::CreateCustomChannel(
      catalog_.address(), grpc::InsecureChannelCredentials(), BalancedChannelArguments()));
  auto estimators = estimator::v1::EstimatorService::NewStub(
      grpc::CreateCustomChannel(ChannelTarget(estimator_.address() + "," + second.address()),
                                grpc::InsecureChannelCredentials(), BalancedChannelArguments()));
  Tally tally;
  std::atomic<bool> stop{false};
  auto timed = [&](const std::string& op, auto call) {
    const auto begin = std::chrono::steady_clock::now();
    const grpc::Status status = call();
    tally.Record(
        op,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count(),
        status);
    return status;
  };
  std::vector<std::thread> workers;
  for (int w = 0; w < 3; ++w) {
    workers.emplace_back([&, w] {
      for (int n = 0; !stop; ++n) {
        grpc::ClientContext context;
        context.set_deadline(testing::DeadlineFromNow(2000));
        switch (n % 4) {
          case 0: {
            catalog::v1::CreateModelRequest request;
            request.set_model_id(absl::StrCat("soak-w", w, "-", n));
            request.mutable_model()->set_display_name(request.model_id());
            request.mutable_model()->set_parameters(n);
            request.mutable_model()->mutable_provenance()->set_source("soak");
            common::v1::Model created;
            if (timed("CreateModel", [&] {
                  return catalog->CreateModel(&context, request, &created);
                }).ok()) {
              std::lock_guard<std::mutex> lock(tally.mutex);
              tally.acknowledged_ids.push_back(request.model_id());
            }
            break;
          }
          case 1: {
            catalog::v1::ListModelsRequest request;
            request.set_filter("parameters > 1e9");
            catalog::v1::ListModelsResponse response;
            timed("ListModels", [&] { return catalog->ListModels(&context, request, &response); });
            break;
          }
          default: {
            estimator::v1::EstimateInferenceMemoryRequest request;
            request.set_model(n % 8 == 2 ? "Llama 3.1 8B" : "Mistral 7B");
            request.set_context_length_tokens(4096);
            estimator::v1::EstimateInferenceMemoryResponse response;
            timed("EstimateInferenceMemory", [&] {
              return estimators->EstimateInferenceMemory(&context, request, &response);
            });
          }
        }
      }
    });
  }

  // Warm up, measure memory, then inject a fault every tenth of the run.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double catalog_rss_start = ResidentMiB(catalog_.process->pid());
  const double estimator_rss_start = ResidentMiB(estimator_.process->pid());
  const auto period = std::chrono::milliseconds(seconds * 100);
  for (int fault = 0; fault < 10; ++fault) {
    std::this_thread::sleep_for(period);
    ASSERT_TRUE(catalog_.process->running()) << "catalog-service died on its own";
    ASSERT_TRUE(estimator_.process->running()) << "estimator-service died on its own";
    if (fault % 2 == 0) {
      catalog_.process->Stop(SIGKILL, 5000);
      catalog_ = Start({CATALOG_SERVICE_BIN, db}, "catalog", catalog_port);
    } else {
      const int port = second.grpc_port;
      second.process->Stop(SIGKILL, 5000);
      second = start_estimator("estimator-b", port);
    }
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  stop = true;
  for (auto& worker : workers) worker.join();
  const double catalog_rss_end = ResidentMiB(catalog_.process->pid());
  const double estimator_rss_end = ResidentMiB(estimator_.process->pid());
  EXPECT_TRUE(estimator_.process->running()) << "estimator-service died on its own";

  // No acknowledged write lost across the catalog's five kills.
  ASSERT_TRUE(testing::WaitUntilServing(Channel(catalog_), "readiness", 30000));
  int64_t verified = 0;
  for (const std::string& id : tally.acknowledged_ids) {
    grpc::ClientContext context;
    catalog::v1::GetModelRequest request;
    request.set_name("models/" + id);
    common::v1::Model model;
    ASSERT_TRUE(catalog->GetModel(&context, request, &model).ok()) << "lost write " << id;
    ++verified;
  }

  std::printf("soak: %d s, 10 faults (5 catalog kills, 5 estimator kills), %lld writes verified\n",
              seconds, static_cast<long long>(verified));
  for (auto& [op, samples] : tally.latency_ms) {
    std::sort(samples.begin(), samples.end());
    std::printf("  %-24s %7zu calls, p50 %.2f ms, p99 %.2f ms\n", op.c_str(), samples.size(),
                samples[samples.size() / 2], samples[samples.size() * 99 / 100]);
  }
  for (const auto& [key, count] : tally.codes) {
    std::printf("  %-40s %lld\n", key.c_str(), static_cast<long long>(count));
  }
  std::printf(
      "  resident memory: estimator %.1f -> %.1f MiB; catalog %.1f MiB before its first "
      "kill, %.1f MiB at the end (restarted)\n",
      estimator_rss_start, estimator_rss_end, catalog_rss_start, catalog_rss_end);
  EXPECT_GT(verified, 0);
  // Estimates read the snapshot: they keep succeeding while the catalog is down.
  EXPECT_GT(tally.codes["EstimateInferenceMemory OK"], 0);
}

}  // namespace
}  // namespace modelatlas
