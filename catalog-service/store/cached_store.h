// A CatalogStore that keeps the records it has read in memory within a
// budget of bytes, in front of a store that no other process writes: the
// SQLite store, which holds its file exclusively. Every write and delete goes
// through this class, which drops the records it touches, so a cached record
// is always the stored one. On PostgreSQL, where other replicas write the
// same database behind it, only with a ChangeFollower (change_follower.h)
// making it forget what the change log says they wrote: their writes are
// then seen within about a poll interval (bounded staleness), and at once
// by a client this store has told their revision (FollowChangesAfter).
//
// Why: reading one record costs a SQLite statement (a B-tree lookup and a
// copy of the row) under the store's one connection: at 1,000,000 models
// about 16 us per miss (docs/BENCHMARKS.md); a hit costs a probe of the
// index and a reference to the cached block.
//
// Layout (compact, so that a budget can hold a whole catalog of a million
// records and a hit over it stays cheap): the budget is split into shards
// by the key's hash (up to 16, each at least 4 MiB, one when the budget is
// smaller), each with its own mutex, so concurrent readers rarely meet.
// A shard's index is one open-addressing table (linear probing,
// backward-shift deletion: no tombstones) of 16-byte slots: 32 bits of the
// key's hash, the kind, a "referenced" bit and the record's shared block.
// A hit reads one slot and the block it points at (which the reply needs
// anyway); before (a node-based hash map and an LRU list) it also read the
// list node and wrote three of them for the splice: CPU cache and TLB misses
// that made a hit over 690,000 records cost more than over 100,000.
// Eviction is second chance (CLOCK's rule; Corbato 1968, as in Tanenbaum,
// Modern Operating Systems, 3.4.5): a hit only sets the slot's bit (written
// only if clear); an eviction walks the table from a random slot, clearing
// set bits, and evicts the first record whose bit is clear (from a random
// slot, not a kept hand: see EvictOne). Counted in the budget: each block
// with an allocator header and rounding (24 bytes), and each shard's table
// (all its slots, empty ones too): bytes never exceed the budget.
//
// Admission: until a shard is full every record read is kept. Once it is
// full, keeping a record means evicting another, so a record read from the
// store is kept only if its key was missed once already within about the
// last `records` misses: a doorkeeper, the first stage of TinyLFU (Einziger,
// Friedman, Manes, "TinyLFU: A Highly Efficient Cache Admission Policy",
// ACM TOS 2017, section 3.4.2), here a bit array without the frequency
// sketch behind it. Reads at random over a catalog several times larger than
// the cache hit as often either way (the cached share of the keys), so the
// churn each miss paid bought nothing; a key read again soon (the head of a
// skewed workload) is kept on its second miss. Admission only decides what
// is kept: a write or delete drops the record whether or not it was kept,
// and a read that overlapped a write keeps nothing.
//
// Memory: the blocks the cache keeps are copied into its RecordArena (dense
// 2 MiB chunks advised as transparent huge pages, at most the budget of
// them; see record_arena.h), not left where the store's read allocated them
// among gRPC's allocations: a hit at random then reads a block whose page
// the TLB more likely holds. A block that does not fit the arena stays
// where it was. What the budget counts is unchanged (RecordBytes: a block
// and 24 bytes, more than its arena class's rounding).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "catalog-service/store/forwarding_store.h"
#include "catalog-service/store/store.h"

namespace modelatlas::catalog {

class CachedStore : public ForwardingStore {
 public:
  struct Stats {
    int64_t hits = 0;
    int64_t misses = 0;
    int64_t records = 0;
    // Bytes of the cached records (their blocks and the allocator's share)
    // and of the index tables: what is counted against the budget.
    int64_t bytes = 0;
    // Of `bytes`, the index tables' (empty slots included).
    int64_t index_bytes = 0;
    // Misses whose record was not kept: the cache was full and the
    // doorkeeper had not seen the key (see above).
    int64_t refused = 0;
    // The record arena's mapped chunks and the cached blocks in it.
    int64_t arena_bytes = 0;
    int64_t arena_blocks = 0;
    // The tables and the records kept outside the arena: with arena_bytes,
    // the cache's memory, within the budget.
    int64_t outside_arena_bytes = 0;
  };

