#include "common/status/resource_names.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/ascii.h"

namespace modelatlas {
namespace {

TEST(ResourceNamesTest, ValidIdsFollowAip122) {
  EXPECT_TRUE(IsValidResourceId("a"));
  EXPECT_TRUE(IsValidResourceId("llama-3-1-8b"));
  EXPECT_TRUE(IsValidResourceId(std::string(63, 'a')));
  EXPECT_FALSE(IsValidResourceId(""));
  EXPECT_FALSE(IsValidResourceId(std::string(64, 'a')));
  EXPECT_FALSE(IsValidResourceId("3b"));
  EXPECT_FALSE(IsValidResourceId("ends-"));
  EXPECT_FALSE(IsValidResourceId("Upper"));
  EXPECT_FALSE(IsValidResourceId("under_score"));
}

TEST(ResourceNamesTest, IdFromName) {
  EXPECT_EQ(ResourceIdFromName("models/gpt-2", "models"), "gpt-2");
  EXPECT_FALSE(ResourceIdFromName("hardware/gpt-2", "models").has_value());
  EXPECT_FALSE(ResourceIdFromName("models/", "models").has_value());
  EXPECT_FALSE(ResourceIdFromName("models/GPT", "models").has_value());
  EXPECT_FALSE(ResourceIdFromName("modelsx/gpt", "models").has_value());
  EXPECT_EQ(ResourceName("hardware", "nvidia-t4"), "hardware/nvidia-t4");
}

TEST(ResourceNamesTest, IdFromDisplayNameIsStableAndValid) {
  EXPECT_EQ(ResourceIdFromDisplayName("Megatron-BERT"), "megatron-bert");
  EXPECT_EQ(ResourceIdFromDisplayName("T2R 75% + Pretrain (WT-103)"), "t2r-75-pretrain-wt-103");
  EXPECT_EQ(ResourceIdFromDisplayName("BERT-Large-CAS (PTB+WT2+WT103)"),
            "bert-large-cas-ptb-wt2-wt103");
  EXPECT_EQ(ResourceIdFromDisplayName("3D-Net"), "m-3d-net");
  EXPECT_EQ(ResourceIdFromDisplayName("Tülu 3"), "t-lu-3");
  EXPECT_TRUE(IsValidResourceId(ResourceIdFromDisplayName(std::string(200, 'x') + "!")));
  EXPECT_TRUE(IsValidResourceId(ResourceIdFromDisplayName("")));
}

TEST(ResourceNamesTest, LookupKeyIgnoresCaseAndPunctuation) {
  EXPECT_EQ(LookupKey("Megatron-BERT"), LookupKey("megatron bert"));
  EXPECT_EQ(LookupKey("NVIDIA A100 SXM4 40 GB"), "nvidiaa100sxm440gb");
  EXPECT_NE(LookupKey("GPT-2"), LookupKey("GPT-3"));
  // Non-ASCII characters are kept; only ASCII case and punctuation go.
  EXPECT_EQ(LookupKey("悟道 2.0"), "悟道20");
  EXPECT_NE(LookupKey("日本語"), LookupKey("???"));
  EXPECT_NE(LookupKey("悟道 2.0"), LookupKey("2.0"));
  EXPECT_EQ(LookupKey("Ärger-Modell"), "Ärgermodell");
  EXPECT_EQ(LookupKey(""), "");
  EXPECT_EQ(LookupKey("-- . --"), "");
  // Longer than a string keeps in place.
  EXPECT_EQ(LookupKey("Llama 3.1 Nemotron Ultra 253B v1 (Instruct)"),
            "llama31nemotronultra253bv1instruct");
  // Every byte: an ASCII letter or digit lower-cased, a non-ASCII byte kept,
  // anything else dropped, wherever it stands.
  for (int value = 0; value < 256; ++value) {
    const char c = static_cast<char>(value);
    std::string expected;
    if (absl::ascii_isalnum(c)) {
      expected = std::string(1, absl::ascii_tolower(c));
    } else if (value >= 0x80) {
      expected = std::string(1, c);
    }
    EXPECT_EQ(LookupKey(std::string("a") + c + "Z"), "a" + expected + "z") << value;
  }
}

}  // namespace
}  // namespace modelatlas
