// The dataset ModelAtlas ships (catalog-service/data/dataset.json, generated
// by tools/dataset/build_dataset.cc from data/curated/ and Epoch AI's data,
// embedded in the binary at build time) and the JSON document format it uses, which
// is also the catalog's JSON export format.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "modelatlas/catalog/v1/dataset.pb.h"

namespace modelatlas::catalog {

class Catalog;

// Parses a Dataset from its protobuf JSON mapping; unknown fields are an
// error, so that a typo in a field name cannot silently drop data.
absl::StatusOr<v1::Dataset> ParseDatasetJson(absl::string_view json);

// The text of the dataset embedded in this binary (data/dataset.json).
absl::string_view ShippedDatasetJson();

// The same dataset in protobuf's binary form (converted at build time).
absl::string_view ShippedDatasetBinary();

// The dataset embedded in this binary (its binary form), parsed on first use.
absl::StatusOr<v1::Dataset> ShippedDataset();

struct ShippedDatasetLoad {
  // False when the catalog already held records (nothing parsed or written).
  bool loaded = false;
  int models = 0;
  int hardware = 0;
};

// Loads the shipped dataset into `catalog` when it holds no record. The
// dataset (a few MB of JSON) is parsed only then, so restarting a catalog
// that holds records costs no parse.
absl::StatusOr<ShippedDatasetLoad> LoadShippedDatasetIfEmpty(Catalog& catalog);

}  // namespace modelatlas::catalog
