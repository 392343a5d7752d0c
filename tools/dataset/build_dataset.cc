// Writes catalog-service/data/dataset.json (see dataset_builder.cc).
// Run from the repository root (the defaults are relative to it):
//   bash scripts/build.sh build-dataset && build/catalog-service/build-dataset
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "tools/dataset/dataset_builder.h"

ABSL_FLAG(std::string, shared_data, "../shared/data",
          "Directory holding epoch/all_ai_models.csv, ml_hardware.csv, hardware_prices.csv");
ABSL_FLAG(std::string, curated_dir, "catalog-service/data/curated",
          "Directory holding the curated models.json and hardware.json");
ABSL_FLAG(std::string, output, "catalog-service/data/dataset.json", "The file to write");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string output = absl::GetFlag(FLAGS_output);
  // The file being replaced gives the records' versions (an absent one: none).
  std::string previous;
  if (std::ifstream file(output, std::ios::binary); file) {
    previous.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  auto result = modelatlas::catalog::BuildShippedDataset(
      {absl::GetFlag(FLAGS_shared_data), absl::GetFlag(FLAGS_curated_dir), previous});
  if (!result.ok()) {
    std::fprintf(stderr, "build-dataset: %s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  std::fputs(result->report.c_str(), stderr);
  std::ofstream file(output, std::ios::binary | std::ios::trunc);
  file << result->json;
  if (!file.good()) {
    std::fprintf(stderr, "build-dataset: cannot write %s\n", output.c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s\n", output.c_str());
  return 0;
}
