// GGUF files of each family the reader knows (common/formats/gguf_architecture.h),
// written as llama.cpp's convert_hf_to_gguf.py writes them: the
// {arch}.* metadata from the model's config.json and every tensor under
// llama.cpp's names (src/llama-arch.cpp LLM_TENSOR_NAMES) at the checkpoint's
// shapes. For each published checkpoint three figures agree:
//   - the file's tensor total and the checkpoint's published count (the
//     tensors here are the model's: the fixture is right);
//   - the count from the architecture the reader finds (the reader read the
//     family's blocks, biases and norms);
//   - the KV-cache shape read from config.json (layers, KV heads, head
//     width, sliding-window layers, MLA ranks): a GGUF is sized as the
//     checkpoint it was converted from.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "common/formats/gguf.h"
#include "common/formats/gguf_architecture.h"
#include "common/formats/hf_config.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/parameters.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/estimator/fake_records.h"
#include "tests/estimator/model_files.h"
#include "tests/estimator/published_configs.h"

namespace modelatlas::estimator {
namespace {

using testing::GgufHeaderWriter;
using Dims = std::vector<uint64_t>;

// A checkpoint's shape, as its config.json gives it, and how its blocks are
// built (which tensors llama.cpp finds in each).
struct Shape {
  std::string arch;  // general.architecture
  uint64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  uint64_t context = 4096;
  bool tied = false;
  bool fused_qkv = false;  // one attn_qkv tensor (ChatGLM)
  bool qkv_bias = false, output_bias = false, mlp_bias = false;
  bool layer_norm = false;  // norms with biases (StarCoder2)
  bool head_bias = false;   // output.bias (Phi-3.5-MoE's lm_head)
  int norms = 2;            // per block: 2; 1 attn_norm only (Cohere); 0 none (OLMo v1)
  bool gated = true;        // ffn_gate beside ffn_up
  int qk_norm = 0;  // 0 none; 1 one head wide; 2 the whole projection; 3 per head and element
  bool post_norms = false;  // post_attention_norm and post_ffw_norm (Gemma 3, GLM-4-0414)
  bool sinks = false;       // attn_sinks (gpt-oss)
  bool attn_gate = false;   // attn_gate, the output gate's projection (Trinity)
  uint64_t sliding_window = 0;
  // Mixture of experts.
  uint64_t experts = 0, experts_used = 0, expert_ffn = 0;
  uint64_t shared_experts = 0, shared_ffn = 0;  // shared_ffn: all shared experts' width
  uint64_t dense_lead = 0, moe_step = 1;
  bool expert_biases = false;   // router and experts biased (gpt-oss)
  bool router_bias = false;     // exp_probs_b (DeepSeek-V3, GLM-4.5, MiniMax-M2, ERNIE 4.5)
  bool write_dense_ffn = true;  // feed_forward_length in the metadata
  // Multi-head latent attention.
  uint64_t q_lora = 0, kv_lora = 0, rope_dim = 0, nope_dim = 0, v_dim = 0;
  bool mla_as_mqa = false;  // llama.cpp's newer layout: attn_k_b / attn_v_b, *_mla keys
  // Multi-token-prediction blocks kept after the model's (GLM-4.5).
  uint64_t mtp = 0;
  // K-EXAONE's: a dense MLP of `ffn`, on the model's embedding and head.
  bool mtp_dense = false;
};

// Adds one tensor of a block: its name after "blk.N." and its dims.
using AddTensor = std::function<void(const std::string&, const Dims&)>;

// Unbiased q/k/v/o projections: `q`, `k` and `v` output widths, o_proj from
// `o` back to the hidden width.
void AttentionTensors(const AddTensor& t, uint64_t hidden, uint64_t q, uint64_t k, uint64_t v,
                      uint64_t o) {
  t("attn_q.weight", {hidden, q});
  t("attn_k.weight", {hidden, k});
  t("attn_v.weight", {hidden, v});
  t("attn_output.weight", {o, hidden});
}

// A gated MLP of `width` (SwiGLU's gate, up and down).
void GatedMlpTensors(const AddTensor& t, uint64_t hidden, uint64_t width) {
  t("ffn_gate.weight", {hidden, width});
  t("ffn_up.weight", {hidden, width});
  t("ffn_down.weight", {width, hidden});
}

// `experts` routed experts of `width`, stacked, and their router.
void RoutedExpertTensors(const AddTensor& t, uint64_t hidden, uint64_t experts, uint64_t width) {
  t("ffn_gate_inp.weight", {hidden, experts});
  t("ffn_gate_exps.weight", {hidden, width, experts});
  t("ffn_up_exps.weight", {hidden, width, experts});
  t("ffn_down_exps.weight", {width, hidden, experts});
}

// The shared experts, `width` wide together.
void SharedExpertTensors(const AddTensor& t, uint64_t hidden, uint64_t width) {
  t("ffn_gate_shexp.weight", {hidden, width});
  t("ffn_up_shexp.weight", {hidden, width});
  t("ffn_down_shexp.weight", {width, hidden});
}

bool IsMoeLayer(const Shape& s, uint64_t i) {
  if (s.mtp_dense && i >= s.layers) return false;
  return s.experts > 0 && i >= s.dense_lead && (i + 1) % s.moe_step == 0;
}

void Block(const Shape& s, uint64_t i, GgufHeaderWriter* w) {
  const std::string b = absl::StrCat("blk.", i, ".");
  auto t = [&](const std::string& name, const Dims& dims) { w->Tensor(b + name, dims); };
  auto norm = [&](const std::string& name) {
    if (s.norms == 0 || (s.norms == 1 && name == "ffn_norm")) return;
    t(name + ".weight", {s.hidden});
    if (s.layer_norm) t(name + ".bias", {s.hidden});
  };
  const uint64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  norm("attn_norm");
  if (s.kv_lora > 0) {
    const uint64_t qk = s.nope_dim + s.rope_dim;
    if (s.q_lora > 0) {
      t("attn_q_a.weight", {s.hidden, s.q_lora});
      t("attn_q_a_norm.weight", {s.q_lora});
      t("attn_q_b.weight", {s.q_lora, s.heads * qk});
    } else {
      t("attn_q.weight", {s.hidden, s.heads * qk});
    }
    t("attn_kv_a_mqa.weight", {s.hidden, s.kv_lora + s.rope_dim});
    t("attn_kv_a_norm.weight", {s.kv_lora});
    if (s.mla_as_mqa) {
      t("attn_k_b.weight", {s.nope_dim, s.kv_lora, s.heads});
      t("attn_v_b.weight", {s.kv_lora, s.v_dim, s.heads});
    } else {
      t("attn_kv_b.weight", {s.kv_lora, s.heads * (s.nope_dim + s.v_dim)});
    }
    t("attn_output.weight", {s.heads * s.v_dim, s.hidden});
  } else {
    if (s.fused_qkv) {
      t("attn_qkv.weight", {s.hidden, q + 2 * kv});
      if (s.qkv_bias) t("attn_qkv.bias", {q + 2 * kv});
    } else {
      t("attn_q.weight", {s.hidden, q});
      t("attn_k.weight", {s.hidden, kv});
      t("attn_v.weight", {s.hidden, kv});
      if (s.qkv_bias) {
        t("attn_q.bias", {q});
        t("attn_k.bias", {kv});
        t("attn_v.bias", {kv});
      }
    }
    t("attn_output.weight", {q, s.hidden});
    if (s.output_bias) t("attn_output.bias", {s.hidden});
    if (s.qk_norm == 3) {  // Cohere's: a weight per head and element
      t("attn_q_norm.weight", {s.head_dim, s.heads});
      t("attn_k_norm.weight", {s.head_dim, s.kv_heads});
    } else if (s.qk_norm > 0) {
      t("attn_q_norm.weight", {s.qk_norm == 1 ? s.head_dim : q});
      t("attn_k_norm.weight", {s.qk_norm == 1 ? s.head_dim : kv});
    }
  }
  if (s.sinks) t("attn_sinks.weight", {s.heads});
  if (s.attn_gate) t("attn_gate.weight", {s.hidden, q});
  if (s.post_norms) norm("post_attention_norm");
  norm("ffn_norm");
  if (IsMoeLayer(s, i)) {
    RoutedExpertTensors(t, s.hidden, s.experts, s.expert_ffn);
    if (s.expert_biases) t("ffn_gate_inp.bias", {s.experts});
    if (s.router_bias) t("exp_probs_b.bias", {s.experts});
    if (s.expert_biases) {
      t("ffn_gate_exps.bias", {s.expert_ffn, s.experts});
      t("ffn_up_exps.bias", {s.expert_ffn, s.experts});
      t("ffn_down_exps.bias", {s.hidden, s.experts});
    }
    if (s.shared_ffn > 0) SharedExpertTensors(t, s.hidden, s.shared_ffn);
  } else {
    if (s.gated) t("ffn_gate.weight", {s.hidden, s.ffn});
    t("ffn_up.weight", {s.hidden, s.ffn});
    t("ffn_down.weight", {s.ffn, s.hidden});
    if (s.mlp_bias) {
      t("ffn_up.bias", {s.ffn});
      t("ffn_down.bias", {s.hidden});
    }
  }
  if (s.post_norms) norm("post_ffw_norm");
}

// GLM-4.5's MTP block: a whole block plus its own embedding, head, the
// projection of [embedding; hidden] and three norms (llama.cpp
// LLM_TENSOR_NEXTN_*).
void MtpBlock(const Shape& s, uint64_t i, GgufHeaderWriter* w) {
  Block(s, i, w);
  const std::string b = absl::StrCat("blk.", i, ".nextn.");
  w->Tensor(b + "eh_proj.weight", {2 * s.hidden, s.hidden});
  w->Tensor(b + "enorm.weight", {s.hidden});
  w->Tensor(b + "hnorm.weight", {s.hidden});
  if (!s.mtp_dense) {
    w->Tensor(b + "embed_tokens.weight", {s.hidden, s.vocab});
    w->Tensor(b + "shared_head_head.weight", {s.hidden, s.vocab});
  }
  w->Tensor(b + "shared_head_norm.weight", {s.hidden});
}

// The file's metadata and tensors; `extra` adds family keys.
GgufHeaderWriter Write(const Shape& s, const std::function<void(GgufHeaderWriter&)>& extra = {}) {
  GgufHeaderWriter w;
  const std::string a = s.arch + ".";
  w.Str("general.architecture", s.arch).Str("general.name", s.arch + " checkpoint");
  w.U32(a + "block_count", static_cast<uint32_t>(s.layers + s.mtp))
      .U32(a + "context_length", static_cast<uint32_t>(s.context))
      .U32(a + "embedding_length", static_cast<uint32_t>(s.hidden))
      .U32(a + "attention.head_count", static_cast<uint32_t>(s.heads));
  if (s.kv_lora > 0) {
    // The older layout: the decompressed widths as key/value_length and a
    // key/value head per query head; the newer caches one compressed head.
    const uint64_t qk = s.nope_dim + s.rope_dim;
    w.U32(a + "attention.head_count_kv", static_cast<uint32_t>(s.mla_as_mqa ? 1 : s.heads))
        .U32(a + "attention.key_length",
             static_cast<uint32_t>(s.mla_as_mqa ? s.kv_lora + s.rope_dim : qk))
        .U32(a + "attention.value_length",
             static_cast<uint32_t>(s.mla_as_mqa ? s.kv_lora : s.v_dim))
        .U32(a + "attention.kv_lora_rank", static_cast<uint32_t>(s.kv_lora))
        .U32(a + "rope.dimension_count", static_cast<uint32_t>(s.rope_dim));
    if (s.q_lora > 0) w.U32(a + "attention.q_lora_rank", static_cast<uint32_t>(s.q_lora));
    if (s.mla_as_mqa) {
      w.U32(a + "attention.key_length_mla", static_cast<uint32_t>(qk))
          .U32(a + "attention.value_length_mla", static_cast<uint32_t>(s.v_dim));
    }
  } else {
    w.U32(a + "attention.head_count_kv", static_cast<uint32_t>(s.kv_heads))
        .U32(a + "attention.key_length", static_cast<uint32_t>(s.head_dim))
        .U32(a + "attention.value_length", static_cast<uint32_t>(s.head_dim));
  }
  if (s.write_dense_ffn) w.U32(a + "feed_forward_length", static_cast<uint32_t>(s.ffn));
  if (s.experts > 0) {
    w.U32(a + "expert_count", static_cast<uint32_t>(s.experts))
        .U32(a + "expert_used_count", static_cast<uint32_t>(s.experts_used))
        .U32(a + "expert_feed_forward_length", static_cast<uint32_t>(s.expert_ffn));
    if (s.shared_experts > 0) {
      w.U32(a + "expert_shared_count", static_cast<uint32_t>(s.shared_experts));
    }
    if (s.dense_lead > 0) {
      w.U32(a + "leading_dense_block_count", static_cast<uint32_t>(s.dense_lead));
    }
    if (s.moe_step > 1) {
      w.U32(a + "interleave_moe_layer_step", static_cast<uint32_t>(s.moe_step));
    }
  }
  if (s.mtp > 0) w.U32(a + "nextn_predict_layers", static_cast<uint32_t>(s.mtp));
  if (s.sliding_window > 0) {
    w.U32(a + "attention.sliding_window", static_cast<uint32_t>(s.sliding_window));
  }
  if (extra) extra(w);
  w.Tokens(static_cast<int>(s.vocab));
  w.Tensor("token_embd.weight", {s.hidden, s.vocab});
  for (uint64_t i = 0; i < s.layers; ++i) Block(s, i, &w);
  for (uint64_t i = 0; i < s.mtp; ++i) MtpBlock(s, s.layers + i, &w);
  if (s.norms > 0) w.Tensor("output_norm.weight", {s.hidden});
  if (s.layer_norm) w.Tensor("output_norm.bias", {s.hidden});
  if (!s.tied) w.Tensor("output.weight", {s.hidden, s.vocab});
  if (s.head_bias) w.Tensor("output.bias", {s.vocab});
  return w;
}

struct Read {
  common::v1::Architecture arch;
  uint64_t file_total = 0;
  double counted = 0;  // the model's count plus the MTP layers the file keeps
};

Read ReadFile(const GgufHeaderWriter& w) {
  Read out;
  absl::StatusOr<GgufParseResult> parsed = ParseGgufHeader(w.Header());
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok()) return out;
  EXPECT_TRUE(parsed->complete);
  out.file_total = parsed->header.total_elements;
  absl::StatusOr<common::v1::Architecture> arch =
      ArchitectureFromGguf(parsed->header, "source.gguf_header.metadata.");
  EXPECT_TRUE(arch.ok()) << arch.status();
  if (!arch.ok()) return out;
  out.arch = *arch;
  absl::StatusOr<ParameterCount> count = CountParameters(ToCoreArchitecture(*arch));
  EXPECT_TRUE(count.ok()) << count.status();
  if (count.ok()) out.counted = count->total + count->multi_token_prediction;
  return out;
}

// What the reader says of a file it should refuse (the field prefix "m.").
absl::Status Refusal(const GgufHeaderWriter& w) {
  absl::StatusOr<GgufParseResult> parsed = ParseGgufHeader(w.Header());
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok()) return parsed.status();
  return ArchitectureFromGguf(parsed->header, "m.").status();
}

// Gemma 3 1B's shape: per-head QK norms, four norms per block, five sliding
// layers of 512 tokens in six.
Shape Gemma3_1BShape() {
  return {.arch = "gemma3",
          .layers = 26,
          .hidden = 1152,
          .heads = 4,
          .kv_heads = 1,
          .head_dim = 256,
          .ffn = 6912,
          .vocab = 262144,
          .tied = true,
          .qk_norm = 1,
          .post_norms = true,
          .sliding_window = 512};
}

