#include "tests/e2e/soak.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/server/channels.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"
#include "tests/testing/grpc_testing.h"
#include "tests/testing/postgres.h"

namespace modelatlas {
namespace {

constexpr int kWorkers = 3;
constexpr int kFixedRecordsPerWorker = 32;

double ResidentMiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024;  // kB -> MiB
  }
  return 0;
}

const char* FaultName(Fault fault) {
  switch (fault) {
    case Fault::kKillCatalog:
      return "catalog kills";
    case Fault::kRestartPostgres:
      return "PostgreSQL restarts";
    case Fault::kKillEstimator:
      return "estimator kills";
  }
  return "?";
}

// What the writers were told about each record: the last acknowledged value
// and the values of later calls that failed (they may or may not have landed).
struct RecordFate {
  double acknowledged = -1;  // -1: created before the run with parameters 0
  std::vector<double> unknown;
};

struct Tally {
  std::mutex mutex;
  std::map<std::string, std::vector<double>> latency_ms;  // by operation
  std::map<std::string, int64_t> codes;                   // "operation CODE" -> calls
  std::map<std::string, RecordFate> records;              // by id

  void Record(const std::string& op, double ms, const grpc::Status& status) {
    std::lock_guard<std::mutex> lock(mutex);
    latency_ms[op].push_back(ms);
    ++codes[absl::StrCat(
        op, " ", absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())))];
  }
  void Wrote(const std::string& id, double value, bool acknowledged) {
    std::lock_guard<std::mutex> lock(mutex);
    RecordFate& fate = records[id];
    if (acknowledged) {
      fate = RecordFate{value, {}};
    } else {
      fate.unknown.push_back(value);
    }
  }
};

std::string FixedId(int worker, int k) { return absl::StrCat("soak-fixed-w", worker, "-", k); }

}  // namespace

