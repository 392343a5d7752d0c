#include "catalog-service/metrics.h"

#include <chrono>
#include <utility>

#include "common/server/scrape_metrics.h"

namespace modelatlas::catalog {
namespace {

constexpr const char* kOperations[] = {"get",
                                       "find_ids_by_lookup_key",
                                       "list",
                                       "count",
                                       "revision",
                                       "write",
                                       "delete",
                                       "changes_since",
                                       "list_ordered",
                                       "get_many",
                                       "find_ids_by_lookup_keys"};

const prometheus::Histogram::BucketBoundaries& StoreBuckets() {
  // From 50 us (an SQLite read) to 5 s (a large import transaction).
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
      0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5,   5};
  return *buckets;
}

class InstrumentedStore : public CatalogStore {
 public:
  InstrumentedStore(std::unique_ptr<CatalogStore> store, std::shared_ptr<StoreMetrics> metrics)
      : store_(std::move(store)), metrics_(std::move(metrics)) {}

  absl::string_view backend() const override { return store_->backend(); }
  int schema_version() const override { return store_->schema_version(); }

  absl::StatusOr<StoredRecord> Get(RecordKind kind, absl::string_view id) override {
    return Timed("get", [&] { return store_->Get(kind, id); });
  }
  absl::StatusOr<SharedRecord> GetShared(RecordKind kind, absl::string_view id) override {
    return Timed("get", [&] { return store_->GetShared(kind, id); });
  }
  absl::StatusOr<std::vector<std::string>> FindIdsByLookupKey(RecordKind kind,
                                                              absl::string_view key) override {
    return Timed("find_ids_by_lookup_key", [&] { return store_->FindIdsByLookupKey(kind, key); });
  }
  absl::StatusOr<std::vector<StoredRecord>> GetMany(RecordKind kind,
                                                    const std::vector<std::string>& ids) override {
    return Timed("get_many", [&] { return store_->GetMany(kind, ids); });
  }
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> FindIdsByLookupKeys(
      RecordKind kind, const std::vector<std::string>& keys) override {
    return Timed("find_ids_by_lookup_keys",
                 [&] { return store_->FindIdsByLookupKeys(kind, keys); });
  }
  absl::StatusOr<std::vector<StoredRecord>> List(RecordKind kind, absl::string_view after_id,
                                                 int limit) override {
    return Timed("list", [&] { return store_->List(kind, after_id, limit); });
  }
  absl::StatusOr<int64_t> Count(RecordKind kind) override {
    return Timed("count", [&] { return store_->Count(kind); });
  }
  absl::StatusOr<int64_t> Revision() override {
    return Timed("revision", [&] { return store_->Revision(); });
  }
  absl::StatusOr<int32_t> ShippedDatasetVersion() override {
    return Timed("shipped_dataset_version", [&] { return store_->ShippedDatasetVersion(); });
  }
  absl::Status RaiseShippedDatasetVersion(int32_t version) override {
    return Timed("raise_shipped_dataset_version",
                 [&] { return store_->RaiseShippedDatasetVersion(version); });
  }
  absl::StatusOr<int64_t> Write(const std::vector<BatchWrite>& writes) override {
    return Timed("write", [&] { return store_->Write(writes); });
  }
  // Forwarded, not left to the default (which would collect every batch
  // for one Write: an atomic import's memory growing with the file again).
  absl::StatusOr<int64_t> WriteInOneTransaction(const BatchSource& next_batch) override {
    return Timed("write", [&] { return store_->WriteInOneTransaction(next_batch); });
  }
  absl::StatusOr<int64_t> Delete(RecordKind kind, absl::string_view id,
                                 int64_t expected_revision) override {
    return Timed("delete", [&] { return store_->Delete(kind, id, expected_revision); });
  }
  absl::StatusOr<std::vector<Change>> ChangesAfter(const ChangePosition& after,
                                                   int limit) override {
    // The operation keeps its name of the dashboards.
    return Timed("changes_since", [&] { return store_->ChangesAfter(after, limit); });
  }
  bool orders_in_store() const override { return store_->orders_in_store(); }
  absl::StatusOr<std::vector<OrderedRecord>> ListOrdered(RecordKind kind, OrderColumn column,
                                                         bool descending, const OrderSeek& after,
                                                         int limit) override {
    return Timed("list_ordered",
                 [&] { return store_->ListOrdered(kind, column, descending, after, limit); });
  }
  // The same operation names: the tests only narrow what a list reads.
  absl::StatusOr<std::vector<OrderedRecord>> ListOrderedWhere(
      RecordKind kind, OrderColumn column, bool descending, const OrderSeek& after, int limit,
      const std::vector<ColumnTest>& tests) override {
    return Timed("list_ordered", [&] {
      return store_->ListOrderedWhere(kind, column, descending, after, limit, tests);
    });
  }
  absl::StatusOr<std::vector<StoredRecord>> ListWhere(
      RecordKind kind, absl::string_view after_id, int limit,
      const std::vector<ColumnTest>& tests) override {
    return Timed("list", [&] { return store_->ListWhere(kind, after_id, limit, tests); });
  }
  absl::StatusOr<std::vector<StoredRecord>> RecordsWithoutOrderValues(RecordKind kind,
                                                                      int limit) override {
    return store_->RecordsWithoutOrderValues(kind, limit);  // once, after an upgrade
  }
  absl::Status SetOrderValues(RecordKind kind,
                              const std::vector<std::pair<StoredRecord, OrderValues>>& values,
                              bool done) override {
    return store_->SetOrderValues(kind, values, done);
  }
  absl::StatusOr<bool> BeginBulkLoad() override { return store_->BeginBulkLoad(); }
  absl::Status EndBulkLoad(const std::function<void(absl::Duration)>& step_done) override {
    return store_->EndBulkLoad(step_done);
  }

