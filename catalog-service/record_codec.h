// How typed records are stored: what differs between models and hardware
// (collection, validation, lookup keys) and the conversion to and from the
// store's rows. Shared by the catalog's reads, writes and imports.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "catalog-service/store/store.h"
#include "catalog-service/validation.h"
#include "common/records/lookup_keys.h"
#include "common/status/errors.h"
#include "common/status/resource_names.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::catalog::internal {

using common::v1::Hardware;
using common::v1::Model;

// What differs between the two kinds of record.
template <typename Record>
struct Traits;

template <>
struct Traits<Model> {
  static constexpr RecordKind kKind = RecordKind::kModel;
  static constexpr absl::string_view kCollection = kModelsCollection;
  static constexpr absl::string_view kTypeName = "Model";
  static void Validate(const Model& m, const std::string& prefix, FieldViolations* v) {
    ValidateModel(m, prefix, v);
  }
  static std::vector<std::string> LookupKeys(const Model& m) { return LookupKeysOf(m); }
};

template <>
struct Traits<Hardware> {
  static constexpr RecordKind kKind = RecordKind::kHardware;
  static constexpr absl::string_view kCollection = kHardwareCollection;
  static constexpr absl::string_view kTypeName = "Hardware";
  static void Validate(const Hardware& h, const std::string& prefix, FieldViolations* v) {
    ValidateHardware(h, prefix, v);
  }
  static std::vector<std::string> LookupKeys(const Hardware& h) { return LookupKeysOf(h); }
};

// Output-only fields are derived at read time, never stored.
template <typename Record>
inline std::string ToStoredBytes(Record record) {
  record.clear_etag();
  record.clear_revision();
  return record.SerializeAsString();
}

template <typename Record>
absl::StatusOr<Record> FromStored(const StoredRecord& stored) {
  Record record;
  // Fields a newer replica wrote and this binary lacks are kept as unknown
  // fields, so rewriting the record does not drop them.
  if (!record.ParseFromString(stored.payload)) {
    return absl::DataLossError(
        absl::StrCat("stored record \"", stored.id, "\" cannot be read: corrupt payload"));
  }
  record.set_revision(stored.revision);
  // The revision of the last write changes with every write to the record,
  // which is all an etag must do (AIP-154).
  record.set_etag(absl::StrCat("r", stored.revision));
  return record;
}

template <typename Record>
absl::StatusOr<RecordWrite> ToWrite(const Record& record) {
  return RecordWrite{
      Traits<Record>::kKind, *ResourceIdFromName(record.name(), Traits<Record>::kCollection),
      record.display_name(), Traits<Record>::LookupKeys(record), ToStoredBytes(record)};
}

}  // namespace modelatlas::catalog::internal
