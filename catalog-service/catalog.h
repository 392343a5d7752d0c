// The catalog's domain logic: typed records over a CatalogStore. Lookup by
// resource name, display name or alias; filtered, ordered pages; create,
// update with field masks and etags, delete; the revision and change feed.
// Knows nothing of gRPC.
//
// Record is common::v1::Model or common::v1::Hardware.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "catalog-service/import/import_file.h"
#include "catalog-service/page_token.h"
#include "catalog-service/readable_payloads.h"
#include "catalog-service/store/store.h"
#include "common/query/filter.h"
#include "google/protobuf/field_mask.pb.h"
#include "modelatlas/catalog/v1/catalog_service.pb.h"
#include "modelatlas/catalog/v1/dataset.pb.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::catalog {

// What an import read for one batch of rows in two batched store calls
// (CatalogStore::GetMany and FindIdsByLookupKeys): the records among the
// batch's candidate ids (nullopt: no such record) and the ids under its
// lookup keys. A lookup it does not hold goes to the store.
struct ImportLookups {
  RecordKind kind = RecordKind::kModel;
  absl::flat_hash_map<std::string, std::optional<StoredRecord>> records;
  absl::flat_hash_map<std::string, std::vector<std::string>> ids_by_key;
};

template <typename Record>
struct Page {
  std::vector<Record> records;
  // Empty on the last page.
  std::string next_page_token;
  // Catalog revision the page was read at.
  int64_t revision = 0;
};

struct ListQuery {
  int page_size = 0;
  std::string page_token;
  std::string filter;
  std::string order_by;
  // Optional: true once the caller has gone (cancelled, or past its
  // deadline); a List scanning many records then stops with CANCELLED.
  std::function<bool()> abandoned;
};

// A record as a reply's wire bytes in two parts: the stored payload, shared
// with the record cache, and the output-only etag and revision fields that
// follow it (internal::WriteReplyTail says why appending them is exact).
struct RecordReply {
  SharedRecord record;
  std::array<char, 40> tail{};
  size_t tail_size = 0;

  absl::string_view payload() const { return record.payload(); }
  absl::string_view tail_bytes() const { return {tail.data(), tail_size}; }
  // Both parts in one string (tests, callers that want one buffer).
  std::string ToString() const;
};

class Catalog {
 public:
  static constexpr int kDefaultPageSize = 50;
  static constexpr int kMaxPageSize = 1000;
  static constexpr int kMaxBatchGet = 1000;
  // A Watch message stops taking changes once its records reach this many
  // bytes (it always holds at least one).
  static constexpr size_t kMaxWatchMessageBytes = 256 << 10;

  explicit Catalog(std::unique_ptr<CatalogStore> store);

  // `name` is "{collection}/{id}", a display name or (hardware) an alias,
  // matched ignoring case and punctuation. NOT_FOUND names what was asked for.
  template <typename Record>
  absl::StatusOr<Record> Get(absl::string_view name);
  // The same record as Get's, as its serialized bytes (what a reply carries),
  // without parsing it.
  template <typename Record>
  absl::StatusOr<std::string> GetSerialized(absl::string_view name);
  // GetSerialized's bytes in two parts, the first shared with the record
  // cache (no copy): what GetModel and GetHardware reply with.
  template <typename Record>
  absl::StatusOr<RecordReply> GetReply(absl::string_view name);
  // The records of those of `ids` that exist, in any order: one store call
  // (CatalogStore::GetMany; one statement on PostgreSQL).
  template <typename Record>
  absl::StatusOr<std::vector<Record>> GetExisting(const std::vector<std::string>& ids);
  // All of `names` or NOT_FOUND for the first missing one (AIP-231).
  template <typename Record>
  absl::StatusOr<Page<Record>> BatchGet(const std::vector<std::string>& names);
  template <typename Record>
  absl::StatusOr<Page<Record>> List(const ListQuery& query);

