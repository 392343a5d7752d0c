#include "estimator-service/answers/catalog_view.h"

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

}  // namespace modelatlas::estimator
