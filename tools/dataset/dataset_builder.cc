// Writes the dataset ModelAtlas ships (catalog-service/data/dataset.json)
// from the curated records (catalog-service/data/curated/*.json) and Epoch
// AI's data (CC BY 4.0): every model of all_ai_models.csv (and of Epoch's
// notable, large-scale and frontier tables that it lacks) and every
// accelerator of ml_hardware.csv, plus prices from hardware_prices.csv.
//
// The Epoch files are read and matched by the catalog's own importer
// (catalog-service/import/ and Catalog::Import), so the column mapping,
// record ids and training-hardware links are the ones `modelatlas import`
// gives. On top of that:
//   - only facts are shipped: every free-text column (notes, abstract) is
//     dropped from Epoch's rows before they are imported;
//   - a curated record and an Epoch row for the same model or hardware
//     (name or alias ignoring case and punctuation) merge with the curated
//     values winning: Epoch only fills fields the curated record lacks;
//   - Epoch's figures in other conventions (decimal-GB memory, GeForce
//     FP16-accumulate peaks) are converted by the importer itself
//     (catalog-service/import/epoch_conventions.h), and the provenance of an
//     Epoch-only record says so;
//   - each record's provenance credits Epoch AI under CC BY 4.0.
//
#include "tools/dataset/dataset_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "catalog-service/catalog.h"
#include "catalog-service/dataset.h"
#include "catalog-service/import/csv.h"
#include "catalog-service/import/import_file.h"
#include "catalog-service/store/sqlite_store.h"
#include "catalog-service/validation.h"
#include "common/records/deterministic.h"
#include "common/status/errors.h"
#include "common/status/resource_names.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "google/protobuf/util/type_resolver.h"
#include "google/protobuf/util/type_resolver_util.h"

namespace modelatlas::catalog {
namespace {

// Where the build reports what it did (BuildResult::report).
std::string* report_sink = nullptr;

template <typename... Args>
void Report(const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (report_sink != nullptr) absl::StrAppendFormat(report_sink, format, args...);
}

using common::v1::Hardware;
using common::v1::Model;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

constexpr char kModelsSource[] = "Epoch AI, AI Models (CC BY 4.0)";
constexpr char kModelsUrl[] = "https://epoch.ai/data/ai-models";
constexpr char kHardwareSource[] = "Epoch AI, Machine Learning Hardware (CC BY 4.0)";
constexpr char kHardwareUrl[] = "https://epoch.ai/data/machine-learning-hardware";
constexpr char kPricesSource[] = "Epoch AI, Hardware prices (CC BY 4.0)";

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A column or field that holds prose someone else wrote.
bool IsFreeText(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  return absl::StrContains(lower, "notes") || lower == "abstract" || lower == "description";
}

// Clears every free-text field and column of a record, by reflection, so a
// notes field added to the contract is dropped too.
void StripFreeText(Message* record) {
  const auto* reflection = record->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*record, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING && !field->is_repeated() &&
        IsFreeText(field->name())) {
      reflection->ClearField(record, field);
    }
  }
}
// True when every word of `cell` is a link ("https://a; https://b"): a
// source column that holds only links is a fact, one with sentences is not.
bool OnlyLinks(absl::string_view cell) {
  bool any = false;
  for (absl::string_view word : absl::StrSplit(cell, absl::ByAnyChar(" \t\r\n;,"))) {
    if (word.empty()) continue;
    if (!absl::StartsWith(word, "http://") && !absl::StartsWith(word, "https://")) return false;
    any = true;
  }
  return any;
}

// A column of others' prose: notes, abstracts, descriptions, and the
// source columns ("Source for the price", "Link to datasheet") where they
// hold sentences rather than links.
bool IsFreeTextColumn(absl::string_view header, absl::string_view cell) {
  if (IsFreeText(header)) return true;
  const std::string lower = absl::AsciiStrToLower(header);
  if (absl::StrContains(lower, "source") || absl::StrContains(lower, "link")) {
    return !OnlyLinks(cell);
  }
  return false;
}

// Sentences: more than one, or a quotation.
bool LooksLikeProse(absl::string_view text) {
  if (absl::StartsWith(text, "\"")) return true;
  for (size_t i = 0; i + 2 < text.size(); ++i) {
    if ((text[i] == '.' || text[i] == '!' || text[i] == '?') && text[i + 1] == ' ' &&
        absl::ascii_isupper(static_cast<unsigned char>(text[i + 2]))) {
      return true;
    }
  }
  return false;
}

