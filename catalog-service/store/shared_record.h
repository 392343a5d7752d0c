// A stored record in one immutable, reference-counted block: its id,
// display name and payload back to back after a small header. The record
// cache holds one reference and every reader that passes the record on
// (GetModel, GetHardware) takes another, so a cached record reaches the
// reply without a copy: before, a hit copied it three times (cache ->
// StoredRecord -> reply string -> gRPC slice) and the copies were about a
// sixth of GetModel's CPU in glibc malloc at 100,000 models (docs/BENCHMARKS.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/strings/string_view.h"
#include "catalog-service/store/record_arena.h"

namespace modelatlas::catalog {

struct StoredRecord;  // store.h, which includes this file

class SharedRecord {
 public:
  SharedRecord() = default;
  // One block holding copies of the three texts (one allocation): from
  // `arena` when given and it has room, else from operator new.
  static SharedRecord Make(absl::string_view id, absl::string_view display_name,
                           absl::string_view payload, int64_t revision,
                           RecordArena* arena = nullptr);
  static SharedRecord From(const StoredRecord& record, RecordArena* arena = nullptr);
  // This record in a block of `arena` (a copy, its payload check kept), or
  // this block itself when it is already in an arena or `arena` has no room.
  SharedRecord CopiedInto(RecordArena* arena) const;
  // Whether the block came from a RecordArena.
  bool in_arena() const { return block_->in_arena; }

  SharedRecord(const SharedRecord& other) : block_(other.block_) { Ref(); }
  SharedRecord(SharedRecord&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  SharedRecord& operator=(SharedRecord other) noexcept {
    std::swap(block_, other.block_);
    return *this;
  }
  ~SharedRecord() { Unref(block_); }

  explicit operator bool() const { return block_ != nullptr; }

  absl::string_view id() const { return {block_->text(), block_->id_size}; }
  absl::string_view display_name() const {
    return {block_->text() + block_->id_size, block_->name_size};
  }
  absl::string_view payload() const {
    return {block_->text() + block_->id_size + block_->name_size, block_->payload_size};
  }
  int64_t revision() const { return block_->revision; }
  StoredRecord ToStored() const;

  // Whether the payload is known to parse (it never changes, so once known
  // it stays so): set by the catalog after its check, so that a cached
  // record is parsed once, not once per read.
  bool payload_checked() const { return block_->checked.load(std::memory_order_relaxed); }
  void MarkPayloadChecked() const { block_->checked.store(true, std::memory_order_relaxed); }

  // The 64-byte CPU cache lines the block spans, and a prefetch of that many
  // lines from its start: a reader that knows the count (the record
  // cache's slot keeps it) asks for the whole block at once, so its lines
  // arrive together instead of one after another as they are read.
  size_t cache_lines() const {
    const auto start = reinterpret_cast<uintptr_t>(block_);
    return (start % kLineBytes + block_bytes() + kLineBytes - 1) / kLineBytes;
  }
  void Prefetch(size_t lines) const {
    const char* line = reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(block_) &
                                                     ~uintptr_t{kLineBytes - 1});
    for (size_t i = 0; i < lines; ++i) __builtin_prefetch(line + i * kLineBytes);
  }

  // The bytes the block takes, header included.
  size_t block_bytes() const { return BlockBytes(block_->text_size()); }
  static size_t BlockBytes(size_t text_size) { return sizeof(Block) + text_size; }

  // Hands this reference to code that only keeps a void* (a gRPC slice's
  // destroy callback); ReleaseRaw(that pointer) drops it.
  void* ReleaseToRaw() && { return std::exchange(block_, nullptr); }
  static void ReleaseRaw(void* raw) { Unref(static_cast<Block*>(raw)); }

  // Blocks alive now, across all records (for tests: a reference leaked or
  // dropped twice shows here).
  static int64_t live_blocks() { return live_blocks_.load(std::memory_order_relaxed); }

 private:
  struct Block {
    std::atomic<uint32_t> refs{1};
    std::atomic<bool> checked{false};
    bool in_arena = false;  // freed to its RecordArena, not operator delete
    uint32_t id_size = 0;
    uint32_t name_size = 0;
    uint32_t payload_size = 0;
    int64_t revision = 0;
    size_t text_size() const { return size_t{id_size} + name_size + payload_size; }
    char* text() { return reinterpret_cast<char*>(this + 1); }
    const char* text() const { return reinterpret_cast<const char*>(this + 1); }
  };

  explicit SharedRecord(Block* block) : block_(block) {}
  void Ref() const {
    if (block_ != nullptr) block_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  static void Unref(Block* block);

  static constexpr size_t kLineBytes = 64;
  static std::atomic<int64_t> live_blocks_;
  Block* block_ = nullptr;
};

}  // namespace modelatlas::catalog
