// Catalog read paths on a catalog of generated models: Get, BatchGet and a
// filtered List, on SQLite and (when PGHOST is set) PostgreSQL.
//
//   build/bench/catalog_bench                       100,000 models
//   MODELATLAS_BENCH_MODELS=2000 build/bench/catalog_bench   (CI smoke)
//
// The catalog is built once per backend and kept for all benchmarks.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/generated_models.h"
#include "catalog-service/catalog.h"
#include "catalog-service/store/postgres_store.h"
#include "catalog-service/store/sqlite_store.h"

namespace modelatlas::catalog {
namespace {

using bench::Generated;
using bench::ModelCount;
using bench::ModelId;

std::string SqlitePath() { return absl::StrCat("/tmp/modelatlas_bench_", getpid(), ".db"); }

void RemoveSqlite() {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((SqlitePath() + suffix).c_str());
}

std::unique_ptr<CatalogStore> OpenStore(const std::string& backend) {
  if (backend == "postgres") {
    if (std::getenv("PGHOST") == nullptr) return nullptr;
    auto store = PostgresStore::Open("", 4);
    if (!store.ok()) {
      std::fprintf(stderr, "postgres: %s\n", store.status().ToString().c_str());
      return nullptr;
    }
    return std::unique_ptr<CatalogStore>(*std::move(store));
  }
  RemoveSqlite();
  auto store = SqliteStore::Open(SqlitePath());
  if (!store.ok()) return nullptr;
  return std::unique_ptr<CatalogStore>(*std::move(store));
}

// One populated catalog per backend, built on first use.
Catalog* CatalogFor(const std::string& backend) {
  static auto* catalogs = new std::map<std::string, std::unique_ptr<Catalog>>();
  auto& slot = (*catalogs)[backend];
  if (slot != nullptr) return slot.get();
  std::unique_ptr<CatalogStore> store = OpenStore(backend);
  if (store == nullptr) return nullptr;
  slot = std::make_unique<Catalog>(std::move(store));
  if (slot->Info()->model_count() < ModelCount()) {
    std::mt19937_64 rng(42);
    const int batch = 5000;
    for (int start = 0; start < ModelCount(); start += batch) {
      v1::Dataset dataset;
      for (int i = start; i < std::min(ModelCount(), start + batch); ++i) {
        *dataset.add_models() = Generated(i, rng);
      }
      auto written = slot->CreateAll(dataset);
      if (!written.ok()) {
        std::fprintf(stderr, "%s: %s\n", backend.c_str(), written.status().ToString().c_str());
        return nullptr;
      }
    }
  }
  return slot.get();
}

void BM_Get(benchmark::State& state, const std::string& backend) {
  Catalog* catalog = CatalogFor(backend);
  if (catalog == nullptr) return state.SkipWithError("backend not available");
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pick(0, ModelCount() - 1);
  for (auto _ : state) {
    auto model = catalog->Get<Model>("models/" + ModelId(pick(rng)));
    if (!model.ok()) return state.SkipWithError(model.status().ToString().c_str());
    benchmark::DoNotOptimize(model);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_BatchGet100(benchmark::State& state, const std::string& backend) {
  Catalog* catalog = CatalogFor(backend);
  if (catalog == nullptr) return state.SkipWithError("backend not available");
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pick(0, ModelCount() - 1);
  for (auto _ : state) {
    std::vector<std::string> names;
    for (int i = 0; i < 100; ++i) names.push_back("models/" + ModelId(pick(rng)));
    auto page = catalog->BatchGet<Model>(names);
    if (!page.ok()) return state.SkipWithError(page.status().ToString().c_str());
    benchmark::DoNotOptimize(page);
  }
  state.SetItemsProcessed(state.iterations() * 100);
}

// The first page (50 records) of a selective filter: how far the scan must
// go before it has a page is what this measures.
void BM_ListFiltered(benchmark::State& state, const std::string& backend) {
  Catalog* catalog = CatalogFor(backend);
  if (catalog == nullptr) return state.SkipWithError("backend not available");
  const ListQuery query{50, "", "parameters > 1e11 AND domains:\"Vision\"", ""};
  for (auto _ : state) {
    auto page = catalog->List<Model>(query);
    if (!page.ok()) return state.SkipWithError(page.status().ToString().c_str());
    benchmark::DoNotOptimize(page);
  }
}

void BM_ListPage(benchmark::State& state, const std::string& backend) {
  Catalog* catalog = CatalogFor(backend);
  if (catalog == nullptr) return state.SkipWithError("backend not available");
  for (auto _ : state) {
    auto page = catalog->List<Model>({50, "", "", ""});
    if (!page.ok()) return state.SkipWithError(page.status().ToString().c_str());
    benchmark::DoNotOptimize(page);
  }
  state.SetItemsProcessed(state.iterations() * 50);
}

}  // namespace
}  // namespace modelatlas::catalog

int main(int argc, char** argv) {
  using namespace modelatlas::catalog;
  for (const std::string backend : {"sqlite", "postgres"}) {
    benchmark::RegisterBenchmark(("Get/" + backend).c_str(), BM_Get, backend)->UseRealTime();
    benchmark::RegisterBenchmark(("BatchGet100/" + backend).c_str(), BM_BatchGet100, backend)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("ListPage50/" + backend).c_str(), BM_ListPage, backend)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("ListFiltered/" + backend).c_str(), BM_ListFiltered, backend)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  RemoveSqlite();
  return 0;
}
