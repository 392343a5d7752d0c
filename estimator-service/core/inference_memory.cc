#include "estimator-service/core/inference_memory.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/errors.h"
#include "common/text/decimal.h"
#include "common/text/text_memo.h"
#include "common/text/text_writer.h"
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
// The key is an array of those bytes, not a string: no allocation per call
// (the fit matrix asks once per model and format). An empty vector's bytes
// may differ between equal shapes (a cleared one keeps its buffer): a
// harmless miss.
std::optional<double> BitsPerParameterOf(const Architecture& arch, NumberFormat format,
                                         int group_size) {
  absl::StatusOr<WeightFile> file = WeightFileOf(arch, format, group_size);
  if (file.ok() && file->parameters > 0) return file->bits_per_parameter;
  return std::nullopt;
}

std::optional<double> CachedBitsPerParameter(const Architecture& arch, NumberFormat format,
                                             int group_size) {
  // Layers that differ (Nemotron-NAS): their widths are a list the key's
  // bytes would hold only the address of; not cached. Every other shape's
  // list is empty, so its bytes are the same for equal shapes.
  if (arch.HasLayerWidths()) return BitsPerParameterOf(arch, format, group_size);
  using Key = std::array<char, sizeof(Architecture) + sizeof(NumberFormat) + sizeof(int)>;
  thread_local absl::flat_hash_map<Key, std::optional<double>> cache;
  Key key;
  std::memcpy(key.data(), static_cast<const void*>(&arch), sizeof(arch));
  std::memcpy(key.data() + sizeof(arch), &format, sizeof(format));
  std::memcpy(key.data() + sizeof(arch) + sizeof(format), &group_size, sizeof(group_size));
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  if (cache.size() > 4096) cache.clear();
  const std::optional<double> bits = BitsPerParameterOf(arch, format, group_size);
  cache.emplace(key, bits);
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
void WriteG(TextWriter& text, double value) {
  if (std::abs(value) < 1e6 && value == std::trunc(value) && !std::signbit(value)) {
    text.Integer(static_cast<int64_t>(value));
  } else {
    text.SignificantDigits(value, 6);
  }
}

// " bytes (bf16) = N bytes per token": the end of every KV-cache text.
void WritePerElementAndTotal(TextWriter& text, double bytes_per_element, NumberFormat format,
                             double bytes) {
  WriteG(text, bytes_per_element);
  text.Literal(" bytes (")
      .Text(NumberFormatNameView(format))
      .Literal(") = ")
      .WholeNumber(bytes)
      .Literal(" bytes per token");
}

// "P parameters x B bits (format: derivation) / 8 = N bytes".
void WriteWeights(double parameters, double bits, NumberFormat format, absl::string_view derivation,
                  double weight_bytes, TextWriter& text) {
  text.WholeNumber(parameters).Literal(" parameters x ");
  WriteG(text, bits);
  text.Literal(" bits (")
      .Text(NumberFormatNameView(format))
      .Literal(": ")
      .Text(derivation)
      .Literal(") / 8 = ")
      .WholeNumber(weight_bytes)
      .Literal(" bytes");
}

int64_t CeilBytes(double bytes) { return static_cast<int64_t>(std::ceil(bytes)); }

// The KV bytes one token takes in one layer of each kind: Gemma 4's
// sliding-window and full-attention layers, each at its own KV heads and
// head width (2 for K and V; their values, taken from the key projection
// with attention_k_eq_v, are still cached apart: they skip the key norm and
// the rotary embedding).
struct LayerTokenKv {
  double sliding = 0;  // a sliding-window layer's (any layer's without a window)
  double full = 0;     // a full-attention layer's
  double Largest() const { return std::max(sliding, full); }
};
LayerTokenKv GlobalGeometryLayerTokenKv(const Architecture& arch, NumberFormat format) {
  const double bytes_per_element = BitsPerElement(format) / 8;
  return {static_cast<double>(arch.EffectiveKvHeads()) *
              (arch.EffectiveHeadDim() + arch.ValueHeadDim()) * bytes_per_element,
          static_cast<double>(arch.GlobalKvHeads()) *
              (arch.GlobalHeadDim() + arch.GlobalValueHeadDim()) * bytes_per_element};
}

// Whether the values are cached at a width of their own (MiMo-V2-Flash's
// 128 beside keys of 192): the KV text then names both widths.
bool ValuesOwnWidth(const Architecture& arch) {
  return arch.ValueHeadDim() != arch.EffectiveHeadDim() ||
         arch.GlobalValueHeadDim() != arch.GlobalHeadDim();
}

// " x 8 KV heads x 128 head dim", or " x 8 KV heads x (192 key + 128
// value)" when the values have a width of their own (the caller then
// writes no "2 (K and V)" factor).
void WriteKvHeads(TextWriter& text, bool own_value_width, int kv_heads, int head_dim,
                  int value_dim) {
  text.Literal(" x ").Integer(kv_heads).Literal(" KV heads x ");
  if (own_value_width) {
    text.Literal("(").Integer(head_dim).Literal(" key + ").Integer(value_dim).Literal(" value)");
  } else {
    text.Integer(head_dim).Literal(" head dim");
  }
}

// KvCacheBytesPerToken, its text written by `text` when not null (the
// KV-cache line writes the tokens after it, in the same writer).
double WriteKvCacheBytesPerToken(const Architecture& arch, NumberFormat format, TextWriter* text) {
  const double bytes_per_element = BitsPerElement(format) / 8;
  // Every layer, or a hybrid's attention layers (Kimi Linear's latent
  // attention sits in 7 of its 27).
  const int kv_layers = KvCacheLayers(arch);
  const auto write_layers = [&arch, kv_layers](TextWriter* writer) -> TextWriter& {
    writer->Integer(kv_layers);
    if (arch.IsHybrid()) {
      writer->Literal(" attention layers (of ").Integer(arch.num_layers).Literal(")");
    } else if (arch.num_cross_attention_layers > 0) {
      writer->Literal(" self-attention layers (of ").Integer(arch.num_layers).Literal(")");
    } else {
      writer->Literal(" layers");
    }
    return *writer;
  };
  if (arch.CachesPerHead()) {
    // An older DeepSeek GGUF (no key_length_mla) in llama.cpp: attention runs
    // as multi-head from the decompressed keys and values, and the cache
    // holds them, each head's key (nope + rope) and value per token and layer
    // (ikawrakow/ik_llama.cpp issue #285: DeepSeek-R1 at llama.cpp build
    // 4905, 2,048 cells, "KV self size = 9760.00 MiB").
    const double per_layer = static_cast<double>(arch.num_attention_heads) *
                             (arch.qk_nope_head_dim + arch.qk_rope_head_dim + arch.v_head_dim);
    const double bytes = kv_layers * per_layer * bytes_per_element;
    if (text == nullptr) return bytes;
    write_layers(text)
        .Literal(" x ")
        .Integer(arch.num_attention_heads)
        .Literal(" heads x (")
        .Integer(arch.qk_nope_head_dim + arch.qk_rope_head_dim)
        .Literal(" key + ")
        .Integer(arch.v_head_dim)
        .Literal(" value, decompressed: the file predates llama.cpp's latent cache) x ");
    WritePerElementAndTotal(*text, bytes_per_element, format, bytes);
    return bytes;
  }
  if (arch.UsesMla()) {
    // DeepSeek-V2/V3: one compressed latent plus the shared rotary key per
    // token and layer; DeepSeek-V3.2 adds its indexer's key, which every
    // token keeps (the sparse attention selects among them), sized here at
    // the cache's format (vLLM keeps it in FP8 with a scale per 128).
    const double elements = arch.kv_lora_rank + arch.qk_rope_head_dim + arch.index_head_dim;
    const double bytes = kv_layers * elements * bytes_per_element;
    if (text == nullptr) return bytes;
    write_layers(text)
        .Literal(" x (")
        .Integer(arch.kv_lora_rank)
        .Literal(" kv_lora_rank + ")
        .Integer(arch.qk_rope_head_dim)
        .Literal(" qk_rope_head_dim");
    if (arch.index_head_dim > 0) {
      text->Literal(" + ").Integer(arch.index_head_dim).Literal(" indexer key");
    }
    text->Literal(") x ");
    WritePerElementAndTotal(*text, bytes_per_element, format, bytes);
    return bytes;
  }
  if (arch.num_decoder_layers > 0) {
    // Encoder-decoder: the decoder's self-attention and cross-attention
    // caches (encoder length x decoder layers), nothing for the encoder.
    const double bytes = 2.0 * 2.0 * arch.num_decoder_layers * arch.EffectiveKvHeads() *
                         arch.EffectiveHeadDim() * bytes_per_element;
    if (text == nullptr) return bytes;
    text->Literal(
            "2 (K and V) x 2 (decoder self attention over the output + cross attention over "
            "the encoder's input, each the context long) x ")
        .Integer(arch.num_decoder_layers)
        .Literal(" decoder layers x ")
        .Integer(arch.EffectiveKvHeads())
        .Literal(" KV heads x ")
        .Integer(arch.EffectiveHeadDim())
        .Literal(" head dim x ");
    WritePerElementAndTotal(*text, bytes_per_element, format, bytes);
    text->Literal(" (the encoder caches nothing)");
    return bytes;
  }
  if (arch.HasGlobalGeometry()) {
    // Gemma 4: the sliding-window layers and the full-attention layers each
    // at their own heads and width.
    const int sliding = SlidingLayers(arch);
    const int full = kv_layers - sliding;
    const LayerTokenKv each = GlobalGeometryLayerTokenKv(arch, format);
    const double bytes = sliding * each.sliding + full * each.full;
    if (text == nullptr) return bytes;
    const bool own_values = ValuesOwnWidth(arch);
    if (own_values) {
      text->Literal("(");
    } else {
      text->Literal("2 (K and V) x (");
    }
    text->Integer(sliding).Literal(" sliding-window layers");
    WriteKvHeads(*text, own_values, arch.EffectiveKvHeads(), arch.EffectiveHeadDim(),
                 arch.ValueHeadDim());
    text->Literal(" + ").Integer(full).Literal(" full-attention layers");
    WriteKvHeads(*text, own_values, arch.GlobalKvHeads(), arch.GlobalHeadDim(),
                 arch.GlobalValueHeadDim());
    if (arch.global_values_from_keys) {
      text->Literal(", their values from the keys but cached apart");
    }
    if (arch.num_kv_shared_layers > 0) {
      text->Literal("; the last ")
          .Integer(arch.num_kv_shared_layers)
          .Literal(" of ")
          .Integer(arch.num_layers)
          .Literal(" layers cache nothing, reusing earlier layers' caches");
    }
    text->Literal(") x ");
    WritePerElementAndTotal(*text, bytes_per_element, format, bytes);
    return bytes;
  }
  const double bytes = static_cast<double>(kv_layers) * arch.EffectiveKvHeads() *
                       (arch.EffectiveHeadDim() + arch.ValueHeadDim()) * bytes_per_element;
  if (text == nullptr) return bytes;
  if (arch.IsHybrid() && kv_layers == 0) {
    text->Literal("no attention layer (")
        .Integer(arch.num_recurrent_layers)
        .Literal(" recurrent layers keep a fixed state instead): 0 bytes per token");
    return bytes;
  }
  // A transformer: every layer, or a hybrid's attention layers.
  const bool own_values = ValuesOwnWidth(arch);
  if (!own_values) text->Literal("2 (K and V) x ");
  write_layers(text);
  WriteKvHeads(*text, own_values, arch.EffectiveKvHeads(), arch.EffectiveHeadDim(),
               arch.ValueHeadDim());
  text->Literal(" x ");
  WritePerElementAndTotal(*text, bytes_per_element, format, bytes);
  return bytes;
}

// The same from the per-token figure of `layers` layers: equal, but for
// Gemma 4's full-attention layers at their own geometry.
LayerTokenKv KvBytesPerLayerToken(const Architecture& arch, NumberFormat format, double per_token,
                                  int layers) {
  if (layers <= 0) return {};
  if (!arch.HasGlobalGeometry()) return {per_token / layers, per_token / layers};
  return GlobalGeometryLayerTokenKv(arch, format);
}

// KvCacheBytes from the per-token figure and the KV-cache layers
// (SizeInference has both already).
double KvCacheBytesFromPerToken(const Architecture& arch, NumberFormat format, double per_token,
                                int layers, int64_t context_tokens, int batch, int images) {
  if (arch.num_cross_attention_layers > 0) {
    // Llama 3.2 Vision (no window): the text's tokens in the self-attention
    // layers, the images' positions in the cross-attention ones.
    return (per_token * static_cast<double>(context_tokens) +
            CrossAttentionCacheBytesPerSequence(arch, format, images)) *
           batch;
  }
  if (arch.sliding_window > 0 && arch.sliding_window < context_tokens && layers > 0) {
    // Sliding-window layers keep only the last `window` tokens.
    const int sliding = SlidingLayers(arch);
    const LayerTokenKv each = KvBytesPerLayerToken(arch, format, per_token, layers);
    return (each.sliding * sliding * static_cast<double>(arch.sliding_window) +
            each.full * (layers - sliding) * static_cast<double>(context_tokens)) *
           batch;
  }
  return per_token * static_cast<double>(context_tokens) * batch;
}

}  // namespace