// The KV-cache shape of two architectures agrees.
void ExpectSameCacheShape(const common::v1::Architecture& gguf,
                          const common::v1::Architecture& config) {
  EXPECT_EQ(gguf.model_type(), config.model_type());
  EXPECT_EQ(gguf.num_layers(), config.num_layers());
  EXPECT_EQ(gguf.num_key_value_heads(), config.num_key_value_heads());
  EXPECT_EQ(gguf.head_dim(), config.head_dim());
  EXPECT_EQ(gguf.sliding_window(), config.sliding_window());
  EXPECT_EQ(gguf.num_sliding_window_layers(), config.num_sliding_window_layers());
  EXPECT_EQ(gguf.kv_lora_rank(), config.kv_lora_rank());
  EXPECT_EQ(gguf.qk_rope_head_dim(), config.qk_rope_head_dim());
  EXPECT_EQ(gguf.num_experts(), config.num_experts());
  EXPECT_EQ(gguf.num_dense_layers(), config.num_dense_layers());
}

struct Case {
  const char* what;  // the checkpoint and where its count is published
  Shape shape;
  uint64_t published;  // the checkpoint's parameters (the file's, MTP included)
  const char* config;  // its config.json (the keys that decide the shape)
  std::function<void(GgufHeaderWriter&)> extra = {};
  std::string config_text = "";  // the config.json when built at run time
};

void Check(const Case& c) {
  SCOPED_TRACE(c.what);
  Read read = ReadFile(Write(c.shape, c.extra));
  EXPECT_EQ(read.file_total, c.published);
  EXPECT_EQ(read.counted, static_cast<double>(read.file_total));
  EXPECT_EQ(read.arch.published_parameter_count(), static_cast<int64_t>(read.file_total));
  absl::StatusOr<common::v1::Architecture> config =
      ArchitectureFromHfConfig(c.config != nullptr ? std::string(c.config) : c.config_text);
  ASSERT_TRUE(config.ok()) << config.status();
  ExpectSameCacheShape(read.arch, *config);
}

// Gemma 4 as llama.cpp's converter writes it (convert_hf_to_gguf.py
// Gemma4Model, PR #21309; the tensor and key names of real files' load logs:
// unsloth's gemma-4-E2B-it Q4_K_M, 601 tensors, and gemma-4-26B-A4B-it
// Q5_K_M, 658): key_length the full layers' head width (512), key_length_swa
// the sliding ones' (256), a flag per layer for the window, head_count_kv per
// layer when the config has global KV heads, no attn_v in a full layer whose
// values are its keys, feed_forward_length per layer with the double-wide
// MLP, shared_kv_layers and embedding_length_per_layer_input. The files add
// a one-element layer_output_scale per layer and a 256-element rope_freqs,
// neither a parameter. The reader must find the config.json reading's
// architecture.
struct Gemma4Gguf {
  uint64_t layers, hidden, heads, kv_sliding, kv_full, ffn, period, shared, per_layer;
  bool values_from_keys, double_wide;
  uint64_t experts = 0, experts_used = 0, expert_ffn = 0;
};

GgufHeaderWriter WriteGemma4(const Gemma4Gguf& g) {
  GgufHeaderWriter w;
  const uint64_t vocab = 262144, L = g.layers, H = g.hidden;
  std::vector<bool> sliding;
  std::vector<int32_t> kv, ffn;
  for (uint64_t i = 0; i < L; ++i) {
    sliding.push_back((i + 1) % g.period != 0);
    kv.push_back(static_cast<int32_t>(sliding.back() ? g.kv_sliding : g.kv_full));
    ffn.push_back(static_cast<int32_t>(g.double_wide && i >= L - g.shared ? 2 * g.ffn : g.ffn));
  }
  w.Str("general.architecture", "gemma4")
      .U32("gemma4.block_count", static_cast<uint32_t>(L))
      .U32("gemma4.context_length", 131072)
      .U32("gemma4.embedding_length", static_cast<uint32_t>(H))
      .U32("gemma4.attention.head_count", static_cast<uint32_t>(g.heads))
      .U32("gemma4.attention.key_length", 512)
      .U32("gemma4.attention.value_length", 512)
      .U32("gemma4.attention.key_length_swa", 256)
      .U32("gemma4.attention.value_length_swa", 256)
      .U32("gemma4.attention.sliding_window", 512)
      .BoolArray("gemma4.attention.sliding_window_pattern", sliding)
      .U32("gemma4.attention.shared_kv_layers", static_cast<uint32_t>(g.shared))
      .U32("gemma4.embedding_length_per_layer_input", static_cast<uint32_t>(g.per_layer));
  if (g.kv_sliding != g.kv_full) {
    w.I32Array("gemma4.attention.head_count_kv", kv);
  } else {
    w.U32("gemma4.attention.head_count_kv", static_cast<uint32_t>(g.kv_sliding));
  }
  if (g.double_wide) {
    w.I32Array("gemma4.feed_forward_length", ffn);
  } else {
    w.U32("gemma4.feed_forward_length", static_cast<uint32_t>(g.ffn));
  }
  if (g.experts > 0) {
    w.U32("gemma4.expert_count", static_cast<uint32_t>(g.experts))
        .U32("gemma4.expert_used_count", static_cast<uint32_t>(g.experts_used))
        .U32("gemma4.expert_feed_forward_length", static_cast<uint32_t>(g.expert_ffn));
  }
  w.Tokens(static_cast<int>(vocab));
  w.Tensor("token_embd.weight", {H, vocab});
  if (g.per_layer > 0) {
    w.Tensor("per_layer_token_embd.weight", {L * g.per_layer, vocab});
    w.Tensor("per_layer_model_proj.weight", {H, L * g.per_layer});
    w.Tensor("per_layer_proj_norm.weight", {g.per_layer});
  }
  w.Tensor("rope_freqs.weight", {256});
  for (uint64_t i = 0; i < L; ++i) {
    const std::string b = absl::StrCat("blk.", i, ".");
    const uint64_t d = sliding[i] ? 256 : 512, k = static_cast<uint64_t>(kv[i]) * d;
    const uint64_t f = static_cast<uint64_t>(ffn[i]);
    for (const char* norm : {"attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"}) {
      w.Tensor(b + norm + ".weight", {H});
    }
    w.Tensor(b + "attn_q.weight", {H, g.heads * d});
    w.Tensor(b + "attn_k.weight", {H, k});
    if (sliding[i] || !g.values_from_keys) w.Tensor(b + "attn_v.weight", {H, k});
    w.Tensor(b + "attn_q_norm.weight", {d});
    w.Tensor(b + "attn_k_norm.weight", {d});
    w.Tensor(b + "attn_output.weight", {g.heads * d, H});
    w.Tensor(b + "ffn_gate.weight", {H, f});
    w.Tensor(b + "ffn_up.weight", {H, f});
    w.Tensor(b + "ffn_down.weight", {f, H});
    if (g.experts > 0) {
      w.Tensor(b + "ffn_gate_inp.weight", {H, g.experts});
      w.Tensor(b + "ffn_gate_inp.scale", {H});
      w.Tensor(b + "ffn_gate_up_exps.weight", {H, 2 * g.expert_ffn, g.experts});
      w.Tensor(b + "ffn_down_exps.weight", {g.expert_ffn, H, g.experts});
      w.Tensor(b + "ffn_down_exps.scale", {g.experts});
      for (const char* norm : {"pre_ffw_norm_2", "post_ffw_norm_1", "post_ffw_norm_2"}) {
        w.Tensor(b + norm + ".weight", {H});
      }
    }
    if (g.per_layer > 0) {
      w.Tensor(b + "inp_gate.weight", {H, g.per_layer});
      w.Tensor(b + "proj.weight", {g.per_layer, H});
      w.Tensor(b + "post_norm.weight", {H});
    }
    w.Tensor(b + "layer_output_scale.weight", {1});
  }
  w.Tensor("output_norm.weight", {H});
  return w;
}

TEST(GgufFamiliesTest, Gemma4ReadsAsItsConfigWithEachLayerKindsGeometry) {
  // E2B: one KV head of 256 / 512, the last 20 of 35 layers KV-shared with
  // MLPs twice as wide, per-layer inputs of 256. Its text model:
  // 5,123,178,016 (unsloth/gemma-4-E2B-it-unsloth-bnb-4bit) less the
  // vision (168,544,256) and audio (307,183,904) parts an mmproj file holds.
  const Gemma4Gguf e2b{.layers = 35,
                       .hidden = 1536,
                       .heads = 8,
                       .kv_sliding = 1,
                       .kv_full = 1,
                       .ffn = 6144,
                       .period = 5,
                       .shared = 20,
                       .per_layer = 256,
                       .values_from_keys = false,
                       .double_wide = true};
  Read read = ReadFile(WriteGemma4(e2b));
  EXPECT_EQ(read.counted, 4647449856.0);
  EXPECT_EQ(read.file_total, 4647449856ULL + 35 + 256);
  EXPECT_EQ(read.arch.model_type(), "gemma4_text");
  EXPECT_EQ(read.arch.head_dim(), 256);
  EXPECT_EQ(read.arch.global_head_dim(), 512);
  EXPECT_EQ(read.arch.num_key_value_heads(), 1);
  EXPECT_EQ(read.arch.num_global_key_value_heads(), 1);
  EXPECT_FALSE(read.arch.global_values_from_keys());
  EXPECT_EQ(read.arch.num_sliding_window_layers(), 28);
  EXPECT_EQ(read.arch.num_kv_shared_layers(), 20);
  EXPECT_TRUE(read.arch.kv_shared_layers_double_mlp());
  EXPECT_EQ(read.arch.intermediate_size(), 6144);
  EXPECT_EQ(read.arch.per_layer_input_size(), 256);
  EXPECT_EQ(read.arch.per_layer_input_vocab_size(), 262144);
  // 15 layers with a cache: 12 sliding of 1 x 256, 3 full of 1 x 512.
  EXPECT_EQ(KvCacheBytesPerToken(ToCoreArchitecture(read.arch), NumberFormat::kFp16, nullptr),
            2.0 * (12 * 256 + 3 * 512) * 2);

  // 26B-A4B: 8 / 2 KV heads, no attn_v in the full layers, 128 experts of
  // 704 beside the dense MLP of 2112. Its text model 25,233,141,760
  // (Google's "25.2B"; transformers re-saves' 25,805,933,872 less the
  // vision tower and embed_vision).
  const Gemma4Gguf moe{.layers = 30,
                       .hidden = 2816,
                       .heads = 16,
                       .kv_sliding = 8,
                       .kv_full = 2,
                       .ffn = 2112,
                       .period = 6,
                       .shared = 0,
                       .per_layer = 0,
                       .values_from_keys = true,
                       .double_wide = false,
                       .experts = 128,
                       .experts_used = 8,
                       .expert_ffn = 704};
  read = ReadFile(WriteGemma4(moe));
  EXPECT_EQ(read.counted, 25233141760.0);
  EXPECT_EQ(read.file_total, 25233141760ULL + 30 + 256);
  EXPECT_EQ(read.arch.num_key_value_heads(), 8);
  EXPECT_EQ(read.arch.num_global_key_value_heads(), 2);
  EXPECT_TRUE(read.arch.global_values_from_keys());
  EXPECT_EQ(read.arch.num_experts(), 128);
  EXPECT_EQ(read.arch.num_experts_per_token(), 8);
  EXPECT_EQ(read.arch.shared_expert_intermediate_size(), 2112);
  EXPECT_TRUE(read.arch.router_scales());
  EXPECT_EQ(read.arch.num_sliding_window_layers(), 25);
}

