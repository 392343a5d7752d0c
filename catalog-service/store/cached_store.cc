#include "catalog-service/store/cached_store.h"

#include <algorithm>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/numeric/bits.h"

namespace modelatlas::catalog {
namespace {

// Each shard's share of the budget is at least this (so that a small budget,
// a test's few KiB, is one shard with the whole of it), and there are at
// most kMaxShards: 16 locks for 32 calls in flight on a few cores.
constexpr size_t kMinShardBytes = size_t{4} << 20;
constexpr size_t kMaxShards = 16;
// A table's first size, in slots.
constexpr size_t kMinSlots = 16;

size_t ShardCount(size_t capacity_bytes, size_t asked) {
  if (asked > 0) return absl::bit_floor(std::min(asked, kMaxShards));
  return absl::bit_floor(std::clamp<size_t>(capacity_bytes / kMinShardBytes, 1, kMaxShards));
}

// The slots a table needs to hold `records` at most 3/4 full (linear
// probing's runs stay short below that), never fewer than it has: a table
// only grows, and what it takes is counted in the budget.
size_t SlotsFor(size_t records, size_t slots_now) {
  size_t slots = std::max(kMinSlots, slots_now);
  while (records * 4 > slots * 3) slots *= 2;
  return slots;
}

}  // namespace

CachedStore::CachedStore(std::unique_ptr<CatalogStore> store, size_t capacity_bytes, size_t shards)
    : ForwardingStore(std::move(store)),
      capacity_bytes_(capacity_bytes),
      arena_(RecordArena::Create(capacity_bytes, &outside_arena_bytes_)) {
  const size_t count = ShardCount(capacity_bytes, shards);
  shard_mask_ = count - 1;
  shard_shift_ = 64 - absl::countr_zero(count);
  if (count == 1) shard_shift_ = 0;  // hash >> 0 & 0: shard 0
  for (size_t i = 0; i < count; ++i) {
    shards_.push_back(std::make_unique<Shard>());
    shards_.back()->capacity_bytes = capacity_bytes / count;
  }
}

CachedStore::~CachedStore() { arena_->Release(); }

uint64_t CachedStore::HashOf(RecordKind kind, absl::string_view id) {
  return absl::HashOf(Kind(kind), id);
}

size_t CachedStore::RecordBytes(const SharedRecord& record) {
  // glibc's malloc: an 8-byte chunk header, the chunk rounded up to 16.
  constexpr size_t kAllocatorBytes = 8 + 15 + 1;
  return record.block_bytes() + kAllocatorBytes;
}

CachedStore::Stats CachedStore::stats() const {
  Stats stats;
  for (const auto& shard : shards_) {
    absl::MutexLock lock(&shard->mutex);
    stats.hits += shard->hits;
    stats.misses += shard->misses;
    stats.refused += shard->refused;
    stats.records += static_cast<int64_t>(shard->records);
    stats.bytes += static_cast<int64_t>(shard->record_bytes + shard->table_bytes());
    stats.index_bytes += static_cast<int64_t>(shard->table_bytes());
  }
  const RecordArena::Stats arena = arena_->stats();
  stats.arena_bytes = static_cast<int64_t>(arena.chunk_bytes);
  stats.arena_blocks = static_cast<int64_t>(arena.live_blocks);
  stats.outside_arena_bytes = outside_arena_bytes_.load(std::memory_order_relaxed);
  return stats;
}

absl::StatusOr<int64_t> CachedStore::Preload(const std::function<bool()>& stop) {
  // Pages of this many records: the store's lock is held for one page at a
  // time, so reads that miss meanwhile wait for at most one page.
  constexpr int kPage = 512;
  int64_t kept = 0;
  std::vector<uint64_t> writes_before(shards_.size());
  for (const RecordKind kind : {RecordKind::kHardware, RecordKind::kModel}) {
    std::string after;
    std::vector<bool> full(shards_.size(), false);
    size_t full_shards = 0;
    while (full_shards < shards_.size()) {
      if (stop && stop()) return kept;
      for (size_t i = 0; i < shards_.size(); ++i) {
        absl::MutexLock lock(&shards_[i]->mutex);
        writes_before[i] = shards_[i]->writes;
      }
      absl::StatusOr<std::vector<StoredRecord>> page = inner().List(kind, after, kPage);
      if (!page.ok()) return page.status();
      if (page->empty()) break;
      after = page->back().id;
      for (const StoredRecord& stored : *page) {
        const uint64_t hash = HashOf(kind, stored.id);
        const size_t index = hash >> shard_shift_ & shard_mask_;
        Shard& shard = *shards_[index];
        SharedRecord record = SharedRecord::From(stored, arena_);
        const size_t bytes = RecordBytes(record);
        absl::MutexLock lock(&shard.mutex);
        if (shard.writes != writes_before[index]) continue;
        if (Find(shard, hash, kind, stored.id) >= 0) continue;
        const size_t slots = SlotsFor(shard.records + 1, shard.slots.size());
        if (shard.record_bytes + bytes + slots * sizeof(Slot) > shard.capacity_bytes) {
          // No eviction: the shard is full. Once every shard has refused a
          // record the preload ends (a smaller record might still fit).
          if (!full[index]) {
            full[index] = true;
            ++full_shards;
          }
          continue;
        }
        if (Remember(shard, hash, kind, std::move(record))) {
          ++kept;
        } else if (!full[index]) {  // the arena and the tables fill the budget
          full[index] = true;
          ++full_shards;
        }
      }
    }
  }
  return kept;
}

absl::StatusOr<StoredRecord> CachedStore::Get(RecordKind kind, absl::string_view id) {
  absl::StatusOr<SharedRecord> record = GetShared(kind, id);
  if (!record.ok()) return record.status();
  return record->ToStored();  // copied outside the lock
}

int64_t CachedStore::Find(const Shard& shard, uint64_t hash, RecordKind kind,
                          absl::string_view id) {
  if (shard.slots.empty()) return -1;
  const size_t mask = shard.slots.size() - 1;
  const auto hash32 = static_cast<uint32_t>(hash);
  const auto kind8 = static_cast<uint8_t>(Kind(kind));
  for (size_t at = hash32 & mask;; at = (at + 1) & mask) {
    const Slot& slot = shard.slots[at];
    if (!slot.record) return -1;  // never full: a run ends at an empty slot
    if (slot.hash == hash32 && slot.kind == kind8) {
      slot.record.Prefetch(slot.block_lines);
      if (slot.record.id() == id) return static_cast<int64_t>(at);
    }
  }
}

absl::StatusOr<SharedRecord> CachedStore::GetShared(RecordKind kind, absl::string_view id) {
  const uint64_t hash = HashOf(kind, id);
  Shard& shard = ShardOf(hash);
  uint64_t writes_before = 0;
  uint64_t evictions_before = 0;
  bool admit = false;
  {
    absl::MutexLock lock(&shard.mutex);
    if (const int64_t at = Find(shard, hash, kind, id); at >= 0) {
      Slot& slot = shard.slots[static_cast<size_t>(at)];
      if (slot.referenced == 0) slot.referenced = 1;  // no write when already set
      ++shard.hits;
      return slot.record;
    }
    ++shard.misses;
    writes_before = shard.writes;
    evictions_before = shard.evictions;
    admit = AdmitMiss(shard, hash);
  }
  absl::StatusOr<SharedRecord> record = inner().GetShared(kind, id);
  // Following a shared store, a miss may read a newer record (or its
  // deletion) than an overlapping miss, by a write this cache has not seen
  // yet. Kept, it replaces an older copy (Remember). Not kept, it still drops
  // a cached copy older than what it read (one another miss kept while this
  // one read), and counts as a write, so that a miss that began before it
  // keeps nothing: either way no hit goes back from what this one answers.
  // And a newer copy kept by another miss may have been evicted since: then
  // this one keeps nothing either (Shard::evicted).
  const bool following = following_.load(std::memory_order_relaxed);
  // Otherwise a refused record is not looked at again: the lock is not taken twice.
  if (record.ok() && admit) {
    // The kept copy in the arena, made outside the lock; this caller's
    // reply keeps the block read.
    SharedRecord kept = record->CopiedInto(arena_);
    absl::MutexLock lock(&shard.mutex);
    const bool remembered = shard.writes == writes_before &&
                            !(following && EvictedNewerSince(shard, evictions_before, hash, kind,
                                                             record->revision())) &&
                            Remember(shard, hash, kind, std::move(kept));
    if (!remembered && following) KeptNothing(shard, hash, kind, id, &*record);
  } else if (following) {
    absl::MutexLock lock(&shard.mutex);
    KeptNothing(shard, hash, kind, id, record.ok() ? &*record : nullptr);
  }
  return record;
}

bool CachedStore::EvictedNewerSince(const Shard& shard, uint64_t evictions_before, uint64_t hash,
                                    RecordKind kind, int64_t revision) {
  if (shard.evictions - evictions_before > kEvictionsRemembered) return true;
  const auto hash32 = static_cast<uint32_t>(hash);
  const auto kind8 = static_cast<uint8_t>(Kind(kind));
  for (uint64_t n = evictions_before; n < shard.evictions; ++n) {
    const Evicted& evicted = shard.evicted[n % kEvictionsRemembered];
    // A 32-bit hash shared by another key only makes this miss keep nothing.
    if (evicted.hash == hash32 && evicted.kind == kind8 && evicted.revision > revision) {
      return true;
    }
  }
  return false;
}

void CachedStore::KeptNothing(Shard& shard, uint64_t hash, RecordKind kind, absl::string_view id,
                              const SharedRecord* read) {
  if (const int64_t at = Find(shard, hash, kind, id); at >= 0) {
    const SharedRecord& cached = shard.slots[static_cast<size_t>(at)].record;
    if (read == nullptr || cached.revision() < read->revision()) {
      EraseSlot(shard, static_cast<size_t>(at));
    }
  }
  ++shard.writes;
}

bool CachedStore::AdmitMiss(Shard& shard, uint64_t hash) {
  // Room for a record of about the mean size, with the table it would
  // need: no eviction, keep it.
  const size_t mean_bytes = shard.records == 0 ? 0 : shard.record_bytes / shard.records;
  const size_t slots = SlotsFor(shard.records + 1, shard.slots.size());
  if (shard.record_bytes + mean_bytes + slots * sizeof(Slot) <= shard.capacity_bytes) return true;
  const size_t bits = kDoorkeeperBits / shards_.size();
  if (shard.doorkeeper.empty()) shard.doorkeeper.assign(bits / 64, 0);
  // Bits below the shard's own (the top ones pick the shard).
  const size_t bit = (hash ^ (hash >> 29)) & (bits - 1);
  uint64_t& word = shard.doorkeeper[bit / 64];
  const uint64_t mask = uint64_t{1} << (bit % 64);
  if ((word & mask) != 0) return true;
  // Cleared before this key's mark, so a key is remembered for at least
  // the next `records` refused misses.
  if (shard.doorkeeper_marks >= std::clamp<size_t>(shard.records, 1, bits / 16)) {
    std::fill(shard.doorkeeper.begin(), shard.doorkeeper.end(), 0);
    shard.doorkeeper_marks = 0;
  }
  word |= mask;
  ++shard.doorkeeper_marks;
  ++shard.refused;
  return false;
}

absl::StatusOr<int64_t> CachedStore::Write(const std::vector<BatchWrite>& writes) {
  absl::StatusOr<int64_t> revision = inner().Write(writes);
  // Dropped whatever the outcome: cheap, and never wrong.
  ForgetWritten(writes);
  return revision;
}

absl::StatusOr<int64_t> CachedStore::WriteInOneTransaction(const BatchSource& next_batch) {
  absl::StatusOr<int64_t> revision =
      inner().WriteInOneTransaction([&](std::vector<BatchWrite>* batch) -> absl::Status {
        if (absl::Status s = next_batch(batch); !s.ok()) return s;
        ForgetWritten(*batch);
        return absl::OkStatus();
      });
  ForgetWritten({});  // whatever the outcome, as Write
  return revision;
}

// Every shard counts the write, so no read that overlapped it keeps what it
// read.
void CachedStore::ForgetWritten(const std::vector<BatchWrite>& writes) {
  ForgetRecords(writes.size(), [&writes](size_t i) {
    return std::pair<RecordKind, absl::string_view>(writes[i].record.kind, writes[i].record.id);
  });
}

void CachedStore::ForgetChanged(const std::vector<Change>& changes) {
  ForgetRecords(changes.size(), [&changes](size_t i) {
    return std::pair<RecordKind, absl::string_view>(changes[i].kind, changes[i].id);
  });
}

void CachedStore::ForgetRecords(
    size_t count, absl::FunctionRef<std::pair<RecordKind, absl::string_view>(size_t)> key_of) {
  std::vector<uint64_t> hashes;
  hashes.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const auto [kind, id] = key_of(i);
    hashes.push_back(HashOf(kind, id));
  }
  for (const auto& shard : shards_) {
    absl::MutexLock lock(&shard->mutex);
    for (size_t i = 0; i < count; ++i) {
      if (&ShardOf(hashes[i]) != shard.get()) continue;
      const auto [kind, id] = key_of(i);
      Forget(*shard, hashes[i], kind, id);
    }
    // Every shard counts the write, so no read that overlapped it keeps
    // what it read.
    ++shard->writes;
  }
}

