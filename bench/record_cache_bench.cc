// The record cache's hit (CachedStore::GetShared, GetModel's store call) on
// one record again and again against a record drawn at random from 100,000
// cached ones, and the same with the payload read (what the reply's send
// copies): the difference is what a random record's memory costs a call,
// apart from gRPC and the kernel (docs/BENCHMARKS.md, session 14).
//
//   build/bench/record_cache_bench                               100,000 records
//   MODELATLAS_BENCH_MODELS=2000 build/bench/record_cache_bench  (smoke)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench/generated_models.h"
#include "catalog-service/store/cached_store.h"
#include "catalog-service/store/sqlite_store.h"

namespace modelatlas {
namespace {

struct Cache {
  std::unique_ptr<catalog::CachedStore> store;
  std::vector<std::string> ids;
  // Indexes into `ids` in a random order, drawn once (no RNG in the loop).
  std::vector<uint32_t> random_order;
};

// 100,000 generated records in SQLite behind a 64 MiB cache (the default),
// every one read once in a random order so that all are cached, their
// blocks allocated in that order (as reads at random admit them).
Cache& TheCache() {
  static Cache* cache = [] {
    auto* out = new Cache;
    auto sqlite = catalog::SqliteStore::Open(":memory:");
    if (!sqlite.ok()) std::abort();
    out->store = std::make_unique<catalog::CachedStore>(*std::move(sqlite), size_t{64} << 20);
    std::mt19937_64 rng(42);
    std::vector<catalog::RecordWrite> writes;
    for (int i = 0; i < bench::ModelCount(); ++i) {
      const common::v1::Model model = bench::Generated(i, rng);
      out->ids.push_back(bench::ModelId(i));
      writes.push_back({catalog::RecordKind::kModel,
                        out->ids.back(),
                        model.display_name(),
                        {},
                        model.SerializeAsString()});
      if (writes.size() == 1000) {
        if (!out->store->Insert(writes).ok()) std::abort();
        writes.clear();
      }
    }
    if (!writes.empty() && !out->store->Insert(writes).ok()) std::abort();
    out->random_order.resize(out->ids.size());
    std::iota(out->random_order.begin(), out->random_order.end(), 0);
    std::shuffle(out->random_order.begin(), out->random_order.end(), rng);
    for (const uint32_t i : out->random_order) {
      if (!out->store->GetShared(catalog::RecordKind::kModel, out->ids[i]).ok()) std::abort();
    }
    std::shuffle(out->random_order.begin(), out->random_order.end(), rng);
    if (out->store->stats().records != static_cast<int64_t>(out->ids.size())) std::abort();
    return out;
  }();
  return *cache;
}

enum class Pick { kHot, kRandom };

// `read_payload`: also sum the payload's bytes, as the send's copy reads them.
void BM_CacheHit(benchmark::State& state, Pick pick, bool read_payload) {
  Cache& cache = TheCache();
  const catalog::CachedStore::Stats before = cache.store->stats();
  size_t next = 0;
  for (auto _ : state) {
    const std::string& id =
        cache.ids[pick == Pick::kHot ? 42 : cache.random_order[next++ % cache.random_order.size()]];
    absl::StatusOr<catalog::SharedRecord> record =
        cache.store->GetShared(catalog::RecordKind::kModel, id);
    if (!record.ok()) return state.SkipWithError(record.status().ToString().c_str());
    if (read_payload) {
      unsigned sum = 0;
      for (const char c : record->payload()) sum += static_cast<unsigned char>(c);
      benchmark::DoNotOptimize(sum);
    }
    benchmark::DoNotOptimize(record);
  }
  const catalog::CachedStore::Stats after = cache.store->stats();
  if (after.misses != before.misses) state.SkipWithError("a read missed the cache");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_CacheHit, hot, Pick::kHot, false);
BENCHMARK_CAPTURE(BM_CacheHit, random, Pick::kRandom, false);
BENCHMARK_CAPTURE(BM_CacheHit, hot_payload_read, Pick::kHot, true);
BENCHMARK_CAPTURE(BM_CacheHit, random_payload_read, Pick::kRandom, true);

}  // namespace
}  // namespace modelatlas

BENCHMARK_MAIN();