// Dense families. The published counts are those accuracy_test.cc and
// shipped_models_test.cc hold their config.json counts to (docs/ACCURACY.md).
TEST(GgufFamiliesTest, DenseFamiliesReadAsTheirCheckpoints) {
  std::vector<Case> cases;
  {
    Shape s{.arch = "olmo2",
            .layers = 16,
            .hidden = 2048,
            .heads = 16,
            .kv_heads = 16,
            .head_dim = 128,
            .ffn = 8192,
            .vocab = 100352,
            .qk_norm = 2};
    cases.push_back({"allenai/OLMo-2-0425-1B (Hub safetensors total)", s, 1484916736,
                     R"({"model_type": "olmo2", "hidden_size": 2048, "intermediate_size": 8192,
                         "num_hidden_layers": 16, "num_attention_heads": 16,
                         "num_key_value_heads": 16, "vocab_size": 100352,
                         "tie_word_embeddings": false})"});
  }
  {
    // EXAONE 3.5 2.4B (llama.cpp's exaone): Llama's blocks, tied.
    Shape s{.arch = "exaone",
            .layers = 30,
            .hidden = 2560,
            .heads = 32,
            .kv_heads = 8,
            .head_dim = 80,
            .ffn = 7168,
            .vocab = 102400,
            .tied = true};
    cases.push_back({"LGAI-EXAONE/EXAONE-3.5-2.4B-Instruct", s, 2405327360,
                     R"({"model_type": "exaone", "hidden_size": 2560, "intermediate_size": 7168,
                         "num_layers": 30, "num_attention_heads": 32, "num_key_value_heads": 8,
                         "vocab_size": 102400, "tie_word_embeddings": true})"});
  }
  {
    Shape s{.arch = "granite",
            .layers = 40,
            .hidden = 4096,
            .heads = 32,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 12800,
            .vocab = 49159,
            .tied = true};
    cases.push_back({"ibm-granite/granite-3.3-8b-instruct", s, 8170864640,
                     R"({"model_type": "granite", "hidden_size": 4096, "intermediate_size": 12800,
                         "num_hidden_layers": 40, "num_attention_heads": 32,
                         "num_key_value_heads": 8, "vocab_size": 49159,
                         "tie_word_embeddings": true})"});
  }
  {
    // StableLM 2: LayerNorms with biases, q/k/v biases (accuracy_test.cc).
    Shape s{.arch = "stablelm",
            .layers = 24,
            .hidden = 2048,
            .heads = 32,
            .kv_heads = 32,
            .head_dim = 64,
            .ffn = 5632,
            .vocab = 100352,
            .qkv_bias = true,
            .layer_norm = true};
    cases.push_back({"stabilityai/stablelm-2-1_6b", s, 1644515328,
                     R"({"model_type": "stablelm", "hidden_size": 2048, "intermediate_size": 5632,
                         "num_hidden_layers": 24, "num_attention_heads": 32,
                         "num_key_value_heads": 32, "vocab_size": 100352,
                         "use_qkv_bias": true, "tie_word_embeddings": false})"});
  }
  {
    // EXAONE 4.0's "LLLG": the converter writes a flag per layer.
    Shape s{.arch = "exaone4",
            .layers = 64,
            .hidden = 5120,
            .heads = 40,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 27392,
            .vocab = 102400,
            .qk_norm = 1,
            .sliding_window = 4096};
    cases.push_back({"LGAI-EXAONE/EXAONE-4.0.1-32B", s, 32003216384,
                     R"({"model_type": "exaone4", "hidden_size": 5120, "intermediate_size": 27392,
                         "num_hidden_layers": 64, "num_attention_heads": 40,
                         "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 102400,
                         "sliding_window": 4096, "sliding_window_pattern": "LLLG",
                         "tie_word_embeddings": false})",
                     [](GgufHeaderWriter& w) {
                       std::vector<int32_t> sliding;
                       for (int i = 0; i < 64; ++i) sliding.push_back(i % 4 != 3);
                       w.I32Array("exaone4.attention.sliding_window_pattern", sliding);
                     }});
  }
  {
    // Qwen3-VL-4B's language model (its config.json text_config: hidden
    // 2560, FFN 9728, 36 layers, 32 heads, 8 KV heads of 128, vocabulary
    // 151,936, tied) has Qwen3-4B's shape, so the file's tensors count
    // Qwen3-4B's published 4,022,468,096; the vision tower and its deepstack
    // mergers are the mmproj file's.
    Shape s{.arch = "qwen3vl",
            .layers = 36,
            .hidden = 2560,
            .heads = 32,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 9728,
            .vocab = 151936,
            .tied = true,
            .qk_norm = 1};
    cases.push_back({"Qwen/Qwen3-VL-4B-Instruct's language model (Qwen3-4B's count)", s, 4022468096,
                     R"({"model_type": "qwen3", "hidden_size": 2560, "intermediate_size": 9728,
                         "num_hidden_layers": 36, "num_attention_heads": 32,
                         "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
                         "tie_word_embeddings": true})",
                     [](GgufHeaderWriter& w) {
                       w.U32("qwen3vl.n_deepstack_layers", 3)
                           .I32Array("qwen3vl.rope.dimension_sections", {24, 20, 20, 0});
                     }});
  }
  {
    // GLM-4-0414: q/k/v biased, two more norms per block.
    Shape s{.arch = "glm4",
            .layers = 40,
            .hidden = 4096,
            .heads = 32,
            .kv_heads = 2,
            .head_dim = 128,
            .ffn = 13696,
            .vocab = 151552,
            .qkv_bias = true,
            .post_norms = true};
    cases.push_back({"zai-org/GLM-4-9B-0414 (Hub safetensors total)", s, 9400279040,
                     R"({"model_type": "glm4", "hidden_size": 4096, "intermediate_size": 13696,
                         "num_hidden_layers": 40, "num_attention_heads": 32,
                         "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 151552,
                         "attention_bias": true, "tie_word_embeddings": false})"});
  }
  {
    // GLM-4-9B-chat's own format: one biased query_key_value per block.
    Shape s{.arch = "chatglm",
            .layers = 40,
            .hidden = 4096,
            .heads = 32,
            .kv_heads = 2,
            .head_dim = 128,
            .ffn = 13696,
            .vocab = 151552,
            .fused_qkv = true,
            .qkv_bias = true};
    cases.push_back({"zai-org/glm-4-9b-chat-hf (its transformers-format count)", s, 9399951360,
                     R"({"model_type": "glm", "hidden_size": 4096, "intermediate_size": 13696,
                         "num_hidden_layers": 40, "num_attention_heads": 32,
                         "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 151552,
                         "attention_bias": true, "tie_word_embeddings": false})"});
  }
  {
    Shape s{.arch = "starcoder2",
            .layers = 30,
            .hidden = 3072,
            .heads = 24,
            .kv_heads = 2,
            .head_dim = 128,
            .ffn = 12288,
            .vocab = 49152,
            .tied = true,
            .qkv_bias = true,
            .output_bias = true,
            .mlp_bias = true,
            .layer_norm = true,
            .gated = false,
            .sliding_window = 4096};
    cases.push_back({"bigcode/starcoder2-3b", s, 3030371328,
                     R"({"model_type": "starcoder2", "hidden_size": 3072,
                         "intermediate_size": 12288, "num_hidden_layers": 30,
                         "num_attention_heads": 24, "num_key_value_heads": 2,
                         "vocab_size": 49152, "sliding_window": 4096, "use_bias": true})"});
  }
  {
    Shape s{.arch = "internlm2",
            .layers = 48,
            .hidden = 6144,
            .heads = 48,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 16384,
            .vocab = 92544};
    cases.push_back({"internlm/internlm2-chat-20b", s, 19861149696,
                     R"({"model_type": "internlm2", "hidden_size": 6144,
                         "intermediate_size": 16384, "num_hidden_layers": 48,
                         "num_attention_heads": 48, "num_key_value_heads": 8,
                         "vocab_size": 92544, "bias": false, "tie_word_embeddings": false})"});
  }
  {
    Shape s{.arch = "seed_oss",
            .layers = 64,
            .hidden = 5120,
            .heads = 80,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 27648,
            .vocab = 155136,
            .qkv_bias = true};
    cases.push_back({"ByteDance-Seed/Seed-OSS-36B-Instruct", s, 36151104512,
                     R"({"model_type": "seed_oss", "hidden_size": 5120,
                         "intermediate_size": 27648, "num_hidden_layers": 64,
                         "num_attention_heads": 80, "num_key_value_heads": 8, "head_dim": 128,
                         "vocab_size": 155136, "attention_bias": true,
                         "attention_out_bias": false, "mlp_bias": false,
                         "tie_word_embeddings": false})"});
  }
  {
    // SmolLM3 (llama.cpp's smollm3): Llama's tensors, tied embeddings.
    Shape s{.arch = "smollm3",
            .layers = 36,
            .hidden = 2048,
            .heads = 16,
            .kv_heads = 4,
            .head_dim = 128,
            .ffn = 11008,
            .vocab = 128256,
            .tied = true};
    cases.push_back({"HuggingFaceTB/SmolLM3-3B (Hub safetensors total)", s, 3075098624,
                     R"({"model_type": "smollm3", "hidden_size": 2048,
                         "intermediate_size": 11008, "num_hidden_layers": 36,
                         "num_attention_heads": 16, "num_key_value_heads": 4,
                         "vocab_size": 128256, "tie_word_embeddings": true,
                         "use_sliding_window": false})"});
  }
  {
    // Gemma 3: per-head QK norms, four norms per block, five sliding layers
    // in six (the period written as config.json's sliding_window_pattern).
    const Shape s = Gemma3_1BShape();
    cases.push_back({"google/gemma-3-1b-it (KerasHub gemma3_1b preset)", s, 999885952,
                     R"({"model_type": "gemma3_text", "hidden_size": 1152,
                         "intermediate_size": 6912, "num_hidden_layers": 26,
                         "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
                         "vocab_size": 262144, "sliding_window": 512,
                         "sliding_window_pattern": 6})"});
  }
  {
    // Aya Expanse (command-r): attention and MLP behind one norm.
    Shape s{.arch = "command-r",
            .layers = 32,
            .hidden = 4096,
            .heads = 32,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 14336,
            .vocab = 256000,
            .tied = true,
            .norms = 1};
    cases.push_back({"CohereLabs/aya-expanse-8b (llmfit's safetensors total)", s, 8028033024,
                     R"({"model_type": "cohere", "hidden_size": 4096, "intermediate_size": 14336,
                         "num_hidden_layers": 32, "num_attention_heads": 32,
                         "num_key_value_heads": 8, "vocab_size": 256000})"});
  }
  {
    // Command R+ (command-r with per-head QK norms): ours, against its 104B
    // in accuracy_test.cc.
    Shape s{.arch = "command-r",
            .layers = 64,
            .hidden = 12288,
            .heads = 96,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 33792,
            .vocab = 256000,
            .tied = true,
            .norms = 1,
            .qk_norm = 3};
    cases.push_back({"CohereForAI/c4ai-command-r-plus (ours; its card: 104B)", s, 103810674688,
                     R"({"model_type": "cohere", "hidden_size": 12288, "intermediate_size": 33792,
                         "num_hidden_layers": 64, "num_attention_heads": 96,
                         "num_key_value_heads": 8, "vocab_size": 256000, "use_qk_norm": true})"});
  }
  {
    // Command R7B's shape (cohere2): llama.cpp's period 4, three sliding
    // layers in four, as Cohere2Config's.
    Shape s{.arch = "cohere2",
            .layers = 32,
            .hidden = 4096,
            .heads = 32,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 14336,
            .vocab = 256000,
            .tied = true,
            .norms = 1,
            .sliding_window = 4096};
    cases.push_back({"Command R7B's shape (the count is Aya Expanse 8B's)", s, 8028033024,
                     R"({"model_type": "cohere2", "hidden_size": 4096, "intermediate_size": 14336,
                         "num_hidden_layers": 32, "num_attention_heads": 32,
                         "num_key_value_heads": 8, "vocab_size": 256000,
                         "sliding_window": 4096})"});
  }
  {
    // OLMo v1: no norm tensors at all.
    Shape s{.arch = "olmo",
            .layers = 16,
            .hidden = 2048,
            .heads = 16,
            .kv_heads = 16,
            .head_dim = 128,
            .ffn = 8192,
            .vocab = 50304,
            .tied = true,
            .norms = 0};
    cases.push_back({"allenai/OLMo-1B-hf (llmfit's safetensors total)", s, 1176764416,
                     R"({"model_type": "olmo", "hidden_size": 2048, "intermediate_size": 8192,
                         "num_hidden_layers": 16, "num_attention_heads": 16,
                         "num_key_value_heads": 16, "vocab_size": 50304,
                         "tie_word_embeddings": true})"});
  }
  {
    // An OLMo 3 file (olmo2 with a window; OLMo 3's blocks are OLMo 2's):
    // llama.cpp's period 4, never every layer sliding, as Olmo-3's
    // config.json lists its layers.
    Shape s{.arch = "olmo2",
            .layers = 32,
            .hidden = 4096,
            .heads = 32,
            .kv_heads = 32,
            .head_dim = 128,
            .ffn = 11008,
            .vocab = 100278,
            .qk_norm = 2,
            .sliding_window = 4096};
    std::string types;
    for (int i = 0; i < 32; ++i) {
      absl::StrAppend(&types, i ? ", " : "",
                      i % 4 == 3 ? "\"full_attention\"" : "\"sliding_attention\"");
    }
    cases.push_back(
        {"allenai/Olmo-3-1025-7B (llmfit's safetensors total)", s, 7298011136, nullptr});
    cases.back().config_text = absl::StrCat(
        R"({"model_type": "olmo2", "hidden_size": 4096, "intermediate_size": 11008,
            "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
            "vocab_size": 100278, "sliding_window": 4096, "tie_word_embeddings": false,
            "layer_types": [)",
        types, "]}");
  }
  for (const Case& c : cases) Check(c);
}