double KvCacheBytesPerToken(const Architecture& arch, NumberFormat format,
                            std::string* arithmetic) {
  if (arithmetic == nullptr) return WriteKvCacheBytesPerToken(arch, format, nullptr);
  arithmetic->clear();
  TextWriter text(arithmetic);
  return WriteKvCacheBytesPerToken(arch, format, &text);
}

int KvCacheLayers(const Architecture& arch) {
  if (arch.IsHybrid()) return arch.num_attention_layers;
  if (arch.num_decoder_layers > 0) return arch.num_decoder_layers;
  // Gemma 4 E2B/E4B: the last layers reuse earlier layers' caches.
  return arch.KvOwnLayers();
}

namespace {

// RecurrentStateBytesPerSequence's figure, or with `all_fp32` every state
// element at 4 bytes (llama.cpp's); the arithmetic only for the former.
double RecurrentStateBytes(const Architecture& arch, bool all_fp32, std::string* arithmetic) {
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
    case RecurrentMixer::kKimiDelta:
      // Kimi Delta Attention keeps the same (vLLM kda_state_shape: the q, k
      // and v convs' windows, 2GN + I channels, and H x N x I/H in fp32;
      // llama.cpp's n_embd_r() and n_embd_s()).
      channels = 2 * G * N + I;
      ssm = I * N;
      ssm_text = absl::StrCat(Int(H), " value heads x ", Int(N), " key dim x ",
                              Int(H > 0 ? I / H : 0), " value dim");
      break;
    case RecurrentMixer::kShortConv:
      // llama.cpp's n_embd_r() (n_embd x (l_cache - 1)) and vLLM's
      // short_conv_state_shape ((conv_L_cache - 1) x conv_dim): the window
      // only, no state. (transformers' Lfm2HybridConvCache keeps conv_L_cache
      // columns for every layer.)
      channels = I;
      break;
    default:
      return 0;
  }
  const double conv_bytes = all_fp32 ? 4 : 2, ssm_bytes = all_fp32 || arch.ssm_state_fp32 ? 4 : 2;
  const double per_layer = conv_window * channels * conv_bytes + ssm * ssm_bytes;
  const double bytes = per_layer * arch.num_recurrent_layers;
  if (arithmetic != nullptr && !all_fp32) {
    *arithmetic = absl::StrCat(
        arch.num_recurrent_layers, " recurrent layers x (conv ", Int(conv_window), " (kernel ",
        arch.ssm_conv_kernel, " - 1) x ", Int(channels), " channels x 2 bytes",
        ssm > 0 ? absl::StrCat(" + SSM ", ssm_text, " x ", Int(ssm_bytes), " bytes",
                               arch.ssm_state_fp32 ? " (fp32)" : " (16-bit)")
                : "",
        ") = ", Int(bytes),
        " bytes per sequence, whatever the context (vLLM's mamba state shapes)");
  }
  return bytes;
}

}  // namespace

