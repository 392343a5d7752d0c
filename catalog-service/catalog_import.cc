// Catalog::Import: matching a file's rows to records, merging, linking
// training hardware, and writing in batches. See import/import_file.h for
// how files become rows.
#include <time.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <variant>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/types/span.h"
#include "catalog-service/catalog.h"
#include "catalog-service/import/columns.h"
#include "catalog-service/import/import_source.h"
#include "catalog-service/import/imported_names.h"
#include "catalog-service/import/write_spool.h"
#include "catalog-service/record_codec.h"
#include "catalog-service/validation.h"
#include "common/server/logging.h"
#include "common/status/errors.h"
#include "common/status/resource_names.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/field_mask_util.h"
#include "google/protobuf/util/message_differencer.h"

namespace modelatlas::catalog {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using internal::FromStored;
using internal::ToWrite;
using internal::Traits;

// Records written per transaction when the import is not atomic: large
// enough that commits (each an fsync, and the index pages it dirtied: rows
// land at random places of the order indexes) do not dominate, small enough
// that a conflict only sends a few records down the one-by-one path and that
// reads waiting on the store meanwhile wait for one batch. 500 before the
// order indexes (schema 3); at 2,000 an import of 100,000 rows took 5.6 s of
// catalog CPU instead of 7.6 s (docs/BENCHMARKS.md, a million models).
constexpr size_t kWriteBatch = 2000;
// The most changes and rejections a report lists (the rest are counted).
constexpr int kMaxReportedChanges = 1000;
constexpr int kMaxReportedRejections = 10000;
constexpr int kMaxReportedConflicts = 10000;
// With ImportOptions.full_report: every row, up to the most rows a file has.
constexpr int kMaxReportedRows = 1'000'000;

// Nested messages an import replaces whole rather than field by field.
bool ReplacedWhole(const Descriptor* type) {
  const std::string& name = type->full_name();
  return name == "google.type.Date" || name == "google.protobuf.Timestamp" ||
         name == "modelatlas.common.v1.Architecture" || name == "modelatlas.common.v1.Provenance";
}

// Paths of every field `message` sets, descending into nested messages
// that are merged field by field; maps are merged by the caller.
void SetFieldPaths(const Message& message, const std::string& prefix,
                   google::protobuf::FieldMask* mask) {
  std::vector<const FieldDescriptor*> fields;
  message.GetReflection()->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->is_map()) continue;
    const std::string path =
        prefix.empty() ? field->name() : absl::StrCat(prefix, ".", field->name());
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !field->is_repeated() &&
        !ReplacedWhole(field->message_type())) {
      SetFieldPaths(message.GetReflection()->GetMessage(message, field), path, mask);
    } else {
      mask->add_paths(path);
    }
  }
}

// Writes the fields of `mask` (fields `patch` sets) over `record`, keeping
// the others: an empty cell means "not known to this file", not "erase".
template <typename Record>
void Overlay(const Record& patch, const google::protobuf::FieldMask& mask, Record* record) {
  google::protobuf::util::FieldMaskUtil::MergeOptions options;
  options.set_replace_message_fields(true);
  options.set_replace_repeated_fields(true);
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(patch, mask, options, record);
  for (const auto& [column, cell] : patch.other_source_columns()) {
    (*record->mutable_other_source_columns())[column] = cell;
  }
}

// The value at a field path as text ("" when unset; repeated values joined
// with ", "), and whether it is set.
std::string FieldText(const Message& record, absl::string_view path, bool* set) {
  const Message* message = &record;
  const FieldDescriptor* field = nullptr;
  *set = false;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    if (field != nullptr) {
      if (field->is_repeated() || field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
          !message->GetReflection()->HasField(*message, field)) {
        return "";
      }
      message = &message->GetReflection()->GetMessage(*message, field);
    }
    field = message->GetDescriptor()->FindFieldByName(std::string(part));
    if (field == nullptr) return "";
  }
  if (field == nullptr) return "";
  const google::protobuf::Reflection* reflection = message->GetReflection();
  std::string text;
  if (field->is_repeated()) {
    std::vector<std::string> items;
    for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
      google::protobuf::TextFormat::PrintFieldValueToString(*message, field, i, &text);
      items.push_back(text);
    }
    *set = !items.empty();
    return absl::StrJoin(items, ", ");
  }
  if (!reflection->HasField(*message, field)) return "";
  *set = true;
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    return reflection->GetMessage(*message, field).ShortDebugString();
  }
  google::protobuf::TextFormat::PrintFieldValueToString(*message, field, -1, &text);
  return text;
}

// A source's family: the text before the first ", " ("Epoch AI, ml_hardware.csv"
// and "Epoch AI, Machine Learning Hardware (CC BY 4.0)" are both "Epoch AI":
// snapshots of one database refresh each other's values).
absl::string_view SourceFamily(absl::string_view source) {
  return source.substr(0, source.find(", "));
}

bool SameSource(absl::string_view a, absl::string_view b) {
  return !SourceFamily(a).empty() && SourceFamily(a) == SourceFamily(b);
}

// Whether ImportOptions.overwrite covers the field path.
bool Overwrites(const v1::ImportOptions& options, absl::string_view path) {
  for (const std::string& field : options.overwrite()) {
    if (field == "all" || field == path ||
        (absl::StartsWith(path, field) && path.size() > field.size() &&
         path[field.size()] == '.')) {
      return true;
    }
  }
  return false;
}

// Whether `path` names a field of `type` ("memory_bytes", "training_compute.flop").
bool IsFieldPath(const Descriptor* type, absl::string_view path) {
  const FieldDescriptor* field = nullptr;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    if (field != nullptr) {
      if (field->is_repeated() || field->message_type() == nullptr) return false;
      type = field->message_type();
    }
    field = type->FindFieldByName(std::string(part));
    if (field == nullptr) return false;
  }
  return field != nullptr;
}

// Top-level fields whose values differ.
std::vector<std::string> ChangedFields(const Message& before, const Message& after) {
  std::vector<std::string> changed;
  const Descriptor* descriptor = before.GetDescriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    google::protobuf::util::MessageDifferencer differencer;
    if (!differencer.CompareWithFields(before, after, {field}, {field})) {
      changed.push_back(field->name());
    }
  }
  return changed;
}

// FNV-1a: a hash that stays the same across builds and platforms, so ids
// derived from it are stable.
uint32_t StableHash(absl::string_view text) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : text) hash = (hash ^ c) * 16777619u;
  return hash;
}

// `base` with `suffix` appended, cut so the id stays within 63 characters.
std::string WithSuffix(std::string base, absl::string_view suffix) {
  base.resize(std::min(base.size(), 63 - suffix.size()));
  while (!base.empty() && base.back() == '-') base.pop_back();
  return absl::StrCat(base, suffix);
}

// The CSV column a field path came from, for rejections found by validation.
std::string ColumnOfField(absl::string_view path, v1::FileFormat format) {
  const std::vector<Column>* columns =
      format == v1::FILE_FORMAT_EPOCH_MODELS_CSV     ? &EpochModelColumns()
      : format == v1::FILE_FORMAT_EPOCH_HARDWARE_CSV ? &EpochHardwareColumns()
                                                     : nullptr;
  // A column the file has and the catalog has no field for: other_source_columns["Notes"].
  if (absl::ConsumePrefix(&path, "other_source_columns[\"") && absl::ConsumeSuffix(&path, "\"]")) {
    return std::string(path);
  }
  if (columns != nullptr) {
    for (const Column& column : *columns) {
      if (absl::StartsWith(path, column.field)) return std::string(column.header);
    }
  }
  return std::string(path);
}

