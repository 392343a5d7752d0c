// The CatalogView of an answer: how current the catalog records it read were
// (from the snapshot, and how long since the snapshot heard from the
// catalog, or live from the catalog). Every answer that read a record
// carries it beside its catalog_revision.
#pragma once

#include <cstddef>

#include "absl/strings/string_view.h"
#include "estimator-service/catalog/record_source.h"
#include "modelatlas/estimator/v1/model_source.pb.h"

namespace modelatlas::estimator {

// `view` as the message; false (and `out` untouched) when no record was read.
bool ToCatalogView(const RecordSource::View& view, v1::CatalogView* out);

// The bytes of a response's catalog_view field (number `field_number`)
// holding `view`: what SerializeAsString() gives for a response with only
// that field set, written without building the response (a kept answer's
// reply is its kept bytes and then these; a field appended to a serialized
// message is part of it). Empty when no record was read. The largest is 30
// bytes (a 5-byte tag, a 1-byte length, at most 24 bytes of CatalogView),
// so it needs no allocation and gRPC copies it into an inline slice.
struct CatalogViewField {
  char bytes[32];
  size_t size = 0;
  absl::string_view view() const { return absl::string_view(bytes, size); }
};
CatalogViewField SerializeCatalogViewField(const RecordSource::View& view, int field_number);

// Sets `response`'s catalog_view from what `records` handed out; nothing
// when the answer read no record (an inline model, a file header).
template <typename Response>
void SetCatalogView(const RecordSource& records, Response* response) {
  const RecordSource::View view = records.view();
  if (!view.from_snapshot && !view.read_live) return;
  ToCatalogView(view, response->mutable_catalog_view());
}

}  // namespace modelatlas::estimator
