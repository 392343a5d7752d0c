#include "estimator-service/answers/catalog_view.h"

#include <bit>
#include <cstdint>
#include <cstring>

namespace modelatlas::estimator {

bool ToCatalogView(const RecordSource::View& view, v1::CatalogView* out) {
  if (!view.from_snapshot && !view.read_live) return false;
  out->set_read_live(view.read_live);
  if (view.from_snapshot) {
    out->set_from_snapshot(true);
    out->set_snapshot_age_seconds(absl::ToDoubleSeconds(view.snapshot_age));
    out->set_snapshot_revision(view.snapshot_revision);
  }
  return true;
}

namespace {

// Protobuf's wire format (https://protobuf.dev/programming-guides/encoding/).
uint8_t* WriteVarint(uint64_t value, uint8_t* out) {
  while (value >= 0x80) {
    *out++ = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<uint8_t>(value);
  return out;
}

}  // namespace

CatalogViewField SerializeCatalogViewField(const RecordSource::View& view, int field_number) {
  CatalogViewField field;
  if (!view.from_snapshot && !view.read_live) return field;
  // The CatalogView's fields written by hand in field-number order, each
  // only when not its default, as protobuf 3.21 writes a proto3 message
  // (building, sizing and serializing the message was about 250
  // instructions per reply: docs/BENCHMARKS.md, session 15); at most 24
  // bytes (2 + 9 + 11 + 2). tests/estimator/catalog_view_test.cc holds
  // these bytes to protobuf's.
  uint8_t body[24];
  uint8_t* end = body;
  if (view.from_snapshot) {
    *end++ = (1 << 3) | 0;  // from_snapshot, varint
    *end++ = 1;
    const double age = absl::ToDoubleSeconds(view.snapshot_age);
    uint64_t age_bits;
    static_assert(sizeof(age_bits) == sizeof(age));
    std::memcpy(&age_bits, &age, sizeof(age));
    if (age_bits != 0) {      // 0.0 is not written, -0.0 is
      *end++ = (2 << 3) | 1;  // snapshot_age_seconds, fixed64 (little-endian)
      static_assert(std::endian::native == std::endian::little);
      std::memcpy(end, &age, sizeof(age));
      end += sizeof(age);
    }
    if (view.snapshot_revision != 0) {
      *end++ = (3 << 3) | 0;  // snapshot_revision, varint (negative: ten bytes)
      end = WriteVarint(static_cast<uint64_t>(view.snapshot_revision), end);
    }
  }
  if (view.read_live) {
    *end++ = (4 << 3) | 0;  // read_live, varint
    *end++ = 1;
  }
  // Wire type 2 (length-delimited), as protobuf writes an embedded message.
  const size_t body_size = static_cast<size_t>(end - body);
  auto* out = reinterpret_cast<uint8_t*>(field.bytes);
  out = WriteVarint((static_cast<uint64_t>(field_number) << 3) | 2, out);
  out = WriteVarint(body_size, out);
  std::memcpy(out, body, body_size);
  field.size = static_cast<size_t>(out + body_size - reinterpret_cast<uint8_t*>(field.bytes));
  return field;
}

}  // namespace modelatlas::estimator