// The hand-over between ImportFile's two stages: the planner pushes each
// planned chunk, the writer pops them in order. At most one chunk waits:
// the planner runs at most one chunk ahead of the write.
template <typename Chunk>
class HandOver {
 public:
  // Planner: hands `chunk` over once the previous one is taken; with
  // `until_written`, returns once the writer has written it. False when the
  // writer stopped.
  bool Push(Chunk chunk, bool until_written) {
    absl::MutexLock lock(&mutex_);
    const absl::Time start = absl::Now();
    mutex_.Await(absl::Condition(
        +[](HandOver* self) { return self->stopped_ || !self->waiting_.has_value(); }, this));
    planner_waited_ += absl::Now() - start;
    if (stopped_) return false;
    waiting_ = std::move(chunk);
    ++pushed_;
    if (until_written) {
      mutex_.Await(absl::Condition(
          +[](HandOver* self) { return self->stopped_ || self->written_ == self->pushed_; }, this));
    }
    return !stopped_;
  }
  // Planner: no more chunks; `status` is how the parse and plan ended.
  void Finish(absl::Status status) {
    absl::MutexLock lock(&mutex_);
    finished_ = true;
    status_ = std::move(status);
  }
  // Writer: the next chunk, once planned; false when the planner finished
  // and nothing waits.
  bool Pop(Chunk* chunk) {
    absl::MutexLock lock(&mutex_);
    const absl::Time start = absl::Now();
    mutex_.Await(absl::Condition(
        +[](HandOver* self) { return self->finished_ || self->waiting_.has_value(); }, this));
    writer_waited_ += absl::Now() - start;
    if (!waiting_.has_value()) return false;
    *chunk = *std::move(waiting_);
    waiting_.reset();
    return true;
  }
  // Writer: the chunk popped last is written.
  void Written() {
    absl::MutexLock lock(&mutex_);
    ++written_;
  }
  // Writer: it gave up; the planner's next Push returns false.
  void Stop() {
    absl::MutexLock lock(&mutex_);
    stopped_ = true;
    waiting_.reset();
  }
  bool Stopped() {
    absl::MutexLock lock(&mutex_);
    return stopped_;
  }
  // How the planner ended (after Pop returned false).
  absl::Status FinishStatus() {
    absl::MutexLock lock(&mutex_);
    return status_;
  }
  // How long each stage waited for the other (which of the two is the
  // import's pace: the log of a bulk import says).
  absl::Duration PlannerWaited() {
    absl::MutexLock lock(&mutex_);
    return planner_waited_;
  }
  absl::Duration WriterWaited() {
    absl::MutexLock lock(&mutex_);
    return writer_waited_;
  }

 private:
  absl::Mutex mutex_;
  std::optional<Chunk> waiting_ ABSL_GUARDED_BY(mutex_);
  int64_t pushed_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t written_ ABSL_GUARDED_BY(mutex_) = 0;
  bool finished_ ABSL_GUARDED_BY(mutex_) = false;
  bool stopped_ ABSL_GUARDED_BY(mutex_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mutex_);
  absl::Duration planner_waited_ ABSL_GUARDED_BY(mutex_);
  absl::Duration writer_waited_ ABSL_GUARDED_BY(mutex_);
};

// CPU time of the calling thread.
absl::Duration ThreadCpu() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return absl::DurationFromTimespec(now);
}

}  // namespace

// A row planned: what the report says of it, and what to write.
struct Catalog::ImportPlanned {
  int64_t row = 0;
  v1::ImportedRecord summary;
  // The write's operation and expected revision; its record (RecordWrite:
  // the serialized payload, lookup keys, order values) is made from
  // `record` by CommitImport, on ImportFile's write stage rather than its
  // planner (which sets the import's pace: docs/BENCHMARKS.md, s13-import).
  BatchWrite write;
  std::variant<std::monostate, Model, Hardware> record;
};

// Everything one import run keeps while it plans and writes.
struct Catalog::ImportRun {
  v1::FileFormat format;
  const v1::ImportOptions& options;
  const std::function<bool()>& abandoned;
  v1::ImportReport report;
  // The store reads of the batch of rows being planned, made in two calls.
  ImportLookups lookups;
  // Records written so far (an import that is not atomic writes each batch
  // as soon as it is planned).
  int64_t written = 0;
  // Whether each batch's store reads are made first in two store calls
  // (PrefetchImportLookups): on PostgreSQL (a round trip each otherwise),
  // and when ImportFile plans beside the writes (the planner then takes the
  // store's lock twice per chunk instead of three or four times per row,
  // each time waiting for the chunk being written).
  bool prefetch = false;
  // ImportFile: the models' derived rows (model_domains) are written after
  // the last chunk (FillDeferredRows), not row by row with each chunk.
  bool defer_derived_rows = false;
  // By kind: the ids taken by rows of this file, so two rows never share a
  // record, and the occurrences of each display name so far and the records
  // they became (a compact form: about 100 bytes per row, docs/IMPORT.md).
  ImportedNames names[2];
  // Training-hardware names already resolved: name -> `hardware/{id}` or "".
  absl::flat_hash_map<std::string, std::string> hardware_refs;
  std::map<std::string, int64_t> unresolved_hardware;
  // The first kMaxReportedConflicts conflicts, in the order found, and how
  // many more there were.
  std::vector<v1::ImportConflict> conflicts;
  int64_t conflicts_omitted = 0;
  // Rows rejected so far (a row may have several rejections).
  std::set<int64_t> rejected_rows;
  using Planned = ImportPlanned;
  std::vector<Planned> planned;
  // What writing and counting the planned rows adds to the report
  // (CommitImport, FoldPlanned), kept apart from what parsing and planning
  // add (`report`, `rejected_rows`) so that ImportFile can plan a chunk on
  // one thread while it writes the one before on another; FinishImport
  // merges the two. Only created/updated/unchanged, changes,
  // changes_omitted and rejections are set here.
  v1::ImportReport write_report;
  std::set<int64_t> write_rejected_rows;
  // An atomic ImportFile: the writes planned so far, on disk until the one
  // transaction that writes them all (CommitSpooledImport).
  std::unique_ptr<WriteSpool> spool;

  void Reject(int64_t row, absl::string_view column, absl::string_view reason,
              absl::string_view record) {
    v1::ImportRejection* rejection = report.add_rejections();
    rejection->set_row(row);
    rejection->set_column(std::string(column));
    rejection->set_reason(std::string(reason));
    rejection->set_record(std::string(record));
    rejected_rows.insert(row);
  }
};

