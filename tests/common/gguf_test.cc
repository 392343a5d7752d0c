#include "common/formats/gguf.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "absl/strings/match.h"

namespace modelatlas {
namespace {

// Writes GGUF bytes field by field (little-endian), as the format says.
class GgufBytes {
 public:
  GgufBytes& U8(uint8_t v) { return Le(v, 1); }
  GgufBytes& U32(uint32_t v) { return Le(v, 4); }
  GgufBytes& U64(uint64_t v) { return Le(v, 8); }
  GgufBytes& Str(const std::string& s) {
    U64(s.size());
    out_ += s;
    return *this;
  }
  GgufBytes& Raw(const std::string& s) {
    out_ += s;
    return *this;
  }
  GgufBytes& Header(uint32_t version, uint64_t tensors, uint64_t kvs) {
    return Raw("GGUF").U32(version).U64(tensors).U64(kvs);
  }
  GgufBytes& KvString(const std::string& key, const std::string& value) {
    return Str(key).U32(8).Str(value);
  }
  GgufBytes& KvU32(const std::string& key, uint32_t value) { return Str(key).U32(4).U32(value); }
  GgufBytes& KvU64(const std::string& key, uint64_t value) { return Str(key).U32(10).U64(value); }
  GgufBytes& KvStrings(const std::string& key, const std::vector<std::string>& values) {
    Str(key).U32(9).U32(8).U64(values.size());
    for (const std::string& v : values) Str(v);
    return *this;
  }
  GgufBytes& KvU32s(const std::string& key, const std::vector<uint32_t>& values) {
    Str(key).U32(9).U32(4).U64(values.size());
    for (uint32_t v : values) U32(v);
    return *this;
  }
  GgufBytes& Tensor(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type,
                    uint64_t offset) {
    Str(name).U32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) U64(d);
    return U32(type).U64(offset);
  }
  const std::string& str() const { return out_; }
  size_t size() const { return out_.size(); }

 private:
  GgufBytes& Le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  std::string out_;
};

// A small llama-style header: 4 tensors of 4 types, 32-byte alignment.
std::string LlamaHeader() {
  GgufBytes b;
  b.Header(3, 4, 12)
      .KvString("general.architecture", "llama")
      .KvString("general.name", "tiny")
      .KvU32("general.alignment", 32)
      .KvU32("llama.block_count", 2)
      .KvU32("llama.embedding_length", 64)
      .KvU32("llama.feed_forward_length", 128)
      .KvU32("llama.attention.head_count", 4)
      .KvU32s("llama.attention.head_count_kv", {2, 1})  // per layer
      .KvU64("llama.context_length", 4096)
      .KvU32("llama.attention.key_length", 16)
      .KvStrings("tokenizer.ggml.tokens", {"<s>", "</s>", "a", "b", "c"})
      .KvU32("general.file_type", 15)
      // 256 x 5 q4_K = 5 blocks of 144 B = 720 B at 0
      .Tensor("token_embd.weight", {256, 5}, 12, 0)
      // 64 x 64 f16 = 8192 B at 736 (720 rounded up to 32)
      .Tensor("blk.0.attn_q.weight", {64, 64}, 1, 736)
      // 64 f32 = 256 B at 8928
      .Tensor("output_norm.weight", {64}, 0, 8928)
      // 64 x 2 q8_0 = 4 blocks of 34 B = 136 B at 9184
      .Tensor("output.weight", {64, 2}, 8, 9184);
  return b.str();
}

TEST(GgufTest, ReadsMetadataTensorsAndTotals) {
  const std::string bytes = LlamaHeader();
  absl::StatusOr<GgufParseResult> r = ParseGgufHeader(bytes);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->complete);
  const GgufHeader& h = r->header;
  EXPECT_EQ(h.version, 3u);
  EXPECT_EQ(h.alignment, 32u);
  EXPECT_EQ(h.model.architecture, "llama");
  EXPECT_EQ(h.model.name, "tiny");
  EXPECT_EQ(h.model.block_count, 2);
  EXPECT_EQ(h.model.embedding_length, 64);
  EXPECT_EQ(h.model.feed_forward_length, 128);
  EXPECT_EQ(h.model.head_count, 4);
  EXPECT_EQ(h.model.head_count_kv, 2);  // the largest per-layer value
  EXPECT_EQ(h.model.context_length, 4096);
  EXPECT_EQ(h.model.key_length, 16);
  EXPECT_EQ(h.model.vocab_size, 5);
  EXPECT_EQ(h.model.file_type, 15);
  EXPECT_EQ(h.model.file_type_name, "Q4_K_M");
  EXPECT_FALSE(h.model.expert_count.has_value());
  EXPECT_FALSE(h.model.expert_used_count.has_value());

