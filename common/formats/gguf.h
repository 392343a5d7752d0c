// Reads the header of a GGUF file (llama.cpp / ggml, versions 2 and 3,
// little-endian): metadata key/values and tensor infos, never tensor data.
// Spec: ggml-org/ggml docs/gguf.md; reference reader: ggml src/gguf.cpp.
//
// The parser works on a buffer that may hold only the file's beginning. When
// the header runs past its end, the result is incomplete and says how long a
// prefix is needed; a remote reader fetches that many bytes (better: at least
// twice what it has, since a vocabulary is many small strings) by a range
// request and tries again:
//
//   std::string prefix = Fetch(0, 1 << 20);
//   for (;;) {
//     absl::StatusOr<GgufParseResult> r = ParseGgufHeader(prefix);
//     if (!r.ok()) return r.status();          // malformed: give up
//     if (r->complete) return r->header;
//     prefix += Fetch(prefix.size(), std::max(r->bytes_needed, 2 * prefix.size()));
//   }
//
// Hostile input is refused with INVALID_ARGUMENT (field "gguf_header"): counts
// that could not fit kMaxGgufHeaderBytes, string lengths and offsets beyond it,
// arrays nested deeper than kMaxGgufArrayDepth, element counts or tensor sizes
// that overflow 64 bits, unknown ggml types, misaligned or overlapping data.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace modelatlas {

// Longest header (metadata + tensor infos) accepted; a large vocabulary with
// its merges is ~10 MiB.
inline constexpr uint64_t kMaxGgufHeaderBytes = 256ull << 20;
// Arrays of arrays nested deeper than this are refused.
inline constexpr int kMaxGgufArrayDepth = 8;
// Numeric arrays up to this length keep their elements (per-layer head counts).
inline constexpr uint64_t kMaxGgufKeptArrayElements = 4096;
inline constexpr uint32_t kGgufDefaultAlignment = 32;

// GGUF metadata value types (gguf_metadata_value_type).
enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// An array: its element type and length; numeric elements are kept when the
// array has at most kMaxGgufKeptArrayElements (strings and nested arrays are
// only counted).
struct GgufArray {
  GgufValueType element_type = GgufValueType::kUint8;
  uint64_t length = 0;
  std::vector<double> numbers;  // empty unless numeric and short
};

// One metadata value: unsigned and signed integers, floats, bool, string, array.
using GgufValue = std::variant<uint64_t, int64_t, double, bool, std::string, GgufArray>;

struct GgufTensorInfo {
  std::string name;
  uint32_t ggml_type = 0;
  std::string type_name;       // ggml's name: "f32", "q4_K", "iq2_xxs", ...
  std::vector<uint64_t> dims;  // ne[0] (the row) first, as in the file
  uint64_t elements = 0;
  uint64_t bytes = 0;   // from ggml's block size and type size
  uint64_t offset = 0;  // relative to the start of the data section
};

// The architecture figures a memory estimate needs; absent keys are nullopt.
struct GgufModelMetadata {
  std::string architecture;  // general.architecture
  std::string name;          // general.name
  std::optional<int64_t> block_count;
  std::optional<int64_t> embedding_length;
  std::optional<int64_t> feed_forward_length;  // the largest when per layer
  std::optional<int64_t> head_count;           // the largest when per layer
  std::optional<int64_t> head_count_kv;        // the largest when per layer
  std::optional<int64_t> context_length;
  std::optional<int64_t> expert_count;
  std::optional<int64_t> expert_used_count;
  std::optional<int64_t> key_length;  // {arch}.attention.key_length
  std::optional<int64_t> vocab_size;  // length of tokenizer.ggml.tokens
  std::optional<int64_t> file_type;   // general.file_type (llama_ftype)
  std::string file_type_name;         // "Q4_K_M", ... (GgufFileTypeName)
};

struct GgufHeader {
  uint32_t version = 0;
  uint32_t alignment = kGgufDefaultAlignment;
  std::map<std::string, GgufValue> metadata;
  GgufModelMetadata model;
  std::vector<GgufTensorInfo> tensors;               // in file order
  std::map<std::string, uint64_t> bytes_by_type;     // by type_name
  std::map<std::string, uint64_t> elements_by_type;  // by type_name
  uint64_t total_elements = 0;                       // parameters
  uint64_t total_bytes = 0;                          // sum of tensor bytes
  uint64_t data_offset = 0;                          // where the data section starts in the file
  uint64_t file_bytes = 0;                           // data_offset + end of the last tensor's data

  // Typed look-ups; nullopt when the key is absent or of another kind.
  std::optional<int64_t> GetInt(absl::string_view key) const;  // any integer type, in range
  std::optional<std::string> GetString(absl::string_view key) const;
  const GgufArray* GetArray(absl::string_view key) const;
};

struct GgufParseResult {
  // True when `header` is whole; false when the buffer ended first, and
  // then the header needs a prefix of at least `bytes_needed` bytes.
  bool complete = false;
  uint64_t bytes_needed = 0;
  GgufHeader header;  // only when complete
};

// ggml's block size (elements) and type size (bytes per block) for a ggml
// type id; nullopt for removed or unknown ids.
struct GgmlTypeTraits {
  const char* name;
  uint32_t block_size;
  uint32_t type_size;
};
std::optional<GgmlTypeTraits> GgmlTypeInfo(uint32_t ggml_type);

// llama.cpp's name of a general.file_type value (enum llama_ftype without
// its LLAMA_FTYPE_[MOSTLY_] prefix: "F32", "Q4_K_M", "IQ2_XXS", "MXFP4_MOE");
// empty for values this table does not know.
std::string GgufFileTypeName(int64_t file_type);

// Parses the header from a buffer holding the file's first bytes.
absl::StatusOr<GgufParseResult> ParseGgufHeader(absl::string_view file_prefix);

// Reads a local file's header, a growing prefix at a time (never the data);
// NOT_FOUND when the file does not exist, INVALID_ARGUMENT when it ends
// before its header does.
absl::StatusOr<GgufHeader> ReadGgufFileHeader(const std::string& path);

}  // namespace modelatlas
