// Training answers for a model from any source (a Hugging Face id, a file
// header, an inline count): the source is resolved, then the training
// answers of answers/training.h run on the record it gives.
#include <cmath>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/answers/training.h"
#include "estimator-service/core/model_states.h"
#include "estimator-service/core/units.h"

namespace modelatlas::estimator {
namespace {

// `model` as the training answers take it: a catalog name or an architecture.
absl::Status RewriteTrainingModel(const SourcedModel& sourced, v1::TrainingModel* model) {
  if (!sourced.catalog_name.empty()) {
    model->set_model(sourced.catalog_name);
    return absl::OkStatus();
  }
  if (!sourced.model->has_architecture()) {
    return WithReason(absl::FailedPreconditionError(
                          absl::StrCat("training memory needs an architecture; ", sourced.source,
                                       " gives only a parameter count (send its config.json too)")),
                      "ARCHITECTURE_UNKNOWN");
  }
  common::v1::Architecture arch = sourced.model->architecture();
  // The file's exact count, when it gives one.
  if (sourced.weights.has_value() || !sourced.revision.empty()) {
    if (sourced.model->has_parameters()) {
      arch.set_published_parameter_count(static_cast<int64_t>(sourced.model->parameters()));
    }
  }
  *model->mutable_architecture() = std::move(arch);
  return absl::OkStatus();
}

// Training memory with a parameter count and no architecture: DeepSpeed's
// model-states estimate (core/model_states.h).
absl::StatusOr<v1::EstimateTrainingMemoryResponse> ModelStatesAnswer(
    const SourcedModel& sourced, const v1::TrainingSettings& settings) {
  ModelStatesInput input;
  input.parameters = sourced.model->parameters();
  input.largest_layer_parameters = sourced.largest_layer_parameters;
  input.zero_stage = settings.zero_stage();
  input.gpus = std::max(1, settings.data_parallel());
  input.gpus_per_node = std::min(input.gpus, 8);
  input.offload_optimizer = settings.offload_optimizer();
  input.offload_parameters = settings.offload_parameters();
  if (settings.fine_tuning() == v1::FINE_TUNING_LORA ||
      settings.fine_tuning() == v1::FINE_TUNING_QLORA) {
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "LoRA and QLoRA need an architecture (the adapted layers' shapes); ",
                          sourced.source, " gives only a parameter count")),
                      "ARCHITECTURE_UNKNOWN");
  }
  absl::StatusOr<ModelStatesEstimate> states = EstimateModelStates(input);
  if (!states.ok()) {
    FieldViolations violations;
    for (const FieldViolation& v : GetFieldViolations(states.status())) {
      const bool of_model = v.field == "parameters" || v.field == "largest_layer_parameters";
      violations.Add(absl::StrCat(of_model ? "model.any.inline_model." : "settings.", v.field),
                     v.description);
    }
    return violations.ToStatus();
  }
  v1::EstimateTrainingMemoryResponse response;
  response.set_display_name(sourced.model->display_name());
  response.set_parameters(input.parameters);
  auto* device = response.add_device_lines();
  device->set_component("model_states");
  device->set_bytes(static_cast<int64_t>(std::ceil(states->device_bytes)));
  device->set_arithmetic(states->device_arithmetic);
  response.set_device_total_bytes(device->bytes());
  response.set_device_total_gib(BytesToGiB(states->device_bytes));
  auto* host = response.add_host_lines();
  host->set_component("model_states");
  host->set_bytes(static_cast<int64_t>(std::ceil(states->host_bytes)));
  host->set_arithmetic(states->host_arithmetic);
  response.set_host_total_bytes(host->bytes());
  response.add_notes(
      "no architecture: DeepSpeed's model-states estimate (mixed-precision Adam: weights, "
      "gradients, optimizer states); activations and the runtime overhead are not counted");
  *response.mutable_settings() = settings;
  response.set_source(sourced.source);
  return response;
}

void Label(const SourcedModel& sourced, v1::EstimateTrainingMemoryResponse* response) {
  response->set_source(sourced.source.empty() ? absl::StrCat("catalog record ", response->model())
                                              : sourced.source);
  if (sourced.model.has_value()) response->set_display_name(sourced.model->display_name());
}

}  // namespace

