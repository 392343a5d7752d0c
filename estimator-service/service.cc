#include "estimator-service/service.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/formats/hf_config.h"
#include "common/query/filter.h"
#include "common/status/errors.h"
#include "common/status/grpc_status.h"
#include "estimator-service/conversions.h"
#include "estimator-service/core/fit_matrix.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/core/units.h"
#include "estimator-service/list_writer.h"
#include "estimator-service/training.h"

namespace modelatlas::estimator {
namespace {

constexpr char kNoEstimateClosedWeights[] = "no estimate: weights not published";

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
  if (absl::Status invalid =
          ValidateArchitecture(model.architecture(), "inline_model.architecture");
      !invalid.ok()) {
    return invalid;
  }
  model.set_display_name(inline_model.display_name().empty() ? "inline model"
                                                             : inline_model.display_name());
  // A model described by the caller is one the caller can run.
  model.set_open_model_weights(true);
  return model;
}

DeviceSpec DeviceOf(const common::v1::Hardware& hw, NumberFormat format) {
  DeviceSpec device;
  device.name = hw.name();
  device.display_name = hw.display_name();
  device.memory_bytes = hw.memory_bytes();
  if (hw.has_memory_bandwidth_bytes_per_second()) {
    device.bandwidth_bytes_per_second = hw.memory_bandwidth_bytes_per_second();
  }
  device.peak_flops = PeakForFormat(hw.peak(), format);
  if (hw.has_cloud_price_usd_per_chip_hour()) {
    device.price_usd_per_hour = hw.cloud_price_usd_per_chip_hour();
  }
  device.unified_memory = hw.unified_memory();
  return device;
}

}  // namespace

absl::Status ValidatePlanRequest(const v1::PlanInferenceRequest& request) {
  FieldViolations violations;
  if (!v1::PlanObjective_IsValid(request.objective())) {
    violations.Add("objective", absl::StrCat("has no value ", request.objective()));
  }
  if (request.prompt_tokens() < 0 || request.prompt_tokens() > 100'000'000) {
    violations.Add("prompt_tokens",
                   absl::StrCat("must be between 0 and 100000000, got ", request.prompt_tokens()));
  }
  for (const auto& [field, value] :
       {std::pair<const char*, double>{"prefill_efficiency", request.prefill_efficiency()},
        {"memory_utilization", request.memory_utilization()}}) {
    if (!std::isfinite(value) || value < 0 || value > 1) {
      violations.Add(
          field, absl::StrCat("must be a fraction in (0, 1], or 0 for the default; got ", value));
    }
  }
  const int cards = request.max_cards();
  if (cards < 0 || cards > 1024 || (cards & (cards - 1)) != 0) {
    violations.Add("max_cards", absl::StrCat("must be a power of two up to 1024, got ", cards));
  }
  if (request.hardware_size() > 1000) {
    violations.Add("hardware", absl::StrCat("at most 1000 names, got ", request.hardware_size()));
  }
  if (!request.has_workload()) violations.Add("workload", "required");
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;
  return PrefixFieldViolations(ValidateRequest(request.workload()), "workload.");
}

