#include "estimator-service/answers/memory_request.h"

#include <cstdint>

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
// construction; anything else is left to protobuf's check.
bool IsAscii(absl::string_view text) {
  for (char c : text) {
    if (static_cast<uint8_t>(c) >= 0x80) return false;
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
      if (!ReadLengthDelimited(&at, end, &workload)) return false;
      // Parsing clears the message first.
      if (!out->workload.ParseFromArray(workload.data(), static_cast<int>(workload.size()))) {
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
