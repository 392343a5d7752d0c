#include "estimator-service/answers/catalog_view.h"

#include <cstdint>

#include "google/protobuf/io/coded_stream.h"

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

CatalogViewField SerializeCatalogViewField(const RecordSource::View& view, int field_number) {
  using google::protobuf::io::CodedOutputStream;
  CatalogViewField field;
  v1::CatalogView message;
  if (!ToCatalogView(view, &message)) return field;
  // Wire type 2 (length-delimited), as protobuf writes an embedded message
  // (https://protobuf.dev/programming-guides/encoding/#structure).
  const uint32_t tag = (static_cast<uint32_t>(field_number) << 3) | 2;
  const size_t body = message.ByteSizeLong();
  const size_t size = CodedOutputStream::VarintSize32(tag) +
                      CodedOutputStream::VarintSize32(static_cast<uint32_t>(body)) + body;
  if (size > sizeof(field.bytes)) return field;  // not reached: a CatalogView is at most 24 bytes
  auto* out = reinterpret_cast<uint8_t*>(field.bytes);
  out = CodedOutputStream::WriteVarint32ToArray(tag, out);
  out = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(body), out);
  message.SerializeWithCachedSizesToArray(out);
  field.size = size;
  return field;
}

}  // namespace modelatlas::estimator