TEST(GgufFamiliesTest, MixturesOfExpertsReadAsTheirCheckpoints) {
  std::vector<Case> cases;
  {
    // Qwen3-VL-30B-A3B's language model (text_config: hidden 2048, 48
    // layers, 32 heads, 4 KV heads of 128, 128 experts of 768, 8 used) has
    // Qwen3-30B-A3B's shape and count, 30,532,122,624.
    Shape s{.arch = "qwen3vlmoe",
            .layers = 48,
            .hidden = 2048,
            .heads = 32,
            .kv_heads = 4,
            .head_dim = 128,
            .ffn = 6144,
            .vocab = 151936,
            .qk_norm = 1,
            .experts = 128,
            .experts_used = 8,
            .expert_ffn = 768};
    cases.push_back({"Qwen/Qwen3-VL-30B-A3B-Instruct's language model (Qwen3-30B-A3B's count)", s,
                     30532122624,
                     R"({"model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144,
             "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
             "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4,
             "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": false})",
                     [](GgufHeaderWriter& w) { w.U32("qwen3vlmoe.n_deepstack_layers", 3); }});
  }
  {
    // gpt-oss-20b: biased attention and experts, a sink per head, sliding
    // and full layers alternating. A file says nothing of the alternation:
    // read as GptOssConfig's default, never every layer sliding.
    Shape s{.arch = "gpt-oss",
            .layers = 24,
            .hidden = 2880,
            .heads = 64,
            .kv_heads = 8,
            .head_dim = 64,
            .ffn = 2880,
            .vocab = 201088,
            .qkv_bias = true,
            .output_bias = true,
            .sinks = true,
            .sliding_window = 128,
            .experts = 32,
            .experts_used = 4,
            .expert_ffn = 2880,
            .expert_biases = true};
    cases.push_back({"openai/gpt-oss-20b (its model card: 20.9B; Hub safetensors total)", s,
                     20914757184,
                     R"({"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
                         "num_hidden_layers": 24, "num_attention_heads": 64,
                         "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088,
                         "num_local_experts": 32, "num_experts_per_tok": 4,
                         "sliding_window": 128, "tie_word_embeddings": false,
                         "layer_types": ["sliding_attention", "full_attention",
                           "sliding_attention", "full_attention", "sliding_attention",
                           "full_attention", "sliding_attention", "full_attention",
                           "sliding_attention", "full_attention", "sliding_attention",
                           "full_attention", "sliding_attention", "full_attention",
                           "sliding_attention", "full_attention", "sliding_attention",
                           "full_attention", "sliding_attention", "full_attention",
                           "sliding_attention", "full_attention", "sliding_attention",
                           "full_attention"]})"});
  }
  {
    // Phi-3.5-MoE (llama.cpp's phimoe): Mixtral's experts behind
    // LayerNorms, biased attention and output head.
    Shape s{.arch = "phimoe",
            .layers = 32,
            .hidden = 4096,
            .heads = 32,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 6400,
            .vocab = 32064,
            .qkv_bias = true,
            .output_bias = true,
            .layer_norm = true,
            .head_bias = true,
            .experts = 16,
            .experts_used = 2,
            .expert_ffn = 6400};
    cases.push_back({"microsoft/Phi-3.5-MoE-instruct (r/LocalLLaMA 1exn6wx: 41,873,153,344)", s,
                     41873153344,
                     R"({"model_type": "phimoe", "hidden_size": 4096, "intermediate_size": 6400,
                         "num_hidden_layers": 32, "num_attention_heads": 32,
                         "num_key_value_heads": 8, "vocab_size": 32064, "num_local_experts": 16,
                         "num_experts_per_tok": 2, "attention_bias": true, "lm_head_bias": true,
                         "tie_word_embeddings": false})"});
  }
  {
    // PowerMoE-3b (llama.cpp's granitemoe): Granite's blocks, 40 experts of
    // 512 (accuracy_test.cc).
    Shape s{.arch = "granitemoe",
            .layers = 32,
            .hidden = 1536,
            .heads = 24,
            .kv_heads = 8,
            .head_dim = 64,
            .ffn = 512,
            .vocab = 49152,
            .experts = 40,
            .experts_used = 8,
            .expert_ffn = 512};
    cases.push_back({"ibm-research/PowerMoE-3b", s, 3374286336,
                     R"({"model_type": "granitemoe", "hidden_size": 1536, "intermediate_size": 512,
                         "num_hidden_layers": 32, "num_attention_heads": 24,
                         "num_key_value_heads": 8, "num_local_experts": 40,
                         "num_experts_per_tok": 8, "vocab_size": 49152,
                         "tie_word_embeddings": false})"});
  }
  {
    // dots.llm1 (llama.cpp's dots1): one dense layer, 128 experts of 1408,
    // two shared ones, a router bias, per-head QK norms (accuracy_test.cc).
    Shape s{.arch = "dots1",
            .layers = 62,
            .hidden = 4096,
            .heads = 32,
            .kv_heads = 32,
            .head_dim = 128,
            .ffn = 10944,
            .vocab = 152064,
            .qk_norm = 1,
            .experts = 128,
            .experts_used = 6,
            .expert_ffn = 1408,
            .shared_experts = 2,
            .shared_ffn = 2816,
            .dense_lead = 1,
            .router_bias = true};
    cases.push_back({"rednote-hilab/dots.llm1.inst", s, 142774381696,
                     R"({"model_type": "dots1", "hidden_size": 4096, "intermediate_size": 10944,
                         "moe_intermediate_size": 1408, "num_hidden_layers": 62,
                         "num_attention_heads": 32, "num_key_value_heads": 32,
                         "n_routed_experts": 128, "num_experts_per_tok": 6,
                         "n_shared_experts": 2, "first_k_dense_replace": 1,
                         "vocab_size": 152064, "tie_word_embeddings": false})"});
  }
  {
    // Trinity-Nano-Preview (llama.cpp's afmoe, src/models/afmoe.cpp): two
    // dense layers, 128 experts of 256 and one shared, exp_probs_b, per-head
    // QK norms, attn_gate, norms before and after attention and the MLP, a
    // 2,048-token window in three layers of four (the loader's default
    // pattern; the converter writes none) (moe_families_test.cc).
    Shape s{.arch = "afmoe",
            .layers = 56,
            .hidden = 1024,
            .heads = 8,
            .kv_heads = 2,
            .head_dim = 128,
            .ffn = 3072,
            .vocab = 200192,
            .qk_norm = 1,
            .post_norms = true,
            .attn_gate = true,
            .sliding_window = 2048,
            .experts = 128,
            .experts_used = 8,
            .expert_ffn = 256,
            .shared_experts = 1,
            .shared_ffn = 256,
            .dense_lead = 2,
            .router_bias = true};
    cases.push_back({"arcee-ai/Trinity-Nano-Preview (llmfit: 6,120,003,328)",
                     s,
                     6120003328,
                     nullptr,
                     {},
                     testing::TrinityConfigJson(testing::kTrinityNano)});
  }
  {
    // GLM-4.5-Air: its multi-token-prediction layer kept as block 46.
    Shape s{.arch = "glm4moe",
            .layers = 46,
            .hidden = 4096,
            .heads = 96,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 10944,
            .vocab = 151552,
            .qkv_bias = true,
            .experts = 128,
            .experts_used = 8,
            .expert_ffn = 1408,
            .shared_experts = 1,
            .shared_ffn = 1408,
            .dense_lead = 1,
            .router_bias = true,
            .mtp = 1};
    cases.push_back({"zai-org/GLM-4.5-Air (llmfit's safetensors total, MTP layer included)", s,
                     110468824832,
                     R"({"model_type": "glm4_moe", "hidden_size": 4096,
                         "intermediate_size": 10944, "moe_intermediate_size": 1408,
                         "num_hidden_layers": 46, "num_attention_heads": 96,
                         "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151552,
                         "n_routed_experts": 128, "n_shared_experts": 1,
                         "num_experts_per_tok": 8, "first_k_dense_replace": 1,
                         "num_nextn_predict_layers": 1, "attention_bias": true,
                         "use_qk_norm": false, "tie_word_embeddings": false})"});
  }
  {
    // K-EXAONE-236B-A23B as its official BF16 GGUF holds it
    // (LGAI-EXAONE/K-EXAONE-236B-A23B-GGUF at 5bd0394e; 781 tensors, as
    // Baekpica/k-exaone-mixed-ds4 lists them): one dense layer, 47 of
    // experts with exp_probs_b, per-head QK norms, the MTP layer as blk.48
    // (dense, no embedding or head of its own), three sliding layers in
    // four as one flag per layer (moe_families_test.cc).
    Shape s{.arch = "exaone-moe",
            .layers = 48,
            .hidden = 6144,
            .heads = 64,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 18432,
            .vocab = 153600,
            .qk_norm = 1,
            .sliding_window = 128,
            .experts = 128,
            .experts_used = 8,
            .expert_ffn = 2048,
            .shared_experts = 1,
            .shared_ffn = 2048,
            .dense_lead = 1,
            .router_bias = true,
            .mtp = 1,
            .mtp_dense = true};
    std::vector<bool> sliding;
    for (int i = 0; i < 48; ++i) sliding.push_back(i % 4 != 3);
    cases.push_back({"LGAI-EXAONE/K-EXAONE-236B-A23B (llmfit's safetensors total, MTP included)", s,
                     237099669632, nullptr,
                     [sliding](GgufHeaderWriter& w) {
                       w.BoolArray("exaone-moe.attention.sliding_window_pattern", sliding)
                           .U32("exaone-moe.expert_shared_feed_forward_length", 2048);
                     },
                     testing::KExaoneConfigJson()});
  }
  {
    // Llama 4 Maverick's language model: routed layers every second, the
    // others dense at intermediate_size_mlp; chunked attention in three
    // layers of four.
    Shape s{.arch = "llama4",
            .layers = 48,
            .hidden = 5120,
            .heads = 40,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 16384,
            .vocab = 202048,
            .experts = 128,
            .experts_used = 1,
            .expert_ffn = 8192,
            .shared_experts = 1,
            .shared_ffn = 8192,
            .moe_step = 2};
    cases.push_back(
        {"meta-llama/Llama-4-Maverick-17B-128E-Instruct (its 401,583,781,376 less "
         "the vision encoder and projector, 871,932,416)",
         s, 400711848960,
         R"({"model_type": "llama4_text", "hidden_size": 5120,
                         "intermediate_size": 8192, "intermediate_size_mlp": 16384,
                         "num_hidden_layers": 48, "num_attention_heads": 40,
                         "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048,
                         "num_local_experts": 128, "num_experts_per_tok": 1,
                         "interleave_moe_layer_step": 2, "tie_word_embeddings": false})"});
  }
  {
    Shape s{.arch = "minimax-m2",
            .layers = 62,
            .hidden = 3072,
            .heads = 48,
            .kv_heads = 8,
            .head_dim = 128,
            .ffn = 1536,
            .vocab = 200064,
            .qk_norm = 2,
            .experts = 256,
            .experts_used = 8,
            .expert_ffn = 1536,
            .router_bias = true};
    cases.push_back({"MiniMaxAI/MiniMax-M2 (its safetensors total less the FP8 block scales)", s,
                     228689764864,
                     R"({"model_type": "minimax_m2", "hidden_size": 3072,
                         "intermediate_size": 1536, "num_hidden_layers": 62,
                         "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128,
                         "vocab_size": 200064, "num_local_experts": 256,
                         "num_experts_per_tok": 8, "use_qk_norm": true,
                         "qk_norm_type": "per_layer", "use_routing_bias": true,
                         "tie_word_embeddings": false})"});
  }
  {
    // ERNIE-4.5-21B-A3B: two shared experts (one tensor twice as wide), the
    // first layer dense, the router's moe_statics as exp_probs_b.
    Shape s{.arch = "ernie4_5-moe",
            .layers = 28,
            .hidden = 2560,
            .heads = 20,
            .kv_heads = 4,
            .head_dim = 128,
            .ffn = 12288,
            .vocab = 103424,
            .tied = true,
            .experts = 64,
            .experts_used = 6,
            .expert_ffn = 1536,
            .shared_experts = 2,
            .shared_ffn = 3072,
            .dense_lead = 1,
            .router_bias = true};
    cases.push_back({"baidu/ERNIE-4.5-21B-A3B-Thinking (llmfit's safetensors total)", s,
                     21825437888,
                     R"({"model_type": "ernie4_5_moe", "hidden_size": 2560,
                         "intermediate_size": 12288, "moe_intermediate_size": 1536,
                         "num_hidden_layers": 28, "num_attention_heads": 20,
                         "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 103424,
                         "moe_num_experts": 64, "moe_k": 6, "moe_num_shared_experts": 2,
                         "moe_layer_start_index": 1, "moe_layer_interval": 1,
                         "tie_word_embeddings": true})"});
  }
  for (const Case& c : cases) Check(c);
}

// DeepSeek-V3 in both of llama.cpp's layouts for multi-head latent
// attention: the older (attn_kv_b, key/value_length the decompressed
// widths) and the newer (attn_k_b and attn_v_b, one compressed KV head,
// key/value_length_mla). Both count the same parameters. Their caches
// differ as llama.cpp allocates them: the newer file caches the latent
// (kv_lora_rank + rope dims per token and layer), the older one every
// head's decompressed key and value, 71x more; sizing that file at the
// latent would say "fits" for a run that needs tens of GiB more.
TEST(GgufFamiliesTest, DeepSeekV3CachesAsLlamaCppRunsEachLatentAttentionLayout) {
  const char* config = R"({"model_type": "deepseek_v3", "vocab_size": 129280,
      "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
      "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
      "n_shared_experts": 1, "n_routed_experts": 256, "num_experts_per_tok": 8,
      "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128,
      "qk_nope_head_dim": 128, "topk_method": "noaux_tc", "first_k_dense_replace": 3,
      "tie_word_embeddings": false})";
  constexpr double kMiB = 1024.0 * 1024.0;
  for (bool mqa : {false, true}) {
    Shape s{.arch = "deepseek2",
            .layers = 61,
            .hidden = 7168,
            .heads = 128,
            .ffn = 18432,
            .vocab = 129280,
            .experts = 256,
            .experts_used = 8,
            .expert_ffn = 2048,
            .shared_experts = 1,
            .shared_ffn = 2048,
            .dense_lead = 3,
            .router_bias = true,
            .q_lora = 1536,
            .kv_lora = 512,
            .rope_dim = 64,
            .nope_dim = 128,
            .v_dim = 128,
            .mla_as_mqa = mqa};
    // accuracy_test.cc DeepSeekV3MultiHeadLatentAttentionIsCountedExactly:
    // 671,026,419,200 without the MTP module (which llama.cpp's files leave out).
    Check({mqa ? "deepseek-ai/DeepSeek-V3, MLA as MQA" : "deepseek-ai/DeepSeek-V3, MLA", s,
           671026419200, config});
    const Read read = ReadFile(Write(s));
    EXPECT_EQ(read.arch.latent_attention_cache_per_head(), !mqa);
    std::string text;
    const double per_token =
        KvCacheBytesPerToken(ToCoreArchitecture(read.arch), NumberFormat::kFp16, &text);
    if (mqa) {
      // ikawrakow/ik_llama.cpp discussion #258 (DeepSeek-V3-0324, latent
      // cache, -c 32768): "KV self size = 2196.00 MiB, c^KV (f16)", the
      // 576-element latent that llama.cpp's V-less MLA cache also keeps
      // (ggml-org/llama.cpp pull request #19067).
      EXPECT_EQ(per_token * 32768 / kMiB, 2196.0) << text;
    } else {
      // ikawrakow/ik_llama.cpp issue #285, mainline llama.cpp build 4905,
      // unsloth's DeepSeek-R1 Q8_0 (this older layout), n_ctx 2048:
      // "KV self size = 9760.00 MiB, K (f16): 5856.00 MiB, V (f16): 3904.00 MiB".
      EXPECT_EQ(per_token * 2048 / kMiB, 9760.0) << text;
      EXPECT_TRUE(absl::StrContains(text, "128 heads x (192 key + 128 value")) << text;
    }
  }
}

// DeepSeek-Coder-V2-Lite in the older layout: a 2026 ollama run of llama.cpp
// on such a file logs the per-head cache, "llama_kv_cache: size = 540.00 MiB
// (2048 cells, 27 layers, 1/1 seqs), K (f16): 324.00 MiB, V (f16): 216.00
// MiB" (tag deepseek-coder-v2:16b-lite-instruct-q5_K_M, docs/ACCURACY.md).
TEST(GgufFamiliesTest, AnOlderDeepSeekV2LiteFileCachesEveryHeadAsLlamaCppLogsIt) {
  Shape s{.arch = "deepseek2",
          .layers = 27,
          .hidden = 2048,
          .heads = 16,
          .ffn = 10944,
          .vocab = 102400,
          .experts = 64,
          .experts_used = 6,
          .expert_ffn = 1408,
          .shared_experts = 2,
          .shared_ffn = 2816,
          .dense_lead = 1,
          .kv_lora = 512,
          .rope_dim = 64,
          .nope_dim = 128,
          .v_dim = 128};
  const Read read = ReadFile(Write(s));
  ASSERT_TRUE(read.arch.latent_attention_cache_per_head());
  EXPECT_EQ(KvCacheBytesPerToken(ToCoreArchitecture(read.arch), NumberFormat::kFp16, nullptr) *
                2048 / (1024.0 * 1024.0),
            540.0);

  // The memory answer says why its cache is this large, and what file
  // would cache the latent.
  InferenceMemoryInput input;
  input.architecture = ToCoreArchitecture(read.arch);
  input.parameters = static_cast<double>(read.file_total);
  input.workload.kv_cache_format = NumberFormat::kFp16;
  input.workload.context_length_tokens = 2048;
  absl::StatusOr<InferenceMemoryEstimate> estimate = EstimateInferenceMemory(input);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  bool warned = false;
  for (const std::string& w : estimate->warnings) {
    warned = warned || (absl::StrContains(w, "older layout") && absl::StrContains(w, "8.9x") &&
                        absl::StrContains(w, "#12801"));
  }
  EXPECT_TRUE(warned) << absl::StrJoin(estimate->warnings, "\n");
}

// A memory answer for a GGUF file sizes a sliding layer at its window, as
// vLLM and transformers keep it, and says what llama.cpp, which runs the
// file, keeps besides: n_swa x sequences + n_ubatch 512 cells, padded to
// 256 (src/llama-kv-cache-iswa.cpp). Gemma 3 1B's shape at 8,192 tokens: 512
// + 512 = 1,024 cells in each of its 22 sliding layers.
TEST(GgufFamiliesTest, AGgufMemoryAnswerSaysWhatLlamaCppKeepsInSlidingLayers) {
  const Shape s = Gemma3_1BShape();
  v1::EstimateInferenceMemoryRequest request;
  request.mutable_source()->mutable_gguf_header()->set_header(Write(s).Header());
  request.mutable_source()->mutable_gguf_header()->set_file_name("gemma-3-1b-it-Q4_K_M.gguf");
  request.mutable_workload()->set_context_length_tokens(8192);
  absl::Notification answered;
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> answer;
  AnswerInferenceMemory(testing::Catalog(), request,
                        [&](absl::StatusOr<v1::EstimateInferenceMemoryResponse> r) {
                          answer = std::move(r);
                          answered.Notify();
                        });
  ASSERT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_TRUE(answer.ok()) << answer.status();
  bool warned = false;
  for (const std::string& w : answer->warnings()) {
    warned = warned || (absl::StrContains(w, "keeps 1024 cells in each of the 22 sliding") &&
                        absl::StrContains(w, "not the window's 512"));
  }
  EXPECT_TRUE(warned) << absl::StrJoin(answer->warnings(), "\n");
}

// LFM2-1.2B as convert_hf_to_gguf.py writes it (LiquidAI/LFM2-1.2B-GGUF's
// metadata: head_count_kv [0,0,8,0,0,8,0,0,8,0,8,0,8,0,8,0], shortconv.l_cache
// 3, feed_forward_length 8192 already adjusted; the final norm stored as
// token_embd_norm): the tensors hold the checkpoint's 1,170,340,608
// parameters (llmfit parameters_raw), and the reader counts the same.
TEST(GgufFamiliesTest, Lfm2ShortConvLayersReadAsTheirCheckpoint) {
  const std::vector<int32_t> kv = {0, 0, 8, 0, 0, 8, 0, 0, 8, 0, 8, 0, 8, 0, 8, 0};
  const uint64_t h = 2048, ff = 8192, vocab = 65536, head_dim = 64;
  GgufHeaderWriter w;
  w.Str("general.architecture", "lfm2")
      .U32("lfm2.block_count", 16)
      .U32("lfm2.context_length", 128000)
      .U32("lfm2.embedding_length", static_cast<uint32_t>(h))
      .U32("lfm2.feed_forward_length", static_cast<uint32_t>(ff))
      .U32("lfm2.attention.head_count", 32)
      .I32Array("lfm2.attention.head_count_kv", kv)
      .U32("lfm2.shortconv.l_cache", 3)
      .Tokens(static_cast<int>(vocab));
  w.Tensor("token_embd.weight", {h, vocab});
  w.Tensor("token_embd_norm.weight", {h});
  for (size_t i = 0; i < kv.size(); ++i) {
    const std::string b = absl::StrCat("blk.", i, ".");
    w.Tensor(b + "attn_norm.weight", {h});
    if (kv[i] == 0) {
      w.Tensor(b + "shortconv.conv.weight", {3, h});
      w.Tensor(b + "shortconv.in_proj.weight", {h, 3 * h});
      w.Tensor(b + "shortconv.out_proj.weight", {h, h});
    } else {
      w.Tensor(b + "attn_q.weight", {h, h});
      w.Tensor(b + "attn_k.weight", {h, 8 * head_dim});
      w.Tensor(b + "attn_v.weight", {h, 8 * head_dim});
      w.Tensor(b + "attn_output.weight", {h, h});
      w.Tensor(b + "attn_q_norm.weight", {head_dim});
      w.Tensor(b + "attn_k_norm.weight", {head_dim});
    }
    w.Tensor(b + "ffn_norm.weight", {h});
    w.Tensor(b + "ffn_gate.weight", {h, ff});
    w.Tensor(b + "ffn_up.weight", {h, ff});
    w.Tensor(b + "ffn_down.weight", {ff, h});
  }
  const Read read = ReadFile(w);
  EXPECT_EQ(read.file_total, 1170340608u);
  EXPECT_EQ(read.counted, 1170340608.0);
  EXPECT_EQ(read.arch.model_type(), "lfm2");
  EXPECT_EQ(read.arch.recurrent_mixer(), "short_conv");
  EXPECT_EQ(read.arch.num_attention_layers(), 6);
  EXPECT_EQ(read.arch.num_recurrent_layers(), 10);
  EXPECT_EQ(read.arch.ssm_conv_kernel(), 3);
  EXPECT_EQ(read.arch.intermediate_size(), 8192);
  EXPECT_TRUE(read.arch.tie_word_embeddings());

  // Without shortconv.l_cache the convolution's width is unknown: refused
  // naming the key.
  GgufHeaderWriter missing;
  missing.Str("general.architecture", "lfm2")
      .U32("lfm2.block_count", 2)
      .U32("lfm2.embedding_length", 64)
      .U32("lfm2.feed_forward_length", 128)
      .U32("lfm2.attention.head_count", 4)
      .I32Array("lfm2.attention.head_count_kv", {0, 2})
      .Tokens(32);
  absl::Status refused = Refusal(missing);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "m.lfm2.shortconv.l_cache")) << refused;
}