void AnswerTrainingMemoryFromAnySource(
    std::shared_ptr<RecordSource> source, const v1::EstimateTrainingMemoryRequest& request,
    std::function<void(absl::StatusOr<v1::EstimateTrainingMemoryResponse>)> done) {
  if (!request.model().has_any()) {
    return AnswerTrainingMemory(
        std::move(source), request,
        [done = std::move(done)](absl::StatusOr<v1::EstimateTrainingMemoryResponse> answer) {
          if (answer.ok()) Label(SourcedModel{}, &*answer);
          done(std::move(answer));
        });
  }
  ResolveModelSource(
      request.model().any(), "model.any.",
      [source = std::move(source), &request,
       done = std::move(done)](absl::StatusOr<SourcedModel> sourced) mutable {
        if (!sourced.ok()) return done(sourced.status());
        if (sourced->model.has_value() && !sourced->model->has_architecture()) {
          return done(ModelStatesAnswer(*sourced, request.settings()));
        }
        auto rewritten = std::make_shared<v1::EstimateTrainingMemoryRequest>(request);
        if (absl::Status bad = RewriteTrainingModel(*sourced, rewritten->mutable_model());
            !bad.ok()) {
          return done(bad);
        }
        AnswerTrainingMemory(std::move(source), *rewritten,
                             [rewritten, sourced = *std::move(sourced), done = std::move(done)](
                                 absl::StatusOr<v1::EstimateTrainingMemoryResponse> answer) {
                               if (answer.ok()) Label(sourced, &*answer);
                               done(std::move(answer));
                             });
      });
}

void AnswerPlanTrainingFromAnySource(
    std::shared_ptr<RecordSource> source, const v1::PlanTrainingRequest& request,
    std::function<void(absl::StatusOr<v1::PlanTrainingResponse>)> done) {
  if (!request.model().has_any()) {
    return AnswerPlanTraining(
        std::move(source), request,
        [done = std::move(done)](absl::StatusOr<v1::PlanTrainingResponse> answer) {
          if (answer.ok() && answer->has_memory()) Label(SourcedModel{}, answer->mutable_memory());
          done(std::move(answer));
        });
  }
  ResolveModelSource(
      request.model().any(), "model.any.",
      [source = std::move(source), &request,
       done = std::move(done)](absl::StatusOr<SourcedModel> sourced) mutable {
        if (!sourced.ok()) return done(sourced.status());
        auto rewritten = std::make_shared<v1::PlanTrainingRequest>(request);
        if (absl::Status bad = RewriteTrainingModel(*sourced, rewritten->mutable_model());
            !bad.ok()) {
          return done(bad);
        }
        AnswerPlanTraining(std::move(source), *rewritten,
                           [rewritten, sourced = *std::move(sourced), done = std::move(done)](
                               absl::StatusOr<v1::PlanTrainingResponse> answer) {
                             if (answer.ok()) {
                               if (sourced.model.has_value()) {
                                 answer->set_display_name(sourced.model->display_name());
                               }
                               if (answer->has_memory()) Label(sourced, answer->mutable_memory());
                             }
                             done(std::move(answer));
                           });
      });
}

void AnswerTrainingComputeFromAnySource(
    std::shared_ptr<RecordSource> source, const v1::EstimateTrainingComputeRequest& request,
    std::function<void(absl::StatusOr<v1::EstimateTrainingComputeResponse>)> done) {
  if (!request.has_source()) return AnswerTrainingCompute(std::move(source), request, done);
  if (!request.model().empty()) {
    return done(InvalidFieldError("source", "give either model or source, not both"));
  }
  ResolveModelSource(
      request.source(), "source.",
      [source = std::move(source), &request,
       done = std::move(done)](absl::StatusOr<SourcedModel> sourced) mutable {
        if (!sourced.ok()) return done(sourced.status());
        auto rewritten = std::make_shared<v1::EstimateTrainingComputeRequest>(request);
        rewritten->clear_source();
        if (!sourced->catalog_name.empty()) {
          rewritten->set_model(sourced->catalog_name);
        } else if (!rewritten->inputs().has_parameters()) {
          const common::v1::Model& model = *sourced->model;
          double parameters = model.parameters();
          if (!model.has_parameters()) {
            absl::StatusOr<double> counted = ParametersOfModel(model, nullptr);
            if (!counted.ok()) return done(counted.status());
            parameters = *counted;
          }
          rewritten->mutable_inputs()->set_parameters(parameters);
        }
        AnswerTrainingCompute(
            std::move(source), *rewritten,
            [rewritten, sourced = *std::move(sourced),
             done = std::move(done)](absl::StatusOr<v1::EstimateTrainingComputeResponse> answer) {
              if (answer.ok()) {
                answer->set_source(sourced.source.empty()
                                       ? absl::StrCat("catalog record ", answer->model())
                                       : sourced.source);
                if (sourced.model.has_value()) {
                  answer->set_display_name(sourced.model->display_name());
                }
              }
              done(std::move(answer));
            });
      });
}

}  // namespace modelatlas::estimator
