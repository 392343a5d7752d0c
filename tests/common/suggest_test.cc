#include "common/status/suggest.h"

#include "common/query/fields.h"
#include "gtest/gtest.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas {
namespace {

TEST(SuggestTest, EditDistanceCountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("organization", "organizations"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
}

TEST(SuggestTest, ClosestNamesAreCloseFirstAndNeverUnrelated) {
  const std::vector<std::string> names = {"parameters", "organizations", "domains", "tasks"};
  EXPECT_EQ(ClosestNames("organization", names), std::vector<std::string>{"organizations"});
  EXPECT_EQ(ClosestNames("PARAMETRES", names), std::vector<std::string>{"parameters"});
  EXPECT_TRUE(ClosestNames("zzzzzzzz", names).empty());
  EXPECT_EQ(DidYouMean("domain", names), "; did you mean \"domains\"?");
  EXPECT_EQ(DidYouMean("zzzzzzzz", names), "");
}

TEST(QueryFieldsTest, ListsNestedFieldsWithTheirKinds) {
  const std::vector<query::QueryField> fields = query::QueryFields(common::v1::Model::descriptor());
  auto find = [&](const std::string& path) -> const query::QueryField* {
    for (const query::QueryField& field : fields) {
      if (field.path == path) return &field;
    }
    return nullptr;
  };
  ASSERT_NE(find("parameters"), nullptr);
  EXPECT_EQ(find("parameters")->kind, "number");
  ASSERT_NE(find("architecture.num_layers"), nullptr);
  EXPECT_EQ(find("architecture.num_layers")->kind, "number");
  ASSERT_NE(find("organizations"), nullptr);
  EXPECT_TRUE(find("organizations")->repeated);
  EXPECT_EQ(find("organizations")->kind, "text");
  ASSERT_NE(find("publication_date"), nullptr);
  EXPECT_EQ(find("publication_date")->kind, "date");
  ASSERT_NE(find("accessibility"), nullptr);
  EXPECT_EQ(find("accessibility")->kind, "enum");
  EXPECT_FALSE(find("accessibility")->enum_values.empty());
  // A message with fields is not itself comparable.
  EXPECT_EQ(find("architecture"), nullptr);
  EXPECT_EQ(DidYouMean("organization", query::QueryFieldPaths(common::v1::Model::descriptor())),
            "; did you mean \"organizations\"?");
  EXPECT_NE(query::QueryFields(common::v1::Hardware::descriptor()).size(), 0u);
}

}  // namespace
}  // namespace modelatlas