// Models whose layer kinds differ in heads as llama.cpp's converter writes
// them: head_count and head_count_kv a number or one INT32 per block,
// sliding_window_pattern a flag per block (mimo2 INT32 0/1, step35 BOOL),
// every list block_count long with the multi-token-prediction blocks kept
// after the model's.
struct HeadsPerKindGguf {
  std::string arch;
  uint64_t layers, mtp, hidden, vocab, head_dim, value_dim, window;
  std::vector<bool> sliding;  // one per block, MTP blocks included
  uint64_t heads_sliding, heads_full, kv_sliding, kv_full;
  bool heads_per_block;   // head_count as a list (step35) or a number (mimo2)
  bool bool_pattern;      // BOOL flags (step35) or INT32 0/1 (mimo2)
  bool sinks_sliding;     // blk.N.attn_sinks in the sliding blocks (mimo2)
  bool qk_norm_and_gate;  // attn_q_norm, attn_k_norm and attn_gate (step35)
  uint64_t ffn, dense_lead, experts, experts_used, expert_ffn, shared_ffn;
  bool mtp_own_head;  // nextn.shared_head_head (step35) or the model's head (mimo2)
  // What the metadata lists when a test makes it disagree with the tensors.
  std::vector<int32_t> heads_listed = {};
  std::vector<bool> pattern_listed = {};
  bool mtp_blocks_only = false;  // convert_hf_to_gguf.py --mtp: a draft file
};

GgufHeaderWriter WriteHeadsPerKind(const HeadsPerKindGguf& g) {
  GgufHeaderWriter w;
  const std::string a = g.arch + ".";
  const uint64_t blocks = g.layers + g.mtp, H = g.hidden;
  auto heads = [&](uint64_t i) { return g.sliding[i] ? g.heads_sliding : g.heads_full; };
  auto kv = [&](uint64_t i) { return g.sliding[i] ? g.kv_sliding : g.kv_full; };
  std::vector<int32_t> head_list, kv_list, flags;
  for (uint64_t i = 0; i < blocks; ++i) {
    head_list.push_back(static_cast<int32_t>(heads(i)));
    kv_list.push_back(static_cast<int32_t>(kv(i)));
    flags.push_back(g.sliding[i] ? 1 : 0);
  }
  w.Str("general.architecture", g.arch)
      .U32(a + "block_count", static_cast<uint32_t>(blocks))
      .U32(a + "context_length", 262144)
      .U32(a + "embedding_length", static_cast<uint32_t>(H))
      .U32(a + "feed_forward_length", static_cast<uint32_t>(g.ffn))
      .I32Array(a + "attention.head_count_kv", kv_list)
      .U32(a + "attention.key_length", static_cast<uint32_t>(g.head_dim))
      .U32(a + "attention.value_length", static_cast<uint32_t>(g.value_dim))
      .U32(a + "attention.sliding_window", static_cast<uint32_t>(g.window))
      .U32(a + "expert_count", static_cast<uint32_t>(g.experts))
      .U32(a + "expert_used_count", static_cast<uint32_t>(g.experts_used))
      .U32(a + "expert_feed_forward_length", static_cast<uint32_t>(g.expert_ffn));
  if (!g.heads_listed.empty()) {
    w.I32Array(a + "attention.head_count", g.heads_listed);
  } else if (g.heads_per_block) {
    w.I32Array(a + "attention.head_count", head_list);
  } else {
    w.U32(a + "attention.head_count", static_cast<uint32_t>(g.heads_full));
  }
  if (g.bool_pattern) {
    w.BoolArray(a + "attention.sliding_window_pattern",
                g.pattern_listed.empty() ? g.sliding : g.pattern_listed);
  } else {
    w.I32Array(a + "attention.sliding_window_pattern", flags);
  }
  if (g.shared_ffn > 0) {
    w.U32(a + "expert_shared_feed_forward_length", static_cast<uint32_t>(g.shared_ffn));
  }
  if (g.mtp > 0) w.U32(a + "nextn_predict_layers", static_cast<uint32_t>(g.mtp));
  w.Tokens(static_cast<int>(g.vocab));
  w.Tensor("token_embd.weight", {H, g.vocab});
  for (uint64_t i = g.mtp_blocks_only ? g.layers : 0; i < blocks; ++i) {
    const std::string b = absl::StrCat("blk.", i, ".");
    auto t = [&](const std::string& name, const Dims& dims) { w.Tensor(b + name, dims); };
    t("attn_norm.weight", {H});
    AttentionTensors(t, H, heads(i) * g.head_dim, kv(i) * g.head_dim, kv(i) * g.value_dim,
                     heads(i) * g.value_dim);
    if (g.sinks_sliding && g.sliding[i]) t("attn_sinks.weight", {heads(i)});
    if (g.qk_norm_and_gate) {
      t("attn_q_norm.weight", {g.head_dim});
      t("attn_k_norm.weight", {g.head_dim});
      t("attn_gate.weight", {H, heads(i)});
    }
    t("ffn_norm.weight", {H});
    if (i >= g.dense_lead && i < g.layers) {
      RoutedExpertTensors(t, H, g.experts, g.expert_ffn);
      t("exp_probs_b.bias", {g.experts});
      if (g.shared_ffn > 0) SharedExpertTensors(t, H, g.shared_ffn);
    } else {
      GatedMlpTensors(t, H, g.ffn);
    }
    if (i < g.layers) continue;
    t("nextn.eh_proj.weight", {2 * H, H});
    t("nextn.enorm.weight", {H});
    t("nextn.hnorm.weight", {H});
    if (g.mtp_own_head) {
      t("nextn.shared_head_norm.weight", {H});
      t("nextn.shared_head_head.weight", {H, g.vocab});
    } else {
      t("layer_output_norm.weight", {H});
    }
  }
  w.Tensor("output_norm.weight", {H});
  w.Tensor("output.weight", {H, g.vocab});
  return w;
}

// XiaomiMiMo/MiMo-V2-Flash as llama.cpp's converter writes it (PR #18328;
// the MTP blocks since PR #22493): the layer kinds of its config.json
// (testing::kMimoV2FlashConfigJson), the three MTP blocks sliding.
HeadsPerKindGguf MimoV2FlashGguf(uint64_t mtp) {
  std::vector<bool> sliding;
  for (uint64_t i = 0; i < 48 + mtp; ++i) {
    sliding.push_back(i >= 48 || (i != 0 && (i + 1) % 6 != 0));
  }
  return {.arch = "mimo2",
          .layers = 48,
          .mtp = mtp,
          .hidden = 4096,
          .vocab = 152576,
          .head_dim = 192,
          .value_dim = 128,
          .window = 128,
          .sliding = sliding,
          .heads_sliding = 64,
          .heads_full = 64,
          .kv_sliding = 8,
          .kv_full = 4,
          .heads_per_block = false,
          .bool_pattern = false,
          .sinks_sliding = true,
          .qk_norm_and_gate = false,
          .ffn = 16384,
          .dense_lead = 1,
          .experts = 256,
          .experts_used = 8,
          .expert_ffn = 2048,
          .shared_ffn = 0,
          .mtp_own_head = false};
}

// stepfun-ai/Step-3.5-Flash as llama.cpp's converter writes it (PR #19283;
// the MTP blocks since PR #23274): testing::kStep35FlashConfigJson's layer
// kinds (every fourth layer full from layer 0), the MTP blocks sliding.
HeadsPerKindGguf Step35FlashGguf(uint64_t mtp) {
  std::vector<bool> sliding;
  for (uint64_t i = 0; i < 45 + mtp; ++i) sliding.push_back(i % 4 != 0);
  return {.arch = "step35",
          .layers = 45,
          .mtp = mtp,
          .hidden = 4096,
          .vocab = 128896,
          .head_dim = 128,
          .value_dim = 128,
          .window = 512,
          .sliding = sliding,
          .heads_sliding = 96,
          .heads_full = 64,
          .kv_sliding = 8,
          .kv_full = 8,
          .heads_per_block = true,
          .bool_pattern = true,
          .sinks_sliding = false,
          .qk_norm_and_gate = true,
          .ffn = 11264,
          .dense_lead = 3,
          .experts = 288,
          .experts_used = 8,
          .expert_ffn = 1280,
          .shared_ffn = 1280,
          .mtp_own_head = true};
}

// The GGUF reading and the config.json reading agree on everything that
// sizes the cache, layer kind by layer kind.
void ExpectSameKindsAsConfig(const common::v1::Architecture& gguf, const char* config_json) {
  absl::StatusOr<common::v1::Architecture> config = ArchitectureFromHfConfig(config_json);
  ASSERT_TRUE(config.ok()) << config.status();
  ExpectSameCacheShape(gguf, *config);
  EXPECT_EQ(gguf.num_attention_heads(), config->num_attention_heads());
  EXPECT_EQ(gguf.num_global_attention_heads(), config->num_global_attention_heads());
  EXPECT_EQ(gguf.num_global_key_value_heads(), config->num_global_key_value_heads());
  EXPECT_EQ(gguf.v_head_dim(), config->v_head_dim());
  EXPECT_EQ(gguf.attention_sinks(), config->attention_sinks());
  EXPECT_EQ(gguf.attention_sinks_sliding_only(), config->attention_sinks_sliding_only());
  EXPECT_EQ(gguf.attention_head_gate(), config->attention_head_gate());
  EXPECT_EQ(gguf.num_shared_experts(), config->num_shared_experts());
  EXPECT_EQ(gguf.router_bias(), config->router_bias());
  for (NumberFormat f : {NumberFormat::kBf16, NumberFormat::kFp8}) {
    EXPECT_EQ(KvCacheBytes(ToCoreArchitecture(gguf), f, 65536, 1),
              KvCacheBytes(ToCoreArchitecture(*config), f, 65536, 1));
  }
}

TEST(GgufFamiliesTest, MimoV2FlashReadsAsItsConfigWithOrWithoutItsMtpBlocks) {
  // Since b9055: the 48 layers and the 3 MTP blocks hold the checkpoint's
  // 309,766,601,088 parameters (llmfit's 309,785,318,400 less the FP8
  // checkpoint's 18,717,312 block scales, which a GGUF file does not keep;
  // AccuracyParametersTest.MiMoV2FlashIsCountedExactlyWithItsMtpLayersAndBlockScales).
  Read read = ReadFile(WriteHeadsPerKind(MimoV2FlashGguf(3)));
  EXPECT_EQ(read.file_total, 309766601088u);
  EXPECT_EQ(read.counted, 309766601088.0);
  EXPECT_EQ(read.arch.model_type(), "mimo_v2_flash");
  EXPECT_EQ(read.arch.num_layers(), 48);
  EXPECT_EQ(read.arch.num_mtp_layers(), 3);
  EXPECT_EQ(read.arch.num_sliding_window_layers(), 39);
  EXPECT_EQ(read.arch.num_key_value_heads(), 8);
  EXPECT_EQ(read.arch.num_global_key_value_heads(), 4);
  EXPECT_EQ(read.arch.head_dim(), 192);
  EXPECT_EQ(read.arch.v_head_dim(), 128);
  EXPECT_TRUE(read.arch.attention_sinks_sliding_only());
  EXPECT_TRUE(read.arch.mtp_shares_embeddings());
  // A GGUF file is not the FP8 checkpoint: its o_proj is not kept apart.
  EXPECT_FALSE(read.arch.checkpoint_attention_output_16bit());
  ExpectSameKindsAsConfig(read.arch, testing::kMimoV2FlashConfigJson);

  // Asked about by file: the cache as the config.json's (39 sliding layers of
  // 8 KV heads, 9 full of 4, keys 192 wide and values 128) and the MTP
  // blocks' bytes said to be in the weights.
  v1::EstimateInferenceMemoryRequest request;
  request.mutable_source()->mutable_gguf_header()->set_header(
      WriteHeadsPerKind(MimoV2FlashGguf(3)).Header());
  request.mutable_source()->mutable_gguf_header()->set_file_name("MiMo-V2-Flash-F32.gguf");
  request.mutable_workload()->set_context_length_tokens(65536);
  absl::Notification answered;
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> answer;
  AnswerInferenceMemory(testing::Catalog(), request,
                        [&](absl::StatusOr<v1::EstimateInferenceMemoryResponse> r) {
                          answer = std::move(r);
                          answered.Notify();
                        });
  ASSERT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_TRUE(answer.ok()) << answer.status();
  // F32 tensors (the fixture's): 4 bytes each, the three MTP blocks'
  // 987,820,224 included.
  std::map<std::string, const v1::EstimateLine*> lines;
  for (const v1::EstimateLine& line : answer->lines()) lines[line.component()] = &line;
  ASSERT_TRUE(lines.count("weights") && lines.count("kv_cache"));
  EXPECT_EQ(lines["weights"]->bytes(), 4 * 309766601088);
  EXPECT_TRUE(absl::StrContains(
      answer->source(),
      "its 3 multi-token-prediction blocks (3951280896 bytes, 3.95 GB) counted in the "
      "weights"))
      << answer->source();
  EXPECT_TRUE(absl::StrContains(lines["kv_cache"]->arithmetic(),
                                "39 sliding-window layers x 8 KV heads x (192 key + 128 value)"))
      << lines["kv_cache"]->arithmetic();

  // Before b9055 the converter dropped the MTP layers: the 48 alone, and
  // none counted beside them (not the config.json reader's default three).
  read = ReadFile(WriteHeadsPerKind(MimoV2FlashGguf(0)));
  EXPECT_EQ(read.file_total, 308778780864u);
  EXPECT_EQ(read.counted, 308778780864.0);
  EXPECT_EQ(read.arch.num_mtp_layers(), 0);
  EXPECT_EQ(read.arch.num_layers(), 48);
}

