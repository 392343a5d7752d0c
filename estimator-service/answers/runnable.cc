#include "estimator-service/answers/runnable.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/query/filter.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/answers/records.h"
#include "estimator-service/core/fit_matrix.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/core/speed.h"

namespace modelatlas::estimator {

namespace {

// The models prepared by the last complete walk, by its generation.
struct KeptModels {
  absl::Mutex mutex;
  uint64_t generation ABSL_GUARDED_BY(mutex) = 0;
  std::shared_ptr<const std::vector<PreparedModel>> models ABSL_GUARDED_BY(mutex);
};
KeptModels& Kept() {
  static KeptModels* kept = new KeptModels;
  return *kept;
}

}  // namespace

absl::StatusOr<RunnableRows> RunnableModelsOn(const RecordSource& source,
                                              const common::v1::Hardware& hardware, int cards,
                                              const ResolvedWorkload& workload,
                                              const query::Filter& filter, bool hypothetical,
                                              v1::RunnableOrder order) {
  const DeviceSpec device = DeviceOf(hardware, workload.weight_format);
  const double usable = UsableBytesPerCard(device, workload.memory_utilization);
  // Tensor parallelism's link, once for the hardware (not per model).
  const std::optional<Link> within_node = WithinNodeLink(device.links);
  RunnableRows runnable(source.revision(), ToProto(workload));
  {
    v1::DeviceMemory memory;
    ToProto(AllocatableMemoryOfRecord(hardware), &memory);
    runnable.SetDeviceMemory(memory, static_cast<int64_t>(std::floor(usable)));
  }
  if (device.bandwidth_doubtful) {
    runnable.SetDecodeBoundDoubtful(DoubtfulBandwidthReason(
        device.memory_bytes, device.bandwidth_bytes_per_second.value_or(0)));
  }
  absl::Status abandoned;
  int visits = 0;
  absl::Status visited = ForEachPreparedModel(
      source, [&](const common::v1::Model& model, const PreparedModel& prepared) {
        if (visits++ % kRecordsPerAbandonCheck == 0) {
          abandoned = CallAbandoned(absl::StrCat("listing the models that run on ", hardware.name(),
                                                 " (", visits - 1, " models read)"));
          if (!abandoned.ok()) return false;  // the rest of the walk does nothing
        }
        if (!filter.Matches(model)) return true;
        const std::optional<bool>& published = prepared.weights_published;
        const bool closed = published.has_value() && !*published;
        if (closed && !hypothetical) return true;
        if (!prepared.parameters.ok()) return true;
        InferenceMemoryInput input;
        if (prepared.architecture != nullptr) input.architecture = *prepared.architecture;
        input.parameters = *prepared.parameters;
        if (model.has_active_parameters()) input.active_parameters = model.active_parameters();
        input.workload = WorkloadForModel(workload, input.architecture);
        // The same composition as EstimateInferenceMemory and PlanInference,
        // numbers only: this answer covers the whole catalog.
        absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
        if (!sizing.ok()) return true;
        const int fit = FewestCards(*sizing, usable, cards);
        if (fit == 0) return true;
        const double required = RequiredBytesPerCard(*sizing, fit);
        RunnableRow& row = runnable.Add(model.name(), model.display_name());
        row.parameters = sizing->parameters;
        row.cards = fit;
        row.required_bytes_per_card = static_cast<int64_t>(std::ceil(required));
        row.headroom_bytes_per_card = static_cast<int64_t>(std::floor(usable - required));
        // On-chip SRAM designs get no roofline figure (core/speed.h). The
        // decode bound is the plan's (core/speed.h): links and compute roof.
        if (device.bandwidth_bytes_per_second.has_value() && !device.roofline_does_not_apply) {
          const SpeedInput speed{.sizing = &*sizing,
                                 .layout = {.tensor_parallel = fit},
                                 .batch_size = input.workload.batch_size,
                                 .bandwidth_bytes_per_second = device.bandwidth_bytes_per_second,
                                 .peak_flops = device.peak_flops,
                                 .within_node = fit > 1 ? within_node : std::nullopt};
          row.decode_tokens_per_second = BoundDecode(speed).tokens_per_second_per_sequence;
        }
        if (device.peak_flops.has_value() && !device.roofline_does_not_apply) {
          row.prefill_tokens_per_second = PrefillTokensPerSecond(
              fit, *device.peak_flops, workload.prefill_efficiency, sizing->active_parameters());
        }
        row.hypothetical = closed;
        // SizeInference counts a KV cache (and activations) only from an
        // architecture with layers: without one the row says so, as the
        // fit matrix and the memory answer's warning do.
        row.kv_cache_not_counted =
            !(input.architecture.has_value() && input.architecture->num_layers > 0);
        row.context_length_tokens = sizing->context_length_tokens;
        row.weight_format = input.workload.weight_format;
        row.weight_format_from_checkpoint = input.workload.weight_format_from_checkpoint;
        return true;
      });
  if (!visited.ok()) return visited;
  if (!abandoned.ok()) return abandoned;
  runnable.Sort(order);
  return runnable;
}

PreparedModel PrepareModel(const common::v1::Model& model) {
  PreparedModel prepared;
  if (model.has_architecture()) {
    prepared.architecture =
        std::make_shared<const Architecture>(ToCoreArchitecture(model.architecture()));
  }
  prepared.parameters = ParametersOfModel(model, prepared.architecture.get());
  prepared.architecture_valid = ValidateModelArchitecture(model, "architecture").ok();
  prepared.weights_published = WeightsPublished(model);
  if (model.has_architecture() && model.architecture().encoder_parts_size() > 0) {
    absl::StatusOr<std::vector<CountedEncoderPart>> counted =
        CountEncoderParts(model.architecture());
    prepared.encoder_parts_counted = counted.ok();
    if (counted.ok()) {
      for (const CountedEncoderPart& part : *counted) {
        prepared.encoder_parts.push_back(part.parameters);
      }
    }
  }
  return prepared;
}

absl::Status ForEachPreparedModel(
    const RecordSource& source,
    const std::function<bool(const common::v1::Model&, const PreparedModel&)>& visit) {
  std::shared_ptr<const std::vector<PreparedModel>> kept;
  uint64_t kept_generation = 0;
  {
    absl::MutexLock lock(&Kept().mutex);
    kept = Kept().models;
    kept_generation = Kept().generation;
  }
  std::vector<PreparedModel> fresh;
  bool stopped = false;
  uint64_t generation = 0;
  absl::Status walked = source.ForEachModelIndexed(
      [&](const common::v1::Model& model, size_t index) {
        if (stopped) return;
        // The same generation: the same models at the same positions.
        if (generation != 0 && generation == kept_generation && kept != nullptr &&
            index < kept->size()) {
          stopped = !visit(model, (*kept)[index]);
          return;
        }
        fresh.push_back(PrepareModel(model));
        stopped = !visit(model, fresh.back());
      },
      &generation);
  if (walked.ok() && !stopped && generation != 0 && generation != kept_generation) {
    auto models = std::make_shared<const std::vector<PreparedModel>>(std::move(fresh));
    absl::MutexLock lock(&Kept().mutex);
    Kept().generation = generation;
    Kept().models = std::move(models);
  }
  return walked;
}

void AnswerRunnableModels(std::shared_ptr<RecordSource> source,
                          const v1::ListRunnableModelsRequest& request,
                          AnswerDone<RunnableRows> done) {
  FieldViolations violations;
  const int cards = request.cards() == 0 ? 1 : request.cards();
  if (cards < 1 || cards > 1024 || (cards & (cards - 1)) != 0) {
    violations.Add("cards",
                   absl::StrCat("must be a power of two up to 1024, got ", request.cards()));
  }
  if (request.hardware().empty()) violations.Add("hardware", "required");
  if (!v1::RunnableOrder_IsValid(request.order())) {
    violations.Add("order", absl::StrCat("unknown value ", request.order(),
                                         "; one of BEST_FIT, MOST_PARAMETERS, FASTEST"));
  }
  absl::StatusOr<ResolvedWorkload> workload = ResolveWorkload(request.workload());
  if (!workload.ok()) {
    const std::vector<FieldViolation> found = GetFieldViolations(workload.status());
    if (found.empty()) return done(workload.status());
    for (const FieldViolation& v : found) {
      violations.Add(absl::StrCat("workload.", v.field), v.description);
    }
  }
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return done(invalid);
  absl::StatusOr<query::Filter> filter =
      query::Filter::Parse(request.filter(), common::v1::Model::descriptor());
  if (!filter.ok()) return done(filter.status());

  RecordsWanted wanted;
  wanted.hardware.push_back(request.hardware());
  std::shared_ptr<RecordSource> reader = source;
  ReadRecords(std::move(source), std::move(wanted),
              [reader = std::move(reader), cards, workload = *workload, filter = *std::move(filter),
               &request, done = std::move(done)](absl::StatusOr<Records> records) {
                if (!records.ok()) return done(records.status());
                if (records->hardware.empty()) {
                  return done(ResourceNotFoundError("Hardware", request.hardware()));
                }
                if (absl::Status unusable = CheckDeviceFigures(records->hardware.front());
                    !unusable.ok()) {
                  return done(unusable);
                }
                done(RunnableModelsOn(*reader, records->hardware.front(), cards, workload, filter,
                                      request.hypothetical(), request.order()));
              });
}

}  // namespace modelatlas::estimator