 private:
  static const absl::Status& StatusOf(const absl::Status& status) { return status; }
  template <typename T>
  static const absl::Status& StatusOf(const absl::StatusOr<T>& result) {
    return result.status();
  }

  template <typename Call>
  auto Timed(absl::string_view operation, Call call) -> decltype(call()) {
    const auto start = std::chrono::steady_clock::now();
    auto result = call();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    // NOT_FOUND and the like are answers, not store failures.
    const absl::Status& status = StatusOf(result);
    const bool failed = absl::IsUnavailable(status) || absl::IsInternal(status) ||
                        absl::IsDataLoss(status) || absl::IsUnknown(status) ||
                        absl::IsDeadlineExceeded(status);
    metrics_->Observe(operation, elapsed.count(), failed ? status : absl::OkStatus());
    return result;
  }

  std::unique_ptr<CatalogStore> store_;
  std::shared_ptr<StoreMetrics> metrics_;
};

}  // namespace

StoreMetrics::StoreMetrics(prometheus::Registry& registry, absl::string_view backend)
    : backend_(backend),
      duration_(prometheus::BuildHistogram()
                    .Name("modelatlas_catalog_store_operation_duration_seconds")
                    .Help("Duration of catalog store calls, seconds.")
                    .Register(registry)),
      errors_(prometheus::BuildCounter()
                  .Name("modelatlas_catalog_store_errors_total")
                  .Help("Catalog store calls that failed (unavailable, internal, data loss).")
                  .Register(registry)) {
  for (const char* operation : kOperations) {
    durations_.try_emplace(
        operation,
        &duration_.Add({{"backend", backend_}, {"operation", operation}}, StoreBuckets()));
    // The failures alerts watch for, present at zero from the start.
    for (const char* code : {"UNAVAILABLE", "INTERNAL"}) {
      errors_.Add({{"backend", backend_}, {"operation", operation}, {"code", code}});
    }
  }
}

void StoreMetrics::Observe(absl::string_view operation, double seconds,
                           const absl::Status& status) {
  // Every operation's histogram is made up front: no label map is built per call.
  auto histogram = durations_.find(operation);
  if (histogram != durations_.end()) {
    histogram->second->Observe(seconds);
  } else {
    duration_.Add({{"backend", backend_}, {"operation", std::string(operation)}}, StoreBuckets())
        .Observe(seconds);
  }
  if (!status.ok()) {
    errors_
        .Add({{"backend", backend_},
              {"operation", std::string(operation)},
              {"code", absl::StatusCodeToString(status.code())}})
        .Increment();
  }
}