TEST(GgufFamiliesTest, Step35FlashReadsAsItsConfigWithOrWithoutItsMtpBlocks) {
  // Since b9480: the 45 layers and the 3 MTP blocks, each with its own
  // output head, hold the checkpoint's 199,384,301,376 (llmfit
  // parameters_raw; AccuracyParametersTest.Step35FlashIsCountedExactlyWithItsThreeMtpLayers).
  Read read = ReadFile(WriteHeadsPerKind(Step35FlashGguf(3)));
  EXPECT_EQ(read.file_total, 199384301376u);
  EXPECT_EQ(read.counted, 199384301376.0);
  EXPECT_EQ(read.arch.model_type(), "step3p5");
  EXPECT_EQ(read.arch.num_layers(), 45);
  EXPECT_EQ(read.arch.num_mtp_layers(), 3);
  EXPECT_TRUE(read.arch.mtp_own_output_head());
  EXPECT_FALSE(read.arch.mtp_shares_embeddings());
  EXPECT_EQ(read.arch.num_attention_heads(), 96);
  EXPECT_EQ(read.arch.num_global_attention_heads(), 64);
  EXPECT_EQ(read.arch.num_sliding_window_layers(), 33);
  EXPECT_EQ(read.arch.num_dense_layers(), 3);
  ExpectSameKindsAsConfig(read.arch, testing::kStep35FlashConfigJson);

  // b7964 to b9479: the 45 layers alone.
  read = ReadFile(WriteHeadsPerKind(Step35FlashGguf(0)));
  EXPECT_EQ(read.file_total, 196956130368u);
  EXPECT_EQ(read.counted, 196956130368.0);
  EXPECT_EQ(read.arch.num_mtp_layers(), 0);
}

// The reader's own refusals, each naming the key and the entry.
TEST(GgufFamiliesTest, PerKindListsThatDisagreeAreRefusedByEntry) {
  auto refusal = [](const HeadsPerKindGguf& g) { return Refusal(WriteHeadsPerKind(g)); };
  // A full-attention MTP block.
  HeadsPerKindGguf mimo = MimoV2FlashGguf(3);
  mimo.sliding[49] = false;
  absl::Status refused = refusal(mimo);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "m.mimo2.attention.sliding_window_pattern[49]"))
      << refused;
  // Two sliding layers with other query-head counts.
  HeadsPerKindGguf step = Step35FlashGguf(3);
  for (uint64_t i = 0; i < 48; ++i) {
    step.heads_listed.push_back(i % 4 == 0 ? 64 : (i == 6 ? 80 : 96));
  }
  refused = refusal(step);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "m.step35.attention.head_count[6]")) << refused;
  // A pattern shorter than block_count (llama.cpp's "wrong array length").
  step = Step35FlashGguf(3);
  step.pattern_listed = step.sliding;
  step.pattern_listed.pop_back();
  refused = refusal(step);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "m.step35.attention.sliding_window_pattern"))
      << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "one 0/1 flag per block, block_count (48)"))
      << refused;
  // The MTP blocks alone (a --mtp draft file): not the model.
  step = Step35FlashGguf(3);
  step.mtp_blocks_only = true;
  refused = refusal(step);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "m.step35.block_count")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "a draft file")) << refused;
}

// Qwen3-Next and Qwen3.5 as llama.cpp's converter writes them
// (conversion/qwen.py; the tensors src/models/qwen3next.cpp and
// qwen35moe.cpp create): full attention (a gated query twice as wide, QK
// norms) in every fourth block, a Gated DeltaNet in the others (attn_qkv,
// attn_gate, ssm_conv1d, ssm_dt.bias, ssm_a, ssm_ba, or Qwen3.5's ssm_beta
// and ssm_alpha, ssm_norm, ssm_out), Qwen3.5's multi-token-prediction
// layer as a full-attention block after the model's.
struct DeltaNetGguf {
  std::string arch;
  uint64_t layers, mtp, hidden, vocab, heads, kv_heads, key_heads, value_heads;
  uint64_t ffn, experts, experts_used, expert_ffn, shared_ffn;
  bool split_beta_alpha;      // Qwen3.5's ssm_beta and ssm_alpha (Qwen3-Next: one ssm_ba)
  uint64_t inner_listed = 0;  // ssm.inner_size when a test makes it disagree
};

GgufHeaderWriter WriteDeltaNet(const DeltaNetGguf& g) {
  constexpr uint64_t kHeadDim = 256, kLinearHeadDim = 128, kConv = 4;
  GgufHeaderWriter w;
  const std::string a = g.arch + ".";
  const uint64_t H = g.hidden, K = g.key_heads * kLinearHeadDim, V = g.value_heads * kLinearHeadDim;
  w.Str("general.architecture", g.arch)
      .U32(a + "block_count", static_cast<uint32_t>(g.layers + g.mtp))
      .U32(a + "context_length", 262144)
      .U32(a + "embedding_length", static_cast<uint32_t>(H))
      .U32(a + "attention.head_count", static_cast<uint32_t>(g.heads))
      .U32(a + "attention.head_count_kv", static_cast<uint32_t>(g.kv_heads))
      .U32(a + "attention.key_length", kHeadDim)
      .U32(a + "attention.value_length", kHeadDim)
      .U32(a + "ssm.conv_kernel", kConv)
      .U32(a + "ssm.state_size", kLinearHeadDim)
      .U32(a + "ssm.group_count", static_cast<uint32_t>(g.key_heads))
      .U32(a + "ssm.time_step_rank", static_cast<uint32_t>(g.value_heads))
      .U32(a + "ssm.inner_size", static_cast<uint32_t>(g.inner_listed > 0 ? g.inner_listed : V))
      .U32(a + "full_attention_interval", 4);
  // TextModel writes feed_forward_length from intermediate_size, which
  // Qwen3.5-MoE's config does not have.
  if (g.ffn > 0) w.U32(a + "feed_forward_length", static_cast<uint32_t>(g.ffn));
  if (g.experts > 0) {
    w.U32(a + "expert_count", static_cast<uint32_t>(g.experts))
        .U32(a + "expert_used_count", static_cast<uint32_t>(g.experts_used))
        .U32(a + "expert_feed_forward_length", static_cast<uint32_t>(g.expert_ffn))
        .U32(a + "expert_shared_feed_forward_length", static_cast<uint32_t>(g.shared_ffn));
  }
  if (g.mtp > 0) w.U32(a + "nextn_predict_layers", static_cast<uint32_t>(g.mtp));
  w.Tokens(static_cast<int>(g.vocab));
  w.Tensor("token_embd.weight", {H, g.vocab});
  for (uint64_t i = 0; i < g.layers + g.mtp; ++i) {
    const std::string b = absl::StrCat("blk.", i, ".");
    auto t = [&](const std::string& name, const Dims& dims) { w.Tensor(b + name, dims); };
    t("attn_norm.weight", {H});
    t("post_attention_norm.weight", {H});
    if (i >= g.layers || (i + 1) % 4 == 0) {
      AttentionTensors(t, H, 2 * g.heads * kHeadDim, g.kv_heads * kHeadDim, g.kv_heads * kHeadDim,
                       g.heads * kHeadDim);
      t("attn_q_norm.weight", {kHeadDim});
      t("attn_k_norm.weight", {kHeadDim});
    } else {
      t("attn_qkv.weight", {H, 2 * K + V});
      t("attn_gate.weight", {H, V});
      t("ssm_conv1d.weight", {kConv, 2 * K + V});
      t("ssm_dt.bias", {g.value_heads});
      t("ssm_a", {g.value_heads});
      if (g.split_beta_alpha) {
        t("ssm_beta.weight", {H, g.value_heads});
        t("ssm_alpha.weight", {H, g.value_heads});
      } else {
        t("ssm_ba.weight", {H, 2 * g.value_heads});
      }
      t("ssm_norm.weight", {kLinearHeadDim});
      t("ssm_out.weight", {V, H});
    }
    if (g.experts > 0) {
      RoutedExpertTensors(t, H, g.experts, g.expert_ffn);
      t("ffn_gate_inp_shexp.weight", {H});
      SharedExpertTensors(t, H, g.shared_ffn);
    } else {
      GatedMlpTensors(t, H, g.ffn);
    }
    if (i >= g.layers) {
      t("nextn.eh_proj.weight", {2 * H, H});
      t("nextn.enorm.weight", {H});
      t("nextn.hnorm.weight", {H});
      t("nextn.shared_head_norm.weight", {H});
    }
  }
  w.Tensor("output_norm.weight", {H});
  w.Tensor("output.weight", {H, g.vocab});
  return w;
}

TEST(GgufFamiliesTest, Qwen3NextAndQwen35ReadAsTheirConfigsWithTheirRecurrentLayers) {
  struct DeltaNetCase {
    const char* what;
    DeltaNetGguf gguf;
    uint64_t published;  // the file's: language model (+ its MTP layer)
    std::string config;  // the config.json's keys (its text_config for Qwen3.5)
  };
  // Qwen3.5's text_config keys (MultimodalConfigTest.Qwen35IsCountedExactly...).
  auto qwen35 = [](const char* type, const char* keys, int hidden) {
    return absl::StrCat(
        R"({"model_type": ")", type, R"(", "tie_word_embeddings": false, "vocab_size": 248320,)",
        R"( "head_dim": 256, "linear_num_key_heads": 16, "linear_key_head_dim": 128,)",
        R"( "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,)",
        R"( "full_attention_interval": 4, "mtp_num_hidden_layers": 1,)",
        R"( "mamba_ssm_dtype": "float32", "hidden_size": )", hidden, ", ", keys, "}");
  };
  const DeltaNetCase cases[] = {
      // The converter drops Qwen3-Next's MTP layer: the model's 79,674,391,296
      // (llmfit's 81,324,862,720 less the layer; docs/ACCURACY.md).
      {"Qwen/Qwen3-Next-80B-A3B-Instruct",
       {.arch = "qwen3next",
        .layers = 48,
        .mtp = 0,
        .hidden = 2048,
        .vocab = 151936,
        .heads = 16,
        .kv_heads = 2,
        .key_heads = 16,
        .value_heads = 32,
        .ffn = 5120,
        .experts = 512,
        .experts_used = 10,
        .expert_ffn = 512,
        .shared_ffn = 512,
        .split_beta_alpha = false},
       79674391296,
       testing::kQwen3Next80BConfigJson},
      // Qwen3.5-27B's language model 26,895,998,464 and its MTP layer
      // 424,699,392 (llmfit's 27,781,427,952 less the vision tower, which
      // an mmproj file holds).
      {"Qwen/Qwen3.5-27B",
       {.arch = "qwen35",
        .layers = 64,
        .mtp = 1,
        .hidden = 5120,
        .vocab = 248320,
        .heads = 24,
        .kv_heads = 4,
        .key_heads = 16,
        .value_heads = 48,
        .ffn = 17408,
        .experts = 0,
        .experts_used = 0,
        .expert_ffn = 0,
        .shared_ffn = 0,
        .split_beta_alpha = true},
       26895998464 + 424699392,
       qwen35("qwen3_5_text",
              R"("num_hidden_layers": 64, "intermediate_size": 17408, "num_attention_heads": 24,
                 "num_key_value_heads": 4, "linear_num_value_heads": 48)",
              5120)},
      // Qwen3.5-35B-A3B: 34,660,610,688 and 844,640,768.
      {"Qwen/Qwen3.5-35B-A3B",
       {.arch = "qwen35moe",
        .layers = 40,
        .mtp = 1,
        .hidden = 2048,
        .vocab = 248320,
        .heads = 16,
        .kv_heads = 2,
        .key_heads = 16,
        .value_heads = 32,
        .ffn = 0,
        .experts = 256,
        .experts_used = 8,
        .expert_ffn = 512,
        .shared_ffn = 512,
        .split_beta_alpha = true},
       34660610688 + 844640768,
       qwen35("qwen3_5_moe_text",
              R"("num_hidden_layers": 40, "num_experts": 256, "num_experts_per_tok": 8,
                 "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
                 "num_attention_heads": 16, "num_key_value_heads": 2,
                 "linear_num_value_heads": 32)",
              2048)},
  };
  for (const DeltaNetCase& c : cases) {
    SCOPED_TRACE(c.what);
    const Read read = ReadFile(WriteDeltaNet(c.gguf));
    EXPECT_EQ(read.file_total, c.published);
    EXPECT_EQ(read.counted, static_cast<double>(c.published));
    EXPECT_EQ(read.arch.recurrent_mixer(), "gated_deltanet");
    EXPECT_EQ(read.arch.num_mtp_layers(), static_cast<int32_t>(c.gguf.mtp));
    EXPECT_FALSE(read.arch.fused_qkv());      // attn_qkv is the DeltaNet's
    EXPECT_TRUE(read.arch.ssm_state_fp32());  // llama.cpp's F32 states
    absl::StatusOr<common::v1::Architecture> config = ArchitectureFromHfConfig(c.config);
    ASSERT_TRUE(config.ok()) << config.status();
    ExpectSameCacheShape(read.arch, *config);
    EXPECT_EQ(read.arch.num_attention_layers(), config->num_attention_layers());
    EXPECT_EQ(read.arch.num_recurrent_layers(), config->num_recurrent_layers());
    EXPECT_EQ(read.arch.ssm_num_heads(), config->ssm_num_heads());
    EXPECT_EQ(read.arch.ssm_num_groups(), config->ssm_num_groups());
    EXPECT_EQ(read.arch.ssm_inner_size(), config->ssm_inner_size());
    EXPECT_EQ(read.arch.ssm_state_size(), config->ssm_state_size());
    EXPECT_EQ(read.arch.ssm_conv_kernel(), config->ssm_conv_kernel());
    // The recurrent state as llama.cpp keeps it: the SSM state in F32.
    common::v1::Architecture fp32_config = *config;
    fp32_config.set_ssm_state_fp32(true);
    EXPECT_EQ(KvCacheBytes(ToCoreArchitecture(read.arch), NumberFormat::kBf16, 65536, 1),
              KvCacheBytes(ToCoreArchitecture(fp32_config), NumberFormat::kBf16, 65536, 1));
  }

  // ssm.inner_size that is not whole value heads: refused by name.
  DeltaNetGguf odd = cases[0].gguf;
  odd.inner_listed = 32 * 128 + 1;
  absl::Status refused = Refusal(WriteDeltaNet(odd));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "m.qwen3next.ssm.inner_size")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(),
                                "not a whole number of ssm.time_step_rank's 32 "
                                "value heads"))
      << refused;
}

// Granite 4.0 H and Nemotron-H as llama.cpp's converter writes them
// (conversion/granite.py GraniteHybridModel, conversion/nemotron.py
// NemotronHModel): head_count_kv per block with 0 for a Mamba-2 layer, whose
// tensors are ssm_in, ssm_conv1d (weight and bias), ssm_dt.bias, ssm_a,
// ssm_d, a grouped ssm_norm and ssm_out; Granite's blocks add an MoE block
// (or the shared MLP alone) after every mixer, Nemotron-H's are one mixer
// each, "-" blocks a relu2 MLP (up and down) with feed_forward_length per
// block.
struct Mamba2HybridGguf {
  std::string arch;
  // Per block: 'M' Mamba-2, '*' attention, '-' MLP, 'E' MoE (Nemotron-H);
  // 'B' both mixers side by side and a gated MLP (Falcon-H1).
  std::string kinds;
  uint64_t hidden, vocab, heads, kv_heads, head_dim;
  uint64_t ssm_heads, ssm_head_dim, groups, state;
  uint64_t ffn, experts, experts_used, shared_ffn;  // Granite: experts' and shared MLP's widths
  bool tied;
};

