// Weight files tensor by tensor. About 600 lines: llama.cpp's per-tensor type
// rules (one function, as llama-quant.cpp keeps them) and the safetensors
// tools' leftovers share one walk over the architecture's matrices.
#include "estimator-service/core/weight_files.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "estimator-service/core/parameters.h"

namespace modelatlas::estimator {
namespace {

// ggml tensor types a GGUF file mixes: bytes per block, weights per block
// (ggml-common.h block layouts).
enum class Ggml {
  kF32,
  kF16,
  kQ4_0,
  kQ4_1,
  kQ5_0,
  kQ5_1,
  kQ8_0,
  kQ2K,
  kQ3K,
  kQ4K,
  kQ5K,
  kQ6K,
  kIq2Xxs,
  kIq2Xs,
  kIq2S,
  kIq3Xxs,
  kIq3S,
  kIq4Nl,
  kIq4Xs,
};

struct GgmlInfo {
  const char* name;
  double bytes;
  int block;
};

GgmlInfo InfoOf(Ggml t) {
  switch (t) {
    case Ggml::kF32:
      return {"F32", 4, 1};
    case Ggml::kF16:
      return {"F16", 2, 1};
    case Ggml::kQ4_0:
      return {"Q4_0", 18, 32};
    case Ggml::kQ4_1:
      return {"Q4_1", 20, 32};
    case Ggml::kQ5_0:
      return {"Q5_0", 22, 32};
    case Ggml::kQ5_1:
      return {"Q5_1", 24, 32};
    case Ggml::kQ8_0:
      return {"Q8_0", 34, 32};
    case Ggml::kQ2K:
      return {"Q2_K", 84, 256};
    case Ggml::kQ3K:
      return {"Q3_K", 110, 256};
    case Ggml::kQ4K:
      return {"Q4_K", 144, 256};
    case Ggml::kQ5K:
      return {"Q5_K", 176, 256};
    case Ggml::kQ6K:
      return {"Q6_K", 210, 256};
    case Ggml::kIq2Xxs:
      return {"IQ2_XXS", 66, 256};
    case Ggml::kIq2Xs:
      return {"IQ2_XS", 74, 256};
    case Ggml::kIq2S:
      return {"IQ2_S", 82, 256};
    case Ggml::kIq3Xxs:
      return {"IQ3_XXS", 98, 256};
    case Ggml::kIq3S:
      return {"IQ3_S", 110, 256};
    case Ggml::kIq4Nl:
      return {"IQ4_NL", 18, 32};
    case Ggml::kIq4Xs:
      return {"IQ4_XS", 136, 256};
  }
  return {"F32", 4, 1};
}

double BitsOf(Ggml t) {
  const GgmlInfo info = InfoOf(t);
  return info.bytes * 8 / info.block;
}

// Tensor roles, as llama.cpp's tensor_get_category names them.
enum class Role {
  kTokenEmbd,
  kOutput,
  kAttnQ,
  kAttnK,
  kAttnV,
  kAttnOutput,
  kFfnGate,
  kFfnUp,
  kFfnDown,
  kAttnOther,
  // A fused query/key/value projection (attn_qkv): one of llama.cpp's
  // attn_v-like categories (category_is_attn_v).
  kAttnQkv,
  // A recurrent mixer's projection (llama.cpp's ssm_in, ssm_x, ssm_dt,
  // ssm_out, ssm_ba): no rule of its own, the file type's base type.
  kRecurrent
};

// One quantizable matrix (or a stack of experts): its parameters, its
// input width (ggml ne[0], which must be a multiple of the block) and layer.
struct Matrix {
  Role role;
  double parameters;
  double input;
  int layer;  // -1 outside the blocks
  bool expert = false;
};

// The matrices of the shape, in file order; the rest of the count (norms,
// biases, routers, positions) is left as it was written.
std::vector<Matrix> MatricesOf(const Architecture& arch) {
  const double h = static_cast<double>(arch.hidden_size);
  const double a = arch.num_attention_heads, g = arch.EffectiveKvHeads(),
               d = arch.EffectiveHeadDim();
  const double V = static_cast<double>(arch.vocab_size);
  std::vector<Matrix> out;
  out.push_back({Role::kTokenEmbd, V * h, h, -1});
  // A hybrid: attention in num_attention_layers layers, the recurrent mixer
  // in num_recurrent_layers, an MLP or MoE block in num_mlp_layers; the
  // counters llama.cpp keeps (attn_v, ffn_down) run over those tensors in
  // file order, so the layers' interleaving does not change the types (an
  // MoE block's layer is taken as its ordinal among the MLP layers).
  const bool hybrid = arch.IsHybrid();
  const int L =
      hybrid ? std::max({arch.num_attention_layers, arch.num_recurrent_layers, arch.num_mlp_layers})
             : arch.num_layers;
  // Nemotron-NAS: every layer, the MLP at its own width or none.
  const int mlp_layers = hybrid ? arch.num_mlp_layers : L;
  const int dense = arch.IsMoe() ? std::min(arch.num_dense_layers, mlp_layers) : mlp_layers;
  const double f = static_cast<double>(arch.intermediate_size);
  const double mf = static_cast<double>(arch.moe_intermediate_size > 0 ? arch.moe_intermediate_size
                                                                       : arch.intermediate_size);
  const double sf = static_cast<double>(
      arch.shared_expert_intermediate_size > 0 ? arch.shared_expert_intermediate_size : mf);
  const double shared = arch.shared_expert_intermediate_size > 0
                            ? std::max(1, arch.num_shared_experts)
                            : arch.num_shared_experts;
  // The recurrent mixer's projections (parameters.cc, RecurrentParameters):
  // Mamba in_proj h x 2I, x_proj I x (R + 2N), dt_proj R x I, out_proj I x h;
  // Mamba-2 in_proj h x (I + C + H), out_proj I x h; Gated DeltaNet
  // in_proj_qkvz h x (C + I), in_proj_ba h x 2H, out_proj I x h.
  const double I = static_cast<double>(arch.ssm_inner_size), N = arch.ssm_state_size,
               H = arch.ssm_num_heads, G = arch.ssm_num_groups, R = arch.ssm_dt_rank;
  auto recurrent = [&](int i) {
    switch (arch.recurrent_mixer) {
      case RecurrentMixer::kMamba:
        out.push_back({Role::kRecurrent, h * 2 * I, h, i});
        out.push_back({Role::kRecurrent, I * (R + 2 * N), I, i});
        out.push_back({Role::kRecurrent, R * I, R, i});
        break;
      case RecurrentMixer::kMamba2:
        out.push_back({Role::kRecurrent, h * (I + (I + 2 * G * N) + H), h, i});
        break;
      case RecurrentMixer::kGatedDeltaNet:
        out.push_back({Role::kRecurrent, h * ((2 * G * N + I) + I), h, i});
        out.push_back({Role::kRecurrent, h * 2 * H, h, i});
        break;
      case RecurrentMixer::kShortConv:
        out.push_back({Role::kRecurrent, h * 3 * I, h, i});
        break;
      case RecurrentMixer::kKimiDelta:
        // q/k/v_proj, the gates' low-rank halves and b_proj; o_proj below.
        out.push_back({Role::kRecurrent, h * (2 * G * N + I), h, i});
        out.push_back({Role::kRecurrent, h * N, h, i});
        out.push_back({Role::kRecurrent, N * G * N, N, i});
        out.push_back({Role::kRecurrent, h * N, h, i});
        out.push_back({Role::kRecurrent, N * I, N, i});
        out.push_back({Role::kRecurrent, h * H, h, i});
        break;
      default:
        return;
    }
    out.push_back({Role::kRecurrent, I * h, I, i});
  };
  // Gemma 4's full-attention layers (their own heads; no v_proj when their
  // values come from the keys), spread evenly and ending at the last layer,
  // as its configs place them (every sixth).
  const int full_layers = arch.HasGlobalGeometry() ? arch.FullAttentionLayers() : 0;
  const auto is_full = [&](int i) {
    return full_layers > 0 && int64_t{i + 1} * full_layers / L > int64_t{i} * full_layers / L;
  };
  auto attention = [&](int i) {
    // Step-3.5-Flash's head-wise gate (g_proj): heads x hidden.
    if (arch.attention_head_gate) {
      out.push_back({Role::kAttnOther, h * (is_full(i) ? arch.GlobalAttentionHeads() : a), h, i});
    }
    if (is_full(i)) {
      const AttentionGeometry full = arch.AttentionOf(/*full=*/true);
      const double ga = full.query_heads, gd = full.head_dim, gdv = full.value_dim;
      const double gg = full.kv_heads;
      out.push_back({Role::kAttnQ, h * ga * gd, h, i});
      out.push_back({Role::kAttnK, h * gg * gd, h, i});
      if (full.has_values) out.push_back({Role::kAttnV, h * gg * gdv, h, i});
      out.push_back({Role::kAttnOutput, ga * gdv * h, ga * gdv, i});
      return;
    }
    if (arch.UsesMla()) {
      const double qk = arch.qk_nope_head_dim + arch.qk_rope_head_dim;
      if (arch.q_lora_rank > 0) {
        out.push_back({Role::kAttnQ, h * arch.q_lora_rank, h, i});
        out.push_back({Role::kAttnQ, arch.q_lora_rank * a * qk, double(arch.q_lora_rank), i});
      } else {
        out.push_back({Role::kAttnQ, h * a * qk, h, i});
      }
      out.push_back({Role::kAttnOther, h * (arch.kv_lora_rank + arch.qk_rope_head_dim), h, i});
      out.push_back({Role::kAttnV,
                     double(arch.kv_lora_rank) * a * (arch.qk_nope_head_dim + arch.v_head_dim),
                     double(arch.kv_lora_rank), i});
      out.push_back({Role::kAttnOutput, a * arch.v_head_dim * h, a * arch.v_head_dim, i});
      if (arch.index_heads > 0 && arch.index_head_dim > 0) {
        // DeepSeek-V3.2's indexer (parameters.cc, IndexerParameters): wq_b,
        // wk and weights_proj; k_norm is a vector.
        const double q_in = arch.q_lora_rank > 0 ? arch.q_lora_rank : h;
        const double ih = arch.index_heads, id = arch.index_head_dim;
        out.push_back({Role::kAttnOther, q_in * ih * id, q_in, i});
        out.push_back({Role::kAttnOther, h * id, h, i});
        out.push_back({Role::kAttnOther, h * ih, h, i});
      }
    } else {
      // Values at their own width (MiMo-V2-Flash: 128 beside 192).
      const double dv = arch.ValueHeadDim();
      if (arch.fused_qkv) {
        out.push_back({Role::kAttnQkv, h * ((a + g) * d + g * dv), h, i});
      } else {
        // Qwen3-Next's gated attention: q_proj also yields the output gate.
        out.push_back({Role::kAttnQ, h * a * d * (arch.attention_output_gate ? 2 : 1), h, i});
        out.push_back({Role::kAttnK, h * g * d, h, i});
        out.push_back({Role::kAttnV, h * g * dv, h, i});
      }
      out.push_back({Role::kAttnOutput, a * dv * h, a * dv, i});
    }
  };
  auto mlp = [&](int i) {
    if (i < dense) {
      // Nemotron-NAS: the layer's own width (llama.cpp's deci: n_ff(il)).
      const double fi = arch.HasLayerWidths() ? static_cast<double>(arch.layer_mlp_widths[i]) : f;
      if (fi <= 0) return;
      if (arch.gated_mlp) out.push_back({Role::kFfnGate, h * fi, h, i});
      out.push_back({Role::kFfnUp, h * fi, h, i});
      out.push_back({Role::kFfnDown, fi * h, fi, i});
    } else {
      const double E = arch.num_experts;
      if (arch.gated_mlp) out.push_back({Role::kFfnGate, E * h * mf, h, i, true});
      out.push_back({Role::kFfnUp, E * h * mf, h, i, true});
      out.push_back({Role::kFfnDown, E * mf * h, mf, i, true});
      if (shared > 0) {
        if (arch.gated_mlp) out.push_back({Role::kFfnGate, shared * h * sf, h, i});
        out.push_back({Role::kFfnUp, shared * h * sf, h, i});
        out.push_back({Role::kFfnDown, shared * sf * h, sf, i});
      }
    }
  };
  // Nemotron-NAS's layers with attention: which ones changes no type (the
  // attn_v counter runs over the tensors there are), so the first ones.
  const int attention_layers = hybrid ? arch.num_attention_layers : arch.AttentionLayers();
  for (int i = 0; i < L; ++i) {
    if (hybrid && i < arch.num_recurrent_layers) recurrent(i);
    if (i < attention_layers) attention(i);
    if (i < mlp_layers) mlp(i);
  }
  if (!arch.tie_word_embeddings) out.push_back({Role::kOutput, V * h, h, -1});
  return out;
}

// llama.cpp's category_is_attn_v: attn_v, a fused attn_qkv (and MLA's
// attn_kv_b, filed as kAttnV) take attn_v's type rules and counter.
bool AttnVLike(Role role) { return role == Role::kAttnV || role == Role::kAttnQkv; }

// llama.cpp file types this estimator names, and their base tensor type.
struct FileType {
  NumberFormat format;
  const char* name;
  Ggml base;
  bool imatrix;  // IQ files are made with an importance matrix
};

constexpr FileType kFileTypes[] = {
    {NumberFormat::kGgufQ2K, "Q2_K", Ggml::kQ2K, false},
    {NumberFormat::kGgufQ3K, "Q3_K_S", Ggml::kQ3K, false},
    {NumberFormat::kGgufQ3KM, "Q3_K_M", Ggml::kQ3K, false},
    {NumberFormat::kGgufQ4_0, "Q4_0", Ggml::kQ4_0, false},
    {NumberFormat::kGgufQ4K, "Q4_K_S", Ggml::kQ4K, false},
    {NumberFormat::kGgufQ4KM, "Q4_K_M", Ggml::kQ4K, false},
    {NumberFormat::kGgufQ5K, "Q5_K_S", Ggml::kQ5K, false},
    {NumberFormat::kGgufQ5KM, "Q5_K_M", Ggml::kQ5K, false},
    {NumberFormat::kGgufQ6K, "Q6_K", Ggml::kQ6K, false},
    {NumberFormat::kGgufQ8_0, "Q8_0", Ggml::kQ8_0, false},
    {NumberFormat::kGgufIq2Xxs, "IQ2_XXS", Ggml::kIq2Xxs, true},
    {NumberFormat::kGgufIq2Xs, "IQ2_XS", Ggml::kIq2Xs, true},
    {NumberFormat::kGgufIq3Xxs, "IQ3_XXS", Ggml::kIq3Xxs, true},
    {NumberFormat::kGgufIq4Xs, "IQ4_XS", Ggml::kIq4Xs, true},
    {NumberFormat::kGgufIq4Nl, "IQ4_NL", Ggml::kIq4Nl, true},
};

const FileType* FileTypeOf(NumberFormat format) {
  for (const FileType& t : kFileTypes) {
    if (t.format == format) return &t;
  }
  return nullptr;
}

bool UseMoreBits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// llama.cpp's tensor_type_fallback: a type whose block does not divide the
// input width.
Ggml Fallback(Ggml t, double input) {
  auto fits = [&](Ggml x) { return std::fmod(input, InfoOf(x).block) == 0; };
  if (fits(t)) return t;
  Ggml next = Ggml::kF16;
  switch (t) {
    case Ggml::kIq2Xxs:
    case Ggml::kIq2Xs:
    case Ggml::kIq2S:
    case Ggml::kIq3Xxs:
    case Ggml::kIq3S:
    case Ggml::kIq4Xs:
      next = Ggml::kIq4Nl;
      break;
    case Ggml::kQ2K:
    case Ggml::kQ3K:
      next = Ggml::kQ4_0;
      break;
    case Ggml::kQ4K:
      next = Ggml::kQ5_0;
      break;
    case Ggml::kQ5K:
      next = Ggml::kQ5_1;
      break;
    case Ggml::kQ6K:
      next = Ggml::kQ8_0;
      break;
    default:
      break;
  }
  return fits(next) ? next : Ggml::kF16;
}

// The type llama.cpp's llama_tensor_get_type_impl gives one matrix.
struct GgufState {
  const Architecture& arch;
  NumberFormat ftype;
  Ggml base;
  bool imatrix;
  int n_attention_wv = 0, i_attention_wv = 0, n_ffn_down = 0, i_ffn_down = 0;
};

Ggml GgufType(GgufState& s, const Matrix& m) {
  using F = NumberFormat;
  const F ft = s.ftype;
  const int gqa = s.arch.num_attention_heads / std::max(1, s.arch.EffectiveKvHeads());
  const int n_expert = s.arch.num_experts;
  const bool iq2 = ft == F::kGgufIq2Xxs || ft == F::kGgufIq2Xs;
  Ggml t = s.base;
  const bool tied = s.arch.tie_word_embeddings;
  if (m.role == Role::kOutput || (tied && m.role == Role::kTokenEmbd)) {
    if (std::fmod(m.input, InfoOf(t).block) != 0) {
      t = Ggml::kQ8_0;
    } else if (iq2 || ft == F::kGgufIq3Xxs) {
      t = Ggml::kQ5K;
    } else if (t != Ggml::kQ8_0) {
      t = Ggml::kQ6K;
    }
  } else if (m.role == Role::kTokenEmbd) {
    if (iq2) t = Ggml::kQ2K;
    if (ft == F::kGgufIq3Xxs) t = Ggml::kIq3S;
  } else if (iq2) {
    if (AttnVLike(m.role)) {
      t = gqa >= 4 || n_expert >= 4 ? Ggml::kQ4K : Ggml::kQ2K;
      ++s.i_attention_wv;
    } else if (n_expert == 8 && m.role == Role::kAttnK) {
      t = Ggml::kQ4K;
    } else if (m.role == Role::kFfnDown) {
      if (s.i_ffn_down < s.n_ffn_down / 8) t = Ggml::kQ2K;
      ++s.i_ffn_down;
    } else if (m.role == Role::kAttnOutput && n_expert == 8) {
      t = Ggml::kQ5K;
    }
  } else if (AttnVLike(m.role)) {
    if (ft == F::kGgufQ2K) {
      t = gqa >= 4 ? Ggml::kQ4K : Ggml::kQ3K;
    } else if (ft == F::kGgufIq3Xxs) {
      t = gqa >= 4 ? Ggml::kQ4K : s.imatrix ? Ggml::kIq3Xxs : Ggml::kIq3S;
    } else if (ft == F::kGgufQ3KM) {
      t = s.i_attention_wv < 2 ? Ggml::kQ5K : Ggml::kQ4K;
    } else if ((ft == F::kGgufIq4Nl || ft == F::kGgufIq4Xs) && gqa >= 4) {
      t = Ggml::kQ5K;
    } else if ((ft == F::kGgufQ4KM || ft == F::kGgufQ5KM) &&
               UseMoreBits(s.i_attention_wv, s.n_attention_wv)) {
      t = Ggml::kQ6K;
    } else if (ft == F::kGgufQ4K && s.i_attention_wv < 4) {
      t = Ggml::kQ5K;
    }
    // llama.cpp's LLM_TYPE_70B (Llama 2/3 70B, Qwen2 72B: 80 layers with
    // grouped-query attention): "8 heads sharing the same attn_v weights ...
    // quantizing this tensor with more bits" lifts Q3_K and Q4_K to Q5_K.
    if (s.arch.num_layers == 80 && gqa > 1 && !s.arch.IsHybrid() &&
        (t == Ggml::kQ3K || t == Ggml::kQ4K)) {
      t = Ggml::kQ5K;
    }
    if (n_expert == 8) t = Ggml::kQ8_0;
    ++s.i_attention_wv;
  } else if (m.role == Role::kAttnK) {
    if (n_expert == 8) {
      t = Ggml::kQ8_0;
    } else if (ft == F::kGgufIq3Xxs) {
      t = Ggml::kIq2S;
    }
  } else if (m.role == Role::kAttnQ) {
    if (ft == F::kGgufIq3Xxs) t = Ggml::kIq2S;
  } else if (m.role == Role::kFfnDown) {
    // Experts and shared experts: the layer from the name; dense: the counter.
    const int i = n_expert > 1 ? m.layer : s.i_ffn_down;
    const int n = s.n_ffn_down;
    if (ft == F::kGgufQ2K) {
      t = Ggml::kQ3K;
    } else if (ft == F::kGgufIq3Xxs && !s.imatrix) {
      t = i < n / 8 ? Ggml::kQ4K : Ggml::kQ3K;
    } else if (ft == F::kGgufQ3KM) {
      t = i < n / 16 ? Ggml::kQ5K : Ggml::kQ4K;
    } else if (ft == F::kGgufQ4KM) {
      if (UseMoreBits(i, n)) t = Ggml::kQ6K;
    } else if (i < n / 8 && (ft == F::kGgufIq4Nl || ft == F::kGgufIq4Xs) && !s.imatrix) {
      t = Ggml::kQ5K;
    } else if (ft == F::kGgufQ5KM && UseMoreBits(i, n)) {
      t = Ggml::kQ6K;
    } else if (ft == F::kGgufQ4K && i < n / 8) {
      t = Ggml::kQ5K;
    } else if (ft == F::kGgufQ4_0 && s.imatrix && i < n / 8) {
      // "Guard against craziness in the first few ffn_down layers" (Q4_0 and
      // Q5_0 with an importance matrix only).
      t = Ggml::kQ4_1;
    }
    ++s.i_ffn_down;
  } else if (m.role == Role::kAttnOutput) {
    if (n_expert == 8) {
      if (ft == F::kGgufQ2K || ft == F::kGgufIq3Xxs || ft == F::kGgufQ3K || ft == F::kGgufQ3KM ||
          ft == F::kGgufIq4Nl || ft == F::kGgufQ4K || ft == F::kGgufQ4KM || ft == F::kGgufIq4Xs) {
        t = Ggml::kQ5K;
      }
    } else if (ft == F::kGgufQ2K) {
      t = Ggml::kQ3K;
    } else if (ft == F::kGgufIq3Xxs) {
      t = Ggml::kIq3S;
    } else if (ft == F::kGgufQ3KM) {
      t = Ggml::kQ4K;
    }
  }
  return Fallback(t, m.input);
}

std::string Count(double value) { return absl::StrFormat("%.0f", value); }
std::string Bits(double value) { return absl::StrFormat("%.6g", value); }

// Bits per weight of each class: name -> (parameters, bits).
using Mix = std::map<std::string, std::pair<double, double>>;

void AddTo(Mix* mix, const std::string& name, double parameters, double bits) {
  auto& entry = (*mix)[name];
  entry.first += parameters;
  entry.second = bits;
}

WeightFile Finish(const Mix& mix, double parameters, const std::string& what) {
  WeightFile file;
  file.parameters = parameters;
  std::string text;
  for (const auto& [name, entry] : mix) {
    if (entry.first <= 0) continue;
    file.bytes += entry.first * entry.second / 8;
    file.parameters_by_class[name] = entry.first;
    absl::StrAppend(&text, text.empty() ? "" : " + ", Count(entry.first), " x ", Bits(entry.second),
                    " bits (", name, ")");
  }
  file.bits_per_parameter = parameters > 0 ? file.bytes * 8 / parameters : 0;
  file.derivation =
      absl::StrCat(what, ": ", text, " = ", Bits(file.bits_per_parameter), " bits per parameter");
  return file;
}

}  // namespace

bool SizedByTensor(NumberFormat format) {
  switch (format) {
    case NumberFormat::kFp32:
    case NumberFormat::kFp16:
    case NumberFormat::kBf16:
      return false;
    default:
      // fp8, int8 and int4 too: no runtime or checkpoint stores the
      // embeddings and the output head in them (see WeightFileOf).
      return true;
  }
}

absl::StatusOr<WeightFile> WeightFileOf(const Architecture& arch, NumberFormat format,
                                        int group_size, bool gguf_imatrix) {
  absl::StatusOr<ParameterCount> count = CountParameterTotals(arch);
  if (!count.ok()) return count.status();
  absl::StatusOr<Encoding> encoding = EncodingOf(format, group_size);
  if (!encoding.ok()) return encoding.status();
  const std::vector<Matrix> matrices = MatricesOf(arch);
  double in_matrices = 0;
  for (const Matrix& m : matrices) in_matrices += m.parameters;
  const double rest = std::max(0.0, count->total - in_matrices);
  Mix mix;

  if (const FileType* ft = FileTypeOf(format)) {
    // GGUF: each matrix as llama.cpp's quantize picks its type; norms,
    // biases, routers and positions are written as F32 by convert_hf_to_gguf.
    GgufState s{arch, format, ft->base, ft->imatrix || gguf_imatrix};
    for (const Matrix& m : matrices) {
      if (AttnVLike(m.role)) ++s.n_attention_wv;
    }
    // llama.cpp's quantizer sets the ffn_down bound to the layers, not to
    // the ffn_down tensors (llama-quant.cpp init_quantize_state_counters:
    // n_ffn_down = n_layer_all; n_layer in every release before): a layer
    // with routed and shared experts holds two, a layer without an MLP
    // (Nemotron-NAS, a Mamba layer) none.
    s.n_ffn_down = arch.num_layers;
    for (const Matrix& m : matrices) {
      const Ggml t = GgufType(s, m);
      AddTo(&mix, InfoOf(t).name, m.parameters, BitsOf(t));
    }
    AddTo(
        &mix,
        arch.IsHybrid() ? "F32 norms, biases, routers, conv1d, A, D" : "F32 norms, biases, routers",
        rest, 32);
    return Finish(
        mix, count->total,
        absl::StrCat("llama.cpp ", ft->name, " file",
                     s.imatrix && !ft->imatrix ? " (importance matrix)" : "", ", type per tensor"));
  }

  // Safetensors checkpoints: the tool quantizes the Linear layers of the
  // blocks; embeddings, the output head, norms and biases stay 16-bit.
  const double bits = encoding->bits_per_element;
  const double h = static_cast<double>(arch.hidden_size);
  const double router =
      arch.IsMoe() ? h * arch.num_experts *
                         (arch.num_layers - std::min(arch.num_dense_layers, arch.num_layers))
                   : 0;
  double quantized = 0, experts = 0, g_idx = 0, block_scales = 0, embeddings = 0;
  // The attention output projections and their block scales (MiMo-V2-Flash's
  // FP8 checkpoint keeps them in 16 bits).
  double attention_output = 0, attention_output_scales = 0;
  // AutoGPTQ's QuantLinear is built with a bias (make_quant passes bias=True):
  // an fp16 vector of the output width for every quantized matrix, zeros
  // where the model's Linear had none (the hugging-quants Llama-3.1-8B GPTQ
  // checkpoint counts 43,008 more parameters per layer than the model: the
  // seven projections' outputs).
  double gptq_biases = 0;
  auto has_bias = [&arch](Role role) {
    switch (role) {
      case Role::kAttnQ:
      case Role::kAttnK:
      case Role::kAttnV:
      case Role::kAttnQkv:
        return arch.attention_qkv_bias;
      case Role::kAttnOutput:
        return arch.attention_output_bias;
      case Role::kFfnGate:
      case Role::kFfnUp:
      case Role::kFfnDown:
        return arch.mlp_bias;
      default:
        return false;
    }
  };
  for (const Matrix& m : matrices) {
    if (m.role == Role::kTokenEmbd || m.role == Role::kOutput) {
      embeddings += m.parameters;
      continue;
    }
    quantized += m.parameters;
    if (m.expert) experts += m.parameters;
    // AutoGPTQ's g_idx: one int32 per input feature of each matrix (per
    // expert for stacked experts).
    const double stacked = m.expert ? arch.num_experts : 1;
    g_idx += m.input * stacked;
    const double rows = m.parameters / stacked / m.input;
    const double scales = std::ceil(rows / 128) * std::ceil(m.input / 128) * stacked;
    block_scales += scales;
    if (m.role == Role::kAttnOutput) {
      attention_output += m.parameters;
      attention_output_scales += scales;
    }
    if (!has_bias(m.role)) gptq_biases += rows * stacked;
  }
  switch (format) {
    case NumberFormat::kGptqInt4:
    case NumberFormat::kGptqInt8:
      AddTo(&mix, absl::StrCat(NumberFormatName(format), " blocks: ", encoding->derivation),
            quantized, bits);
      AddTo(&mix, "int32 g_idx per input feature", g_idx, 32);
      AddTo(&mix, "fp16 QuantLinear bias per output feature (zeros)", gptq_biases, 16);
      AddTo(&mix, "16-bit embeddings, head, norms, biases, routers", embeddings + rest, 16);
      return Finish(mix, count->total, "AutoGPTQ checkpoint");
    case NumberFormat::kAwqInt4:
      AddTo(&mix, absl::StrCat("awq-int4 blocks: ", encoding->derivation), quantized, bits);
      AddTo(&mix, "16-bit embeddings, head, norms, biases, routers", embeddings + rest, 16);
      return Finish(mix, count->total, "AutoAWQ checkpoint");
    case NumberFormat::kNf4:
    case NumberFormat::kNf4DoubleQuant:
      // bitsandbytes quantizes every Linear but lm_head, routers included.
      AddTo(&mix, absl::StrCat(NumberFormatName(format), ": ", encoding->derivation),
            quantized + router, bits);
      AddTo(&mix, "16-bit embeddings, head, norms, biases", embeddings + rest - router, 16);
      return Finish(mix, count->total, "bitsandbytes checkpoint");
    case NumberFormat::kMxfp4:
      // gpt-oss: the experts in MXFP4; a dense model: every block matrix.
      AddTo(&mix, absl::StrCat("mxfp4: ", encoding->derivation), arch.IsMoe() ? experts : quantized,
            bits);
      AddTo(&mix, "16-bit embeddings, head, attention, norms, biases, routers",
            embeddings + rest + (arch.IsMoe() ? quantized - experts : 0), 16);
      return Finish(mix, count->total, "MXFP4 checkpoint");
    case NumberFormat::kInt4: {
      // int4 weights as they are downloaded: compressed-tensors' W4A16
      // checkpoints (llm-compressor's W4A16 preset: 4-bit, symmetric, one
      // scale per group of `group_size` input weights, default 128; lm_head
      // and the embeddings left in 16 bits). neuralmagic/compressed-tensors
      // compressors/quantized_compressors/pack_quantized.py (0199c6e7),
      // compression_param_info: eight 4-bit values packed per int32
      // (weight_packed, rows x ceil(cols / 8)), weight_scale in the model's
      // dtype (rows x cols / group), a 2-element weight_shape, and no zero
      // point for a symmetric scheme. Published files within 0.1%
      // (weight_files_test.cc, CompressedTensorsW4A16FilesAreWithinTwoPercent);
      // without the scales, 1.9% low for Llama-3-8B.
      const int group = group_size == 0 ? 128 : group_size;
      if (absl::StatusOr<Encoding> valid = EncodingOf(NumberFormat::kAwqInt4, group); !valid.ok()) {
        return valid.status();
      }
      double group_scales = 0, shapes = 0;
      for (const Matrix& m : matrices) {
        if (m.role == Role::kTokenEmbd || m.role == Role::kOutput) continue;
        const double stacked = m.expert ? arch.num_experts : 1;
        const double rows = m.parameters / stacked / m.input;
        group_scales += rows * std::ceil(m.input / group) * stacked;
        shapes += 2 * stacked;
      }
      AddTo(&mix, "int4 packed eight per int32 (weight_packed)", quantized, 4);
      AddTo(&mix, absl::StrCat("16-bit scale per ", group, "-weight group (weight_scale)"),
            group_scales, 16);
      AddTo(&mix, "int64 weight_shape per Linear", shapes, 64);
      AddTo(&mix, "16-bit embeddings, head, norms, biases, routers", embeddings + rest, 16);
      return Finish(
          mix, count->total,
          absl::StrCat("compressed-tensors W4A16 checkpoint (pack-quantized, group ", group, ")"));
    }
    case NumberFormat::kFp8:
    case NumberFormat::kInt8:
      // The plain low-bit formats as runtimes apply them: vLLM's online
      // `--quantization fp8` and compressed-tensors' FP8 and W8A8 schemes
      // quantize the Linear layers of the blocks and leave the embeddings
      // and lm_head in the model's dtype (vllm/model_executor/layers/
      // quantization/fp8.py: Fp8Config.get_quant_method quantizes LinearBase
      // and FusedMoE layers only; llm-compressor recipes ignore lm_head);
      // bitsandbytes' LLM.int8 skips lm_head. Per-channel or per-tensor
      // scales are left out (per-channel in fp32: 0.15% of a 1.5B W8A8
      // file, 0.04% at 70B; the Hub's element counts of llm-compressor's
      // checkpoints confirm which Linears carry them: weight_files_test.cc).
      AddTo(&mix, absl::StrCat(NumberFormatName(format), " Linear layers of the blocks"), quantized,
            bits);
      AddTo(&mix, "16-bit embeddings, head, norms, biases, routers", embeddings + rest, 16);
      return Finish(
          mix, count->total,
          absl::StrCat(NumberFormatName(format), " weights as vLLM and bitsandbytes keep them"));
    case NumberFormat::kFp8Block: {
      // o_proj in 16 bits where the checkpoint keeps it so (its format).
      const bool output_16bit = arch.checkpoint_attention_output_16bit &&
                                arch.checkpoint_weight_format == NumberFormat::kFp8Block;
      AddTo(&mix, "fp8 e4m3", quantized - (output_16bit ? attention_output : 0), 8);
      AddTo(&mix, "f32 scale per 128x128 block",
            block_scales - (output_16bit ? attention_output_scales : 0), 32);
      if (output_16bit) {
        AddTo(&mix, "16-bit attention output projections (o_proj, as the checkpoint keeps them)",
              attention_output, 16);
      }
      AddTo(&mix, "16-bit embeddings, head, norms, biases, routers", embeddings + rest, 16);
      return Finish(mix, count->total, "FP8 checkpoint with 128x128 block scales");
    }
    default:
      // NVFP4 and any other format: the block matrices quantized,
      // embeddings, head, norms and routers in 16 bits.
      AddTo(&mix, absl::StrCat(NumberFormatName(format), ": ", encoding->derivation), quantized,
            bits);
      AddTo(&mix, "16-bit embeddings, head, norms, biases, routers", embeddings + rest, 16);
      return Finish(mix, count->total, absl::StrCat(NumberFormatName(format), " checkpoint"));
  }
}

}  // namespace modelatlas::estimator
