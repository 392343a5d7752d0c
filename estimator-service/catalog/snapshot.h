// The estimator's in-memory copy of the catalog: every model and hardware
// record, loaded with List and kept fresh with Watch, so that whole-catalog
// answers need no round trip per record. A restarted estimator (or one whose
// Watch stream broke) reloads on its own, retrying with backoff and jitter.
#pragma once

#include <grpcpp/channel.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "estimator-service/catalog/record_table.h"
#include "estimator-service/catalog/shared_records.h"
#include "estimator-service/core/architecture.h"
#include "estimator-service/core/inference_memory.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"

namespace modelatlas::estimator {

class CatalogSnapshot;

// What the memory answer derives from a catalog model record alone, made
// once when the snapshot loads or changes the record instead of on every
// call (issue 22 point 1; docs/BENCHMARKS.md, session 15), and handed out
// with the record (CatalogSnapshot::UsePreparedModel).
struct PreparedRecord {
  // ValidateModelArchitecture(model, "architecture") (answers/conversions.h).
  absl::Status architecture_check;
  // ToCoreArchitecture of the record's architecture; nullopt without one.
  std::optional<Architecture> architecture;
  // The record's weights per weight format (line, bits, bytes), each sized
  // at its first use and kept with the record: made with an architecture
  // (whose quantized formats are sized tensor by tensor, ~40,000
  // instructions), null without one. Dropped with the record, made anew
  // when it changes (docs/BENCHMARKS.md, session 16).
  std::unique_ptr<const PreparedWeights> weights;
  // The record's own fields of its memory answer, encoded once
  // (EncodeRecordAnswerHead, EncodeRecordAnswerSource: answers/memory_answer.h),
  // when its answers are written from parts (MemoryAnswerParts): an
  // architecture that passes its check, no encoder parts (their lines
  // depend on the weight format), weights published (no warning, no
  // refusal) and the parameters known. Empty otherwise: the answer is
  // sized into a MemoryAnswer (docs/BENCHMARKS.md, session 18).
  std::string answer_head;
  std::string answer_source;
  // ParametersOfModel and the record's active parameters, with answer_head.
  double parameters = 0;
  std::optional<double> active_parameters;
};
// `model` prepared: what the per-call path computes from it, errors included.
PreparedRecord PrepareRecord(const common::v1::Model& model);

// The estimator's readiness policy: ready while the catalog answers
// (`catalog_answers` OK: its GetCatalogInfo) and, when a snapshot is kept,
// the snapshot is loaded and has heard from the catalog within `max_age`
// (--snapshot_max_age). A snapshot that follows the catalog hears from it at
// least every --watch_progress_interval (10 s by default: a quiet catalog
// sends progress), so an older one has stopped following it (Watch broken,
// messages refused) even if the catalog still answers. OK, or UNAVAILABLE
// saying which condition failed.
absl::Status EstimatorReadiness(const absl::Status& catalog_answers,
                                const CatalogSnapshot* snapshot, absl::Duration max_age);

class CatalogSnapshot {
 public:
  CatalogSnapshot(std::shared_ptr<grpc::Channel> channel, std::string address);
  ~CatalogSnapshot();

  // Starts the background loader; Stop() (or the destructor) ends it.
  void Start();
  void Stop();

  // True once a full load has completed.
  bool loaded() const;
  // The catalog revision the snapshot reflects; 0 before the first load.
  int64_t revision() const;
  // Time since the snapshot last heard from the catalog (a load or a Watch message).
  absl::Duration age() const;
  // When it last heard from the catalog; InfinitePast before the first load.
  absl::Time last_heard() const;
  // Whether it is loaded, the revision and when it was last heard from the
  // catalog, read together under one lock (an answer's CatalogView; the
  // answer cache's lookup, once per call).
  struct Sync {
    int64_t revision = 0;
    absl::Time last_heard;
    bool loaded = false;
  };
  Sync sync() const;
  size_t model_count() const;
  size_t hardware_count() const;