  ASSERT_EQ(h.tensors.size(), 4u);
  EXPECT_EQ(h.tensors[0].name, "token_embd.weight");
  EXPECT_EQ(h.tensors[0].type_name, "q4_K");
  EXPECT_EQ(h.tensors[0].dims, (std::vector<uint64_t>{256, 5}));
  EXPECT_EQ(h.tensors[0].elements, 1280u);
  EXPECT_EQ(h.tensors[0].bytes, 720u);
  EXPECT_EQ(h.tensors[1].type_name, "f16");
  EXPECT_EQ(h.tensors[1].bytes, 8192u);
  EXPECT_EQ(h.tensors[2].type_name, "f32");
  EXPECT_EQ(h.tensors[2].bytes, 256u);
  EXPECT_EQ(h.tensors[3].type_name, "q8_0");
  EXPECT_EQ(h.tensors[3].bytes, 136u);

  EXPECT_EQ(h.bytes_by_type.at("q4_K"), 720u);
  EXPECT_EQ(h.bytes_by_type.at("f16"), 8192u);
  EXPECT_EQ(h.bytes_by_type.at("f32"), 256u);
  EXPECT_EQ(h.bytes_by_type.at("q8_0"), 136u);
  EXPECT_EQ(h.elements_by_type.at("q4_K"), 1280u);
  EXPECT_EQ(h.total_bytes, 720u + 8192u + 256u + 136u);
  EXPECT_EQ(h.total_elements, 1280u + 4096u + 64u + 128u);
  EXPECT_EQ(h.data_offset % 32, 0u);
  EXPECT_GE(h.data_offset, bytes.size());
  EXPECT_LT(h.data_offset, bytes.size() + 32);
  EXPECT_EQ(h.file_bytes, h.data_offset + 9184 + 136);
}

TEST(GgufTest, VersionTwoAndDefaultAlignment) {
  GgufBytes b;
  b.Header(2, 2, 1).KvString("general.architecture", "qwen2");
  b.Tensor("a", {32}, 2, 0);      // q4_0: 18 B
  b.Tensor("b", {8, 2}, 30, 32);  // bf16: 32 B at the next multiple of 32
  absl::StatusOr<GgufParseResult> r = ParseGgufHeader(b.str());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->complete);
  EXPECT_EQ(r->header.alignment, 32u);
  EXPECT_EQ(r->header.tensors[0].bytes, 18u);
  EXPECT_EQ(r->header.tensors[1].bytes, 32u);
  EXPECT_EQ(r->header.total_elements, 48u);
}

// The block sizes the brief lists, checked against the table (which cites ggml).
TEST(GgufTest, GgmlTypeSizes) {
  struct Row {
    uint32_t id;
    const char* name;
    uint32_t block, bytes;
  };
  const Row rows[] = {
      {0, "f32", 1, 4},        {1, "f16", 1, 2},         {30, "bf16", 1, 2},
      {2, "q4_0", 32, 18},     {3, "q4_1", 32, 20},      {6, "q5_0", 32, 22},
      {7, "q5_1", 32, 24},     {8, "q8_0", 32, 34},      {10, "q2_K", 256, 84},
      {11, "q3_K", 256, 110},  {12, "q4_K", 256, 144},   {13, "q5_K", 256, 176},
      {14, "q6_K", 256, 210},  {15, "q8_K", 256, 292},   {16, "iq2_xxs", 256, 66},
      {17, "iq2_xs", 256, 74}, {22, "iq2_s", 256, 82},   {18, "iq3_xxs", 256, 98},
      {21, "iq3_s", 256, 110}, {19, "iq1_s", 256, 50},   {29, "iq1_m", 256, 56},
      {20, "iq4_nl", 32, 18},  {23, "iq4_xs", 256, 136}, {24, "i8", 1, 1},
      {25, "i16", 1, 2},       {26, "i32", 1, 4},        {27, "i64", 1, 8},
      {28, "f64", 1, 8},       {39, "mxfp4", 32, 17},
  };
  for (const Row& row : rows) {
    std::optional<GgmlTypeTraits> t = GgmlTypeInfo(row.id);
    ASSERT_TRUE(t.has_value()) << row.name;
    EXPECT_STREQ(t->name, row.name);
    EXPECT_EQ(t->block_size, row.block) << row.name;
    EXPECT_EQ(t->type_size, row.bytes) << row.name;
  }
  for (uint32_t removed : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 43u, 1000u}) {
    EXPECT_FALSE(GgmlTypeInfo(removed).has_value()) << removed;
  }
}

