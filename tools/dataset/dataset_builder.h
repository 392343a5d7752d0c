// Builds the dataset ModelAtlas ships (catalog-service/data/dataset.json)
// from the curated records and Epoch AI's data; see dataset_builder.cc.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace modelatlas::catalog {

struct BuildOptions {
  // Holds epoch/all_ai_models.csv, epoch/ml_hardware.csv, epoch/hardware_prices.csv.
  std::string shared_data_dir;
  // Holds models.json and hardware.json (the curated records).
  std::string curated_dir;
  // The file this build replaces (its text; empty for none): records whose
  // content it holds keep its versions (Provenance.shipped), the others get
  // the next version.
  std::string previous_dataset_json;
};

struct BuildResult {
  // The file's text: one record per line, maps in key order, so that the
  // same inputs give the same bytes.
  std::string json;
  // What was read, matched, created and priced, one line per step.
  std::string report;
  int models = 0;
  int hardware = 0;
};

// Reads the inputs and returns the dataset; an error when an input is
// missing or unreadable, or when a record fails the catalog's validation.
absl::StatusOr<BuildResult> BuildShippedDataset(const BuildOptions& options);

// The device memory a price observation's "Cloud GPU description" (Epoch AI's
// hardware prices) names, in GB: "80GB" and "A100 80GB PCIE (28 vCPU - 120GB
// RAM)" give 80, "P100 (16 GB)" 16; 0 when it names none. A size followed by
// "RAM" or "NVMe" is the host's, not the GPU's. Observations naming another
// size than a record's go to the record of that size, or to none.
int DescribedMemoryGb(absl::string_view description);

}  // namespace modelatlas::catalog