  // Gives the records an older binary stored their order values, filter
  // text (schema 4) and domain rows (schema 5), 1,000 per transaction, and
  // logs its progress; a no-op on a current database (once per process).
  // catalog-service runs it at startup before it reports ready (at a million
  // models an upgrade takes minutes); a List meanwhile is answered by
  // reading and sorting in the process rather than waiting for it.
  // `progress`, if set, is called after each batch with the count so far;
  // when `stop` returns true between batches the fill ends with CANCELLED
  // (what it wrote stays: the next start goes on from there).
  absl::Status FillOrderValues(const std::function<void(int64_t filled)>& progress = nullptr,
                               const std::function<bool()>& stop = nullptr);
  // Writes the rows an import deferred (BatchWrite::defer_derived_rows: on
  // SQLite, each imported model's model_domains rows) in transactions of
  // kFillBatch models, until none waits; ImportFile calls it after its last
  // chunk. Reads and Lists run between its batches, and a List meanwhile is
  // answered without those rows (domain filters test the filter text).
  // `batch_done`, if set, gets each batch's time (tests).
  absl::Status FillDeferredRows(
      const std::function<void(absl::Duration batch)>& batch_done = nullptr);
  // Records per transaction of the fills above: a read waits for one batch.
  static constexpr int kFillBatch = 1000;
  // ImportFile loads in bulk (CatalogStore::BeginBulkLoad) a file of at
  // least this many rows into a store holding fewer records than the file
  // has rows.
  static constexpr int64_t kBulkLoadMinRows = 50'000;
  // Tests: another threshold, and a callback given each index rebuild's time.
  void SetBulkLoadForTesting(int64_t min_rows,
                             std::function<void(absl::Duration step)> step_done = nullptr) {
    bulk_load_min_rows_ = min_rows;
    bulk_load_step_done_ = std::move(step_done);
  }
  // Tests: ImportFile's stages in turn on the calling thread instead of
  // three threads (the outcomes and the store must be the same), and a
  // status its parse stage returns before handing chunk N (1-based) on.
  void SetImportStagesForTesting(bool in_stages,
                                 std::function<absl::Status(int chunk)> parsed_chunk = nullptr) {
    import_in_stages_ = in_stages;
    parsed_chunk_hook_ = std::move(parsed_chunk);
  }
  // Creates `record` under `id`; ALREADY_EXISTS when taken.
  template <typename Record>
  absl::StatusOr<Record> Create(absl::string_view id, Record record);
  // Replaces the fields in `mask_paths` ("*" = all; empty = every field set
  // in `record`). When record.etag is set it must be current (ABORTED if not).
  template <typename Record>
  absl::StatusOr<Record> Update(const Record& record, const std::vector<std::string>& mask_paths);
  // Deletes the record; `etag`, when not empty, must be current.
  template <typename Record>
  absl::StatusOr<int64_t> Delete(absl::string_view name, absl::string_view etag);

  absl::StatusOr<v1::CatalogInfo> Info();
  // The shipped dataset's version the catalog was last loaded or refreshed
  // to (CatalogStore::ShippedDatasetVersion), and its raise.
  absl::StatusOr<int32_t> ShippedDatasetVersion() { return store_->ShippedDatasetVersion(); }
  absl::Status RaiseShippedDatasetVersion(int32_t version) {
    return store_->RaiseShippedDatasetVersion(version);
  }

  // Stored records a List left out because they could not be read (each is
  // logged); the rest of the list is served.
  int64_t unreadable_records() const { return unreadable_records_.load(std::memory_order_relaxed); }

  // Changes committed after `after_revision` (up to `limit`), with the
  // records as they are now. Waits up to `timeout` for one to appear:
  // writes through this Catalog wake it at once, writes by other replicas
  // are seen within `poll_interval`.
  absl::StatusOr<v1::WatchResponse> WaitForChanges(int64_t after_revision, int limit,
                                                   absl::Duration timeout,
                                                   absl::Duration poll_interval);
  // The same from `*position`, which it moves past the changes returned: a
  // feed read through one position gets every change exactly once, even
  // when one revision holds more than `limit`. The response's revision is
  // the last one it completes (a revision cut by `limit` is not reported
  // until its last change is). `stop`, if set, is asked at every poll: once
  // true, it returns what it has as at the timeout (a Watch stream ends
  // within a poll interval of the server's shutdown or its client's cancel,
  // not after the whole timeout).
  absl::StatusOr<v1::WatchResponse> WaitForChangesAfter(
      ChangePosition* position, int limit, absl::Duration timeout, absl::Duration poll_interval,
      const std::function<bool()>& stop = nullptr);

  // Validates every record, then writes them all in one transaction (one
  // revision) or none. INVALID_ARGUMENT lists every bad field.
  absl::StatusOr<int64_t> CreateAll(const v1::Dataset& dataset);
  // The same, except that a record whose `revision` is set replaces the
  // stored record of its name, which must still have that revision
  // (ABORTED when it changed, NOT_FOUND when it is gone); a record without
  // one is created (ALREADY_EXISTS when its name is taken). All or none.
  absl::StatusOr<int64_t> ReplaceOrCreateAll(const v1::Dataset& dataset);
  // Loads `dataset` when the catalog holds no record yet; returns whether it did.
  absl::StatusOr<bool> LoadIfEmpty(const v1::Dataset& dataset);