double RecurrentStateBytesPerSequence(const Architecture& arch, std::string* arithmetic) {
  return RecurrentStateBytes(arch, /*all_fp32=*/false, arithmetic);
}

double LlamaCppRecurrentStateBytesPerSequence(const Architecture& arch) {
  return RecurrentStateBytes(arch, /*all_fp32=*/true, nullptr);
}

double CrossAttentionCacheBytesPerSequence(const Architecture& arch, NumberFormat format,
                                           int images) {
  if (arch.num_cross_attention_layers <= 0) return 0;
  return 2.0 * arch.num_cross_attention_layers * arch.EffectiveKvHeads() * arch.EffectiveHeadDim() *
         static_cast<double>(arch.cross_attention_positions) * images * BitsPerElement(format) / 8;
}

int SlidingLayers(const Architecture& arch) {
  if (arch.num_kv_shared_layers > 0 && arch.sliding_window > 0) {
    return KvCacheLayers(arch) - arch.KvOwnFullLayers();
  }
  return arch.num_sliding_window_layers > 0
             ? std::min(arch.num_sliding_window_layers, KvCacheLayers(arch))
             : KvCacheLayers(arch);
}

int LayersAsLargeAsTheLargest(const Architecture& arch) {
  absl::StatusOr<ParameterCount> count = CountParameterTotals(arch);
  if (!count.ok() || !(count->largest_layer > 0)) return arch.num_layers;
  return std::clamp(static_cast<int>(std::floor(count->non_embedding / count->largest_layer)), 1,
                    arch.num_layers);
}

double KvCacheBytes(const Architecture& arch, NumberFormat format, int64_t context_tokens,
                    int batch, int images) {
  return KvCacheBytesFromPerToken(arch, format, WriteKvCacheBytesPerToken(arch, format, nullptr),
                                  KvCacheLayers(arch), context_tokens, batch, images);
}

