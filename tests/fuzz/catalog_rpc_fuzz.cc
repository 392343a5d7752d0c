// libFuzzer target: the catalog's RPC handlers on arbitrary request messages
// (the first byte picks the method, the rest is the serialized request, as
// gRPC would deliver it), against one catalog on in-memory SQLite behind
// the record cache (as catalog-service runs it; a small budget, so records
// are evicted too), loaded with the shipped dataset. The gRPC adapters only
// forward to these Catalog calls (catalog-service/service.cc), so this is
// every unary handler's logic. Invariant checked beyond "no crash, no
// sanitizer report": a refused write leaves the revision where it was.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "catalog-service/catalog.h"
#include "catalog-service/dataset.h"
#include "catalog-service/store/cached_store.h"
#include "catalog-service/store/sqlite_store.h"

namespace {

using namespace modelatlas;
using namespace modelatlas::catalog;

Catalog& TheCatalog() {
  static Catalog* catalog = [] {
    auto store = SqliteStore::Open(":memory:");
    if (!store.ok()) std::abort();
    auto* created = new Catalog(std::make_unique<CachedStore>(*std::move(store), 64 << 10));
    if (!created->LoadIfEmpty(*ShippedDataset()).ok()) std::abort();
    return created;
  }();
  return *catalog;
}

int64_t Revision(Catalog& catalog) {
  absl::StatusOr<v1::CatalogInfo> info = catalog.Info();
  return info.ok() ? info->revision() : -1;
}

template <typename Request>
bool Parse(const std::string& bytes, Request* request) {
  return request->ParseFromString(bytes);
}

// A write that failed must not have moved the revision.
template <typename Result>
void CheckWrite(Catalog& catalog, int64_t before, const absl::StatusOr<Result>& result) {
  if (!result.ok() && Revision(catalog) != before) std::abort();
}

template <typename Request>
ListQuery QueryOf(const Request& r) {
  return ListQuery{r.page_size(), r.page_token(), r.filter(), r.order_by()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  Catalog& catalog = TheCatalog();
  const int64_t before = Revision(catalog);
  switch (data[0] % 12) {
    case 0: {
      v1::GetModelRequest r;
      if (Parse(bytes, &r)) (void)catalog.Get<common::v1::Model>(r.name());
      break;
    }
    case 1: {
      v1::BatchGetModelsRequest r;
      if (Parse(bytes, &r)) {
        (void)catalog.BatchGet<common::v1::Model>({r.names().begin(), r.names().end()});
      }
      break;
    }
    case 2: {
      v1::ListModelsRequest r;
      if (Parse(bytes, &r)) (void)catalog.List<common::v1::Model>(QueryOf(r));
      break;
    }
    case 3: {
      v1::CreateModelRequest r;
      if (Parse(bytes, &r)) CheckWrite(catalog, before, catalog.Create(r.model_id(), r.model()));
      break;
    }
    case 4: {
      v1::UpdateModelRequest r;
      if (Parse(bytes, &r)) {
        CheckWrite(catalog, before,
                   catalog.Update(r.model(), {r.update_mask().paths().begin(),
                                              r.update_mask().paths().end()}));
      }
      break;
    }
    case 5: {
      v1::DeleteModelRequest r;
      if (Parse(bytes, &r)) {
        CheckWrite(catalog, before, catalog.Delete<common::v1::Model>(r.name(), r.etag()));
      }
      break;
    }
    case 6: {
      v1::GetHardwareRequest r;
      if (Parse(bytes, &r)) (void)catalog.Get<common::v1::Hardware>(r.name());
      break;
    }
    case 7: {
      v1::BatchGetHardwareRequest r;
      if (Parse(bytes, &r)) {
        (void)catalog.BatchGet<common::v1::Hardware>({r.names().begin(), r.names().end()});
      }
      break;
    }
    case 8: {
      v1::ListHardwareRequest r;
      if (Parse(bytes, &r)) (void)catalog.List<common::v1::Hardware>(QueryOf(r));
      break;
    }
    case 9: {
      v1::CreateHardwareRequest r;
      if (Parse(bytes, &r)) {
        CheckWrite(catalog, before, catalog.Create(r.hardware_id(), r.hardware()));
      }
      break;
    }
    case 10: {
      v1::UpdateHardwareRequest r;
      if (Parse(bytes, &r)) {
        CheckWrite(catalog, before,
                   catalog.Update(r.hardware(), {r.update_mask().paths().begin(),
                                                 r.update_mask().paths().end()}));
      }
      break;
    }
    default: {
      v1::DeleteHardwareRequest r;
      if (Parse(bytes, &r)) {
        CheckWrite(catalog, before, catalog.Delete<common::v1::Hardware>(r.name(), r.etag()));
      }
      break;
    }
  }
  return 0;
}