// Fields meant for names that some rows fill with prose: a reference
// "title" that is a paragraph (over 200 bytes), a data centre given as a
// quotation from the paper.
void StripProseFromNameFields(Model* model) {
  if (model->reference().size() > 200) model->clear_reference();
  if (model->training_data_center().size() > 120 || LooksLikeProse(model->training_data_center())) {
    model->clear_training_data_center();
  }
}
void StripProseFromNameFields(Hardware*) {}

template <typename Record>
void StripFreeColumns(Record* record) {
  StripFreeText(record);
  StripProseFromNameFields(record);
  for (auto it = record->mutable_other_source_columns()->begin();
       it != record->mutable_other_source_columns()->end();) {
    if (IsFreeTextColumn(it->first, it->second)) {
      it = record->mutable_other_source_columns()->erase(it);
    } else {
      ++it;
    }
  }
}

// Messages copied whole rather than field by field.
bool IsAtomic(const google::protobuf::Descriptor* type) {
  return type->full_name() == "google.type.Date" ||
         type->full_name() == "google.protobuf.Timestamp" ||
         type->full_name() == "modelatlas.common.v1.Price";
}

void CopyScalar(const Message& from, const FieldDescriptor* field, Message* to) {
  const auto* f = from.GetReflection();
  const auto* t = to->GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      t->SetDouble(to, field, f->GetDouble(from, field));
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      t->SetFloat(to, field, f->GetFloat(from, field));
      break;
    case FieldDescriptor::CPPTYPE_INT32:
      t->SetInt32(to, field, f->GetInt32(from, field));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      t->SetInt64(to, field, f->GetInt64(from, field));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      t->SetUInt32(to, field, f->GetUInt32(from, field));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      t->SetUInt64(to, field, f->GetUInt64(from, field));
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      t->SetBool(to, field, f->GetBool(from, field));
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      t->SetEnumValue(to, field, f->GetEnumValue(from, field));
      break;
    case FieldDescriptor::CPPTYPE_STRING:
      t->SetString(to, field, f->GetString(from, field));
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      t->MutableMessage(to, field)->CopyFrom(f->GetMessage(from, field));
      break;
  }
}

// Copies into `to` every field `from` sets and `to` lacks (recursing into
// nested messages such as `peak`); returns the paths filled.
void FillMissing(const Message& from, Message* to, const std::string& prefix,
                 std::vector<std::string>* filled) {
  static const std::set<std::string> kSkipped = {"name", "provenance", "etag", "revision",
                                                 "display_name"};
  const auto* from_reflection = from.GetReflection();
  const auto* to_reflection = to->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  from_reflection->ListFields(from, &fields);
  for (const FieldDescriptor* field : fields) {
    if (prefix.empty() && kSkipped.count(field->name())) continue;
    const std::string path = prefix.empty() ? field->name() : prefix + "." + field->name();
    if (field->is_repeated()) {
      if (to_reflection->FieldSize(*to, field) > 0) continue;
      for (int i = 0; i < from_reflection->FieldSize(from, field); ++i) {
        switch (field->cpp_type()) {
          case FieldDescriptor::CPPTYPE_STRING:
            to_reflection->AddString(to, field, from_reflection->GetRepeatedString(from, field, i));
            break;
          case FieldDescriptor::CPPTYPE_DOUBLE:
            to_reflection->AddDouble(to, field, from_reflection->GetRepeatedDouble(from, field, i));
            break;
          case FieldDescriptor::CPPTYPE_ENUM:
            to_reflection->AddEnumValue(to, field,
                                        from_reflection->GetRepeatedEnumValue(from, field, i));
            break;
          case FieldDescriptor::CPPTYPE_MESSAGE:
            to_reflection->AddMessage(to, field)->CopyFrom(
                from_reflection->GetRepeatedMessage(from, field, i));
            break;
          default:
            break;
        }
      }
      filled->push_back(path);
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
               !IsAtomic(field->message_type())) {
      std::vector<std::string> inner;
      FillMissing(from_reflection->GetMessage(from, field),
                  to_reflection->MutableMessage(to, field), path, &inner);
      filled->insert(filled->end(), inner.begin(), inner.end());
    } else if (!to_reflection->HasField(*to, field)) {
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        to_reflection->MutableMessage(to, field)->CopyFrom(
            from_reflection->GetMessage(from, field));
      } else {
        CopyScalar(from, field, to);
      }
      filled->push_back(path);
    }
  }
}