GgufHeaderWriter WriteMamba2Hybrid(const Mamba2HybridGguf& g) {
  GgufHeaderWriter w;
  const std::string a = g.arch + ".";
  const uint64_t H = g.hidden, inner = g.ssm_heads * g.ssm_head_dim;
  const uint64_t conv_dim = inner + 2 * g.groups * g.state;
  const bool granite = g.arch == "granitehybrid";
  const bool falcon = g.arch == "falcon-h1";  // every block 'B': Mamba-2 and attention
  std::vector<int32_t> kv, ffn;
  for (char kind : g.kinds) {
    kv.push_back(kind == '*' ? static_cast<int32_t>(g.kv_heads) : 0);
    ffn.push_back(kind == '-' || kind == 'E' ? static_cast<int32_t>(g.ffn) : 0);
  }
  w.Str("general.architecture", g.arch)
      .U32(a + "block_count", static_cast<uint32_t>(g.kinds.size()))
      .U32(a + "context_length", 131072)
      .U32(a + "embedding_length", static_cast<uint32_t>(H))
      .U32(a + "attention.head_count", static_cast<uint32_t>(g.heads))
      .U32(a + "attention.key_length", static_cast<uint32_t>(g.head_dim))
      .U32(a + "attention.value_length", static_cast<uint32_t>(g.head_dim))
      .U32(a + "ssm.conv_kernel", 4)
      .U32(a + "ssm.inner_size", static_cast<uint32_t>(inner))
      .U32(a + "ssm.state_size", static_cast<uint32_t>(g.state))
      .U32(a + "ssm.time_step_rank", static_cast<uint32_t>(g.ssm_heads))
      .U32(a + "ssm.group_count", static_cast<uint32_t>(g.groups));
  if (falcon) {
    w.U32(a + "attention.head_count_kv", static_cast<uint32_t>(g.kv_heads))
        .U32(a + "feed_forward_length", static_cast<uint32_t>(g.ffn));
  } else {
    w.I32Array(a + "attention.head_count_kv", kv);
  }
  if (falcon) {
  } else if (granite) {
    w.U32(a + "feed_forward_length", static_cast<uint32_t>(g.ffn))
        .U32(a + "expert_shared_feed_forward_length", static_cast<uint32_t>(g.shared_ffn));
    if (g.experts > 0) {
      w.U32(a + "expert_count", static_cast<uint32_t>(g.experts))
          .U32(a + "expert_used_count", static_cast<uint32_t>(g.experts_used));
    }
  } else {
    w.I32Array(a + "feed_forward_length", ffn);
    if (g.experts > 0) {
      w.U32(a + "expert_count", static_cast<uint32_t>(g.experts))
          .U32(a + "expert_used_count", static_cast<uint32_t>(g.experts_used))
          .U32(a + "expert_feed_forward_length", static_cast<uint32_t>(g.ffn))
          .U32(a + "expert_shared_feed_forward_length", static_cast<uint32_t>(g.shared_ffn))
          .U32(a + "expert_shared_count", 1);
    }
  }
  w.Tokens(static_cast<int>(g.vocab));
  w.Tensor("token_embd.weight", {H, g.vocab});
  for (size_t i = 0; i < g.kinds.size(); ++i) {
    const std::string b = absl::StrCat("blk.", i, ".");
    auto t = [&](const std::string& name, const Dims& dims) { w.Tensor(b + name, dims); };
    t("attn_norm.weight", {H});
    const char kind = g.kinds[i];
    if (kind == 'M' || kind == 'B') {
      t("ssm_in.weight", {H, 2 * inner + 2 * g.groups * g.state + g.ssm_heads});
      t("ssm_conv1d.weight", {4, conv_dim});
      t("ssm_conv1d.bias", {conv_dim});
      t("ssm_dt.bias", {g.ssm_heads});
      t("ssm_a", {1, g.ssm_heads});
      t("ssm_d", {1, g.ssm_heads});
      // The gated norm (Falcon-H1's only with mamba_rms_norm, off here).
      if (kind == 'M') t("ssm_norm.weight", {inner / g.groups, g.groups});
      t("ssm_out.weight", {inner, H});
    }
    if (kind == 'B') {
      AttentionTensors(t, H, g.heads * g.head_dim, g.kv_heads * g.head_dim, g.kv_heads * g.head_dim,
                       g.heads * g.head_dim);
      t("ffn_norm.weight", {H});
      GatedMlpTensors(t, H, g.ffn);
      continue;
    }
    if (kind == '*') {
      AttentionTensors(t, H, g.heads * g.head_dim, g.kv_heads * g.head_dim, g.kv_heads * g.head_dim,
                       g.heads * g.head_dim);
    } else if (kind == 'E') {  // relu2 experts: up and down
      t("ffn_gate_inp.weight", {H, g.experts});
      t("exp_probs_b.bias", {g.experts});
      t("ffn_up_exps.weight", {H, g.ffn, g.experts});
      t("ffn_down_exps.weight", {g.ffn, H, g.experts});
      t("ffn_up_shexp.weight", {H, g.shared_ffn});
      t("ffn_down_shexp.weight", {g.shared_ffn, H});
    } else if (kind == '-') {
      t("ffn_up.weight", {H, g.ffn});
      t("ffn_down.weight", {g.ffn, H});
    }
    if (!granite) continue;
    t("ffn_norm.weight", {H});
    if (g.experts > 0) {
      RoutedExpertTensors(t, H, g.experts, g.ffn);
      SharedExpertTensors(t, H, g.shared_ffn);
    } else {
      GatedMlpTensors(t, H, g.shared_ffn);
    }
  }
  w.Tensor("output_norm.weight", {H});
  if (!g.tied) w.Tensor("output.weight", {H, g.vocab});
  return w;
}

// Granite 4.0 H Tiny and Micro and Nemotron Nano 9B v2 from their GGUF
// files: the published counts HybridModelsTest holds their config.json
// counts to (Granite4HybridIsCountedExactly,
// Granite4MicroAndSmallAreCountedExactly, NemotronNano2IsCountedExactly).
TEST(GgufFamiliesTest, Mamba2HybridsReadAsTheirConfigsWithTheirMambaLayers) {
  struct Mamba2Case {
    const char* what;
    Mamba2HybridGguf gguf;
    uint64_t published;
    int mamba_layers, attention_layers;
  };
  auto granite_kinds = [](std::vector<int> attention) {
    std::string kinds(40, 'M');
    for (int i : attention) kinds[i] = '*';
    return kinds;
  };
  const std::string nemotron_kinds = "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-";
  const Mamba2Case cases[] = {
      {"ibm-granite/granite-4.0-h-tiny",
       {.arch = "granitehybrid",
        .kinds = granite_kinds({5, 15, 25, 35}),
        .hidden = 1536,
        .vocab = 100352,
        .heads = 12,
        .kv_heads = 4,
        .head_dim = 128,
        .ssm_heads = 48,
        .ssm_head_dim = 64,
        .groups = 1,
        .state = 128,
        .ffn = 512,
        .experts = 64,
        .experts_used = 6,
        .shared_ffn = 1024,
        .tied = true},
       6939037248,
       36,
       4},
      {"ibm-granite/granite-4.0-h-micro",
       {.arch = "granitehybrid",
        .kinds = granite_kinds({5, 15, 25, 35}),
        .hidden = 2048,
        .vocab = 100352,
        .heads = 32,
        .kv_heads = 8,
        .head_dim = 64,
        .ssm_heads = 64,
        .ssm_head_dim = 64,
        .groups = 1,
        .state = 128,
        .ffn = 8192,
        .experts = 0,
        .experts_used = 0,
        .shared_ffn = 8192,
        .tied = true},
       3191396096,
       36,
       4},
      {"nvidia/NVIDIA-Nemotron-Nano-9B-v2",
       {.arch = "nemotron_h",
        .kinds = nemotron_kinds,
        .hidden = 4480,
        .vocab = 131072,
        .heads = 40,
        .kv_heads = 8,
        .head_dim = 128,
        .ssm_heads = 128,
        .ssm_head_dim = 80,
        .groups = 8,
        .state = 128,
        .ffn = 15680,
        .experts = 0,
        .experts_used = 0,
        .shared_ffn = 0,
        .tied = false},
       8888227328,
       27,
       4},
      // Nemotron 3 Nano (nemotron_h_moe): llama.cpp requires each router's
      // exp_probs_b (e_score_correction_bias), 23 x 128 elements beyond the
      // published BF16 total (31,577,937,344), which the config.json reading
      // matches with no router bias (NemotronNano3MixtureOfExpertsIsCountedExactly):
      // the file's count includes them. Which of the two the checkpoint
      // stores was not checked against its tensor list.
      {"nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B",
       {.arch = "nemotron_h_moe",
        .kinds = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
        .hidden = 2688,
        .vocab = 131072,
        .heads = 32,
        .kv_heads = 2,
        .head_dim = 128,
        .ssm_heads = 64,
        .ssm_head_dim = 64,
        .groups = 8,
        .state = 128,
        .ffn = 1856,
        .experts = 128,
        .experts_used = 6,
        .shared_ffn = 3712,
        .tied = false},
       31577937344 + 23 * 128,
       23,
       6},
      // Falcon-H1 0.5B and Tiny 90M (FalconH1IsCountedExactly,
      // FalconH1TinyIsCountedExactlyWithTiedEmbeddings): every block both.
      {"tiiuae/Falcon-H1-0.5B-Base",
       {.arch = "falcon-h1",
        .kinds = std::string(36, 'B'),
        .hidden = 1024,
        .vocab = 32784,
        .heads = 8,
        .kv_heads = 2,
        .head_dim = 64,
        .ssm_heads = 24,
        .ssm_head_dim = 64,
        .groups = 1,
        .state = 128,
        .ffn = 2048,
        .experts = 0,
        .experts_used = 0,
        .shared_ffn = 0,
        .tied = false},
       521411104,
       36,
       36},
      {"tiiuae/Falcon-H1-Tiny-90M-Instruct",
       {.arch = "falcon-h1",
        .kinds = std::string(24, 'B'),
        .hidden = 512,
        .vocab = 32768,
        .heads = 8,
        .kv_heads = 2,
        .head_dim = 64,
        .ssm_heads = 24,
        .ssm_head_dim = 32,
        .groups = 1,
        .state = 64,
        .ffn = 768,
        .experts = 0,
        .experts_used = 0,
        .shared_ffn = 0,
        .tied = true},
       91131072,
       24,
       24},
      // mistralai/Mamba-Codestral-7B-v0.1 (mamba2; MambaCodestralIsCountedExactly):
      // Mamba-2 layers alone, "7,285,403,648 parameters" (mistral.ai).
      {"mistralai/Mamba-Codestral-7B-v0.1",
       {.arch = "mamba2",
        .kinds = std::string(64, 'M'),
        .hidden = 4096,
        .vocab = 32768,
        .heads = 0,
        .kv_heads = 0,
        .head_dim = 0,
        .ssm_heads = 128,
        .ssm_head_dim = 64,
        .groups = 8,
        .state = 128,
        .ffn = 0,
        .experts = 0,
        .experts_used = 0,
        .shared_ffn = 0,
        .tied = false},
       7285403648,
       64,
       0},

  };
  for (const Mamba2Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Read read = ReadFile(WriteMamba2Hybrid(c.gguf));
    EXPECT_EQ(read.file_total, c.published);
    EXPECT_EQ(read.counted, static_cast<double>(c.published));
    EXPECT_EQ(read.arch.recurrent_mixer(), "mamba2");
    EXPECT_EQ(read.arch.num_recurrent_layers(), c.mamba_layers);
    EXPECT_EQ(read.arch.num_attention_layers(), c.attention_layers);
    EXPECT_EQ(read.arch.num_key_value_heads(), static_cast<int32_t>(c.gguf.kv_heads));
    EXPECT_EQ(read.arch.ssm_num_heads(), static_cast<int32_t>(c.gguf.ssm_heads));
    EXPECT_EQ(read.arch.ssm_inner_size(),
              static_cast<int64_t>(c.gguf.ssm_heads * c.gguf.ssm_head_dim));
    EXPECT_TRUE(read.arch.ssm_state_fp32());
    // The KV cache is the attention layers' alone: 2 x layers x KV heads x
    // head width x 2 bytes a token in bf16.
    EXPECT_EQ(KvCacheBytesPerToken(ToCoreArchitecture(read.arch), NumberFormat::kBf16, nullptr),
              2.0 * c.attention_layers * c.gguf.kv_heads * c.gguf.head_dim * 2);
  }
  // Nemotron-H without feed_forward_length per block: its layer kinds are
  // unknown, refused naming the key.
  GgufHeaderWriter w;
  w.Str("general.architecture", "nemotron_h")
      .U32("nemotron_h.block_count", 2)
      .U32("nemotron_h.embedding_length", 64)
      .U32("nemotron_h.feed_forward_length", 128)
      .U32("nemotron_h.attention.head_count", 4)
      .I32Array("nemotron_h.attention.head_count_kv", {0, 2})
      .U32("nemotron_h.ssm.conv_kernel", 4)
      .U32("nemotron_h.ssm.inner_size", 128)
      .U32("nemotron_h.ssm.state_size", 16)
      .U32("nemotron_h.ssm.time_step_rank", 2)
      .U32("nemotron_h.ssm.group_count", 1)
      .Tokens(32);
  absl::Status refused = Refusal(w);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "m.nemotron_h.feed_forward_length")) << refused;
}

// Jamba v0.1 as llama.cpp's converter writes it (conversion/jamba.py; the
// tensors src/models/jamba.cpp creates): head_count_kv per block, 8 in the
// attention blocks (4, 12, 20, 28) and 0 in the Mamba-1 ones, whose mixer
// has dt, B and C norms; 16 experts in the odd blocks. The reader must find
// the periods and offsets of its config.json (HybridModelsTest's
// kJambaV01), and the count the config.json reading gives, 51,570,323,328.
GgufHeaderWriter WriteJambaV01(const std::vector<int>& attention_blocks) {
  constexpr uint64_t H = 4096, L = 32, kInner = 8192, kState = 16, kDt = 256, kVocab = 65536;
  constexpr uint64_t kFfn = 14336, kExperts = 16;
  std::vector<int32_t> kv(L, 0);
  for (int i : attention_blocks) kv[i] = 8;
  GgufHeaderWriter w;
  w.Str("general.architecture", "jamba")
      .U32("jamba.block_count", L)
      .U32("jamba.context_length", 262144)
      .U32("jamba.embedding_length", H)
      .U32("jamba.feed_forward_length", kFfn)
      .U32("jamba.attention.head_count", 32)
      .I32Array("jamba.attention.head_count_kv", kv)
      .U32("jamba.ssm.conv_kernel", 4)
      .U32("jamba.ssm.inner_size", kInner)
      .U32("jamba.ssm.state_size", kState)
      .U32("jamba.ssm.time_step_rank", kDt)
      .U32("jamba.expert_count", kExperts)
      .U32("jamba.expert_used_count", 2)
      .Tokens(static_cast<int>(kVocab));
  w.Tensor("token_embd.weight", {H, kVocab});
  for (uint64_t i = 0; i < L; ++i) {
    const std::string b = absl::StrCat("blk.", i, ".");
    auto t = [&](const std::string& name, const Dims& dims) { w.Tensor(b + name, dims); };
    t("attn_norm.weight", {H});
    if (kv[i] == 0) {
      t("ssm_in.weight", {H, 2 * kInner});
      t("ssm_conv1d.weight", {4, kInner});
      t("ssm_conv1d.bias", {kInner});
      t("ssm_x.weight", {kInner, kDt + 2 * kState});
      t("ssm_dt_norm.weight", {kDt});
      t("ssm_dt.weight", {kDt, kInner});
      t("ssm_dt.bias", {kInner});
      t("ssm_b_norm.weight", {kState});
      t("ssm_c_norm.weight", {kState});
      t("ssm_a", {kState, kInner});
      t("ssm_d", {kInner});
      t("ssm_out.weight", {kInner, H});
    } else {
      AttentionTensors(t, H, H, 8 * 128, 8 * 128, H);
    }
    t("ffn_norm.weight", {H});
    if (i % 2 == 1) {
      RoutedExpertTensors(t, H, kExperts, kFfn);
    } else {
      GatedMlpTensors(t, H, kFfn);
    }
  }
  w.Tensor("output_norm.weight", {H});
  w.Tensor("output.weight", {H, kVocab});
  return w;
}

