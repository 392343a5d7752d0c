#include "estimator-service/answers/runtime.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/core/inference_memory.h"

namespace modelatlas::estimator {
namespace {

// "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json" ->
// "meta-llama/Llama-3.1-8B"; empty for any other address.
std::string RepoOfHubAddress(absl::string_view address) {
  if (!absl::ConsumePrefix(&address, "https://huggingface.co/")) return "";
  const std::vector<absl::string_view> parts = absl::StrSplit(address, '/');
  if (parts.size() < 2 || parts[0].empty() || parts[1].empty()) return "";
  return absl::StrCat(parts[0], "/", parts[1]);
}

// What a runtime loads (RuntimeModel::family): the wrapper when there is
// one, told apart where one model_type covers two classes (DeepSeek-OCR's
// linear projector, DeepSeek-VL2's MLP one).
std::string ServedFamily(const common::v1::Architecture& a) {
  if (a.wrapper_model_type().empty()) return a.encoder_parts_size() > 0 ? "" : a.model_type();
  if (a.wrapper_model_type() == "deepseek_vl_v2") {
    for (const common::v1::EncoderPart& part : a.encoder_parts()) {
      if (part.layout() == "deepseek_ocr_projector") return "deepseek_ocr";
    }
  }
  return a.wrapper_model_type();
}

}  // namespace

absl::StatusOr<Runtime> ToCoreRuntime(v1::Runtime runtime, const char* field) {
  switch (runtime) {
    case v1::RUNTIME_UNSPECIFIED:
      return Runtime::kNone;
    case v1::RUNTIME_VLLM:
      return Runtime::kVllm;
    case v1::RUNTIME_SGLANG:
      return Runtime::kSglang;
    case v1::RUNTIME_LLAMA_CPP:
      return Runtime::kLlamaCpp;
    default:
      break;
  }
  FieldViolations violations;
  violations.Add(field, absl::StrCat("has no value ", static_cast<int>(runtime)));
  return violations.ToStatus();
}

RuntimeModel RuntimeModelOf(const common::v1::Model& model, const std::string& repo_id) {
  RuntimeModel out;
  out.repo_id = repo_id.empty() ? RepoOfHubAddress(model.architecture().source()) : repo_id;
  if (!model.has_architecture()) return out;
  const common::v1::Architecture& a = model.architecture();
  const Architecture core = ToCoreArchitecture(a);
  out.num_layers = a.num_layers();
  out.num_attention_heads = a.num_attention_heads();
  out.hidden_size = a.hidden_size();
  out.vocab_size = a.vocab_size();
  out.max_context_length = a.max_context_length();
  out.model_type = a.model_type();
  out.family = ServedFamily(a);
  out.multimodal = a.encoder_parts_size() > 0;
  out.cross_attention_layers = a.num_cross_attention_layers();
  out.cross_attention_positions = a.cross_attention_positions();
  out.mixture_of_experts = a.num_experts() > 0;
  if (!a.recurrent_mixer().empty() && a.num_attention_layers() > 0) {
    out.attention_layers = a.num_attention_layers();
    out.recurrent_layers = a.num_recurrent_layers();
  }
  // Nemotron-NAS: a no-op attention has no KV cache in any runtime (vLLM's
  // DeciLMDecoderLayer builds no attention there; llama.cpp's deci layers
  // of 0 KV heads cache 0 bytes).
  if (core.HasLayerWidths()) {
    out.attention_layers = core.AttentionLayers();
    out.layers_as_large_as_the_largest = LayersAsLargeAsTheLargest(core);
  }
  if (a.num_mtp_layers() > 0 && LlamaCppCachesMtpBlocks(a.model_type())) {
    out.llama_cpp_mtp_kv_layers = a.num_mtp_layers();
  }
  out.recurrent_state_bytes = RecurrentStateBytesPerSequence(core, nullptr);
  out.llama_cpp_recurrent_state_bytes = LlamaCppRecurrentStateBytesPerSequence(core);
  if (a.sliding_window() > 0) {
    out.sliding_window = a.sliding_window();
    out.sliding_window_layers =
        a.num_sliding_window_layers() > 0 ? a.num_sliding_window_layers() : a.num_layers();
  }
  if (a.num_kv_shared_layers() > 0) {
    // Gemma 4 E2B/E4B: only the layers before the KV-shared ones keep a
    // cache (llama.cpp's n_layer_kv_from_start; vLLM's and transformers'
    // shared layers read an earlier layer's), of each kind.
    out.attention_layers = KvCacheLayers(core);
    if (a.sliding_window() > 0) out.sliding_window_layers = SlidingLayers(core);
  }
  // The FFN width one token passes through: the prefill workspace's
  // (Mixtral's k experts of intermediate_size, Qwen2-MoE's shared expert of
  // its own width, a dense layer's when wider).
  out.intermediate_size = static_cast<int64_t>(TokenMlpWidth(core));
  return out;
}

void ToProto(const RuntimeFit& fit, v1::RuntimeFit* out) {
  switch (fit.runtime) {
    case Runtime::kVllm:
      out->set_runtime(v1::RUNTIME_VLLM);
      break;
    case Runtime::kSglang:
      out->set_runtime(v1::RUNTIME_SGLANG);
      break;
    case Runtime::kLlamaCpp:
      out->set_runtime(v1::RUNTIME_LLAMA_CPP);
      break;
    case Runtime::kNone:
      break;
  }
  out->set_runtime_version(fit.version);
  out->set_fits(fit.fits);
  out->set_reason(fit.reason);
  for (const RuntimeReservation& r : fit.reserved) {
    v1::RuntimeReservation* line = out->add_reserved();
    line->set_component(r.component);
    line->set_bytes(static_cast<int64_t>(std::floor(r.bytes)));
    line->set_arithmetic(r.arithmetic);
    line->set_source(r.source);
  }
  out->set_kv_cache_bytes_per_card(static_cast<int64_t>(std::floor(fit.kv_cache_bytes_per_card)));
  out->set_kv_cache_bytes_needed_per_card(
      static_cast<int64_t>(std::ceil(fit.kv_cache_bytes_needed_per_card)));
  out->set_block_size_tokens(fit.block_size_tokens);
  if (fit.kv_cache_blocks.has_value()) out->set_kv_cache_blocks(*fit.kv_cache_blocks);
  out->set_kv_cache_groups(fit.kv_cache_groups);
  out->set_kv_cache_tokens(fit.kv_cache_tokens);
  if (fit.max_concurrency.has_value()) out->set_max_concurrency(*fit.max_concurrency);
  out->set_max_model_len_tokens(fit.max_model_len_tokens);
  out->set_launch_command(fit.launch_command);
  for (const std::string& command : fit.node_commands) out->add_node_commands(command);
  out->set_model_id_placeholder(fit.model_id_placeholder);
  for (const std::string& note : fit.notes) out->add_notes(note);
}

}  // namespace modelatlas::estimator
