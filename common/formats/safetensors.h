// Reads the header of a safetensors file (https://github.com/huggingface/safetensors)
// and the model.safetensors.index.json of a sharded checkpoint, without ever
// reading tensor data.
//
// A safetensors file is: 8 bytes, a little-endian u64 N; an N-byte JSON object
//   {"<tensor>": {"dtype": "BF16", "shape": [d0, d1, ...], "data_offsets": [begin, end]},
//    ..., "__metadata__": {"<key>": "<string>", ...}}
// then the data, where [begin, end) is relative to the end of the header.
// Remotely: fetch bytes [0, 8), SafetensorsHeaderLength() gives N, then fetch
// [8, 8 + N) and hand it to ParseSafetensorsHeader().
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/formats/json_depth.h"

namespace modelatlas {

// Length of the header-length prefix.
inline constexpr uint64_t kSafetensorsPrefixBytes = 8;
// Largest header accepted (the format's reference reader also stops at 100 MB).
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100ull << 20;
// Deepest JSON nesting accepted (checked before parsing).
inline constexpr int kMaxSafetensorsJsonDepth = 64;
// Longest model.safetensors.index.json accepted.
inline constexpr uint64_t kMaxSafetensorsIndexBytes = 64ull << 20;

struct SafetensorsTensor {
  std::string name;
  std::string dtype;           // as written: "BF16", "F32", "F8_E4M3", ...
  std::vector<int64_t> shape;  // empty for a scalar
  int64_t parameters = 0;      // product of shape (1 for a scalar)
  uint64_t begin = 0;          // data_offsets, relative to the end of the header
  uint64_t end = 0;
  uint64_t bytes() const { return end - begin; }
};

struct SafetensorsHeader {
  uint64_t header_bytes = 0;                    // N (the JSON's length)
  std::vector<SafetensorsTensor> tensors;       // in data order
  std::map<std::string, std::string> metadata;  // "__metadata__"
  std::map<std::string, int64_t> parameters_by_dtype;
  std::map<std::string, uint64_t> bytes_by_dtype;
  // Every tensor's elements but BOOL ones: a BOOL tensor is a mask stored
  // beside the weights (GPT-Neo's and GPT-NeoX's causal attention masks),
  // no parameter; its elements are in mask_elements (and bytes in
  // total_bytes).
  int64_t total_parameters = 0;
  int64_t mask_elements = 0;
  uint64_t total_bytes = 0;  // of tensor data, = the file's size - 8 - N
};

// Bits per element of a safetensors dtype ("F4" is 4, "F6_E2M3" 6, "BF16" 16);
// nullopt for a dtype this reader does not know.
std::optional<int> SafetensorsDtypeBits(absl::string_view dtype);

// N from the file's first 8 bytes (at least 8 must be given; more are ignored).
// INVALID_ARGUMENT (field "safetensors_header") when N is 0, or above
// kMaxSafetensorsHeaderBytes.
absl::StatusOr<uint64_t> SafetensorsHeaderLength(absl::string_view first_bytes);

// Parses the N-byte JSON header. INVALID_ARGUMENT (field "safetensors_header")
// naming the tensor for: malformed JSON, nesting deeper than
// kMaxSafetensorsJsonDepth, an unknown dtype, a shape whose size does not
// match data_offsets, overlapping or non-contiguous data ranges.
absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(absl::string_view json);

// Parses a buffer that starts at the file's first byte and holds at least
// 8 + N bytes (the data after the header is not looked at). OUT_OF_RANGE
// naming the length needed when the buffer is shorter.
absl::StatusOr<SafetensorsHeader> ParseSafetensorsFileStart(absl::string_view bytes);

// Reads the header of a local file (8 + N bytes, never the data) and checks
// that the file is as long as the header says. NOT_FOUND when the file does
// not exist.
absl::StatusOr<SafetensorsHeader> ReadSafetensorsFileHeader(const std::string& path);

// model.safetensors.index.json: {"metadata": {"total_size": bytes},
// "weight_map": {"<tensor>": "<shard file>", ...}}.
struct SafetensorsIndex {
  std::optional<uint64_t> total_size;             // metadata.total_size, bytes
  std::map<std::string, std::string> weight_map;  // tensor -> shard file name
  std::vector<std::string> shards;                // distinct shard files, sorted
};

// INVALID_ARGUMENT (field "safetensors_index") for malformed JSON, a missing
// or empty weight_map, a shard name that is not a plain relative path
// (no "..", no leading "/"), or a negative/fractional total_size.
absl::StatusOr<SafetensorsIndex> ParseSafetensorsIndex(absl::string_view json);

}  // namespace modelatlas