  // capacity_bytes > 0: records are evicted beyond it. A record larger than
  // a shard's share of the budget is not cached. shards: 0 = from the
  // budget (one per 4 MiB, at most 16); tests give a count (a power of two).
  CachedStore(std::unique_ptr<CatalogStore> store, size_t capacity_bytes, size_t shards = 0);
  ~CachedStore() override;
  CachedStore(const CachedStore&) = delete;
  CachedStore& operator=(const CachedStore&) = delete;

  Stats stats() const;

  // Reads the stored records in id order (hardware, then models) into the
  // cache until it is full, without evicting: for an operator who sizes the
  // budget to hold the whole catalog, so that it answers from memory from
  // its start instead of after the millions of reads at random that would
  // otherwise fill it (reading all of N keys at random takes about N ln N).
  // A record that a write may have changed while its page was read is not
  // kept (the write counters, as for a miss). `stop` is asked between pages.
  // Returns the records kept.
  absl::StatusOr<int64_t> Preload(const std::function<bool()>& stop = nullptr);

  // Drops the records of `changes` and counts a write on every shard, as a
  // write through this store does: for writes made by another replica to a
  // shared database (PostgreSQL), which this store did not see; the
  // ChangeFollower (change_follower.h) reads them from the change log.
  void ForgetChanged(const std::vector<Change>& changes);

  // Following a store other processes write too (PostgreSQL replicas): from
  // now on this store reads the change log after `start_revision` (the
  // store's revision before anything was read into the cache), `page_changes`
  // per query, forgetting the records the changes name: at every CatchUp()
  // (a ChangeFollower's poll), and before it reports a revision it has not
  // caught up with. So every revision it reports, through Revision() or a
  // change read by ChangesAfter() (GetCatalogInfo, a List page, a Watch
  // message), is one its reads already reflect: a client told "revision R"
  // by this replica never reads a record older than R from it afterwards.
  // Before (s16), the Watch streams and the follower polled the log each on
  // its own, and a watcher told of another replica's write could read the
  // cached record from before it, within a poll interval; the Watch message
  // itself carried that cached record, so an estimator following this
  // replica kept the old one until the record changed again.
  // Called once, before the store is shared between threads.
  void FollowChangesAfter(int64_t start_revision, int page_changes = 1000);
  // Reads the change log from where it stopped to its end and forgets each
  // change's record; on an error empties the cache (no record is known to
  // be current) and keeps its place. One caller at a time reads the log.
  absl::Status CatchUp();
  // The revision of the last change forgotten (start_revision before any):
  // every write at or below it is reflected in the cache.
  int64_t followed_revision() const { return followed_revision_.load(std::memory_order_acquire); }
  // Drops every record and counts a write on every shard: when the change
  // log cannot be read, no record is known to be current.
  void Clear();

  // Every call not declared here is passed to the store as it is
  // (ForwardingStore): lookups by key, lists and counts; an import's batched
  // GetMany, not cached (mostly ids that do not exist); order values and
  // bulk loads (indexes), which are not part of a cached record.
  absl::StatusOr<StoredRecord> Get(RecordKind kind, absl::string_view id) override;
  // A hit takes a reference to the cached block: no copy, no allocation.
  absl::StatusOr<SharedRecord> GetShared(RecordKind kind, absl::string_view id) override;
  // When following (FollowChangesAfter): caught up with first.
  absl::StatusOr<int64_t> Revision() override;
  absl::StatusOr<int64_t> Write(const std::vector<BatchWrite>& writes) override;
  // The store's transaction (an atomic import), each batch's records
  // dropped as the batch is pulled, before its write: the SQLite store holds
  // its lock from the first pull to the commit, so a miss meanwhile waits
  // and reads the committed record, and the write counters keep a read that
  // began before from caching what it read. Nothing is kept of the batches
  // (the import's memory stays one batch's).
  absl::StatusOr<int64_t> WriteInOneTransaction(const BatchSource& next_batch) override;
  absl::StatusOr<int64_t> Delete(RecordKind kind, absl::string_view id,
                                 int64_t expected_revision) override;
  // When following: caught up with the last change's revision first, so
  // that a record read for a change (a Watch message's) is the one written.
  absl::StatusOr<std::vector<Change>> ChangesAfter(const ChangePosition& after, int limit) override;