Model WithEpochProvenance(Model model) {
  model.mutable_provenance()->Clear();
  model.mutable_provenance()->set_source(kModelsSource);
  model.mutable_provenance()->add_urls(kModelsUrl);
  return model;
}

// `converted`: the fields the importer stored in the record's convention
// instead of Epoch's (epoch_conventions.h), said in the provenance.
Hardware WithEpochProvenance(Hardware hardware, const std::set<std::string>& converted) {
  hardware.mutable_provenance()->Clear();
  hardware.mutable_provenance()->set_source(kHardwareSource);
  hardware.mutable_provenance()->add_urls(kHardwareUrl);
  std::vector<std::string> notes;
  if (converted.count("memory_bytes")) {
    notes.push_back(
        "memory_bytes: Epoch's decimal figure (N GB = N x 1e9 bytes) read as N GiB (N MB as N "
        "MiB), the catalog's convention.");
  }
  if (converted.count("peak.tensor_fp16_bf16_flops") || converted.count("peak.fp8_flops")) {
    notes.push_back(
        "peak: Epoch's GeForce tensor figure is the FP16-accumulate rate, kept in "
        "peak.tensor_fp16_fp16_accumulate_flops; tensor_fp16_bf16_flops holds the "
        "FP32-accumulate rate, half of it.");
  }
  if (!notes.empty()) hardware.mutable_provenance()->set_notes(absl::StrJoin(notes, " "));
  return hardware;
}

template <typename Record>
void CreditEpochFill(Record* record, const std::vector<std::string>& filled, const char* source,
                     const char* url) {
  if (filled.empty()) return;
  auto* provenance = record->mutable_provenance();
  // A curated record that already credits Epoch AI (a seed page's figures,
  // a correction of one of Epoch's, a datasheet beside Epoch's row): no
  // second credit.
  if (!absl::StartsWith(provenance->source(), "Epoch AI") &&
      !absl::StrContains(provenance->source(), source)) {
    provenance->set_source(absl::StrCat(provenance->source(), "; gaps filled from ", source));
  }
  if (std::find(provenance->urls().begin(), provenance->urls().end(), url) ==
      provenance->urls().end()) {
    provenance->add_urls(url);
  }
}

absl::StatusOr<ParsedFile> ParseEpoch(const std::string& path) {
  absl::StatusOr<std::string> content = ReadFile(path);
  if (!content.ok()) return content.status();
  absl::StatusOr<v1::FileFormat> format = DetectFileFormat(*content);
  if (!format.ok()) return format.status();
  const std::string name = path.substr(path.find_last_of('/') + 1);
  absl::StatusOr<ParsedFile> file = ParseImportFile(*content, *format, name);
  if (!file.ok()) return file.status();
  if (!file->rejections.empty()) {
    Report("%s: %zu rows not read (the first: row %lld, %s)\n", name.c_str(),
           file->rejections.size(), static_cast<long long>(file->rejections[0].row()),
           file->rejections[0].reason().c_str());
  }
  return file;
}

absl::Status Import(Catalog* catalog, ParsedFile file, const std::string& source_name) {
  v1::ImportOptions options;
  options.set_source_name(source_name);
  absl::StatusOr<v1::ImportReport> report = catalog->Import(file, options);
  if (!report.ok()) return report.status();
  Report("%s: %lld created, %lld updated, %lld unchanged, %d rejected\n", source_name.c_str(),
         static_cast<long long>(report->created()), static_cast<long long>(report->updated()),
         static_cast<long long>(report->unchanged()), report->rejections_size());
  for (const auto& rejection : report->rejections()) {
    Report("  rejected row %lld: %s\n", static_cast<long long>(rejection.row()),
           rejection.reason().c_str());
  }
  return absl::OkStatus();
}

// --- Prices (hardware_prices.csv: one observation per row) ---

std::optional<double> ParseUsd(absl::string_view cell) {
  std::string text = absl::StrReplaceAll(cell, {{"$", ""}, {",", ""}, {" ", ""}});
  double value = 0;
  if (text.empty() || !absl::SimpleAtod(text, &value) || !(value > 0)) return std::nullopt;
  return value;
}

std::optional<google::type::Date> ParseDate(absl::string_view cell) {
  std::vector<std::string> parts = absl::StrSplit(cell.substr(0, 10), '-');
  int year = 0, month = 0, day = 0;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &year) ||
      !absl::SimpleAtoi(parts[1], &month) || !absl::SimpleAtoi(parts[2], &day)) {
    return std::nullopt;
  }
  google::type::Date date;
  date.set_year(year);
  date.set_month(month);
  date.set_day(day);
  return date;
}

