// The dataset ModelAtlas ships (catalog-service/data/dataset.json, generated
// by tools/dataset/build_dataset.cc from data/curated/ and Epoch AI's data,
// embedded in the binary at build time) and the JSON document format it uses, which
// is also the catalog's JSON export format.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "modelatlas/catalog/v1/dataset.pb.h"

namespace modelatlas::catalog {

// Parses a Dataset from its protobuf JSON mapping; unknown fields are an
// error, so that a typo in a field name cannot silently drop data.
absl::StatusOr<v1::Dataset> ParseDatasetJson(absl::string_view json);

// The text of the dataset embedded in this binary (data/dataset.json).
absl::string_view ShippedDatasetJson();

// The dataset embedded in this binary, parsed on first use.
absl::StatusOr<v1::Dataset> ShippedDataset();

}  // namespace modelatlas::catalog