double TokenMlpWidth(const Architecture& arch) {
  double width = static_cast<double>(arch.intermediate_size);
  if (arch.IsMoe()) {
    // Mixtral's experts are intermediate_size wide (moe_intermediate_size 0).
    const double expert = static_cast<double>(
        arch.moe_intermediate_size > 0 ? arch.moe_intermediate_size : arch.intermediate_size);
    // Shared experts as the count takes them (parameters.cc): Qwen2-MoE's
    // one of its own width, DeepSeek's n_shared_experts of an expert's.
    const double shared = arch.shared_expert_intermediate_size > 0
                              ? static_cast<double>(arch.shared_expert_intermediate_size) *
                                    std::max(1, arch.num_shared_experts)
                              : expert * std::max(0, arch.num_shared_experts);
    const double active = expert * std::max(1, arch.num_experts_per_token) + shared;
    width = arch.num_dense_layers > 0 ? std::max(active, width) : active;
  }
  return width * (arch.kv_shared_layers_double_mlp ? 2 : 1);
}

namespace {

// The figures of PrefillWorkspaceBytes's formula (its text shows each).
struct PrefillWorkspace {
  int chunk_tokens = 0;
  int batch = 0;
  double hidden = 0;
  double attention = 0;  // q/k/v widths
  double mlp = 0;
  int64_t vocab_size = 0;
  double bytes = 0;
};

PrefillWorkspace PrefillWorkspaceOf(const Architecture& arch, int chunk_tokens, int batch) {
  PrefillWorkspace figures;
  figures.chunk_tokens = chunk_tokens;
  figures.batch = batch;
  figures.vocab_size = arch.vocab_size;
  const double h = static_cast<double>(arch.hidden_size);
  // q, k and v (values at their own width: MiMo-V2-Flash's 128 beside 192).
  double attention = static_cast<double>(arch.num_attention_heads + arch.EffectiveKvHeads()) *
                         arch.EffectiveHeadDim() +
                     static_cast<double>(arch.EffectiveKvHeads()) * arch.ValueHeadDim();
  if (arch.HasGlobalGeometry()) {
    // Gemma 4: a full-attention layer's q/k/v when wider (31B: 40 x 512),
    // at its own query heads (Step-3.5-Flash's 64 beside 96).
    attention = std::max(attention,
                         static_cast<double>(arch.GlobalAttentionHeads() + arch.GlobalKvHeads()) *
                                 arch.GlobalHeadDim() +
                             static_cast<double>(arch.GlobalKvHeads()) * arch.GlobalValueHeadDim());
  }
  const double mlp = TokenMlpWidth(arch) * (arch.gated_mlp ? 2 : 1);
  const double per_token = 2 * h + attention + mlp;
  const double logits = static_cast<double>(batch) * static_cast<double>(arch.vocab_size) * 4;
  figures.hidden = h;
  figures.attention = attention;
  figures.mlp = mlp;
  figures.bytes = chunk_tokens * per_token * 2 + logits;
  return figures;
}

void WritePrefillWorkspace(const PrefillWorkspace& figures, TextWriter& text) {
  text.Integer(figures.chunk_tokens)
      .Literal(" tokens x (2x")
      .WholeNumber(figures.hidden)
      .Literal(" hidden + ")
      .WholeNumber(figures.attention)
      .Literal(" q/k/v + ")
      .WholeNumber(figures.mlp)
      .Literal(" MLP) x 2 bytes + ")
      .Integer(figures.batch)
      .Literal(" x ")
      .Integer(figures.vocab_size)
      .Literal(" vocab x 4 bytes (fp32 logits) = ")
      .WholeNumber(std::ceil(figures.bytes))
      .Literal(" bytes");
}

}  // namespace

double PrefillWorkspaceBytes(const Architecture& arch, int chunk_tokens, int batch,
                             std::string* arithmetic) {
  const PrefillWorkspace figures = PrefillWorkspaceOf(arch, chunk_tokens, batch);
  if (arithmetic == nullptr) return figures.bytes;
  arithmetic->clear();
  TextWriter text(arithmetic);
  WritePrefillWorkspace(figures, text);
  return figures.bytes;
}

namespace {

// Two 32-bit figures as one key word.
uint64_t Pair(int64_t high, int64_t low) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(high)) << 32) | static_cast<uint32_t>(low);
}

// The weights line's text into `out` (empty): `derivation` is the format's
// own (EncodingOf's: a function of the format and the group size), so the
// text is a function of the key and is remembered per thread.
void WeightsTextOfFormat(double parameters, double bits, NumberFormat format, int group_size,
                         absl::string_view derivation, double weight_bytes, std::string* out) {
  using Memo = TextMemo<3>;
  thread_local Memo memo;
  const Memo::Key key = {Memo::Word(parameters), Memo::Word(bits),
                         Pair(static_cast<int>(format), group_size)};
  if (const std::string* known = memo.Find(key)) {
    out->assign(*known);
    return;
  }
  {
    TextWriter text(out);
    WriteWeights(parameters, bits, format, derivation, weight_bytes, text);
  }
  memo.Remember(key, *out);
}

