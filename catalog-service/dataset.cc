#include "catalog-service/dataset.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "catalog-service/catalog.h"
#include "common/records/deterministic.h"
#include "google/protobuf/arena.h"
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

namespace {

// The binary form is the JSON converted at build time: the same records.
absl::Status ParseShippedDataset(v1::Dataset* dataset) {
  const absl::string_view binary = ShippedDatasetBinary();
  if (!dataset->ParseFromArray(binary.data(), static_cast<int>(binary.size()))) {
    return absl::DataLossError("the embedded dataset (binary form) does not parse");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::Dataset> ShippedDataset() {
  // Parsed once per process; callers get their own copy.
  static std::once_flag once;
  static absl::StatusOr<v1::Dataset>* parsed = nullptr;
  std::call_once(once, [] {
    v1::Dataset dataset;
    absl::Status status = ParseShippedDataset(&dataset);
    parsed = status.ok() ? new absl::StatusOr<v1::Dataset>(std::move(dataset))
                         : new absl::StatusOr<v1::Dataset>(std::move(status));
  });
  return *parsed;
}

namespace {

using common::v1::Hardware;
using common::v1::Model;

template <typename Record>
std::string FingerprintOf(Record record) {
  record.clear_name();
  record.clear_etag();
  record.clear_revision();
  if (record.has_provenance()) record.mutable_provenance()->clear_shipped();
  const std::string bytes = DeterministicBytes(record);
  // FNV-1a, 64 bits (offset basis and prime from the FNV reference).
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char byte : bytes) {
    hash ^= static_cast<unsigned char>(byte);
    hash *= 0x100000001b3ULL;
  }
  return absl::StrFormat("%016x", hash);
}

template <typename Record>
Record Stamped(Record record) {
  const std::string fingerprint = FingerprintOf(record);
  record.mutable_provenance()->mutable_shipped()->set_loaded_fingerprint(fingerprint);
  return record;
}

void StampAll(v1::Dataset* dataset) {
  for (Model& model : *dataset->mutable_models()) model = Stamped(std::move(model));
  for (Hardware& hardware : *dataset->mutable_hardware()) hardware = Stamped(std::move(hardware));
}

// A record loaded by a binary from before versions that nothing has
// written since: the load is a new catalog's first write (revision 1), and
// its source is still the shipped one.
template <typename Record>
bool UnchangedSinceAnUnversionedLoad(const Record& stored, const Record& shipped) {
  return !stored.provenance().has_shipped() && stored.revision() == 1 &&
         stored.provenance().source() == shipped.provenance().source();
}

// Decides for one shipped record the catalog holds.
template <typename Record>
void PlanOne(const Record& record, const Record& stored, ShippedDatasetRefresh* report,
             google::protobuf::RepeatedPtrField<Record>* writes) {
  constexpr size_t kNamesKept = 10;
  const common::v1::ShippedRecord& version = record.provenance().shipped();
  const bool versioned = stored.provenance().has_shipped();
  const common::v1::ShippedRecord& held = stored.provenance().shipped();
  if (versioned) {
    report->holds_shipped = true;
    report->catalog_version = std::max(report->catalog_version, held.version());
    if (held.version() >= version.version()) {
      ++report->current;
      if (held.version() > version.version()) ++report->newer;
      return;
    }
  }
  const bool unchanged = versioned ? FingerprintOf(stored) == held.loaded_fingerprint()
                                   : UnchangedSinceAnUnversionedLoad(stored, record);
  if (!versioned && unchanged) report->holds_shipped = true;
  if (!unchanged) {
    ++report->kept_changed;
    if (report->kept_changed_names.size() < kNamesKept) {
      report->kept_changed_names.push_back(stored.name());
    }
    return;
  }
  Record replacement = Stamped(record);
  replacement.set_revision(stored.revision());
  *writes->Add() = std::move(replacement);
  ++report->refreshed;
}

// Reads the catalog's records of the shipped ones, a batch at a time (one
// store call each; a start holds one batch, not thousands), and plans:
// replacements now, creations once the catalog's version is known
// (`absent`).
template <typename Record>
absl::Status Plan(Catalog& catalog, const google::protobuf::RepeatedPtrField<Record>& shipped,
                  ShippedDatasetRefresh* report, google::protobuf::RepeatedPtrField<Record>* writes,
                  std::vector<const Record*>* absent) {
  constexpr int kBatch = 1000;
  for (int begin = 0; begin < shipped.size(); begin += kBatch) {
    const int end = std::min(shipped.size(), begin + kBatch);
    std::vector<std::string> ids;
    for (int i = begin; i < end; ++i) {
      // "models/{id}", as the generator and the catalog's validation made it.
      const absl::string_view name = shipped[i].name();
      ids.emplace_back(name.substr(name.find('/') + 1));
    }
    absl::StatusOr<std::vector<Record>> found = catalog.GetExisting<Record>(ids);
    if (!found.ok()) return found.status();
    absl::flat_hash_map<std::string, const Record*> stored;
    for (const Record& record : *found) stored[record.name()] = &record;
    for (int i = begin; i < end; ++i) {
      auto held = stored.find(shipped[i].name());
      if (held == stored.end()) {
        absent->push_back(&shipped[i]);
      } else {
        PlanOne(shipped[i], *held->second, report, writes);
      }
    }
  }
  return absl::OkStatus();
}

// The shipped records the catalog lacks: created when the dataset added
// them after the catalog's version, else deleted there and left so.
template <typename Record>
void PlanAbsent(const std::vector<const Record*>& absent, ShippedDatasetRefresh* report,
                google::protobuf::RepeatedPtrField<Record>* writes) {
  for (const Record* record : absent) {
    if (record->provenance().shipped().added_in_version() > report->catalog_version) {
      *writes->Add() = Stamped(*record);
      ++report->added;
    } else {
      ++report->not_recreated;
    }
  }
}

// The dataset's version: its newest record's.
int32_t VersionOf(const v1::Dataset& dataset) {
  int32_t version = 0;
  for (const Model& model : dataset.models()) {
    version = std::max(version, model.provenance().shipped().version());
  }
  for (const Hardware& hardware : dataset.hardware()) {
    version = std::max(version, hardware.provenance().shipped().version());
  }
  return version;
}

absl::StatusOr<ShippedDatasetRefresh> RefreshOnce(Catalog& catalog, const v1::Dataset& dataset) {
  ShippedDatasetRefresh report{.binary_version = VersionOf(dataset)};
  v1::Dataset writes;
  std::vector<const Model*> absent_models;
  std::vector<const Hardware*> absent_hardware;
  if (absl::Status planned =
          Plan(catalog, dataset.models(), &report, writes.mutable_models(), &absent_models);
      !planned.ok()) {
    return planned;
  }
  if (absl::Status planned =
          Plan(catalog, dataset.hardware(), &report, writes.mutable_hardware(), &absent_hardware);
      !planned.ok()) {
    return planned;
  }
  if (!report.holds_shipped) return ShippedDatasetRefresh{.binary_version = report.binary_version};
  PlanAbsent(absent_models, &report, writes.mutable_models());
  PlanAbsent(absent_hardware, &report, writes.mutable_hardware());
  if (writes.models_size() + writes.hardware_size() > 0) {
    absl::StatusOr<int64_t> written = catalog.ReplaceOrCreateAll(writes);
    if (!written.ok()) return written.status();
  }
  return report;
}

}  // namespace

std::string ContentFingerprint(const Model& model) { return FingerprintOf(model); }
std::string ContentFingerprint(const Hardware& hardware) { return FingerprintOf(hardware); }

absl::StatusOr<ShippedDatasetRefresh> RefreshShippedRecords(Catalog& catalog,
                                                            const v1::Dataset& dataset) {
  // Another writer changing a planned record between the reads and the
  // write (a replica refreshing too, a user's update) fails the write
  // whole; the next plan sees its change.
  constexpr int kAttempts = 3;
  absl::StatusOr<ShippedDatasetRefresh> refreshed;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    refreshed = RefreshOnce(catalog, dataset);
    const absl::Status& status = refreshed.status();
    if (!absl::IsAborted(status) && !absl::IsAlreadyExists(status) && !absl::IsNotFound(status)) {
      break;
    }
  }
  if (!refreshed.ok()) return refreshed;
  // After the writes: a start that fails between them walks again, and
  // finds the records current.
  if (absl::Status raised = catalog.RaiseShippedDatasetVersion(refreshed->binary_version);
      !raised.ok()) {
    return raised;
  }
  return refreshed;
}

absl::StatusOr<ShippedDatasetRefresh> RefreshShippedRecordsOnStart(Catalog& catalog,
                                                                   const v1::Dataset& dataset) {
  const int32_t binary_version = VersionOf(dataset);
  absl::StatusOr<int32_t> catalog_version = catalog.ShippedDatasetVersion();
  if (!catalog_version.ok()) return catalog_version.status();
  if (binary_version > 0 && *catalog_version >= binary_version) {
    return ShippedDatasetRefresh{.already_current = true,
                                 .catalog_version = *catalog_version,
                                 .binary_version = binary_version};
  }
  return RefreshShippedRecords(catalog, dataset);
}

absl::StatusOr<ShippedDatasetRefresh> RefreshShippedRecordsOnStart(Catalog& catalog) {
  // Parsed for this start only, on an arena (one free at the end): the
  // catalog does not keep the dataset.
  google::protobuf::Arena arena;
  auto* dataset = google::protobuf::Arena::CreateMessage<v1::Dataset>(&arena);
  if (absl::Status parsed = ParseShippedDataset(dataset); !parsed.ok()) return parsed;
  return RefreshShippedRecordsOnStart(catalog, *dataset);
}

absl::StatusOr<ShippedDatasetLoad> LoadShippedDatasetIfEmpty(Catalog& catalog) {
  absl::StatusOr<v1::CatalogInfo> info = catalog.Info();
  if (!info.ok()) return info.status();
  if (info->model_count() + info->hardware_count() > 0) return ShippedDatasetLoad{};
  absl::StatusOr<v1::Dataset> dataset = ShippedDataset();
  if (!dataset.ok()) return dataset.status();
  return LoadShippedDatasetIfEmpty(catalog, *std::move(dataset));
}

absl::StatusOr<ShippedDatasetLoad> LoadShippedDatasetIfEmpty(Catalog& catalog,
                                                             v1::Dataset dataset) {
  StampAll(&dataset);
  absl::StatusOr<bool> loaded = catalog.LoadIfEmpty(dataset);
  if (!loaded.ok()) return loaded.status();
  if (*loaded) {
    if (absl::Status raised = catalog.RaiseShippedDatasetVersion(VersionOf(dataset));
        !raised.ok()) {
      return raised;
    }
  }
  return ShippedDatasetLoad{*loaded, dataset.models_size(), dataset.hardware_size()};
}

}  // namespace modelatlas::catalog
