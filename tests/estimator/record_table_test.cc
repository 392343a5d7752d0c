// The snapshot's record table: lookups by name and by display name or alias
// stay right as records are added, renamed and removed one at a time.
#include "estimator-service/catalog/record_table.h"

#include <gtest/gtest.h>

namespace modelatlas::estimator {
namespace {

common::v1::Model Model(const std::string& display_name) {
  common::v1::Model model;
  model.set_display_name(display_name);
  return model;
}

TEST(RecordTableTest, FindsByNameAndUniqueDisplayNameAcrossUpdates) {
  RecordTable<common::v1::Model> table;
  table.Put("models/b", Model("Llama 3.1 8B"));
  table.Put("models/a", Model("GPT-2"));
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table.ordered().begin()->first, "models/a");  // name order
  ASSERT_NE(table.Find("llama-3.1 8b"), nullptr);         // case and punctuation ignored
  EXPECT_EQ(table.Find("llama-3.1 8b")->display_name(), "Llama 3.1 8B");
  EXPECT_EQ(table.FindByName("Llama 3.1 8B"), nullptr);  // not a resource name

  // Renamed: the old display name no longer finds it, the new one does.
  table.Put("models/b", Model("Llama 3.2 1B"));
  EXPECT_EQ(table.Find("Llama 3.1 8B"), nullptr);
  ASSERT_NE(table.Find("Llama 3.2 1B"), nullptr);
  EXPECT_EQ(table.size(), 2u);

  // Two records with one display name: ambiguous by it, found by name.
  table.Put("models/c", Model("GPT 2"));
  EXPECT_EQ(table.Find("gpt-2"), nullptr);
  ASSERT_NE(table.Find("models/c"), nullptr);
  table.Erase("models/a");
  ASSERT_NE(table.Find("gpt-2"), nullptr);
  EXPECT_EQ(table.Find("gpt-2")->display_name(), "GPT 2");
  table.Erase("models/missing");  // no effect
  EXPECT_EQ(table.size(), 2u);
}

TEST(RecordTableTest, HardwareAliasesAreKeysToo) {
  RecordTable<common::v1::Hardware> table;
  common::v1::Hardware h100;
  h100.set_display_name("NVIDIA H100 SXM5 80GB");
  h100.add_aliases("H100");
  table.Put("hardware/nvidia-h100-sxm5-80gb", h100);
  ASSERT_NE(table.Find("h100"), nullptr);
  h100.clear_aliases();
  table.Put("hardware/nvidia-h100-sxm5-80gb", h100);
  EXPECT_EQ(table.Find("h100"), nullptr);
  EXPECT_NE(table.Find("NVIDIA H100 SXM5 80GB"), nullptr);
}

TEST(RecordTableTest, ABareIdFindsItsRecordWhateverTheDisplayName) {
  RecordTable<common::v1::Hardware> table;
  common::v1::Hardware v100;
  v100.set_display_name("NVIDIA Tesla V100 SXM2 16 GB");  // "Tesla": not the id's spelling
  table.Put("hardware/nvidia-v100-sxm2-16gb", v100);
  ASSERT_NE(table.Find("nvidia-v100-sxm2-16gb"), nullptr);
  EXPECT_EQ(table.Find("nvidia-v100-sxm2-16gb")->display_name(), "NVIDIA Tesla V100 SXM2 16 GB");
  EXPECT_EQ(table.Find("nvidia-v100-sxm2-32gb"), nullptr);
  EXPECT_EQ(table.Find("NVIDIA V100 SXM2 16 GB"), nullptr);  // not an id, not a name on record
  RecordTable<common::v1::Model> models;
  models.Put("models/llama-3-1-8b", common::v1::Model());
  EXPECT_NE(models.Find("llama-3-1-8b"), nullptr);
}

TEST(RecordTableTest, FindByKeyIsFindWithoutTheResourceNameLookup) {
  RecordTable<common::v1::Model> table;
  table.Put("models/llama-3-1-8b", Model("Llama 3.1 8B"));
  // A display name and a bare id, as Find finds them.
  ASSERT_NE(table.FindByKey("llama 3.1 8b"), nullptr);
  EXPECT_EQ(table.FindByKey("llama 3.1 8b"), table.Find("llama 3.1 8b"));
  EXPECT_EQ(table.FindByKey("llama-3-1-8b"), table.Find("llama-3-1-8b"));
  EXPECT_NE(table.FindByKey("llama-3-1-8b"), nullptr);
  // A resource name is not a display name: Find's first lookup only.
  EXPECT_NE(table.Find("models/llama-3-1-8b"), nullptr);
  EXPECT_EQ(table.FindByKey("models/llama-3-1-8b"), nullptr);
  EXPECT_EQ(table.FindByKey("GPT-2"), nullptr);
}

}  // namespace
}  // namespace modelatlas::estimator