TEST(GgufTest, FileTypeNames) {
  EXPECT_EQ(GgufFileTypeName(0), "F32");
  EXPECT_EQ(GgufFileTypeName(1), "F16");
  EXPECT_EQ(GgufFileTypeName(7), "Q8_0");
  EXPECT_EQ(GgufFileTypeName(18), "Q6_K");
  EXPECT_EQ(GgufFileTypeName(32), "BF16");
  EXPECT_EQ(GgufFileTypeName(4), "");
  EXPECT_EQ(GgufFileTypeName(-1), "");
}

// Every prefix shorter than the header asks for more, never fails, and the
// number it asks for is reachable; fetching as asked converges.
TEST(GgufTest, ShortPrefixesAskForMoreBytes) {
  const std::string bytes = LlamaHeader();
  for (size_t n = 0; n < bytes.size(); ++n) {
    absl::StatusOr<GgufParseResult> r = ParseGgufHeader(absl::string_view(bytes).substr(0, n));
    ASSERT_TRUE(r.ok()) << n << ": " << r.status();
    ASSERT_FALSE(r->complete) << n;
    EXPECT_GT(r->bytes_needed, n);
    EXPECT_LE(r->bytes_needed, bytes.size());
  }
  size_t have = 3;
  int rounds = 0;
  for (;; ++rounds) {
    absl::StatusOr<GgufParseResult> r = ParseGgufHeader(absl::string_view(bytes).substr(0, have));
    ASSERT_TRUE(r.ok());
    if (r->complete) break;
    have = r->bytes_needed;
  }
  EXPECT_EQ(have, bytes.size());
  EXPECT_GT(rounds, 10);
}

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(GgufTest, ReadsALocalFileWithABigVocabulary) {
  // 200,000 tokens: a header of ~3 MB, past the first 1 MiB read.
  std::vector<std::string> tokens;
  for (int i = 0; i < 200000; ++i) tokens.push_back("tok" + std::to_string(i));
  GgufBytes b;
  b.Header(3, 1, 2)
      .KvString("general.architecture", "llama")
      .KvStrings("tokenizer.ggml.tokens", tokens);
  b.Tensor("token_embd.weight", {32, 200000}, 2, 0);  // q4_0: 200,000 blocks of 18 B
  std::string file = b.str();
  file.resize((file.size() + 31) / 32 * 32 + 200000 * 18, '\0');
  const std::string path = TempPath("vocab.gguf");
  WriteFile(path, file);
  absl::StatusOr<GgufHeader> h = ReadGgufFileHeader(path);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->model.vocab_size, 200000);
  EXPECT_EQ(h->total_bytes, 3600000u);
  EXPECT_EQ(h->file_bytes, file.size());

  // The same file cut short inside its data, and inside its header.
  WriteFile(path, file.substr(0, file.size() - 1));
  EXPECT_TRUE(absl::StrContains(ReadGgufFileHeader(path).status().message(), "tensors end"));
  WriteFile(path, file.substr(0, 2000000));
  absl::Status cut = ReadGgufFileHeader(path).status();
  EXPECT_EQ(cut.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(cut.message(), "ends inside its header")) << cut;
  EXPECT_EQ(ReadGgufFileHeader(TempPath("missing.gguf")).status().code(),
            absl::StatusCode::kNotFound);
}

// Hostile headers: each is refused with INVALID_ARGUMENT naming the problem,
// at once (no allocation by an untrusted count, no loop over one).
void ExpectRefused(const std::string& bytes, const std::string& message) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<GgufParseResult> r = ParseGgufHeader(bytes);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::milliseconds(100)) << message;
  ASSERT_FALSE(r.ok()) << "accepted; expected: " << message;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), message)) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "gguf_header")) << r.status();
}

