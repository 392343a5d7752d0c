#include "catalog-service/store/cached_store.h"

#include <algorithm>
#include <utility>

#include "absl/hash/hash.h"

namespace modelatlas::catalog {
size_t CachedStore::EntryBytes(const Entry& entry) {
  // The list node (the entry and two links), the record's block, two slots
  // of the index (a view and an iterator each, and a control byte: the
  // table is kept between 7/16 and 7/8 full, so up to about two slots per
  // entry), and 16 bytes of allocator header and rounding for each of the
  // two allocations.
  constexpr size_t kOverhead = sizeof(Entry) + 2 * sizeof(void*) +
                               2 * (sizeof(absl::string_view) + sizeof(Lru::iterator) + 1) + 2 * 16;
  return kOverhead + entry.record.block_bytes();
}

CachedStore::CachedStore(std::unique_ptr<CatalogStore> store, size_t capacity_bytes)
    : store_(std::move(store)), capacity_bytes_(capacity_bytes) {}

CachedStore::Stats CachedStore::stats() const {
  absl::MutexLock lock(&mutex_);
  return {hits_, misses_, static_cast<int64_t>(lru_.size()), static_cast<int64_t>(bytes_),
          refused_};
}

absl::StatusOr<StoredRecord> CachedStore::Get(RecordKind kind, absl::string_view id) {
  absl::StatusOr<SharedRecord> record = GetShared(kind, id);
  if (!record.ok()) return record.status();
  return record->ToStored();  // copied outside the lock
}

absl::StatusOr<SharedRecord> CachedStore::GetShared(RecordKind kind, absl::string_view id) {
  uint64_t writes_before = 0;
  bool admit = false;
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
    admit = AdmitMiss(kind, id);
  }
  absl::StatusOr<SharedRecord> record = store_->GetShared(kind, id);
  // A refused record is not looked at again: the lock is not taken twice.
  if (record.ok() && admit) {
    absl::MutexLock lock(&mutex_);
    if (writes_ == writes_before) Remember(kind, *record);
  }
  return record;
}

bool CachedStore::AdmitMiss(RecordKind kind, absl::string_view id) {
  // Room for a record of about the mean size: no eviction, keep it.
  const size_t mean_bytes = lru_.empty() ? 0 : bytes_ / lru_.size();
  if (bytes_ + mean_bytes <= capacity_bytes_) return true;
  if (doorkeeper_.empty()) doorkeeper_.assign(kDoorkeeperBits / 64, 0);
  const size_t bit = absl::HashOf(Kind(kind), id) & (kDoorkeeperBits - 1);
  uint64_t& word = doorkeeper_[bit / 64];
  const uint64_t mask = uint64_t{1} << (bit % 64);
  if ((word & mask) != 0) return true;
  // Cleared before this key's mark, so a key is remembered for at least
  // the next `records` refused misses.
  if (doorkeeper_marks_ >= std::clamp<size_t>(lru_.size(), 1, kDoorkeeperBits / 16)) {
    std::fill(doorkeeper_.begin(), doorkeeper_.end(), 0);
    doorkeeper_marks_ = 0;
  }
  word |= mask;
  ++doorkeeper_marks_;
  ++refused_;
  return false;
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

void CachedStore::Remember(RecordKind kind, SharedRecord record) {
  auto& index = index_[Kind(kind)];
  if (index.contains(record.id())) return;  // another reader cached it first
  Entry entry{std::move(record), kind};
  const size_t bytes = EntryBytes(entry);
  if (bytes > capacity_bytes_) return;
  while (bytes_ + bytes > capacity_bytes_ && !lru_.empty()) {
    Forget(lru_.back().kind, lru_.back().id());
  }
  lru_.push_front(std::move(entry));
  index.emplace(lru_.front().id(), lru_.begin());
  bytes_ += bytes;
}

void CachedStore::Forget(RecordKind kind, absl::string_view id) {
  auto& index = index_[Kind(kind)];
  auto found = index.find(id);
  if (found == index.end()) return;
  const Lru::iterator entry = found->second;
  bytes_ -= EntryBytes(*entry);
  // The key is a view of the entry's text (and `id` may be too): out of the
  // index first, then the entry freed.
  index.erase(found);
  lru_.erase(entry);
}

}  // namespace modelatlas::catalog
