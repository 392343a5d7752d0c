#include "estimator-service/answers/runnable.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
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

absl::StatusOr<RunnableRows> RunnableModelsOn(const RecordSource& source,
                                              const common::v1::Hardware& hardware, int cards,
                                              const ResolvedWorkload& workload,
                                              const query::Filter& filter, bool hypothetical) {
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
  absl::Status abandoned;
  int visits = 0;
  absl::Status visited = source.ForEachModel([&](const common::v1::Model& model) {
    if (!abandoned.ok()) return;  // the rest of the walk does nothing
    if (visits++ % kRecordsPerAbandonCheck == 0) {
      abandoned = CallAbandoned(absl::StrCat("listing the models that run on ", hardware.name(),
                                             " (", visits - 1, " models read)"));
      if (!abandoned.ok()) return;
    }
    if (!filter.Matches(model)) return;
    const std::optional<bool> published = WeightsPublished(model);
    const bool closed = published.has_value() && !*published;
    if (closed && !hypothetical) return;
    InferenceMemoryInput input;
    if (model.has_architecture()) input.architecture = ToCoreArchitecture(model.architecture());
    absl::StatusOr<double> parameters =
        ParametersOfModel(model, input.architecture.has_value() ? &*input.architecture : nullptr);
    if (!parameters.ok()) return;
    input.parameters = *parameters;
    if (model.has_active_parameters()) input.active_parameters = model.active_parameters();
    input.workload = WorkloadForModel(
        workload, input.architecture.has_value() ? input.architecture->max_context_length : 0);
    // The same composition as EstimateInferenceMemory and PlanInference,
    // numbers only: this answer covers the whole catalog.
    absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
    if (!sizing.ok()) return;
    const int fit = FewestCards(*sizing, usable, cards);
    if (fit == 0) return;
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
    row.context_length_tokens = sizing->context_length_tokens;
  });
  if (!visited.ok()) return visited;
  if (!abandoned.ok()) return abandoned;
  runnable.Sort();
  return runnable;
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
                                      request.hypothetical()));
              });
}

}  // namespace modelatlas::estimator