  // Imports the records of a parsed file. Rows are matched to records by
  // the id derived from their name (numbered for a repeated name, hashed
  // when two names share a slug) or by display name; a matched record gets
  // the fields the row sets and keeps the others, so importing the same
  // file again changes nothing. Models' training-hardware names are linked
  // to hardware records. A row that fails validation is rejected with its
  // column; the others are written in batches, or, with options.atomic, all
  // in one transaction or none. options.dry_run writes nothing.
  // `abandoned` (optional) is asked just before the first write: when it
  // answers true (the caller went away) nothing is written and the import
  // is CANCELLED.
  absl::StatusOr<v1::ImportReport> Import(const ParsedFile& file, const v1::ImportOptions& options,
                                          const std::function<bool()>& abandoned = nullptr);
  // Import of a file's content as uploaded, read and planned in chunks of
  // 2,000 rows (ParseImportFileInChunks) with the same outcomes as Import
  // of the whole parsed file. Unless options.atomic or options.dry_run, each
  // chunk is written before the next is read, so the memory an import holds
  // beyond the file's text is one chunk's rows and writes plus a few dozen
  // bytes per row for duplicate names (a million rows took 3 GiB when the
  // file was parsed and planned whole). A file refused as a whole (a quote
  // that never closes, more than 1,000,000 rows) is refused before anything
  // is written. `abandoned` is asked before each chunk's write: once true,
  // the import stops (CANCELLED, saying how many records were written). An
  // atomic import writes every row in one transaction, or none if a row is
  // rejected, as Import does: its planned writes are spooled to disk chunk
  // by chunk (beside the upload's spool) and written back a chunk at a time
  // inside the one transaction, so its memory is bounded as a non-atomic
  // import's (docs/IMPORT.md).
  absl::StatusOr<v1::ImportReport> ImportFile(absl::string_view content,
                                              const v1::ImportOptions& options,
                                              const std::function<bool()>& abandoned = nullptr);
  // The same, reading the file from `content` a block at a time (the
  // service's spooled upload): an Epoch CSV is never held whole, so the
  // import's memory does not grow with the file (docs/IMPORT.md).
  absl::StatusOr<v1::ImportReport> ImportFile(const ImportSource& content,
                                              const v1::ImportOptions& options,
                                              const std::function<bool()>& abandoned = nullptr);
  // Every record matching `filter` (AIP-160), in id order.
  template <typename Record>
  absl::StatusOr<std::vector<Record>> ListAll(const std::string& filter);

 private:
  // CreateAll and ReplaceOrCreateAll.
  absl::StatusOr<int64_t> WriteAll(const v1::Dataset& dataset, bool replace_by_revision);
  template <typename Record>
  absl::StatusOr<std::string> ResolveId(absl::string_view name);
  template <typename Record>
  absl::StatusOr<StoredRecord> GetStored(absl::string_view name);
  // Ids of the records whose display name (or alias) has the lookup key of
  // `name`, in id order; a name without letters or digits matches only
  // itself.
  // `lookups` (an import's batch) answers the store reads it holds.
  template <typename Record>
  absl::StatusOr<std::vector<std::string>> FindIdsByName(absl::string_view name,
                                                         const ImportLookups* lookups = nullptr);
  // store_->Get and FindIdsByLookupKey, answered from `lookups` when it holds the answer.
  absl::StatusOr<StoredRecord> GetThrough(const ImportLookups* lookups, RecordKind kind,
                                          const std::string& id);
  absl::StatusOr<std::vector<std::string>> FindIdsThrough(const ImportLookups* lookups,
                                                          RecordKind kind, const std::string& key);
  // The one record among `ids` whose display name (or alias) is exactly
  // `name`; nullopt when none or several are.
  template <typename Record>
  std::optional<std::string> ExactMatch(const std::vector<std::string>& ids,
                                        absl::string_view name);
  template <typename Record>
  absl::StatusOr<Record> UpdateOnce(const Record& record,
                                    const std::vector<std::string>& mask_paths);
  // List's path for an order by one OrderColumn (see List).
  template <typename Record>
  absl::StatusOr<Page<Record>> ListInStoreOrder(const ListQuery& query, int size,
                                                const query::Filter& filter, OrderColumn column,
                                                bool descending, const PageCursor& cursor,
                                                const std::string& fingerprint, Page<Record> page);
  // A List's store paths need every stored model's columns (FillOrderValues):
  // true once they are filled; fills them here when no one else is (a
  // current database: one query); false while another thread fills them,
  // and the List is answered without them (see List) instead of waiting.
  absl::StatusOr<bool> OrderValuesReady();
  // One batch of the fills: reads up to kFillBatch records of `kind` that
  // wait for their values and writes them; returns how many it read.
  absl::StatusOr<int> FillOrderValuesBatch(RecordKind kind);
  void NotifyWrite();
  void ReportUnreadable(RecordKind kind, absl::string_view id, const absl::Status& status);

