// The storage interface of the catalog. Records are kept as serialized
// protobuf messages (compact, fast to parse, and readable by newer and older
// binaries alike) with their kind, id, display name and the lookup keys they
// are found by; the catalog layer above owns the typed
// messages and the rules. Two implementations: SQLite (embedded default)
// and PostgreSQL (several replicas on one database).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "catalog-service/store/shared_record.h"

namespace modelatlas::catalog {

enum class RecordKind { kModel, kHardware };

// "model" or "hardware", as stored.
absl::string_view RecordKindName(RecordKind kind);

// The fields of a model that a List ordered by one of them reads from the
// store in that order (an indexed column each), instead of sorting every
// match in the catalog process: the orders people ask for on a large catalog.
enum class OrderColumn { kParameters, kTrainingComputeFlop, kPublicationDate, kDisplayName };
inline constexpr int kOrderColumnCount = 4;
// The record field each column holds ("parameters", ...), in OrderColumn's order.
absl::string_view OrderColumnField(OrderColumn column);

// A record's value of an order column, as query::OrderValueOf gives it:
// unset (std::monostate: sorts last in either direction), a number (dates as
// yyyymmdd) or text (compared bytewise).
using OrderValue = std::variant<std::monostate, double, std::string>;
// The columns a store keeps beside each record's payload for reading it in
// order or narrowing a scan: the order columns, in OrderColumn's order, then
// the filter text (schema 4, kFilterTextValue).
inline constexpr int kStoredValueCount = kOrderColumnCount + 1;
// The model's lists that filters name with `field:"text"` (domains, tasks,
// organizations, organization categories, countries), each element lower
// case after a newline: a filter's "some element contains" term is then a
// substring test on one column, pushed into SQL (ColumnTest::kContains).
// Empty text for a model without any; unset (NULL) for hardware and for rows
// an older binary wrote, which every kContains test lets through.
inline constexpr int kFilterTextValue = kOrderColumnCount;
// Then, not a column of the record's row: the model's domains, each lower
// case after a newline (FilterTextOf's format). A store may keep one row per
// domain beside the record (SQLite schema 5, model_domains) with the order
// values, so that a page of `domains:"vision"` ordered by a column walks only
// that domain's models (ColumnTest on kDomainsValue). Unset for hardware.
inline constexpr int kDomainsValue = kStoredValueCount;
using OrderValues = std::array<OrderValue, kStoredValueCount + 1>;

// A test a store applies to one of those columns while it reads, so that a
// filtered List does not read, decode and reject every record in the catalog
// process. Built from the terms AND-ed at a filter's top
// (query::Filter::NecessaryTests): only a record that can match passes, and
// the catalog still evaluates the whole filter on what comes back; a store
// that ignores the tests is correct, only slower.
struct ColumnTest {
  enum class Op { kLess, kLessOrEqual, kEqual, kGreaterOrEqual, kGreater, kContains };
  // Numbers (kLess..kGreater): an OrderColumn (not kDisplayName), whose NULL
  // passes no test, as an unset field matches no comparison. kContains:
  // kFilterTextValue (some element of the filter text's lists) or
  // kDomainsValue (some domain) contains `value`, the lower-case text. The
  // catalog sends a domains term as both (a store without domain rows
  // applies the first, one with them may walk the second).
  int column = 0;
  Op op = Op::kEqual;
  OrderValue value;
};

// The SQL operator of a numeric ColumnTest ("<", "<=", "=", ">=", ">");
// kContains has none (each store writes its own substring test).
const char* SqlComparison(ColumnTest::Op op);

// A position in an ordered list: just after the record `id` whose value is
// `value`; `start` = before the first record. The order is the records with a
// value by (value, ascending or descending; then id ascending), then the
// records without one by id.
struct OrderSeek {
  bool start = true;
  OrderValue value;
  std::string id;
};

// A record as stored.
struct StoredRecord {
  std::string id;
  std::string display_name;
  std::string payload;
  // Catalog revision of the last write to this record.
  int64_t revision = 0;
};

// A record to write.
struct RecordWrite {
  RecordKind kind = RecordKind::kModel;
  std::string id;
  std::string display_name;
  // Keys the record is found by (display name, aliases), see LookupKey().
  std::vector<std::string> lookup_keys;
  std::string payload;
  // Its values of the order columns and the filter text (all unset for hardware).
  OrderValues order_values;
};

// A record read in the order of an order column, with its value there.
struct OrderedRecord {
  StoredRecord record;
  OrderValue value;
};

// One write of a batch (see CatalogStore::Write).
struct BatchWrite {
  enum class Operation { kCreate, kUpdate };
  Operation operation = Operation::kCreate;
  RecordWrite record;
  // For an update: the revision the record must still have; 0 for any.
  int64_t expected_revision = 0;
  // A bulk writer (an import) leaves the rows a store derives from a model
  // for filters (SQLite's model_domains, schema 5) to be written after its
  // last batch: the model is listed by RecordsWithoutOrderValues meanwhile,
  // as a record of an older binary is, and the store's lists do without
  // those rows until SetOrderValues has written them (Catalog's fill). A
  // store that keeps no such rows ignores it.
  bool defer_derived_rows = false;
};

// One committed write, as the change log records it.
struct Change {
  int64_t revision = 0;
  RecordKind kind = RecordKind::kModel;
  std::string id;
  // "create", "update" or "delete".
  std::string operation;
};

// A position in the change log, which is ordered by (revision, kind, id):
// just after the change of `revision` to the record (kind, id), or, when
// `id` is empty, after every change of `revision`. One revision can hold
// thousands of changes (an import), so a revision alone cannot say where a
// page of changes ended.
struct ChangePosition {
  int64_t revision = 0;
  RecordKind kind = RecordKind::kModel;
  std::string id;
};

// The position just after `change`.
inline ChangePosition PositionAfter(const Change& change) {
  return ChangePosition{change.revision, change.kind, change.id};
}

class CatalogStore {
 public:
  virtual ~CatalogStore() = default;