// The fields of `mask` the import takes into `merged` (a copy of
// `existing`): every field the record does not have, or whose value came
// from the file's source; a different value from another source only when
// ImportOptions.overwrite covers it. Each difference with another source is
// a conflict in the report. Updates merged's provenance: field_sources for
// the fields taken from a source other than the record's, and the file's
// links.
template <typename Record>
google::protobuf::FieldMask Catalog::TakeFromImport(int64_t row, const Record& existing,
                                                    const Record& patch,
                                                    const common::v1::Provenance& imported,
                                                    const google::protobuf::FieldMask& mask,
                                                    Record* merged, ImportRun* run) {
  const std::string& record_source = existing.provenance().source();
  const auto& field_sources = existing.provenance().field_sources();
  common::v1::Provenance* provenance = merged->mutable_provenance();
  bool took_other_source = false;
  auto attribute = [&](const std::string& path) {
    if (SameSource(imported.source(), record_source)) {
      provenance->mutable_field_sources()->erase(path);
    } else {
      (*provenance->mutable_field_sources())[path] = imported.source();
      took_other_source = true;
    }
  };
  google::protobuf::FieldMask taken;
  for (const std::string& path : mask.paths()) {
    bool has_existing = false;
    bool has_imported = false;
    const std::string before = FieldText(existing, path, &has_existing);
    const std::string after = FieldText(patch, path, &has_imported);
    if (path == "display_name" || (has_existing && before == after)) {
      taken.add_paths(path);
      continue;
    }
    auto known = field_sources.find(path);
    const std::string& source = known != field_sources.end() ? known->second : record_source;
    if (!has_existing || SameSource(source, imported.source())) {
      taken.add_paths(path);
      attribute(path);
      continue;
    }
    v1::ImportConflict conflict;
    conflict.set_row(row);
    conflict.set_name(existing.name());
    conflict.set_display_name(existing.display_name());
    conflict.set_field(path);
    conflict.set_existing_value(before);
    conflict.set_existing_source(source.empty() ? "no source recorded" : source);
    conflict.set_imported_value(after);
    conflict.set_imported_source(imported.source());
    conflict.set_overwritten(Overwrites(run->options, path));
    if (conflict.overwritten()) {
      taken.add_paths(path);
      attribute(path);
    }
    // Only the ones the report lists are kept (in the order found): the
    // others are counted, so a file of conflicting rows takes no memory per row.
    if (run->conflicts.size() < kMaxReportedConflicts) {
      run->conflicts.push_back(std::move(conflict));
    } else {
      ++run->conflicts_omitted;
    }
  }
  if (took_other_source) {
    for (const std::string& url : imported.urls()) {
      const auto& urls = provenance->urls();
      if (std::find(urls.begin(), urls.end(), url) == urls.end()) provenance->add_urls(url);
    }
  }
  return taken;
}

std::string Catalog::HardwareRef(absl::string_view hardware_name, ImportRun* run) {
  auto cached = run->hardware_refs.find(hardware_name);
  if (cached != run->hardware_refs.end()) return cached->second;
  std::string ref;
  absl::StatusOr<std::vector<std::string>> ids = FindIdsByName<Hardware>(hardware_name);
  if (ids.ok() && !ids->empty()) {
    // Several records can share a key ignoring punctuation; the one named
    // exactly so wins, else the first.
    ref = ResourceName(kHardwareCollection, ids->front());
    for (const std::string& id : *ids) {
      absl::StatusOr<Hardware> hardware = Get<Hardware>(ResourceName(kHardwareCollection, id));
      if (!hardware.ok()) continue;
      const auto& aliases = hardware->aliases();
      if (hardware->display_name() == hardware_name ||
          std::find(aliases.begin(), aliases.end(), hardware_name) != aliases.end()) {
        ref = hardware->name();
        break;
      }
    }
  }
  run->hardware_refs[hardware_name] = ref;
  return ref;
}

void Catalog::LinkTrainingHardware(Model* model, bool count, ImportRun* run) {
  model->clear_training_hardware_refs();
  for (const std::string& hardware_name : model->training_hardware()) {
    const std::string ref = HardwareRef(hardware_name, run);
    model->add_training_hardware_refs(ref);
    if (!count) continue;
    v1::HardwareLinking* linking = run->report.mutable_hardware_linking();
    linking->set_mentions(linking->mentions() + 1);
    if (ref.empty()) {
      ++run->unresolved_hardware[hardware_name];
    } else {
      linking->set_resolved(linking->resolved() + 1);
    }
  }
}

template <typename Record>
absl::StatusOr<std::optional<Record>> Catalog::FindImportTarget(const Record& patch, int occurrence,
                                                                ImportRun* run,
                                                                std::string* new_id) {
  constexpr RecordKind kind = Traits<Record>::kKind;
  constexpr absl::string_view collection = Traits<Record>::kCollection;
  const ImportedNames& claimed = run->names[static_cast<int>(kind)];
  auto load = [&](const std::string& id) -> absl::StatusOr<std::optional<Record>> {
    absl::StatusOr<StoredRecord> stored = GetThrough(&run->lookups, kind, id);
    if (absl::IsNotFound(stored.status())) return std::nullopt;
    if (!stored.ok()) return stored.status();
    absl::StatusOr<Record> record = FromStored<Record>(*stored);
    if (!record.ok()) return record.status();
    return std::optional<Record>(*std::move(record));
  };
  // A file that names its resources (the catalog's own export) is matched by name.
  if (!patch.name().empty()) {
    std::optional<std::string> id = ResourceIdFromName(patch.name(), collection);
    if (!id.has_value()) {
      return InvalidFieldError("name", absl::StrCat("\"", patch.name(), "\" is not a valid ",
                                                    collection, " resource name"));
    }
    // Two rows naming one record: the second is refused here, as it was
    // when the whole file was planned before any write (its write then
    // failed against the first's), whichever batches the two rows fall in.
    if (claimed.Claimed(*id)) {
      return absl::AlreadyExistsError(
          absl::StrCat("an earlier row of this file already imports ", patch.name()));
    }
    *new_id = *id;
    return load(*id);
  }
  // Ids derived from the name: the slug, numbered for the second and later
  // rows of one name, and with a hash of the exact name when another name
  // has the same slug ("Nova-2" and "Nova 2"). Re-importing finds the same ids.
  const std::string& name = patch.display_name();
  const std::string base = ResourceIdFromDisplayName(name);
  const std::string first =
      occurrence == 1 ? base : WithSuffix(base, absl::StrCat("-", occurrence));
  const std::string second = WithSuffix(first, absl::StrFormat("-%08x", StableHash(name)));
  for (const std::string& id : {first, second}) {
    if (claimed.Claimed(id)) continue;
    absl::StatusOr<std::optional<Record>> existing = load(id);
    if (!existing.ok()) return existing.status();
    if (existing->has_value() && (*existing)->display_name() == name) return existing;
  }
  {
    // Records created otherwise (the shipped dataset, by hand) are found by
    // name: the first not yet claimed by an earlier row with exactly this
    // display name (so the second of two records sharing a name, exported
    // and imported back, is found by the second row), else, for the first
    // row of a name, for hardware, the only record with this alias or name
    // ignoring case and punctuation.
    absl::StatusOr<std::vector<std::string>> ids = FindIdsByName<Record>(name, &run->lookups);
    if (!ids.ok()) return ids.status();
    std::vector<Record> candidates;
    for (const std::string& id : *ids) {
      if (claimed.Claimed(id)) continue;
      absl::StatusOr<std::optional<Record>> existing = load(id);
      if (!existing.ok()) return existing.status();
      if (!existing->has_value()) continue;
      if ((*existing)->display_name() == name) return existing;
      candidates.push_back(**std::move(existing));
    }
    if (occurrence == 1 && kind == RecordKind::kHardware && candidates.size() == 1) {
      return std::optional(candidates[0]);
    }
  }
  for (const std::string& id : {first, second}) {
    if (claimed.Claimed(id)) continue;
    absl::StatusOr<StoredRecord> stored = GetThrough(&run->lookups, kind, id);
    if (absl::IsNotFound(stored.status())) {
      *new_id = id;
      return std::nullopt;
    }
    if (!stored.ok()) return stored.status();
  }
  return absl::AlreadyExistsError(absl::StrCat("no free id for \"", name, "\": ", first, " and ",
                                               second, " are taken by other records"));
}