void CachedStore::FollowChangesAfter(int64_t start_revision, int page_changes) {
  absl::MutexLock lock(&follow_mutex_);
  following_.store(true, std::memory_order_release);
  follow_page_changes_ = std::max(page_changes, 1);
  follow_position_ = ChangePosition{start_revision};
  followed_revision_.store(start_revision, std::memory_order_release);
}

absl::Status CachedStore::CatchUp() {
  absl::MutexLock lock(&follow_mutex_);
  return ReadChangeLog();
}

void CachedStore::CatchUpTo(int64_t revision) {
  if (!following_.load(std::memory_order_acquire) || followed_revision() >= revision) return;
  absl::MutexLock lock(&follow_mutex_);
  // Callers that waited for the lock (every Watch stream that saw the same
  // write) find the log read by the first, without a query of their own.
  if (followed_revision() >= revision) return;
  // A failure emptied the cache.
  ReadChangeLog().IgnoreError();
}

absl::Status CachedStore::ReadChangeLog() {
  // Pages until one comes back short: the log's end as of that query. The
  // followed revision moves only then: a revision's changes (an import's
  // thousands) may span pages.
  int64_t last_revision = followed_revision_.load(std::memory_order_relaxed);
  while (true) {
    absl::StatusOr<std::vector<Change>> page =
        inner().ChangesAfter(follow_position_, follow_page_changes_);
    if (!page.ok()) {
      Clear();
      return page.status();
    }
    if (!page->empty()) {
      ForgetChanged(*page);
      follow_position_ = PositionAfter(page->back());
      last_revision = page->back().revision;
    }
    if (static_cast<int>(page->size()) < follow_page_changes_) break;
  }
  followed_revision_.store(last_revision, std::memory_order_release);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CachedStore::Revision() {
  absl::StatusOr<int64_t> revision = inner().Revision();
  if (revision.ok()) CatchUpTo(*revision);
  return revision;
}

absl::StatusOr<std::vector<Change>> CachedStore::ChangesAfter(const ChangePosition& after,
                                                              int limit) {
  absl::StatusOr<std::vector<Change>> changes = inner().ChangesAfter(after, limit);
  if (changes.ok() && !changes->empty()) CatchUpTo(changes->back().revision);
  return changes;
}

void CachedStore::Clear() {
  for (const auto& shard : shards_) {
    absl::MutexLock lock(&shard->mutex);
    // EraseSlot may shift a later record into `at`: look at it again.
    for (size_t at = 0; at < shard->slots.size();) {
      if (shard->slots[at].record) {
        EraseSlot(*shard, at);
      } else {
        ++at;
      }
    }
    ++shard->writes;
  }
}

absl::StatusOr<int64_t> CachedStore::Delete(RecordKind kind, absl::string_view id,
                                            int64_t expected_revision) {
  absl::StatusOr<int64_t> revision = inner().Delete(kind, id, expected_revision);
  const uint64_t hash = HashOf(kind, id);
  for (const auto& shard : shards_) {
    absl::MutexLock lock(&shard->mutex);
    if (&ShardOf(hash) == shard.get()) Forget(*shard, hash, kind, id);
    ++shard->writes;
  }
  return revision;
}

bool CachedStore::Remember(Shard& shard, uint64_t hash, RecordKind kind, SharedRecord record) {
  if (const int64_t at = Find(shard, hash, kind, record.id()); at >= 0) {
    // Another reader cached it first. Its copy stays unless this one is
    // newer: two misses of one record can overlap a write that this store
    // did not make (another replica's, before the follower reads it), the
    // one that read the old record keeping it first; the other has answered
    // the new one, which a hit must not go back from.
    if (shard.slots[static_cast<size_t>(at)].record.revision() >= record.revision()) return false;
    EraseSlot(shard, static_cast<size_t>(at));
  }
  const size_t bytes = RecordBytes(record);
  // Evict until the record and the table it needs fit; give up (the record
  // is still answered) if even an empty shard's smallest table cannot hold it.
  size_t slots = SlotsFor(shard.records + 1, shard.slots.size());
  while (shard.record_bytes + bytes + slots * sizeof(Slot) > shard.capacity_bytes) {
    if (shard.records == 0) return false;
    EvictOne(shard);
    slots = SlotsFor(shard.records + 1, shard.slots.size());
  }
  const size_t outside =
      (slots - shard.slots.size()) * sizeof(Slot) + (record.in_arena() ? 0 : bytes);
  if (outside > 0 && !RoomOutsideTheArena(outside)) {
    ++shard.refused;
    return false;
  }
  if (slots != shard.slots.size()) Resize(shard, slots);
  if (!record.in_arena()) outside_arena_bytes_.fetch_add(static_cast<int64_t>(bytes));
  const size_t mask = shard.slots.size() - 1;
  size_t at = static_cast<uint32_t>(hash) & mask;
  while (shard.slots[at].record) at = (at + 1) & mask;
  Slot& slot = shard.slots[at];
  slot.hash = static_cast<uint32_t>(hash);
  slot.kind = static_cast<uint8_t>(Kind(kind));
  slot.referenced = 0;  // a second chance is earned by a hit
  slot.block_lines = static_cast<uint16_t>(std::min<size_t>(record.cache_lines(), 0xffff));
  slot.record = std::move(record);
  ++shard.records;
  shard.record_bytes += bytes;
  return true;
}

void CachedStore::Forget(Shard& shard, uint64_t hash, RecordKind kind, absl::string_view id) {
  const int64_t at = Find(shard, hash, kind, id);
  if (at >= 0) EraseSlot(shard, static_cast<size_t>(at));
}

void CachedStore::EraseSlot(Shard& shard, size_t at) {
  const size_t mask = shard.slots.size() - 1;
  const size_t bytes = RecordBytes(shard.slots[at].record);
  shard.record_bytes -= bytes;
  if (!shard.slots[at].record.in_arena()) {
    outside_arena_bytes_.fetch_sub(static_cast<int64_t>(bytes));
  }
  --shard.records;
  // `id` given to Forget may be a view of this block: it is not read after.
  shard.slots[at] = Slot();
  // Backward shift (Knuth, TAOCP vol. 3, 6.4, Algorithm R): a later slot of
  // the run moves into the gap unless its home lies cyclically after the
  // gap, so every record stays reachable from its home without tombstones.
  size_t gap = at;
  for (size_t next = (gap + 1) & mask; shard.slots[next].record; next = (next + 1) & mask) {
    const size_t home = shard.slots[next].hash & mask;
    if (((next - home) & mask) >= ((next - gap) & mask)) {
      shard.slots[gap] = std::move(shard.slots[next]);
      shard.slots[next] = Slot();
      gap = next;
    }
  }
}

void CachedStore::EvictOne(Shard& shard) {
  const size_t mask = shard.slots.size() - 1;
  // Each eviction starts at a random slot (xorshift64, Marsaglia 2003) and
  // gives a second chance to the hit records it passes. A hand kept from
  // one eviction to the next (CLOCK proper) empties the slots just behind
  // it while the insertions of a whole sweep pile up ahead of it: runs
  // ahead of the hand grew to hundreds of slots, and the backward shift of
  // every eviction and the probe of every miss walked them (a sixth of the
  // catalog's CPU at 1,000,000 models in a full 64 MiB cache). Started at
  // random, evictions empty slots evenly and runs stay as short as the
  // table's load makes them.
  shard.hand ^= shard.hand << 13;
  shard.hand ^= shard.hand >> 7;
  shard.hand ^= shard.hand << 17;
  // Ends within two passes over the table: the first clears every bit.
  for (size_t at = shard.hand & mask;; at = (at + 1) & mask) {
    Slot& slot = shard.slots[at];
    if (!slot.record) continue;
    if (slot.referenced == 0) {
      // Only when following: reading the revision touches the cold block.
      if (following_.load(std::memory_order_relaxed)) {
        shard.evicted[shard.evictions % kEvictionsRemembered] = {slot.hash, slot.kind,
                                                                 slot.record.revision()};
        ++shard.evictions;
      }
      EraseSlot(shard, at);
      return;
    }
    slot.referenced = 0;
  }
}

bool CachedStore::RoomOutsideTheArena(size_t more) const {
  const int64_t outside = outside_arena_bytes_.load(std::memory_order_relaxed);
  return arena_->mapped_bytes() + static_cast<size_t>(std::max<int64_t>(0, outside)) + more <=
         capacity_bytes_;
}

void CachedStore::Resize(Shard& shard, size_t slots) {
  outside_arena_bytes_.fetch_add(static_cast<int64_t>((slots - shard.slots.size()) * sizeof(Slot)));
  std::vector<Slot> old = std::exchange(shard.slots, std::vector<Slot>(slots));
  const size_t mask = slots - 1;
  for (Slot& slot : old) {
    if (!slot.record) continue;
    size_t at = slot.hash & mask;
    while (shard.slots[at].record) at = (at + 1) & mask;
    shard.slots[at] = std::move(slot);
  }
}

}  // namespace modelatlas::catalog
