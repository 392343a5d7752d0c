// The record cache's arena: blocks back to back in 2 MiB-aligned chunks,
// freed blocks reused by their size class, never more chunks than its
// limit, and alive while any block is; the cache keeps its records there.
#include "catalog-service/store/record_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catalog-service/store/cached_store.h"
#include "catalog-service/store/shared_record.h"
#include "catalog-service/store/sqlite_store.h"

namespace modelatlas::catalog {
namespace {

constexpr size_t kChunk = RecordArena::kChunkBytes;

uintptr_t ChunkOf(const void* p) { return reinterpret_cast<uintptr_t>(p) & ~(kChunk - 1); }

// The owner's reference, released at the end of a test.
struct ArenaOwner {
  explicit ArenaOwner(size_t limit) : arena(RecordArena::Create(limit)) {}
  ~ArenaOwner() { arena->Release(); }
  RecordArena* arena;
};

TEST(RecordArenaTest, BlocksLieBackToBackInOneAlignedChunkAndAFreedOneIsReusedByItsClass) {
  ArenaOwner owner(4 * kChunk);
  std::vector<void*> blocks;
  for (int i = 0; i < 1000; ++i) blocks.push_back(owner.arena->Allocate(300));
  for (size_t i = 0; i < blocks.size(); ++i) {
    ASSERT_NE(blocks[i], nullptr);
    EXPECT_EQ(ChunkOf(blocks[i]), ChunkOf(blocks[0])) << i;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(blocks[i]) % 16, 0u);
    // 300 bytes round to the 304-byte class: the next block follows.
    if (i > 0) {
      EXPECT_EQ(static_cast<char*>(blocks[i]) - static_cast<char*>(blocks[i - 1]), 304);
    }
  }
  RecordArena::Stats stats = owner.arena->stats();
  EXPECT_EQ(stats.chunk_bytes, kChunk);
  EXPECT_EQ(stats.live_blocks, 1000u);
  EXPECT_EQ(stats.live_bytes, 1000u * 304);

  RecordArena::Free(blocks[500], 300);
  EXPECT_EQ(owner.arena->stats().free_bytes, 304u);
  void* larger = owner.arena->Allocate(310);  // the 320-byte class: not the freed block
  EXPECT_NE(larger, blocks[500]);
  void* same_class = owner.arena->Allocate(290);  // 304 again: the freed block
  EXPECT_EQ(same_class, blocks[500]);
  stats = owner.arena->stats();
  EXPECT_EQ(stats.free_bytes, 0u);
  EXPECT_EQ(stats.live_blocks, 1001u);
  for (void* block : blocks) RecordArena::Free(block, 300);
  RecordArena::Free(larger, 310);
  EXPECT_EQ(owner.arena->stats().live_blocks, 0u);
}

TEST(RecordArenaTest, NeverMapsMoreChunksThanItsLimit) {
  ArenaOwner owner(kChunk + kChunk / 2);  // one whole chunk
  std::vector<void*> blocks;
  while (void* block = owner.arena->Allocate(1000)) blocks.push_back(block);
  EXPECT_EQ(owner.arena->stats().chunk_bytes, kChunk);
  EXPECT_GT(blocks.size(), 2000u);          // the chunk is used...
  EXPECT_LE(blocks.size() * 1008, kChunk);  // ...and nothing past it
  EXPECT_EQ(owner.arena->Allocate(RecordArena::kMaxBlockBytes + 1), nullptr);
  for (void* block : blocks) RecordArena::Free(block, 1000);

  ArenaOwner too_small(kChunk - 1);
  EXPECT_EQ(too_small.arena->Allocate(64), nullptr);
  EXPECT_EQ(too_small.arena->stats().chunk_bytes, 0u);
}

TEST(RecordArenaTest, ABlockOutlivesTheArenasOwner) {
  const int64_t blocks_before = SharedRecord::live_blocks();
  RecordArena* arena = RecordArena::Create(kChunk);
  SharedRecord record = SharedRecord::Make("m", "M", std::string(500, 'p'), 7, arena);
  ASSERT_TRUE(record.in_arena());
  arena->Release();  // the block still holds the arena
  EXPECT_EQ(record.id(), "m");
  EXPECT_EQ(record.payload(), std::string(500, 'p'));
  EXPECT_EQ(record.revision(), 7);
  record = SharedRecord();  // frees the block, then the arena
  EXPECT_EQ(SharedRecord::live_blocks(), blocks_before);
}

TEST(SharedRecordArenaTest, ACopyIntoAnArenaIsTheSameRecordAndKeepsItsCheck) {
  ArenaOwner owner(kChunk);
  const SharedRecord original = SharedRecord::Make("id-1", "Name 1", "payload bytes", 42);
  ASSERT_FALSE(original.in_arena());
  original.MarkPayloadChecked();
  const SharedRecord copy = original.CopiedInto(owner.arena);
  ASSERT_TRUE(copy.in_arena());
  EXPECT_EQ(copy.id(), "id-1");
  EXPECT_EQ(copy.display_name(), "Name 1");
  EXPECT_EQ(copy.payload(), "payload bytes");
  EXPECT_EQ(copy.revision(), 42);
  EXPECT_TRUE(copy.payload_checked());
  EXPECT_NE(copy.payload().data(), original.payload().data());
  EXPECT_EQ(owner.arena->stats().live_blocks, 1u);
  // Already in an arena: the same block, not another copy.
  EXPECT_EQ(copy.CopiedInto(owner.arena).payload().data(), copy.payload().data());
  EXPECT_EQ(owner.arena->stats().live_blocks, 1u);

  // An arena without room: the record's own block.
  ArenaOwner full(0);
  EXPECT_EQ(original.CopiedInto(full.arena).payload().data(), original.payload().data());
}

RecordWrite Record(int i) {
  const std::string id = absl::StrCat("model-", i);
  return RecordWrite{
      RecordKind::kModel, id, "Display " + id, {"display " + id}, std::string(200 + i % 100, 'x')};
}

TEST(CachedStoreArenaTest, KeptRecordsLiveInTheArenaWithinTheBudgetAndLeaveItWhenDropped) {
  constexpr size_t kBudget = size_t{8} << 20;
  auto sqlite = SqliteStore::Open(":memory:");
  ASSERT_TRUE(sqlite.ok()) << sqlite.status();
  auto cache = std::make_unique<CachedStore>(*std::move(sqlite), kBudget);
  std::vector<RecordWrite> writes;
  for (int i = 0; i < 3000; ++i) writes.push_back(Record(i));
  ASSERT_TRUE(cache->Insert(writes).ok());
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(cache->GetShared(RecordKind::kModel, absl::StrCat("model-", i)).ok());
  }
  CachedStore::Stats stats = cache->stats();
  EXPECT_EQ(stats.records, 3000);
  EXPECT_EQ(stats.arena_blocks, 3000);  // every kept record, none else
  EXPECT_GT(stats.arena_bytes, 0);
  EXPECT_LE(stats.arena_bytes, static_cast<int64_t>(kBudget));
  EXPECT_LE(stats.bytes, static_cast<int64_t>(kBudget));

