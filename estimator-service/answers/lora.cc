// The weights a LoRA adapter adds at serving time (answers/inference.h).
#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/formats/json_depth.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/training_memory.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace modelatlas::estimator {

absl::StatusOr<std::pair<double, std::string>> LoraParameters(const v1::LoraAdapter& lora,
                                                              const common::v1::Architecture& a) {
  int64_t rank = lora.rank();
  std::vector<std::string> targets(lora.target_modules().begin(), lora.target_modules().end());
  if (!lora.adapter_config_json().empty()) {
    if (absl::Status deep =
            CheckJsonDepth(lora.adapter_config_json(), kMaxJsonDepth, "lora.adapter_config_json");
        !deep.ok()) {
      return deep;
    }
    google::protobuf::Struct config;
    if (!google::protobuf::util::JsonStringToMessage(lora.adapter_config_json(), &config).ok()) {
      return InvalidFieldError("lora.adapter_config_json", "is not a JSON object");
    }
    const auto& fields = config.fields();
    if (rank == 0 && fields.count("r") && fields.at("r").has_number_value()) {
      rank = static_cast<int64_t>(fields.at("r").number_value());
    }
    if (targets.empty() && fields.count("target_modules")) {
      const google::protobuf::Value& t = fields.at("target_modules");
      if (t.has_string_value()) targets.push_back(t.string_value());
      if (t.has_list_value()) {
        for (const google::protobuf::Value& v : t.list_value().values()) {
          if (v.has_string_value()) targets.push_back(v.string_value());
        }
      }
    }
  }
  if (rank <= 0 || rank > 65536) {
    return InvalidFieldError("lora.rank", "must be in 1..65536 (or `r` in adapter_config_json)");
  }
  if (lora.adapters() < 0 || lora.adapters() > 4096) {
    return InvalidFieldError("lora.adapters", "must be in 0..4096");
  }
  if (targets.empty()) targets = {"q_proj", "v_proj"};
  const Architecture core = ToCoreArchitecture(a);
  if (core.num_layers <= 0 || core.hidden_size <= 0 || core.num_attention_heads <= 0) {
    return InvalidFieldError("lora",
                             "needs the model's layers, hidden size and attention heads, "
                             "which its architecture lacks");
  }
  // PEFT's module names (Llama-style checkpoints) as the core formula's
  // projections; "all-linear" is every linear layer of a block.
  if (targets.size() == 1 && targets[0] == "all-linear") {
    targets = {"q_proj", "k_proj", "v_proj", "o_proj", "up_proj", "down_proj"};
    if (core.gated_mlp) targets.push_back("gate_proj");
  }
  static constexpr std::pair<const char*, const char*> kPeftNames[] = {
      {"q_proj", "q"},   {"k_proj", "k"},       {"v_proj", "v"},      {"o_proj", "o"},
      {"up_proj", "up"}, {"down_proj", "down"}, {"gate_proj", "gate"}};
  std::vector<std::string> modules;
  for (const std::string& target : targets) {
    const auto* name = std::find_if(std::begin(kPeftNames), std::end(kPeftNames),
                                    [&](const auto& pair) { return target == pair.first; });
    if (name == std::end(kPeftNames)) {
      return InvalidFieldError("lora.target_modules",
                               absl::StrCat("\"", target,
                                            "\" is not one of q_proj, k_proj, v_proj, o_proj, "
                                            "gate_proj, up_proj, down_proj, all-linear"));
    }
    if (target == "gate_proj" && !core.gated_mlp) {
      return InvalidFieldError("lora.target_modules",
                               "\"gate_proj\": the model's MLP has no gate projection");
    }
    modules.push_back(name->second);
  }
  // The formula the training estimate uses (core/training_memory.h).
  absl::StatusOr<Figure> adapters = LoraParameters(core, static_cast<int>(rank), modules);
  if (!adapters.ok()) {
    return InvalidFieldError("lora.target_modules", adapters.status().message());
  }
  const bool mlp_adapted = std::any_of(modules.begin(), modules.end(), [](const std::string& m) {
    return m == "up" || m == "down" || m == "gate";
  });
  return std::make_pair(
      adapters->value,
      absl::StrCat("LoRA rank ", rank, " on ", absl::StrJoin(targets, ", "), ": ",
                   adapters->arithmetic,
                   mlp_adapted && core.IsMoe()
                       ? " (the MLP's projections at intermediate_size once per layer; adapters "
                         "on each expert are not counted)"
                       : ""));
}

}  // namespace modelatlas::estimator