 private:
  // One cached record: 32 bits of its key's hash (the table's home slot and
  // a filter before the ids are compared), its kind, the second-chance bit,
  // the block's size in cache lines, and the shared block holding its id,
  // display name and payload. Empty when the record is null. 16 bytes.
  struct Slot {
    uint32_t hash = 0;
    uint8_t kind = 0;
    uint8_t referenced = 0;
    // The CPU cache lines the block spans (at most 65,535; more are read as
    // used): a probe that matches the hash prefetches them all before it
    // compares the id, so that the block's header, id and payload (which
    // the reply's send reads) are fetched at once, not line after line.
    uint16_t block_lines = 0;
    SharedRecord record;
  };
  // An eviction a shard remembers when following (see Shard::evicted).
  struct Evicted {
    uint32_t hash = 0;
    uint8_t kind = 0;
    int64_t revision = 0;
  };
  static constexpr size_t kEvictionsRemembered = 16;
  // One share of the budget with its own lock (see the top of the file).
  // Aligned to a cache line so that two shards' locks never share one.
  struct alignas(64) Shard {
    mutable absl::Mutex mutex;
    size_t capacity_bytes = 0;
    // Empty, or a power of two with at most 3/4 of the slots in use.
    std::vector<Slot> slots ABSL_GUARDED_BY(mutex);
    size_t records ABSL_GUARDED_BY(mutex) = 0;
    // The records' bytes (RecordBytes), not the table's.
    size_t record_bytes ABSL_GUARDED_BY(mutex) = 0;
    // Where the next eviction starts: a random slot (EvictOne).
    uint64_t hand ABSL_GUARDED_BY(mutex) = 0x9e3779b97f4a7c15ULL;
    // When following a shared store: the last kEvictionsRemembered
    // evictions (a ring) and how many there have been. A miss whose record
    // is older than a copy evicted while it read keeps nothing: that copy
    // was kept by an overlapping miss that answered it, and a hit on the
    // older one would go back in time (see GetShared).
    std::array<Evicted, kEvictionsRemembered> evicted ABSL_GUARDED_BY(mutex);
    uint64_t evictions ABSL_GUARDED_BY(mutex) = 0;
    // Grows with every write (in every shard), after it commits and drops
    // what it touched: a record read from the store while a write ran may
    // be the old one, so a read caches its record only if no write ended
    // since it began. When following a shared store, also with every miss
    // that keeps nothing (see GetShared).
    uint64_t writes ABSL_GUARDED_BY(mutex) = 0;
    int64_t hits ABSL_GUARDED_BY(mutex) = 0;
    int64_t misses ABSL_GUARDED_BY(mutex) = 0;
    int64_t refused ABSL_GUARDED_BY(mutex) = 0;
    // The doorkeeper: one bit per hash of (kind, id) missed while full,
    // kDoorkeeperBits / shards of them (512 KiB over all shards, allocated
    // when the shard is first full: part of the catalog's constant memory,
    // not of the budget), cleared once it has marked as many keys as the
    // shard holds records (at most a sixteenth of its bits, so that a key
    // never missed is let in by a colliding bit less than one time in 16).
    std::vector<uint64_t> doorkeeper ABSL_GUARDED_BY(mutex);
    size_t doorkeeper_marks ABSL_GUARDED_BY(mutex) = 0;

    size_t table_bytes() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex) {
      return slots.size() * sizeof(Slot);
    }
  };

