// The weights a LoRA adapter adds at serving time (answers/inference.h).
#include <cmath>
#include <utility>

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
  const int64_t h = a.hidden_size();
  const int64_t heads = a.num_attention_heads();
  const int64_t kv = a.num_key_value_heads() > 0 ? a.num_key_value_heads() : heads;
  const int64_t d = a.head_dim() > 0 ? a.head_dim() : (heads > 0 ? h / heads : 0);
  const int64_t ff = a.intermediate_size();
  const std::map<std::string, std::pair<int64_t, int64_t>> shapes = {
      {"q_proj", {h, heads * d}}, {"k_proj", {h, kv * d}}, {"v_proj", {h, kv * d}},
      {"o_proj", {heads * d, h}}, {"gate_proj", {h, ff}},  {"up_proj", {h, ff}},
      {"down_proj", {ff, h}}};
  if (targets.size() == 1 && targets[0] == "all-linear") {
    targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  }
  double per_layer = 0;
  std::vector<std::string> parts;
  for (const std::string& target : targets) {
    auto shape = shapes.find(target);
    if (shape == shapes.end()) {
      return InvalidFieldError("lora.target_modules",
                               absl::StrCat("\"", target,
                                            "\" is not one of q_proj, k_proj, v_proj, o_proj, "
                                            "gate_proj, up_proj, down_proj, all-linear"));
    }
    const auto [in, out] = shape->second;
    per_layer += static_cast<double>(rank) * static_cast<double>(in + out);
    parts.push_back(absl::StrCat(target, " ", rank, "x(", in, "+", out, ")"));
  }
  const double total = per_layer * a.num_layers();
  return std::make_pair(total, absl::StrCat("LoRA rank ", rank, ": (", absl::StrJoin(parts, " + "),
                                            ") per layer x ", a.num_layers(), " layers"));
}

}  // namespace modelatlas::estimator