// The KV-cache line's text into `out` (empty): the per-token arithmetic,
// then the tokens and `total_bytes` (the line's figure), remembered per
// thread by every figure the text shows or is computed from.
void KvCacheText(const Architecture& arch, const ResolvedWorkload& w, int kv_layers,
                 double per_token, double total_bytes, std::string* out) {
  using Memo = TextMemo<13>;
  thread_local Memo memo;
  const int64_t context = w.context_length_tokens;
  const int sliding_layers = SlidingLayers(arch);
  const Memo::Key key = {
      Pair(static_cast<int>(w.kv_cache_format), arch.num_layers),
      // A per-head cache of a latent-attention file: its rank negated.
      Pair(arch.latent_cache_per_head ? -arch.kv_lora_rank : arch.kv_lora_rank,
           arch.qk_rope_head_dim),
      Pair(arch.num_decoder_layers, kv_layers),
      Pair(static_cast<int>(arch.recurrent_mixer), arch.num_recurrent_layers),
      Pair(arch.EffectiveKvHeads(), arch.EffectiveHeadDim()), Pair(w.batch_size, sliding_layers),
      static_cast<uint64_t>(context), static_cast<uint64_t>(arch.sliding_window),
      Memo::Word(total_bytes), Pair(arch.index_heads, arch.index_head_dim),
      // Gemma 4's full-attention geometry (0 without one).
      arch.HasGlobalGeometry()
          ? Pair(2 * arch.GlobalKvHeads() + (arch.global_values_from_keys ? 1 : 0),
                 arch.GlobalHeadDim())
          : 0,
      Pair(arch.num_cross_attention_layers | (w.images_per_sequence << 16),
           static_cast<int>(arch.cross_attention_positions)),
      // Values at a width of their own (MiMo-V2-Flash).
      Pair(arch.ValueHeadDim(), arch.GlobalValueHeadDim())};
  if (const std::string* known = memo.Find(key)) {
    out->assign(*known);
    return;
  }
  {
    TextWriter text(out);
    WriteKvCacheBytesPerToken(arch, w.kv_cache_format, &text);
    if (arch.sliding_window > 0 && arch.sliding_window < context && arch.HasGlobalGeometry()) {
      const LayerTokenKv each = KvBytesPerLayerToken(arch, w.kv_cache_format, per_token, kv_layers);
      text.Literal("; the ")
          .Integer(sliding_layers)
          .Literal(" sliding-window layers keep only the ")
          .Integer(arch.sliding_window)
          .Literal("-token window: (")
          .Integer(sliding_layers)
          .Literal(" x ")
          .Integer(arch.sliding_window)
          .Literal(" tokens x ")
          .WholeNumber(each.sliding)
          .Literal(" bytes + ")
          .Integer(kv_layers - sliding_layers)
          .Literal(" x ")
          .Integer(context)
          .Literal(" tokens x ")
          .WholeNumber(each.full)
          .Literal(" bytes per layer-token) x ")
          .Integer(w.batch_size)
          .Literal(" sequences = ");
    } else if (arch.sliding_window > 0 && arch.sliding_window < context) {
      const double per_layer = per_token / kv_layers;
      const double window_tokens = static_cast<double>(arch.sliding_window);
      text.Literal("; ")
          .Integer(sliding_layers)
          .Literal(" of ")
          .Integer(kv_layers)
          .Literal(" layers keep only the ")
          .Integer(arch.sliding_window)
          .Literal("-token window: (")
          .Integer(sliding_layers)
          .Literal(" x ")
          .WholeNumber(window_tokens)
          .Literal(" tokens + ")
          .Integer(kv_layers - sliding_layers)
          .Literal(" x ")
          .Integer(context)
          .Literal(" tokens) x ")
          .WholeNumber(per_layer)
          .Literal(" bytes per layer-token x ")
          .Integer(w.batch_size)
          .Literal(" sequences = ");
    } else if (arch.num_cross_attention_layers > 0) {
      const double bytes_per_element = BitsPerElement(w.kv_cache_format) / 8;
      const int images = w.images_per_sequence;
      text.Literal("; per sequence x ")
          .Integer(context)
          .Literal(" tokens + cross-attention cache of ")
          .Integer(images);
      if (images == 1) {
        text.Literal(" image: ");
      } else {
        text.Literal(" images: ");
      }
      text.Integer(arch.num_cross_attention_layers)
          .Literal(" layers x 2 (K and V) x ")
          .Integer(arch.EffectiveKvHeads())
          .Literal(" KV heads x ")
          .Integer(arch.EffectiveHeadDim())
          .Literal(" head dim x ")
          .Integer(arch.cross_attention_positions)
          .Literal(" positions per image x ")
          .Integer(images)
          .Literal(" x ");
      WriteG(text, bytes_per_element);
      text.Literal(" bytes = ")
          .WholeNumber(CrossAttentionCacheBytesPerSequence(arch, w.kv_cache_format, images))
          .Literal(" bytes; x ")
          .Integer(w.batch_size)
          .Literal(" sequences = ");
    } else {
      text.Literal("; x ")
          .Integer(context)
          .Literal(" tokens x ")
          .Integer(w.batch_size)
          .Literal(" sequences = ");
    }
    text.WholeNumber(total_bytes).Literal(" bytes");
  }
  memo.Remember(key, *out);
}

// The activation line's text into `out` (empty), remembered per thread by
// the figures it shows (its total is computed from them).
void ActivationText(const PrefillWorkspace& figures, std::string* out) {
  using Memo = TextMemo<5>;
  thread_local Memo memo;
  const Memo::Key key = {Pair(figures.chunk_tokens, figures.batch), Memo::Word(figures.hidden),
                         Memo::Word(figures.attention), Memo::Word(figures.mlp),
                         static_cast<uint64_t>(figures.vocab_size)};
  if (const std::string* known = memo.Find(key)) {
    out->assign(*known);
    return;
  }
  {
    TextWriter text(out);
    WritePrefillWorkspace(figures, text);
  }
  memo.Remember(key, *out);
}

// The weight format's bits per element and their derivation: the table's
// own text for every format but GPTQ/AWQ (no string built), whose group
// size makes theirs (kept in `grouped`, which `derivation` then views: not
// to be copied or moved).
struct FormatEncoding {
  double bits = 0;
  absl::string_view derivation;
  std::string grouped;
};
absl::Status FormatEncodingOf(NumberFormat format, int group_size, FormatEncoding* out) {
  if (std::optional<FixedEncoding> fixed = FixedEncodingOf(format)) {
    out->bits = fixed->bits_per_element;
    out->derivation = fixed->derivation;
    return absl::OkStatus();
  }
  absl::StatusOr<Encoding> grouped = EncodingOf(format, group_size);
  if (!grouped.ok()) return grouped.status();
  out->bits = grouped->bits_per_element;
  out->grouped = std::move(grouped->derivation);
  out->derivation = out->grouped;
  return absl::OkStatus();
}

// Where SizeInferenceInto writes its texts: an InferenceArithmetic's
// (SizeInference), or the estimate's lines themselves
// (EstimateInferenceMemoryInto: no text is moved into a line afterwards).
struct ArithmeticTexts {
  std::string* weights;
  std::string* kv_cache;
  std::string* recurrent_state;
  std::string* activations;
  std::string* overhead;
  std::vector<std::string>* warnings;
};