template <typename Record>
absl::Status Catalog::PrefetchImportLookups(absl::Span<const ParsedRecord<Record>> rows,
                                            ImportRun* run) {
  constexpr RecordKind kind = Traits<Record>::kKind;
  constexpr absl::string_view collection = Traits<Record>::kCollection;
  run->lookups = ImportLookups{kind, {}, {}};
  // In process (SQLite) a batch of reads costs what the reads one by one
  // cost, plus building the maps: only a store a round trip away gains, or
  // a planner that runs beside the writes (ImportRun::prefetch).
  if (!run->prefetch) return absl::OkStatus();
  // The ids FindImportTarget will read: a named resource's id; else the
  // name's slug, numbered by the rows of that name so far (a guess: a row
  // rejected on the way shifts the numbers, and a read the batch does not
  // hold goes to the store), and its hashed twin; and the name's lookup key.
  std::vector<std::string> ids;
  std::vector<std::string> keys;
  absl::flat_hash_map<absl::string_view, int> in_batch;
  const ImportedNames& names = run->names[static_cast<int>(kind)];
  for (const ParsedRecord<Record>& row : rows) {
    if (!row.record.name().empty()) {
      std::optional<std::string> id = ResourceIdFromName(row.record.name(), collection);
      if (id.has_value()) ids.push_back(*std::move(id));
      continue;
    }
    const std::string& name = row.record.display_name();
    const int occurrence = names.Occurrences(name) + 1 + in_batch[name]++;
    const std::string base = ResourceIdFromDisplayName(name);
    std::string first = occurrence == 1 ? base : WithSuffix(base, absl::StrCat("-", occurrence));
    ids.push_back(WithSuffix(first, absl::StrFormat("-%08x", StableHash(name))));
    ids.push_back(std::move(first));
    std::string key = LookupKey(name);
    if (InvalidUtf8Offset(key) == absl::string_view::npos) keys.push_back(std::move(key));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> by_key =
      store_->FindIdsByLookupKeys(kind, keys);
  if (!by_key.ok()) return by_key.status();
  for (const std::string& key : keys) run->lookups.ids_by_key[key];  // none unless found
  for (auto& [key, id] : *by_key) {
    ids.push_back(id);  // FindIdsByName reads each record found by name
    run->lookups.ids_by_key[key].push_back(std::move(id));
  }
  for (auto& [key, found] : run->lookups.ids_by_key) {
    std::sort(found.begin(), found.end());  // in id order, as FindIdsByLookupKey
    found.erase(std::unique(found.begin(), found.end()), found.end());
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  absl::StatusOr<std::vector<StoredRecord>> records = store_->GetMany(kind, ids);
  if (!records.ok()) return records.status();
  for (std::string& id : ids) run->lookups.records.emplace(std::move(id), std::nullopt);
  for (StoredRecord& record : *records) {
    const std::string id = record.id;
    run->lookups.records[id] = std::move(record);
  }
  return absl::OkStatus();
}

template <typename Record>
absl::Status Catalog::PlanImport(std::vector<ParsedRecord<Record>>* all_rows, ImportRun* run) {
  // Batches of kWriteBatch rows, each looked up in two store calls.
  const absl::Span<ParsedRecord<Record>> span(*all_rows);
  for (size_t begin = 0; begin < span.size(); begin += kWriteBatch) {
    const auto rows = span.subspan(begin, kWriteBatch);
    if (absl::Status s = PrefetchImportLookups<Record>(rows, run); !s.ok()) return s;
    PlanImportBatch(rows, run);
  }
  run->lookups = ImportLookups{};
  return absl::OkStatus();
}

template <typename Record>
void Catalog::PlanImportBatch(absl::Span<ParsedRecord<Record>> rows, ImportRun* run) {
  constexpr RecordKind kind = Traits<Record>::kKind;
  constexpr absl::string_view collection = Traits<Record>::kCollection;
  for (ParsedRecord<Record>& row : rows) {
    // A row that names its resource (the catalog's own export) is a whole record.
    const bool names_itself = !row.record.name().empty();
    // A copy: the row's record is moved into the plan below.
    const std::string display_name = row.record.display_name();
    ImportedNames& names = run->names[static_cast<int>(kind)];
    const int occurrence = names_itself ? 1 : names.Occurrences(display_name) + 1;
    std::string new_id;
    absl::StatusOr<std::optional<Record>> target =
        FindImportTarget(row.record, occurrence, run, &new_id);
    if (!target.ok()) {
      run->Reject(row.row, "", target.status().message(), display_name);
      continue;
    }
    Record patch = std::move(row.record);  // the row is not read again
    Record merged;
    const bool exists = target->has_value();
    if (exists) {
      merged = **target;
      merged.clear_etag();
      merged.clear_revision();
      // A record found by alias keeps its own name; one with a source keeps
      // it unless the file is a whole record (the catalog's export).
      if (merged.display_name() != display_name) patch.clear_display_name();
      google::protobuf::FieldMask mask;
      if (names_itself) {
        SetFieldPaths(patch, "", &mask);
      } else {
        // The record keeps its own provenance; each field the file sets
        // records where its value came from, and a value from another
        // source is replaced only when asked (ImportOptions.overwrite).
        const common::v1::Provenance imported = patch.provenance();
        patch.clear_provenance();
        SetFieldPaths(patch, "", &mask);
        mask = TakeFromImport(row.row, **target, patch, imported, mask, &merged, run);
      }
      Overlay(patch, mask, &merged);
    } else {
      merged = std::move(patch);
      merged.set_name(ResourceName(collection, new_id));
    }
    if constexpr (std::is_same_v<Record, Model>) {
      if (!names_itself) LinkTrainingHardware(&merged, true, run);
    }
    FieldViolations violations;
    Traits<Record>::Validate(merged, "", &violations);
    if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) {
      for (const auto& violation : violations.violations()) {
        run->Reject(row.row, ColumnOfField(violation.field, run->format), violation.description,
                    display_name);
      }
      continue;
    }
    const std::string id = *ResourceIdFromName(merged.name(), collection);
    names.Add(display_name, row.row, id);

    ImportRun::Planned planned;
    planned.row = row.row;
    planned.summary.set_row(row.row);
    planned.summary.set_name(merged.name());
    planned.summary.set_display_name(merged.display_name());
    if (exists) {
      std::vector<std::string> changed = ChangedFields(**target, merged);
      changed.erase(
          std::remove_if(changed.begin(), changed.end(),
                         [](const std::string& f) { return f == "etag" || f == "revision"; }),
          changed.end());
      if (changed.empty()) {
        planned.summary.set_outcome(v1::IMPORT_OUTCOME_UNCHANGED);
      } else {
        planned.summary.set_outcome(v1::IMPORT_OUTCOME_UPDATED);
        for (std::string& field : changed) planned.summary.add_changed_fields(std::move(field));
      }
    } else {
      planned.summary.set_outcome(v1::IMPORT_OUTCOME_CREATED);
    }
    if (planned.summary.outcome() != v1::IMPORT_OUTCOME_UNCHANGED) {
      planned.write.operation =
          exists ? BatchWrite::Operation::kUpdate : BatchWrite::Operation::kCreate;
      planned.write.expected_revision = exists ? (*target)->revision() : 0;
      planned.record = std::move(merged);
    }
    run->planned.push_back(std::move(planned));
  }
}

absl::Status Catalog::PlanArchitectureImport(const ParsedFile& file, ImportRun* run) {
  if (file.models.empty()) return absl::OkStatus();  // the config was rejected
  if (run->options.model().empty()) {
    return InvalidFieldError("options.model",
                             "required for a config.json: the model whose architecture it sets");
  }
  absl::StatusOr<Model> model = Get<Model>(run->options.model());
  if (!model.ok()) return model.status();
  // Matched by resource name, like a record of the catalog's own export.
  ParsedRecord<Model> row = file.models.front();
  row.record.set_name(model->name());
  row.record.set_display_name(model->display_name());
  // A config.json describes the shape; the exact count published with the
  // weights is not in it and stays.
  common::v1::Architecture* architecture = row.record.mutable_architecture();
  if (!architecture->has_published_parameter_count() &&
      model->architecture().has_published_parameter_count()) {
    architecture->set_published_parameter_count(model->architecture().published_parameter_count());
  }
  std::vector<ParsedRecord<Model>> rows{row};
  return PlanImport(&rows, run);
}

namespace {

// The write of a planned record: its serialized payload, keys and order
// values (ToWrite), made once; the record is dropped.
absl::Status MakeRecordWrite(std::variant<std::monostate, Model, Hardware>* record,
                             RecordWrite* write) {
  if (std::holds_alternative<std::monostate>(*record)) return absl::OkStatus();
  absl::StatusOr<RecordWrite> made = std::visit(
      [](const auto& planned) -> absl::StatusOr<RecordWrite> {
        if constexpr (std::is_same_v<std::decay_t<decltype(planned)>, std::monostate>) {
          return absl::InternalError("no record planned");
        } else {
          return ToWrite(planned);
        }
      },
      *record);
  if (!made.ok()) return made.status();
  *write = *std::move(made);
  *record = std::monostate();
  return absl::OkStatus();
}

}  // namespace

absl::Status Catalog::CommitImport(ImportRun* run, std::vector<ImportPlanned>* planned) {
  std::vector<size_t> pending;
  for (size_t i = 0; i < planned->size(); ++i) {
    if ((*planned)[i].summary.outcome() != v1::IMPORT_OUTCOME_UNCHANGED) pending.push_back(i);
  }
  // The planned writes are moved into each batch, not copied (a record's
  // payload, keys and values), and moved back when a batch must be written
  // again one by one.
  std::vector<BatchWrite> writes;
  auto take = [&](size_t begin, size_t end) {
    writes.clear();
    writes.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) {
      writes.push_back(std::move((*planned)[pending[i]].write));
      writes.back().defer_derived_rows = run->defer_derived_rows;
    }
  };
  auto give_back = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      (*planned)[pending[i]].write = std::move(writes[i - begin]);
    }
  };
  if (pending.empty() || (run->options.atomic() && !run->rejected_rows.empty())) {
    return absl::OkStatus();
  }
  for (size_t i : pending) {
    ImportPlanned& one = (*planned)[i];
    if (absl::Status s = MakeRecordWrite(&one.record, &one.write.record); !s.ok()) return s;
  }
  // The last moment to give up with nothing (more) written.
  if (run->abandoned && run->abandoned()) {
    if (run->written == 0) {
      return absl::CancelledError(
          "the client cancelled the import before it was committed; nothing was written");
    }
    return absl::CancelledError(absl::StrCat("the client cancelled the import after ", run->written,
                                             " records were written; importing again is safe"));
  }
  if (run->options.atomic()) {
    take(0, pending.size());
    absl::StatusOr<int64_t> revision = store_->Write(writes);
    if (!revision.ok()) return revision.status();
    run->written += static_cast<int64_t>(pending.size());
    NotifyWrite();
    return absl::OkStatus();
  }
  for (size_t begin = 0; begin < pending.size(); begin += kWriteBatch) {
    const size_t end = std::min(pending.size(), begin + kWriteBatch);
    take(begin, end);
    absl::StatusOr<int64_t> revision = store_->Write(writes);
    if (revision.ok()) {
      run->written += static_cast<int64_t>(end - begin);
      NotifyWrite();
      continue;
    }
    const bool conflict = absl::IsAborted(revision.status()) ||
                          absl::IsAlreadyExists(revision.status()) ||
                          absl::IsNotFound(revision.status());
    if (!conflict) {
      return absl::Status(revision.status().code(),
                          absl::StrCat(revision.status().message(), " (after ", run->written,
                                       " records were written; importing again is safe)"));
    }
    give_back(begin, end);
    // Another writer changed one of these records since they were read:
    // write them one by one and report the ones that conflict.
    for (size_t i = begin; i < end; ++i) {
      ImportPlanned& one_planned = (*planned)[pending[i]];
      one_planned.write.defer_derived_rows = run->defer_derived_rows;
      absl::StatusOr<int64_t> one = store_->Write({one_planned.write});
      if (one.ok()) {
        ++run->written;
        NotifyWrite();
        continue;
      }
      v1::ImportRejection* rejection = run->write_report.add_rejections();
      rejection->set_row(one_planned.row);
      rejection->set_reason(
          absl::StrCat(one.status().message(), " (changed by another writer during the import)"));
      rejection->set_record(one_planned.summary.display_name());
      run->write_rejected_rows.insert(one_planned.row);
      one_planned.summary.set_outcome(v1::IMPORT_OUTCOME_REJECTED);
    }
  }
  return absl::OkStatus();
}