// A day count for comparing dates (months of 31 days: only differences matter).
int64_t DayNumber(const google::type::Date& date) {
  return date.year() * 372 + date.month() * 31 + date.day();
}

// The price to ship from several observations: the lowest among those of
// the last year on record (prices fall; one stale quote should not stand
// for today, nor one vendor's premium for the market).
std::optional<common::v1::Price> Pick(const std::vector<common::v1::Price>& observations) {
  if (observations.empty()) return std::nullopt;
  int64_t newest = 0;
  for (const auto& price : observations) newest = std::max(newest, DayNumber(price.date()));
  std::optional<common::v1::Price> best;
  for (const auto& price : observations) {
    if (DayNumber(price.date()) < newest - 372) continue;
    if (!best.has_value() || price.usd() < best->usd() ||
        (price.usd() == best->usd() && DayNumber(price.date()) > DayNumber(best->date()))) {
      best = price;
    }
  }
  return best;
}

absl::Status AddPrices(const std::string& path, std::vector<Hardware>* hardware) {
  absl::StatusOr<std::string> content = ReadFile(path);
  if (!content.ok()) return content.status();
  // Plain aliases name one record; shared ones are skipped (ambiguous).
  std::map<std::string, std::vector<size_t>> by_key;
  for (size_t i = 0; i < hardware->size(); ++i) {
    std::set<std::string> keys{LookupKey((*hardware)[i].display_name())};
    for (const std::string& alias : (*hardware)[i].aliases()) keys.insert(LookupKey(alias));
    for (const std::string& key : keys) by_key[key].push_back(i);
  }
  CsvReader reader(*content);
  CsvRow row;
  std::map<std::string, int> column;
  if (!reader.Next(&row)) return absl::InvalidArgumentError("hardware_prices.csv: no header");
  for (size_t i = 0; i < row.cells.size(); ++i) {
    std::string header = row.cells[i];
    if (absl::StartsWith(header, "\xEF\xBB\xBF")) header = header.substr(3);
    column[header] = static_cast<int>(i);
  }
  for (const char* needed : {"Price source", "Price date", "Hardware model", "Vendor",
                             "Price per chip-hour (on-demand)", "Price (hardware purchase)"}) {
    if (!column.count(needed)) {
      return absl::InvalidArgumentError(absl::StrCat("hardware_prices.csv: no column ", needed));
    }
  }
  std::map<size_t, std::vector<common::v1::Price>> cloud, purchase;
  int matched = 0, unmatched = 0;
  while (reader.Next(&row)) {
    auto cell = [&](const char* name) -> std::string {
      const int i = column[name];
      return i < static_cast<int>(row.cells.size()) ? row.cells[i] : std::string();
    };
    auto it = by_key.find(LookupKey(cell("Hardware model")));
    if (it == by_key.end() || it->second.size() != 1) {
      ++unmatched;
      continue;
    }
    size_t index = it->second.front();
    // Epoch's model names omit the memory size that its descriptions give
    // ("NVIDIA A100 PCIe" rows describe 40 GB and 80 GB cards): an observation
    // of another size goes to the record of that size ("<model> <N>GB"), or
    // to none, never to a record of a size it does not describe.
    if (column.count("Cloud GPU description")) {
      const int gb = DescribedMemoryGb(cell("Cloud GPU description"));
      const double record_gib = (*hardware)[index].memory_bytes() / (1024.0 * 1024 * 1024);
      if (gb > 0 && std::lround(record_gib) != gb) {
        auto sized = by_key.find(LookupKey(absl::StrCat(cell("Hardware model"), gb, "GB")));
        if (sized == by_key.end() || sized->second.size() != 1) {
          ++unmatched;
          continue;
        }
        index = sized->second.front();
      }
    }
    ++matched;
    std::optional<google::type::Date> date = ParseDate(cell("Price date"));
    if (!date.has_value()) continue;
    auto make = [&](double usd, std::string vendor) {
      common::v1::Price price;
      price.set_usd(usd);
      *price.mutable_date() = *date;
      price.set_source(kPricesSource);
      price.set_url(cell("Price source"));
      price.set_vendor(std::move(vendor));
      return price;
    };
    if (auto usd = ParseUsd(cell("Price per chip-hour (on-demand)")); usd.has_value()) {
      cloud[index].push_back(make(*usd, cell("Vendor")));
    }
    if (auto usd = ParseUsd(cell("Price (hardware purchase)")); usd.has_value()) {
      purchase[index].push_back(make(*usd, cell("Vendor")));
    }
  }
  if (!reader.status().ok()) return reader.status();
  int filled = 0;
  for (auto& [index, observations] : cloud) {
    Hardware& h = (*hardware)[index];
    std::optional<common::v1::Price> price = Pick(observations);
    if (h.has_cloud_on_demand_price() || !price.has_value()) continue;
    *h.mutable_cloud_on_demand_price() = *price;
    if (!h.has_cloud_price_usd_per_chip_hour()) h.set_cloud_price_usd_per_chip_hour(price->usd());
    ++filled;
  }
  for (auto& [index, observations] : purchase) {
    Hardware& h = (*hardware)[index];
    std::optional<common::v1::Price> price = Pick(observations);
    if (h.has_purchase_price() || !price.has_value()) continue;
    *h.mutable_purchase_price() = *price;
    ++filled;
  }
  Report("hardware_prices.csv: %d rows matched a record, %d did not; %d prices set\n", matched,
         unmatched, filled);
  return absl::OkStatus();
}