TEST(GgufFamiliesTest, JambaReadsItsLayerPeriodsBackFromTheBlocks) {
  const Read read = ReadFile(WriteJambaV01({4, 12, 20, 28}));
  EXPECT_EQ(read.file_total, 51570323328u);
  EXPECT_EQ(read.counted, 51570323328.0);
  EXPECT_EQ(read.arch.recurrent_mixer(), "mamba");
  EXPECT_EQ(read.arch.num_attention_layers(), 4);
  EXPECT_EQ(read.arch.num_dense_layers(), 16);
  EXPECT_EQ(read.arch.ssm_dt_rank(), 256);
  EXPECT_TRUE(read.arch.ssm_state_fp32());
  // The paper's 4 GiB of KV cache at 256K tokens in 16 bits (Table 1).
  EXPECT_EQ(KvCacheBytes(ToCoreArchitecture(read.arch), NumberFormat::kBf16, 262144, 1),
            4294967296.0);
  // Attention blocks at no one period: refused naming the key.
  absl::Status refused = Refusal(WriteJambaV01({4, 12, 21}));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "m.jamba.attention.head_count_kv")) << refused;
}

TEST(GgufFamiliesTest, HybridsAndUnknownFamiliesAreRefusedByName) {
  // A family not read, named beside the ones that are.
  GgufHeaderWriter w;
  w.Str("general.architecture", "plamo2")
      .U32("plamo2.block_count", 4)
      .I32Array("plamo2.attention.head_count_kv", {0, 0, 2, 0});
  absl::Status unknown = Refusal(w);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(unknown.message(), "plamo2")) << unknown;
  EXPECT_TRUE(absl::StrContains(unknown.message(), "glm4moe")) << unknown;

  // A per-layer head_count_kv with zeros: recurrent layers.
  GgufHeaderWriter zeros;
  zeros.Str("general.architecture", "llama")
      .U32("llama.block_count", 4)
      .U32("llama.embedding_length", 64)
      .U32("llama.feed_forward_length", 128)
      .U32("llama.attention.head_count", 4)
      .I32Array("llama.attention.head_count_kv", {2, 0, 2, 0})
      .Tokens(32);
  absl::Status recurrent = Refusal(zeros);
  EXPECT_EQ(recurrent.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(recurrent.ToString(), "m.llama.attention.head_count_kv"))
      << recurrent;

  // Keys and values of different widths are not sized as one.
  GgufHeaderWriter uneven;
  uneven.Str("general.architecture", "qwen3")
      .U32("qwen3.block_count", 2)
      .U32("qwen3.embedding_length", 64)
      .U32("qwen3.feed_forward_length", 128)
      .U32("qwen3.attention.head_count", 4)
      .U32("qwen3.attention.head_count_kv", 2)
      .U32("qwen3.attention.key_length", 32)
      .U32("qwen3.attention.value_length", 64)
      .Tokens(32);
  absl::Status widths = Refusal(uneven);
  EXPECT_EQ(widths.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(widths.ToString(), "m.qwen3.attention.value_length")) << widths;
}

// Llama-3.3-Nemotron-Super-49B as llama.cpp's converter writes it
// (conversion/deci.py DeciModel; src/models/deci.cpp's tensors): head_count,
// head_count_kv and feed_forward_length one per block from block_configs (0
// where the attention or the FFN is a no-op; the ollama/ollama issue #11471
// load log shows "deci.attention.head_count_kv arr[i32,80] = [8, 8, 8, 8,
// 8, 8, 0, 0, 8, ...]" and "deci.feed_forward_length arr[i32,80] = [14336,
// 28672, ...]"), key_length 128, and rope_freqs (64 F32 elements: llama3's
// rope scaling). A block without attention has no attn_norm; one without an
// FFN no ffn_norm. `linear_block` >= 0 writes Nemotron-51B's linear
// attention there (heads without KV heads).
GgufHeaderWriter WriteDeci(const std::string& config_json, int linear_block = -1) {
  google::protobuf::Struct config;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(config_json, &config).ok());
  const auto& f = config.fields();
  const uint64_t H = static_cast<uint64_t>(f.at("hidden_size").number_value());
  const int heads = static_cast<int>(f.at("num_attention_heads").number_value());
  const uint64_t vocab = static_cast<uint64_t>(f.at("vocab_size").number_value());
  std::vector<int32_t> head_count, kv_count, widths;
  for (const auto& block : f.at("block_configs").list_value().values()) {
    const auto& attention = block.struct_value().fields().at("attention").struct_value().fields();
    const auto& ffn = block.struct_value().fields().at("ffn").struct_value().fields();
    const bool attends = !attention.at("no_op").bool_value();
    head_count.push_back(attends ? heads : 0);
    kv_count.push_back(
        attends ? heads / static_cast<int>(attention.at("n_heads_in_group").number_value()) : 0);
    int32_t width = 0;
    if (!ffn.at("no_op").bool_value()) {
      width = static_cast<int32_t>(2 * ffn.at("ffn_mult").number_value() * H / 3);
      if (width % 256 != 0) width += 256 - width % 256;
    }
    widths.push_back(width);
  }
  if (linear_block >= 0) kv_count[linear_block] = 0, head_count[linear_block] = heads;
  const uint64_t L = head_count.size(), head_dim = H / heads;
  GgufHeaderWriter w;
  w.Str("general.architecture", "deci")
      .U32("deci.block_count", static_cast<uint32_t>(L))
      .U32("deci.context_length", 131072)
      .U32("deci.embedding_length", static_cast<uint32_t>(H))
      .I32Array("deci.attention.head_count", head_count)
      .I32Array("deci.attention.head_count_kv", kv_count)
      .I32Array("deci.feed_forward_length", widths)
      .U32("deci.attention.key_length", static_cast<uint32_t>(head_dim))
      .U32("deci.attention.value_length", static_cast<uint32_t>(head_dim))
      .U32("deci.rope.dimension_count", static_cast<uint32_t>(head_dim))
      .Tokens(static_cast<int>(vocab));
  w.Tensor("token_embd.weight", {H, vocab});
  w.Tensor("rope_freqs.weight", {head_dim / 2});
  for (uint64_t i = 0; i < L; ++i) {
    const std::string b = absl::StrCat("blk.", i, ".");
    auto t = [&](const std::string& name, const Dims& dims) { w.Tensor(b + name, dims); };
    if (head_count[i] > 0) {
      t("attn_norm.weight", {H});
      if (kv_count[i] > 0) {
        AttentionTensors(t, H, H, kv_count[i] * head_dim, kv_count[i] * head_dim, H);
      } else {
        t("attn_output.weight", {H, H});
      }
    }
    if (widths[i] > 0) {
      t("ffn_norm.weight", {H});
      GatedMlpTensors(t, H, static_cast<uint64_t>(widths[i]));
    }
  }
  w.Tensor("output_norm.weight", {H});
  w.Tensor("output.weight", {H, vocab});
  return w;
}

// The Super's file: 49,867,145,280 elements (llama-bench's "49,867,145,280
// parameters" of bartowski's Q4_K_M: the checkpoint's 49,867,145,216 and
// rope_freqs' 64), read back as its block_configs: the same count, widths,
// attention layers and KV cache as the config.json reading.
TEST(GgufFamiliesTest, DeciReadsNemotronNasBlocksBackFromThePerBlockLists) {
  const Read read = ReadFile(WriteDeci(testing::NemotronSuper49BConfigJson()));
  EXPECT_EQ(read.file_total, 49867145280u);
  EXPECT_EQ(read.counted, 49867145216.0);
  absl::StatusOr<common::v1::Architecture> config =
      ArchitectureFromHfConfig(testing::NemotronSuper49BConfigJson());
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(read.arch.model_type(), "nemotron-nas");
  EXPECT_EQ(read.arch.num_attention_layers(), 49);
  EXPECT_EQ(read.arch.intermediate_size(), 28672);
  ASSERT_EQ(read.arch.layer_intermediate_sizes_size(), 80);
  for (int i = 0; i < 80; ++i) {
    EXPECT_EQ(read.arch.layer_intermediate_sizes(i), config->layer_intermediate_sizes(i)) << i;
  }
  EXPECT_EQ(KvCacheBytes(ToCoreArchitecture(read.arch), NumberFormat::kBf16, 65536, 1),
            KvCacheBytes(ToCoreArchitecture(*config), NumberFormat::kBf16, 65536, 1));
  // The Ultra's, with its empty blocks.
  const Read ultra = ReadFile(WriteDeci(testing::NemotronUltra253BConfigJson()));
  EXPECT_EQ(ultra.counted, 253401268224.0);
  EXPECT_EQ(ultra.file_total, 253401268224u + 64);
  // Nemotron-51B's linear attention (heads, no KV heads): refused by entry.
  absl::Status refused = Refusal(WriteDeci(testing::NemotronSuper49BConfigJson(), 6));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "m.deci.attention.head_count_kv[6]"))
      << refused;
  // DeciLM-7B's layout: one head count, KV heads per layer.
  GgufHeaderWriter decilm;
  decilm.Str("general.architecture", "deci")
      .U32("deci.block_count", 4)
      .U32("deci.embedding_length", 64)
      .U32("deci.feed_forward_length", 128)
      .U32("deci.attention.head_count", 4)
      .I32Array("deci.attention.head_count_kv", {4, 2, 2, 1})
      .Tokens(32);
  refused = Refusal(decilm);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "m.deci.attention.head_count")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "DeciLM-7B")) << refused;
}

// Kimi-Linear-48B-A3B as llama.cpp's converter writes it
// (conversion/kimi_linear.py; the tensors src/models/kimi-linear.cpp
// creates): head_count_kv 1 in the 7 latent-attention blocks (MLA as
// multi-query attention: attn_k_b and attn_v_b, key_length_mla 192,
// value_length_mla 128) and 0 in the 20 Kimi Delta Attention blocks
// (q/k/v with their depthwise convs, the gates' low-rank halves, beta,
// A_log, dt_bias and the output norm), kda.head_dim 128, ssm.conv_kernel 4;
// a dense first block, then 256 experts of 1024 with a shared one and the
// router bias (exp_probs_b). `kv_layers` overrides head_count_kv's length.
GgufHeaderWriter WriteKimiLinear(int kv_listed = 27) {
  constexpr uint64_t H = 2304, L = 27, kVocab = 163840, kHeads = 32, kKda = 128, kConv = 4;
  constexpr uint64_t kLora = 512, kNope = 128, kRope = 64, kValue = 128;
  constexpr uint64_t kFfn = 9216, kExperts = 256, kExpertFfn = 1024;
  const std::vector<int> full = {4, 8, 12, 16, 20, 24, 27};  // 1-based
  std::vector<int32_t> kv;
  for (uint64_t i = 0; i < static_cast<uint64_t>(kv_listed); ++i) {
    kv.push_back(std::find(full.begin(), full.end(), static_cast<int>(i + 1)) != full.end());
  }
  GgufHeaderWriter w;
  w.Str("general.architecture", "kimi-linear")
      .U32("kimi-linear.block_count", L)
      .U32("kimi-linear.context_length", 1048576)
      .U32("kimi-linear.embedding_length", H)
      .U32("kimi-linear.feed_forward_length", kFfn)
      .U32("kimi-linear.attention.head_count", kHeads)
      .I32Array("kimi-linear.attention.head_count_kv", kv)
      .U32("kimi-linear.ssm.conv_kernel", kConv)
      .U32("kimi-linear.kda.head_dim", kKda)
      .U32("kimi-linear.attention.kv_lora_rank", kLora)
      .U32("kimi-linear.rope.dimension_count", kRope)
      .U32("kimi-linear.attention.key_length", kLora + kRope)
      .U32("kimi-linear.attention.key_length_mla", kNope + kRope)
      .U32("kimi-linear.attention.value_length_mla", kValue)
      .U32("kimi-linear.expert_count", kExperts)
      .U32("kimi-linear.expert_used_count", 8)
      .U32("kimi-linear.expert_feed_forward_length", kExpertFfn)
      .U32("kimi-linear.expert_shared_count", 1)
      .U32("kimi-linear.leading_dense_block_count", 1)
      .Tokens(static_cast<int>(kVocab));
  w.Tensor("token_embd.weight", {H, kVocab});
  for (uint64_t i = 0; i < L; ++i) {
    const std::string b = absl::StrCat("blk.", i, ".");
    auto t = [&](const std::string& name, const Dims& dims) { w.Tensor(b + name, dims); };
    t("attn_norm.weight", {H});
    const bool latent = std::find(full.begin(), full.end(), static_cast<int>(i + 1)) != full.end();
    if (!latent) {
      for (const char* conv : {"ssm_conv1d_q.weight", "ssm_conv1d_k.weight", "ssm_conv1d_v.weight"})
        t(conv, {kConv, 1, kKda * kHeads});
      AttentionTensors(t, H, kKda * kHeads, kKda * kHeads, kKda * kHeads, kKda * kHeads);
      t("ssm_f_a.weight", {H, kKda});
      t("ssm_f_b.weight", {kKda, kKda * kHeads});
      t("ssm_beta.weight", {H, kHeads});
      t("ssm_a", {1, kHeads});
      t("ssm_dt.bias", {kKda * kHeads});
      t("ssm_g_a.weight", {H, kKda});
      t("ssm_g_b.weight", {kKda, kKda * kHeads});
      t("ssm_norm.weight", {kKda});
    } else {
      t("attn_kv_a_norm.weight", {kLora});
      t("attn_q.weight", {H, kHeads * (kNope + kRope)});
      t("attn_kv_a_mqa.weight", {H, kLora + kRope});
      t("attn_k_b.weight", {kNope, kLora, kHeads});
      t("attn_v_b.weight", {kLora, kValue, kHeads});
      t("attn_output.weight", {kHeads * kValue, H});
    }
    t("ffn_norm.weight", {H});
    if (i == 0) {
      GatedMlpTensors(t, H, kFfn);
    } else {
      RoutedExpertTensors(t, H, kExperts, kExpertFfn);
      SharedExpertTensors(t, H, kExpertFfn);
      t("exp_probs_b.bias", {kExperts});
    }
  }
  w.Tensor("output_norm.weight", {H});
  w.Tensor("output.weight", {H, kVocab});
  return w;
}

// The file holds the config.json reading's 49,122,681,728
// (HybridModelsTest.KimiLinearIsCountedExactly: the checkpoint's tensor
// inventory) and is read as that config: 20 KDA layers, 7 latent-attention
// layers caching the latent, the same KV cache and recurrent state.
TEST(GgufFamiliesTest, KimiLinearReadsItsKdaAndLatentLayersBackFromHeadCountKv) {
  const Read read = ReadFile(WriteKimiLinear());
  EXPECT_EQ(read.file_total, 49122681728u);
  EXPECT_EQ(read.counted, 49122681728.0);
  EXPECT_EQ(read.arch.model_type(), "kimi_linear");
  EXPECT_EQ(read.arch.recurrent_mixer(), "kda");
  EXPECT_EQ(read.arch.num_recurrent_layers(), 20);
  EXPECT_EQ(read.arch.num_attention_layers(), 7);
  EXPECT_EQ(read.arch.kv_lora_rank(), 512);
  EXPECT_TRUE(read.arch.router_bias());
  const Architecture core = ToCoreArchitecture(read.arch);
  EXPECT_TRUE(core.CachesLatent());
  // 7 layers x (512 + 64) x 2 bytes a token, the latent; the KDA layers'
  // state apart: 20 x (3 convs x 3 x 4,096 x 2 bytes + 32 heads x 128 x 128
  // x 4 bytes).
  EXPECT_EQ(KvCacheBytes(core, NumberFormat::kBf16, 65536, 1), 7.0 * (512 + 64) * 2 * 65536);
  EXPECT_EQ(RecurrentStateBytesPerSequence(core, nullptr),
            20.0 * (3 * 3 * 4096 * 2 + 32 * 128 * 128 * 4));
  // head_count_kv not one per block: refused by key.
  absl::Status refused = Refusal(WriteKimiLinear(26));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "m.kimi-linear.attention.head_count_kv"))
      << refused;
}

}  // namespace
}  // namespace modelatlas::estimator