TEST(GgufTest, RefusesHostileHeaders) {
  ExpectRefused("GGML", "magic");
  ExpectRefused("XX", "magic");
  ExpectRefused(GgufBytes().Header(1, 0, 0).str(), "version 1 is not supported");
  ExpectRefused(GgufBytes().Header(4, 0, 0).str(), "version 4");
  ExpectRefused(GgufBytes().Raw("GGUF").U32(0x03000000).str(), "big-endian");
  ExpectRefused(GgufBytes().Header(3, uint64_t{1} << 62, 0).str(), "tensor count");
  ExpectRefused(GgufBytes().Header(3, 0, ~uint64_t{0}).str(), "key/value count");
  // A key whose length is beyond any header.
  ExpectRefused(GgufBytes().Header(3, 0, 1).U64(~uint64_t{0}).str(), "metadata key");
  ExpectRefused(GgufBytes().Header(3, 0, 1).Str("k").U32(8).U64(uint64_t{1} << 62).str(),
                "bytes long");
  // An array of 2^61 u64 elements: the byte count would overflow.
  ExpectRefused(GgufBytes().Header(3, 0, 1).Str("k").U32(9).U32(10).U64(uint64_t{1} << 61).str(),
                "array element count");
  ExpectRefused(GgufBytes().Header(3, 0, 1).Str("k").U32(9).U32(99).U64(1).str(),
                "unknown array element type");
  ExpectRefused(GgufBytes().Header(3, 0, 1).Str("k").U32(42).str(), "unknown value type 42");
  ExpectRefused(GgufBytes().Header(3, 0, 1).Str("k").U32(7).U8(2).str(), "bool value 2");
  ExpectRefused(GgufBytes().Header(3, 0, 2).KvU32("k", 1).KvU32("k", 2).str(),
                "duplicate metadata key");
  ExpectRefused(GgufBytes().Header(3, 0, 1).KvU32("general.alignment", 24).str(),
                "not a power of two");
  ExpectRefused(GgufBytes().Header(3, 0, 1).KvU64("general.alignment", 32).str(),
                "must be a uint32");

  auto one_tensor = [](const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset) {
    return GgufBytes().Header(3, 1, 0).Tensor("t", dims, type, offset).str();
  };
  ExpectRefused(one_tensor({32}, 4, 0), "unknown or removed ggml type 4");
  ExpectRefused(one_tensor({32}, 77, 0), "unknown or removed ggml type 77");
  ExpectRefused(one_tensor({1, 2, 3, 4, 5}, 0, 0), "5 dimensions");
  ExpectRefused(one_tensor({uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0), "overflows");
  ExpectRefused(one_tensor({~uint64_t{0}}, 0, 0), "dimension 0");
  ExpectRefused(one_tensor({uint64_t{1} << 62}, 0, 0), "byte size overflows");
  ExpectRefused(one_tensor({33}, 2, 0), "not whole q4_0 blocks");
  ExpectRefused(one_tensor({32}, 0, 16), "not a multiple of the alignment");
  ExpectRefused(one_tensor({8}, 0, ~uint64_t{0} - 31), "overflows 64 bits");
  ExpectRefused(GgufBytes().Header(3, 1, 0).Str(std::string(64, 'n')).str(), "tensor name");
  ExpectRefused(GgufBytes().Header(3, 2, 0).Tensor("a", {64}, 0, 0).Tensor("a", {64}, 0, 256).str(),
                "duplicate tensor name");
  // Lying offsets: b starts inside a's 256 bytes.
  ExpectRefused(GgufBytes().Header(3, 2, 0).Tensor("a", {64}, 0, 0).Tensor("b", {64}, 0, 224).str(),
                "overlaps tensor \"a\"");
}

TEST(GgufTest, BoundsArrayNesting) {
  auto nested = [](int depth) {
    GgufBytes b;
    b.Header(3, 0, 1).Str("k").U32(9);
    for (int i = 1; i < depth; ++i) b.U32(9).U64(1);  // an array of one array
    b.U32(4).U64(1).U32(7);                           // ... of one u32
    return b.str();
  };
  absl::StatusOr<GgufParseResult> ok = ParseGgufHeader(nested(kMaxGgufArrayDepth));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->complete);
  ExpectRefused(nested(kMaxGgufArrayDepth + 1), "nested deeper than 8");
  ExpectRefused(nested(100000), "nested deeper than 8");
}

// A header that says "a million strings" but ends early is not an error: it
// asks for more, and never for more than the header limit.
TEST(GgufTest, TruncatedCountsAskForMoreWithinTheLimit) {
  const std::string bytes =
      GgufBytes().Header(3, 0, 1).Str("tokenizer.ggml.tokens").U32(9).U32(8).U64(1000000).str();
  absl::StatusOr<GgufParseResult> r = ParseGgufHeader(bytes);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(r->bytes_needed, bytes.size() + 8);
}

}  // namespace
}  // namespace modelatlas