// --- Versions: which dataset last changed each record (Provenance.shipped) ---

// The previous file's record of each name, and the newest version in it.
struct PreviousRecords {
  std::map<std::string, Model> models;
  std::map<std::string, Hardware> hardware;
  int version = 0;
};

absl::StatusOr<PreviousRecords> ReadPrevious(const std::string& json) {
  PreviousRecords previous;
  if (json.empty()) return previous;
  absl::StatusOr<v1::Dataset> dataset = ParseDatasetJson(json);
  if (!dataset.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the previous dataset: ", dataset.status().message()));
  }
  for (const Model& model : dataset->models()) {
    previous.version = std::max(previous.version, model.provenance().shipped().version());
    previous.models[model.name()] = model;
  }
  for (const Hardware& hardware : dataset->hardware()) {
    previous.version = std::max(previous.version, hardware.provenance().shipped().version());
    previous.hardware[hardware.name()] = hardware;
  }
  return previous;
}

// The previous file's ShippedRecord of `record` when its content is the
// same (and it had one), else nullptr.
template <typename Record>
const common::v1::ShippedRecord* Unchanged(const Record& record,
                                           const std::map<std::string, Record>& previous) {
  auto found = previous.find(record.name());
  if (found == previous.end() || !found->second.provenance().has_shipped()) return nullptr;
  Record before = found->second;
  before.mutable_provenance()->clear_shipped();
  if (!google::protobuf::util::MessageDifferencer::Equals(before, record)) return nullptr;
  return &found->second.provenance().shipped();
}

// Counts the records that differ from the previous file's (changed or new).
template <typename Record>
int CountChanged(const std::vector<Record>& records,
                 const std::map<std::string, Record>& previous) {
  int changed = 0;
  for (const Record& record : records) changed += Unchanged(record, previous) == nullptr ? 1 : 0;
  return changed;
}

template <typename Record>
void StampRecords(int version, const std::map<std::string, Record>& previous,
                  std::vector<Record>* records) {
  for (Record& record : *records) {
    const common::v1::ShippedRecord* kept = Unchanged(record, previous);
    common::v1::ShippedRecord stamp;
    if (kept != nullptr) {
      stamp = *kept;
    } else {
      stamp.set_version(version);
      auto found = previous.find(record.name());
      const bool shipped_before =
          found != previous.end() && found->second.provenance().shipped().added_in_version() > 0;
      stamp.set_added_in_version(
          shipped_before ? found->second.provenance().shipped().added_in_version() : version);
    }
    *record.mutable_provenance()->mutable_shipped() = stamp;
  }
}

// Gives every record its ShippedRecord: an unchanged record keeps the
// previous file's; a changed or new one gets the next version (the
// previous file's newest plus one), so a dataset that changes any record
// has a higher version than the one before it, and regenerating from the
// same inputs changes nothing. Records the previous file had and this one
// lacks also raise the version.
absl::Status StampVersions(const std::string& previous_json, std::vector<Model>* models,
                           std::vector<Hardware>* hardware) {
  absl::StatusOr<PreviousRecords> previous = ReadPrevious(previous_json);
  if (!previous.ok()) return previous.status();
  const int changed =
      CountChanged(*models, previous->models) + CountChanged(*hardware, previous->hardware);
  const size_t kept = models->size() + hardware->size() - static_cast<size_t>(changed);
  const bool removed = kept < previous->models.size() + previous->hardware.size();
  const int version = changed > 0 || removed ? previous->version + 1 : previous->version;
  StampRecords(version, previous->models, models);
  StampRecords(version, previous->hardware, hardware);
  Report("dataset version %d (the previous file's: %d); %d records changed or added\n", version,
         previous->version, changed);
  return absl::OkStatus();
}

