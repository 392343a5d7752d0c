// The streamed fit matrix over gRPC: a catalog (in-memory SQLite, the shipped
// dataset plus generated open-weight models) and an estimator with its
// snapshot, on loopback; ListRunnableModels for every hardware record x 4
// weight formats, then the same matrix in one StreamFitMatrix call. Reports
// model x hardware x format estimates per second. scripts/bench-compare.sh
// compares the first (ListRunnableModels), which older commits also have.
//
//   build/bench/estimator_grpc_bench          (3,000 generated models)
//   MODELATLAS_BENCH_MODELS=200 build/bench/estimator_grpc_bench   (CI smoke)
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include <cstdlib>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "catalog-service/dataset.h"
#include "catalog-service/service.h"
#include "catalog-service/store/sqlite_store.h"
#include "estimator-service/service.h"

namespace modelatlas {
namespace {

int GeneratedModels() {
  const char* env = std::getenv("MODELATLAS_BENCH_MODELS");
  return env != nullptr ? std::atoi(env) : 3000;
}

struct Servers {
  std::unique_ptr<catalog::Catalog> catalog;
  std::unique_ptr<catalog::CatalogServiceImpl> catalog_service;
  std::unique_ptr<grpc::Server> catalog_server;
  std::unique_ptr<estimator::CatalogClient> client;
  std::unique_ptr<estimator::CatalogSnapshot> snapshot;
  std::unique_ptr<estimator::EstimatorServiceImpl> estimator_service;
  std::unique_ptr<grpc::Server> estimator_server;
  std::unique_ptr<estimator::v1::EstimatorService::Stub> stub;
  std::vector<std::string> hardware;
  size_t models = 0;
};

Servers*& Instance() {
  static Servers* servers = nullptr;
  return servers;
}

Servers* Start() {
  Servers*& servers = Instance();
  if (servers != nullptr) return servers;
  servers = [] {
    auto* s = new Servers;
    s->catalog = std::make_unique<catalog::Catalog>(*catalog::SqliteStore::Open(":memory:"));
    catalog::v1::Dataset dataset = *catalog::ShippedDataset();
    // Generated open-weight models, Llama-shaped, 0.5B to 70B.
    for (int i = 0; i < GeneratedModels(); ++i) {
      auto* m = dataset.add_models();
      m->set_name(absl::StrFormat("models/gen-%05d", i));
      m->set_display_name(absl::StrFormat("Generated %05d", i));
      m->set_open_model_weights(true);
      m->mutable_provenance()->set_source("generated");
      auto* a = m->mutable_architecture();
      const int layers = 16 + (i % 5) * 16;
      a->set_num_layers(layers);
      a->set_hidden_size(1024 * (1 + i % 8));
      a->set_num_attention_heads(8 * (1 + i % 8));
      a->set_num_key_value_heads(8);
      a->set_intermediate_size(a->hidden_size() * 3);
      a->set_gated_mlp(true);
      a->set_vocab_size(32000);
      a->set_max_context_length(8192);
    }
    s->models = static_cast<size_t>(dataset.models_size());
    if (!s->catalog->CreateAll(dataset).ok()) std::abort();
    s->catalog_service = std::make_unique<catalog::CatalogServiceImpl>(s->catalog.get());
    int port = 0;
    grpc::ServerBuilder cb;
    cb.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    cb.RegisterService(s->catalog_service.get());
    s->catalog_server = cb.BuildAndStart();
    const std::string address = absl::StrFormat("127.0.0.1:%d", port);
    s->client = std::make_unique<estimator::CatalogClient>(address, nullptr, absl::Seconds(30));
    s->snapshot = std::make_unique<estimator::CatalogSnapshot>(s->client->channel(), address);
    s->snapshot->Start();
    if (!s->snapshot->WaitUntilLoaded(absl::Seconds(60))) std::abort();
    s->estimator_service =
        std::make_unique<estimator::EstimatorServiceImpl>(s->client.get(), s->snapshot.get());
    int estimator_port = 0;
    grpc::ServerBuilder eb;
    eb.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &estimator_port);
    eb.RegisterService(s->estimator_service.get());
    s->estimator_server = eb.BuildAndStart();
    s->stub = estimator::v1::EstimatorService::NewStub(grpc::CreateChannel(
        absl::StrFormat("127.0.0.1:%d", estimator_port), grpc::InsecureChannelCredentials()));
    for (const auto& hw : s->snapshot->AllHardware()) s->hardware.push_back(hw.name());
    return s;
  }();
  return servers;
}

// Stops everything in order before the process exits, so no gRPC thread
// outlives the objects it uses.
void Stop() {
  Servers*& s = Instance();
  if (s == nullptr) return;
  s->snapshot->Stop();
  s->estimator_server->Shutdown(std::chrono::system_clock::now());
  s->catalog_server->Shutdown(std::chrono::system_clock::now());
  delete s;
  s = nullptr;
}

void BM_StreamedFitMatrix(benchmark::State& state) {
  Servers* s = Start();
  const estimator::v1::NumberFormat formats[] = {
      estimator::v1::NUMBER_FORMAT_BF16, estimator::v1::NUMBER_FORMAT_INT8,
      estimator::v1::NUMBER_FORMAT_GPTQ_INT4, estimator::v1::NUMBER_FORMAT_GGUF_Q4_K_M};
  int64_t rows = 0;
  for (auto _ : state) {
    for (const std::string& hardware : s->hardware) {
      for (auto format : formats) {
        estimator::v1::ListRunnableModelsRequest request;
        request.set_hardware(hardware);
        request.mutable_workload()->set_weight_format(format);
        request.mutable_workload()->set_context_length_tokens(4096);
        grpc::ClientContext context;
        auto reader = s->stub->ListRunnableModels(&context, request);
        estimator::v1::ListRunnableModelsResponse row;
        while (reader->Read(&row)) rows += row.models_size();
        if (!reader->Finish().ok()) return state.SkipWithError("ListRunnableModels failed");
      }
    }
  }
  // Every model is estimated on every hardware record in every format.
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(s->models) *
                          static_cast<int64_t>(s->hardware.size()) * 4);
  state.counters["runnable_rows"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_StreamedFitMatrix)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same matrix in one call: StreamFitMatrix, every model x every hardware
// record x the same four formats, in blocks of 8,192 cells as packed
// columns (issue 21 point 7, issue 22 point 2). Its cells are PlanInference's
// fit (any card count up to 64, tensor and pipeline parallel), so a cell
// costs more than a ListRunnableModels row (powers of two, one card count).
void BM_StreamFitMatrix(benchmark::State& state) {
  Servers* s = Start();
  int64_t cells = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    estimator::v1::StreamFitMatrixRequest request;
    request.mutable_workload()->set_context_length_tokens(4096);
    grpc::ClientContext context;
    auto reader = s->stub->StreamFitMatrix(&context, request);
    estimator::v1::StreamFitMatrixResponse message;
    while (reader->Read(&message)) {
      cells += message.cards_size();
      bytes += static_cast<int64_t>(message.ByteSizeLong());
    }
    if (!reader->Finish().ok()) return state.SkipWithError("StreamFitMatrix failed");
  }
  state.SetItemsProcessed(cells);
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_StreamFitMatrix)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace modelatlas

int main(int argc, char** argv) {
  // As the servers run (ServerRunner::PrepareProcess): Debian's abseil
  // checks every lock for deadlock cycles unless told not to.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  modelatlas::Stop();
  return 0;
}
