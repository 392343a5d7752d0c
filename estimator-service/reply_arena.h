// A protobuf Arena for one reply, whose first block is a reused buffer
// (issue 22 point 1). A plan over every accelerator is about 258 messages
// and 1,550 strings: on the heap each is one malloc and one free, which with
// the reply's other allocations were a quarter of the computed answer's CPU
// (docs/BENCHMARKS.md). On an arena the messages, the string objects and the
// repeated fields' arrays are carved out of the block and freed at once
// (the strings' own character buffers are still heap memory, freed when the
// arena goes). The block is taken from a pool rather than a thread's buffer:
// an answer may end on another thread (a catalog read, a Hub fetch) while
// this thread serves the next call.
#pragma once

#include <google/protobuf/arena.h>

#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace modelatlas::estimator {

class ReplyArena {
 public:
  // A plan over every accelerator takes about 200 KB of arena (messages,
  // string objects, repeated arrays, the arena's cleanup list); past the
  // block the arena allocates more blocks itself.
  static constexpr size_t kBlockBytes = 512 * 1024;
  // Blocks kept for reuse: one per call in flight up to this many; more
  // calls at once allocate and free their own.
  static constexpr size_t kPooledBlocks = 16;

  ReplyArena() : block_(Take()), arena_(Options(block_.bytes.get())) {}
  ReplyArena(const ReplyArena&) = delete;
  ReplyArena& operator=(const ReplyArena&) = delete;

  google::protobuf::Arena* arena() { return &arena_; }

  // A new empty message on the arena (owned by it).
  template <typename Message>
  Message* Create() {
    return google::protobuf::Arena::CreateMessage<Message>(&arena_);
  }

 private:
  // The block, given back to the pool after the arena (declared after the
  // block: destroyed before it) has run its cleanups.
  struct Block {
    std::unique_ptr<char[]> bytes;
    explicit Block(std::unique_ptr<char[]> b) : bytes(std::move(b)) {}
    Block(Block&&) = default;
    ~Block() {
      if (bytes != nullptr) Give(std::move(bytes));
    }
  };

  struct Pool {
    absl::Mutex mu;
    std::vector<std::unique_ptr<char[]>> free ABSL_GUARDED_BY(mu);
  };
  static Pool& pool() {
    static Pool* const kPool = new Pool();  // never destroyed: used at exit
    return *kPool;
  }
  static Block Take() {
    Pool& p = pool();
    {
      absl::MutexLock lock(&p.mu);
      if (!p.free.empty()) {
        Block block(std::move(p.free.back()));
        p.free.pop_back();
        return block;
      }
    }
    // Not zeroed: the arena writes before it reads.
    return Block(std::unique_ptr<char[]>(new char[kBlockBytes]));
  }
  static void Give(std::unique_ptr<char[]> bytes) {
    Pool& p = pool();
    absl::MutexLock lock(&p.mu);
    if (p.free.size() < kPooledBlocks) p.free.push_back(std::move(bytes));
  }
  static google::protobuf::ArenaOptions Options(char* block) {
    google::protobuf::ArenaOptions options;
    options.initial_block = block;
    options.initial_block_size = kBlockBytes;
    // Blocks past the first grow to 64 KiB (the default stops at 8 KiB).
    options.max_block_size = 64 * 1024;
    return options;
  }

  Block block_;
  google::protobuf::Arena arena_;
};

// An object of type T kept from one reply to the next: taken from a pool
// (or made) for a reply built on `arena`, given back when the arena runs its
// cleanups (after the reply is serialized). A builder keeps in it what a
// reply points at without owning (strings added with
// RepeatedPtrField::UnsafeArenaAddAllocated), so their storage is reused by
// the next reply instead of being allocated and freed per reply. The object
// is handed over as it was left: the builder resets what it reuses. T must
// be default-constructible.
template <typename T>
T* PooledOnArena(google::protobuf::Arena* arena) {
  struct Pool {
    absl::Mutex mu;
    std::vector<std::unique_ptr<T>> free ABSL_GUARDED_BY(mu);
  };
  static Pool* const kPool = new Pool();  // never destroyed: used at exit
  struct Lease {
    std::unique_ptr<T> object;
    Lease() {
      {
        absl::MutexLock lock(&kPool->mu);
        if (!kPool->free.empty()) {
          object = std::move(kPool->free.back());
          kPool->free.pop_back();
        }
      }
      if (object == nullptr) object = std::make_unique<T>();
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      absl::MutexLock lock(&kPool->mu);
      // As many as the reply blocks: one per call in flight.
      if (kPool->free.size() < ReplyArena::kPooledBlocks) kPool->free.push_back(std::move(object));
    }
  };
  return google::protobuf::Arena::Create<Lease>(arena)->object.get();
}

// An object of type T for one reply, without an arena: taken from a pool (or
// made) and given back, as it was left, when the last copy of the returned
// pointer goes. For answers written as plain figures whose strings keep
// their buffers from reply to reply (the memory answer, MemoryAnswer): the
// user clears what it reuses. At most kPooledBlocks are kept, one per call
// in flight. T must be default-constructible.
template <typename T>
std::shared_ptr<T> PooledForReply() {
  struct Pool {
    absl::Mutex mu;
    std::vector<std::unique_ptr<T>> free ABSL_GUARDED_BY(mu);
  };
  static Pool* const kPool = new Pool();  // never destroyed: used at exit
  std::unique_ptr<T> object;
  {
    absl::MutexLock lock(&kPool->mu);
    if (!kPool->free.empty()) {
      object = std::move(kPool->free.back());
      kPool->free.pop_back();
    }
  }
  if (object == nullptr) object = std::make_unique<T>();
  return std::shared_ptr<T>(object.release(), [](T* given) {
    std::unique_ptr<T> back(given);
    absl::MutexLock lock(&kPool->mu);
    if (kPool->free.size() < ReplyArena::kPooledBlocks) kPool->free.push_back(std::move(back));
  });
}

}  // namespace modelatlas::estimator
