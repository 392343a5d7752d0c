// Texts remembered by the values they were written from. An estimate's
// arithmetic is a pure function of a few figures (a KV-cache text of the
// architecture's layers, heads, head dim, the cache format, the context and
// the batch; the activation text of the chunk, widths, vocabulary and
// batch): when the same figures come again, which is most calls, the text
// remembered is copied instead of ten numbers written again
// (docs/BENCHMARKS.md, session 15, branch s15-core). The key is the values
// themselves, never an address, so a changed record gives a new key.
//
// Direct-mapped: one entry per slot, the newest key in a slot replaces the
// older. Not thread-safe: keep one per thread (thread_local). The slots are
// on the heap, allocated at the first Remember: a thread_local holds only a
// pointer, since static thread-local storage is carved out of every
// thread's stack, and a thread started with a small stack (civetweb's
// metrics server) fails to start when that storage is large.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"

namespace modelatlas {

template <size_t kKeyWords, size_t kEntries = 256>
class TextMemo {
  static_assert(kKeyWords > 0);
  static_assert(kEntries >= 2);
  static_assert(std::has_single_bit(kEntries), "slots are a power of two");

 public:
  using Key = std::array<uint64_t, kKeyWords>;

  // A double as a key word: its bits (so that -0.0 and 0.0, or two NaNs,
  // are the different values they print as).
  static uint64_t Word(double value) { return std::bit_cast<uint64_t>(value); }

  // The text remembered for `key`, or null.
  const std::string* Find(const Key& key) const {
    if (entries_ == nullptr) return nullptr;
    const Entry& entry = entries_[SlotOf(key)];
    return entry.filled && SameKey(entry.key, key) ? &entry.text : nullptr;
  }

  // Remembers `text` for `key` (in place of what its slot held); returns
  // the copy kept.
  const std::string& Remember(const Key& key, absl::string_view text) {
    if (entries_ == nullptr) entries_ = std::make_unique<Entry[]>(kEntries);
    Entry& entry = entries_[SlotOf(key)];
    entry.filled = true;
    entry.key = key;
    entry.text.assign(text.data(), text.size());
    return entry.text;
  }

 private:
  struct Entry {
    bool filled = false;
    Key key{};
    std::string text;
  };

  static bool SameKey(const Key& a, const Key& b) {
    for (size_t i = 0; i < kKeyWords; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }

  // Fibonacci hashing of the words folded together: the top bits pick the
  // slot.
  static size_t SlotOf(const Key& key) {
    uint64_t hash = 0;
    for (uint64_t word : key) hash = (hash ^ word) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(hash >> (64 - std::countr_zero(kEntries)));
  }

  std::unique_ptr<Entry[]> entries_;  // kEntries, or null before the first Remember
};

}  // namespace modelatlas