void SoakTest::RunSoak(const SoakOptions& options) {
  const char* env = std::getenv("MODELATLAS_SOAK_SECONDS");
  const int seconds = env != nullptr ? std::max(10, std::atoi(env)) : 20;
  std::vector<std::string> catalog_args = {CATALOG_SERVICE_BIN};
  catalog_args.insert(catalog_args.end(), options.store_args.begin(), options.store_args.end());
  catalog_ = Start(catalog_args, "catalog");
  ASSERT_TRUE(testing::WaitUntilServing(Channel(catalog_), "readiness", 30000));
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
  if (options.writes == Writes::kUpdateFixedSet) {
    for (int w = 0; w < kWorkers; ++w) {
      for (int k = 0; k < kFixedRecordsPerWorker; ++k) {
        catalog::v1::CreateModelRequest request;
        request.set_model_id(FixedId(w, k));
        request.mutable_model()->set_display_name(request.model_id());
        request.mutable_model()->set_parameters(0);
        request.mutable_model()->mutable_provenance()->set_source("soak");
        grpc::ClientContext context;
        common::v1::Model created;
        ASSERT_TRUE(catalog->CreateModel(&context, request, &created).ok());
        tally.records[request.model_id()] = RecordFate{0, {}};
      }
    }
  }

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
  auto write = [&](int w, int n, grpc::ClientContext& context) {
    common::v1::Model written;
    if (options.writes == Writes::kCreate) {
      catalog::v1::CreateModelRequest request;
      request.set_model_id(absl::StrCat("soak-w", w, "-", n));
      request.mutable_model()->set_display_name(request.model_id());
      request.mutable_model()->set_parameters(n);
      request.mutable_model()->mutable_provenance()->set_source("soak");
      const bool ok = timed("CreateModel", [&] {
                        return catalog->CreateModel(&context, request, &written);
                      }).ok();
      tally.Wrote(request.model_id(), n, ok);
      return;
    }
    catalog::v1::UpdateModelRequest request;
    const std::string id = FixedId(w, (n / 4) % kFixedRecordsPerWorker);
    request.mutable_model()->set_name("models/" + id);
    request.mutable_model()->set_parameters(n);
    request.mutable_update_mask()->add_paths("parameters");
    const bool ok = timed("UpdateModel", [&] {
                      return catalog->UpdateModel(&context, request, &written);
                    }).ok();
    tally.Wrote(id, n, ok);
  };
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      for (int n = 0; !stop; ++n) {
        grpc::ClientContext context;
        context.set_deadline(testing::DeadlineFromNow(2000));
        switch (n % 4) {
          case 0:
            write(w, n, context);
            break;
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
            request.mutable_workload()->set_context_length_tokens(4096);
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
  std::map<Fault, int> injected;
  for (int i = 0; i < 10 && !HasFatalFailure(); ++i) {
    std::this_thread::sleep_for(period);
    ASSERT_TRUE(catalog_.process->running()) << "catalog-service died on its own";
    ASSERT_TRUE(estimator_.process->running()) << "estimator-service died on its own";
    const Fault fault = options.faults[i % options.faults.size()];
    ++injected[fault];
    switch (fault) {
      case Fault::kKillCatalog:
        catalog_.process->Stop(SIGKILL, 5000);
        catalog_ = Start(catalog_args, "catalog", catalog_port);
        break;
      case Fault::kRestartPostgres:
        ASSERT_EQ(testing::StopPostgres(), "");
        std::this_thread::sleep_for(std::chrono::seconds(1));
        ASSERT_EQ(testing::StartPostgres(), "");
        break;
      case Fault::kKillEstimator: {
        const int port = second.grpc_port;
        second.process->Stop(SIGKILL, 5000);
        second = start_estimator("estimator-b", port);
        break;
      }
    }
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  stop = true;
  for (auto& worker : workers) worker.join();
  const double catalog_rss_end = ResidentMiB(catalog_.process->pid());
  const double estimator_rss_end = ResidentMiB(estimator_.process->pid());
  EXPECT_TRUE(catalog_.process->running()) << "catalog-service died on its own";
  EXPECT_TRUE(estimator_.process->running()) << "estimator-service died on its own";

  // No acknowledged write lost: each record holds its last acknowledged
  // value, or the value of a later call whose fate is unknown.
  ASSERT_TRUE(testing::WaitUntilServing(Channel(catalog_), "readiness", 30000));
  int64_t verified = 0;
  for (const auto& [id, fate] : tally.records) {
    if (fate.acknowledged < 0) continue;  // never acknowledged (create mode)
    grpc::ClientContext context;
    catalog::v1::GetModelRequest request;
    request.set_name("models/" + id);
    common::v1::Model model;
    const grpc::Status status = catalog->GetModel(&context, request, &model);
    ASSERT_TRUE(status.ok()) << "lost write " << id << ": " << status.error_message();
    const bool expected = model.parameters() == fate.acknowledged ||
                          std::find(fate.unknown.begin(), fate.unknown.end(), model.parameters()) !=
                              fate.unknown.end();
    EXPECT_TRUE(expected) << id << " holds " << model.parameters() << ", last acknowledged "
                          << fate.acknowledged;
    ++verified;
  }

  std::string faults;
  for (const auto& [fault, count] : injected) {
    absl::StrAppend(&faults, faults.empty() ? "" : ", ", count, " ", FaultName(fault));
  }
  std::printf(
      "soak: %d s, %s; %lld records verified (%s)\n", seconds, faults.c_str(),
      static_cast<long long>(verified),
      options.writes == Writes::kCreate ? "each created once" : "96 records updated over and over");
  for (auto& [op, samples] : tally.latency_ms) {
    std::sort(samples.begin(), samples.end());
    std::printf("  %-24s %7zu calls, p50 %.2f ms, p99 %.2f ms\n", op.c_str(), samples.size(),
                samples[samples.size() / 2], samples[samples.size() * 99 / 100]);
  }
  for (const auto& [key, count] : tally.codes) {
    std::printf("  %-40s %lld\n", key.c_str(), static_cast<long long>(count));
  }
  std::printf("  resident memory: estimator %.1f -> %.1f MiB; catalog %.1f -> %.1f MiB%s\n",
              estimator_rss_start, estimator_rss_end, catalog_rss_start, catalog_rss_end,
              injected.count(Fault::kKillCatalog) ? " (restarted)" : "");
  RecordProperty("records_verified", std::to_string(verified));
  EXPECT_GT(verified, 0);
  // Estimates read the snapshot: they keep succeeding while the catalog is down.
  EXPECT_GT(tally.codes["EstimateInferenceMemory OK"], 0);
}

}  // namespace modelatlas
