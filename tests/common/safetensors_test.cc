#include "common/formats/safetensors.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "absl/strings/match.h"

namespace modelatlas {
namespace {

// The 8-byte little-endian length, the header, then `data_bytes` of data.
std::string SafetensorsFile(const std::string& header, size_t data_bytes) {
  std::string out;
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += header;
  out.append(data_bytes, '\x01');
  return out;
}

// BF16 [2, 3] = 12 B, F32 [4] = 16 B, F4 [2, 2] = 2 B, I64 [] (a scalar) = 8 B.
constexpr char kHeader[] = R"({"b": {"dtype": "F32", "shape": [4], "data_offsets": [12, 28]},)"
                           R"( "a": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 12]},)"
                           R"( "__metadata__": {"format": "pt"},)"
                           R"( "c": {"dtype": "F4", "shape": [2, 2], "data_offsets": [28, 30]},)"
                           R"( "step": {"dtype": "I64", "shape": [], "data_offsets": [30, 38]}})";

TEST(SafetensorsTest, ReadsTensorsAndTotals) {
  absl::StatusOr<SafetensorsHeader> h = ParseSafetensorsHeader(kHeader);
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->tensors.size(), 4u);
  EXPECT_EQ(h->tensors[0].name, "a");  // in data order
  EXPECT_EQ(h->tensors[0].dtype, "BF16");
  EXPECT_EQ(h->tensors[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h->tensors[0].parameters, 6);
  EXPECT_EQ(h->tensors[0].bytes(), 12u);
  EXPECT_EQ(h->tensors[1].name, "b");
  EXPECT_EQ(h->tensors[1].bytes(), 16u);
  EXPECT_EQ(h->tensors[2].name, "c");
  EXPECT_EQ(h->tensors[2].parameters, 4);
  EXPECT_EQ(h->tensors[2].bytes(), 2u);
  EXPECT_EQ(h->tensors[3].name, "step");
  EXPECT_TRUE(h->tensors[3].shape.empty());
  EXPECT_EQ(h->tensors[3].parameters, 1);
  EXPECT_EQ(h->tensors[3].bytes(), 8u);

  EXPECT_EQ(h->parameters_by_dtype,
            (std::map<std::string, int64_t>{{"BF16", 6}, {"F32", 4}, {"F4", 4}, {"I64", 1}}));
  EXPECT_EQ(h->bytes_by_dtype,
            (std::map<std::string, uint64_t>{{"BF16", 12}, {"F32", 16}, {"F4", 2}, {"I64", 8}}));
  EXPECT_EQ(h->total_parameters, 15);
  EXPECT_EQ(h->total_bytes, 38u);
  EXPECT_EQ(h->metadata.at("format"), "pt");
  EXPECT_EQ(h->header_bytes, sizeof(kHeader) - 1);
}

// GPT-Neo's and GPT-NeoX's checkpoints store causal masks as BOOL tensors
// (gpt-neo-125m: six of 2,048 x 2,048, which make the Hub's total
// 150,364,416 where the weights are 125,198,592): counted apart.
TEST(SafetensorsTest, BoolMasksAreNotParameters) {
  absl::StatusOr<SafetensorsHeader> h = ParseSafetensorsHeader(
      R"({"w": {"dtype": "F16", "shape": [2, 2], "data_offsets": [0, 8]},)"
      R"( "h.1.attn.attention.bias": {"dtype": "BOOL", "shape": [1, 1, 3, 3],)"
      R"( "data_offsets": [8, 17]}})");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->total_parameters, 4);
  EXPECT_EQ(h->mask_elements, 9);
  EXPECT_EQ(h->total_bytes, 17u);
  EXPECT_EQ(h->parameters_by_dtype.at("BOOL"), 9);
}

TEST(SafetensorsTest, HeaderLengthFromTheFirstEightBytes) {
  const std::string file = SafetensorsFile(kHeader, 38);
  absl::StatusOr<uint64_t> n = SafetensorsHeaderLength(file);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, sizeof(kHeader) - 1);
  EXPECT_EQ(SafetensorsHeaderLength("1234567").status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(absl::StrContains(SafetensorsHeaderLength(std::string(8, '\0')).status().message(),
                                "header length is 0"));
  // 2^63: far above the 100 MiB limit.
  const std::string huge = std::string(7, '\0') + "\x80";
  absl::Status status = SafetensorsHeaderLength(huge).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "above the limit")) << status;

  absl::StatusOr<SafetensorsHeader> h = ParseSafetensorsFileStart(file);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->total_parameters, 15);
  absl::Status short_read = ParseSafetensorsFileStart(file.substr(0, 20)).status();
  EXPECT_EQ(short_read.code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(absl::StrContains(short_read.message(), std::to_string(8 + sizeof(kHeader) - 1)));
}

