// CountParameters: the parameters of an architecture, a config.json, a
// catalog model's or any model source's, each part with its arithmetic.
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/formats/hf_config.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/answers/records.h"
#include "estimator-service/core/parameters.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace modelatlas::estimator {

absl::StatusOr<v1::CountParametersResponse> CountParametersOf(
    const common::v1::Architecture& architecture, const v1::CountParametersRequest& request) {
  if (absl::Status invalid = ValidateArchitecture(architecture, "architecture"); !invalid.ok()) {
    return invalid;
  }
  absl::StatusOr<ParameterCount> count =
      CountParameters(ToCoreArchitecture(architecture),
                      ParameterCountOptions{.include_norms = !request.exclude_norms(),
                                            .include_biases = !request.exclude_biases()});
  if (!count.ok()) return count.status();
  v1::CountParametersResponse response;
  response.set_total_parameters(count->total);
  response.set_embedding_parameters(count->embedding);
  response.set_non_embedding_parameters(count->non_embedding);
  response.set_active_parameters(count->active);
  if (count->multi_token_prediction > 0) {
    response.set_multi_token_prediction_parameters(count->multi_token_prediction);
  }
  for (const ParameterComponent& component : count->components) {
    auto* out = response.add_components();
    out->set_name(component.name);
    out->set_parameters(component.parameters);
    out->set_arithmetic(component.arithmetic);
  }
  // A multimodal model's encoders and projectors: components of their own,
  // in the total (the checkpoint holds them) and in the non-embedding count.
  absl::StatusOr<std::vector<CountedEncoderPart>> parts = CountEncoderParts(architecture);
  if (!parts.ok()) return parts.status();
  for (CountedEncoderPart& part : *parts) {
    auto* out = response.add_components();
    out->set_name(part.kind);
    out->set_parameters(part.parameters);
    out->set_arithmetic(std::move(part.arithmetic));
    response.set_total_parameters(response.total_parameters() + part.parameters);
    response.set_non_embedding_parameters(response.non_embedding_parameters() + part.parameters);
    response.set_active_parameters(response.active_parameters() + part.parameters);
  }
  *response.mutable_architecture() = architecture;
  return response;
}

void AnswerCountParameters(std::shared_ptr<RecordSource> source,
                           const v1::CountParametersRequest& request,
                           AnswerDone<v1::CountParametersResponse> done) {
  switch (request.source_case()) {
    case v1::CountParametersRequest::kArchitecture:
      return done(CountParametersOf(request.architecture(), request));
    case v1::CountParametersRequest::kHfConfigJson: {
      absl::StatusOr<common::v1::Architecture> arch =
          ArchitectureFromHfConfig(request.hf_config_json());
      if (!arch.ok()) return done(arch.status());
      absl::StatusOr<v1::CountParametersResponse> result = CountParametersOf(*arch, request);
      if (result.ok()) result->set_source(InlineConfigSource(*arch));
      return done(std::move(result));
    }
    case v1::CountParametersRequest::kModelSource:
      return WithSourcedModel(
          std::move(source), request.model_source(), RecordsWanted{},
          [&request, done = std::move(done)](absl::StatusOr<Records> records,
                                             const SourcedModel& sourced) {
            if (!records.ok()) return done(records.status());
            const common::v1::Model& model = *records->model;
            if (!model.has_architecture()) {
              return done(
                  WithReason(absl::FailedPreconditionError(absl::StrCat(
                                 "model \"", model.display_name(), "\" has no architecture (",
                                 sourced.source.empty() ? "catalog" : sourced.source, ")")),
                             "ARCHITECTURE_UNKNOWN"));
            }
            absl::StatusOr<v1::CountParametersResponse> result =
                CountParametersOf(model.architecture(), request);
            if (result.ok()) {
              result->set_model(model.name());
              result->set_display_name(model.display_name());
              result->set_catalog_revision(model.revision());
              result->set_source(sourced.source);
              result->set_source_revision(sourced.revision);
              result->set_source_url(sourced.url);
              if (sourced.weights.has_value()) {
                result->set_tensor_parameters(sourced.weights->parameters);
              } else if (sourced.model.has_value() && sourced.model->has_parameters() &&
                         !sourced.revision.empty()) {
                result->set_tensor_parameters(sourced.model->parameters());
              }
            }
            done(std::move(result));
          });
    case v1::CountParametersRequest::kModel: {
      RecordsWanted wanted;
      wanted.model = request.model();
      return ReadRecords(std::move(source), std::move(wanted),
                         [&request, done = std::move(done)](absl::StatusOr<Records> records) {
                           if (!records.ok()) return done(records.status());
                           const common::v1::Model& model = *records->model;
                           if (!model.has_architecture()) {
                             return done(WithReason(absl::FailedPreconditionError(absl::StrCat(
                                                        "model \"", model.display_name(),
                                                        "\" has no architecture on record")),
                                                    "ARCHITECTURE_UNKNOWN"));
                           }
                           absl::StatusOr<v1::CountParametersResponse> result =
                               CountParametersOf(model.architecture(), request);
                           if (result.ok()) {
                             result->set_model(model.name());
                             result->set_display_name(model.display_name());
                             result->set_catalog_revision(model.revision());
                             result->set_source(absl::StrCat("catalog record ", model.name()));
                           }
                           done(std::move(result));
                         });
    }
    default:
      return done(
          InvalidFieldError("source", "give model, architecture, hf_config_json or model_source"));
  }
}

}  // namespace modelatlas::estimator
