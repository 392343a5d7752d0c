// Bits per weight of each format (../shared/docs/REFERENCE.md section 4:
// GPTQ/AWQ 4-bit group 128 ~4.156, NF4 4.5, with double quantization 4.127,
// GGUF Q4_0 4.5, Q8_0 8.5, Q4_K 4.5, Q5_K 5.5, Q6_K 6.5625, Q2_K 2.625).
#include "estimator-service/core/number_format.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "common/records/bounds.h"
#include "estimator-service/core/inference_memory.h"

namespace modelatlas::estimator {
namespace {

double Bits(NumberFormat format, int group = 0) {
  return EncodingOf(format, group)->bits_per_element;
}

TEST(NumberFormatTest, BitsPerWeightMatchThePublishedLayouts) {
  EXPECT_EQ(Bits(NumberFormat::kBf16), 16);
  EXPECT_EQ(Bits(NumberFormat::kInt4), 4);
  EXPECT_NEAR(Bits(NumberFormat::kGptqInt4), 4.156, 0.001);
  EXPECT_NEAR(Bits(NumberFormat::kAwqInt4), 4.156, 0.001);
  EXPECT_EQ(Bits(NumberFormat::kGptqInt4, 32), 4 + 20.0 / 32);
  EXPECT_EQ(Bits(NumberFormat::kGptqInt8), 8 + 24.0 / 128);
  EXPECT_EQ(Bits(NumberFormat::kNf4), 4.5);
  EXPECT_NEAR(Bits(NumberFormat::kNf4DoubleQuant), 4.127, 0.001);
  EXPECT_EQ(Bits(NumberFormat::kGgufQ4_0), 4.5);
  EXPECT_EQ(Bits(NumberFormat::kGgufQ8_0), 8.5);
  EXPECT_EQ(Bits(NumberFormat::kGgufQ4K), 4.5);
  EXPECT_EQ(Bits(NumberFormat::kGgufQ5K), 5.5);
  EXPECT_EQ(Bits(NumberFormat::kGgufQ6K), 6.5625);
  EXPECT_EQ(Bits(NumberFormat::kGgufQ2K), 2.625);
  EXPECT_NEAR(Bits(NumberFormat::kGgufQ4KM), 4.9, 0.05);  // whole-file mix, Llama-3-8B
}

TEST(NumberFormatTest, BadGroupSizesAreRefused) {
  for (int group : {-1, 3, 100, 8192}) {
    EXPECT_EQ(EncodingOf(NumberFormat::kGptqInt4, group).status().code(),
              absl::StatusCode::kInvalidArgument)
        << group;
  }
  EXPECT_TRUE(EncodingOf(NumberFormat::kNf4, 3).ok());  // group size only matters for GPTQ/AWQ
}

TEST(NumberFormatTest, NamesRoundTrip) {
  for (NumberFormat format : {NumberFormat::kFp32, NumberFormat::kGptqInt4, NumberFormat::kNf4,
                              NumberFormat::kGgufQ4KM, NumberFormat::kGgufQ8_0}) {
    NumberFormat parsed;
    ASSERT_TRUE(ParseNumberFormat(NumberFormatName(format), &parsed));
    EXPECT_EQ(parsed, format);
  }
  NumberFormat ignored;
  EXPECT_FALSE(ParseNumberFormat("fp7", &ignored));
}

// The views the memory answer writes from are EncodingOf's and
// NumberFormatName's texts, format by format.
TEST(NumberFormatTest, FixedEncodingsAndNameViewsAreTheStringsOnes) {
  int fixed = 0;
  for (int f = 0; f <= static_cast<int>(NumberFormat::kFp8Block); ++f) {
    const auto format = static_cast<NumberFormat>(f);
    EXPECT_EQ(std::string(NumberFormatNameView(format)), NumberFormatName(format));
    absl::StatusOr<Encoding> encoding = EncodingOf(format);
    ASSERT_TRUE(encoding.ok()) << NumberFormatName(format);
    std::optional<FixedEncoding> view = FixedEncodingOf(format);
    const bool grouped = format == NumberFormat::kGptqInt4 || format == NumberFormat::kAwqInt4 ||
                         format == NumberFormat::kGptqInt8;
    ASSERT_EQ(view.has_value(), !grouped) << NumberFormatName(format);
    if (!view.has_value()) continue;
    ++fixed;
    EXPECT_EQ(view->bits_per_element, encoding->bits_per_element) << NumberFormatName(format);
    EXPECT_EQ(std::string(view->derivation), encoding->derivation) << NumberFormatName(format);
  }
  EXPECT_EQ(fixed, static_cast<int>(NumberFormat::kFp8Block) + 1 - 3);
}

TEST(NumberFormatTest, QuantizedFormatsCannotHoldTheKvCache) {
  InferenceMemoryInput input;
  input.parameters = 1e9;
  input.workload.kv_cache_format = NumberFormat::kGgufQ4KM;
  EXPECT_EQ(EstimateInferenceMemory(input).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NumberFormatTest, Llama3Q4KMWeights) {
  // 8,030,261,248 x 4.89 / 8 = 4,908,497,188 bytes (llama.cpp's file: about 4.92 GB).
  InferenceMemoryInput input;
  input.parameters = 8030261248;
  input.workload.weight_format = NumberFormat::kGgufQ4KM;
  auto estimate = EstimateInferenceMemory(input);
  ASSERT_TRUE(estimate.ok());
  EXPECT_NEAR(estimate->lines[0].bytes, 4.9085e9, 0.001e9);
  EXPECT_NE(estimate->lines[0].arithmetic.find("Q4_K_M"), std::string::npos);
}

// The catalog accepts these as Architecture.checkpoint_weight_format
// (common/records/bounds.h) and the estimator sizes a request that names no
// format in them: each must be a format this estimator names and sizes,
// with no group size or, for the grouped ones alone, with the checkpoint's.
TEST(NumberFormatTest, EveryCheckpointFormatTheCatalogAcceptsIsOneTheEstimatorSizes) {
  for (const char* name : records::kCheckpointWeightFormats) {
    NumberFormat format;
    ASSERT_TRUE(ParseNumberFormat(name, &format)) << name;
    EXPECT_EQ(NumberFormatNameView(format), name);
    const bool grouped = records::IsGroupedCheckpointWeightFormat(name);
    EXPECT_EQ(FixedEncodingOf(format).has_value(), !grouped || format == NumberFormat::kInt4)
        << name;
    for (int group : {1, 32, 128, 4096}) {
      EXPECT_TRUE(EncodingOf(format, group).ok()) << name << " in groups of " << group;
    }
  }
  // Every grouped one is a checkpoint format too.
  for (const char* name : records::kGroupedCheckpointWeightFormats) {
    EXPECT_TRUE(records::IsCheckpointWeightFormat(name)) << name;
  }
}

}  // namespace
}  // namespace modelatlas::estimator
