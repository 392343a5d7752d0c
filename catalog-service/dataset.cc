#include "catalog-service/dataset.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "catalog-service/catalog.h"
#include "google/protobuf/util/json_util.h"

// The bytes of data/dataset.json and of its protobuf binary form (converted
// at build time by tools/dataset/dataset_to_binary.cc), placed in the
// binary's read-only data by the assembler (the paths are set by
// catalog-service/CMakeLists.txt, which also makes this file depend on both
// files). A NUL byte follows each. ccache does not cache objects with
// .incbin, so a changed dataset is never served from a stale cache entry.
#if !defined(MODELATLAS_SHIPPED_DATASET_PATH) || !defined(MODELATLAS_SHIPPED_DATASET_BINARY_PATH)
#error "MODELATLAS_SHIPPED_DATASET_PATH and _BINARY_PATH must name the dataset files"
#endif
#define MODELATLAS_EMBED(symbol, path) \
  ".pushsection .rodata." symbol       \
  ",\"a\"\n"                           \
  ".balign 16\n"                       \
  ".globl " symbol                     \
  "_begin\n"                           \
  ".hidden " symbol "_begin\n" symbol  \
  "_begin:\n"                          \
  ".incbin \"" path                    \
  "\"\n"                               \
  ".globl " symbol                     \
  "_end\n"                             \
  ".hidden " symbol "_end\n" symbol    \
  "_end:\n"                            \
  ".byte 0\n"                          \
  ".popsection\n"
__asm__(MODELATLAS_EMBED("modelatlas_shipped_dataset", MODELATLAS_SHIPPED_DATASET_PATH)
            MODELATLAS_EMBED("modelatlas_shipped_dataset_binary",
                             MODELATLAS_SHIPPED_DATASET_BINARY_PATH));
#undef MODELATLAS_EMBED

extern "C" const char modelatlas_shipped_dataset_begin[];
extern "C" const char modelatlas_shipped_dataset_end[];
extern "C" const char modelatlas_shipped_dataset_binary_begin[];
extern "C" const char modelatlas_shipped_dataset_binary_end[];

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

absl::string_view ShippedDatasetBinary() {
  return absl::string_view(modelatlas_shipped_dataset_binary_begin,
                           static_cast<size_t>(modelatlas_shipped_dataset_binary_end -
                                               modelatlas_shipped_dataset_binary_begin));
}

absl::StatusOr<v1::Dataset> ShippedDataset() {
  // Parsed once per process; callers get their own copy.
  static std::once_flag once;
  static absl::StatusOr<v1::Dataset>* parsed = nullptr;
  std::call_once(once, [] {
    // The binary form is the JSON converted at build time: same records.
    auto* dataset = new absl::StatusOr<v1::Dataset>(v1::Dataset());
    const absl::string_view binary = ShippedDatasetBinary();
    if (!(*dataset)->ParseFromArray(binary.data(), static_cast<int>(binary.size()))) {
      *dataset = absl::DataLossError("the embedded dataset (binary form) does not parse");
    }
    parsed = dataset;
  });
  return *parsed;
}

absl::StatusOr<ShippedDatasetLoad> LoadShippedDatasetIfEmpty(Catalog& catalog) {
  absl::StatusOr<v1::CatalogInfo> info = catalog.Info();
  if (!info.ok()) return info.status();
  if (info->model_count() + info->hardware_count() > 0) return ShippedDatasetLoad{};
  absl::StatusOr<v1::Dataset> dataset = ShippedDataset();
  if (!dataset.ok()) return dataset.status();
  absl::StatusOr<bool> loaded = catalog.LoadIfEmpty(*dataset);
  if (!loaded.ok()) return loaded.status();
  return ShippedDatasetLoad{*loaded, dataset->models_size(), dataset->hardware_size()};
}

}  // namespace modelatlas::catalog
