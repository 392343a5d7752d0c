#include "catalog-service/import/import_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace modelatlas::catalog {
namespace {

std::string SystemReason(int error) { return std::strerror(error); }

}  // namespace

absl::StatusOr<absl::string_view> TextSource::Read(int64_t offset, size_t max_bytes,
                                                   std::string* /*buffer*/) const {
  if (offset < 0 || offset > size_bytes()) {
    return absl::OutOfRangeError(absl::StrCat("offset ", offset, " is past the file's end"));
  }
  return text_.substr(static_cast<size_t>(offset), max_bytes);
}

absl::StatusOr<std::unique_ptr<SpoolFile>> SpoolFile::Create(const std::string& directory) {
  // O_TMPFILE: a file with no name, gone with its descriptor (open(2)).
  int fd = open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
    // A file system without O_TMPFILE: a named file, unlinked at once.
    std::string path = absl::StrCat(directory, "/modelatlas-import-XXXXXX");
    fd = mkostemp(path.data(), O_CLOEXEC);
    if (fd >= 0) unlink(path.c_str());
  }
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot create the upload's temporary file in \"",
                                            directory, "\": ", SystemReason(errno),
                                            "; nothing was written"));
  }
  return std::unique_ptr<SpoolFile>(new SpoolFile(fd, directory));
}

SpoolFile::~SpoolFile() { close(fd_); }

absl::Status SpoolFile::Append(absl::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t wrote =
        pwrite(fd_, bytes.data() + done, bytes.size() - done, size_ + static_cast<off_t>(done));
    if (wrote > 0) {
      done += static_cast<size_t>(wrote);
      continue;
    }
    if (wrote < 0 && errno == EINTR) continue;
    // write(2) returns 0 only for a zero-byte request; treat it as no space.
    const int error = wrote < 0 ? errno : ENOSPC;
    // What this call wrote is cut off, so the spool holds whole messages.
    if (ftruncate(fd_, size_) != 0) {
      // Nothing more to do: the size kept below still bounds every read.
    }
    const std::string reason =
        absl::StrCat("cannot keep the upload in a temporary file in \"", directory_, "\" after ",
                     size_, " bytes: ", SystemReason(error), "; nothing was written");
    // A full disk, a quota or RLIMIT_FSIZE: the resource ran out, not a bug.
    if (error == ENOSPC || error == EDQUOT || error == EFBIG) {
      return absl::ResourceExhaustedError(reason);
    }
    return absl::InternalError(reason);
  }
  size_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

absl::StatusOr<absl::string_view> SpoolFile::Read(int64_t offset, size_t max_bytes,
                                                  std::string* buffer) const {
  if (offset < 0 || offset > size_) {
    return absl::OutOfRangeError(absl::StrCat("offset ", offset, " is past the file's end"));
  }
  const size_t want = static_cast<size_t>(std::min<int64_t>(max_bytes, size_ - offset));
  buffer->resize(want);
  size_t done = 0;
  while (done < want) {
    const ssize_t got = pread(fd_, buffer->data() + done, want - done, offset + done);
    if (got > 0) {
      done += static_cast<size_t>(got);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    return absl::InternalError(
        absl::StrCat("cannot read the upload back from its temporary file in \"", directory_,
                     "\" at byte ", offset + static_cast<int64_t>(done), ": ",
                     got < 0 ? SystemReason(errno) : std::string("it ended early")));
  }
  return absl::string_view(*buffer);
}

std::string DefaultSpoolDirectory() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
}

}  // namespace modelatlas::catalog
