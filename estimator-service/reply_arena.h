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
#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace modelatlas::estimator {

// Objects kept for reuse from reply to reply, each given back to the CPU it
// was last used on and taken, when possible, from the CPU that takes it:
// a plan over every accelerator writes about 300 KB of pooled plans, and an
// object last written on the other core is moved over cache line by cache
// line (docs/BENCHMARKS.md, session 26). A CPU with none free takes another
// CPU's before a new one is made. At most kMaxKept objects are kept in all.
template <typename T>
class CpuPool {
 public:
  // One per call in flight up to this many; more calls at once make and
  // free their own.
  static constexpr size_t kMaxKept = 16;

  // The lists: CPU c keeps its objects on list c % shards().
  size_t shards() const { return shards_in_use_; }

  // A kept object, or null.
  std::unique_ptr<T> Take() {
    const size_t home = ShardOfThisCpu();
    for (size_t i = 0; i < shards_in_use_; ++i) {
      Shard& shard = shards_[(home + i) % shards_in_use_];
      absl::MutexLock lock(&shard.mu);
      if (!shard.free.empty()) {
        std::unique_ptr<T> object = std::move(shard.free.back());
        shard.free.pop_back();
        kept_.fetch_sub(1, std::memory_order_relaxed);
        return object;
      }
    }
    return nullptr;
  }
  // Keeps `object` on this CPU's list (dropped past kMaxKept in all).
  void Give(std::unique_ptr<T> object) {
    if (kept_.fetch_add(1, std::memory_order_relaxed) >= kMaxKept) {
      kept_.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
    Shard& shard = shards_[ShardOfThisCpu()];
    absl::MutexLock lock(&shard.mu);
    shard.free.push_back(std::move(object));
  }

 private:
  static constexpr size_t kShards = 16;
  size_t ShardOfThisCpu() const {
    const int cpu = sched_getcpu();  // glibc 2.35+: read from rseq, no system call
    return cpu < 0 ? 0 : static_cast<size_t>(cpu) % shards_in_use_;
  }
  // One list per CPU of the machine, up to kShards: a CPU with an empty list
  // looks through the others', not through lists no CPU uses.
  const size_t shards_in_use_ = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, kShards);
  struct alignas(64) Shard {
    absl::Mutex mu;
    std::vector<std::unique_ptr<T>> free ABSL_GUARDED_BY(mu);
  };
  std::array<Shard, kShards> shards_;
  std::atomic<size_t> kept_{0};
};

class ReplyArena {
 public:
  // A plan over every accelerator takes about 200 KB of arena (messages,
  // string objects, repeated arrays, the arena's cleanup list); past the
  // block the arena allocates more blocks itself.
  static constexpr size_t kBlockBytes = 512 * 1024;

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

  static CpuPool<char[]>& pool() {
    static auto* const kPool = new CpuPool<char[]>();  // never destroyed: used at exit
    return *kPool;
  }
  static Block Take() {
    if (std::unique_ptr<char[]> kept = pool().Take()) return Block(std::move(kept));
    // Not zeroed: the arena writes before it reads.
    return Block(std::unique_ptr<char[]>(new char[kBlockBytes]));
  }
  static void Give(std::unique_ptr<char[]> bytes) { pool().Give(std::move(bytes)); }
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
  static auto* const kPool = new CpuPool<T>();  // never destroyed: used at exit
  struct Lease {
    std::unique_ptr<T> object;
    Lease() : object(kPool->Take()) {
      if (object == nullptr) object = std::make_unique<T>();
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { kPool->Give(std::move(object)); }
  };
  return google::protobuf::Arena::Create<Lease>(arena)->object.get();
}

// An object of type T for one reply, without an arena: taken from a pool (or
// made) and given back, as it was left, when the last copy of the returned
// pointer goes. For answers written as plain figures whose strings keep
// their buffers from reply to reply (the memory answer, MemoryAnswer): the
// user clears what it reuses. At most CpuPool::kMaxKept are kept, one per
// call in flight. T must be default-constructible.
template <typename T>
std::shared_ptr<T> PooledForReply() {
  static auto* const kPool = new CpuPool<T>();  // never destroyed: used at exit
  std::unique_ptr<T> object = kPool->Take();
  if (object == nullptr) object = std::make_unique<T>();
  return std::shared_ptr<T>(object.release(),
                            [](T* given) { kPool->Give(std::unique_ptr<T>(given)); });
}

}  // namespace modelatlas::estimator
