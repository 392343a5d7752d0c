#include "catalog-service/store/shared_record.h"

#include <algorithm>
#include <limits>
#include <new>
#include <stdexcept>

#include "catalog-service/store/store.h"

namespace modelatlas::catalog {

std::atomic<int64_t> SharedRecord::live_blocks_{0};

SharedRecord SharedRecord::Make(absl::string_view id, absl::string_view display_name,
                                absl::string_view payload, int64_t revision, RecordArena* arena) {
  // Not reached: a record is at most a gRPC message (megabytes, and the
  // writes refuse larger ones), so the sizes fit 32 bits.
  constexpr size_t kMax = std::numeric_limits<uint32_t>::max();
  if (id.size() > kMax || display_name.size() > kMax || payload.size() > kMax) {
    throw std::length_error("SharedRecord: a record larger than 4 GiB");
  }
  const size_t text_size = id.size() + display_name.size() + payload.size();
  void* memory = arena != nullptr ? arena->Allocate(BlockBytes(text_size)) : nullptr;
  const bool in_arena = memory != nullptr;
  if (!in_arena) memory = ::operator new(BlockBytes(text_size));
  auto* block = new (memory) Block;
  block->in_arena = in_arena;
  block->id_size = static_cast<uint32_t>(id.size());
  block->name_size = static_cast<uint32_t>(display_name.size());
  block->payload_size = static_cast<uint32_t>(payload.size());
  block->revision = revision;
  char* at = block->text();
  at = std::copy(id.begin(), id.end(), at);
  at = std::copy(display_name.begin(), display_name.end(), at);
  std::copy(payload.begin(), payload.end(), at);
  live_blocks_.fetch_add(1, std::memory_order_relaxed);
  return SharedRecord(block);
}

void SharedRecord::Unref(Block* block) {
  if (block == nullptr) return;
  // acq_rel: the last owner must see every other owner's reads finished
  // before it frees the block (as std::shared_ptr does).
  if (block->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  live_blocks_.fetch_sub(1, std::memory_order_relaxed);
  const bool in_arena = block->in_arena;
  const size_t bytes = BlockBytes(block->text_size());
  block->~Block();
  if (in_arena) {
    RecordArena::Free(block, bytes);
  } else {
    ::operator delete(block);
  }
}

SharedRecord SharedRecord::From(const StoredRecord& record, RecordArena* arena) {
  return Make(record.id, record.display_name, record.payload, record.revision, arena);
}

SharedRecord SharedRecord::CopiedInto(RecordArena* arena) const {
  if (arena == nullptr || block_->in_arena) return *this;
  SharedRecord copy = Make(id(), display_name(), payload(), revision(), arena);
  if (!copy.in_arena()) return *this;  // no room: this block, not a second one
  if (payload_checked()) copy.MarkPayloadChecked();
  return copy;
}

StoredRecord SharedRecord::ToStored() const {
  StoredRecord record;
  record.id = std::string(id());
  record.display_name = std::string(display_name());
  record.payload = std::string(payload());
  record.revision = revision();
  return record;
}

}  // namespace modelatlas::catalog
