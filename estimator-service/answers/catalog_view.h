// The CatalogView of an answer: how current the catalog records it read were
// (from the snapshot, and how long since the snapshot heard from the
// catalog, or live from the catalog). Every answer that read a record
// carries it beside its catalog_revision.
#pragma once

#include "estimator-service/catalog/record_source.h"
#include "modelatlas/estimator/v1/model_source.pb.h"

namespace modelatlas::estimator {

// `view` as the message; false (and `out` untouched) when no record was read.
bool ToCatalogView(const RecordSource::View& view, v1::CatalogView* out);

// Sets `response`'s catalog_view from what `records` handed out; nothing
// when the answer read no record (an inline model, a file header).
template <typename Response>
void SetCatalogView(const RecordSource& records, Response* response) {
  const RecordSource::View view = records.view();
  if (!view.from_snapshot && !view.read_live) return;
  ToCatalogView(view, response->mutable_catalog_view());
}

}  // namespace modelatlas::estimator
