#include "estimator-service/catalog/record_table.h"

#include <algorithm>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "common/records/lookup_keys.h"
#include "common/status/resource_names.h"

namespace modelatlas::estimator {
template <typename Record>
void RecordTable<Record>::Put(const std::string& name, Record record) {
  auto it = records_.find(name);
  if (it != records_.end()) {
    RemoveKeys(it->second);
    it->second = std::move(record);
  } else {
    it = records_.emplace(name, std::move(record)).first;
    by_name_[name] = &it->second;
  }
  AddKeys(it->second);
}

template <typename Record>
void RecordTable<Record>::Erase(const std::string& name) {
  auto it = records_.find(name);
  if (it == records_.end()) return;
  RemoveKeys(it->second);
  by_name_.erase(name);
  records_.erase(it);
}

template <typename Record>
const Record* RecordTable<Record>::FindByName(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

template <typename Record>
const Record* RecordTable<Record>::Find(absl::string_view name) const {
  if (const Record* named = FindByName(name); named != nullptr) return named;
  return FindByKey(name);
}

template <typename Record>
const Record* RecordTable<Record>::FindByKey(absl::string_view name) const {
  auto it = by_key_.find(LookupKey(name));
  if (it == by_key_.end()) {
    // A bare id ("nvidia-v100-sxm2-16gb"), which need not spell the display name.
    if (!IsValidResourceId(name)) return nullptr;
    constexpr absl::string_view kCollection =
        std::is_same_v<Record, common::v1::Model> ? "models/" : "hardware/";
    return FindByName(absl::StrCat(kCollection, name));
  }
  return it->second.size() == 1 ? it->second.front() : nullptr;
}

template <typename Record>
void RecordTable<Record>::AddKeys(const Record& record) {
  for (const std::string& key : LookupKeysOf(record)) {
    std::vector<const Record*>& records = by_key_[key];
    if (std::find(records.begin(), records.end(), &record) == records.end()) {
      records.push_back(&record);
    }
  }
}

template <typename Record>
void RecordTable<Record>::RemoveKeys(const Record& record) {
  for (const std::string& key : LookupKeysOf(record)) {
    auto it = by_key_.find(key);
    if (it == by_key_.end()) continue;
    std::vector<const Record*>& records = it->second;
    records.erase(std::remove(records.begin(), records.end(), &record), records.end());
    if (records.empty()) by_key_.erase(it);
  }
}

template class RecordTable<common::v1::Model>;
template class RecordTable<common::v1::Hardware>;

}  // namespace modelatlas::estimator