// --- Output: one record per line, so a regenerated file diffs by record ---

// Maps (other_source_columns) in key order, so that a regenerated file is
// byte-identical: deterministic binary serialization sorts map entries, and
// the JSON is printed from those bytes.
absl::StatusOr<std::string> ToJsonLine(const Message& record) {
  static google::protobuf::util::TypeResolver* resolver =
      google::protobuf::util::NewTypeResolverForDescriptorPool(
          "type.googleapis.com", google::protobuf::DescriptorPool::generated_pool());
  const std::string binary = DeterministicBytes(record);
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  auto status = google::protobuf::util::BinaryToJsonString(
      resolver, "type.googleapis.com/" + record.GetDescriptor()->full_name(), binary, &json,
      options);
  if (!status.ok()) return absl::InternalError(std::string(status.message()));
  return json;
}

template <typename Record>
absl::Status AppendRecords(const std::vector<Record>& records, const char* key, bool last,
                           std::string* out) {
  absl::StrAppend(out, " \"", key, "\": [\n");
  for (size_t i = 0; i < records.size(); ++i) {
    absl::StatusOr<std::string> line = ToJsonLine(records[i]);
    if (!line.ok()) return line.status();
    absl::StrAppend(out, "  ", *line, i + 1 < records.size() ? ",\n" : "\n");
  }
  absl::StrAppend(out, " ]", last ? "\n" : ",\n");
  return absl::OkStatus();
}

// Epoch's other model tables are views of the same database, each read on
// its own day: a model one of them holds and all_ai_models.csv does not
// (one added after it, as MiMo-V2-Flash and GLM-5 in notable and
// large-scale, or one it no longer lists) is shipped from the first of them
// that has it, free text dropped as from the others. A model
// all_ai_models.csv holds keeps its row from there alone.
constexpr const char* kEpochModelViews[] = {"notable_ai_models.csv", "large_scale_ai_models.csv",
                                            "frontier_ai_models.csv"};

