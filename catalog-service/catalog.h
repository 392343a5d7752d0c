// The catalog's domain logic: typed records over a CatalogStore, lookup by
// resource name, display name or alias, pagination, validation and the
// catalog revision. Knows nothing of gRPC.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "catalog-service/store/store.h"
#include "modelatlas/catalog/v1/catalog_service.pb.h"
#include "modelatlas/catalog/v1/dataset.pb.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::catalog {

template <typename Record>
struct Page {
  std::vector<Record> records;
  // Empty on the last page.
  std::string next_page_token;
  // Catalog revision the page was read at.
  int64_t revision = 0;
};

class Catalog {
 public:
  static constexpr int kDefaultPageSize = 50;
  static constexpr int kMaxPageSize = 1000;

  explicit Catalog(std::unique_ptr<CatalogStore> store);

  // `name` is "models/{id}", or a display name matched ignoring case and
  // punctuation. NOT_FOUND names what was asked for.
  absl::StatusOr<common::v1::Model> GetModel(absl::string_view name);
  absl::StatusOr<Page<common::v1::Model>> ListModels(int page_size, absl::string_view page_token);
  // `name` is "hardware/{id}", a display name or an alias.
  absl::StatusOr<common::v1::Hardware> GetHardware(absl::string_view name);
  absl::StatusOr<Page<common::v1::Hardware>> ListHardware(int page_size,
                                                          absl::string_view page_token);
  absl::StatusOr<v1::CatalogInfo> Info();

  // Validates every record, then writes them all in one transaction (one
  // revision) or none. INVALID_ARGUMENT lists every bad field.
  absl::StatusOr<int64_t> CreateAll(const v1::Dataset& dataset);
  // Loads `dataset` when the catalog holds no record yet; returns whether it did.
  absl::StatusOr<bool> LoadIfEmpty(const v1::Dataset& dataset);

 private:
  template <typename Record>
  absl::StatusOr<Record> Get(RecordKind kind, absl::string_view collection,
                             absl::string_view type_name, absl::string_view name);
  template <typename Record>
  absl::StatusOr<Page<Record>> List(RecordKind kind, absl::string_view collection, int page_size,
                                    absl::string_view page_token);

  std::unique_ptr<CatalogStore> store_;
};

}  // namespace modelatlas::catalog
