// The shape of a transformer, as plain data for every formula that needs
// one: parameter counts, inference memory, training memory and LoRA (the
// estimator's core knows nothing of protobuf or gRPC; answers/conversions.cc
// converts).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "estimator-service/core/number_format.h"

namespace modelatlas::estimator {

// The sequence mixer of a hybrid or state-space model's recurrent layers
// (docs/FORMULAS.md, "State-space and linear-attention layers").
enum class RecurrentMixer {
  kNone,
  kMamba,          // Mamba-1 selective scan (transformers MambaMixer)
  kMamba2,         // Mamba-2 SSD (Mamba2Mixer, FalconH1Mixer, NemotronHMamba2Mixer)
  kGatedDeltaNet,  // Qwen3-Next linear attention (Qwen3NextGatedDeltaNet)
  kShortConv,      // LFM2's gated short convolution (Lfm2ShortConv)
  kKimiDelta,      // Kimi Linear's Kimi Delta Attention (KimiDeltaAttention)
  kUnknown,        // a name this estimator does not know: refused
};

// One kind of attention layer: `query_heads` heads as wide as the keys
// (`head_dim`), `kv_heads` key/value heads whose values are `value_dim`
// wide (MiMo-V2-Flash's 128 beside 192); `has_values` false when the values
// come from k_proj (Gemma 4's full layers: no v_proj); `sinks` a learned
// sink per head. Architecture::AttentionOf gives each kind's.
struct AttentionGeometry {
  int64_t query_heads = 0, head_dim = 0, value_dim = 0, kv_heads = 0;
  bool has_values = true, sinks = false;