  static size_t Kind(RecordKind kind) { return kind == RecordKind::kModel ? 0 : 1; }
  static uint64_t HashOf(RecordKind kind, absl::string_view id);
  // What a record takes in the budget: its block with the allocator's
  // header and rounding.
  static size_t RecordBytes(const SharedRecord& record);
  Shard& ShardOf(uint64_t hash) const { return *shards_[hash >> shard_shift_ & shard_mask_]; }
  // The slot holding (kind, id), or -1.
  static int64_t Find(const Shard& shard, uint64_t hash, RecordKind kind, absl::string_view id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // Keeps the record, evicting as the budget needs; false when it is not
  // kept (cached already, larger than the shard, or no room outside the arena).
  bool Remember(Shard& shard, uint64_t hash, RecordKind kind, SharedRecord record)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // On a miss: whether the record read for this key is to be kept. True
  // while the shard has room; once full, true if the doorkeeper has seen the
  // key since it was last cleared, which it now has.
  bool AdmitMiss(Shard& shard, uint64_t hash) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // When following, a miss that kept nothing: drops a cached copy older than
  // `read` (any copy when `read` is null: not found, or an error) and counts
  // a write in the shard (see GetShared).
  void KeptNothing(Shard& shard, uint64_t hash, RecordKind kind, absl::string_view id,
                   const SharedRecord* read) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // When following: whether the shard evicted a copy of (kind, hash) newer
  // than `revision` since it had made `evictions_before` evictions; true
  // too when it made more since than it remembers (nothing is kept then).
  static bool EvictedNewerSince(const Shard& shard, uint64_t evictions_before, uint64_t hash,
                                RecordKind kind, int64_t revision)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // When following and `revision` is past followed_revision(): CatchUp().
  // Its error is not the caller's: the cache is emptied on it, so the
  // caller's reads still reflect `revision`.
  void CatchUpTo(int64_t revision);
  // CatchUp's reading of the log, from follow_position_ to its end.
  absl::Status ReadChangeLog() ABSL_EXCLUSIVE_LOCKS_REQUIRED(follow_mutex_);
  // Drops the records of `writes` and counts a write on every shard.
  void ForgetWritten(const std::vector<BatchWrite>& writes);
  // Drops the `count` records `key_of(0 .. count-1)` names, each under its
  // shard's lock, and counts a write on every shard (ForgetWritten's and
  // ForgetChanged's one walk).
  void ForgetRecords(size_t count,
                     absl::FunctionRef<std::pair<RecordKind, absl::string_view>(size_t)> key_of);
  void Forget(Shard& shard, uint64_t hash, RecordKind kind, absl::string_view id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // Empties slot `at`, moving later slots of its probe run back into the gap.
  void EraseSlot(Shard& shard, size_t at) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // Second chance from a random slot: evicts one record (the shard holds
  // at least one).
  void EvictOne(Shard& shard) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // Rebuilds the table with `slots` slots (a power of two).
  void Resize(Shard& shard, size_t slots) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // Whether `more` bytes outside the arena (a larger table, a record the
  // arena had no block for) keep the arena's chunks, the tables and the
  // records outside it within the budget together (see outside_arena_bytes_).
  bool RoomOutsideTheArena(size_t more) const;

  const size_t capacity_bytes_;
  // What the cache holds outside the arena: every shard's table and the
  // kept records the arena had no block for (larger than its largest class,
  // or its chunks all mapped and no freed block of the class). The arena
  // maps a chunk only if its chunks and these fit the budget, and these grow
  // only if they fit with the chunks: so the chunks, the tables and the
  // records together stay within capacity_bytes_ (give or take a chunk or a
  // table of each shard growing at the same moment), however the records'
  // sizes shift. The per-shard budget alone would not bound it: freed blocks
  // of one size class would hold their chunks while records of another size
  // filled the budget again outside the arena.
  std::atomic<int64_t> outside_arena_bytes_{0};
  // Where kept blocks are copied: at most the budget of chunks. Released
  // (not deleted) by the destructor: blocks still held elsewhere keep it.
  RecordArena* const arena_;
  std::vector<std::unique_ptr<Shard>> shards_;
  int shard_shift_ = 0;  // the shard is the hash's top bits
  uint64_t shard_mask_ = 0;
  static constexpr size_t kDoorkeeperBits = size_t{1} << 22;

  // Following the change log (FollowChangesAfter), set once before use.
  std::atomic<bool> following_{false};
  int follow_page_changes_ ABSL_GUARDED_BY(follow_mutex_) = 1000;
  // Held while the log is read: one reader at a time, in order.
  absl::Mutex follow_mutex_;
  ChangePosition follow_position_ ABSL_GUARDED_BY(follow_mutex_);
  std::atomic<int64_t> followed_revision_{0};
};

}  // namespace modelatlas::catalog
