// Memory for the record cache's blocks: dense, and in transparent huge pages.
//
// Why: a GetModel hit at random over 100,000 cached records reads a slot and
// a block that are out of the CPU caches and the TLB. glibc's malloc puts
// the blocks among gRPC's own allocations on 4 KiB pages, 33 MB of them at
// 100,000 records: 8,000 pages, more than the TLB holds, so nearly every hit
// walks the page tables (on this KVM guest a two-dimensional walk, guest and
// host). Measured in bench/record_cache_bench.cc (docs/BENCHMARKS.md, session
// 14). Here the blocks lie back to back in 2 MiB chunks, each aligned to
// 2 MiB and advised MADV_HUGEPAGE, which the kernel backs with one huge page
// where transparent huge pages are "always" or "madvise"
// (/sys/kernel/mm/transparent_hugepage/enabled; Documentation/admin-guide/mm/
// transhuge.rst): 64 MiB of records in 32 TLB entries instead of 16,384.
//
// Blocks are cut by size class (16-byte steps up to kMaxBlockBytes): a freed
// block goes on its class's free list and the next block of that class
// reuses it. At most `limit_bytes` of chunks are mapped (the cache's budget):
// past it, for a larger block, or when no memory can be mapped, Allocate
// returns null and the caller uses operator new, so the arena never holds
// more than the budget it was given. Chunks are kept until the arena is
// freed (they are reused, not returned to the system).
//
// Lifetime: the owner (the cache) and every block hold a reference, since a
// block may outlive its cache (a reply in flight holds it): the arena and
// its chunks are freed with the last of them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace modelatlas::catalog {

class RecordArena {
 public:
  static constexpr size_t kChunkBytes = size_t{2} << 20;
  static constexpr size_t kClassBytes = 16;
  static constexpr size_t kMaxBlockBytes = 4096;

  struct Stats {
    // Mapped chunks, bytes.
    size_t chunk_bytes = 0;
    // Blocks allocated and not freed, and their bytes rounded to their class.
    size_t live_blocks = 0;
    size_t live_bytes = 0;
    // Bytes of freed blocks on the free lists.
    size_t free_bytes = 0;
  };

  // An arena of at most `limit_bytes` of chunks (whole chunks: under
  // kChunkBytes, none, and every Allocate is null), less `other_bytes` when
  // given: the memory its owner holds outside the arena under the same
  // budget (the cache's index tables and the records kept outside it), read
  // when a chunk would be mapped, and an eighth of the limit kept for that
  // memory to grow into, so that the chunks and it stay within
  // `limit_bytes` together. The caller holds the owner's reference
  // until Release().
  static RecordArena* Create(size_t limit_bytes, const std::atomic<int64_t>* other_bytes = nullptr);
  // Drops the owner's reference; the arena is freed once no block is left.
  void Release();

  // `bytes` of memory aligned to 16 bytes, or null (see above). A block
  // holds a reference to its arena until freed.
  void* Allocate(size_t bytes);
  // Frees a block Allocate returned with the same `bytes`, into the arena
  // it came from (found from the block's chunk, whose start names it).
  static void Free(void* block, size_t bytes);

  Stats stats() const;
  // The mapped chunks' bytes (Stats::chunk_bytes), without the lock.
  size_t mapped_bytes() const { return mapped_bytes_.load(std::memory_order_relaxed); }

 private:
  // The start of every chunk; blocks follow it.
  struct alignas(16) ChunkHeader {
    RecordArena* arena;
  };
  static constexpr size_t kClasses = kMaxBlockBytes / kClassBytes;
  static size_t ClassOf(size_t bytes) { return (bytes + kClassBytes - 1) / kClassBytes - 1; }

  RecordArena(size_t limit_bytes, const std::atomic<int64_t>* other_bytes)
      : limit_chunks_(limit_bytes / kChunkBytes),
        limit_bytes_(limit_bytes),
        other_bytes_(other_bytes) {}
  ~RecordArena();
  void Unref();
  void FreeHere(void* block, size_t bytes);
  // Maps one more chunk and makes it the one cut from; false past the limit
  // (with the owner's other bytes) or when mmap fails.
  bool AddChunk() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const size_t limit_chunks_;
  const size_t limit_bytes_;
  const std::atomic<int64_t>* const other_bytes_;
  std::atomic<size_t> mapped_bytes_{0};
  // The owner's reference and one per live block.
  std::atomic<int64_t> refs_{1};
  mutable absl::Mutex mutex_;
  std::vector<void*> chunks_ ABSL_GUARDED_BY(mutex_);
  // Where the current chunk's unused part begins and ends.
  char* next_ ABSL_GUARDED_BY(mutex_) = nullptr;
  char* end_ ABSL_GUARDED_BY(mutex_) = nullptr;
  // Per class, the freed blocks, linked through their first 8 bytes.
  void* free_lists_[kClasses] ABSL_GUARDED_BY(mutex_) = {};
  size_t live_blocks_ ABSL_GUARDED_BY(mutex_) = 0;
  size_t live_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  size_t free_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace modelatlas::catalog