  // Training activations a token keeps in such a layer, bytes at bf16:
  // fused attention saves q and k after the rotary embedding (2ad + 2gd),
  // v at the KV heads (2g dv), the output at the value width (2a dv) and
  // the fp32 log-sum-exp per head (4a).
  int64_t ActivationBytesPerToken() const {
    const int64_t a = query_heads, d = head_dim, dv = value_dim, g = kv_heads;
    return 2 * a * d + 2 * g * d + 2 * g * dv + 2 * a * dv + 4 * a;
  }
};

struct Architecture {
  int num_layers = 0;
  int64_t hidden_size = 0;
  int num_attention_heads = 0;
  // Equal to num_attention_heads without grouped-query attention.
  int num_key_value_heads = 0;
  // 0 = hidden_size / num_attention_heads.
  int head_dim = 0;
  int64_t intermediate_size = 0;
  bool gated_mlp = false;
  int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  int64_t max_context_length = 0;
  // Tokens; 0 = full attention everywhere.
  int64_t sliding_window = 0;
  // Layers using the window; 0 with a window = all layers.
  int num_sliding_window_layers = 0;
  // Biases and norms.
  bool attention_qkv_bias = false;
  bool attention_output_bias = false;
  bool mlp_bias = false;
  // The untied output head has a bias (Phi-1, Phi-1.5, Phi-2): V more.
  bool output_head_bias = false;
  // LayerNorm (mean and variance) instead of RMSNorm.
  bool layer_norm = false;
  // Vectors of hidden_size parameters per norm: RMSNorm 1, LayerNorm 2
  // (weight and bias), Cohere's LayerNorm 1 (no bias), OLMo v1's 0; -1 =
  // from layer_norm.
  int norm_parameter_vectors = -1;
  // Per-head RMSNorm on queries and keys (Qwen3): 2 x head_dim per layer.
  bool qk_norm = false;
  // Learned absolute positions: (max_context_length +
  // learned_position_offset) x hidden_size parameters; OPT's table keeps 2
  // rows before the first position.
  bool learned_positions = false;
  int learned_position_offset = 0;
  // A norm after the token embedding besides the final one (BLOOM).
  bool embedding_norm = false;
  // Normalization layers per block; 0 = 2.
  int norms_per_layer = 0;
  // Token-type embeddings rows (BERT); 0 = none.
  int64_t type_vocab_size = 0;
  // Encoder pooler: hidden x hidden + hidden.
  bool pooler = false;
  // Mixture of experts; 0 experts = dense.
  int num_experts = 0;
  int num_experts_per_token = 0;
  int num_shared_experts = 0;
  // Per-expert MLP width; 0 = intermediate_size.
  int64_t moe_intermediate_size = 0;
  // Dense layers of an MoE model (leading for DeepSeek, interleaved for Jamba).
  int num_dense_layers = 0;
  // Multi-head latent attention: the cache holds kv_lora_rank + qk_rope_head_dim
  // elements per token and layer instead of per-head keys and values.
  int kv_lora_rank = 0;
  int qk_rope_head_dim = 0;
  // MLA projections: query LoRA rank (0 = a full query projection), the
  // non-rotary part of each query/key head and the value head width.
  int q_lora_rank = 0;
  int qk_nope_head_dim = 0;
  // MLA's value head width; without MLA, standard attention's when it
  // differs from head_dim (MiMo-V2-Flash: 128 beside 192); 0 = head_dim.
  int v_head_dim = 0;
  // DeepSeek Sparse Attention's indexer (DeepSeek-V3.2): its heads and head
  // width; 0 = none. Its key is cached beside the latent.
  int index_heads = 0;
  int index_head_dim = 0;
  // Llama 3.2 Vision's cross-attention layers (proto Architecture 536-537):
  // among num_layers, with QK norms and two gates more, each caching
  // cross_attention_positions image positions per sequence instead of the
  // text's tokens.
  int num_cross_attention_layers = 0;
  int64_t cross_attention_positions = 0;
  // Token-embedding rows the output head does not have (Mllama's 8).
  int extra_embedding_rows = 0;
  // MLA run as multi-head attention (an older GGUF file in llama.cpp): the
  // cache holds every head's decompressed key and value, not the latent.
  bool latent_cache_per_head = false;
  // Shared expert width (Qwen2-MoE); 0 = moe_intermediate_size.
  int64_t shared_expert_intermediate_size = 0;
  // A sigmoid gate on the shared expert: hidden_size parameters per MoE layer.
  bool shared_expert_gate = false;
  // A router bias per expert (DeepSeek-V3 e_score_correction_bias).
  bool router_bias = false;
  // Gemma 4's router scales: hidden_size (its input norm's weight) +
  // num_experts (per_expert_scale) per MoE layer.
  bool router_scales = false;
  // Gemma 4 E2B/E4B's per-layer inputs (proto Architecture 48-49): width
  // per layer and its embedding's rows; 0 = none.
  int per_layer_input_size = 0;
  int64_t per_layer_input_vocab_size = 0;
  // The last layers reuse an earlier layer's KV cache (Gemma 4
  // num_kv_shared_layers); their MLPs twice as wide with the flag.
  int num_kv_shared_layers = 0;
  bool kv_shared_layers_double_mlp = false;
  // QK norms over the whole projections (OLMoE): (a + g) x head_dim.
  bool qk_norm_full_width = false;
  // Encoder-decoder (T5): decoder blocks (self attention, cross attention,
  // MLP, three norms) after num_layers encoder blocks; 0 = decoder-only.
  int num_decoder_layers = 0;
  // T5's relative position bias: buckets x heads, once per stack.
  int relative_attention_buckets = 0;
  bool separate_encoder_embedding = false;  // T5Gemma: the encoder's own embedding
  // The full-attention layers' own head width and KV heads (Gemma 4); 0 =
  // the sliding-window layers' (head_dim, num_key_value_heads). Full layers
  // are those outside num_sliding_window_layers.
  int global_head_dim = 0;
  int num_global_key_value_heads = 0;
  // Their own query heads (Step-3.5-Flash: 64 beside the sliding layers'
  // 96); 0 = num_attention_heads.
  int num_global_attention_heads = 0;
  // Their values come from the key projection (Gemma 4 attention_k_eq_v):
  // no v_proj; the cache still holds keys and values apart.
  bool global_values_from_keys = false;
  // A learned sink logit per head (gpt-oss): a parameters per layer; with
  // the second flag, in the sliding-window layers only (MiMo-V2-Flash).
  bool attention_sinks = false;
  bool attention_sinks_sliding_only = false;
  // A head-wise output gate (Step-3.5-Flash g_proj): h x heads per layer.
  bool attention_head_gate = false;
  // Multi-token-prediction modules (DeepSeek-V3): counted apart.
  int num_mtp_layers = 0;
  // The MTP module shares the embedding and output head (Qwen3-Next).
  bool mtp_shares_embeddings = false;
  // The MTP layers' own output head, the embedding shared (Step-3.5-Flash).
  bool mtp_own_output_head = false;
  // The MTP layers' block has a dense MLP of intermediate_size (Step-3.5-Flash).
  bool mtp_dense_mlp = false;
  // Hybrid and state-space models (kNone for a transformer): layers with
  // the recurrent mixer, with attention (the only ones with a KV cache) and
  // with an MLP or MoE block; the mixer's shape (proto Architecture 280-295).
  RecurrentMixer recurrent_mixer = RecurrentMixer::kNone;
  int num_recurrent_layers = 0;
  int num_attention_layers = 0;
  int num_mlp_layers = 0;
  int64_t ssm_inner_size = 0;
  int ssm_state_size = 0;
  int ssm_num_heads = 0;
  int ssm_num_groups = 0;
  int ssm_conv_kernel = 0;
  int ssm_dt_rank = 0;
  bool ssm_conv_bias = false;
  bool ssm_proj_bias = false;
  bool ssm_gated_norm = false;
  bool ssm_state_fp32 = false;
  // A transformer whose layers differ (Nemotron-NAS block_configs; proto
  // Architecture 545): each layer's gated MLP width in layer order, 0 where
  // it has none; intermediate_size is the widest. num_attention_layers then
  // counts the layers with attention (0 = all). Empty: every layer the same.
  std::vector<int64_t> layer_mlp_widths;
  // Qwen3-Next's gated attention: q_proj yields queries and an output gate.
  bool attention_output_gate = false;
  // Queries, keys and values in one projection (Phi-3 qkv_proj, GPT-2 c_attn,
  // GPT-NeoX query_key_value, Falcon): one tensor in a checkpoint and a GGUF
  // file (attn_qkv), which llama.cpp quantizes by attn_v's rules. Sizes only.
  bool fused_qkv = false;
  // How the published checkpoint stores its weights, when the record says
  // (config.json's quantization_config: gpt-oss's mxfp4, DeepSeek-V3's
  // fp8-block128, an AWQ repository's awq-int4): the weight format of a
  // request that names none (WorkloadForModel). Not a shape: formulas
  // ignore it.
  std::optional<NumberFormat> checkpoint_weight_format;
  // The FP8 checkpoint keeps its attention output projections in 16 bits
  // (MiMo-V2-Flash); only for weights in that format.
  bool checkpoint_attention_output_16bit = false;
  // Its input weights per scale group (GPTQ, AWQ, int4); 0: not on record.
  int checkpoint_quantization_group_size = 0;
  // The checkpoint is quantized in a way no format here sizes (proto
  // checkpoint_quantization_not_sized): a request naming no format is sized
  // at the default, and its answer says the checkpoint differs.
  bool checkpoint_quantization_not_sized = false;
  // The record named a checkpoint format this estimator does not size as a
  // whole checkpoint (an inline model's; the catalog refuses them): refused.
  bool checkpoint_weight_format_unknown = false;

