#include "catalog-service/catalog.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "catalog-service/page_token.h"
#include "catalog-service/validation.h"
#include "common/errors.h"
#include "common/resource_names.h"
#include "google/protobuf/util/json_util.h"

namespace modelatlas::catalog {
namespace {

using common::v1::Hardware;
using common::v1::Model;

// Output-only fields are derived at read time, never stored.
template <typename Record>
absl::StatusOr<std::string> ToStoredJson(Record record) {
  record.clear_etag();
  record.clear_revision();
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  auto status = google::protobuf::util::MessageToJsonString(record, &json, options);
  if (!status.ok()) return absl::InternalError(std::string(status.message()));
  return json;
}

template <typename Record>
absl::StatusOr<Record> FromStored(const StoredRecord& stored) {
  Record record;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // a newer replica may have written fields we lack
  auto status = google::protobuf::util::JsonStringToMessage(stored.payload_json, &record, options);
  if (!status.ok()) {
    return absl::DataLossError(absl::StrCat("stored record \"", stored.id,
                                            "\" cannot be read: ", std::string(status.message())));
  }
  record.set_revision(stored.revision);
  // The revision of the last write changes with every write to the record,
  // which is all an etag must do (AIP-154).
  record.set_etag(absl::StrCat("r", stored.revision));
  return record;
}

std::vector<std::string> LookupKeysOf(const Model& model) {
  return {LookupKey(model.display_name())};
}

std::vector<std::string> LookupKeysOf(const Hardware& hardware) {
  std::vector<std::string> keys{LookupKey(hardware.display_name())};
  for (const std::string& alias : hardware.aliases()) keys.push_back(LookupKey(alias));
  return keys;
}

template <typename Record>
absl::Status AppendWrite(const Record& record, RecordKind kind, absl::string_view collection,
                         std::vector<RecordWrite>* writes) {
  absl::StatusOr<std::string> json = ToStoredJson(record);
  if (!json.ok()) return json.status();
  writes->push_back(RecordWrite{kind, *ResourceIdFromName(record.name(), collection),
                                record.display_name(), LookupKeysOf(record), *std::move(json)});
  return absl::OkStatus();
}

}  // namespace

Catalog::Catalog(std::unique_ptr<CatalogStore> store) : store_(std::move(store)) {}

template <typename Record>
absl::StatusOr<Record> Catalog::Get(RecordKind kind, absl::string_view collection,
                                    absl::string_view type_name, absl::string_view name) {
  if (name.empty()) return InvalidFieldError("name", "required");
  std::optional<std::string> id = ResourceIdFromName(name, collection);
  if (!id.has_value()) {
    if (absl::StartsWith(name, absl::StrCat(collection, "/"))) {
      return InvalidFieldError("name",
                               absl::StrCat("\"", name,
                                            "\" is not a valid resource name: the id must be "
                                            "lower-case letters, digits and hyphens (AIP-122)"));
    }
    // Not a resource name: a display name or alias, ignoring case and punctuation.
    absl::StatusOr<std::vector<std::string>> ids =
        store_->FindIdsByLookupKey(kind, LookupKey(name));
    if (!ids.ok()) return ids.status();
    if (ids->empty()) return ResourceNotFoundError(type_name, name);
    if (ids->size() > 1) {
      std::vector<std::string> names;
      for (const std::string& candidate : *ids)
        names.push_back(ResourceName(collection, candidate));
      return WithReason(absl::FailedPreconditionError(absl::StrCat(
                            "\"", name, "\" matches several records: ", absl::StrJoin(names, ", "),
                            "; ask by resource name")),
                        "AMBIGUOUS_NAME");
    }
    id = ids->front();
  }
  absl::StatusOr<StoredRecord> stored = store_->Get(kind, *id);
  if (absl::IsNotFound(stored.status())) return ResourceNotFoundError(type_name, name);
  if (!stored.ok()) return stored.status();
  return FromStored<Record>(*stored);
}

template <typename Record>
absl::StatusOr<Page<Record>> Catalog::List(RecordKind kind, absl::string_view collection,
                                           int page_size, absl::string_view page_token) {
  absl::StatusOr<int> size = EffectivePageSize(page_size, kDefaultPageSize, kMaxPageSize);
  if (!size.ok()) return size.status();
  const std::string query(collection);
  PageCursor cursor{"", query};
  if (!page_token.empty()) {
    absl::StatusOr<PageCursor> decoded = DecodePageToken(page_token, query);
    if (!decoded.ok()) return decoded.status();
    cursor = *std::move(decoded);
  }
  absl::StatusOr<int64_t> revision = store_->Revision();
  if (!revision.ok()) return revision.status();
  // One record more than the page tells whether another page follows.
  absl::StatusOr<std::vector<StoredRecord>> stored = store_->List(kind, cursor.after_id, *size + 1);
  if (!stored.ok()) return stored.status();

  Page<Record> page;
  page.revision = *revision;
  const bool more = static_cast<int>(stored->size()) > *size;
  if (more) stored->pop_back();
  for (const StoredRecord& record : *stored) {
    absl::StatusOr<Record> parsed = FromStored<Record>(record);
    if (!parsed.ok()) return parsed.status();
    page.records.push_back(*std::move(parsed));
  }
  if (more) page.next_page_token = EncodePageToken({stored->back().id, query});
  return page;
}

absl::StatusOr<Model> Catalog::GetModel(absl::string_view name) {
  return Get<Model>(RecordKind::kModel, kModelsCollection, "Model", name);
}

absl::StatusOr<Page<Model>> Catalog::ListModels(int page_size, absl::string_view page_token) {
  return List<Model>(RecordKind::kModel, kModelsCollection, page_size, page_token);
}

absl::StatusOr<Hardware> Catalog::GetHardware(absl::string_view name) {
  return Get<Hardware>(RecordKind::kHardware, kHardwareCollection, "Hardware", name);
}

absl::StatusOr<Page<Hardware>> Catalog::ListHardware(int page_size, absl::string_view page_token) {
  return List<Hardware>(RecordKind::kHardware, kHardwareCollection, page_size, page_token);
}

absl::StatusOr<v1::CatalogInfo> Catalog::Info() {
  v1::CatalogInfo info;
  absl::StatusOr<int64_t> revision = store_->Revision();
  if (!revision.ok()) return revision.status();
  absl::StatusOr<int64_t> models = store_->Count(RecordKind::kModel);
  if (!models.ok()) return models.status();
  absl::StatusOr<int64_t> hardware = store_->Count(RecordKind::kHardware);
  if (!hardware.ok()) return hardware.status();
  info.set_revision(*revision);
  info.set_model_count(*models);
  info.set_hardware_count(*hardware);
  info.set_schema_version(store_->schema_version());
  info.set_store(std::string(store_->backend()));
  return info;
}

absl::StatusOr<int64_t> Catalog::CreateAll(const v1::Dataset& dataset) {
  FieldViolations violations;
  for (int i = 0; i < dataset.models_size(); ++i) {
    ValidateModel(dataset.models(i), absl::StrCat("models[", i, "]"), &violations);
  }
  for (int i = 0; i < dataset.hardware_size(); ++i) {
    ValidateHardware(dataset.hardware(i), absl::StrCat("hardware[", i, "]"), &violations);
  }
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;

  std::vector<RecordWrite> writes;
  for (const Model& model : dataset.models()) {
    if (absl::Status s = AppendWrite(model, RecordKind::kModel, kModelsCollection, &writes);
        !s.ok()) {
      return s;
    }
  }
  for (const Hardware& hardware : dataset.hardware()) {
    if (absl::Status s = AppendWrite(hardware, RecordKind::kHardware, kHardwareCollection, &writes);
        !s.ok()) {
      return s;
    }
  }
  return store_->Insert(writes);
}

absl::StatusOr<bool> Catalog::LoadIfEmpty(const v1::Dataset& dataset) {
  absl::StatusOr<v1::CatalogInfo> info = Info();
  if (!info.ok()) return info.status();
  if (info->model_count() + info->hardware_count() > 0) return false;
  absl::StatusOr<int64_t> revision = CreateAll(dataset);
  if (!revision.ok()) return revision.status();
  return true;
}

}  // namespace modelatlas::catalog