  // A model by resource name or display name (ignoring case and
  // punctuation); nullopt when unknown or ambiguous.
  std::optional<common::v1::Model> FindModel(absl::string_view name) const;
  std::optional<common::v1::Hardware> FindHardware(absl::string_view name) const;
  // Calls `use` with the model FindModel would return, the snapshot's
  // revision and the record's architecture check (ValidateModelArchitecture
  // with the prefix "architecture", computed once when the record was loaded
  // or changed), under the reader lock and without copying the record (keep
  // `use` quick); false when there is none.
  bool UseModel(absl::string_view name,
                const std::function<void(const common::v1::Model&, int64_t revision,
                                         const absl::Status& architecture_check)>& use) const;
  // UseModel for the service's synchronous memory answer: the record, what
  // was prepared from it and the snapshot's state, all read under one reader
  // lock (no std::function: `use` is called in place).
  struct UsedModel {
    const common::v1::Model& model;
    const PreparedRecord& prepared;
    Sync sync;  // loaded is true
  };
  // Calls `use` when the snapshot is loaded and holds the model FindModel
  // would return (keep `use` quick); false otherwise.
  bool UsePreparedModel(absl::string_view name,
                        absl::FunctionRef<void(const UsedModel&)> use) const;
  // Every hardware record, in name order: the same shared list for every
  // caller until the hardware changes.
  SharedRecords<common::v1::Hardware> AllHardware() const;
  // Calls `visit` for every model, under a reader lock (keep it quick).
  void ForEachModel(const std::function<void(const common::v1::Model&)>& visit) const;
  // ForEachModel with each model's position in the walk, and the models'
  // generation read under the same lock: a number that names this state of
  // the models and no other state of any snapshot in the process, so that
  // what is derived from a walk (the records converted for the formulas)
  // can be kept by position until the models change.
  void ForEachModelIndexed(const std::function<void(const common::v1::Model&, size_t)>& visit,
                           uint64_t* generation) const;

  // For tests: blocks until loaded or `timeout` passes.
  bool WaitUntilLoaded(absl::Duration timeout) const;

  // Applies one Watch message (public for tests).
  void Apply(const catalog::v1::WatchResponse& message);
  // For tests: marks a snapshot fed by Apply loaded, as a completed load
  // would (UsePreparedModel answers only from a loaded snapshot).
  void MarkLoadedForTest();

 private:
  struct Records {
    RecordTable<common::v1::Model> models;
    RecordTable<common::v1::Hardware> hardware;
  };

  void Run();
  absl::Status LoadAll();
  // What was prepared from each record (PrepareRecord), by record: the
  // architecture check every memory answer makes (it walks the
  // architecture's fields by reflection: the largest part of the
  // estimator's own CPU per estimate) and the record's architecture as the
  // formulas take it. Records without an architecture whose check passes
  // (most of Epoch's) have no entry: they share one empty PreparedRecord.
  using PreparedRecords =
      absl::flat_hash_map<const common::v1::Model*, std::unique_ptr<const PreparedRecord>>;
  // Prepares `model` (held at this address in records_) into `prepared`.
  static void Prepare(const common::v1::Model& model, PreparedRecords* prepared);
  // What was prepared from `model` (a record of records_).
  const PreparedRecord& PreparedOf(const common::v1::Model* model) const
      ABSL_SHARED_LOCKS_REQUIRED(mutex_);
  // The model FindModel would return; null when unknown or ambiguous.
  const common::v1::Model* FindModelLocked(absl::string_view name) const
      ABSL_SHARED_LOCKS_REQUIRED(mutex_);
  // Rebuilds all_hardware_ from records_ (after the hardware changed).
  void ShareAllHardware() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  absl::Status Follow();

  std::string address_;
  std::unique_ptr<catalog::v1::CatalogService::Stub> stub_;
  std::thread thread_;
  absl::Notification stop_;
  mutable absl::Mutex mutex_;
  Records records_ ABSL_GUARDED_BY(mutex_);
  PreparedRecords prepared_ ABSL_GUARDED_BY(mutex_);
  // records_.hardware in name order, as AllHardware hands it out.
  SharedRecords<common::v1::Hardware> all_hardware_ ABSL_GUARDED_BY(mutex_);
  int64_t revision_ ABSL_GUARDED_BY(mutex_) = 0;
  // Changes with every change of the models (ForEachModelIndexed).
  uint64_t models_generation_ ABSL_GUARDED_BY(mutex_) = 0;
  // The models in name order as a flat list, for models_generation_ (built
  // by the first walk after a change): walking std::map's nodes was a tenth
  // of a runnable list's time. Valid while mutex_ is held for reading.
  mutable absl::Mutex ordered_mutex_;
  mutable uint64_t ordered_generation_ ABSL_GUARDED_BY(ordered_mutex_) = 0;
  mutable std::shared_ptr<const std::vector<const common::v1::Model*>> ordered_
      ABSL_GUARDED_BY(ordered_mutex_);
  bool loaded_ ABSL_GUARDED_BY(mutex_) = false;
  absl::Time last_heard_ ABSL_GUARDED_BY(mutex_) = absl::InfinitePast();
  grpc::ClientContext* watch_context_ ABSL_GUARDED_BY(mutex_) = nullptr;
};

}  // namespace modelatlas::estimator