absl::Status Catalog::SpoolImport(ImportRun* run, std::vector<ImportPlanned>* planned) {
  if (run->abandoned && run->abandoned()) {
    return absl::CancelledError(
        "the client cancelled the atomic import before it was committed; nothing was written");
  }
  std::vector<BatchWrite> writes;
  for (ImportPlanned& one : *planned) {
    if (one.summary.outcome() == v1::IMPORT_OUTCOME_UNCHANGED) continue;
    if (absl::Status s = MakeRecordWrite(&one.record, &one.write.record); !s.ok()) return s;
    writes.push_back(std::move(one.write));
  }
  if (writes.empty()) return absl::OkStatus();
  return run->spool->Append(writes);
}

absl::Status Catalog::CommitSpooledImport(ImportRun* run) {
  if (!run->rejected_rows.empty() || run->spool->writes() == 0) return absl::OkStatus();
  run->spool->Rewind();
  // Each batch read back from the spool as the store asks for it, inside
  // the store's one transaction: a cancelled client or a spool that cannot
  // be read rolls it back. The batches are the chunks as planned (at most
  // kWriteBatch writes each).
  int64_t pulled = 0;
  const absl::Time start = absl::Now();
  absl::StatusOr<int64_t> revision =
      store_->WriteInOneTransaction([&](std::vector<BatchWrite>* batch) -> absl::Status {
        if (run->abandoned && run->abandoned()) {
          return absl::CancelledError(absl::StrCat(
              "the client cancelled the atomic import after ", pulled, " of ", run->spool->writes(),
              " writes inside its transaction; it was rolled back: "
              "nothing was written"));
        }
        if (absl::Status s = run->spool->Next(batch); !s.ok()) return s;
        for (BatchWrite& write : *batch) write.defer_derived_rows = run->defer_derived_rows;
        pulled += static_cast<int64_t>(batch->size());
        return absl::OkStatus();
      });
  if (!revision.ok()) {
    if (absl::IsCancelled(revision.status())) return revision.status();
    return absl::Status(revision.status().code(),
                        absl::StrCat(revision.status().message(),
                                     " (the atomic import was rolled back: nothing was written)"));
  }
  run->written = run->spool->writes();
  MA_LOG_INFO(
      "atomic import: %lld writes (%.1f MiB spooled on disk) committed at revision %lld in "
      "one transaction of %.1f s",
      static_cast<long long>(run->written),
      static_cast<double>(run->spool->size_bytes()) / (1 << 20), static_cast<long long>(*revision),
      absl::ToDoubleSeconds(absl::Now() - start));
  NotifyWrite();
  return absl::OkStatus();
}

