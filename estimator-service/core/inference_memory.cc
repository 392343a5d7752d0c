#include "estimator-service/core/inference_memory.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/errors.h"
#include "common/text/decimal.h"
#include "estimator-service/core/arithmetic_text.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/units.h"
#include "estimator-service/core/weight_files.h"

namespace modelatlas::estimator {
namespace {

// WeightFileOf's bits per parameter for `arch` in `format`, remembered per
// thread (at most a few thousand shapes; the runnable list and the fit
// matrix ask for the same few shapes over and over). nullopt when
// WeightFileOf has no answer. The key is the shape's bytes: equal keys are
// equal shapes (a key that differs only in padding is a harmless miss).
std::optional<double> CachedBitsPerParameter(const Architecture& arch, NumberFormat format,
                                             int group_size) {
  static_assert(std::is_trivially_copyable_v<Architecture>);
  thread_local absl::flat_hash_map<std::string, std::optional<double>> cache;
  std::string key(reinterpret_cast<const char*>(&arch), sizeof(arch));
  key.append(reinterpret_cast<const char*>(&format), sizeof(format));
  key.append(reinterpret_cast<const char*>(&group_size), sizeof(group_size));
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  if (cache.size() > 4096) cache.clear();
  absl::StatusOr<WeightFile> file = WeightFileOf(arch, format, group_size);
  std::optional<double> bits;
  if (file.ok() && file->parameters > 0) bits = file->bits_per_parameter;
  cache.emplace(std::move(key), bits);
  return bits;
}

// Largest figures accepted; anything above is a typo, not a model (the
// parameter bound is the catalog's, core/units.h).
constexpr int64_t kMaxContextTokens = 100'000'000;
constexpr int kMaxBatch = 1'000'000;

std::string Int(double value) { return WholeNumber(value); }

// printf's "%g" (six significant digits), as the lines have always shown
// bytes per element and bits per weight; common/text/decimal writes the same
// characters without a format parse (tests/common/decimal_test.cc).
// A whole number below 1e6 (16 bits, 2 bytes: the common case) is its own
// digits under %g, written without the general formatter.
void AppendG(std::string* out, double value) {
  if (std::abs(value) < 1e6 && value == std::trunc(value) && !std::signbit(value)) {
    AppendInteger(out, static_cast<int64_t>(value));
    return;
  }
  AppendSignificantDigits(out, value, 6);
}

// " bytes (bf16) = N bytes per token": the end of every KV-cache text.
void AppendPerElementAndTotal(std::string* out, double bytes_per_element, NumberFormat format,
                              double bytes) {
  AppendG(out, bytes_per_element);
  out->append(" bytes (");
  out->append(NumberFormatName(format));
  out->append(") = ");
  AppendWholeNumber(out, bytes);
  out->append(" bytes per token");
}

int64_t CeilBytes(double bytes) { return static_cast<int64_t>(std::ceil(bytes)); }

}  // namespace

double KvCacheBytesPerToken(const Architecture& arch, NumberFormat format,
                            std::string* arithmetic) {
  const double bytes_per_element = BitsPerElement(format) / 8;
  if (arch.UsesMla()) {
    // DeepSeek-V2/V3: one compressed latent plus the shared rotary key per token and layer.
    const double elements = arch.kv_lora_rank + arch.qk_rope_head_dim;
    const double bytes = arch.num_layers * elements * bytes_per_element;
    if (arithmetic == nullptr) return bytes;
    arithmetic->clear();
    absl::StrAppend(arithmetic, arch.num_layers, " layers x (", arch.kv_lora_rank,
                    " kv_lora_rank + ", arch.qk_rope_head_dim, " qk_rope_head_dim) x ");
    AppendPerElementAndTotal(arithmetic, bytes_per_element, format, bytes);
    return bytes;
  }
  if (arch.num_decoder_layers > 0) {
    // Encoder-decoder: the decoder's self-attention and cross-attention
    // caches (encoder length x decoder layers), nothing for the encoder.
    const double bytes = 2.0 * 2.0 * arch.num_decoder_layers * arch.EffectiveKvHeads() *
                         arch.EffectiveHeadDim() * bytes_per_element;
    if (arithmetic == nullptr) return bytes;
    arithmetic->clear();
    absl::StrAppend(
        arithmetic,
        "2 (K and V) x 2 (decoder self attention over the output + cross attention over the "
        "encoder's input, each the context long) x ",
        arch.num_decoder_layers, " decoder layers x ", arch.EffectiveKvHeads(), " KV heads x ",
        arch.EffectiveHeadDim(), " head dim x ");
    AppendPerElementAndTotal(arithmetic, bytes_per_element, format, bytes);
    arithmetic->append(" (the encoder caches nothing)");
    return bytes;
  }
  const int layers = KvCacheLayers(arch);
  const double bytes =
      2.0 * layers * arch.EffectiveKvHeads() * arch.EffectiveHeadDim() * bytes_per_element;
  if (arithmetic == nullptr) return bytes;
  if (arch.IsHybrid() && layers == 0) {
    *arithmetic = absl::StrCat("no attention layer (", arch.num_recurrent_layers,
                               " recurrent layers keep a fixed state instead): 0 bytes per token");
    return bytes;
  }
  // Written in place (the memory answer's hot path: one string, no parts),
  // piece by piece.
  arithmetic->clear();
  arithmetic->append("2 (K and V) x ");
  AppendInteger(arithmetic, layers);
  if (arch.IsHybrid()) {
    arithmetic->append(" attention layers (of ");
    AppendInteger(arithmetic, arch.num_layers);
    arithmetic->append(")");
  } else {
    arithmetic->append(" layers");
  }
  arithmetic->append(" x ");
  AppendInteger(arithmetic, arch.EffectiveKvHeads());
  arithmetic->append(" KV heads x ");
  AppendInteger(arithmetic, arch.EffectiveHeadDim());
  arithmetic->append(" head dim x ");
  AppendPerElementAndTotal(arithmetic, bytes_per_element, format, bytes);
  return bytes;
}

int KvCacheLayers(const Architecture& arch) {
  if (arch.IsHybrid()) return arch.num_attention_layers;
  return arch.num_decoder_layers > 0 ? arch.num_decoder_layers : arch.num_layers;
}

double RecurrentStateBytesPerSequence(const Architecture& arch, std::string* arithmetic) {
  if (!arch.IsHybrid() || arch.num_recurrent_layers <= 0) return 0;
  const double I = static_cast<double>(arch.ssm_inner_size);
  const double N = arch.ssm_state_size, G = arch.ssm_num_groups, H = arch.ssm_num_heads;
  const double conv_window = std::max(0, arch.ssm_conv_kernel - 1);
  double channels = 0, ssm = 0;
  std::string ssm_text;
  switch (arch.recurrent_mixer) {
    case RecurrentMixer::kMamba:
      channels = I;
      ssm = I * N;
      ssm_text = absl::StrCat(Int(I), " x ", Int(N), " state");
      break;
    case RecurrentMixer::kMamba2:
      channels = I + 2 * G * N;
      ssm = I * N;
      ssm_text = absl::StrCat(Int(H), " heads x ", Int(H > 0 ? I / H : 0), " head dim x ", Int(N),
                              " state");
      break;
    case RecurrentMixer::kGatedDeltaNet:
      channels = 2 * G * N + I;
      ssm = I * N;
      ssm_text = absl::StrCat(Int(H), " value heads x ", Int(N), " key dim x ",
                              Int(H > 0 ? I / H : 0), " value dim");
      break;
    default:
      return 0;
  }
  const double conv_bytes = 2, ssm_bytes = arch.ssm_state_fp32 ? 4 : 2;
  const double per_layer = conv_window * channels * conv_bytes + ssm * ssm_bytes;
  const double bytes = per_layer * arch.num_recurrent_layers;
  if (arithmetic != nullptr) {
    *arithmetic =
        absl::StrCat(arch.num_recurrent_layers, " recurrent layers x (conv ", Int(conv_window),
                     " (kernel ", arch.ssm_conv_kernel, " - 1) x ", Int(channels),
                     " channels x 2 bytes + SSM ", ssm_text, " x ", Int(ssm_bytes), " bytes",
                     arch.ssm_state_fp32 ? " (fp32)" : " (16-bit)", ") = ", Int(bytes),
                     " bytes per sequence, whatever the context (vLLM's mamba state shapes)");
  }
  return bytes;
}

int SlidingLayers(const Architecture& arch) {
  return arch.num_sliding_window_layers > 0
             ? std::min(arch.num_sliding_window_layers, KvCacheLayers(arch))
             : KvCacheLayers(arch);
}

double KvCacheBytes(const Architecture& arch, NumberFormat format, int64_t context_tokens,
                    int batch) {
  const double per_token = KvCacheBytesPerToken(arch, format, nullptr);
  const int layers = KvCacheLayers(arch);
  if (arch.sliding_window > 0 && arch.sliding_window < context_tokens && layers > 0) {
    // Sliding-window layers keep only the last `window` tokens.
    const int sliding = SlidingLayers(arch);
    const double per_layer = per_token / layers;
    return (per_layer * sliding * static_cast<double>(arch.sliding_window) +
            per_layer * (layers - sliding) * static_cast<double>(context_tokens)) *
           batch;
  }
  return per_token * static_cast<double>(context_tokens) * batch;
}

double PrefillWorkspaceBytes(const Architecture& arch, int chunk_tokens, int batch,
                             std::string* arithmetic) {
  const double h = static_cast<double>(arch.hidden_size);
  const double attention =
      static_cast<double>(arch.num_attention_heads + 2 * arch.EffectiveKvHeads()) *
      arch.EffectiveHeadDim();
  const double inner = static_cast<double>(arch.IsMoe() && arch.moe_intermediate_size > 0
                                               ? arch.moe_intermediate_size
                                               : arch.intermediate_size);
  const double mlp = inner * (arch.gated_mlp ? 2 : 1);
  const double per_token = 2 * h + attention + mlp;
  const double logits = static_cast<double>(batch) * static_cast<double>(arch.vocab_size) * 4;
  const double bytes = chunk_tokens * per_token * 2 + logits;
  if (arithmetic == nullptr) return bytes;
  arithmetic->clear();
  // About 130 characters: one allocation, not one per doubling as it grows.
  arithmetic->reserve(160);
  AppendInteger(arithmetic, chunk_tokens);
  arithmetic->append(" tokens x (2x");
  AppendWholeNumber(arithmetic, h);
  arithmetic->append(" hidden + ");
  AppendWholeNumber(arithmetic, attention);
  arithmetic->append(" q/k/v + ");
  AppendWholeNumber(arithmetic, mlp);
  arithmetic->append(" MLP) x 2 bytes + ");
  AppendInteger(arithmetic, batch);
  arithmetic->append(" x ");
  AppendInteger(arithmetic, arch.vocab_size);
  arithmetic->append(" vocab x 4 bytes (fp32 logits) = ");
  AppendWholeNumber(arithmetic, std::ceil(bytes));
  arithmetic->append(" bytes");
  return bytes;
}

absl::StatusOr<InferenceSizing> SizeInference(const InferenceMemoryInput& input,
                                              InferenceArithmetic* arithmetic) {
  const ResolvedWorkload& w = input.workload;
  FieldViolations violations;
  if (!std::isfinite(input.parameters) || input.parameters <= 0 ||
      input.parameters > kMaxParameters) {
    violations.Add("parameters", absl::StrCat("must be a positive number of at most ",
                                              Int(kMaxParameters), ", got ", input.parameters));
  }
  if (w.context_length_tokens < 0 || w.context_length_tokens > kMaxContextTokens) {
    violations.Add("context_length_tokens",
                   absl::StrCat("must be between 0 and ", kMaxContextTokens, " tokens, got ",
                                w.context_length_tokens));
  }
  if (w.batch_size < 1 || w.batch_size > kMaxBatch) {
    violations.Add("batch_size", absl::StrCat("must be between 1 and ", kMaxBatch,
                                              " sequences, got ", w.batch_size));
  }
  if (!IsPlainFormat(w.kv_cache_format)) {
    violations.Add("kv_cache_format", absl::StrCat("must be a plain format (fp32, fp16, bf16, "
                                                   "fp8, int8, int4), got ",
                                                   NumberFormatName(w.kv_cache_format)));
  }
  if (w.prefill_chunk_tokens < 1 || w.prefill_chunk_tokens > 1'000'000) {
    violations.Add("prefill_chunk_tokens",
                   absl::StrCat("must be between 1 and 1000000, got ", w.prefill_chunk_tokens));
  }
  if (w.overhead_bytes < 0 || w.overhead_bytes > int64_t{1} << 40) {
    violations.Add("overhead_bytes",
                   absl::StrCat("must be between 0 and 2^40 bytes, got ", w.overhead_bytes));
  }
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;

  absl::StatusOr<Encoding> encoding = EncodingOf(w.weight_format, w.quantization_group_size);
  if (!encoding.ok()) return encoding.status();
  if (arithmetic != nullptr) {
    // A reused arithmetic (EstimateInferenceMemoryInto) starts empty, its
    // buffers kept.
    for (std::string* text :
         {&arithmetic->weights, &arithmetic->kv_cache, &arithmetic->recurrent_state,
          &arithmetic->activations, &arithmetic->overhead}) {
      text->clear();
    }
    arithmetic->warnings.clear();
  }

  InferenceSizing sizing;
  sizing.batch_size = w.batch_size;
  sizing.parameters = input.parameters;
  sizing.context_length_tokens = w.context_length_tokens;
  double bits = encoding->bits_per_element;
  // The file's derivation when sized tensor by tensor, else the format's.
  std::optional<WeightFile> file;
  // A quantized file keeps some tensors in more bits (embeddings, output
  // head, norms; llama.cpp's per-tensor types): with a shape, size it
  // tensor by tensor (core/weight_files.h).
  if (SizedByTensor(w.weight_format) && input.architecture.has_value() &&
      input.architecture->num_layers > 0) {
    if (arithmetic == nullptr) {
      // Numbers only (whole-catalog answers size thousands of rows): the
      // bits per parameter of a shape and format, remembered.
      if (std::optional<double> cached = CachedBitsPerParameter(
              *input.architecture, w.weight_format, w.quantization_group_size)) {
        bits = *cached;
      }
    } else {
      absl::StatusOr<WeightFile> sized =
          WeightFileOf(*input.architecture, w.weight_format, w.quantization_group_size);
      if (sized.ok() && sized->parameters > 0) {
        bits = sized->bits_per_parameter;
        file = *std::move(sized);
      }
    }
  }
  const double weight_bytes = input.parameters * bits / 8;
  sizing.weight_bytes = std::ceil(weight_bytes);
  if (arithmetic != nullptr) {
    // Written in place: no string per figure.
    std::string& text = arithmetic->weights;
    const std::string& derivation = file.has_value() ? file->derivation : encoding->derivation;
    text.clear();
    text.reserve(96 + derivation.size());
    AppendWholeNumber(&text, input.parameters);
    text.append(" parameters x ");
    AppendG(&text, bits);
    text.append(" bits (");
    text.append(NumberFormatName(w.weight_format));
    text.append(": ");
    text.append(derivation);
    text.append(") / 8 = ");
    AppendWholeNumber(&text, sizing.weight_bytes);
    text.append(" bytes");
  }

  if (input.architecture.has_value() && input.architecture->num_layers > 0) {
    const Architecture& arch = *input.architecture;
    sizing.num_attention_heads = arch.num_attention_heads;
    sizing.num_key_value_heads = arch.EffectiveKvHeads();
    sizing.hidden_size = arch.hidden_size;
    sizing.kv_cache_replicated = arch.UsesMla();
    if (arch.num_decoder_layers == 0) {
      sizing.num_layers = arch.num_layers;
      sizing.num_largest_layers =
          arch.IsMoe() && arch.num_dense_layers > 0 && arch.num_dense_layers < arch.num_layers
              ? arch.num_layers - arch.num_dense_layers
              : arch.num_layers;
    }
    // Only when wanted (a count of the architecture; the memory answer
    // shows none of these figures).
    if (input.split_figures) {
      absl::StatusOr<ParameterCount> count = CountParameterTotals(arch);
      if (count.ok()) {
        sizing.embedding_parameters = count->embedding;
        sizing.output_head_parameters =
            static_cast<double>(arch.vocab_size) * static_cast<double>(arch.hidden_size);
        if (arch.IsMoe() && count->total > 0) sizing.active_share = count->active / count->total;
        if (arch.IsMoe() && count->routed_expert_parameters > 0 && input.parameters > 0 &&
            count->routed_expert_parameters < input.parameters && sizing.num_layers > 0) {
          // The routed experts at the format's own bits per weight, at most
          // the file's average: every tool quantizes the experts at least that
          // far (GGUF promotes some expert tensors above the base type, never
          // below), so the experts' share is never overstated. Overstating it
          // would move bytes from the dense part (divided by TP) to the
          // experts (divided by EP >= TP) and understate a card's bytes.
          const double average_bits = sizing.weight_bytes * 8 / input.parameters;
          const double expert_bits = std::min(encoding->bits_per_element, average_bits);
          sizing.expert_weight_bytes = std::ceil(count->routed_expert_parameters * expert_bits / 8);
          sizing.num_experts = arch.num_experts;
          sizing.num_experts_per_token = arch.num_experts_per_token;
          sizing.num_moe_layers = count->moe_layers;
        }
      } else {
        sizing.num_layers = 0;  // no split without the count
      }
    }
  }
  if (input.active_parameters.has_value() && *input.active_parameters > 0 && input.parameters > 0) {
    sizing.active_share = std::min(1.0, *input.active_parameters / input.parameters);
  }
  if (input.architecture.has_value() && input.architecture->num_layers > 0) {
    const Architecture& arch = *input.architecture;
    const int64_t context = w.context_length_tokens;
    const double kv_bytes = KvCacheBytes(arch, w.kv_cache_format, context, w.batch_size);
    if (kv_bytes > kMaxBytes) {
      return InvalidFieldError(
          "context_length_tokens",
          "context x batch gives a KV cache beyond any device (over 4e18 bytes)");
    }
    // Hybrids: the recurrent layers' state, per sequence whatever the
    // context, beside the attention layers' KV cache.
    std::string* state_arithmetic = arithmetic != nullptr ? &arithmetic->recurrent_state : nullptr;
    const double state_per_sequence = RecurrentStateBytesPerSequence(arch, state_arithmetic);
    sizing.recurrent_state_bytes = std::ceil(state_per_sequence * w.batch_size);
    if (arithmetic != nullptr && state_per_sequence > 0) {
      absl::StrAppend(&arithmetic->recurrent_state, " x ", w.batch_size,
                      " sequences = ", Int(sizing.recurrent_state_bytes), " bytes");
    }
    sizing.kv_cache_bytes = std::ceil(kv_bytes) + sizing.recurrent_state_bytes;
    sizing.model_kv_cache_bytes = sizing.kv_cache_bytes;
    const int kv_layers = KvCacheLayers(arch);
    const double layer_kv = kv_layers > 0
                                ? KvCacheBytesPerToken(arch, w.kv_cache_format, nullptr) /
                                      kv_layers * static_cast<double>(context) * w.batch_size
                                : 0;
    const double layer_state = arch.num_recurrent_layers > 0
                                   ? state_per_sequence / arch.num_recurrent_layers * w.batch_size
                                   : 0;
    // Falcon-H1 runs both mixers in every layer: its layers hold both.
    const bool both_in_a_layer =
        arch.IsHybrid() && arch.num_attention_layers + arch.num_recurrent_layers > arch.num_layers;
    sizing.kv_cache_bytes_largest_layer =
        std::ceil(both_in_a_layer ? layer_kv + layer_state : std::max(layer_kv, layer_state));
    const int chunk = w.prefill_chunk_tokens;
    std::string* workspace_arithmetic = arithmetic != nullptr ? &arithmetic->activations : nullptr;
    sizing.activation_bytes =
        std::ceil(PrefillWorkspaceBytes(arch, chunk, w.batch_size, workspace_arithmetic));
    if (arithmetic != nullptr) {
      // The per-token text, then the tokens, written into the one string.
      std::string& text = arithmetic->kv_cache;
      text.reserve(192);
      const double per_token = KvCacheBytesPerToken(arch, w.kv_cache_format, &text);
      if (arch.sliding_window > 0 && arch.sliding_window < context) {
        const int sliding_layers = SlidingLayers(arch);
        const double per_layer = per_token / kv_layers;
        const double window_tokens = static_cast<double>(arch.sliding_window);
        absl::StrAppend(&text, "; ", sliding_layers, " of ", kv_layers, " layers keep only the ",
                        arch.sliding_window, "-token window: (", sliding_layers, " x ");
        AppendWholeNumber(&text, window_tokens);
        absl::StrAppend(&text, " tokens + ", kv_layers - sliding_layers, " x ", context,
                        " tokens) x ");
        AppendWholeNumber(&text, per_layer);
        absl::StrAppend(&text, " bytes per layer-token x ", w.batch_size, " sequences = ");
      } else {
        text.append("; x ");
        AppendInteger(&text, context);
        text.append(" tokens x ");
        AppendInteger(&text, w.batch_size);
        text.append(" sequences = ");
      }
      AppendWholeNumber(&text, sizing.kv_cache_bytes - sizing.recurrent_state_bytes);
      text.append(" bytes");
      if (context == 0) {
        arithmetic->warnings.push_back("no context length given: KV cache not counted");
      }
    }
  } else if (arithmetic != nullptr) {
    arithmetic->warnings.push_back("no architecture on record: KV cache not counted");
  }

  sizing.overhead_bytes = static_cast<double>(w.overhead_bytes);
  if (arithmetic != nullptr) {
    // Into the text's own buffer (kept when the arithmetic is reused).
    std::string& text = arithmetic->overhead;
    text.clear();
    AppendInteger(&text, w.overhead_bytes);
    text.append(w.overhead_bytes == ResolvedWorkload::kDefaultOverheadBytes
                    ? " bytes (default: CUDA context and allocator reserve, 1 GiB)"
                    : " bytes (as requested)");
  }
  return sizing;
}

absl::Status EstimateInferenceMemoryInto(const InferenceMemoryInput& input,
                                         InferenceArithmetic* arithmetic,
                                         InferenceMemoryEstimate* estimate) {
  absl::StatusOr<InferenceSizing> sizing = SizeInference(input, arithmetic);
  if (!sizing.ok()) return sizing.status();
  estimate->sizing = *sizing;
  estimate->total_bytes = 0;
  // The texts are swapped into the lines (each was written once, in place):
  // a line's old text goes back to the arithmetic, whose next writing
  // reuses its buffer, so a reused pair allocates nothing once warm.
  size_t count = 0;
  const auto add = [&](const char* component, int64_t bytes, std::string* text) {
    if (count == estimate->lines.size()) estimate->lines.emplace_back();
    EstimateLine& line = estimate->lines[count++];
    line.component.assign(component);
    line.bytes = bytes;
    line.arithmetic.swap(*text);
    estimate->total_bytes += bytes;
  };
  add("weights", CeilBytes(sizing->weight_bytes), &arithmetic->weights);
  if (input.architecture.has_value() && input.architecture->num_layers > 0) {
    add("kv_cache", CeilBytes(sizing->kv_cache_bytes - sizing->recurrent_state_bytes),
        &arithmetic->kv_cache);
    if (sizing->recurrent_state_bytes > 0) {
      add("recurrent_state", CeilBytes(sizing->recurrent_state_bytes),
          &arithmetic->recurrent_state);
    }
    add("activations", CeilBytes(sizing->activation_bytes), &arithmetic->activations);
  }
  add("overhead", CeilBytes(sizing->overhead_bytes), &arithmetic->overhead);
  estimate->lines.resize(count);
  estimate->warnings.swap(arithmetic->warnings);
  return absl::OkStatus();
}

absl::StatusOr<InferenceMemoryEstimate> EstimateInferenceMemory(const InferenceMemoryInput& input) {
  InferenceArithmetic arithmetic;
  InferenceMemoryEstimate estimate;
  estimate.lines.reserve(5);
  if (absl::Status sized = EstimateInferenceMemoryInto(input, &arithmetic, &estimate);
      !sized.ok()) {
    return sized;
  }
  return estimate;
}

}  // namespace modelatlas::estimator
