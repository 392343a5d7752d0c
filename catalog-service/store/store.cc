#include "catalog-service/store/store.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status/errors.h"

namespace modelatlas::catalog {

absl::string_view RecordKindName(RecordKind kind) {
  return kind == RecordKind::kModel ? "model" : "hardware";
}

absl::Status StaleEtagError(RecordKind kind, absl::string_view id, int64_t expected,
                            int64_t actual) {
  return WithReason(absl::AbortedError(absl::StrCat(
                        RecordKindName(kind), " \"", id, "\" has changed: etag r", expected,
                        " is stale, the record is at r", actual, "; read it again and retry")),
                    "ETAG_MISMATCH");
}

absl::StatusOr<SharedRecord> CatalogStore::GetShared(RecordKind kind, absl::string_view id) {
  absl::StatusOr<StoredRecord> record = Get(kind, id);
  if (!record.ok()) return record.status();
  return SharedRecord::From(*record);
}

absl::StatusOr<std::vector<StoredRecord>> CatalogStore::GetMany(
    RecordKind kind, const std::vector<std::string>& ids) {
  std::vector<StoredRecord> found;
  for (const std::string& id : ids) {
    absl::StatusOr<StoredRecord> record = Get(kind, id);
    if (absl::IsNotFound(record.status())) continue;
    if (!record.ok()) return record.status();
    found.push_back(*std::move(record));
  }
  return found;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> CatalogStore::FindIdsByLookupKeys(
    RecordKind kind, const std::vector<std::string>& keys) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const std::string& key : keys) {
    absl::StatusOr<std::vector<std::string>> ids = FindIdsByLookupKey(kind, key);
    if (!ids.ok()) return ids.status();
    for (std::string& id : *ids) found.emplace_back(key, std::move(id));
  }
  return found;
}

absl::StatusOr<int64_t> CatalogStore::WriteInOneTransaction(const BatchSource& next_batch) {
  std::vector<BatchWrite> all;
  std::vector<BatchWrite> batch;
  while (true) {
    batch.clear();
    if (absl::Status s = next_batch(&batch); !s.ok()) return s;
    if (batch.empty()) break;
    for (BatchWrite& write : batch) all.push_back(std::move(write));
  }
  if (all.empty()) return Revision();
  return Write(all);
}

const char* SqlComparison(ColumnTest::Op op) {
  switch (op) {
    case ColumnTest::Op::kLess:
      return "<";
    case ColumnTest::Op::kLessOrEqual:
      return "<=";
    case ColumnTest::Op::kGreaterOrEqual:
      return ">=";
    case ColumnTest::Op::kGreater:
      return ">";
    case ColumnTest::Op::kEqual:
    case ColumnTest::Op::kContains:
      break;
  }
  return "=";
}

absl::string_view OrderColumnField(OrderColumn column) {
  switch (column) {
    case OrderColumn::kParameters:
      return "parameters";
    case OrderColumn::kTrainingComputeFlop:
      return "training_compute_flop";
    case OrderColumn::kPublicationDate:
      return "publication_date";
    case OrderColumn::kDisplayName:
      return "display_name";
  }
  return "";
}

absl::StatusOr<std::vector<OrderedRecord>> CatalogStore::ListOrdered(RecordKind, OrderColumn, bool,
                                                                     const OrderSeek&, int) {
  return absl::UnimplementedError(absl::StrCat(backend(), " store does not order lists"));
}

absl::StatusOr<std::vector<StoredRecord>> CatalogStore::RecordsWithoutOrderValues(RecordKind, int) {
  return std::vector<StoredRecord>();
}

absl::Status CatalogStore::SetOrderValues(RecordKind,
                                          const std::vector<std::pair<StoredRecord, OrderValues>>&,
                                          bool) {
  return absl::UnimplementedError(absl::StrCat(backend(), " store does not order lists"));
}

absl::StatusOr<int64_t> CatalogStore::Insert(const std::vector<RecordWrite>& records) {
  std::vector<BatchWrite> writes;
  writes.reserve(records.size());
  for (const RecordWrite& record : records) {
    writes.push_back({BatchWrite::Operation::kCreate, record, 0});
  }
  return Write(writes);
}

absl::StatusOr<int64_t> CatalogStore::Update(const RecordWrite& record, int64_t expected_revision) {
  return Write({{BatchWrite::Operation::kUpdate, record, expected_revision}});
}

absl::Status AlreadyExistsError(RecordKind kind, absl::string_view id) {
  return WithReason(
      absl::AlreadyExistsError(absl::StrCat(RecordKindName(kind), " \"", id, "\" already exists")),
      "RESOURCE_ALREADY_EXISTS");
}

}  // namespace modelatlas::catalog
