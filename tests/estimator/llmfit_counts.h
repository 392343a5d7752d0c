// llmfit's exact parameter counts (parameters_raw: the Hub's safetensors
// totals) from ../shared/data/model_catalogs/llmfit_hf_models.json, read in
// place. Tests that compare with them call REQUIRE_SHARED_DATA first.
#pragma once

#include <map>
#include <string>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::estimator::testing {

// Repository -> parameters_raw; empty when the file is absent.
inline const std::map<std::string, double>& LlmfitCounts() {
  static const auto* counts = [] {
    auto* out = new std::map<std::string, double>;
    const std::string text = ::modelatlas::testing::ReadFile(
        ::modelatlas::testing::SharedDataPath("model_catalogs/llmfit_hf_models.json"));
    google::protobuf::Value root;
    if (text.empty() || !google::protobuf::util::JsonStringToMessage(text, &root).ok()) return out;
    for (const auto& item : root.list_value().values()) {
      const auto& fields = item.struct_value().fields();
      if (fields.count("name") && fields.count("parameters_raw")) {
        (*out)[fields.at("name").string_value()] = fields.at("parameters_raw").number_value();
      }
    }
    return out;
  }();
  return *counts;
}

// One repository's parameters_raw, or 0 when it or the file is absent.
inline double LlmfitCount(const std::string& repo) {
  auto it = LlmfitCounts().find(repo);
  return it == LlmfitCounts().end() ? 0 : it->second;
}

}  // namespace modelatlas::estimator::testing
