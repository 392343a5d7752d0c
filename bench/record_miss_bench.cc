// GetModel's domain call (Catalog::GetReply) at random over a large stored
// catalog, without gRPC: the record cache's hits and misses in their steady
// state, so the CPU time per call shows what a miss costs (issue 22 point 4:
// a million records, the default 64 MiB record cache holding a fifth of
// them). Also SqliteStore::GetShared alone (the point read a miss makes).
// CPU time per call in one thread is less moved by other processes than a
// server's QPS; run it under `valgrind --tool=callgrind` for instructions.
//
//   cp /tmp/s15/1m.db /tmp/x.db
//   MODELATLAS_BENCH_DB=/tmp/x.db MODELATLAS_BENCH_MODELS=1000000 build/bench/record_miss_bench
//   MODELATLAS_BENCH_MMAP_BYTES=N ...     the store's --sqlite_mmap_bytes
//   MODELATLAS_BENCH_CACHE_BYTES=N ...    the record cache (default 64 MiB)
//
// One benchmark per process (--benchmark_filter=StoreRead or GetReply): each
// opens the file, and a SQLite file has one owner (the store's lock).
// The file must hold generated-model-0 .. N-1 (scripts/bench-million.sh or
// build-dataset); it is opened read-write (the store migrates and locks it):
// give it a copy.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "catalog-service/catalog.h"
#include "catalog-service/store/cached_store.h"
#include "catalog-service/store/sqlite_store.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas {
namespace {

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  return value == nullptr ? fallback : std::strtoll(value, nullptr, 10);
}

int Models() { return static_cast<int>(EnvInt("MODELATLAS_BENCH_MODELS", 1000000)); }

std::unique_ptr<catalog::SqliteStore> OpenStore() {
  const char* path = std::getenv("MODELATLAS_BENCH_DB");
  if (path == nullptr) {
    std::fprintf(stderr, "set MODELATLAS_BENCH_DB to a copy of a generated catalog\n");
    std::abort();
  }
  auto store = catalog::SqliteStore::Open(path, 0, EnvInt("MODELATLAS_BENCH_MMAP_BYTES", 0));
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    std::abort();
  }
  return *std::move(store);
}

// Ids drawn at random per call (a list drawn once and cycled would be a
// replay: the cache's admission keeps the keys a cycle brings back). The
// draw and its formatting cost every variant the same few tens of ns.
class RandomNames {
 public:
  explicit RandomNames(absl::string_view prefix) : name_(prefix), prefix_size_(prefix.size()) {}
  const std::string& Next() {
    name_.resize(prefix_size_);
    absl::StrAppend(&name_, pick_(rng_));
    return name_;
  }

 private:
  std::string name_;
  size_t prefix_size_;
  std::mt19937_64 rng_{std::random_device{}()};
  std::uniform_int_distribution<int> pick_{0, Models() - 1};
};

void BM_StoreRead(benchmark::State& state) {
  static catalog::SqliteStore* store = OpenStore().release();
  RandomNames ids("generated-model-");
  for (auto _ : state) {
    absl::StatusOr<catalog::SharedRecord> record =
        store->GetShared(catalog::RecordKind::kModel, ids.Next());
    if (!record.ok()) return state.SkipWithError(record.status().ToString().c_str());
    benchmark::DoNotOptimize(record);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StoreRead)->MinTime(5);

// The catalog's GetReply over the record cache at its default size; the
// first run fills the cache (reads at random until it refuses), later runs
// are its steady state. Counters: the hit rate over the run.
void BM_GetReply(benchmark::State& state) {
  static catalog::CachedStore* cached = nullptr;
  static catalog::Catalog* catalog = [] {
    auto store = std::make_unique<catalog::CachedStore>(
        OpenStore(),
        static_cast<size_t>(EnvInt("MODELATLAS_BENCH_CACHE_BYTES", int64_t{64} << 20)));
    cached = store.get();
    return new catalog::Catalog(std::move(store));
  }();
  RandomNames names("models/generated-model-");
  const catalog::CachedStore::Stats before = cached->stats();
  for (auto _ : state) {
    auto reply = catalog->GetReply<common::v1::Model>(names.Next());
    if (!reply.ok()) return state.SkipWithError(reply.status().ToString().c_str());
    benchmark::DoNotOptimize(reply);
  }
  const catalog::CachedStore::Stats after = cached->stats();
  const double hits = static_cast<double>(after.hits - before.hits);
  const double misses = static_cast<double>(after.misses - before.misses);
  state.counters["hit_rate"] = hits / std::max(1.0, hits + misses);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GetReply)->MinTime(10)->Repetitions(4);

}  // namespace
}  // namespace modelatlas

BENCHMARK_MAIN();
