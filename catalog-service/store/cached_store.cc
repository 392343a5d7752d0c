#include "catalog-service/store/cached_store.h"

#include <utility>

namespace modelatlas::catalog {
namespace {

// What one cached record costs: its strings, the list node and the index
// entry (estimated as the node's size; the id is stored twice).
size_t EntryBytes(const StoredRecord& record) {
  constexpr size_t kOverhead = 2 * sizeof(StoredRecord) + 64;
  return kOverhead + 2 * record.id.size() + record.display_name.size() + record.payload.size();
}

}  // namespace

CachedStore::CachedStore(std::unique_ptr<CatalogStore> store, size_t capacity_bytes)
    : store_(std::move(store)), capacity_bytes_(capacity_bytes) {}

CachedStore::Stats CachedStore::stats() const {
  absl::MutexLock lock(&mutex_);
  return {hits_, misses_, static_cast<int64_t>(lru_.size()), static_cast<int64_t>(bytes_)};
}

absl::StatusOr<StoredRecord> CachedStore::Get(RecordKind kind, absl::string_view id) {
  uint64_t writes_before = 0;
  {
    absl::MutexLock lock(&mutex_);
    auto& index = index_[Kind(kind)];
    if (auto found = index.find(id); found != index.end()) {
      lru_.splice(lru_.begin(), lru_, found->second);
      ++hits_;
      return found->second->record;
    }
    ++misses_;
    writes_before = writes_;
  }
  absl::StatusOr<StoredRecord> record = store_->Get(kind, id);
  if (record.ok()) {
    absl::MutexLock lock(&mutex_);
    if (writes_ == writes_before) Remember(kind, *record);
  }
  return record;
}

absl::StatusOr<int64_t> CachedStore::Write(const std::vector<BatchWrite>& writes) {
  absl::StatusOr<int64_t> revision = store_->Write(writes);
  // Dropped whatever the outcome: cheap, and never wrong.
  absl::MutexLock lock(&mutex_);
  for (const BatchWrite& write : writes) Forget(write.record.kind, write.record.id);
  ++writes_;
  return revision;
}

absl::StatusOr<int64_t> CachedStore::Delete(RecordKind kind, absl::string_view id,
                                            int64_t expected_revision) {
  absl::StatusOr<int64_t> revision = store_->Delete(kind, id, expected_revision);
  absl::MutexLock lock(&mutex_);
  Forget(kind, id);
  ++writes_;
  return revision;
}

void CachedStore::Remember(RecordKind kind, StoredRecord record) {
  const size_t bytes = EntryBytes(record);
  if (bytes > capacity_bytes_) return;
  auto& index = index_[Kind(kind)];
  if (index.contains(record.id)) return;  // another reader cached it first
  while (bytes_ + bytes > capacity_bytes_ && !lru_.empty()) {
    Forget(lru_.back().kind, lru_.back().record.id);
  }
  std::string id = record.id;
  lru_.push_front(Entry{kind, std::move(record), bytes});
  index.emplace(std::move(id), lru_.begin());
  bytes_ += bytes;
}

void CachedStore::Forget(RecordKind kind, absl::string_view id) {
  auto& index = index_[Kind(kind)];
  auto found = index.find(id);
  if (found == index.end()) return;
  bytes_ -= found->second->bytes;
  lru_.erase(found->second);
  index.erase(found);
}

}  // namespace modelatlas::catalog