absl::StatusOr<v1::PlanInferenceResponse> PlanInferenceFor(
    const common::v1::Model& model, const std::vector<common::v1::Hardware>& hardware,
    const v1::PlanInferenceRequest& request) {
  if (absl::Status invalid = ValidateArchitecture(model.architecture(), "architecture");
      !invalid.ok()) {
    return invalid;
  }
  v1::PlanInferenceResponse response;
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> memory =
      EstimateMemoryForModel(model, request.workload());
  if (!memory.ok()) return PrefixFieldViolations(memory.status(), "workload.");
  *response.mutable_memory() = *memory;
  if (!memory->available()) return response;  // "no estimate: weights not published"

  Workload workload;
  for (const auto& line : memory->lines()) {
    const double bytes = static_cast<double>(line.bytes());
    if (line.component() == "weights") workload.weight_bytes = bytes;
    if (line.component() == "kv_cache") workload.kv_cache_bytes = bytes;
    if (line.component() == "activations") workload.activation_bytes = bytes;
    if (line.component() == "overhead") workload.overhead_bytes = bytes;
  }
  workload.total_parameters = memory->parameters();
  workload.active_parameters = memory->parameters();
  if (model.has_architecture()) {
    const Architecture arch = ToCoreArchitecture(model.architecture());
    workload.num_attention_heads = arch.num_attention_heads;
    workload.num_key_value_heads = arch.EffectiveKvHeads();
    absl::StatusOr<ParameterCount> count = CountParameterTotals(arch);
    if (count.ok() && count->total > 0) {
      workload.active_parameters = memory->parameters() * count->active / count->total;
    }
  }
  workload.batch_size = request.workload().batch_size() > 0 ? request.workload().batch_size() : 1;
  workload.prompt_tokens = request.prompt_tokens() > 0 ? request.prompt_tokens() : 1000;
  if (request.prefill_efficiency() > 0) workload.prefill_efficiency = request.prefill_efficiency();
  if (request.memory_utilization() > 0) workload.memory_utilization = request.memory_utilization();
  if (request.max_cards() > 0) workload.max_cards = request.max_cards();

  absl::StatusOr<NumberFormat> format = ToCoreNumberFormat(
      request.workload().weight_format(), NumberFormat::kBf16, "workload.weight_format");
  if (!format.ok()) return format.status();
  std::vector<DevicePlan> plans;
  for (const common::v1::Hardware& hw : hardware) {
    plans.push_back(PlanOnDevice(workload, DeviceOf(hw, *format)));
    response.set_catalog_revision(std::max(response.catalog_revision(), hw.revision()));
  }
  const PlanObjective objective =
      request.objective() == v1::PLAN_OBJECTIVE_CHEAPEST  ? PlanObjective::kCheapest
      : request.objective() == v1::PLAN_OBJECTIVE_FASTEST ? PlanObjective::kFastest
                                                          : PlanObjective::kFewestCards;
  RankPlans(objective, &plans);
  for (const DevicePlan& plan : plans) {
    auto* out = response.add_plans();
    out->set_hardware(plan.name);
    out->set_display_name(plan.display_name);
    out->set_fits(plan.fits);
    out->set_fits_on_one_card(plan.fits_on_one_card);
    out->set_cards(plan.cards);
    out->set_required_bytes_per_card(static_cast<int64_t>(std::ceil(plan.required_bytes_per_card)));
    out->set_usable_bytes_per_card(static_cast<int64_t>(std::floor(plan.usable_bytes_per_card)));
    out->set_headroom_bytes_per_card(out->usable_bytes_per_card() - out->required_bytes_per_card());
    if (plan.decode_tokens_per_second)
      out->set_decode_tokens_per_second(*plan.decode_tokens_per_second);
    if (plan.decode_tokens_per_second_all) {
      out->set_decode_tokens_per_second_batch(*plan.decode_tokens_per_second_all);
    }
    if (plan.prefill_tokens_per_second) {
      out->set_prefill_tokens_per_second(*plan.prefill_tokens_per_second);
    }
    if (plan.time_to_first_token_seconds) {
      out->set_time_to_first_token_seconds(*plan.time_to_first_token_seconds);
    }
    if (plan.cost_usd_per_million_tokens) {
      out->set_cost_usd_per_million_tokens(*plan.cost_usd_per_million_tokens);
    }
    out->set_reason(plan.reason);
    for (const std::string& line : plan.arithmetic) out->add_arithmetic(line);
  }
  return response;
}

