// The shipped dataset (catalog-service/data/dataset.json), loaded once per
// test binary, and its records by resource name. A name that is not shipped
// fails the calling test and gives an empty record, so a renamed record shows
// up as a test failure that names it rather than as a crash.
#pragma once

#include <string>
#include <vector>

#include "catalog-service/dataset.h"
#include "gtest/gtest.h"

namespace modelatlas::estimator::testing {

inline const catalog::v1::Dataset& Shipped() {
  static const catalog::v1::Dataset* dataset = [] {
    auto loaded = catalog::ShippedDataset();
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return new catalog::v1::Dataset(loaded.ok() ? *std::move(loaded) : catalog::v1::Dataset());
  }();
  return *dataset;
}

template <typename Record, typename List>
const Record& ShippedNamed(const List& records, const std::string& name) {
  for (const Record& record : records) {
    if (record.name() == name) return record;
  }
  ADD_FAILURE() << "no shipped record " << name;
  static const Record empty;
  return empty;
}

// "models/llama-3-1-8b", as in the dataset.
inline const common::v1::Model& ShippedModel(const std::string& name) {
  return ShippedNamed<common::v1::Model>(Shipped().models(), name);
}

// "hardware/nvidia-h100-sxm5-80gb", as in the dataset.
inline const common::v1::Hardware& ShippedHardware(const std::string& name) {
  return ShippedNamed<common::v1::Hardware>(Shipped().hardware(), name);
}

// Every shipped hardware record, in the dataset's order (a copy the caller
// owns: a SharedRecords list, say).
inline std::vector<common::v1::Hardware> ShippedHardwareRecords() {
  return {Shipped().hardware().begin(), Shipped().hardware().end()};
}

}  // namespace modelatlas::estimator::testing
