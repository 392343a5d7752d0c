// AIP-160 filters and AIP-132 order_by on real records.
#include "common/query/filter.h"

#include <gtest/gtest.h>

#include "common/status/errors.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::query {
namespace {

using common::v1::Model;

Model Llama() {
  Model m;
  m.set_name("models/llama-3-1-8b");
  m.set_display_name("Llama 3.1 8B");
  m.set_parameters(8030261248);
  m.add_domains("Language");
  m.set_accessibility(common::v1::ACCESSIBILITY_OPEN_WEIGHTS_RESTRICTED_USE);
  m.mutable_publication_date()->set_year(2024);
  m.mutable_publication_date()->set_month(7);
  m.mutable_publication_date()->set_day(23);
  m.mutable_architecture()->set_num_layers(32);
  m.mutable_last_modified_time()->set_seconds(1700000000);
  return m;
}

Model Bert() {
  Model m;
  m.set_name("models/megatron-bert");
  m.set_display_name("Megatron-BERT");
  m.set_parameters(3.9e9);
  m.add_domains("Language");
  m.add_domains("Vision");
  m.set_accessibility(common::v1::ACCESSIBILITY_UNRELEASED);
  m.set_frontier_model(true);
  m.set_training_compute_flop(2.2e22);
  return m;
}

bool Matches(const std::string& filter, const Model& m) {
  auto parsed = Filter::Parse(filter, Model::descriptor());
  EXPECT_TRUE(parsed.ok()) << filter << ": " << parsed.status();
  return parsed.ok() && parsed->Matches(m);
}

std::string ErrorOf(const std::string& filter) {
  auto parsed = Filter::Parse(filter, Model::descriptor());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << filter;
  auto violations = GetFieldViolations(parsed.status());
  EXPECT_EQ(violations.size(), 1u);
  return violations.empty() ? "" : violations[0].field + ": " + violations[0].description;
}

TEST(FilterTest, TheIssuesExample) {
  const std::string filter =
      "parameters > 1e9 AND domains:\"Language\" AND accessibility = OPEN_WEIGHTS_RESTRICTED_USE";
  EXPECT_TRUE(Matches(filter, Llama()));
  EXPECT_FALSE(Matches(filter, Bert()));
}

TEST(FilterTest, Comparisons) {
  EXPECT_TRUE(Matches("parameters >= 8030261248", Llama()));
  EXPECT_FALSE(Matches("parameters < 8030261248", Llama()));
  EXPECT_TRUE(Matches("parameters != 1", Llama()));
  EXPECT_TRUE(Matches("parameters <= 3.9e9", Bert()));
  EXPECT_TRUE(Matches("architecture.num_layers = 32", Llama()));
  EXPECT_FALSE(Matches("architecture.num_layers = 32", Bert()));  // no architecture
  EXPECT_TRUE(Matches("accessibility = ACCESSIBILITY_UNRELEASED", Bert()));
  EXPECT_TRUE(Matches("frontier_model = true", Bert()));
  EXPECT_FALSE(Matches("frontier_model = true", Llama()));
  EXPECT_TRUE(Matches("publication_date >= \"2024-01-01\"", Llama()));
  EXPECT_FALSE(Matches("publication_date < \"2024-07-23\"", Llama()));
  EXPECT_TRUE(Matches("last_modified_time > \"2023-01-01T00:00:00Z\"", Llama()));
}

TEST(FilterTest, UnsetValuesMatchNoComparison) {
  EXPECT_FALSE(Matches("training_compute_flop > 0", Llama()));
  EXPECT_FALSE(Matches("training_compute_flop < 1e30", Llama()));
  EXPECT_FALSE(Matches("training_compute_flop != 5", Llama()));
  EXPECT_TRUE(Matches("training_compute_flop:*", Bert()));
  EXPECT_FALSE(Matches("training_compute_flop:*", Llama()));
  EXPECT_TRUE(Matches("NOT training_compute_flop:*", Llama()));
}

TEST(FilterTest, TextListsAndWildcards) {
  EXPECT_TRUE(Matches("display_name:\"llama\"", Llama()));     // contains, any case
  EXPECT_FALSE(Matches("display_name = \"llama\"", Llama()));  // exact
  EXPECT_TRUE(Matches("display_name = \"Llama*\"", Llama()));
  EXPECT_TRUE(Matches("\"bert\"", Bert()));  // bare text searches the display name
  EXPECT_TRUE(Matches("megatron", Bert()));
  EXPECT_TRUE(Matches("domains:\"vision\"", Bert()));
  EXPECT_FALSE(Matches("domains:\"vision\"", Llama()));
  EXPECT_TRUE(Matches("domains = \"Vision\"", Bert()));
}

TEST(FilterTest, AndOrNotFollowAip160Precedence) {
  // OR binds tighter than AND: a AND (b OR c).
  EXPECT_TRUE(Matches("frontier_model = true AND parameters > 1e12 OR parameters < 1e10", Bert()));
  EXPECT_FALSE(Matches("frontier_model = true AND parameters > 1e12 OR parameters > 1e10", Bert()));
  EXPECT_TRUE(Matches("NOT frontier_model = true", Llama()));
  EXPECT_TRUE(Matches("(parameters > 1e12 OR domains:\"Vision\") megatron",
                      Bert()));  // juxtaposition = AND
  EXPECT_FALSE(Matches("NOT (parameters > 1e9)", Bert()));
}

TEST(FilterTest, EmptyFilterMatchesEverything) {
  auto parsed = Filter::Parse("  ", Model::descriptor());
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->empty());
  EXPECT_TRUE(parsed->Matches(Bert()));
}