  // "sqlite" or "postgres".
  virtual absl::string_view backend() const = 0;
  // The schema version the store was migrated to.
  virtual int schema_version() const = 0;

  // NOT_FOUND when there is no such record.
  virtual absl::StatusOr<StoredRecord> Get(RecordKind kind, absl::string_view id) = 0;
  // Get's record in one shared block, for reads that pass its bytes on
  // (GetModel, GetHardware): the record cache shares its own block instead
  // of copying it. The default copies Get's record into a new block.
  virtual absl::StatusOr<SharedRecord> GetShared(RecordKind kind, absl::string_view id);
  // Ids of the records with this lookup key, in id order.
  virtual absl::StatusOr<std::vector<std::string>> FindIdsByLookupKey(RecordKind kind,
                                                                      absl::string_view key) = 0;
  // Batched twins of Get and FindIdsByLookupKey for an import, which looks
  // up thousands of candidate ids and names per batch of rows: the records
  // among `ids` that exist (any order), and the (key, id) pairs stored under
  // `keys` (any order, no duplicate pairs). The defaults call Get and
  // FindIdsByLookupKey per item (in process for SQLite); PostgreSQL answers
  // each in one statement, one round trip instead of one per item.
  virtual absl::StatusOr<std::vector<StoredRecord>> GetMany(RecordKind kind,
                                                            const std::vector<std::string>& ids);
  virtual absl::StatusOr<std::vector<std::pair<std::string, std::string>>> FindIdsByLookupKeys(
      RecordKind kind, const std::vector<std::string>& keys);
  // Up to `limit` records with id > after_id, in id order.
  virtual absl::StatusOr<std::vector<StoredRecord>> List(RecordKind kind,
                                                         absl::string_view after_id, int limit) = 0;
  virtual absl::StatusOr<int64_t> Count(RecordKind kind) = 0;
  // The catalog revision: grows by one with every committed write.
  virtual absl::StatusOr<int64_t> Revision() = 0;
  // The version of the shipped dataset the catalog was last loaded or
  // refreshed to (0: never), kept beside the revision so that a start on
  // the same binary skips the refresh's walk over every shipped record.
  virtual absl::StatusOr<int32_t> ShippedDatasetVersion() = 0;
  // Raises it to `version`; a lower one leaves it as it is (a replica still
  // on an older binary never lowers it). Not a record write: the revision
  // stays.
  virtual absl::Status RaiseShippedDatasetVersion(int32_t version) = 0;
  // Applies every write in one transaction at one new revision, which it
  // returns, or none of them: ALREADY_EXISTS (naming the record) when a
  // created id is taken, NOT_FOUND when an updated record does not exist,
  // ABORTED when its revision is not the expected one (checked inside the
  // transaction, so concurrent writers cannot both win).
  virtual absl::StatusOr<int64_t> Write(const std::vector<BatchWrite>& writes) = 0;
  // Where WriteInOneTransaction pulls its writes from: fills `batch` (which
  // it is handed empty) with the next writes, or leaves it empty when there
  // are no more; an error ends the transaction with nothing written.
  using BatchSource = std::function<absl::Status(std::vector<BatchWrite>* batch)>;
  // Write() of every batch `next_batch` gives, pulled one at a time until it
  // gives an empty one, in one transaction at one new revision (which it
  // returns; the current revision, nothing written, when the first batch is
  // empty), or none of them: the same checks as Write, and any error of
  // `next_batch` (a rejected row, a cancelled client) rolls it back.
  //
  // Why: an atomic import of a million rows (Catalog::ImportFile) must
  // commit all or nothing, and held every planned write in memory to pass
  // them to one Write (gigabytes at a million rows; issue 22 point 4). Pulled
  // batch by batch, the writes held at a time are one batch's. Nothing is
  // visible to other readers, and the revision does not move, until the
  // commit.
  //
  // The default collects every batch and calls Write (correct, not bounded).
  // SQLite and PostgreSQL write each batch as it comes. `next_batch` runs
  // while the transaction is open: on SQLite with the store's one connection
  // held, so it must not call this store (it would wait for itself) and other
  // store calls wait until the commit; on PostgreSQL other connections read
  // the state before the transaction until it commits, and other writers wait
  // for the revision row.
  virtual absl::StatusOr<int64_t> WriteInOneTransaction(const BatchSource& next_batch);
  // Write() with creates only.
  absl::StatusOr<int64_t> Insert(const std::vector<RecordWrite>& records);
  // Write() with one update.
  absl::StatusOr<int64_t> Update(const RecordWrite& record, int64_t expected_revision);
  // Deletes a record at a new revision, with the same checks as Update.
  virtual absl::StatusOr<int64_t> Delete(RecordKind kind, absl::string_view id,
                                         int64_t expected_revision) = 0;
  // Up to `limit` changes after `after`, in (revision, kind, id) order.
  virtual absl::StatusOr<std::vector<Change>> ChangesAfter(const ChangePosition& after,
                                                           int limit) = 0;