  int EffectiveHeadDim() const {
    if (head_dim > 0) return head_dim;
    return num_attention_heads > 0 ? static_cast<int>(hidden_size / num_attention_heads) : 0;
  }
  int EffectiveKvHeads() const {
    return num_key_value_heads > 0 ? num_key_value_heads : num_attention_heads;
  }
  // The full-attention layers have a geometry of their own (Gemma 4).
  bool HasGlobalGeometry() const {
    return global_head_dim > 0 || num_global_key_value_heads > 0 || global_values_from_keys ||
           num_global_attention_heads > 0 || attention_sinks_sliding_only;
  }
  // Standard attention's value width in every layer (v_head_dim without MLA).
  int ValueHeadDim() const {
    return !UsesMla() && v_head_dim > 0 ? v_head_dim : EffectiveHeadDim();
  }
  int GlobalValueHeadDim() const {
    return !UsesMla() && v_head_dim > 0 ? v_head_dim : GlobalHeadDim();
  }
  // Whether the sliding-window layers (or, by `full`, the full-attention
  // layers) have attention sinks.
  bool HasSinks(bool full) const {
    return attention_sinks && !(full && attention_sinks_sliding_only);
  }
  int GlobalAttentionHeads() const {
    return num_global_attention_heads > 0 ? num_global_attention_heads : num_attention_heads;
  }
  int GlobalHeadDim() const { return global_head_dim > 0 ? global_head_dim : EffectiveHeadDim(); }
  int GlobalKvHeads() const {
    return num_global_key_value_heads > 0 ? num_global_key_value_heads : EffectiveKvHeads();
  }
  // The sliding-window layers' geometry (every layer's without a geometry
  // of their own) or, by `full`, the full-attention layers'.
  AttentionGeometry AttentionOf(bool full) const {
    if (!full) {
      return {.query_heads = num_attention_heads,
              .head_dim = EffectiveHeadDim(),
              .value_dim = ValueHeadDim(),
              .kv_heads = EffectiveKvHeads(),
              .has_values = true,
              .sinks = HasSinks(false)};
    }
    return {.query_heads = GlobalAttentionHeads(),
            .head_dim = GlobalHeadDim(),
            .value_dim = GlobalValueHeadDim(),
            .kv_heads = GlobalKvHeads(),
            .has_values = !global_values_from_keys,
            .sinks = HasSinks(true)};
  }
  // Layers outside the sliding window (all of them without one); of a
  // hybrid, its attention layers outside it.
  int FullAttentionLayers() const {
    if (sliding_window <= 0) return AttentionLayers();
    return num_sliding_window_layers > 0
               ? std::max(0, AttentionLayers() - num_sliding_window_layers)
               : 0;
  }
  // Attention layers with a KV cache of their own (all but the last
  // num_kv_shared_layers), and the full-attention layers among them: the
  // full ones spread evenly with the last layer full, as Gemma 4 places
  // them (its reader checks layer_types agrees).
  // Cross-attention layers cache the image, not the text: not among them.
  int KvOwnLayers() const {
    return std::max(0, AttentionLayers() - num_kv_shared_layers - num_cross_attention_layers);
  }
  int KvOwnFullLayers() const {
    const int layers = AttentionLayers();
    return layers > 0 ? static_cast<int>(int64_t{FullAttentionLayers()} * KvOwnLayers() / layers)
                      : 0;
  }
  bool UsesMla() const { return kv_lora_rank > 0; }
  // The cache holds the latent (one copy, whatever the tensor parallelism).
  bool CachesLatent() const { return UsesMla() && !latent_cache_per_head; }
  // An older-layout DeepSeek GGUF in llama.cpp: every head's decompressed
  // key and value are cached, not the latent.
  bool CachesPerHead() const { return UsesMla() && latent_cache_per_head; }
  bool IsMoe() const { return num_experts > 0; }
  bool IsHybrid() const { return recurrent_mixer != RecurrentMixer::kNone; }
  // Its layers differ one from another (Nemotron-NAS).
  bool HasLayerWidths() const { return !layer_mlp_widths.empty(); }
  // Layers with attention (all of a transformer's but Nemotron-NAS's no-ops).
  int AttentionLayers() const {
    if (IsHybrid()) return num_attention_layers;
    return HasLayerWidths() && num_attention_layers > 0 ? num_attention_layers : num_layers;
  }
  // Layers with an MLP or MoE block (all of a transformer's but those
  // layer_mlp_widths gives none).
  int MlpLayers() const {
    if (IsHybrid()) return num_mlp_layers;
    if (!HasLayerWidths()) return num_layers;
    return static_cast<int>(std::count_if(layer_mlp_widths.begin(), layer_mlp_widths.end(),
                                          [](int64_t w) { return w > 0; }));
  }
  // The MLP widths of every layer added up, elements: intermediate_size x
  // MlpLayers() when the layers are alike.
  double MlpWidthTotal() const {
    if (!HasLayerWidths()) return static_cast<double>(intermediate_size) * MlpLayers();
    double total = 0;
    for (int64_t w : layer_mlp_widths) total += static_cast<double>(w);
    return total;
  }
};

}  // namespace modelatlas::estimator
