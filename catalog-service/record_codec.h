// How typed records are stored: what differs between models and hardware
// (collection, validation, lookup keys) and the conversion to and from the
// store's rows. Shared by the catalog's reads, writes and imports.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "catalog-service/store/store.h"
#include "catalog-service/validation.h"
#include "common/query/filter.h"
#include "common/records/lookup_keys.h"
#include "common/status/errors.h"
#include "common/status/resource_names.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"
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

// The order key of each OrderColumn of a model (its field, ascending).
inline const std::vector<query::OrderKey>& ModelOrderKeys() {
  static const auto* keys = [] {
    auto* made = new std::vector<query::OrderKey>;
    for (int i = 0; i < kOrderColumnCount; ++i) {
      made->push_back(std::move((*query::ParseOrderBy(OrderColumnField(static_cast<OrderColumn>(i)),
                                                      Model::descriptor()))[0]));
    }
    return made;
  }();
  return *keys;
}

// The lists of a model whose elements the filter text holds (see
// kFilterTextValue): the ones filters name with `field:"text"`.
inline constexpr absl::string_view kFilterTextFields[] = {"domains", "tasks", "organizations",
                                                          "organization_categories", "countries"};

// The filter text of a model: each element of those lists lower-cased
// (absl::AsciiStrToLower, as query::Filter compares them) after a newline.
// Any element containing a lower-case text makes the whole text contain it.
inline std::string FilterTextOf(const Model& model) {
  std::string text;
  for (const auto* list : {&model.domains(), &model.tasks(), &model.organizations(),
                           &model.organization_categories(), &model.countries()}) {
    for (const std::string& element : *list) {
      absl::StrAppend(&text, "\n", absl::AsciiStrToLower(element));
    }
  }
  return text;
}

// The values a model is ordered by in the store: query::OrderValueOf, the
// values the catalog's own sort compares, so both orders are the same; then
// its filter text.
inline OrderValues OrderValuesOf(const Model& model) {
  OrderValues values;
  values[kFilterTextValue] = FilterTextOf(model);
  std::string domains;
  for (const std::string& domain : model.domains()) {
    absl::StrAppend(&domains, "\n", absl::AsciiStrToLower(domain));
  }
  values[kDomainsValue] = std::move(domains);
  for (int i = 0; i < kOrderColumnCount; ++i) {
    std::optional<std::variant<double, std::string>> value =
        query::OrderValueOf(model, ModelOrderKeys()[i]);
    if (!value.has_value()) continue;
    if (auto* number = std::get_if<double>(&*value)) {
      values[i] = *number;
    } else {
      values[i] = std::move(std::get<std::string>(*value));
    }
  }
  return values;
}
// Hardware lists are short: sorted in the process, nothing in the store.
inline OrderValues OrderValuesOf(const Hardware&) { return OrderValues(); }

// Output-only fields are derived at read time, never stored.
template <typename Record>
inline std::string ToStoredBytes(Record record) {
  record.clear_etag();
  record.clear_revision();
  return record.SerializeAsString();
}

// A stored payload that does not parse (DATA_LOSS, naming the record).
inline absl::Status CorruptPayloadError(absl::string_view id) {
  return absl::DataLossError(
      absl::StrCat("stored record \"", id, "\" cannot be read: corrupt payload"));
}
inline absl::Status CorruptPayloadError(const StoredRecord& stored) {
  return CorruptPayloadError(stored.id);
}

// Whether a stored payload parses as a Record (FromStored's check, for reads
// that pass the bytes on). Parsed on an arena whose first block is on the
// stack: a generated model's strings and repeated fields then cost no
// allocation (a parse on the heap was about ten malloc/free pairs, on about
// half of GetModel's calls at 100,000 models; larger records take heap blocks
// beyond the first).
template <typename Record>
bool PayloadParses(absl::string_view payload) {
  alignas(16) char first_block[2048];
  google::protobuf::ArenaOptions options;
  options.initial_block = first_block;
  options.initial_block_size = sizeof(first_block);
  google::protobuf::Arena arena(options);
  return google::protobuf::Arena::CreateMessage<Record>(&arena)->ParseFromArray(
      payload.data(), static_cast<int>(payload.size()));
}

template <typename Record>
absl::StatusOr<Record> FromStored(const StoredRecord& stored) {
  Record record;
  // Fields a newer replica wrote and this binary lacks are kept as unknown
  // fields, so rewriting the record does not drop them.
  if (!record.ParseFromString(stored.payload)) return CorruptPayloadError(stored);
  record.set_revision(stored.revision);
  // The revision of the last write changes with every write to the record,
  // which is all an etag must do (AIP-154).
  record.set_etag(absl::StrCat("r", stored.revision));
  return record;
}

// A record as a reply's wire bytes, without parsing it, is the stored
// payload with the output-only etag and revision fields appended. Protobuf's
// encoding lets a message be extended by appending fields (a parser merges
// them, a singular field keeps the last value), so these bytes parse to
// exactly FromStored(stored). Reads that only pass a record on (GetModel,
// GetHardware) skip parsing, validating and re-serializing it, which was the
// larger part of their CPU per call (docs/BENCHMARKS.md).
//
// The longest tail: the etag field (tag, length, "r", a sign, 19 digits)
// and the revision field (tag, a varint of up to 10 bytes).
inline constexpr size_t kMaxReplyTailBytes = 1 + 1 + 21 + 1 + 10;

// Writes what follows the stored payload, the two fields, at `out`; returns
// their size (<= kMaxReplyTailBytes).
template <typename Record>
size_t WriteReplyTail(int64_t revision, char* out) {
  using google::protobuf::internal::WireFormatLite;
  using google::protobuf::io::CodedOutputStream;
  const absl::AlphaNum digits(revision);  // formatted in place: no allocation
  auto* begin = reinterpret_cast<uint8_t*>(out);
  uint8_t* at = WireFormatLite::WriteTagToArray(Record::kEtagFieldNumber,
                                                WireFormatLite::WIRETYPE_LENGTH_DELIMITED, begin);
  at = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(1 + digits.size()), at);
  *at++ = 'r';
  at = std::copy(digits.data(), digits.data() + digits.size(), at);
  at = WireFormatLite::WriteInt64ToArray(Record::kRevisionFieldNumber, revision, at);
  return static_cast<size_t>(at - begin);
}

template <typename Record>
absl::StatusOr<RecordWrite> ToWrite(const Record& record) {
  return RecordWrite{
      Traits<Record>::kKind, *ResourceIdFromName(record.name(), Traits<Record>::kCollection),
      record.display_name(), Traits<Record>::LookupKeys(record),
      ToStoredBytes(record), OrderValuesOf(record)};
}

}  // namespace modelatlas::catalog::internal