  // Whether ListOrdered and the order-value upkeep below are implemented.
  virtual bool orders_in_store() const { return false; }
  // Up to `limit` records after `after` in the order of `column` (see
  // OrderSeek), read through the column's index.
  virtual absl::StatusOr<std::vector<OrderedRecord>> ListOrdered(RecordKind kind,
                                                                 OrderColumn column,
                                                                 bool descending,
                                                                 const OrderSeek& after, int limit);
  // ListOrdered and List reading only records that pass every test (see
  // ColumnTest): the same records those return, less the ones the tests
  // reject. By default the tests are not applied (correct, since the caller
  // filters anyway).
  virtual absl::StatusOr<std::vector<OrderedRecord>> ListOrderedWhere(
      RecordKind kind, OrderColumn column, bool descending, const OrderSeek& after, int limit,
      const std::vector<ColumnTest>& tests) {
    (void)tests;
    return ListOrdered(kind, column, descending, after, limit);
  }
  virtual absl::StatusOr<std::vector<StoredRecord>> ListWhere(
      RecordKind kind, absl::string_view after_id, int limit,
      const std::vector<ColumnTest>& tests) {
    (void)tests;
    return List(kind, after_id, limit);
  }
  // Records written before the order columns existed (a database file of an
  // older binary, upgraded by a migration) have no order values yet: up to
  // `limit` of them, in id order; empty once every record has its values.
  virtual absl::StatusOr<std::vector<StoredRecord>> RecordsWithoutOrderValues(RecordKind kind,
                                                                              int limit);
  // Sets the order values of records listed by RecordsWithoutOrderValues,
  // each only if the record is still at the revision read (a write since
  // then wrote the values of its new payload itself, or deferred them: it
  // stays listed and is read again). Once `done` is true, `kind`'s entries
  // whose record no longer exists are dropped (PostgreSQL, which defers
  // nothing, drops every entry left).
  virtual absl::Status SetOrderValues(
      RecordKind kind, const std::vector<std::pair<StoredRecord, OrderValues>>& values, bool done);

  // A bulk load: an import much larger than what the store holds
  // (Catalog::ImportFile). A store may drop the indexes only reads use
  // (SQLite: the eight order indexes, each of which takes every written row
  // at a random place) until EndBulkLoad rebuilds them, each by one sort;
  // reads meanwhile return the same records, found by scanning. Returns
  // false when the store has no such mode (PostgreSQL). Bulk loads nest: the
  // indexes come back when the last one ends. A crash in between leaves them
  // dropped and the next open of the store rebuilds them.
  virtual absl::StatusOr<bool> BeginBulkLoad() { return false; }
  // Rebuilds what BeginBulkLoad dropped, one index per step with the store
  // free for reads between steps; `step_done`, if set, gets each step's time.
  virtual absl::Status EndBulkLoad(
      const std::function<void(absl::Duration step)>& step_done = nullptr) {
    (void)step_done;
    return absl::OkStatus();
  }

  // Up to `limit` changes with revision > `after_revision`, oldest first.
  absl::StatusOr<std::vector<Change>> ChangesSince(int64_t after_revision, int limit) {
    return ChangesAfter(ChangePosition{after_revision}, limit);
  }
};

// ALREADY_EXISTS for a created id that is taken.
absl::Status AlreadyExistsError(RecordKind kind, absl::string_view id);

// ABORTED for an etag that no longer matches.
absl::Status StaleEtagError(RecordKind kind, absl::string_view id, int64_t expected,
                            int64_t actual);

}  // namespace modelatlas::catalog