std::unique_ptr<CatalogStore> InstrumentStore(std::unique_ptr<CatalogStore> store,
                                              std::shared_ptr<StoreMetrics> metrics) {
  return std::make_unique<InstrumentedStore>(std::move(store), std::move(metrics));
}

ImportMetrics::ImportMetrics(prometheus::Registry& registry)
    : rows_(prometheus::BuildCounter()
                .Name("modelatlas_catalog_import_rows_total")
                .Help("Rows of imported files, by what became of them.")
                .Register(registry)) {
  for (const char* outcome : {"created", "updated", "unchanged", "rejected"}) {
    rows_.Add({{"outcome", outcome}});
  }
}

void ImportMetrics::Record(const v1::ImportReport& report) {
  if (report.dry_run()) return;
  rows_.Add({{"outcome", "created"}}).Increment(static_cast<double>(report.created()));
  rows_.Add({{"outcome", "updated"}}).Increment(static_cast<double>(report.updated()));
  rows_.Add({{"outcome", "unchanged"}}).Increment(static_cast<double>(report.unchanged()));
  rows_.Add({{"outcome", "rejected"}}).Increment(static_cast<double>(report.rejected()));
}

std::shared_ptr<prometheus::Collectable> CatalogStateCollectable(Catalog* catalog) {
  return ScrapeTimeCollectable([catalog] {
    std::vector<prometheus::MetricFamily> families;
    families.push_back(SampleFamily(
        "modelatlas_catalog_unreadable_records_total",
        "Stored records a list left out because they could not be read (each is logged).",
        {{{}, static_cast<double>(catalog->unreadable_records())}},
        prometheus::MetricType::Counter));
    absl::StatusOr<v1::CatalogInfo> info = catalog->Info();
    if (!info.ok()) return families;  // the store errors metric tells why
    families.push_back(
        SampleFamily("modelatlas_catalog_records", "Records in the catalog.",
                     {{{{"kind", "model"}}, static_cast<double>(info->model_count())},
                      {{{"kind", "hardware"}}, static_cast<double>(info->hardware_count())}}));
    families.push_back(SampleFamily("modelatlas_catalog_revision",
                                    "Catalog revision: grows by one with every committed write.",
                                    {{{}, static_cast<double>(info->revision())}}));
    families.push_back(SampleFamily("modelatlas_catalog_schema_version",
                                    "Schema version of the store.",
                                    {{{}, static_cast<double>(info->schema_version())}}));
    families.push_back(
        SampleFamily("modelatlas_catalog_shipped_dataset_version",
                     "Version of the shipped dataset the catalog was last loaded or refreshed to.",
                     {{{}, static_cast<double>(info->shipped_dataset_version())}}));
    return families;
  });
}

std::shared_ptr<prometheus::Collectable> RecordCacheCollectable(const CachedStore* cache) {
  return ScrapeTimeCollectable([cache] {
    const CachedStore::Stats stats = cache->stats();
    const auto counter = prometheus::MetricType::Counter;
    return std::vector<prometheus::MetricFamily>{
        SampleFamily("modelatlas_catalog_record_cache_hits_total",
                     "Record reads answered from the in-memory cache.",
                     {{{}, static_cast<double>(stats.hits)}}, counter),
        SampleFamily("modelatlas_catalog_record_cache_misses_total",
                     "Record reads that went to the store.",
                     {{{}, static_cast<double>(stats.misses)}}, counter),
        SampleFamily("modelatlas_catalog_record_cache_refused_total",
                     "Misses whose record was not kept: the cache was full and its key had not "
                     "been missed recently (admission).",
                     {{{}, static_cast<double>(stats.refused)}}, counter),
        SampleFamily("modelatlas_catalog_record_cache_records", "Records in the cache.",
                     {{{}, static_cast<double>(stats.records)}}),
        SampleFamily("modelatlas_catalog_record_cache_bytes",
                     "Bytes the cached records take, of --record_cache_bytes.",
                     {{{}, static_cast<double>(stats.bytes)}})};
  });
}

}  // namespace modelatlas::catalog
