// The hot paths under the RPCs, in process: filter parsing and evaluation
// (ListModels, whole-catalog estimator answers), the estimator snapshot's
// lookups (every catalogued estimate), the catalog's record cache against a
// SQLite read (GetModel), and protobuf serialization of the messages the
// services exchange most.
//
//   build/bench/hot_paths_bench                               100,000 records
//   MODELATLAS_BENCH_MODELS=2000 build/bench/hot_paths_bench  (CI smoke)
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/generated_models.h"
#include "catalog-service/dataset.h"
#include "catalog-service/store/cached_store.h"
#include "catalog-service/store/sqlite_store.h"
#include "common/query/filter.h"
#include "common/text/decimal.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/catalog/record_source.h"
#include "estimator-service/catalog/record_table.h"
#include "estimator-service/reply_arena.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas {
namespace {

using common::v1::Model;

using bench::ModelCount;
using bench::ModelId;

// The generated records, made once.
const std::vector<Model>& Models() {
  static const auto* models = [] {
    auto* out = new std::vector<Model>();
    std::mt19937_64 rng(42);
    for (int i = 0; i < ModelCount(); ++i) out->push_back(bench::Generated(i, rng));
    return out;
  }();
  return *models;
}

// The shipped record of Llama 3.1 8B: a full record with its architecture.
Model Llama() {
  absl::StatusOr<catalog::v1::Dataset> dataset = catalog::ShippedDataset();
  if (!dataset.ok()) std::abort();
  for (const Model& model : dataset->models()) {
    if (model.display_name() == "Llama 3.1 8B") return model;
  }
  std::abort();
}

constexpr const char* kFilter =
    "parameters > 1e11 AND domains:\"Vision\" AND architecture.num_layers >= 32";

void BM_FilterParse(benchmark::State& state) {
  for (auto _ : state) {
    auto filter = query::Filter::Parse(kFilter, Model::descriptor());
    if (!filter.ok()) return state.SkipWithError(filter.status().ToString().c_str());
    benchmark::DoNotOptimize(filter);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FilterParse);

// One filter over every record (a filtered List scans until its page is
// full; the estimator's whole-catalog answers scan all): records/s.
void BM_FilterMatches(benchmark::State& state) {
  const auto filter = *query::Filter::Parse(kFilter, Model::descriptor());
  const std::vector<Model>& models = Models();
  int64_t matched = 0;
  for (auto _ : state) {
    for (const Model& model : models) matched += filter.Matches(model) ? 1 : 0;
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(models.size()));
  benchmark::DoNotOptimize(matched);
}
BENCHMARK(BM_FilterMatches)->Unit(benchmark::kMillisecond);

const estimator::RecordTable<Model>& Snapshot() {
  static const auto* table = [] {
    auto* out = new estimator::RecordTable<Model>();
    for (const Model& model : Models()) out->Put(model.name(), model);
    return out;
  }();
  return *table;
}

// The snapshot's lookups behind every catalogued estimate: by resource name,
// and by a display name spelled differently (case, punctuation).
void BM_SnapshotFind(benchmark::State& state, bool by_display_name) {
  const auto& table = Snapshot();
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pick(0, ModelCount() - 1);
  std::vector<std::string> names;
  for (int i = 0; i < 1024; ++i) {
    names.push_back(by_display_name ? absl::StrCat("generated-MODEL ", pick(rng))
                                    : "models/" + ModelId(pick(rng)));
  }
  size_t i = 0;
  for (auto _ : state) {
    const std::string& name = names[i++ & 1023];
    const Model* model = by_display_name ? table.Find(name) : table.FindByName(name);
    if (model == nullptr) return state.SkipWithError("not found");
    benchmark::DoNotOptimize(model);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_SnapshotFind, by_resource_name, false);
BENCHMARK_CAPTURE(BM_SnapshotFind, by_display_name_any_spelling, true);

// One record used in place, as the snapshot hands it to the memory answer
// (UseModel, its architecture check made once); nothing else.
class OneModel : public estimator::RecordSource {
 public:
  explicit OneModel(Model model) : model_(std::move(model)) {}
  void FindModel(const std::string& name, Done<Model> done) override {
    done(absl::NotFoundError(name));
  }
  void FindHardware(const std::vector<std::string>&,
                    Done<estimator::SharedRecords<common::v1::Hardware>> done) override {
    done(absl::NotFoundError("hardware"));
  }
  bool UseModel(const std::string&, const ModelUser& use) override {
    use(model_, 1, checked_);
    return true;
  }
  absl::Status ForEachModel(const ModelVisitor&) const override {
    return absl::UnavailableError("one model");
  }
  int64_t revision() const override { return 1; }

 private:
  Model model_;
  absl::Status checked_;
};

// The computed EstimateInferenceMemory from the parsed request to the
// serialized reply (bench-computed.sh's request: Llama 3.1 8B at 8,192
// tokens), the answer on the heap (moved out through StatusOr) or written
// into a message on the reply's pooled arena, as the service does.
// "wire": the service's path since branch s12-estimate, the answer's figures
// (a MemoryAnswer reused from call to call, as the service's pool hands it
// out) written as the reply's bytes by hand, no message.
enum class MemoryPath { kHeap, kArena, kWire };
void BM_MemoryAnswer(benchmark::State& state, MemoryPath path) {
  const catalog::v1::Dataset dataset = *catalog::ShippedDataset();
  Model llama;
  for (const Model& model : dataset.models()) {
    if (model.name() == "models/llama-3-1-8b") llama = model;
  }
  auto source = std::make_shared<OneModel>(llama);
  estimator::v1::EstimateInferenceMemoryRequest request;
  request.set_model("Llama 3.1 8B");
  request.mutable_workload()->set_context_length_tokens(8192);
  std::string reply(4096, '\0');
  size_t bytes = 0;
  estimator::MemoryAnswer figures;
  for (auto _ : state) {
    if (path == MemoryPath::kWire) {
      estimator::AnswerInferenceMemoryFigures(source, request, &figures, [&](const absl::Status&) {
        const estimator::MemoryAnswerBytes written(figures);
        bytes = written.size();
        written.Write(reinterpret_cast<uint8_t*>(reply.data()));
      });
    } else if (path == MemoryPath::kArena) {
      estimator::ReplyArena arena;
      auto* answer = arena.Create<estimator::v1::EstimateInferenceMemoryResponse>();
      estimator::AnswerInferenceMemoryInto(source, request, answer, [&](const absl::Status&) {
        bytes = answer->ByteSizeLong();
        answer->SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(reply.data()));
      });
    } else {
      estimator::AnswerInferenceMemory(
          source, request,
          [&](absl::StatusOr<estimator::v1::EstimateInferenceMemoryResponse> answer) {
            bytes = answer->ByteSizeLong();
            answer->SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(reply.data()));
          });
    }
    benchmark::DoNotOptimize(reply.data());
  }
  if (bytes < 500) state.SkipWithError("no answer");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_MemoryAnswer, heap, MemoryPath::kHeap);
BENCHMARK_CAPTURE(BM_MemoryAnswer, arena, MemoryPath::kArena);
BENCHMARK_CAPTURE(BM_MemoryAnswer, wire, MemoryPath::kWire);

// One record read from the SQLite store, and the same read answered by the
// record cache in front of it (GetModel's two paths).
struct Stores {
  catalog::CatalogStore* sqlite = nullptr;
  std::unique_ptr<catalog::CachedStore> cached;
};

Stores& TheStores() {
  static Stores* stores = [] {
    auto* out = new Stores;
    auto sqlite = catalog::SqliteStore::Open(":memory:");
    if (!sqlite.ok()) std::abort();
    out->sqlite = sqlite->get();
    out->cached = std::make_unique<catalog::CachedStore>(*std::move(sqlite), 32 << 20);
    const Model llama = Llama();
    std::vector<catalog::RecordWrite> writes;
    for (int i = 0; i < 1000; ++i) {
      writes.push_back({catalog::RecordKind::kModel,
                        absl::StrCat("llama-", i),
                        llama.display_name(),
                        {},
                        llama.SerializeAsString()});
    }
    if (!out->cached->Insert(writes).ok()) std::abort();
    return out;
  }();
  return *stores;
}

void BM_StoreGet(benchmark::State& state, bool cached) {
  Stores& stores = TheStores();
  catalog::CatalogStore* store = cached ? stores.cached.get() : stores.sqlite;
  int i = 0;
  for (auto _ : state) {
    auto record = store->Get(catalog::RecordKind::kModel, absl::StrCat("llama-", i++ % 1000));
    if (!record.ok()) return state.SkipWithError(record.status().ToString().c_str());
    benchmark::DoNotOptimize(record);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_StoreGet, sqlite, false);
BENCHMARK_CAPTURE(BM_StoreGet, record_cache_hit, true);

// Serialization: the stored and sent form of a full model record, and one
// message of the streamed fit matrix (256 rows).
void BM_ModelSerialize(benchmark::State& state) {
  const Model llama = Llama();
  std::string bytes;
  for (auto _ : state) {
    bytes.clear();
    llama.SerializeToString(&bytes);
    benchmark::DoNotOptimize(bytes);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_ModelSerialize);

void BM_ModelParse(benchmark::State& state) {
  const std::string bytes = Llama().SerializeAsString();
  Model model;
  for (auto _ : state) {
    if (!model.ParseFromString(bytes)) return state.SkipWithError("parse");
    benchmark::DoNotOptimize(model);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_ModelParse);

void BM_RunnableModelsMessageSerialize(benchmark::State& state) {
  estimator::v1::ListRunnableModelsResponse message;
  for (int i = 0; i < 256; ++i) {
    auto* row = message.add_models();
    row->set_model("models/" + ModelId(i));
    row->set_display_name(absl::StrCat("Generated Model ", i));
    row->set_parameters(7e9 + i);
    row->set_cards(1);
    row->set_required_bytes_per_card(16000000000 + i);
    row->set_headroom_bytes_per_card(1000000000 - i);
    row->set_decode_tokens_per_second(42.5);
    row->set_prefill_tokens_per_second(12000);
    row->set_catalog_revision(7);
  }
  std::string bytes;
  for (auto _ : state) {
    bytes.clear();
    message.SerializeToString(&bytes);
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(state.iterations() * 256);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_RunnableModelsMessageSerialize);

// The figures a plan over every accelerator writes (about 1,000 to 4
// significant digits and several hundred to 2 decimals per call; the
// largest share of its own CPU after the copies, docs/BENCHMARKS.md,
// session 19): tokens/s, seconds and USD spread log-uniformly over 1e-3 to
// 1e5 (%.4g), GiB over 0.01 to 2,000 (%.2f). Time per figure.
std::vector<double> FigureValues(double low, double high, bool log_uniform) {
  std::mt19937_64 random(19);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<double> values(4096);
  for (double& value : values) {
    const double u = unit(random);
    value = log_uniform ? low * std::pow(high / low, u) : low + (high - low) * u;
  }
  return values;
}

// `format(value, buffer)` over `values`, one figure per iteration.
template <typename Format>
void FormatFigures(benchmark::State& state, const std::vector<double>& values, Format format) {
  char buffer[kFastDecimalBytes];
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(format(values[i++ & 4095], buffer));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_SignificantDigits4(benchmark::State& state) {
  FormatFigures(state, FigureValues(1e-3, 1e5, true),
                [](double value, char* buffer) { return TrySignificantDigits(value, 4, buffer); });
}
BENCHMARK(BM_SignificantDigits4);

void BM_FixedDecimals2(benchmark::State& state) {
  FormatFigures(state, FigureValues(0.01, 2000, false),
                [](double value, char* buffer) { return TryFixedDecimals(value, 2, buffer); });
}
BENCHMARK(BM_FixedDecimals2);

}  // namespace
}  // namespace modelatlas

BENCHMARK_MAIN();
