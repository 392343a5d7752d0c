// Records of one kind held by the estimator's snapshot: in resource-name
// order (whole-catalog answers list them that way), found by resource name
// or by display name / alias ignoring case and punctuation, and kept current
// one record at a time. A Watch message changes a few records; re-indexing
// 100,000 of them under the writer lock for each one stalled estimates.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::estimator {

template <typename Record>
class RecordTable {
 public:
  RecordTable() = default;
  // Moves keep the records where they are (std::map nodes), so the indexes
  // that point at them stay valid.
  RecordTable(RecordTable&&) = default;
  RecordTable& operator=(RecordTable&&) = default;
  RecordTable(const RecordTable&) = delete;
  RecordTable& operator=(const RecordTable&) = delete;

  // Adds or replaces the record named `name`.
  void Put(const std::string& name, Record record);
  void Erase(const std::string& name);

  // By resource name; null when unknown.
  const Record* FindByName(absl::string_view name) const;
  // By resource name, else by a display name or alias that only one record
  // has; null when unknown or ambiguous.
  const Record* Find(absl::string_view name) const;
  // Find without the resource-name lookup first: for a name that cannot be
  // one (it does not start with the collection, "models/" or "hardware/"),
  // where that lookup misses every time (the memory answer's display-name
  // lookup: docs/BENCHMARKS.md, session 15).
  const Record* FindByKey(absl::string_view name) const;

  size_t size() const { return records_.size(); }
  const std::map<std::string, Record>& ordered() const { return records_; }

 private:
  // `record` is the one held in records_ (its address is the index's).
  void AddKeys(const Record& record);
  void RemoveKeys(const Record& record);

  std::map<std::string, Record> records_;
  absl::flat_hash_map<std::string, const Record*> by_name_;
  // LookupKey(display name or alias) -> the records that have it, by
  // address (a record keeps its address while it is replaced: std::map's
  // node), so that a lookup by display name is one hash lookup, not a
  // second one by resource name (docs/BENCHMARKS.md, session 15).
  absl::flat_hash_map<std::string, std::vector<const Record*>> by_key_;
};

extern template class RecordTable<common::v1::Model>;
extern template class RecordTable<common::v1::Hardware>;

}  // namespace modelatlas::estimator
