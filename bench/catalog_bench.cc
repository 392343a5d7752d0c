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
#include "absl/strings/str_format.h"
#include "catalog-service/catalog.h"
#include "catalog-service/store/postgres_store.h"
#include "catalog-service/store/sqlite_store.h"

namespace modelatlas::catalog {
namespace {

int ModelCount() {
  const char* env = std::getenv("MODELATLAS_BENCH_MODELS");
  return env != nullptr ? std::atoi(env) : 100000;
}

std::string ModelId(int i) { return absl::StrFormat("gen-model-%06d", i); }

// A plausible record: numbers spread over orders of magnitude, a few lists
// and notes, an architecture on one in four.
Model Generated(int i, std::mt19937_64& rng) {
  static const char* kDomains[] = {"Language", "Vision", "Speech", "Biology", "Games"};
  std::uniform_real_distribution<double> exponent(6, 12);
  Model m;
  m.set_name("models/" + ModelId(i));
  m.set_display_name(absl::StrCat("Generated Model ", i));
  m.add_organizations(absl::StrCat("Lab ", i % 97));
  m.add_domains(kDomains[i % 5]);
  m.add_tasks("Language modeling/generation");
  m.set_parameters(std::pow(10.0, exponent(rng)));
  m.set_training_compute_flop(std::pow(10.0, exponent(rng) + 10));
  m.set_parameters_notes(absl::StrCat("Generated record ", i, " for benchmarks."));
  m.mutable_publication_date()->set_year(2015 + i % 11);
  m.mutable_publication_date()->set_month(1 + i % 12);
  m.mutable_publication_date()->set_day(1 + i % 28);
  m.set_accessibility(static_cast<common::v1::Accessibility>(1 + i % 6));
  if (i % 4 == 0) {
    auto* a = m.mutable_architecture();
    a->set_num_layers(32);
    a->set_hidden_size(4096);
    a->set_num_attention_heads(32);
    a->set_num_key_value_heads(8);
    a->set_intermediate_size(14336);
    a->set_vocab_size(128256);
  }
  m.mutable_provenance()->set_source("generated");
  return m;
}

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
