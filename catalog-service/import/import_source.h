// The bytes of a file to import, read in pieces: text already in memory, or
// an upload spooled to a temporary file as it arrives (so that the catalog's
// memory during an import does not grow with the file: issue 22 point 4).
// Plain C++ over POSIX files: no store, no gRPC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace modelatlas::catalog {

class ImportSource {
 public:
  virtual ~ImportSource() = default;
  // Bytes in the file.
  virtual int64_t size_bytes() const = 0;
  // Up to `max_bytes` from `offset` (fewer only at the end of the file),
  // either into `buffer` or as a view of memory the source holds; valid
  // until the next Read with the same buffer.
  virtual absl::StatusOr<absl::string_view> Read(int64_t offset, size_t max_bytes,
                                                 std::string* buffer) const = 0;
};

// A file already in memory (tests, callers that hold the text): reads are
// views of it, no copy.
class TextSource : public ImportSource {
 public:
  explicit TextSource(absl::string_view text) : text_(text) {}
  int64_t size_bytes() const override { return static_cast<int64_t>(text_.size()); }
  absl::StatusOr<absl::string_view> Read(int64_t offset, size_t max_bytes,
                                         std::string* buffer) const override;

 private:
  absl::string_view text_;
};

// An upload written to a temporary file as its messages arrive and read
// back in pieces. The file has no name from the start (O_TMPFILE), or is
// unlinked as soon as it is created where O_TMPFILE is not supported, so
// nothing is left behind by a crash; closing it (the destructor) frees its
// blocks.
class SpoolFile : public ImportSource {
 public:
  // A spool in `directory`. INTERNAL naming the directory and the system's
  // reason when it cannot be created there (missing, not writable).
  static absl::StatusOr<std::unique_ptr<SpoolFile>> Create(const std::string& directory);
  ~SpoolFile() override;
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;

  // Appends `bytes`. A full disk, a quota or a file-size limit is
  // RESOURCE_EXHAUSTED, any other write error INTERNAL; either way the
  // spool keeps what it held before (a partial write is cut off again).
  absl::Status Append(absl::string_view bytes);
  int64_t size_bytes() const override { return size_; }
  absl::StatusOr<absl::string_view> Read(int64_t offset, size_t max_bytes,
                                         std::string* buffer) const override;
  // The directory it was created in (errors name it).
  const std::string& directory() const { return directory_; }

 private:
  SpoolFile(int fd, std::string directory) : fd_(fd), directory_(std::move(directory)) {}
  int fd_;
  std::string directory_;
  int64_t size_ = 0;
};

// Where uploads are spooled when no directory is given: $TMPDIR, else /tmp.
std::string DefaultSpoolDirectory();

}  // namespace modelatlas::catalog
