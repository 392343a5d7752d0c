// The weights a LoRA adapter adds at serving time (answers/inference.h).
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/formats/hf_config.h"
#include "common/formats/json_depth.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/answers/records.h"
#include "estimator-service/core/parameters.h"
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
  if (targets.size() == 1 && targets[0] == "all-linear") {
    targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  }
  const Architecture core = ToCoreArchitecture(a);
  const int64_t h = core.hidden_size;
  const int64_t heads = core.num_attention_heads;
  const int64_t ff = core.intermediate_size;
  // One layer's adapters, its heads d wide over kv KV heads (Gemma 4's
  // full-attention layers: their own; no v_proj when their values come
  // from the keys, so an adapter on v_proj has nothing there).
  const auto per_layer_of = [&](int64_t d, int64_t kv, bool values, double* per_layer,
                                std::vector<std::string>* parts) -> absl::Status {
    const std::map<std::string, std::pair<int64_t, int64_t>> shapes = {
        {"q_proj", {h, heads * d}}, {"k_proj", {h, kv * d}}, {"v_proj", {h, values ? kv * d : 0}},
        {"o_proj", {heads * d, h}}, {"gate_proj", {h, ff}},  {"up_proj", {h, ff}},
        {"down_proj", {ff, h}}};
    for (const std::string& target : targets) {
      auto shape = shapes.find(target);
      if (shape == shapes.end()) {
        return InvalidFieldError("lora.target_modules",
                                 absl::StrCat("\"", target,
                                              "\" is not one of q_proj, k_proj, v_proj, o_proj, "
                                              "gate_proj, up_proj, down_proj, all-linear"));
      }
      const auto [in, out] = shape->second;
      if (out == 0) continue;  // v_proj where the values come from the keys
      *per_layer += static_cast<double>(rank) * static_cast<double>(in + out);
      parts->push_back(absl::StrCat(target, " ", rank, "x(", in, "+", out, ")"));
    }
    return absl::OkStatus();
  };
  double per_layer = 0;
  std::vector<std::string> parts;
  if (absl::Status s =
          per_layer_of(core.EffectiveHeadDim(), core.EffectiveKvHeads(), true, &per_layer, &parts);
      !s.ok()) {
    return s;
  }
  const int full = core.HasGlobalGeometry() ? core.FullAttentionLayers() : 0;
  if (full <= 0) {
    const double total = per_layer * a.num_layers();
    return std::make_pair(total,
                          absl::StrCat("LoRA rank ", rank, ": (", absl::StrJoin(parts, " + "),
                                       ") per layer x ", a.num_layers(), " layers"));
  }
  double full_per_layer = 0;
  std::vector<std::string> full_parts;
  if (absl::Status s = per_layer_of(core.GlobalHeadDim(), core.GlobalKvHeads(),
                                    !core.global_values_from_keys, &full_per_layer, &full_parts);
      !s.ok()) {
    return s;
  }
  const int sliding = a.num_layers() - full;
  const double total = per_layer * sliding + full_per_layer * full;
  return std::make_pair(
      total, absl::StrCat("LoRA rank ", rank, ": (", absl::StrJoin(parts, " + "), ") per layer x ",
                          sliding, " sliding-window layers + (", absl::StrJoin(full_parts, " + "),
                          ") per layer x ", full, " full-attention layers"));
}

}  // namespace modelatlas::estimator
