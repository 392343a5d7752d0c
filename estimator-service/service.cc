#include "estimator-service/service.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/grpc_status.h"
#include "estimator-service/conversions.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/units.h"
#include "estimator-service/hf_config.h"

namespace modelatlas::estimator {
namespace {

constexpr char kNoEstimateClosedWeights[] = "no estimate: weights not published";

// The parameter count to size weights with: the record's figure, else the
// published count of its architecture, else a count from the architecture.
absl::StatusOr<double> ParametersOf(const common::v1::Model& model) {
  if (model.has_parameters()) return model.parameters();
  if (model.architecture().has_published_parameter_count()) {
    return static_cast<double>(model.architecture().published_parameter_count());
  }
  if (model.has_architecture()) {
    absl::StatusOr<ParameterCount> count =
        CountParameters(ToCoreArchitecture(model.architecture()));
    if (!count.ok()) return count.status();
    return count->total;
  }
  return WithReason(absl::FailedPreconditionError(absl::StrCat(
                        "model \"", model.display_name(),
                        "\" has neither a parameter count nor an architecture on record")),
                    "PARAMETERS_UNKNOWN");
}

absl::Status ValidateRequest(const v1::EstimateInferenceMemoryRequest& request) {
  FieldViolations violations;
  switch (request.model_source_case()) {
    case v1::EstimateInferenceMemoryRequest::kModel:
      if (request.model().empty()) violations.Add("model", "must name a catalog model");
      break;
    case v1::EstimateInferenceMemoryRequest::kInlineModel: {
      const auto& inline_model = request.inline_model();
      if (inline_model.has_parameters() &&
          (!std::isfinite(inline_model.parameters()) || inline_model.parameters() <= 0)) {
        violations.Add("inline_model.parameters", "must be a positive finite number");
      }
      if (!inline_model.has_parameters() && !inline_model.has_architecture() &&
          inline_model.hf_config_json().empty()) {
        violations.Add("inline_model", "needs parameters, an architecture or hf_config_json");
      }
      break;
    }
    default:
      violations.Add("model_source", "give either model (a catalog name) or inline_model");
  }
  if (request.context_length_tokens() < 0) {
    violations.Add("context_length_tokens",
                   absl::StrCat("must not be negative, got ", request.context_length_tokens()));
  }
  if (request.batch_size() < 0) {
    violations.Add("batch_size", absl::StrCat("must not be negative, got ", request.batch_size()));
  }
  if (request.has_overhead_bytes() && request.overhead_bytes() < 0) {
    violations.Add("overhead_bytes",
                   absl::StrCat("must not be negative, got ", request.overhead_bytes()));
  }
  return violations.ToStatus();
}

absl::StatusOr<common::v1::Model> ModelFromInline(const v1::InlineModel& inline_model) {
  common::v1::Model model;
  if (!inline_model.hf_config_json().empty()) {
    absl::StatusOr<common::v1::Architecture> arch =
        ArchitectureFromHfConfig(inline_model.hf_config_json());
    if (!arch.ok()) return PrefixFieldViolations(arch.status(), "inline_model.");
    *model.mutable_architecture() = *arch;
  }
  if (inline_model.has_parameters()) model.set_parameters(inline_model.parameters());
  if (inline_model.has_architecture()) *model.mutable_architecture() = inline_model.architecture();
  model.set_display_name(inline_model.display_name().empty() ? "inline model"
                                                             : inline_model.display_name());
  // A model described by the caller is one the caller can run.
  model.set_open_model_weights(true);
  return model;
}

}  // namespace

absl::StatusOr<v1::EstimateInferenceMemoryResponse> EstimateMemoryForModel(
    const common::v1::Model& model, const v1::EstimateInferenceMemoryRequest& request) {
  v1::EstimateInferenceMemoryResponse response;
  response.set_model(model.name());
  response.set_display_name(model.display_name());
  response.set_catalog_revision(model.revision());

  const std::optional<bool> published = WeightsPublished(model);
  if (published.has_value() && !*published) {
    if (!request.hypothetical()) {
      response.set_available(false);
      response.set_no_estimate_reason(kNoEstimateClosedWeights);
      return response;
    }
    response.set_hypothetical(true);
    response.add_warnings(
        "hypothetical: the weights of this model are not published; this is what it would take "
        "if they were");
  } else if (!published.has_value()) {
    response.add_warnings("whether the weights are published is not on record");
  }

  absl::StatusOr<double> parameters = ParametersOf(model);
  if (!parameters.ok()) return parameters.status();

  InferenceMemoryInput input;
  input.parameters = *parameters;
  if (model.has_architecture()) input.architecture = ToCoreArchitecture(model.architecture());
  absl::StatusOr<NumberFormat> weights =
      ToCoreNumberFormat(request.weight_format(), NumberFormat::kBf16, "weight_format");
  if (!weights.ok()) return weights.status();
  absl::StatusOr<NumberFormat> kv =
      ToCoreNumberFormat(request.kv_cache_format(), NumberFormat::kBf16, "kv_cache_format");
  if (!kv.ok()) return kv.status();
  input.weight_format = *weights;
  input.kv_cache_format = *kv;
  input.context_length_tokens = request.context_length_tokens();
  input.quantization_group_size = request.quantization_group_size();
  input.prefill_chunk_tokens = request.prefill_chunk_tokens();
  input.batch_size = request.batch_size() > 0 ? request.batch_size() : 1;
  if (request.has_overhead_bytes()) input.overhead_bytes = request.overhead_bytes();

  absl::StatusOr<InferenceMemoryEstimate> estimate = EstimateInferenceMemory(input);
  if (!estimate.ok()) return estimate.status();

  response.set_available(true);
  response.set_parameters(*parameters);
  for (const EstimateLine& line : estimate->lines) {
    auto* out = response.add_lines();
    out->set_component(line.component);
    out->set_bytes(line.bytes);
    out->set_arithmetic(line.arithmetic);
  }
  for (const std::string& warning : estimate->warnings) response.add_warnings(warning);
  response.set_total_bytes(estimate->total_bytes);
  response.set_total_gib(BytesToGiB(static_cast<double>(estimate->total_bytes)));
  response.set_total_gb(BytesToGB(static_cast<double>(estimate->total_bytes)));
  return response;
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::EstimateInferenceMemory(
    grpc::CallbackServerContext* context, const v1::EstimateInferenceMemoryRequest* request,
    v1::EstimateInferenceMemoryResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto finish = [reactor, response](absl::StatusOr<v1::EstimateInferenceMemoryResponse> result) {
    if (result.ok()) *response = *std::move(result);
    reactor->Finish(ToGrpcStatus(result.status()));
  };
  if (absl::Status invalid = ValidateRequest(*request); !invalid.ok()) {
    finish(invalid);
    return reactor;
  }
  if (request->has_inline_model()) {
    absl::StatusOr<common::v1::Model> model = ModelFromInline(request->inline_model());
    finish(model.ok() ? EstimateMemoryForModel(*model, *request)
                      : absl::StatusOr<v1::EstimateInferenceMemoryResponse>(model.status()));
    return reactor;
  }
  catalog_->GetModel(context, request->model(),
                     [request, finish](absl::StatusOr<common::v1::Model> model) {
                       if (!model.ok()) return finish(model.status());
                       finish(EstimateMemoryForModel(*model, *request));
                     });
  return reactor;
}

absl::StatusOr<v1::CountParametersResponse> CountParametersOf(
    const common::v1::Architecture& architecture, const v1::CountParametersRequest& request) {
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
  for (const ParameterComponent& component : count->components) {
    auto* out = response.add_components();
    out->set_name(component.name);
    out->set_parameters(component.parameters);
    out->set_arithmetic(component.arithmetic);
  }
  *response.mutable_architecture() = architecture;
  return response;
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::CountParameters(
    grpc::CallbackServerContext* context, const v1::CountParametersRequest* request,
    v1::CountParametersResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto finish = [reactor, response](absl::StatusOr<v1::CountParametersResponse> result) {
    if (result.ok()) *response = *std::move(result);
    reactor->Finish(ToGrpcStatus(result.status()));
  };
  switch (request->source_case()) {
    case v1::CountParametersRequest::kArchitecture:
      finish(CountParametersOf(request->architecture(), *request));
      break;
    case v1::CountParametersRequest::kHfConfigJson: {
      absl::StatusOr<common::v1::Architecture> arch =
          ArchitectureFromHfConfig(request->hf_config_json());
      finish(arch.ok() ? CountParametersOf(*arch, *request)
                       : absl::StatusOr<v1::CountParametersResponse>(arch.status()));
      break;
    }
    case v1::CountParametersRequest::kModel:
      catalog_->GetModel(
          context, request->model(), [request, finish](absl::StatusOr<common::v1::Model> model) {
            if (!model.ok()) return finish(model.status());
            if (!model->has_architecture()) {
              return finish(WithReason(
                  absl::FailedPreconditionError(absl::StrCat("model \"", model->display_name(),
                                                             "\" has no architecture on record")),
                  "ARCHITECTURE_UNKNOWN"));
            }
            absl::StatusOr<v1::CountParametersResponse> result =
                CountParametersOf(model->architecture(), *request);
            if (result.ok()) {
              result->set_model(model->name());
              result->set_display_name(model->display_name());
              result->set_catalog_revision(model->revision());
            }
            finish(std::move(result));
          });
      break;
    default:
      finish(InvalidFieldError("source", "give model, architecture or hf_config_json"));
  }
  return reactor;
}

}  // namespace modelatlas::estimator