TEST(FilterTest, ErrorsNameTheProblemAndPosition) {
  EXPECT_EQ(ErrorOf("nosuchfield > 3"),
            "filter: unknown field \"nosuchfield\" at position 1 (\"nosuchfield\")");
  // A near miss names the field meant (issue 20: organization vs organizations).
  EXPECT_EQ(ErrorOf("organization:\"Google\""),
            "filter: unknown field \"organization\" at position 1 (\"organization\"); did you "
            "mean \"organizations\"?");
  EXPECT_EQ(ErrorOf("architecture.num_layer > 3"),
            "filter: unknown field \"num_layer\" at position 1 (\"architecture.num_layer\"); did "
            "you mean \"architecture.num_layers\"?");
  EXPECT_NE(ErrorOf("parameters > many").find("takes a number"), std::string::npos);
  EXPECT_NE(ErrorOf("accessibility = SOMETIMES").find("is not a value of accessibility"),
            std::string::npos);
  EXPECT_NE(ErrorOf("accessibility > UNRELEASED").find("cannot be ordered"), std::string::npos);
  EXPECT_NE(ErrorOf("(parameters > 1").find("expected \")\""), std::string::npos);
  EXPECT_NE(ErrorOf("display_name:\"open").find("unterminated string"), std::string::npos);
  EXPECT_NE(ErrorOf("parameters >").find("expected a value"), std::string::npos);
  EXPECT_NE(ErrorOf("publication_date > \"July\"").find("YYYY-MM-DD"), std::string::npos);
  EXPECT_NE(ErrorOf("architecture > 3").find("cannot be compared"), std::string::npos);
  EXPECT_NE(ErrorOf("parameters.x = 3").find("has no fields"), std::string::npos);
  EXPECT_NE(ErrorOf("a ! b").find("!="), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(5000, 'a')).find("limit is 4096"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(100, '(') + "a" + std::string(100, ')')).find("nested too deeply"),
            std::string::npos);
}

TEST(OrderByTest, SortsWithUnsetLast) {
  auto keys = ParseOrderBy("training_compute_flop desc, display_name", Model::descriptor());
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_TRUE(OrderedBefore(Bert(), Llama(), *keys));  // set before unset
  EXPECT_FALSE(OrderedBefore(Llama(), Bert(), *keys));
  auto by_parameters = ParseOrderBy("parameters desc", Model::descriptor());
  EXPECT_TRUE(OrderedBefore(Llama(), Bert(), *by_parameters));
  auto ascending = ParseOrderBy("parameters", Model::descriptor());
  EXPECT_TRUE(OrderedBefore(Bert(), Llama(), *ascending));
  auto nested = ParseOrderBy("architecture.num_layers desc", Model::descriptor());
  ASSERT_TRUE(nested.ok());
  EXPECT_TRUE(OrderedBefore(Llama(), Bert(), *nested));
}

TEST(OrderByTest, RefusesWhatCannotBeSorted) {
  for (const char* bad :
       {"domains", "nosuch", "parameters upward", "architecture", "parameters desc extra"}) {
    auto keys = ParseOrderBy(bad, Model::descriptor());
    EXPECT_EQ(keys.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    ASSERT_EQ(GetFieldViolations(keys.status()).size(), 1u);
    EXPECT_EQ(GetFieldViolations(keys.status())[0].field, "order_by");
  }
  auto near_miss = ParseOrderBy("paramters desc", Model::descriptor());
  ASSERT_EQ(GetFieldViolations(near_miss.status()).size(), 1u);
  EXPECT_EQ(GetFieldViolations(near_miss.status())[0].description,
            "unknown field \"paramters\"; did you mean \"parameters\"?");
}

}  // namespace
}  // namespace modelatlas::query
