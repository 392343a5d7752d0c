// Counting and grouping (catalog-service/summary.h) on every store, and the
// NOT_FOUND suggestions of a wrong name.
#include "catalog-service/summary.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "absl/strings/match.h"
#include "tests/catalog/catalog_on_store.h"

namespace modelatlas::catalog {
namespace {

class SummaryTest : public CatalogOnStoreTest {
 protected:
  void AddModel(const std::string& id, const std::string& display_name,
                std::vector<std::string> organizations, std::vector<std::string> hardware,
                std::optional<double> compute_flop) {
    Model model;
    model.set_display_name(display_name);
    model.mutable_provenance()->set_source("summary_test");
    for (const std::string& organization : organizations) model.add_organizations(organization);
    for (const std::string& name : hardware) model.add_training_hardware(name);
    if (compute_flop.has_value()) model.set_training_compute_flop(*compute_flop);
    absl::StatusOr<Model> created = catalog_->Create<Model>(id, model);
    ASSERT_TRUE(created.ok()) << created.status();
  }

  void SetUp() override {
    CatalogOnStoreTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    AddModel("a", "Model A", {"Google", "DeepMind"}, {"NVIDIA A100 SXM4 40 GB"}, 1e22);
    AddModel("b", "Model B", {"Google"}, {"NVIDIA A100 SXM4 80 GB", "NVIDIA V100"}, 3e22);
    AddModel("c", "Model C", {"Meta"}, {"NVIDIA A100 SXM4 80 GB"}, std::nullopt);
    AddModel("d", "Model D", {}, {"NVIDIA A100 SXM4 40 GB"}, 2e21);
    AddModel("e", "Model E", {"Meta"}, {"Google TPU v4"}, 5e23);
  }

  // group value -> its group.
  static std::map<std::string, v1::SummaryGroup> ByValue(const v1::Summary& summary) {
    std::map<std::string, v1::SummaryGroup> groups;
    for (const auto& group : summary.groups()) groups[group.value()] = group;
    return groups;
  }
};

TEST_P(SummaryTest, CountsEachValueOfAListAndTheRecordsWithoutOne) {
  absl::StatusOr<v1::Summary> summary = Summarize<Model>(
      *catalog_, {"training_hardware:\"A100\"", "organizations", "training_compute_flop"});
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->record_count(), 4);  // a, b, c, d; e trained on TPUs
  EXPECT_EQ(summary->group_by(), "organizations");
  EXPECT_GT(summary->catalog_revision(), 0);
  auto groups = ByValue(*summary);
  ASSERT_EQ(groups.size(), 4u) << summary->DebugString();
  EXPECT_EQ(groups["Google"].record_count(), 2);
  EXPECT_EQ(groups["DeepMind"].record_count(), 1);
  EXPECT_EQ(groups["Meta"].record_count(), 1);
  EXPECT_EQ(groups[""].record_count(), 1);  // d: no organization
  // Google: a (1e22) and b (3e22).
  EXPECT_EQ(groups["Google"].value_count(), 2);
  EXPECT_DOUBLE_EQ(groups["Google"].value_sum(), 4e22);
  EXPECT_DOUBLE_EQ(groups["Google"].value_min(), 1e22);
  EXPECT_DOUBLE_EQ(groups["Google"].value_max(), 3e22);
  // Meta's only A100 model has no compute on record: no sum, not zero.
  EXPECT_EQ(groups["Meta"].value_count(), 0);
  EXPECT_FALSE(groups["Meta"].has_value_sum());
  // The largest group first.
  EXPECT_EQ(summary->groups(0).value(), "Google");
}

TEST_P(SummaryTest, ARecordWithARepeatedValueCountsOnceInItsGroup) {
  AddModel("f", "Model F", {"Meta", "Meta"}, {}, std::nullopt);
  absl::StatusOr<v1::Summary> summary =
      Summarize<Model>(*catalog_, {"organizations:\"Meta\"", "organizations", ""});
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(ByValue(*summary)["Meta"].record_count(), 3);  // c, e, f
}

TEST_P(SummaryTest, WithoutGroupByOneGroupCountsEverySelectedRecord) {
  absl::StatusOr<v1::Summary> summary =
      Summarize<Model>(*catalog_, {"", "", "training_compute_flop"});
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->groups_size(), 1);
  EXPECT_EQ(summary->groups(0).record_count(), 5);
  EXPECT_EQ(summary->groups(0).value_count(), 4);
  EXPECT_DOUBLE_EQ(summary->groups(0).value_max(), 5e23);
  EXPECT_DOUBLE_EQ(summary->groups(0).value_min(), 2e21);
}

TEST_P(SummaryTest, BadFieldsAreInvalidArgumentsNamingTheFieldAndTheClosestName) {
  absl::StatusOr<v1::Summary> summary =
      Summarize<Model>(*catalog_, {"", "organization", "display_name"});
  ASSERT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(summary.status().message());
  EXPECT_TRUE(absl::StrContains(message, "group_by")) << message;
  EXPECT_TRUE(absl::StrContains(message, "did you mean \"organizations\"")) << message;
  EXPECT_TRUE(absl::StrContains(message, "value_field")) << message;
  EXPECT_TRUE(absl::StrContains(message, "not a single number")) << message;
  // A bad filter is the filter's error.
  summary = Summarize<Model>(*catalog_, {"nonsense >", "organizations", ""});
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
  // A list cannot be summed.
  summary = Summarize<Model>(*catalog_, {"", "", "training_dataset_size_datapoints"});
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(SummaryTest, HardwareGroupsByAnEnumOrTextField) {
  Hardware hw;
  hw.mutable_provenance()->set_source("summary_test");
  hw.set_display_name("Card One");
  hw.set_manufacturer("Acme");
  hw.set_memory_bytes(16e9);
  ASSERT_TRUE(catalog_->Create<Hardware>("card-one", hw).ok());
  hw.set_display_name("Card Two");
  hw.set_memory_bytes(48e9);
  ASSERT_TRUE(catalog_->Create<Hardware>("card-two", hw).ok());
  absl::StatusOr<v1::Summary> summary =
      Summarize<Hardware>(*catalog_, {"", "manufacturer", "memory_bytes"});
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->groups_size(), 1);
  EXPECT_EQ(summary->groups(0).value(), "Acme");
  EXPECT_EQ(summary->groups(0).record_count(), 2);
  EXPECT_DOUBLE_EQ(summary->groups(0).value_sum(), 64e9);
}

TEST_P(SummaryTest, NotFoundSuggestsTheClosestNames) {
  absl::StatusOr<Model> missing = catalog_->Get<Model>("Model Q");
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "did you mean"))
      << missing.status().message();
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "Model A"))
      << missing.status().message();
  // By resource name too.
  missing = catalog_->Get<Model>("models/modl-a");
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "did you mean")) << missing.status();
  // Nothing close: no suggestion.
  missing = catalog_->Get<Model>("Completely Unrelated Name");
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(absl::StrContains(missing.status().message(), "did you mean")) << missing.status();
}

INSTANTIATE_TEST_SUITE_P(Stores, SummaryTest,
                         ::testing::Values("sqlite", "sqlite_cached", "postgres"),
                         [](const auto& test_info) { return test_info.param; });

}  // namespace
}  // namespace modelatlas::catalog