absl::Status Catalog::StartImport(const v1::ImportOptions& options) {
  for (int i = 0; i < options.overwrite_size(); ++i) {
    const std::string& field = options.overwrite(i);
    if (field != "all" && !IsFieldPath(Model::descriptor(), field) &&
        !IsFieldPath(Hardware::descriptor(), field)) {
      return InvalidFieldError(
          absl::StrCat("options.overwrite[", i, "]"),
          absl::StrCat("\"", field,
                       "\" is neither \"all\" nor a field of a model or hardware record"));
    }
  }
  return absl::OkStatus();
}

// Takes what a (chunk of a) parsed file says besides its records into the report.
void Catalog::AddFileToReport(ParsedFile* file, ImportRun* run) {
  run->format = file->format;
  run->report.set_format(file->format);
  run->report.set_rows_read(file->rows_read);
  if (run->report.unmapped_columns().empty()) {
    for (const std::string& column : file->unmapped_columns) {
      run->report.add_unmapped_columns(column);
    }
  }
  for (v1::ImportRejection& rejection : file->rejections) {
    run->rejected_rows.insert(rejection.row());
    *run->report.add_rejections() = std::move(rejection);
  }
  for (v1::ImportConversion& conversion : file->conversions) {
    if (run->report.conversions_size() < kMaxReportedConflicts) {
      *run->report.add_conversions() = std::move(conversion);
    } else {
      run->report.set_conversions_omitted(run->report.conversions_omitted() + 1);
    }
  }
}

// Counts the planned rows' outcomes into the report, lists the changes it
// has room for, and forgets them.
void Catalog::FoldPlanned(ImportRun* run, std::vector<ImportPlanned>* planned_rows) {
  const int max_changes = run->options.full_report() ? kMaxReportedRows : kMaxReportedChanges;
  v1::ImportReport& report = run->write_report;
  auto list_change = [&](v1::ImportedRecord& summary) {
    if (report.changes_size() < max_changes) {
      *report.add_changes() = std::move(summary);
    } else {
      report.set_changes_omitted(report.changes_omitted() + 1);
    }
  };
  for (ImportPlanned& planned : *planned_rows) {
    switch (planned.summary.outcome()) {
      case v1::IMPORT_OUTCOME_CREATED:
        report.set_created(report.created() + 1);
        list_change(planned.summary);
        break;
      case v1::IMPORT_OUTCOME_UPDATED:
        report.set_updated(report.updated() + 1);
        list_change(planned.summary);
        break;
      case v1::IMPORT_OUTCOME_UNCHANGED:
        report.set_unchanged(report.unchanged() + 1);
        if (run->options.full_report()) list_change(planned.summary);
        break;
      default:
        break;
    }
  }
  planned_rows->clear();
}

// Lists every display name of two rows or more in the report, and frees
// the names the run remembered (a second call adds nothing).
void Catalog::ReportDuplicateNames(ImportRun* run) {
  for (RecordKind kind : {RecordKind::kModel, RecordKind::kHardware}) {
    const absl::string_view collection =
        kind == RecordKind::kModel ? kModelsCollection : kHardwareCollection;
    ImportedNames& names = run->names[static_cast<int>(kind)];
    for (const ImportedNames::Duplicate& duplicate : names.Duplicates()) {
      v1::DuplicateName* listed = run->report.add_duplicate_names();
      listed->set_display_name(duplicate.display_name);
      for (const auto& [row, id] : duplicate.rows) {
        listed->add_rows(row);
        listed->add_names(ResourceName(collection, id));
      }
    }
    names.Clear();
  }
}

absl::StatusOr<v1::ImportReport> Catalog::FinishImport(ImportRun* run) {
  // What the write stage found: the counts and changes it alone sets, and
  // its rejections after parsing's and planning's (sorted by row below,
  // stably: a row rejected while written was rejected by nothing before).
  v1::ImportReport& written = run->write_report;
  run->report.set_created(written.created());
  run->report.set_updated(written.updated());
  run->report.set_unchanged(written.unchanged());
  run->report.set_changes_omitted(written.changes_omitted());
  for (v1::ImportedRecord& change : *written.mutable_changes()) {
    *run->report.add_changes() = std::move(change);
  }
  for (v1::ImportRejection& rejection : *written.mutable_rejections()) {
    *run->report.add_rejections() = std::move(rejection);
  }
  run->rejected_rows.insert(run->write_rejected_rows.begin(), run->write_rejected_rows.end());
  const bool nothing_written =
      run->options.dry_run() || (run->options.atomic() && !run->rejected_rows.empty());
  run->report.set_committed(!nothing_written);
  for (v1::ImportConflict& conflict : run->conflicts) {
    *run->report.add_conflicts() = std::move(conflict);
  }
  run->report.set_conflicts_omitted(run->conflicts_omitted);
  run->report.set_rejected(static_cast<int64_t>(run->rejected_rows.size()));
  std::stable_sort(run->report.mutable_rejections()->begin(),
                   run->report.mutable_rejections()->end(),
                   [](const auto& a, const auto& b) { return a.row() < b.row(); });
  if (run->report.rejections_size() > kMaxReportedRejections) {
    run->report.set_rejections_omitted(run->report.rejections_size() - kMaxReportedRejections);
    run->report.mutable_rejections()->DeleteSubrange(
        kMaxReportedRejections, run->report.rejections_size() - kMaxReportedRejections);
  }

  std::vector<std::pair<std::string, int64_t>> unresolved(run->unresolved_hardware.begin(),
                                                          run->unresolved_hardware.end());
  std::stable_sort(unresolved.begin(), unresolved.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [name, mentions] : unresolved) {
    v1::UnresolvedHardware* entry = run->report.mutable_hardware_linking()->add_unresolved();
    entry->set_name(name);
    entry->set_mentions(mentions);
  }
  ReportDuplicateNames(run);
  absl::StatusOr<int64_t> revision = store_->Revision();
  if (!revision.ok()) return revision.status();
  run->report.set_revision(*revision);
  // Rejections quote what the file held, which may not be UTF-8.
  ReplaceInvalidUtf8(&run->report);
  return std::move(run->report);
}

absl::StatusOr<v1::ImportReport> Catalog::Import(const ParsedFile& file,
                                                 const v1::ImportOptions& options,
                                                 const std::function<bool()>& abandoned) {
  if (absl::Status s = StartImport(options); !s.ok()) return s;
  ImportRun run{file.format, options, abandoned};
  run.prefetch = store_->backend() == "postgres";
  run.report.set_dry_run(options.dry_run());
  run.report.set_atomic(options.atomic());
  ParsedFile info;  // what the file says besides its records
  info.format = file.format;
  info.rows_read = file.rows_read;
  info.unmapped_columns = file.unmapped_columns;
  info.rejections = file.rejections;
  AddFileToReport(&info, &run);
  if (file.architecture_only) {
    if (absl::Status s = PlanArchitectureImport(file, &run); !s.ok()) return s;
  } else {
    // Copies: planning moves each row's record into its plan.
    std::vector<ParsedRecord<Hardware>> hardware = file.hardware;
    std::vector<ParsedRecord<Model>> models = file.models;
    if (absl::Status s = PlanImport(&hardware, &run); !s.ok()) return s;
    if (absl::Status s = PlanImport(&models, &run); !s.ok()) return s;
  }
  if (!options.dry_run()) {
    if (absl::Status s = CommitImport(&run, &run.planned); !s.ok()) return s;
  }
  FoldPlanned(&run, &run.planned);
  info.conversions = file.conversions;
  info.rejections.clear();
  AddFileToReport(&info, &run);
  return FinishImport(&run);
}

