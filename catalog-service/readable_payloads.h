// Which stored payloads are known to parse, so that reads which pass a
// record's bytes on (GetModel, GetHardware) parse each revision of a record
// once instead of on every call, and still refuse a corrupt one (DATA_LOSS)
// as the parsing reads do.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "catalog-service/store/store.h"

namespace modelatlas::catalog {

// A fixed table of fingerprints of (kind, id, revision, payload size),
// direct-mapped: 262,144 slots of 8 bytes (2 MiB) whatever the catalog's
// size; a record whose slot another took is parsed again. With N records read
// at random, a read finds its record's mark with probability about
// slots x (1 - e^(-N/slots)) / N: at 100,000 records 83% (51% with 65,536
// slots, where GetModel at random spent about 3% of its CPU parsing payloads
// again: docs/BENCHMARKS.md), at 1,000,000 26%. A write gives a
// record a new revision, so it is checked again after every write. Lock-free:
// each slot is one atomic word.
class ReadablePayloads {
 public:
  bool Contains(RecordKind kind, const StoredRecord& stored) const {
    return Contains(kind, stored.id, stored.revision, stored.payload.size());
  }
  bool Contains(RecordKind kind, absl::string_view id, int64_t revision,
                size_t payload_size) const {
    const uint64_t print = Fingerprint(kind, id, revision, payload_size);
    return slots_[print % kSlots].load(std::memory_order_relaxed) == print;
  }
  void Add(RecordKind kind, const StoredRecord& stored) {
    Add(kind, stored.id, stored.revision, stored.payload.size());
  }
  void Add(RecordKind kind, absl::string_view id, int64_t revision, size_t payload_size) {
    const uint64_t print = Fingerprint(kind, id, revision, payload_size);
    slots_[print % kSlots].store(print, std::memory_order_relaxed);
  }

 private:
  static constexpr size_t kSlots = size_t{1} << 18;
  static uint64_t Fingerprint(RecordKind kind, absl::string_view id, int64_t revision,
                              size_t payload_size) {
    // 0 marks an empty slot.
    return absl::HashOf(static_cast<int>(kind), id, revision, payload_size) | 1;
  }

  std::array<std::atomic<uint64_t>, kSlots> slots_{};
};

}  // namespace modelatlas::catalog
