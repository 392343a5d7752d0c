// Memory to run a model: weights + KV cache + runtime overhead, each part
// with the arithmetic that produced it (docs/FORMULAS.md).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator-service/core/architecture.h"
#include "estimator-service/core/number_format.h"
#include "estimator-service/core/workload.h"

namespace modelatlas::estimator {

// One line of an estimate.
struct EstimateLine {
  std::string component;
  // Bytes, rounded up to a whole byte.
  int64_t bytes = 0;
  std::string arithmetic;
};

// The weights part of a sizing: what the weights line shows, a function of
// the parameters, the shape, the weight format and its group size alone.
struct WeightsPart {
  // What it was sized for: the parameters and the quantization group size
  // asked (ResolvedWorkload::quantization_group_size).
  double parameters = 0;
  int group_size = 0;
  // The format's own bits per element (its encoding, whatever the shape).
  double format_bits = 0;
  // Bits per parameter of the weights: the format's, or the average of the
  // file sized tensor by tensor (core/weight_files.h).
  double bits = 0;
  // parameters x bits / 8, rounded up to a whole byte.
  double bytes = 0;
  // The weights line's arithmetic.
  std::string text;
};

// The weights of `parameters` parameters of `shape` (null: unknown or no
// layers) in `format`: the memory answer's weights line and its figures, as
// SizeInference computes them. The errors of EncodingOf.
absl::Status SizeWeightsPart(double parameters, const Architecture* shape, NumberFormat format,
                             int group_size, WeightsPart* out);

// Each weight format's WeightsPart of one model, sized at its first use and
// kept (a catalog record's, CatalogSnapshot's PreparedRecord): a quantized
// format is sized tensor by tensor (WeightFileOf: every matrix of the shape
// listed, typed and summed, its derivation written), about 40,000
// instructions, two thirds of an estimate of many different models
// (docs/BENCHMARKS.md, session 16). Thread-safe: the slots are written once
// (two threads asking first may both size it; one copy is kept) and read
// without a lock. A slot holds what was sized for the first parameters and
// group size asked; other figures are not kept (Get returns null and the
// caller sizes them itself), nor is a format whose sizing fails.
class PreparedWeights {
 public:
  PreparedWeights() = default;
  ~PreparedWeights();
  PreparedWeights(const PreparedWeights&) = delete;
  PreparedWeights& operator=(const PreparedWeights&) = delete;

  // The weights of the model this was made for (`shape`, null without
  // one, always the same model's) in `format`: kept or sized now; null when
  // kept for other parameters or another group size, or when the sizing
  // fails.
  const WeightsPart* Get(double parameters, const Architecture* shape, NumberFormat format,
                         int group_size) const;
  // How many formats are kept (for tests and memory accounting).
  size_t kept() const;