namespace {

// The file's rows, estimated by its lines less a header (a CSV's rows; a
// JSON file's lines overcount its records), counted a block at a time.
absl::StatusOr<int64_t> EstimateRows(const ImportSource& content) {
  int64_t rows = -1;
  std::string buffer;
  for (int64_t offset = 0; offset < content.size_bytes();) {
    absl::StatusOr<absl::string_view> block = content.Read(offset, kImportReadBlockBytes, &buffer);
    if (!block.ok()) return block.status();
    if (block->empty()) break;
    rows += std::count(block->begin(), block->end(), '\n');
    offset += static_cast<int64_t>(block->size());
  }
  return std::max<int64_t>(rows, 0);
}

}  // namespace

absl::StatusOr<v1::ImportReport> Catalog::ImportFile(absl::string_view content,
                                                     const v1::ImportOptions& options,
                                                     const std::function<bool()>& abandoned) {
  return ImportFile(TextSource(content), options, abandoned);
}

absl::StatusOr<v1::ImportReport> Catalog::ImportFile(const ImportSource& content,
                                                     const v1::ImportOptions& options,
                                                     const std::function<bool()>& abandoned) {
  if (absl::Status s = StartImport(options); !s.ok()) return s;
  ImportRun run{v1::FILE_FORMAT_UNSPECIFIED, options, abandoned};
  run.prefetch = store_->backend() == "postgres";
  run.report.set_dry_run(options.dry_run());
  run.report.set_atomic(options.atomic());
  // Each chunk of kWriteBatch rows is planned (its lookups read in two store
  // calls) and, unless the import is atomic or a dry run, written before the
  // next is read: the parsed rows and planned writes held at any time are one
  // chunk's. An atomic import appends each chunk's writes to a spool on disk
  // instead and, when no row was rejected, writes them back in one
  // transaction, a chunk at a time (CommitSpooledImport); a dry run keeps none.
  const bool write_each_chunk = !options.atomic() && !options.dry_run();
  const bool spool_each_chunk = options.atomic() && !options.dry_run();
  if (spool_each_chunk) {
    // Beside the upload's own spool: a disk the operator sized for imports.
    const auto* upload = dynamic_cast<const SpoolFile*>(&content);
    absl::StatusOr<std::unique_ptr<WriteSpool>> spool =
        WriteSpool::Create(upload != nullptr ? upload->directory() : DefaultSpoolDirectory());
    if (!spool.ok()) return spool.status();
    run.spool = *std::move(spool);
  }
  // On SQLite each model costs a row per domain in model_domains and an
  // entry in each of its four order indexes, at random places: about half
  // an import's CPU when written with each chunk (docs/BENCHMARKS.md,
  // branch s11-import). They are written after the last chunk instead, in
  // short transactions (FillDeferredRows), before the report is returned:
  // a List meanwhile tests the filter text instead (correct, slower), and
  // a crash before the end leaves the models listed for the next start's
  // fill (FillOrderValues).
  //
  // A file much larger than the store (the first load of a large catalog)
  // is loaded in bulk instead: the store drops the order indexes of records
  // and model_domains (on SQLite each row took a random place in eight of
  // them, most of an import's CPU at a million rows) and rebuilds each by
  // one sort after the last chunk. The domain rows are then written with
  // their records (model_domains without its indexes costs only its key),
  // so nothing is deferred.
  absl::StatusOr<int64_t> estimated_rows = EstimateRows(content);
  if (!estimated_rows.ok()) return estimated_rows.status();
  // The models' names table sized for the file at once (a CSV of models is
  // the large kind): no doubling of the table, with the old and new copies
  // held together, in the middle of a large import.
  run.names[static_cast<int>(RecordKind::kModel)].Reserve(
      static_cast<size_t>(std::min(*estimated_rows, kMaxImportRows)));
  bool bulk = false;
  if (write_each_chunk || spool_each_chunk) {
    absl::StatusOr<bool> began = BeginBulkLoadFor(*estimated_rows);
    if (!began.ok()) return began.status();
    bulk = *began;
  }
  run.defer_derived_rows = !bulk;
  // What a chunk says besides its records goes into the report; its rows
  // are planned into run.planned.
  auto plan_chunk = [&](ParsedFile* chunk) -> absl::Status {
    AddFileToReport(chunk, &run);
    if (chunk->architecture_only) return PlanArchitectureImport(*chunk, &run);
    if (absl::Status s = PlanImport(&chunk->hardware, &run); !s.ok()) return s;
    return PlanImport(&chunk->models, &run);
  };
  // Takes the duplicate names into the report and frees the names (once
  // nothing more is planned); a bulk import logs what they held first, the
  // part of its memory that grows with the rows (issue 22 point 4).
  bool names_logged = false;
  auto report_names = [&] {
    if (bulk && !names_logged) {
      MA_LOG_INFO(
          "bulk import: the names of the rows planned held %.1f MiB",
          static_cast<double>(run.names[0].MemoryBytes() + run.names[1].MemoryBytes()) / (1 << 20));
      names_logged = true;
    }
    ReportDuplicateNames(&run);
  };
  absl::Status status;
  int chunks_parsed = 0;
  // Tests: a failure of the parse stage before it hands chunk N on.
  auto parsed_chunk = [&]() -> absl::Status {
    ++chunks_parsed;
    return parsed_chunk_hook_ ? parsed_chunk_hook_(chunks_parsed) : absl::OkStatus();
  };
  if ((write_each_chunk || spool_each_chunk) && import_in_stages_) {
    // Three stages, each on its own thread: chunk N+2 is parsed while N+1
    // is planned and N written (in turn, a 100,000-row import spent 5.2 s
    // of CPU in its chunks: 0.7 s parsing, 2.9 s planning, 1.6 s writing
    // under the store's lock; docs/BENCHMARKS.md, branch s13-import). The
    // record a write stores is serialized by the write stage (CommitImport).
    // Planning does not depend on the chunks not yet written: every record
    // an earlier row of this file imports is claimed by it, and
    // FindImportTarget skips claimed ids, whether their write has landed or
    // not. The exception is a model's training hardware, found by reading
    // the store: a chunk with hardware rows is written before the next one
    // is planned. The planner's store reads are batched (run.prefetch): it
    // waits for the store's lock, held by a chunk's write, twice per chunk,
    // not per row. At most one chunk waits between two stages, so the rows
    // held are five chunks'. The stages share nothing but the hand-overs:
    // parsing and planning add to run.report, writing to run.write_report,
    // merged by FinishImport, so the report is the one the stages in turn
    // give, row for row. The first stage to fail stops the others; its
    // status is the import's, as in turn: what the chunks before it planned
    // is written.
    run.prefetch = true;
    HandOver<ParsedFile> parsed;
    HandOver<std::vector<ImportPlanned>> chunks;
    const absl::Time start = absl::Now();
    const absl::Duration writer_cpu_start = ThreadCpu();
    absl::Duration parser_cpu;
    absl::Duration planner_cpu;
    const absl::Status stopped = absl::CancelledError("the import's next stage stopped");
    // Parsing: each chunk's rows handed on (what the file says of itself,
    // its format and columns, copied: the parser keeps it).
    std::thread parser([&] {
      const absl::Duration cpu_start = ThreadCpu();
      absl::Cleanup count_cpu = [&] { parser_cpu = ThreadCpu() - cpu_start; };
      parsed.Finish(ParseImportFileInChunks(
          content, options.format(), options.source_name(), kWriteBatch,
          [&](ParsedFile* chunk) -> absl::Status {
            if (absl::Status s = parsed_chunk(); !s.ok()) return s;
            ParsedFile rows;
            rows.format = chunk->format;
            rows.rows_read = chunk->rows_read;
            rows.unmapped_columns = chunk->unmapped_columns;
            rows.architecture_only = chunk->architecture_only;
            rows.models = std::move(chunk->models);
            rows.hardware = std::move(chunk->hardware);
            rows.rejections = std::move(chunk->rejections);
            rows.conversions = std::move(chunk->conversions);
            return parsed.Push(std::move(rows), /*until_written=*/false) ? absl::OkStatus()
                                                                         : stopped;
          }));
    });
    // Planning, in the file's order.
    std::thread planner([&] {
      const absl::Duration cpu_start = ThreadCpu();
      absl::Cleanup count_cpu = [&] { planner_cpu = ThreadCpu() - cpu_start; };
      ParsedFile chunk;
      while (parsed.Pop(&chunk)) {
        absl::Status planned = plan_chunk(&chunk);
        const bool has_hardware = !chunk.hardware.empty();
        if (planned.ok() && !chunks.Push(std::move(run.planned), /*until_written=*/has_hardware)) {
          planned = stopped;
        }
        run.planned.clear();
        if (!planned.ok()) {
          parsed.Stop();
          chunks.Finish(planned);
          return;
        }
        parsed.Written();
      }
      chunks.Finish(parsed.FinishStatus());
    });
    // Writing, on this thread (the one that asked, which the client's
    // cancellation is checked on).
    std::vector<ImportPlanned> writing;
    while (chunks.Pop(&writing)) {
      absl::Status s;
      if (spool_each_chunk) {
        // Spooled even after a rejected row (the planner's to read until it
        // ends): only wasted, CommitSpooledImport checks once both ended.
        s = SpoolImport(&run, &writing);
      } else {
        s = CommitImport(&run, &writing);
      }
      if (!s.ok()) {
        status = s;
        chunks.Stop();
        break;
      }
      FoldPlanned(&run, &writing);
      chunks.Written();
    }
    const absl::Duration writer_cpu = ThreadCpu() - writer_cpu_start;
    planner.join();
    parser.join();
    if (status.ok()) status = chunks.FinishStatus();
    if (status.ok() && spool_each_chunk) {
      // The names are not needed to write: freed before the transaction
      // (the report takes the duplicates now).
      report_names();
      status = CommitSpooledImport(&run);
    }
    if (bulk) {
      MA_LOG_INFO(
          "bulk import: chunks in %.1f s; CPU: parsing %.1f s, planning %.1f s (waited %.1f s for "
          "rows, %.1f s for the writes), writing %.1f s (waited %.1f s for plans)",
          absl::ToDoubleSeconds(absl::Now() - start), absl::ToDoubleSeconds(parser_cpu),
          absl::ToDoubleSeconds(planner_cpu), absl::ToDoubleSeconds(parsed.WriterWaited()),
          absl::ToDoubleSeconds(chunks.PlannerWaited()), absl::ToDoubleSeconds(writer_cpu),
          absl::ToDoubleSeconds(chunks.WriterWaited()));
    }
  } else {
    // In turn, on this thread: an atomic import or a dry run (which write
    // nothing before the end), and tests comparing the stages with it.
    status =
        ParseImportFileInChunks(content, options.format(), options.source_name(), kWriteBatch,
                                [&](ParsedFile* chunk) -> absl::Status {
                                  if (absl::Status s = parsed_chunk(); !s.ok()) return s;
                                  if (absl::Status s = plan_chunk(chunk); !s.ok()) return s;
                                  if (write_each_chunk) {
                                    if (absl::Status s = CommitImport(&run, &run.planned); !s.ok())
                                      return s;
                                  }
                                  // After a rejected row nothing will be written: no more kept.
                                  if (spool_each_chunk && run.rejected_rows.empty()) {
                                    if (absl::Status s = SpoolImport(&run, &run.planned); !s.ok())
                                      return s;
                                  }
                                  FoldPlanned(&run, &run.planned);
                                  return absl::OkStatus();
                                });
    if (status.ok() && spool_each_chunk) {
      report_names();
      status = CommitSpooledImport(&run);
    }
  }
  // Nothing is planned any more: the names the rows took go into the report
  // now, and their memory is freed before the indexes are rebuilt (the
  // import's peak is the larger of the two, not their sum).
  if (status.ok()) report_names();
  // Whatever ended the import (the last chunk, a failure, the client gone),
  // the indexes come back and what it wrote gets its rows now, so no List
  // scans or falls back for longer.
  if (bulk) {
    const absl::Time start = absl::Now();
    absl::Status rebuilt = store_->EndBulkLoad(bulk_load_step_done_);
    MA_LOG_INFO("bulk import of %lld records: order indexes rebuilt in %.1f s",
                static_cast<long long>(run.written), absl::ToDoubleSeconds(absl::Now() - start));
    if (!rebuilt.ok()) {
      if (!status.ok()) return status;
      return absl::Status(
          rebuilt.code(),
          absl::StrCat(run.written,
                       " records were imported, but rebuilding the order indexes failed (",
                       rebuilt.message(),
                       "); lists are answered without them until the next start of the catalog "
                       "rebuilds them"));
    }
  }
  if (run.written > 0 && run.defer_derived_rows) {
    if (absl::Status filled = FillDeferredRows(); !filled.ok()) {
      if (!status.ok()) return status;
      return absl::Status(
          filled.code(),
          absl::StrCat(run.written,
                       " records were imported, but writing their domain rows failed (",
                       filled.message(), "); the next start of the catalog writes them"));
    }
  }
  if (!status.ok()) return status;
  return FinishImport(&run);
}

