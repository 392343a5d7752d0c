// docs/VALUES.md is what `modelatlas values` prints: every value of every
// enum the CLI accepts or prints, so the documentation cannot drift from the
// spelling tables (which enum_spellings_test checks against the protos).
#include <fstream>
#include <sstream>

#include "cli/enum_spellings.h"
#include "gtest/gtest.h"

namespace modelatlas::cli {
namespace {

TEST(ValuesDocTest, DocsValuesMdIsWhatTheCliPrints) {
  const std::string path = std::string(MODELATLAS_SOURCE_DIR) + "/docs/VALUES.md";
  std::ifstream file(path);
  ASSERT_TRUE(file) << "cannot read " << path;
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(text.str(), EnumValuesMarkdown())
      << path << " is out of date: run `build/cli/modelatlas values > docs/VALUES.md`";
}

TEST(ValuesDocTest, EveryTableAndValueHasALine) {
  const std::string doc = EnumValuesMarkdown();
  for (const EnumSpellings* table : AllEnumSpellings()) {
    EXPECT_NE(doc.find("## " + table->descriptor()->name() + " "), std::string::npos)
        << table->descriptor()->name();
    for (const EnumSpelling& entry : table->entries()) {
      const std::string value = table->descriptor()->FindValueByNumber(entry.value)->name();
      EXPECT_NE(doc.find("` | `" + value + "` | "), std::string::npos) << value;
    }
  }
}

}  // namespace
}  // namespace modelatlas::cli
