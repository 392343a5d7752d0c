// Importing Epoch AI's all_ai_models.csv (3,237 rows x 57 columns, read in
// place from ../shared/data) into an empty SQLite catalog on disk, as
// `modelatlas import` does: parse, match, validate, link, write. Also the
// parse alone and the export back to CSV.
//
//   build/bench/import_bench
//
// Target (issue 4): the whole import under 2 seconds on this machine.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "catalog-service/catalog.h"
#include "catalog-service/import/import_file.h"
#include "catalog-service/store/sqlite_store.h"

namespace modelatlas::catalog {
namespace {

const std::string& AllAiModelsCsv() {
  static const std::string* text = [] {
    std::ifstream in(std::string(MODELATLAS_SHARED_DATA_DIR) + "/epoch/all_ai_models.csv");
    std::stringstream buffer;
    buffer << in.rdbuf();
    return new std::string(buffer.str());
  }();
  return *text;
}

std::string TempDatabase() {
  return (std::filesystem::temp_directory_path() /
          ("import_bench_" + std::to_string(getpid()) + ".db"))
      .string();
}

void RemoveDatabase(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

void BM_ParseAllAiModels(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<ParsedFile> file =
        ParseImportFile(AllAiModelsCsv(), v1::FILE_FORMAT_UNSPECIFIED, "all_ai_models.csv");
    if (!file.ok()) state.SkipWithError(std::string(file.status().message()).c_str());
    benchmark::DoNotOptimize(file);
  }
  state.counters["rows"] = 3237;
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(AllAiModelsCsv().size()));
}
BENCHMARK(BM_ParseAllAiModels)->Unit(benchmark::kMillisecond);

// Parse + import into a new, empty SQLite file (synchronous=FULL).
void BM_ImportAllAiModelsIntoEmptySqlite(benchmark::State& state) {
  const std::string path = TempDatabase();
  int64_t created = 0;
  for (auto _ : state) {
    state.PauseTiming();
    RemoveDatabase(path);
    auto store = SqliteStore::Open(path);
    if (!store.ok()) state.SkipWithError(std::string(store.status().message()).c_str());
    Catalog catalog(*std::move(store));
    state.ResumeTiming();
    absl::StatusOr<ParsedFile> file =
        ParseImportFile(AllAiModelsCsv(), v1::FILE_FORMAT_UNSPECIFIED, "all_ai_models.csv");
    absl::StatusOr<v1::ImportReport> report = catalog.Import(*file, {});
    if (!report.ok()) state.SkipWithError(std::string(report.status().message()).c_str());
    created = report->created();
  }
  RemoveDatabase(path);
  state.counters["created"] = static_cast<double>(created);
}
BENCHMARK(BM_ImportAllAiModelsIntoEmptySqlite)->Unit(benchmark::kMillisecond)->MinTime(2);

// Importing the same file again: every row read, matched and compared, nothing written.
void BM_ReimportAllAiModels(benchmark::State& state) {
  const std::string path = TempDatabase();
  RemoveDatabase(path);
  Catalog catalog(*SqliteStore::Open(path));
  auto file = ParseImportFile(AllAiModelsCsv(), v1::FILE_FORMAT_UNSPECIFIED, "all_ai_models.csv");
  (void)catalog.Import(*file, {});
  int64_t unchanged = 0;
  for (auto _ : state) {
    auto again = ParseImportFile(AllAiModelsCsv(), v1::FILE_FORMAT_UNSPECIFIED, "");
    unchanged = catalog.Import(*again, {})->unchanged();
  }
  RemoveDatabase(path);
  state.counters["unchanged"] = static_cast<double>(unchanged);
}
BENCHMARK(BM_ReimportAllAiModels)->Unit(benchmark::kMillisecond);

void BM_ExportModelsCsv(benchmark::State& state) {
  auto store = SqliteStore::Open(":memory:");
  Catalog catalog(*std::move(store));
  auto file = ParseImportFile(AllAiModelsCsv(), v1::FILE_FORMAT_UNSPECIFIED, "all_ai_models.csv");
  (void)catalog.Import(*file, {});
  for (auto _ : state) {
    auto models = catalog.ListAll<Model>("");
    benchmark::DoNotOptimize(ExportModelsCsv(*models));
  }
}
BENCHMARK(BM_ExportModelsCsv)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace modelatlas::catalog

int main(int argc, char** argv) {
  if (modelatlas::catalog::AllAiModelsCsv().empty()) {
    const bool ci = std::getenv("CI") != nullptr && std::string(std::getenv("CI")) == "true";
    std::fprintf(stderr, "%s: %s/epoch/all_ai_models.csv not found\n", ci ? "error" : "skipping",
                 MODELATLAS_SHARED_DATA_DIR);
    return ci ? 1 : 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