TEST(SafetensorsTest, ReadsALocalFileHeaderAndChecksItsLength) {
  const std::string path = ::testing::TempDir() + "/model.safetensors";
  auto write = [&](const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  };
  write(SafetensorsFile(kHeader, 38));
  absl::StatusOr<SafetensorsHeader> h = ReadSafetensorsFileHeader(path);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->total_bytes, 38u);
  write(SafetensorsFile(kHeader, 37));
  EXPECT_TRUE(absl::StrContains(ReadSafetensorsFileHeader(path).status().message(),
                                "the header describes"));
  write(SafetensorsFile(kHeader, 0).substr(0, 30));
  EXPECT_TRUE(absl::StrContains(ReadSafetensorsFileHeader(path).status().message(),
                                "beyond the file's end"));
  EXPECT_EQ(ReadSafetensorsFileHeader(path + ".missing").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(SafetensorsTest, DtypeBits) {
  EXPECT_EQ(SafetensorsDtypeBits("BF16"), 16);
  EXPECT_EQ(SafetensorsDtypeBits("F8_E4M3"), 8);
  EXPECT_EQ(SafetensorsDtypeBits("F6_E2M3"), 6);
  EXPECT_EQ(SafetensorsDtypeBits("F4"), 4);
  EXPECT_EQ(SafetensorsDtypeBits("C64"), 64);
  EXPECT_FALSE(SafetensorsDtypeBits("bf16").has_value());
}

void ExpectRefused(const std::string& json, const std::string& message) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<SafetensorsHeader> h = ParseSafetensorsHeader(json);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500)) << message;
  ASSERT_FALSE(h.ok()) << "accepted; expected: " << message;
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(h.status().message(), message)) << h.status();
  EXPECT_TRUE(absl::StrContains(h.status().message(), "safetensors_header")) << h.status();
}

TEST(SafetensorsTest, RefusesHostileHeaders) {
  ExpectRefused("", "does not start with '{'");
  ExpectRefused("[1, 2]", "does not start with '{'");
  ExpectRefused("{\"a\": ", "is not a JSON object");
  ExpectRefused(R"({"w": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 1]}})",
                "tensor \"w\": unknown dtype \"Q4\"");
  ExpectRefused(R"({"w": {"shape": [2], "data_offsets": [0, 4]}})",
                "tensor \"w\": missing \"dtype\"");
  ExpectRefused(R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", "missing \"shape\"");
  ExpectRefused(R"({"w": {"dtype": "F32", "shape": [2]}})", "missing \"data_offsets\"");
  ExpectRefused(R"({"w": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 10]}})",
                "non-negative whole number");
  ExpectRefused(R"({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})",
                "non-negative whole number");
  ExpectRefused(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})",
                "end before they begin");
  // Lying offsets: [2] F32 is 8 bytes, not 12.
  ExpectRefused(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 12]}})",
                "tensor \"w\": data_offsets [0, 12] span 12 bytes; shape x F32 needs 8");
  ExpectRefused(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 1e300]}})",
                "below 2^53");
  ExpectRefused(
      R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})",
      "more than 2^53 elements");
  ExpectRefused(R"({"w": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}})",
                "not a whole byte count");
  // Overlapping and gapped ranges.
  ExpectRefused(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                "tensor \"b\" data [4, 12) overlaps tensor \"a\" [0, 8)");
  ExpectRefused(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}})",
                "gaps are not allowed");
  ExpectRefused(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                "gaps are not allowed");
  ExpectRefused(R"({"__metadata__": {"n": 1}})", "__metadata__ \"n\" is not a string");
  // Deep nesting, refused before the recursive parser sees it.
  ExpectRefused("{\"a\": " + std::string(65, '[') + std::string(65, ']') + "}",
                "nests deeper than 64 levels");
  ExpectRefused("{\"a\": " + std::string(5'000'000, '['), "nests deeper than 64 levels");
  // Brackets inside strings do not count.
  absl::StatusOr<SafetensorsHeader> quoted =
      ParseSafetensorsHeader("{\"__metadata__\": {\"x\": \"" + std::string(100, '[') + "\\\"\"}}");
  EXPECT_TRUE(quoted.ok()) << quoted.status();
}

constexpr char kIndex[] = R"({
  "metadata": {"total_size": 76},
  "weight_map": {
    "model.embed.weight": "model-00001-of-00002.safetensors",
    "model.norm.weight": "model-00002-of-00002.safetensors",
    "lm_head.weight": "model-00002-of-00002.safetensors"
  }
})";

TEST(SafetensorsIndexTest, ReadsTotalSizeAndWeightMap) {
  absl::StatusOr<SafetensorsIndex> index = ParseSafetensorsIndex(kIndex);
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->total_size, 76u);
  EXPECT_EQ(index->weight_map.size(), 3u);
  EXPECT_EQ(index->weight_map.at("lm_head.weight"), "model-00002-of-00002.safetensors");
  EXPECT_EQ(index->shards, (std::vector<std::string>{"model-00001-of-00002.safetensors",
                                                     "model-00002-of-00002.safetensors"}));
}

TEST(SafetensorsIndexTest, RefusesBadIndexes) {
  auto refused = [](const std::string& json, const std::string& message) {
    absl::Status status = ParseSafetensorsIndex(json).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << json;
    EXPECT_TRUE(absl::StrContains(status.message(), message)) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "safetensors_index")) << status;
  };
  refused("{}", "missing \"weight_map\"");
  refused("not json", "is not a JSON object");
  refused(R"({"weight_map": {"w": "../../etc/passwd"}})", "unsafe path");
  refused(R"({"weight_map": {"w": "/abs.safetensors"}})", "unsafe path");
  refused(R"({"weight_map": {"w": 3}})", "is not a file name");
  refused(R"({"metadata": {"total_size": -1}, "weight_map": {"w": "a"}})", "total_size");
  refused(std::string(100, '[') + std::string(100, ']'), "nests deeper");
  absl::StatusOr<SafetensorsIndex> no_total =
      ParseSafetensorsIndex(R"({"weight_map": {"w": "a"}})");
  ASSERT_TRUE(no_total.ok());
  EXPECT_FALSE(no_total->total_size.has_value());
}

}  // namespace
}  // namespace modelatlas