 private:
  static constexpr size_t kSlots = static_cast<size_t>(NumberFormat::kFp8Block) + 1;
  mutable std::array<std::atomic<const WeightsPart*>, kSlots> slots_{};
};

// A model to size: its parameters and, when known, its shape.
struct InferenceMemoryInput {
  // Parameters of the model.
  double parameters = 0;
  // Shape, when known; without it the KV cache cannot be sized.
  std::optional<Architecture> architecture;
  // Parameters used per token when the record gives them (Model.active_parameters):
  // decides the active share instead of the architecture's count.
  std::optional<double> active_parameters;
  // What is being run, defaults resolved (ResolveWorkload) and the context
  // fitted to the model (WorkloadForModel).
  ResolvedWorkload workload;
  // Whether the sizing's split figures are wanted: the embedding, output
  // head and routed-expert parameters and the active share (a parameter
  // count of the architecture), which plans divide over cards. The memory
  // answer shows none of them and skips the count (false).
  bool split_figures = true;
  // The weights of this input's model (its `parameters` and `architecture`)
  // kept per format, or null: the texts' sizing then uses them instead of
  // sizing the weights again (a catalog record's, made when the snapshot
  // loaded it). Must have been made for this very model.
  const PreparedWeights* prepared_weights = nullptr;
};

// An inference workload sized: the typed numbers every inference answer
// (memory estimate, plan, runnable models, fit matrix) rests on. Every byte
// figure is whole bytes, as the estimate's lines show them.
struct InferenceSizing {
  double parameters = 0;
  // Parameters used per token / all parameters (MoE: the active experts'
  // share); 1 for dense models.
  double active_share = 1;
  double weight_bytes = 0;
  // The whole KV cache (every sequence), bytes; for hybrid and state-space
  // models it includes the recurrent state (recurrent_state_bytes of it),
  // the other per-sequence memory a runtime allocates beside the weights.
  double kv_cache_bytes = 0;
  // Recurrent state of a hybrid's state-space / linear-attention layers
  // (every sequence), bytes; part of kv_cache_bytes; 0 for a transformer.
  double recurrent_state_bytes = 0;
  double activation_bytes = 0;
  double overhead_bytes = 0;
  int num_attention_heads = 0;  // 0 = unknown: tensor parallelism not checked
  int num_key_value_heads = 0;
  // Hidden size (the width of what tensor-parallel all-reduces and pipeline
  // hops send per token); 0 = unknown.
  int64_t hidden_size = 0;
  // Tokens per sequence the KV cache holds.
  int64_t context_length_tokens = 0;
  // For pipeline parallelism (fit_matrix.h): decoder layers a pipeline can
  // split (0 = none: unknown shape, or an encoder-decoder, not split);
  // layers that hold the weights when they differ (an MoE's expert layers,
  // its leading dense layers left out: every layer is bounded by the
  // largest kind); embedding and output-head parameters (on a stage of their
  // own, at 16 bits or more).
  int num_layers = 0;
  int num_largest_layers = 0;
  double embedding_parameters = 0;
  // The KV cache of the model itself (a draft model's is added to
  // kv_cache_bytes afterwards) and of its largest layer (a full-attention
  // layer: sliding-window layers hold less), bytes, for every sequence.
  double model_kv_cache_bytes = 0;
  double kv_cache_bytes_largest_layer = 0;
  // A sliding-window layer's KV bytes per token over the largest layer's
  // (1 but for Gemma 4, whose full-attention layers have a geometry of
  // their own: E2B's sliding layers cache half a full layer's), for the
  // runtimes' extra sliding cells.
  double kv_cache_sliding_layer_share = 1;
  // Multi-head latent attention: every tensor-parallel rank holds the whole
  // latent cache (it is not split by heads).
  bool kv_cache_replicated = false;
  // No KV cache could be counted (no architecture on record, or no context):
  // kv_cache_bytes is 0 and every figure is without it, as the texts say.
  bool kv_cache_not_counted = false;
  // Mixture of experts, for expert parallelism (core/fit_matrix.h): the
  // routed experts' weights of every MoE layer, bytes (routed parameters x
  // the weights' average bits per parameter / 8; shared experts and the
  // router stay with the dense part), the experts of one layer, those one
  // token uses, and the layers with experts. 0 = dense or no expert shape.
  double expert_weight_bytes = 0;
  int num_experts = 0;
  int num_experts_per_token = 0;
  int num_moe_layers = 0;
  // Sequences the KV cache holds (data-parallel attention splits them).
  int batch_size = 1;
  // The output head's parameters (vocabulary x hidden, tied or not: a
  // runtime that splits layers keeps a copy on the output card); 0 = unknown.
  double output_head_parameters = 0;