absl::StatusOr<v1::EstimateInferenceMemoryResponse> EstimateMemoryForModel(
    const common::v1::Model& model, const v1::EstimateInferenceMemoryRequest& request) {
  if (absl::Status invalid = ValidateArchitecture(model.architecture(), "architecture");
      !invalid.ok()) {
    return invalid;
  }
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

  absl::StatusOr<double> parameters = ParametersOfModel(model);
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

template <typename Response>
std::function<void(absl::StatusOr<Response>)> EstimatorServiceImpl::Finisher(
    grpc::ServerUnaryReactor* reactor, Response* response, const char* kind) {
  return [this, reactor, response, kind](absl::StatusOr<Response> result) {
    if (result.ok()) {
      if (on_estimate_) on_estimate_(kind);
      *response = *std::move(result);
    }
    reactor->Finish(ToGrpcStatus(result.status()));
  };
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::EstimateInferenceMemory(
    grpc::CallbackServerContext* context, const v1::EstimateInferenceMemoryRequest* request,
    v1::EstimateInferenceMemoryResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto finish = Finisher(reactor, response, "inference_memory");
  if (absl::Status busy = Admit(); !busy.ok()) {
    finish(busy);
    return reactor;
  }
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
  // The hot path: a catalogued model estimated in place in the snapshot
  // (copying the record cost more than the estimate).
  if (snapshot_ != nullptr && snapshot_->loaded()) {
    absl::StatusOr<v1::EstimateInferenceMemoryResponse> estimate;
    const bool found = snapshot_->UseModel(request->model(),
                                           [&](const common::v1::Model& model, int64_t revision) {
                                             estimate = EstimateMemoryForModel(model, *request);
                                             if (estimate.ok())
                                               estimate->set_catalog_revision(revision);
                                           });
    if (found) {
      finish(std::move(estimate));
      return reactor;
    }
  }
  ResolveModel(context, request->model(),
               [request, finish](absl::StatusOr<common::v1::Model> model) {
                 if (!model.ok()) return finish(model.status());
                 finish(EstimateMemoryForModel(*model, *request));
               });
  return reactor;
}

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
  for (const ParameterComponent& component : count->components) {
    auto* out = response.add_components();
    out->set_name(component.name);
    out->set_parameters(component.parameters);
    out->set_arithmetic(component.arithmetic);
  }
  *response.mutable_architecture() = architecture;
  return response;
}

void EstimatorServiceImpl::ResolveModel(
    grpc::CallbackServerContext* context, const std::string& name,
    std::function<void(absl::StatusOr<common::v1::Model>)> done) {
  if (snapshot_ != nullptr && snapshot_->loaded()) {
    std::optional<common::v1::Model> model = snapshot_->FindModel(name);
    if (model.has_value()) {
      // Answers say which catalog revision they used: the snapshot's.
      model->set_revision(snapshot_->revision());
      return done(*std::move(model));
    }
  }
  catalog_->GetModel(context, name, std::move(done));
}

void EstimatorServiceImpl::ResolveHardware(
    grpc::CallbackServerContext* context, const std::vector<std::string>& names,
    std::function<void(absl::StatusOr<std::vector<common::v1::Hardware>>)> done) {
  if (snapshot_ != nullptr && snapshot_->loaded()) {
    if (names.empty()) return done(snapshot_->AllHardware());
    std::vector<common::v1::Hardware> found;
    for (const std::string& name : names) {
      std::optional<common::v1::Hardware> hw = snapshot_->FindHardware(name);
      if (!hw.has_value()) break;
      found.push_back(*std::move(hw));
    }
    if (found.size() == names.size()) return done(std::move(found));
  }
  catalog_->GetHardware(context, names, std::move(done));
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::PlanInference(
    grpc::CallbackServerContext* context, const v1::PlanInferenceRequest* request,
    v1::PlanInferenceResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto finish = Finisher(reactor, response, "plan_inference");
  if (absl::Status busy = Admit(); !busy.ok()) {
    finish(busy);
    return reactor;
  }
  if (absl::Status invalid = ValidatePlanRequest(*request); !invalid.ok()) {
    finish(invalid);
    return reactor;
  }
  const std::vector<std::string> names(request->hardware().begin(), request->hardware().end());
  // The hardware, then the model (from the request or the catalog), then the plan.
  auto with_model = [this, context, request, names, finish](common::v1::Model model) {
    ResolveHardware(context, names,
                    [request, finish, model = std::move(model)](
                        absl::StatusOr<std::vector<common::v1::Hardware>> hardware) {
                      if (!hardware.ok()) return finish(hardware.status());
                      finish(PlanInferenceFor(model, *hardware, *request));
                    });
  };
  if (request->workload().has_inline_model()) {
    absl::StatusOr<common::v1::Model> model = ModelFromInline(request->workload().inline_model());
    if (!model.ok()) {
      finish(PrefixFieldViolations(model.status(), "workload."));
    } else {
      with_model(*std::move(model));
    }
    return reactor;
  }
  ResolveModel(context, request->workload().model(),
               [finish, with_model](absl::StatusOr<common::v1::Model> model) {
                 if (!model.ok()) return finish(model.status());
                 with_model(*std::move(model));
               });
  return reactor;
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::CountParameters(
    grpc::CallbackServerContext* context, const v1::CountParametersRequest* request,
    v1::CountParametersResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto finish = Finisher(reactor, response, "count_parameters");
  if (absl::Status busy = Admit(); !busy.ok()) {
    finish(busy);
    return reactor;
  }
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
      ResolveModel(
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

namespace {

// Rows per stream message: one gRPC message per row cost about 15 us each,
// a whole message of rows little more than one.
constexpr int kRunnableRowsPerMessage = 256;

// One row of the fit matrix before it becomes a message. Rows are kept as
// plain numbers, their names in one buffer for the whole answer, sorted by
// position, and copied into one reused message at a time (see
// SourceWriter): a RunnableModel message per row, allocated, moved and
// freed, cost a third of the answer's time, and a string per name a tenth.
struct RunnableRow {
  size_t names_offset = 0;  // into RunnableRows' buffer: model, then display name
  uint32_t model_size = 0;
  uint32_t display_name_size = 0;
  double parameters = 0;
  int cards = 0;
  int64_t required_bytes_per_card = 0;
  int64_t headroom_bytes_per_card = 0;
  std::optional<double> decode_tokens_per_second;
  std::optional<double> prefill_tokens_per_second;
  bool hypothetical = false;
};

// The rows of an answer, best fit first (fewest cards, then most headroom),
// kRunnableRowsPerMessage to a message.
class RunnableRows {
 public:
  explicit RunnableRows(int64_t revision) : revision_(revision) {}

  // A new row named so; the caller sets its figures.
  RunnableRow& Add(absl::string_view model, absl::string_view display_name) {
    RunnableRow& row = rows_.emplace_back();
    row.names_offset = names_.size();
    row.model_size = static_cast<uint32_t>(model.size());
    row.display_name_size = static_cast<uint32_t>(display_name.size());
    names_.append(model.data(), model.size()).append(display_name.data(), display_name.size());
    return row;
  }

  // Puts the rows in answer order; called once, after the last Add.
  void Sort() {
    order_.resize(rows_.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<uint32_t>(i);
    std::stable_sort(order_.begin(), order_.end(), [this](uint32_t x, uint32_t y) {
      const RunnableRow& a = rows_[x];
      const RunnableRow& b = rows_[y];
      if (a.cards != b.cards) return a.cards < b.cards;
      return a.headroom_bytes_per_card > b.headroom_bytes_per_card;
    });
  }

  // Fills `message` with the next rows; false when none are left.
  bool Fill(v1::ListRunnableModelsResponse* message) {
    if (next_ == order_.size()) return false;
    const size_t end = std::min(order_.size(), next_ + kRunnableRowsPerMessage);
    for (; next_ < end; ++next_) {
      const RunnableRow& row = rows_[order_[next_]];
      const char* names = names_.data() + row.names_offset;
      v1::RunnableModel* out = message->add_models();
      out->set_model(names, row.model_size);
      out->set_display_name(names + row.model_size, row.display_name_size);
      out->set_parameters(row.parameters);
      out->set_cards(row.cards);
      out->set_required_bytes_per_card(row.required_bytes_per_card);
      out->set_headroom_bytes_per_card(row.headroom_bytes_per_card);
      if (row.decode_tokens_per_second.has_value()) {
        out->set_decode_tokens_per_second(*row.decode_tokens_per_second);
      }
      if (row.prefill_tokens_per_second.has_value()) {
        out->set_prefill_tokens_per_second(*row.prefill_tokens_per_second);
      }
      out->set_hypothetical(row.hypothetical);
      out->set_catalog_revision(revision_);
    }
    return true;
  }

 private:
  int64_t revision_;
  std::string names_;
  std::vector<RunnableRow> rows_;
  std::vector<uint32_t> order_;
  size_t next_ = 0;
};

absl::StatusOr<RunnableRows> RunnableModels(const CatalogSnapshot& snapshot,
                                            const v1::ListRunnableModelsRequest& request) {
  FieldViolations violations;
  const int cards = request.cards() == 0 ? 1 : request.cards();
  if (cards < 1 || cards > 1024 || (cards & (cards - 1)) != 0) {
    violations.Add("cards",
                   absl::StrCat("must be a power of two up to 1024, got ", request.cards()));
  }
  if (request.context_length_tokens() < 0)
    violations.Add("context_length_tokens", "must not be negative");
  if (request.batch_size() < 0) violations.Add("batch_size", "must not be negative");
  if (!std::isfinite(request.memory_utilization()) || request.memory_utilization() < 0 ||
      request.memory_utilization() > 1) {
    violations.Add("memory_utilization", "must be a fraction in (0, 1], or 0 for the default");
  }
  if (request.hardware().empty()) violations.Add("hardware", "required");
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;
  absl::StatusOr<query::Filter> filter =
      query::Filter::Parse(request.filter(), common::v1::Model::descriptor());
  if (!filter.ok()) return filter.status();
  std::optional<common::v1::Hardware> hardware = snapshot.FindHardware(request.hardware());
  if (!hardware.has_value()) return ResourceNotFoundError("Hardware", request.hardware());

  absl::StatusOr<NumberFormat> weight_format =
      ToCoreNumberFormat(request.weight_format(), NumberFormat::kBf16, "weight_format");
  if (!weight_format.ok()) return weight_format.status();
  absl::StatusOr<NumberFormat> kv_format =
      ToCoreNumberFormat(request.kv_cache_format(), NumberFormat::kBf16, "kv_cache_format");
  if (!kv_format.ok()) return kv_format.status();
  if (!IsPlainFormat(*kv_format)) {
    return InvalidFieldError("kv_cache_format", "must be a plain format (fp32 ... int4)");
  }
  absl::StatusOr<Encoding> encoding = EncodingOf(*weight_format);
  if (!encoding.ok()) return encoding.status();

  // The same formulas as EstimateInferenceMemory and PlanInference, numbers
  // only: this answer covers the whole catalog.
  const DeviceSpec device = DeviceOf(*hardware, *weight_format);
  const double usable =
      device.memory_bytes *
      (device.unified_memory ? Workload().unified_memory_fraction
                             : (request.memory_utilization() > 0 ? request.memory_utilization()
                                                                 : Workload().memory_utilization));
  const int64_t context =
      request.context_length_tokens() > 0 ? request.context_length_tokens() : 4096;
  const int batch = request.batch_size() > 0 ? request.batch_size() : 1;
  const int64_t revision = snapshot.revision();

  RunnableRows runnable(revision);
  snapshot.ForEachModel([&](const common::v1::Model& model) {
    if (!filter->Matches(model)) return;
    const std::optional<bool> published = WeightsPublished(model);
    const bool hypothetical = published.has_value() && !*published;
    if (hypothetical && !request.hypothetical()) return;
    std::optional<Architecture> architecture;
    if (model.has_architecture()) architecture = ToCoreArchitecture(model.architecture());
    absl::StatusOr<double> parameters =
        ParametersOfModel(model, architecture.has_value() ? &*architecture : nullptr);
    if (!parameters.ok()) return;
    MatrixModel shape;
    shape.parameters = *parameters;
    shape.overhead_bytes = static_cast<double>(InferenceMemoryInput::kDefaultOverheadBytes);
    if (architecture.has_value()) {
      const Architecture& arch = *architecture;
      shape.kv_cache_bytes = KvCacheBytes(arch, *kv_format, context, batch);
      shape.activation_bytes = PrefillWorkspaceBytes(arch, 512, batch, nullptr);
      shape.num_attention_heads = arch.num_attention_heads;
      shape.num_key_value_heads = arch.EffectiveKvHeads();
      if (arch.IsMoe()) {
        absl::StatusOr<ParameterCount> count = CountParameterTotals(arch);
        if (count.ok() && count->total > 0) shape.active_share = count->active / count->total;
      }
    }
    const double weights = shape.parameters * encoding->bits_per_element / 8;
    const int fit = FewestCards(shape, weights, usable, cards);
    if (fit == 0) return;
    const double required = RequiredBytesPerCard(shape, weights, fit);
    RunnableRow& row = runnable.Add(model.name(), model.display_name());
    row.parameters = shape.parameters;
    row.cards = fit;
    row.required_bytes_per_card = static_cast<int64_t>(std::ceil(required));
    row.headroom_bytes_per_card = static_cast<int64_t>(std::floor(usable - required));
    if (device.bandwidth_bytes_per_second.has_value()) {
      row.decode_tokens_per_second =
          DecodeStepsPerSecond(*device.bandwidth_bytes_per_second, fit,
                               weights * shape.active_share, shape.kv_cache_bytes);
    }
    if (device.peak_flops.has_value()) {
      row.prefill_tokens_per_second =
          PrefillTokensPerSecond(fit, *device.peak_flops, Workload().prefill_efficiency,
                                 shape.parameters * shape.active_share);
    }
    row.hypothetical = hypothetical;
  });
  runnable.Sort();
  return runnable;
}

}  // namespace

grpc::ServerWriteReactor<v1::ListRunnableModelsResponse>* EstimatorServiceImpl::ListRunnableModels(
    grpc::CallbackServerContext* /*context*/, const v1::ListRunnableModelsRequest* request) {
  using Writer = SourceWriter<v1::ListRunnableModelsResponse, RunnableRows>;
  if (absl::Status busy = Admit(); !busy.ok()) return new Writer(busy);
  if (snapshot_ == nullptr || !snapshot_->loaded()) {
    return new Writer(WithReason(
        absl::UnavailableError(absl::StrCat("the estimator has not loaded the catalog at ",
                                            catalog_->address(), " yet")),
        "CATALOG_UNAVAILABLE"));
  }
  absl::StatusOr<RunnableRows> runnable = RunnableModels(*snapshot_, *request);
  if (runnable.ok() && on_estimate_) on_estimate_("runnable_models");
  return new Writer(std::move(runnable));
}

// ---- Training ----

namespace {

// The first training hardware of a record: its linked record, else its name.
std::string TrainingHardwareOf(const common::v1::Model& model) {
  for (int i = 0; i < model.training_hardware_size(); ++i) {
    if (i < model.training_hardware_refs_size() && !model.training_hardware_refs(i).empty()) {
      return model.training_hardware_refs(i);
    }
    return model.training_hardware(i);
  }
  return "";
}

}  // namespace

void EstimatorServiceImpl::ResolveTrainingModel(
    grpc::CallbackServerContext* context, const v1::TrainingModel& model,
    std::function<void(absl::StatusOr<common::v1::Model>)> done) {
  common::v1::Model inline_model;
  switch (model.source_case()) {
    case v1::TrainingModel::kModel:
      return ResolveModel(context, model.model(), std::move(done));
    case v1::TrainingModel::kArchitecture:
      inline_model.set_display_name("inline architecture");
      *inline_model.mutable_architecture() = model.architecture();
      return done(inline_model);
    case v1::TrainingModel::kHfConfigJson: {
      absl::StatusOr<common::v1::Architecture> arch =
          ArchitectureFromHfConfig(model.hf_config_json());
      if (!arch.ok()) return done(PrefixFieldViolations(arch.status(), "model."));
      inline_model.set_display_name("inline config.json");
      *inline_model.mutable_architecture() = *std::move(arch);
      return done(inline_model);
    }
    default:
      return done(InvalidFieldError("model", "give model, architecture or hf_config_json"));
  }
}

void EstimatorServiceImpl::ResolveOneHardware(
    grpc::CallbackServerContext* context, const std::string& name, bool optional,
    std::function<void(absl::StatusOr<std::optional<common::v1::Hardware>>)> done) {
  if (name.empty()) return done(std::optional<common::v1::Hardware>());
  ResolveHardware(context, {name},
                  [optional, done](absl::StatusOr<std::vector<common::v1::Hardware>> found) {
                    if (found.ok() && !found->empty()) {
                      return done(std::optional<common::v1::Hardware>(found->front()));
                    }
                    if (optional && (found.ok() || absl::IsNotFound(found.status()))) {
                      return done(std::optional<common::v1::Hardware>());
                    }
                    done(found.status());
                  });
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::EstimateTrainingCompute(
    grpc::CallbackServerContext* context, const v1::EstimateTrainingComputeRequest* request,
    v1::EstimateTrainingComputeResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto finish = Finisher(reactor, response, "training_compute");
  if (absl::Status busy = Admit(); !busy.ok()) {
    finish(busy);
    return reactor;
  }
  // The hardware named by the request must exist; the record's may not.
  auto with_model = [this, context, request, finish](std::optional<common::v1::Model> model) {
    const bool named = !request->inputs().hardware().empty();
    const std::string hardware =
        named ? request->inputs().hardware() : (model ? TrainingHardwareOf(*model) : "");
    ResolveOneHardware(
        context, hardware, !named,
        [request, finish, model](absl::StatusOr<std::optional<common::v1::Hardware>> hw) {
          if (!hw.ok()) return finish(hw.status());
          finish(EstimateTrainingComputeFor(model ? &*model : nullptr, *hw ? &**hw : nullptr,
                                            *request));
        });
  };
  if (request->model().empty()) {
    with_model(std::nullopt);
    return reactor;
  }
  ResolveModel(context, request->model(),
               [finish, with_model](absl::StatusOr<common::v1::Model> model) {
                 if (!model.ok()) return finish(model.status());
                 with_model(*std::move(model));
               });
  return reactor;
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::EstimateTrainingMemory(
    grpc::CallbackServerContext* context, const v1::EstimateTrainingMemoryRequest* request,
    v1::EstimateTrainingMemoryResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto finish = Finisher(reactor, response, "training_memory");
  if (absl::Status busy = Admit(); !busy.ok()) {
    finish(busy);
    return reactor;
  }
  ResolveTrainingModel(context, request->model(),
                       [request, finish](absl::StatusOr<common::v1::Model> model) {
                         if (!model.ok()) return finish(model.status());
                         finish(EstimateTrainingMemoryFor(*model, request->settings()));
                       });
  return reactor;
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::PlanTraining(grpc::CallbackServerContext* context,
                                                             const v1::PlanTrainingRequest* request,
                                                             v1::PlanTrainingResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto finish = Finisher(reactor, response, "plan_training");
  if (absl::Status busy = Admit(); !busy.ok()) {
    finish(busy);
    return reactor;
  }
  if (request->hardware().empty()) {
    finish(InvalidFieldError("hardware", "required: the accelerator to train on"));
    return reactor;
  }
  ResolveTrainingModel(context, request->model(),
                       [this, context, request, finish](absl::StatusOr<common::v1::Model> model) {
                         if (!model.ok()) return finish(model.status());
                         ResolveOneHardware(
                             context, request->hardware(), false,
                             [request, finish, model = *std::move(model)](
                                 absl::StatusOr<std::optional<common::v1::Hardware>> hw) {
                               if (!hw.ok()) return finish(hw.status());
                               finish(PlanTrainingFor(model, **hw, *request));
                             });
                       });
  return reactor;
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::AuditModel(grpc::CallbackServerContext* context,
                                                           const v1::AuditModelRequest* request,
                                                           v1::AuditModelResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto finish = Finisher(reactor, response, "audit_model");
  if (absl::Status busy = Admit(); !busy.ok()) {
    finish(busy);
    return reactor;
  }
  if (!std::isfinite(request->tolerance()) || request->tolerance() < 0) {
    finish(InvalidFieldError("tolerance", "must be a non-negative fraction, or 0 for 0.1"));
    return reactor;
  }
  const double tolerance = request->tolerance() > 0 ? request->tolerance() : 0.1;
  ResolveModel(context, request->model(),
               [this, context, finish, tolerance](absl::StatusOr<common::v1::Model> model) {
                 if (!model.ok()) return finish(model.status());
                 // Named before the record moves into the callback.
                 const std::string hardware = TrainingHardwareOf(*model);
                 ResolveOneHardware(
                     context, hardware, true,
                     [finish, tolerance, model = *std::move(model)](
                         absl::StatusOr<std::optional<common::v1::Hardware>> hw) {
                       if (!hw.ok()) return finish(hw.status());
                       const std::optional<common::v1::Hardware> found = *hw;
                       finish(AuditRecord(
                           model, [found](const std::string&) { return found; }, tolerance));
                     });
               });
  return reactor;
}

grpc::ServerWriteReactor<v1::AuditCatalogResponse>* EstimatorServiceImpl::AuditCatalog(
    grpc::CallbackServerContext* /*context*/, const v1::AuditCatalogRequest* request) {
  if (absl::Status busy = Admit(); !busy.ok())
    return new ListWriter<v1::AuditCatalogResponse>(busy);
  if (snapshot_ == nullptr || !snapshot_->loaded()) {
    return new ListWriter<v1::AuditCatalogResponse>(WithReason(
        absl::UnavailableError(absl::StrCat("the estimator has not loaded the catalog at ",
                                            catalog_->address(), " yet")),
        "CATALOG_UNAVAILABLE"));
  }
  auto audit = AuditSnapshot(*snapshot_, *request);
  if (audit.ok() && on_estimate_) on_estimate_("audit_catalog");
  return new ListWriter<v1::AuditCatalogResponse>(std::move(audit));
}

}  // namespace modelatlas::estimator
