#include "catalog-service/import/imported_names.h"

#include <algorithm>
#include <cstring>

#include "absl/hash/hash.h"

namespace modelatlas::catalog {

// Each string: its length (4 bytes) then its bytes, never across blocks.
uint32_t StringArena::Add(absl::string_view text) {
  const size_t size = std::min(text.size(), kMaxStringBytes);
  const size_t needed = sizeof(uint32_t) + size;
  if (used_ + needed > kBlockBytes) {
    blocks_.push_back(std::make_unique<char[]>(kBlockBytes));
    used_ = 0;
  }
  char* at = blocks_.back().get() + used_;
  const auto length = static_cast<uint32_t>(size);
  std::memcpy(at, &length, sizeof(length));
  std::memcpy(at + sizeof(length), text.data(), size);
  const auto offset = static_cast<uint32_t>((blocks_.size() - 1) * kBlockBytes + used_);
  used_ += needed;
  return offset;
}

absl::string_view StringArena::Get(uint32_t offset) const {
  const char* at = blocks_[offset / kBlockBytes].get() + offset % kBlockBytes;
  uint32_t length = 0;
  std::memcpy(&length, at, sizeof(length));
  return absl::string_view(at + sizeof(length), length);
}

size_t ImportedNames::Hash::operator()(uint32_t offset) const {
  return absl::Hash<absl::string_view>()(arena->Get(offset));
}

size_t ImportedNames::Hash::operator()(absl::string_view text) const {
  return absl::Hash<absl::string_view>()(text);
}

ImportedNames::ImportedNames()
    : claimed_(0, Hash{&arena_}, Eq{&arena_}), occurrences_(0, Hash{&arena_}, Eq{&arena_}) {}

bool ImportedNames::Claimed(absl::string_view id) const { return claimed_.contains(id); }

int ImportedNames::Occurrences(absl::string_view display_name) const {
  auto found = occurrences_.find(display_name);
  return found == occurrences_.end() ? 0 : static_cast<int>(found->second.count);
}

void ImportedNames::Add(absl::string_view display_name, int64_t row, absl::string_view id) {
  uint32_t id_offset;
  if (auto claimed = claimed_.find(id); claimed != claimed_.end()) {
    id_offset = *claimed;  // planning never claims an id twice; kept exact if it did
  } else {
    id_offset = arena_.Add(id);
    claimed_.insert(id_offset);
  }
  auto found = occurrences_.find(display_name);
  if (found == occurrences_.end()) {
    occurrences_.emplace(arena_.Add(display_name),
                         Occurrence{1, static_cast<uint32_t>(row), id_offset});
    return;
  }
  ++found->second.count;
  repeats_[found->first].emplace_back(row, id_offset);
}

std::vector<ImportedNames::Duplicate> ImportedNames::Duplicates() const {
  std::vector<Duplicate> duplicates;
  for (const auto& [name_offset, later] : repeats_) {
    const Occurrence& first = occurrences_.find(arena_.Get(name_offset))->second;
    Duplicate& duplicate = duplicates.emplace_back();
    duplicate.display_name = std::string(arena_.Get(name_offset));
    duplicate.rows.emplace_back(first.first_row, std::string(arena_.Get(first.first_id)));
    for (const auto& [row, id_offset] : later) {
      duplicate.rows.emplace_back(row, std::string(arena_.Get(id_offset)));
    }
  }
  std::sort(duplicates.begin(), duplicates.end(),
            [](const Duplicate& a, const Duplicate& b) { return a.display_name < b.display_name; });
  return duplicates;
}

void ImportedNames::Reserve(size_t rows) {
  claimed_.reserve(rows);
  occurrences_.reserve(rows);
}

void ImportedNames::Clear() {
  claimed_ = decltype(claimed_)(0, Hash{&arena_}, Eq{&arena_});
  occurrences_ = decltype(occurrences_)(0, Hash{&arena_}, Eq{&arena_});
  repeats_ = decltype(repeats_)();
  arena_ = StringArena();
}

size_t ImportedNames::MemoryBytes() const {
  // A slot and a control byte per place of each table (absl's layout).
  const size_t claimed = claimed_.capacity() * (sizeof(uint32_t) + 1);
  const size_t occurrences =
      occurrences_.capacity() * (sizeof(std::pair<uint32_t, Occurrence>) + 1);
  return arena_.MemoryBytes() + claimed + occurrences;
}

}  // namespace modelatlas::catalog