// SizeInference into `*sizing` (a fresh one): the memory answer's path
// keeps it without the StatusOr's copy. On an error `*sizing` is partial.
// `arithmetic` null: numbers only.
absl::Status SizeInferenceInto(const InferenceMemoryInput& input, const ArithmeticTexts* arithmetic,
                               InferenceSizing* out) {
  const ResolvedWorkload& w = input.workload;
  {
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
    if (!violations.empty()) return violations.ToStatus();
  }

  const Architecture* shape = input.architecture.has_value() && input.architecture->num_layers > 0
                                  ? &*input.architecture
                                  : nullptr;
  // This model's weights in this format, sized once and kept (a catalog
  // record's), when the caller has them: no encoding, file or text made.
  const WeightsPart* kept =
      arithmetic != nullptr && input.prepared_weights != nullptr
          ? input.prepared_weights->Get(input.parameters, shape, w.weight_format,
                                        w.quantization_group_size)
          : nullptr;
  FormatEncoding encoding;
  if (kept == nullptr) {
    if (absl::Status bad = FormatEncodingOf(w.weight_format, w.quantization_group_size, &encoding);
        !bad.ok()) {
      return bad;
    }
  }
  const double format_bits = kept != nullptr ? kept->format_bits : encoding.bits;
  if (arithmetic != nullptr) {
    // A reused arithmetic (EstimateInferenceMemoryInto) starts empty, its
    // buffers kept.
    for (std::string* text :
         {arithmetic->weights, arithmetic->kv_cache, arithmetic->recurrent_state,
          arithmetic->activations, arithmetic->overhead}) {
      text->clear();
    }
    arithmetic->warnings->clear();
  }

  InferenceSizing& sizing = *out;
  sizing.batch_size = w.batch_size;
  sizing.parameters = input.parameters;
  sizing.context_length_tokens = w.context_length_tokens;
  double bits = format_bits;
  if (kept != nullptr) {
    bits = kept->bits;
    sizing.weight_bytes = kept->bytes;
    arithmetic->weights->assign(kept->text);
  } else {
    // The file's derivation when sized tensor by tensor, else the format's.
    bool by_tensor = false;
    std::string file_derivation;
    // A quantized file keeps some tensors in more bits (embeddings, output
    // head, norms; llama.cpp's per-tensor types): with a shape, size it
    // tensor by tensor (core/weight_files.h).
    if (shape != nullptr && SizedByTensor(w.weight_format)) {
      if (arithmetic == nullptr) {
        // Numbers only (whole-catalog answers size thousands of rows): the
        // bits per parameter of a shape and format, remembered.
        if (std::optional<double> cached =
                CachedBitsPerParameter(*shape, w.weight_format, w.quantization_group_size)) {
          bits = *cached;
        }
      } else {
        absl::StatusOr<WeightFile> sized =
            WeightFileOf(*shape, w.weight_format, w.quantization_group_size);
        if (sized.ok() && sized->parameters > 0) {
          bits = sized->bits_per_parameter;
          by_tensor = true;
          file_derivation = std::move(sized->derivation);
        }
      }
    }
    const double weight_bytes = input.parameters * bits / 8;
    sizing.weight_bytes = std::ceil(weight_bytes);
    if (arithmetic != nullptr && by_tensor) {
      TextWriter text(arithmetic->weights);
      WriteWeights(input.parameters, bits, w.weight_format, file_derivation, sizing.weight_bytes,
                   text);
    } else if (arithmetic != nullptr) {
      WeightsTextOfFormat(input.parameters, bits, w.weight_format, w.quantization_group_size,
                          encoding.derivation, sizing.weight_bytes, arithmetic->weights);
    }
  }

  if (shape != nullptr) {
    const Architecture& arch = *shape;
    if (arch.HasGlobalGeometry()) {
      // Which layers are full-attention ones decides the cache: a geometry
      // the count refuses (no sliding layers to tell them apart) is refused
      // here too, not sized as if every layer were one kind.
      if (absl::Status shape_status = CheckArchitectureShape(arch); !shape_status.ok()) {
        return shape_status;
      }
    }
    sizing.num_attention_heads = arch.num_attention_heads;
    // Tensor parallelism splits the fewer KV heads no further (Gemma 4's
    // full-attention layers have fewer): the cache is divided by at most
    // those (KvCacheDivisor), an upper bound for the other layers.
    sizing.num_key_value_heads = arch.HasGlobalGeometry()
                                     ? std::min(arch.EffectiveKvHeads(), arch.GlobalKvHeads())
                                     : arch.EffectiveKvHeads();
    sizing.hidden_size = arch.hidden_size;
    sizing.kv_cache_replicated = arch.CachesLatent();
    if (arch.num_decoder_layers == 0) {
      sizing.num_layers = arch.num_layers;
      sizing.num_largest_layers =
          arch.IsMoe() && arch.num_dense_layers > 0 && arch.num_dense_layers < arch.num_layers
              ? arch.num_layers - arch.num_dense_layers
              : arch.num_layers;
      if (arch.HasLayerWidths()) sizing.num_largest_layers = LayersAsLargeAsTheLargest(arch);
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
          const double expert_bits = std::min(format_bits, average_bits);
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
  if (shape != nullptr) {
    const Architecture& arch = *shape;
    const int64_t context = w.context_length_tokens;
    const double per_token = WriteKvCacheBytesPerToken(arch, w.kv_cache_format, nullptr);
    const int kv_layers = KvCacheLayers(arch);
    const double kv_bytes = KvCacheBytesFromPerToken(arch, w.kv_cache_format, per_token, kv_layers,
                                                     context, w.batch_size, w.images_per_sequence);
    if (kv_bytes > kMaxBytes) {
      return InvalidFieldError(
          "context_length_tokens",
          "context x batch gives a KV cache beyond any device (over 4e18 bytes)");
    }
    // Hybrids: the recurrent layers' state, per sequence whatever the
    // context, beside the attention layers' KV cache.
    std::string* state_arithmetic = arithmetic != nullptr ? arithmetic->recurrent_state : nullptr;
    const double state_per_sequence = RecurrentStateBytesPerSequence(arch, state_arithmetic);
    sizing.recurrent_state_bytes = std::ceil(state_per_sequence * w.batch_size);
    if (arithmetic != nullptr && state_per_sequence > 0) {
      TextWriter(arithmetic->recurrent_state)
          .Literal(" x ")
          .Integer(w.batch_size)
          .Literal(" sequences = ")
          .WholeNumber(sizing.recurrent_state_bytes)
          .Literal(" bytes");
    }
    sizing.kv_cache_bytes = std::ceil(kv_bytes) + sizing.recurrent_state_bytes;
    sizing.model_kv_cache_bytes = sizing.kv_cache_bytes;
    // The largest layer keeps the whole context (an upper bound for a
    // sliding-window layer).
    const LayerTokenKv each_layer =
        KvBytesPerLayerToken(arch, w.kv_cache_format, per_token, kv_layers);
    // A cross-attention layer holds its image positions (Llama 3.2 Vision).
    const double layer_kv = std::max(each_layer.Largest() * static_cast<double>(context),
                                     arch.num_cross_attention_layers > 0
                                         ? CrossAttentionCacheBytesPerSequence(
                                               arch, w.kv_cache_format, w.images_per_sequence) /
                                               arch.num_cross_attention_layers
                                         : 0.0) *
                            w.batch_size;
    if (each_layer.Largest() > 0) {
      sizing.kv_cache_sliding_layer_share = each_layer.sliding / each_layer.Largest();
    }
    const double layer_state = arch.num_recurrent_layers > 0
                                   ? state_per_sequence / arch.num_recurrent_layers * w.batch_size
                                   : 0;
    // Falcon-H1 runs both mixers in every layer: its layers hold both.
    const bool both_in_a_layer =
        arch.IsHybrid() && arch.num_attention_layers + arch.num_recurrent_layers > arch.num_layers;
    sizing.kv_cache_bytes_largest_layer =
        std::ceil(both_in_a_layer ? layer_kv + layer_state : std::max(layer_kv, layer_state));
    const PrefillWorkspace workspace =
        PrefillWorkspaceOf(arch, w.prefill_chunk_tokens, w.batch_size);
    sizing.activation_bytes = std::ceil(workspace.bytes);
    if (arithmetic != nullptr) {
      KvCacheText(arch, w, kv_layers, per_token,
                  sizing.kv_cache_bytes - sizing.recurrent_state_bytes, arithmetic->kv_cache);
      ActivationText(workspace, arithmetic->activations);
      if (context == 0) {
        arithmetic->warnings->push_back("no context length given: KV cache not counted");
      }
      if (arch.max_context_length > 0 && context > arch.max_context_length) {
        arithmetic->warnings->push_back(absl::StrCat(
            "context ", context, " tokens is beyond the model's maximum context on record (",
            arch.max_context_length,
            " tokens): the KV cache is sized as asked, but the model may not serve that context "
            "without extending it (e.g. RoPE scaling)"));
      }
      if (arch.num_cross_attention_layers > 0 && w.images_per_sequence_defaulted) {
        arithmetic->warnings->push_back(absl::StrCat(
            "the cross-attention cache is sized for one image per sequence (the default) at its "
            "most tiles (",
            arch.cross_attention_positions,
            " positions); each further image in a sequence adds as much, and a sequence "
            "without an image needs none: images_per_sequence sets it"));
      } else if (arch.num_cross_attention_layers == 0 && !w.images_per_sequence_defaulted) {
        arithmetic->warnings->push_back(absl::StrCat(
            "images_per_sequence (", w.images_per_sequence,
            ") is not used: the model has no cross-attention layers. A model that reads images "
            "without them takes each image as tokens of the context: count them in "
            "context_length_tokens"));
      }
      if (arch.CachesPerHead()) {
        const double latent = arch.kv_lora_rank + arch.qk_rope_head_dim;
        arithmetic->warnings->push_back(absl::StrCat(
            "this GGUF file stores latent attention in llama.cpp's older layout (no "
            "attention.key_length_mla): llama.cpp runs it as multi-head attention and caches "
            "every head's key and value, ",
            absl::StrFormat("%.1f",
                            arch.num_attention_heads *
                                (arch.qk_nope_head_dim + arch.qk_rope_head_dim + arch.v_head_dim) /
                                latent),
            "x the ", latent,
            "-element latent per token and layer; a file converted since April 2025 (llama.cpp "
            "pull request #12801) caches the latent"));
      }
    }
    sizing.kv_cache_not_counted = context == 0 && sizing.kv_cache_bytes == 0;
  } else {
    sizing.kv_cache_not_counted = true;
    if (arithmetic != nullptr) {
      arithmetic->warnings->push_back("no architecture on record: KV cache not counted");
    }
  }

  sizing.overhead_bytes = static_cast<double>(w.overhead_bytes);
  if (arithmetic != nullptr) {
    TextWriter text(arithmetic->overhead);
    if (w.overhead_bytes == ResolvedWorkload::kDefaultOverheadBytes) {
      // The default's text is a constant: one piece.
      static_assert(ResolvedWorkload::kDefaultOverheadBytes == 1073741824);
      text.Literal("1073741824 bytes (default: CUDA context and allocator reserve, 1 GiB)");
    } else {
      text.Integer(w.overhead_bytes).Literal(" bytes (as requested)");
    }
  }
  return absl::OkStatus();
}

// The components of an estimate's lines, as their names.
constexpr absl::string_view kWeightsLine = "weights";
constexpr absl::string_view kKvCacheLine = "kv_cache";
constexpr absl::string_view kRecurrentStateLine = "recurrent_state";
constexpr absl::string_view kActivationsLine = "activations";
constexpr absl::string_view kOverheadLine = "overhead";

}  // namespace

absl::Status SizeWeightsPart(double parameters, const Architecture* shape, NumberFormat format,
                             int group_size, WeightsPart* out) {
  // SizeInferenceInto's weights with their text, written whole (no memo):
  // the same bits, bytes and characters (the golden replies hold both).
  FormatEncoding encoding;
  if (absl::Status bad = FormatEncodingOf(format, group_size, &encoding); !bad.ok()) return bad;
  out->parameters = parameters;
  out->group_size = group_size;
  out->format_bits = encoding.bits;
  out->bits = encoding.bits;
  absl::string_view derivation = encoding.derivation;
  absl::StatusOr<WeightFile> file = absl::UnavailableError("not sized by tensor");
  if (shape != nullptr && SizedByTensor(format)) {
    file = WeightFileOf(*shape, format, group_size);
    if (file.ok() && file->parameters > 0) {
      out->bits = file->bits_per_parameter;
      derivation = file->derivation;
    }
  }
  out->bytes = std::ceil(parameters * out->bits / 8);
  out->text.clear();
  TextWriter text(&out->text);
  WriteWeights(parameters, out->bits, format, derivation, out->bytes, text);
  return absl::OkStatus();
}

PreparedWeights::~PreparedWeights() {
  for (std::atomic<const WeightsPart*>& slot : slots_) delete slot.load(std::memory_order_acquire);
}

const WeightsPart* PreparedWeights::Get(double parameters, const Architecture* shape,
                                        NumberFormat format, int group_size) const {
  const size_t index = static_cast<size_t>(format);
  if (index >= slots_.size()) return nullptr;
  std::atomic<const WeightsPart*>& slot = slots_[index];
  const WeightsPart* part = slot.load(std::memory_order_acquire);
  if (part == nullptr) {
    auto made = std::make_unique<WeightsPart>();
    if (!SizeWeightsPart(parameters, shape, format, group_size, made.get()).ok()) return nullptr;
    // The first copy published is kept; a thread that lost the race drops
    // its own and uses the winner's.
    if (slot.compare_exchange_strong(part, made.get(), std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      part = made.release();
    }
  }
  // Kept for the figures first asked; any other asks are sized by the caller.
  // (Bits, not ==: the same parameters, NaN never kept as equal.)
  if (std::bit_cast<uint64_t>(part->parameters) != std::bit_cast<uint64_t>(parameters) ||
      part->group_size != group_size) {
    return nullptr;
  }
  return part;
}

size_t PreparedWeights::kept() const {
  size_t count = 0;
  for (const std::atomic<const WeightsPart*>& slot : slots_) {
    count += slot.load(std::memory_order_acquire) != nullptr ? 1 : 0;
  }
  return count;
}

absl::StatusOr<InferenceSizing> SizeInference(const InferenceMemoryInput& input,
                                              InferenceArithmetic* arithmetic) {
  InferenceSizing sizing;
  const ArithmeticTexts texts =
      arithmetic == nullptr
          ? ArithmeticTexts{}
          : ArithmeticTexts{&arithmetic->weights,         &arithmetic->kv_cache,
                            &arithmetic->recurrent_state, &arithmetic->activations,
                            &arithmetic->overhead,        &arithmetic->warnings};
  if (absl::Status sized =
          SizeInferenceInto(input, arithmetic != nullptr ? &texts : nullptr, &sizing);
      !sized.ok()) {
    return sized;
  }
  return sizing;
}

absl::Status EstimateInferenceMemoryInto(const InferenceMemoryInput& input,
                                         InferenceArithmetic* arithmetic,
                                         InferenceMemoryEstimate* estimate) {
  // The texts are written into the lines they belong to, in place: weights,
  // KV cache, activations and overhead in the first four (the order of a
  // model with a shape, the common one), the rarer recurrent state into the
  // scratch and moved to its line after. A reused estimate's lines keep
  // their buffers, so nothing is allocated once warm and no text is moved
  // into a line (five string swaps a call were ~150 instructions of the
  // computed estimate; docs/BENCHMARKS.md, session 17, branch s17-estimate).
  std::vector<EstimateLine>& lines = estimate->lines;
  if (lines.size() < 4) lines.resize(4);
  const ArithmeticTexts texts{&lines[0].arithmetic,         &lines[1].arithmetic,
                              &arithmetic->recurrent_state, &lines[2].arithmetic,
                              &lines[3].arithmetic,         &estimate->warnings};
  InferenceSizing sizing;
  if (absl::Status sized = SizeInferenceInto(input, &texts, &sizing); !sized.ok()) return sized;
  estimate->sizing = sizing;
  const auto set = [&](size_t index, absl::string_view component, int64_t bytes) {
    EstimateLine& line = lines[index];
    // A reused estimate's line mostly has the name already.
    if (line.component != component) line.component.assign(component.data(), component.size());
    line.bytes = bytes;
  };
  size_t count = 0;
  set(0, kWeightsLine, CeilBytes(sizing.weight_bytes));
  if (input.architecture.has_value() && input.architecture->num_layers > 0) {
    set(1, kKvCacheLine, CeilBytes(sizing.kv_cache_bytes - sizing.recurrent_state_bytes));
    if (sizing.recurrent_state_bytes > 0) {
      // weights, kv_cache, recurrent_state, activations, overhead.
      if (lines.size() < 5) lines.resize(5);
      lines[4].arithmetic.swap(lines[3].arithmetic);
      lines[3].arithmetic.swap(lines[2].arithmetic);
      lines[2].arithmetic.swap(arithmetic->recurrent_state);
      set(2, kRecurrentStateLine, CeilBytes(sizing.recurrent_state_bytes));
      set(3, kActivationsLine, CeilBytes(sizing.activation_bytes));
      set(4, kOverheadLine, CeilBytes(sizing.overhead_bytes));
      count = 5;
    } else {
      set(2, kActivationsLine, CeilBytes(sizing.activation_bytes));
      set(3, kOverheadLine, CeilBytes(sizing.overhead_bytes));
      count = 4;
    }
  } else {
    // weights, overhead.
    lines[1].arithmetic.swap(lines[3].arithmetic);
    set(1, kOverheadLine, CeilBytes(sizing.overhead_bytes));
    count = 2;
  }
  lines.resize(count);
  estimate->total_bytes = 0;
  for (const EstimateLine& line : lines) estimate->total_bytes += line.bytes;
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
