#include "catalog-service/dataset.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

// The bytes of data/dataset.json, placed in the binary's read-only data by
// the assembler at build time (MODELATLAS_SHIPPED_DATASET_PATH is the file's
// absolute path, set by catalog-service/CMakeLists.txt, which also makes
// this file depend on it). A NUL byte follows the end. ccache does not cache
// objects with .incbin, so a changed dataset is never served from a stale
// cache entry.
#ifndef MODELATLAS_SHIPPED_DATASET_PATH
#error "MODELATLAS_SHIPPED_DATASET_PATH must name data/dataset.json"
#endif
__asm__(
    ".pushsection .rodata.modelatlas_shipped_dataset,\"a\"\n"
    ".balign 16\n"
    ".globl modelatlas_shipped_dataset_begin\n"
    ".hidden modelatlas_shipped_dataset_begin\n"
    "modelatlas_shipped_dataset_begin:\n"
    ".incbin \"" MODELATLAS_SHIPPED_DATASET_PATH
    "\"\n"
    ".globl modelatlas_shipped_dataset_end\n"
    ".hidden modelatlas_shipped_dataset_end\n"
    "modelatlas_shipped_dataset_end:\n"
    ".byte 0\n"
    ".popsection\n");

extern "C" const char modelatlas_shipped_dataset_begin[];
extern "C" const char modelatlas_shipped_dataset_end[];

namespace modelatlas::catalog {

absl::StatusOr<v1::Dataset> ParseDatasetJson(absl::string_view json) {
  v1::Dataset dataset;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(std::string(json), &dataset, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dataset JSON: ", std::string(status.message())));
  }
  return dataset;
}

absl::string_view ShippedDatasetJson() {
  return absl::string_view(
      modelatlas_shipped_dataset_begin,
      static_cast<size_t>(modelatlas_shipped_dataset_end - modelatlas_shipped_dataset_begin));
}

absl::StatusOr<v1::Dataset> ShippedDataset() {
  // Parsed once per process (a few MB of JSON); callers get their own copy.
  static std::once_flag once;
  static absl::StatusOr<v1::Dataset>* parsed = nullptr;
  std::call_once(once, [] {
    parsed = new absl::StatusOr<v1::Dataset>(ParseDatasetJson(ShippedDatasetJson()));
  });
  return *parsed;
}

}  // namespace modelatlas::catalog
