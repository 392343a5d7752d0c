// An atomic import's planned writes, kept on disk between planning and its
// one transaction: each batch serialized and appended to an unnamed
// temporary file (SpoolFile) as it is planned, read back one batch at a time
// while the transaction is open (CatalogStore::WriteInOneTransaction). So an
// atomic import holds one batch of writes in memory, not the whole file's
// (a million rows of records: gigabytes), and a rejected row anywhere in the
// file is known before the transaction begins. The disk it takes is about
// the serialized records' bytes (payloads, ids, names, keys and order values:
// docs/IMPORT.md), freed when the spool is destroyed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "catalog-service/import/import_source.h"
#include "catalog-service/store/store.h"

namespace modelatlas::catalog {

class WriteSpool {
 public:
  // A spool in `directory` (errors as SpoolFile::Create's).
  static absl::StatusOr<std::unique_ptr<WriteSpool>> Create(const std::string& directory);

  // Appends `writes` as one batch (errors as SpoolFile::Append's: a full
  // disk is RESOURCE_EXHAUSTED).
  absl::Status Append(const std::vector<BatchWrite>& writes);
  // The writes appended, over every batch.
  int64_t writes() const { return writes_; }
  // Bytes on disk.
  int64_t size_bytes() const { return file_->size_bytes(); }

  // The batches in the order appended, one per call (into `batch`, which is
  // cleared first): empty after the last. DATA_LOSS when what is read back
  // is not what was written (a truncated or corrupted file).
  absl::Status Next(std::vector<BatchWrite>* batch);
  // Reads from the first batch again.
  void Rewind() { read_offset_ = 0; }

 private:
  explicit WriteSpool(std::unique_ptr<SpoolFile> file) : file_(std::move(file)) {}
  std::unique_ptr<SpoolFile> file_;
  int64_t writes_ = 0;
  int64_t read_offset_ = 0;
  std::string buffer_;  // the batch being encoded or decoded
};

}  // namespace modelatlas::catalog
