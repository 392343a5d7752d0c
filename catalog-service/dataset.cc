#include "catalog-service/dataset.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace modelatlas::catalog {

// Defined in the generated shipped_dataset_data.cc (cmake/embed_file.cmake).
extern const unsigned char kShippedDatasetJson[];
extern const unsigned long kShippedDatasetJson_size;

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

absl::StatusOr<v1::Dataset> ShippedDataset() {
  return ParseDatasetJson(absl::string_view(reinterpret_cast<const char*>(kShippedDatasetJson),
                                            kShippedDatasetJson_size));
}

}  // namespace modelatlas::catalog
