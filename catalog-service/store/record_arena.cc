#include "catalog-service/store/record_arena.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace modelatlas::catalog {

RecordArena* RecordArena::Create(size_t limit_bytes, const std::atomic<int64_t>* other_bytes) {
  return new RecordArena(limit_bytes, other_bytes);
}

RecordArena::~RecordArena() {
  for (void* chunk : chunks_) munmap(chunk, kChunkBytes);
}

void RecordArena::Release() { Unref(); }

void RecordArena::Unref() {
  // acq_rel: whoever frees the arena sees every block's last use before it.
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

bool RecordArena::AddChunk() {
  if (chunks_.size() >= limit_chunks_) return false;
  if (other_bytes_ != nullptr) {
    // The owner's memory outside the arena, and an eighth of the limit left
    // for it to grow into (a cache's tables grow with its records: 16 bytes
    // a slot, at most 43 bytes a record, against the 300 and more a record
    // takes): a budget of a few chunks is not all taken by the arena.
    const auto other =
        static_cast<size_t>(std::max<int64_t>(0, other_bytes_->load(std::memory_order_relaxed)));
    if ((chunks_.size() + 1) * kChunkBytes + other + limit_bytes_ / 8 > limit_bytes_) return false;
  }
  // Twice the size, then the unaligned ends unmapped: a chunk aligned to
  // its size, so that a huge page can back it and a block's chunk is its
  // address rounded down.
  void* mapped =
      mmap(nullptr, 2 * kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return false;
  const auto start = reinterpret_cast<uintptr_t>(mapped);
  const uintptr_t aligned = (start + kChunkBytes - 1) & ~(kChunkBytes - 1);
  if (aligned > start) munmap(mapped, aligned - start);
  if (const uintptr_t tail = start + 2 * kChunkBytes - (aligned + kChunkBytes); tail > 0) {
    munmap(reinterpret_cast<void*>(aligned + kChunkBytes), tail);
  }
  auto* chunk = reinterpret_cast<char*>(aligned);
  // Advice only: where transparent huge pages are off (or "never") the
  // chunk stays on 4 KiB pages and is still dense.
  madvise(chunk, kChunkBytes, MADV_HUGEPAGE);
  new (chunk) ChunkHeader{this};
  chunks_.push_back(chunk);
  mapped_bytes_.store(chunks_.size() * kChunkBytes, std::memory_order_relaxed);
  next_ = chunk + sizeof(ChunkHeader);
  end_ = chunk + kChunkBytes;
  return true;
}

void* RecordArena::Allocate(size_t bytes) {
  if (bytes == 0 || bytes > kMaxBlockBytes) return nullptr;
  const size_t size_class = ClassOf(bytes);
  const size_t rounded = (size_class + 1) * kClassBytes;
  void* block = nullptr;
  {
    absl::MutexLock lock(&mutex_);
    if (void* freed = free_lists_[size_class]; freed != nullptr) {
      std::memcpy(&free_lists_[size_class], freed, sizeof(void*));
      free_bytes_ -= rounded;
      block = freed;
    } else {
      // The rest of a chunk too small for this block is left unused (under
      // kMaxBlockBytes of each 2 MiB).
      if (static_cast<size_t>(end_ - next_) < rounded && !AddChunk()) return nullptr;
      block = next_;
      next_ += rounded;
    }
    ++live_blocks_;
    live_bytes_ += rounded;
  }
  refs_.fetch_add(1, std::memory_order_relaxed);
  return block;
}

void RecordArena::Free(void* block, size_t bytes) {
  const auto chunk = reinterpret_cast<uintptr_t>(block) & ~(kChunkBytes - 1);
  reinterpret_cast<const ChunkHeader*>(chunk)->arena->FreeHere(block, bytes);
}

void RecordArena::FreeHere(void* block, size_t bytes) {
  const size_t size_class = ClassOf(bytes);
  {
    absl::MutexLock lock(&mutex_);
    std::memcpy(block, &free_lists_[size_class], sizeof(void*));
    free_lists_[size_class] = block;
    const size_t rounded = (size_class + 1) * kClassBytes;
    free_bytes_ += rounded;
    --live_blocks_;
    live_bytes_ -= rounded;
  }
  Unref();
}

RecordArena::Stats RecordArena::stats() const {
  absl::MutexLock lock(&mutex_);
  return {.chunk_bytes = chunks_.size() * kChunkBytes,
          .live_blocks = live_blocks_,
          .live_bytes = live_bytes_,
          .free_bytes = free_bytes_};
}

}  // namespace modelatlas::catalog