absl::StatusOr<bool> Catalog::BeginBulkLoadFor(int64_t rows) {
  // An overestimate (a JSON file's lines) at worst rebuilds the indexes of a
  // store smaller than the file.
  if (rows < bulk_load_min_rows_) return false;
  int64_t held = 0;
  for (RecordKind kind : {RecordKind::kModel, RecordKind::kHardware}) {
    absl::StatusOr<int64_t> count = store_->Count(kind);
    if (!count.ok()) return count.status();
    held += *count;
  }
  // Rebuilding costs a sort of what the store will hold; keeping the indexes
  // costs a random write per index and row of the file: worth it only when
  // the file brings at least as many rows as the store holds.
  if (held >= rows) return false;
  return store_->BeginBulkLoad();
}

template <typename Record>
absl::StatusOr<std::vector<Record>> Catalog::ListAll(const std::string& filter) {
  std::vector<Record> records;
  ListQuery query{kMaxPageSize, "", filter, ""};
  while (true) {
    absl::StatusOr<Page<Record>> page = List<Record>(query);
    if (!page.ok()) return page.status();
    for (Record& record : page->records) records.push_back(std::move(record));
    if (page->next_page_token.empty()) return records;
    query.page_token = page->next_page_token;
  }
}

template absl::StatusOr<std::vector<Model>> Catalog::ListAll<Model>(const std::string&);
template absl::StatusOr<std::vector<Hardware>> Catalog::ListAll<Hardware>(const std::string&);

}  // namespace modelatlas::catalog
