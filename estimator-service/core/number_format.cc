#include "estimator-service/core/number_format.h"

#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/errors.h"

namespace modelatlas::estimator {
namespace {

// Names and derivations as string_views: their lengths are known at compile
// time (answers copy them into texts, no strlen).
struct FormatInfo {
  NumberFormat format;
  absl::string_view name;
  double bits;  // fixed bits per element; 0 = depends on the group size
  absl::string_view derivation;
};

// Block layouts: llama.cpp ggml-common.h (block_q4_0: 32 weights in 18 bytes,
// block_q4_K: 256 weights in 144 bytes, ...); bitsandbytes NF4 blocks of 64
// with an fp32 absmax (double quantization: 8-bit absmax plus one fp32
// constant per 256 blocks); whole-file GGUF mixes as llama.cpp's quantize
// tool reports them for Llama-3-8B.
constexpr FormatInfo kFormats[] = {
    {NumberFormat::kFp32, "fp32", 32, "32-bit float"},
    {NumberFormat::kFp16, "fp16", 16, "16-bit float"},
    {NumberFormat::kBf16, "bf16", 16, "bfloat16"},
    {NumberFormat::kFp8, "fp8", 8, "8-bit float"},
    {NumberFormat::kInt8, "int8", 8, "8-bit integer"},
    {NumberFormat::kInt4, "int4", 4, "4-bit integer, no scales"},
    {NumberFormat::kGptqInt4, "gptq-int4", 0, {}},
    {NumberFormat::kAwqInt4, "awq-int4", 0, {}},
    {NumberFormat::kGptqInt8, "gptq-int8", 0, {}},
    {NumberFormat::kNf4, "nf4", 4.5, "4 bits + 32-bit absmax / 64-weight block"},
    {NumberFormat::kNf4DoubleQuant, "nf4-double-quant", 4 + 8.0 / 64 + 32.0 / (64 * 256),
     "4 bits + 8-bit absmax / 64-weight block + 32-bit constant / (64 x 256) weights"},
    {NumberFormat::kGgufQ2K, "gguf-q2_k", 2.625, "block_q2_K: 84 bytes / 256 weights"},
    {NumberFormat::kGgufQ3K, "gguf-q3_k", 3.4375, "block_q3_K: 110 bytes / 256 weights"},
    {NumberFormat::kGgufQ4_0, "gguf-q4_0", 4.5, "block_q4_0: 18 bytes / 32 weights"},
    {NumberFormat::kGgufQ4K, "gguf-q4_k", 4.5, "block_q4_K: 144 bytes / 256 weights"},
    {NumberFormat::kGgufQ5K, "gguf-q5_k", 5.5, "block_q5_K: 176 bytes / 256 weights"},
    {NumberFormat::kGgufQ6K, "gguf-q6_k", 6.5625, "block_q6_K: 210 bytes / 256 weights"},
    {NumberFormat::kGgufQ8_0, "gguf-q8_0", 8.5, "block_q8_0: 34 bytes / 32 weights"},
    {NumberFormat::kGgufQ3KM, "gguf-q3_k_m", 4.00,
     "Q3_K_M file mix, about 4.00 bits per weight (llama.cpp's per-tensor types, Llama-3-8B)"},
    {NumberFormat::kGgufQ4KM, "gguf-q4_k_m", 4.89,
     "Q4_K_M file mix, about 4.89 bits per weight (llama.cpp, Llama-3-8B)"},
    {NumberFormat::kGgufQ5KM, "gguf-q5_k_m", 5.70,
     "Q5_K_M file mix, about 5.70 bits per weight (llama.cpp, Llama-3-8B)"},
    {NumberFormat::kGgufIq2Xxs, "gguf-iq2_xxs", 2.0625, "block_iq2_xxs: 66 bytes / 256 weights"},
    {NumberFormat::kGgufIq2Xs, "gguf-iq2_xs", 2.3125, "block_iq2_xs: 74 bytes / 256 weights"},
    {NumberFormat::kGgufIq3Xxs, "gguf-iq3_xxs", 3.0625, "block_iq3_xxs: 98 bytes / 256 weights"},
    {NumberFormat::kGgufIq4Xs, "gguf-iq4_xs", 4.25, "block_iq4_xs: 136 bytes / 256 weights"},
    {NumberFormat::kGgufIq4Nl, "gguf-iq4_nl", 4.5, "block_iq4_nl: 18 bytes / 32 weights"},
    {NumberFormat::kMxfp4, "mxfp4", 4.25,
     "4-bit E2M1 + 8-bit E8M0 scale / 32-weight block (OCP MX)"},
    {NumberFormat::kNvfp4, "nvfp4", 4.5, "4-bit E2M1 + FP8 E4M3 scale / 16-weight block"},
    {NumberFormat::kFp8Block, "fp8-block128", 8 + 32.0 / (128 * 128),
     "8-bit float + fp32 scale / 128x128 block"},
};

// The table is in the enum's order, so a format's entry is found by its
// value (every answer names two or three formats per call).
constexpr bool InEnumOrder() {
  for (size_t i = 0; i < std::size(kFormats); ++i) {
    if (static_cast<size_t>(kFormats[i].format) != i) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kFormats lists the formats in NumberFormat's order");

const FormatInfo& InfoOf(NumberFormat format) {
  const auto index = static_cast<size_t>(format);
  return index < std::size(kFormats) ? kFormats[index] : kFormats[0];
}

}  // namespace

absl::StatusOr<Encoding> EncodingOf(NumberFormat format, int group_size) {
  const FormatInfo& info = InfoOf(format);
  if (info.bits > 0) return Encoding{info.bits, std::string(info.derivation)};
  const int group = group_size == 0 ? 128 : group_size;
  if (group < 1 || group > 4096 || (group & (group - 1)) != 0) {
    return InvalidFieldError(
        "quantization_group_size",
        absl::StrCat("must be a power of two from 1 to 4096, got ", group_size));
  }
  // GPTQ/AWQ: a 16-bit scale and a zero point of the weight width per group.
  const int weight_bits = format == NumberFormat::kGptqInt8 ? 8 : 4;
  const int per_group = 16 + weight_bits;
  return Encoding{weight_bits + static_cast<double>(per_group) / group,
                  absl::StrCat(weight_bits, " bits + (16-bit scale + ", weight_bits,
                               "-bit zero) / ", group, "-weight group")};
}

std::optional<FixedEncoding> FixedEncodingOf(NumberFormat format) {
  const FormatInfo& info = InfoOf(format);
  if (!(info.bits > 0)) return std::nullopt;
  return FixedEncoding{info.bits, info.derivation};
}

double BitsPerElement(NumberFormat format) {
  return IsPlainFormat(format) ? InfoOf(format).bits : 0;
}

std::string NumberFormatName(NumberFormat format) { return std::string(InfoOf(format).name); }

absl::string_view NumberFormatNameView(NumberFormat format) { return InfoOf(format).name; }

bool ParseNumberFormat(absl::string_view text, NumberFormat* format) {
  const std::string lower = absl::AsciiStrToLower(text);
  for (const FormatInfo& info : kFormats) {
    if (lower == info.name) {
      *format = info.format;
      return true;
    }
  }
  return false;
}

bool IsPlainFormat(NumberFormat format) {
  switch (format) {
    case NumberFormat::kFp32:
    case NumberFormat::kFp16:
    case NumberFormat::kBf16:
    case NumberFormat::kFp8:
    case NumberFormat::kInt8:
    case NumberFormat::kInt4:
      return true;
    default:
      return false;
  }
}

}  // namespace modelatlas::estimator
