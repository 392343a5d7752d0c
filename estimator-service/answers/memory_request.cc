#include "estimator-service/answers/memory_request.h"

#include <cstdint>
#include <cstring>

namespace modelatlas::estimator {
namespace {

// Protobuf's wire format (https://protobuf.dev/programming-guides/encoding/):
// a tag is a varint of (field number << 3 | wire type).
constexpr uint32_t kVarint = 0;
constexpr uint32_t kLengthDelimited = 2;

// A varint of at most `max_bytes` bytes (10: any 64-bit value; 5: a tag or
// a length, which protobuf reads as 32 bits) from [*at, end); false when it
// does not end there (protobuf refuses it, or may read it otherwise).
bool ReadVarint(const char** at, const char* end, uint64_t* value, int max_bytes = 10) {
  uint64_t result = 0;
  for (int shift = 0; shift < 7 * max_bytes && *at < end; shift += 7) {
    const auto byte = static_cast<uint8_t>(*(*at)++);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) {
      *value = result;
      return true;
    }
  }
  return false;
}

// A length-delimited field's bytes; false when the length overruns.
bool ReadLengthDelimited(const char** at, const char* end, absl::string_view* field) {
  uint64_t length = 0;
  if (!ReadVarint(at, end, &length, 5) || length > static_cast<uint64_t>(end - *at)) return false;
  *field = absl::string_view(*at, static_cast<size_t>(length));
  *at += length;
  return true;
}

// Plain ASCII: valid UTF-8 (which protobuf checks a proto3 string for) by
// construction; anything else is left to protobuf's check. Eight bytes at a
// time (a byte at a time was ~55 instructions for a 12-character name).
bool IsAscii(absl::string_view text) {
  constexpr uint64_t kHighBits = 0x8080808080808080ull;
  size_t at = 0;
  for (; at + 8 <= text.size(); at += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + at, 8);
    if ((word & kHighBits) != 0) return false;
  }
  for (; at < text.size(); ++at) {
    if (static_cast<uint8_t>(text[at]) >= 0x80) return false;
  }
  return true;
}

// The InferenceWorkload's fields as protobuf's parse sets them, from its
// bytes: every field is a scalar (1-8 varints, 9-10 fixed64 doubles), the
// last occurrence counts, an int32 or enum keeps the varint's low 32 bits
// (proto3 enums are open: any value is kept). Anything else (another
// field or wire type, a truncated value) is false: the request is then
// parsed by protobuf. Its own parse was ~190 instructions of a ~7,300
// instruction estimate (docs/BENCHMARKS.md, session 17, branch s17-estimate).
bool ReadWorkload(absl::string_view bytes, v1::InferenceWorkload* out) {
  constexpr uint32_t kFixed64 = 1;
  const char* at = bytes.data();
  const char* const end = at + bytes.size();
  uint64_t varints[12] = {};  // by field number, 1-8 and 11
  bool has_overhead = false;
  bool has_images = false;
  double doubles[2] = {};  // fields 9 and 10
  while (at < end) {
    uint64_t tag = 0;
    if (!ReadVarint(&at, end, &tag, 5) || tag > UINT32_MAX) return false;
    const uint64_t field = tag >> 3;
    const auto wire_type = static_cast<uint32_t>(tag & 7);
    if (((field >= 1 && field <= 8) || field == 11) && wire_type == kVarint) {
      if (!ReadVarint(&at, end, &varints[field])) return false;
      has_overhead |= field == 8;
      has_images |= field == 11;
    } else if ((field == 9 || field == 10) && wire_type == kFixed64) {
      if (end - at < 8) return false;
      std::memcpy(&doubles[field - 9], at, 8);
      at += 8;
    } else {
      return false;
    }
  }
  const auto int32_of = [&varints](int field) {
    return static_cast<int32_t>(static_cast<uint32_t>(varints[field]));
  };
  out->set_context_length_tokens(static_cast<int64_t>(varints[1]));
  out->set_batch_size(int32_of(2));
  out->set_prefill_chunk_tokens(int32_of(3));
  out->set_prompt_tokens(static_cast<int64_t>(varints[4]));
  out->set_weight_format(static_cast<v1::NumberFormat>(int32_of(5)));
  out->set_kv_cache_format(static_cast<v1::NumberFormat>(int32_of(6)));
  out->set_quantization_group_size(int32_of(7));
  if (has_overhead) {
    out->set_overhead_bytes(static_cast<int64_t>(varints[8]));
  } else {
    out->clear_overhead_bytes();
  }
  out->set_memory_utilization(doubles[0]);
  out->set_prefill_efficiency(doubles[1]);
  if (has_images) {
    out->set_images_per_sequence(int32_of(11));
  } else {
    out->clear_images_per_sequence();
  }
  return true;
}

}  // namespace

bool ReadCatalogMemoryRequest(absl::string_view bytes, CatalogMemoryRequest* out) {
  const char* at = bytes.data();
  const char* const end = at + bytes.size();
  bool has_model = false;
  bool has_workload = false;
  out->hypothetical = false;
  while (at < end) {
    uint64_t tag = 0;
    if (!ReadVarint(&at, end, &tag, 5) || tag > UINT32_MAX) return false;
    const uint64_t field = tag >> 3;
    const auto wire_type = static_cast<uint32_t>(tag & 7);
    if (field == 1 && wire_type == kLengthDelimited && !has_model) {
      if (!ReadLengthDelimited(&at, end, &out->model) || !IsAscii(out->model)) return false;
      has_model = true;
    } else if (field == 11 && wire_type == kLengthDelimited && !has_workload) {
      absl::string_view workload;
      if (!ReadLengthDelimited(&at, end, &workload) || !ReadWorkload(workload, &out->workload)) {
        return false;
      }
      has_workload = true;
    } else if (field == 8 && wire_type == kVarint) {
      // A bool is any varint; not zero is true (the last one counts).
      uint64_t value = 0;
      if (!ReadVarint(&at, end, &value)) return false;
      out->hypothetical = value != 0;
    } else {
      return false;
    }
  }
  if (!has_workload) out->workload.Clear();
  return has_model;
}

}  // namespace modelatlas::estimator