  // A hit is the arena's block, the stored record byte for byte.
  absl::StatusOr<SharedRecord> hit = cache->GetShared(RecordKind::kModel, "model-7");
  ASSERT_TRUE(hit.ok());
  EXPECT_TRUE(hit->in_arena());
  EXPECT_EQ(hit->payload(), Record(7).payload);
  EXPECT_EQ(cache->stats().hits, stats.hits + 1);

  // A delete drops the kept block (the one held here stays until released).
  ASSERT_TRUE(cache->Delete(RecordKind::kModel, "model-7", 0).ok());
  EXPECT_EQ(cache->stats().arena_blocks, 3000);
  hit = absl::NotFoundError("released");
  EXPECT_EQ(cache->stats().arena_blocks, 2999);

  // A record held past the cache's end stays readable (a reply in flight).
  absl::StatusOr<SharedRecord> held = cache->GetShared(RecordKind::kModel, "model-8");
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(held->in_arena());
  cache.reset();
  EXPECT_EQ(held->payload(), Record(8).payload);
}

// Records of one size fill the arena's chunks; then records of another size
// class are read over and over. The first ones' freed blocks keep their
// chunks (a class's free blocks serve only that class), so without a bound
// across the arena and what lies outside it the second ones would fill the
// budget again outside the arena: about twice the budget held. The chunks,
// the tables and the records outside the arena stay within the budget.
TEST(CachedStoreArenaTest, TheArenaTheTablesAndRecordsOutsideItStayWithinTheBudgetAsSizesShift) {
  constexpr size_t kBudget = size_t{8} << 20;
  auto sqlite = SqliteStore::Open(":memory:");
  ASSERT_TRUE(sqlite.ok()) << sqlite.status();
  CachedStore cache(*std::move(sqlite), kBudget, /*shards=*/1);
  const auto record = [](int i, size_t payload_bytes) {
    const std::string id = absl::StrCat("model-", i);
    return RecordWrite{RecordKind::kModel,
                       id,
                       "Display " + id,
                       {"display " + id},
                       std::string(payload_bytes, 'x')};
  };
  constexpr int kSmall = 40000;  // about 12 MB of 300-byte records: more than the budget
  constexpr int kLarge = 12000;  // about 12 MB of 1,000-byte ones
  std::vector<RecordWrite> writes;
  for (int i = 0; i < kSmall; ++i) writes.push_back(record(i, 200));
  for (int i = kSmall; i < kSmall + kLarge; ++i) writes.push_back(record(i, 900));
  ASSERT_TRUE(cache.Insert(writes).ok());
  const auto held = [&cache] {
    const CachedStore::Stats stats = cache.stats();
    return stats.arena_bytes + stats.outside_arena_bytes;
  };
  // Twice each, so that the doorkeeper lets the records in once full.
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < kSmall; ++i) {
      ASSERT_TRUE(cache.GetShared(RecordKind::kModel, absl::StrCat("model-", i)).ok());
    }
  }
  EXPECT_GT(cache.stats().arena_bytes, static_cast<int64_t>(kBudget / 2));
  EXPECT_LE(held(), static_cast<int64_t>(kBudget));
  for (int pass = 0; pass < 3; ++pass) {
    for (int i = kSmall; i < kSmall + kLarge; ++i) {
      ASSERT_TRUE(cache.GetShared(RecordKind::kModel, absl::StrCat("model-", i)).ok());
      if (i % 1000 == 0) {
        ASSERT_LE(held(), static_cast<int64_t>(kBudget)) << pass << " " << i;
      }
    }
  }
  const CachedStore::Stats stats = cache.stats();
  EXPECT_LE(stats.arena_bytes + stats.outside_arena_bytes, static_cast<int64_t>(kBudget));
  EXPECT_LE(stats.bytes, static_cast<int64_t>(kBudget));
  EXPECT_GT(stats.records, 0);
}

}  // namespace
}  // namespace modelatlas::catalog