  double active_parameters() const { return parameters * active_share; }
  double total_bytes() const {
    return weight_bytes + kv_cache_bytes + activation_bytes + overhead_bytes;
  }
};

// The arithmetic behind a sizing, one text per component.
struct InferenceArithmetic {
  std::string weights;
  std::string kv_cache;
  std::string recurrent_state;
  std::string activations;
  std::string overhead;
  std::vector<std::string> warnings;
};

struct InferenceMemoryEstimate {
  // The numbers the lines show.
  InferenceSizing sizing;
  std::vector<EstimateLine> lines;
  int64_t total_bytes = 0;
  std::vector<std::string> warnings;
};

// KV-cache bytes per token of one sequence, with the arithmetic:
//   standard/GQA: 2 (K and V) x layers x kv_heads x head_dim x bytes per element
//   MLA:          layers x (kv_lora_rank + qk_rope_head_dim) x bytes per element
//   encoder-decoder (T5): 2 (K and V) x 2 x decoder layers x kv_heads x
//                 head_dim x bytes per element: each decoder layer caches
//                 its self attention over the output and its cross attention
//                 over the encoder's input (transformers EncoderDecoderCache:
//                 self_attention_cache and cross_attention_cache per decoder
//                 layer), both taken as the context long; the encoder caches
//                 nothing.
// `arithmetic` may be null when only the number is wanted.
double KvCacheBytesPerToken(const Architecture& arch, NumberFormat format, std::string* arithmetic);

// Layers that hold a KV cache: the decoder's of an encoder-decoder, a
// hybrid's attention layers, else all.
int KvCacheLayers(const Architecture& arch);

// Recurrent state of one sequence, bytes, for a hybrid or state-space model
// (0 otherwise), independent of the context length: per recurrent layer a
// convolution state of (K - 1) x conv channels and an SSM state, as vLLM
// allocates them (vllm/model_executor/layers/mamba/mamba_utils.py,
// MambaStateShapeCalculator):
//   Mamba:          conv (K-1) x I,           SSM I x N
//   Mamba-2:        conv (K-1) x (I + 2GN),   SSM H x I/H x N
//   Gated DeltaNet: conv (K-1) x (2GN + I),   SSM H x N x I/H
// at 2 bytes (the 16-bit model dtype, vLLM's mamba_ssm_cache_dtype "auto"),
// the SSM state at 4 when the config keeps it in fp32. `arithmetic` may be
// null.
double RecurrentStateBytesPerSequence(const Architecture& arch, std::string* arithmetic);

// The same state as llama.cpp keeps it, every element in F32 (the conv
// window too: llama-model.cpp create_memory gives llama_memory_recurrent
// and llama_memory_hybrid GGML_TYPE_F32 for both), bytes per sequence.
double LlamaCppRecurrentStateBytesPerSequence(const Architecture& arch);

// The cross-attention layers' cache of one sequence holding `images`
// images, bytes (Llama 3.2 Vision; 0 without such layers), whatever the
// context: per layer the keys and values of the image positions it attends
// to,
//   cross layers x 2 (K and V) x KV heads x head dim x positions per image
//     x images x bytes
// (transformers' MllamaTextCrossAttention caches the projected image states'
// keys and values once per sequence, every image's tiles side by side).
double CrossAttentionCacheBytesPerSequence(const Architecture& arch, NumberFormat format,
                                           int images);

// Layers that use the sliding window (all of them unless said otherwise).
int SlidingLayers(const Architecture& arch);

// Layers that differ (Nemotron-NAS): how many layers as large as the
// largest one could be (its attention and the widest MLP, with their norms)
// the layers' parameters would fill, at least 1: a pipeline stage or a
// card of a layer split sized by that many never holds less than its
// layers do, whichever they are.
int LayersAsLargeAsTheLargest(const Architecture& arch);

// The whole KV cache for `context_tokens` per sequence and `batch`
// sequences, bytes; sliding-window layers hold at most the window;
// cross-attention layers the positions of `images` images per sequence.
double KvCacheBytes(const Architecture& arch, NumberFormat format, int64_t context_tokens,
                    int batch, int images = ResolvedWorkload::kDefaultImagesPerSequence);

// Activation workspace of one prefill step, bytes, with the arithmetic:
//   chunk x (2h + (a + 2g) x d + MLP inner width x (2 if gated else 1)) x 2 bytes
// (the MLP width one token passes through: a mixture of experts' active
// experts, routed and shared, or its dense layers' when wider)
//   + batch x vocab x 4 bytes of fp32 logits for the last token of each sequence.
// An allowance for the largest live tensors, not a measurement. `arithmetic`
// may be null.
double PrefillWorkspaceBytes(const Architecture& arch, int chunk_tokens, int batch,
                             std::string* arithmetic);

// The MLP width one token passes through in the widest layer: a dense
// layer's intermediate size, a mixture-of-experts layer's active experts
// (the routed ones it picks and the shared ones: a chunk's tokens are
// expanded over their experts at once), the wider where an MoE model has
// dense layers or a dense MLP beside its experts; Gemma 4 E2B's KV-shared
// layers' MLPs are twice as wide.
// Also the FFN width of vLLM's activation peak (answers/runtime.cc).
double TokenMlpWidth(const Architecture& arch);

// The one composition of the inference formulas: weights, KV cache,
// activations and overhead of `input`, as numbers (per card under tensor
// parallelism: RequiredBytesPerCard in fit_matrix.h). `arithmetic`, when not
// null, receives the text behind each figure (costly; whole-catalog answers
// pass null). INVALID_ARGUMENT (naming the field) for negative, non-finite or
// absurd input.
absl::StatusOr<InferenceSizing> SizeInference(const InferenceMemoryInput& input,
                                              InferenceArithmetic* arithmetic = nullptr);

// SizeInference with its arithmetic, as the lines of an estimate.
absl::StatusOr<InferenceMemoryEstimate> EstimateInferenceMemory(const InferenceMemoryInput& input);

// The same into `estimate`, with `arithmetic` as the texts' scratch: both
// may be reused from call to call (their strings keep their buffers: the
// computed memory answer's pooled MemoryAnswer holds a pair), and are
// overwritten whole. On an error `estimate` is partly written (its texts
// are written in place).
absl::Status EstimateInferenceMemoryInto(const InferenceMemoryInput& input,
                                         InferenceArithmetic* arithmetic,
                                         InferenceMemoryEstimate* estimate);

}  // namespace modelatlas::estimator