absl::Status ImportModelsMissingFromAll(
    const std::string& shared, const std::set<std::string>& all_names,
    const std::map<std::string, std::string>& curated_model_names, Catalog* catalog) {
  std::set<std::string> shipped;  // lookup keys
  for (const std::string& name : all_names) shipped.insert(LookupKey(name));
  for (const char* view : kEpochModelViews) {
    absl::StatusOr<ParsedFile> file = ParseEpoch(absl::StrCat(shared, "/epoch/", view));
    if (!file.ok()) return file.status();
    std::vector<ParsedRecord<Model>> missing;
    for (auto& row : file->models) {
      const std::string key = LookupKey(row.record.display_name());
      if (!shipped.insert(key).second) continue;
      StripFreeColumns(&row.record);
      // A curated model spelled differently is the same model.
      if (auto it = curated_model_names.find(key); it != curated_model_names.end()) {
        row.record.set_display_name(it->second);
      }
      missing.push_back(std::move(row));
    }
    file->models = std::move(missing);
    file->hardware.clear();
    Report("%s: %zu models all_ai_models.csv lacks\n", view, file->models.size());
    if (auto s = Import(catalog, *std::move(file), view); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<BuildResult> Run(const BuildOptions& build) {
  const std::string& shared = build.shared_data_dir;
  const std::string& curated_dir = build.curated_dir;
  v1::Dataset curated;
  for (const char* file : {"models.json", "hardware.json"}) {
    absl::StatusOr<std::string> json = ReadFile(absl::StrCat(curated_dir, "/", file));
    if (!json.ok()) return json.status();
    absl::StatusOr<v1::Dataset> part = ParseDatasetJson(*json);
    if (!part.ok())
      return absl::InvalidArgumentError(absl::StrCat(file, ": ", part.status().message()));
    curated.MergeFrom(*part);
  }
  std::map<std::string, Model> curated_models;
  std::map<std::string, Hardware> curated_hardware;
  std::map<std::string, std::string> curated_model_names;  // lookup key -> display name
  for (const Model& m : curated.models()) {
    curated_models[m.name()] = m;
    curated_model_names[LookupKey(m.display_name())] = m.display_name();
  }
  for (const Hardware& h : curated.hardware()) curated_hardware[h.name()] = h;

  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(":memory:");
  if (!store.ok()) return store.status();
  Catalog catalog(*std::move(store));
  if (auto created = catalog.CreateAll(curated); !created.ok()) return created.status();

  // Hardware first, so models' training hardware links to it.
  absl::StatusOr<ParsedFile> hardware_file = ParseEpoch(shared + "/epoch/ml_hardware.csv");
  if (!hardware_file.ok()) return hardware_file.status();
  // The importer gives each curated record to the row with its exact name;
  // a row naming it by one of its aliases (Epoch's generic "NVIDIA V100"
  // beside "NVIDIA Tesla V100 SXM2 32 GB") would become a second record. It
  // is the same hardware: it only fills gaps of the curated record.
  std::map<std::string, std::string> curated_hardware_keys;  // lookup key -> resource name
  std::set<std::string> display_keys;
  for (const Hardware& h : curated.hardware()) {
    display_keys.insert(LookupKey(h.display_name()));
    curated_hardware_keys[LookupKey(h.display_name())] = h.name();
    for (const std::string& alias : h.aliases()) curated_hardware_keys[LookupKey(alias)] = h.name();
  }
  std::map<std::string, std::vector<Hardware>> alias_rows;  // resource name -> rows
  std::vector<ParsedRecord<Hardware>> kept;
  for (auto& row : hardware_file->hardware) {
    StripFreeColumns(&row.record);
    const std::string key = LookupKey(row.record.display_name());
    auto it = curated_hardware_keys.find(key);
    if (it != curated_hardware_keys.end() && !display_keys.count(key)) {
      alias_rows[it->second].push_back(row.record);
    } else {
      kept.push_back(std::move(row));
    }
  }
  hardware_file->hardware = std::move(kept);
  // Which fields of which Epoch rows the importer converted (decimal GB,
  // GeForce FP16-accumulate peaks), by display name.
  std::map<std::string, std::set<std::string>> converted;
  for (const v1::ImportConversion& conversion : hardware_file->conversions) {
    converted[conversion.display_name()].insert(conversion.field());
  }
  Report("ml_hardware.csv: %zu figures converted to the record's conventions\n",
         hardware_file->conversions.size());
  Report("ml_hardware.csv: %zu curated records named by an alias in other rows\n",
         alias_rows.size());
  if (auto s = Import(&catalog, *std::move(hardware_file), "ml_hardware.csv"); !s.ok()) return s;

  absl::StatusOr<ParsedFile> models_file = ParseEpoch(shared + "/epoch/all_ai_models.csv");
  if (!models_file.ok()) return models_file.status();
  int renamed = 0;
  // Names Epoch spells exactly: a row is another spelling of a curated model
  // only when no row carries that model's own name ("OPT-1.3B" and "OPT-13B"
  // share a lookup key and are two models).
  std::set<std::string> epoch_names;
  for (const auto& row : models_file->models) epoch_names.insert(row.record.display_name());
  for (auto& row : models_file->models) {
    StripFreeColumns(&row.record);
    // A curated model spelled differently (case, punctuation) is the same model.
    auto it = curated_model_names.find(LookupKey(row.record.display_name()));
    if (it != curated_model_names.end() && it->second != row.record.display_name() &&
        !epoch_names.count(it->second)) {
      row.record.set_display_name(it->second);
      ++renamed;
    }
  }
  Report("all_ai_models.csv: %d rows matched a curated model by a looser spelling\n", renamed);
  if (auto s = Import(&catalog, *std::move(models_file), "all_ai_models.csv"); !s.ok()) return s;
  if (auto s = ImportModelsMissingFromAll(shared, epoch_names, curated_model_names, &catalog);
      !s.ok()) {
    return s;
  }

  absl::StatusOr<std::vector<Model>> models = catalog.ListAll<Model>("");
  if (!models.ok()) return models.status();
  absl::StatusOr<std::vector<Hardware>> hardware = catalog.ListAll<Hardware>("");
  if (!hardware.ok()) return hardware.status();

  // Curated records first, in their file's order, then Epoch's by id.
  std::vector<Model> out_models;
  std::map<std::string, Model> merged_models;
  for (Model& m : *models) {
    m.clear_etag();
    m.clear_revision();
    auto it = curated_models.find(m.name());
    if (it == curated_models.end()) {
      out_models.push_back(WithEpochProvenance(std::move(m)));
      continue;
    }
    Model merged = it->second;
    std::vector<std::string> filled;
    FillMissing(m, &merged, "", &filled);
    CreditEpochFill(&merged, filled, kModelsSource, kModelsUrl);
    merged_models[merged.name()] = merged;
  }
  std::vector<Model> ordered_models;
  for (const Model& m : curated.models()) ordered_models.push_back(merged_models[m.name()]);
  ordered_models.insert(ordered_models.end(), out_models.begin(), out_models.end());

  std::vector<Hardware> epoch_hardware;
  std::map<std::string, Hardware> merged_hardware;
  for (Hardware& h : *hardware) {
    h.clear_etag();
    h.clear_revision();
    auto it = curated_hardware.find(h.name());
    if (it == curated_hardware.end()) {
      const std::set<std::string> fields = converted[h.display_name()];
      epoch_hardware.push_back(WithEpochProvenance(std::move(h), fields));
      continue;
    }
    Hardware merged = it->second;
    std::vector<std::string> filled;
    FillMissing(h, &merged, "", &filled);
    for (const Hardware& row : alias_rows[merged.name()]) FillMissing(row, &merged, "", &filled);
    CreditEpochFill(&merged, filled, kHardwareSource, kHardwareUrl);
    merged_hardware[merged.name()] = merged;
  }
  std::vector<Hardware> ordered_hardware;
  for (const Hardware& h : curated.hardware())
    ordered_hardware.push_back(merged_hardware[h.name()]);
  ordered_hardware.insert(ordered_hardware.end(), epoch_hardware.begin(), epoch_hardware.end());
  if (auto s = AddPrices(shared + "/epoch/hardware_prices.csv", &ordered_hardware); !s.ok()) {
    return s;
  }

  // Every record must pass the catalog's validation, as the catalog will check at start.
  FieldViolations violations;
  for (size_t i = 0; i < ordered_models.size(); ++i) {
    ValidateModel(ordered_models[i], absl::StrCat("models[", i, "]"), &violations);
  }
  for (size_t i = 0; i < ordered_hardware.size(); ++i) {
    ValidateHardware(ordered_hardware[i], absl::StrCat("hardware[", i, "]"), &violations);
  }
  if (!violations.empty()) return violations.ToStatus();
  if (auto s = StampVersions(build.previous_dataset_json, &ordered_models, &ordered_hardware);
      !s.ok()) {
    return s;
  }

  std::string out = "{\n";
  if (auto s = AppendRecords(ordered_models, "models", false, &out); !s.ok()) return s;
  if (auto s = AppendRecords(ordered_hardware, "hardware", true, &out); !s.ok()) return s;
  absl::StrAppend(&out, "}\n");
  Report("%zu models (%zu curated), %zu hardware (%zu curated), %zu bytes\n", ordered_models.size(),
         curated_models.size(), ordered_hardware.size(), curated_hardware.size(), out.size());
  BuildResult result;
  result.json = std::move(out);
  result.models = static_cast<int>(ordered_models.size());
  result.hardware = static_cast<int>(ordered_hardware.size());
  return result;
}

}  // namespace

int DescribedMemoryGb(absl::string_view description) {
  for (size_t i = 0; i < description.size(); ++i) {
    if (!absl::ascii_isdigit(description[i]) ||
        (i > 0 && absl::ascii_isdigit(description[i - 1]))) {
      continue;
    }
    size_t end = i;
    while (end < description.size() && absl::ascii_isdigit(description[end])) ++end;
    size_t unit = end;
    while (unit < description.size() && description[unit] == ' ') ++unit;
    if (!absl::StartsWithIgnoreCase(description.substr(unit), "GB")) continue;
    absl::string_view after = absl::StripLeadingAsciiWhitespace(description.substr(unit + 2));
    if (absl::StartsWithIgnoreCase(after, "RAM") || absl::StartsWithIgnoreCase(after, "NVMe")) {
      continue;
    }
    int gb = 0;
    if (absl::SimpleAtoi(description.substr(i, end - i), &gb)) return gb;
  }
  return 0;
}

absl::StatusOr<BuildResult> BuildShippedDataset(const BuildOptions& options) {
  std::string report;
  report_sink = &report;
  absl::StatusOr<BuildResult> result = Run(options);
  report_sink = nullptr;
  if (result.ok()) result->report = std::move(report);
  return result;
}

}  // namespace modelatlas::catalog