  struct ImportRun;
  struct ImportPlanned;
  absl::Status StartImport(const v1::ImportOptions& options);
  // Whether ImportFile loads a file of about `rows` rows in bulk: it began a
  // bulk load.
  absl::StatusOr<bool> BeginBulkLoadFor(int64_t rows);
  void AddFileToReport(ParsedFile* file, ImportRun* run);
  // Plans rows in batches of the write batch; on PostgreSQL each batch's
  // store reads are made first in two statements (PrefetchImportLookups).
  // Each row's record is moved into its plan.
  template <typename Record>
  absl::Status PlanImport(std::vector<ParsedRecord<Record>>* rows, ImportRun* run);
  template <typename Record>
  absl::Status PrefetchImportLookups(absl::Span<const ParsedRecord<Record>> rows, ImportRun* run);
  template <typename Record>
  void PlanImportBatch(absl::Span<ParsedRecord<Record>> rows, ImportRun* run);
  absl::Status PlanArchitectureImport(const ParsedFile& file, ImportRun* run);
  // Counts `planned`'s outcomes into the run's write report and clears it.
  void FoldPlanned(ImportRun* run, std::vector<ImportPlanned>* planned);
  void ReportDuplicateNames(ImportRun* run);
  absl::StatusOr<v1::ImportReport> FinishImport(ImportRun* run);
  // The record a row updates (nullopt: none, create it under *new_id).
  template <typename Record>
  absl::StatusOr<std::optional<Record>> FindImportTarget(const Record& patch, int occurrence,
                                                         ImportRun* run, std::string* new_id);
  // The fields of `mask` an update takes from the file (the others keep the
  // record's values from another source); reports the conflicts.
  template <typename Record>
  static google::protobuf::FieldMask TakeFromImport(int64_t row, const Record& existing,
                                                    const Record& patch,
                                                    const common::v1::Provenance& imported,
                                                    const google::protobuf::FieldMask& mask,
                                                    Record* merged, ImportRun* run);
  void LinkTrainingHardware(common::v1::Model* model, bool count, ImportRun* run);
  // `hardware/{id}` for a training-hardware name, or "" when none matches.
  std::string HardwareRef(absl::string_view hardware_name, ImportRun* run);
  // Writes `planned` (all of it in one transaction when the import is
  // atomic, else in batches); rows another writer changed meanwhile are
  // rejected in the run's write report.
  absl::Status CommitImport(ImportRun* run, std::vector<ImportPlanned>* planned);
  // An atomic ImportFile: appends the writes of `planned` to run->spool.
  absl::Status SpoolImport(ImportRun* run, std::vector<ImportPlanned>* planned);
  // An atomic ImportFile after its last chunk: unless a row was rejected,
  // writes what run->spool holds in one transaction, a chunk at a time
  // (CatalogStore::WriteInOneTransaction), rolled back on any error or a
  // cancelled client.
  absl::Status CommitSpooledImport(ImportRun* run);

  std::unique_ptr<CatalogStore> store_;
  // Payloads GetSerialized has parsed once (512 KiB, so on the heap).
  std::unique_ptr<ReadablePayloads> readable_payloads_ = std::make_unique<ReadablePayloads>();
  std::atomic<int64_t> unreadable_records_{0};
  absl::Mutex fill_mutex_;
  std::atomic<bool> order_values_filled_{false};
  absl::Mutex deferred_fill_mutex_;
  int64_t bulk_load_min_rows_ = kBulkLoadMinRows;
  std::function<void(absl::Duration)> bulk_load_step_done_;
  bool import_in_stages_ = true;
  std::function<absl::Status(int)> parsed_chunk_hook_;
  absl::Mutex write_mutex_;
  absl::CondVar write_signal_;
  int64_t writes_ ABSL_GUARDED_BY(write_mutex_) = 0;
};

// Convenience names used throughout.
using common::v1::Hardware;
using common::v1::Model;

}  // namespace modelatlas::catalog
