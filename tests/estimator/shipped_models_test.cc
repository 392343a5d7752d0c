// Every open-weight model the catalog ships: its recorded parameter count is
// reproduced exactly from its architecture, and agrees with the exact counts
// in ../shared/data/model_catalogs/llmfit_hf_models.json wherever both have it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "catalog-service/dataset.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/core/parameters.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::estimator {
namespace {

std::vector<common::v1::Model> OpenWeightModels() {
  std::vector<common::v1::Model> out;
  const auto dataset = catalog::ShippedDataset();
  EXPECT_TRUE(dataset.ok()) << dataset.status();
  if (!dataset.ok()) return out;
  for (const auto& model : dataset->models()) {
    if (model.has_architecture()) out.push_back(model);
  }
  return out;
}

TEST(ShippedModelsTest, AtLeastFortyOpenWeightModelsWithArchitecture) {
  EXPECT_GE(OpenWeightModels().size(), 40u);
}

TEST(ShippedModelsTest, RecordedCountsAreReproducedFromTheArchitecture) {
  int checked = 0;
  for (const auto& model : OpenWeightModels()) {
    const Architecture arch = ToCoreArchitecture(model.architecture());
    auto count = CountParameters(arch);
    ASSERT_TRUE(count.ok()) << model.name() << ": " << count.status();
    if (arch.UsesMla()) {
      // DeepSeek-V3's record carries the reported "671B"; the count is
      // 671,026,404,352 (accuracy_test: exact from config.json).
      EXPECT_NEAR(count->total / model.parameters(), 1.0, 1e-4) << model.name();
      continue;
    }
    EXPECT_EQ(count->total, model.parameters()) << model.name();
    EXPECT_EQ(static_cast<double>(model.architecture().published_parameter_count()),
              model.parameters())
        << model.name();
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

// llmfit counts the tensors of each checkpoint, so it also counts what a
// checkpoint stores beside the parameters: a copy of a tied output head
// (Qwen3-0.6B saves lm_head.weight although tie_word_embeddings is true) and
// rotary inv_freq buffers (the Llama-2-7b-hf checkpoint: 64 per layer x 32).
// Some of its entries are rounded (14770000000); only exact ones are compared.
TEST(ShippedModelsTest, AgreeWithLlmfitsExactCounts) {
  REQUIRE_SHARED_DATA(path, "model_catalogs/llmfit_hf_models.json");
  const std::string text = "{\"values\":" + testing::ReadFile(path) + "}";
  google::protobuf::Struct wrapper;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &wrapper).ok());
  std::map<std::string, double> exact;
  for (const auto& entry : wrapper.fields().at("values").list_value().values()) {
    const auto& fields = entry.struct_value().fields();
    if (fields.count("name") && fields.count("parameters_raw")) {
      exact[fields.at("name").string_value()] = fields.at("parameters_raw").number_value();
    }
  }
  const std::map<std::string, double> stored_beside_parameters = {
      {"Qwen/Qwen3-0.6B", 151936.0 * 1024}, {"meta-llama/Llama-2-7b-hf", 64.0 * 32}};
  int compared = 0;
  for (const auto& model : OpenWeightModels()) {
    // The architecture's source is https://huggingface.co/{repo}/blob/main/config.json.
    const std::string& source = model.architecture().source();
    const std::string prefix = "https://huggingface.co/";
    const size_t end = source.find("/blob/");
    if (source.rfind(prefix, 0) != 0 || end == std::string::npos) continue;
    const std::string repo = source.substr(prefix.size(), end - prefix.size());
    auto it = exact.find(repo);
    if (it == exact.end() || std::fmod(it->second, 1e6) == 0) continue;  // absent or rounded
    const double extra =
        stored_beside_parameters.count(repo) ? stored_beside_parameters.at(repo) : 0;
    EXPECT_EQ(model.parameters() + extra, it->second) << repo;
    ++compared;
  }
  EXPECT_GE(compared, 10) << "too few shipped models found in llmfit's list";
}

}  // namespace
}  // namespace modelatlas::estimator
