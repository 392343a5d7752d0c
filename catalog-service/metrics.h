// The catalog's own metrics, beside the standard gRPC ones:
//   modelatlas_catalog_store_operation_duration_seconds{backend,operation} (histogram)
//   modelatlas_catalog_store_errors_total{backend,operation,code}
//   modelatlas_catalog_import_rows_total{outcome}
//   modelatlas_catalog_records{kind}, modelatlas_catalog_revision,
//   modelatlas_catalog_schema_version (read from the store at scrape time)
//   modelatlas_catalog_unreadable_records_total (records lists left out)
//   modelatlas_catalog_record_cache_{hits,misses,refused}_total, _records, _bytes
#pragma once

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "catalog-service/catalog.h"
#include "catalog-service/store/cached_store.h"
#include "catalog-service/store/store.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace modelatlas::catalog {

class StoreMetrics {
 public:
  StoreMetrics(prometheus::Registry& registry, absl::string_view backend);
  // Records one store call: its duration and, when it failed, its code.
  void Observe(absl::string_view operation, double seconds, const absl::Status& status);

 private:
  std::string backend_;
  prometheus::Family<prometheus::Histogram>& duration_;
  // Written in the constructor only, so read without a lock.
  absl::flat_hash_map<std::string, prometheus::Histogram*> durations_;
  prometheus::Family<prometheus::Counter>& errors_;
};

// A CatalogStore that times every call of the store it wraps.
std::unique_ptr<CatalogStore> InstrumentStore(std::unique_ptr<CatalogStore> store,
                                              std::shared_ptr<StoreMetrics> metrics);

// Counts imported rows by outcome.
class ImportMetrics {
 public:
  explicit ImportMetrics(prometheus::Registry& registry);
  void Record(const v1::ImportReport& report);

 private:
  prometheus::Family<prometheus::Counter>& rows_;
};

// Record counts and the revision, read through `catalog` at each scrape.
std::shared_ptr<prometheus::Collectable> CatalogStateCollectable(Catalog* catalog);

// The record cache's hits, misses and size, read at each scrape.
std::shared_ptr<prometheus::Collectable> RecordCacheCollectable(const CachedStore* cache);

}  // namespace modelatlas::catalog
