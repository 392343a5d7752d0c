// What an import remembers of every row it planned, for the whole file: the
// ids its rows claimed (two rows never share a record) and how many rows had
// each display name (the second "Dup" becomes dup-2; the report lists every
// name of two rows or more). Exact, in a compact form whose size is stated:
// each string once in blocks of 2 MiB, and hash tables of 4-byte offsets
// into them instead of a std::string, a std::map node and a vector per row
// (about 250 bytes per row, 250 MB at a million rows, before: docs/BENCHMARKS.md,
// "A million models"). Plain C++: no store, no protobuf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"

namespace modelatlas::catalog {

// Strings appended one after another in blocks that never move, each named
// by a 4-byte offset. A string is at most kMaxStringBytes.
class StringArena {
 public:
  static constexpr size_t kBlockBytes = 2 << 20;
  // Longer than any CSV cell (CsvReader::kMaxCellBytes, 1 MiB) or id.
  static constexpr size_t kMaxStringBytes = kBlockBytes - 8;

  // The offset `text` is stored at (copied in).
  uint32_t Add(absl::string_view text);
  absl::string_view Get(uint32_t offset) const;
  // Bytes of the blocks held.
  size_t MemoryBytes() const { return blocks_.size() * kBlockBytes; }

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t used_ = kBlockBytes;  // in the last block; a full one makes the first Add start one
};

class ImportedNames {
 public:
  ImportedNames();
  ImportedNames(const ImportedNames&) = delete;
  ImportedNames& operator=(const ImportedNames&) = delete;

  // Whether an earlier row claimed `id`.
  bool Claimed(absl::string_view id) const;
  // Rows planned so far with exactly this display name.
  int Occurrences(absl::string_view display_name) const;
  // A row planned: it claims `id` (its record's) under `display_name`.
  void Add(absl::string_view display_name, int64_t row, absl::string_view id);

  struct Duplicate {
    std::string display_name;
    std::vector<std::pair<int64_t, std::string>> rows;  // row and id, in the order planned
  };
  // Every display name that two rows or more had, in display name order
  // (bytewise), each with its rows.
  std::vector<Duplicate> Duplicates() const;

  // Makes room for `rows` rows at once: the tables then never grow by
  // doubling, which holds the old and the new table together for a moment
  // (at a million rows the import's peak rose by about 40 MiB at that step).
  void Reserve(size_t rows);
  // Forgets every name and id and frees their memory (an import that has
  // taken its duplicates into the report before its indexes are rebuilt).
  void Clear();

  // Bytes held: the blocks and the tables' slots (not the tables' few
  // dozen bytes of bookkeeping). Per row: its id and, for a name not seen
  // before, its display name, each with 4 bytes of length; a 4-byte and a
  // 16-byte slot, each with a control byte, in tables at most 16/7 times as
  // large as they are full (absl grows them by 2 past 7/8 full): at most 51
  // bytes. For the benchmark file's 22-byte names and ids, at most 104 bytes
  // per row plus a partly filled 2 MiB block (at most 101 MiB at 1,000,000
  // rows);
  // docs/IMPORT.md.
  size_t MemoryBytes() const;

 private:
  // Hash and equality of strings named by their arena offset, also looked up
  // by string_view (heterogeneous lookup: no copy to ask).
  struct Hash {
    using is_transparent = void;
    const StringArena* arena;
    size_t operator()(uint32_t offset) const;
    size_t operator()(absl::string_view text) const;
  };
  struct Eq {
    using is_transparent = void;
    const StringArena* arena;
    bool operator()(uint32_t a, uint32_t b) const { return a == b; }
    bool operator()(uint32_t a, absl::string_view b) const { return arena->Get(a) == b; }
    bool operator()(absl::string_view a, uint32_t b) const { return a == arena->Get(b); }
  };
  struct Occurrence {
    uint32_t count = 0;
    uint32_t first_row = 0;  // rows are at most kMaxImportRows
    uint32_t first_id = 0;   // arena offset
  };

  StringArena arena_;
  absl::flat_hash_set<uint32_t, Hash, Eq> claimed_;
  absl::flat_hash_map<uint32_t, Occurrence, Hash, Eq> occurrences_;
  // Rows after the first of a repeated name (rare): name offset -> (row, id offset).
  absl::flat_hash_map<uint32_t, std::vector<std::pair<int64_t, uint32_t>>> repeats_;
};

}  // namespace modelatlas::catalog
