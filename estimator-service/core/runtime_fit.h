// A plan under a serving engine's own memory rules (docs/FORMULAS.md, "A
// runtime's own fit"): what vLLM, SGLang or llama.cpp reserve on each card,
// whether the workload fits under their rules (which may be stricter than
// the plan's own fit), the KV blocks and maximum concurrency, and the launch
// command that makes the plan fit. Each default is the one of the version
// named in RuntimeFit::version, with the source file it comes from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/core/workload.h"

namespace modelatlas::estimator {

enum class Runtime { kNone, kVllm, kSglang, kLlamaCpp };

// What the runtimes' rules read of the model.
struct RuntimeModel {
  // The Hugging Face repository ("meta-llama/Llama-3.1-8B") when on record;
  // empty = the command names a placeholder and says so.
  std::string repo_id;
  // The GGUF file the plan was asked about, by the name it was given:
  // llama.cpp's command loads it as it is; empty = no file (the command
  // names one to convert to, a placeholder).
  std::string gguf_file;
  int num_layers = 0;
  int num_attention_heads = 0;
  int64_t hidden_size = 0;
  // The FFN width one token passes through (the dense FFN, or the active
  // experts' for mixture-of-experts), for the activation peak.
  int64_t intermediate_size = 0;
  int64_t vocab_size = 0;
  // The model's maximum context, tokens; 0 = unknown.
  int64_t max_context_length = 0;
  // Sliding-window attention: the window, tokens, and the layers that use
  // it (llama.cpp keeps more than the window for them); 0 = none.
  int64_t sliding_window = 0;
  int sliding_window_layers = 0;
  // Layers with a KV cache (a hybrid's attention layers); 0 = num_layers.
  int attention_layers = 0;
  // Layers that differ (Nemotron-NAS): how many layers as large as the
  // largest could be the layers' parameters fill
  // (LayersAsLargeAsTheLargest); a layer split gives each card its layers
  // by count, not by bytes. 0 = the layers are alike.
  int layers_as_large_as_the_largest = 0;
  // Multi-token-prediction blocks a converted GGUF file keeps after the
  // model's layers and llama.cpp caches as full-context layers
  // (LlamaCppCachesMtpBlocks); 0 = none.
  int llama_cpp_mtp_kv_layers = 0;
  // A hybrid's layers with a recurrent state (Mamba, Gated DeltaNet), to
  // which vLLM gives one state page per sequence each; 0 = none.
  int recurrent_layers = 0;
  // The recurrent state of one sequence, bytes, as the estimate sizes it
  // (within InferenceSizing::kv_cache_bytes) and as llama.cpp keeps it
  // (every element in F32); 0 without recurrent layers.
  double recurrent_state_bytes = 0, llama_cpp_recurrent_state_bytes = 0;
  // Routed experts in its layers (num_experts on record): vLLM captures
  // larger CUDA graphs for them (VllmCudaGraphBytes).
  bool mixture_of_experts = false;
  // config.json's model_type ("gemma3_text"): whether llama.cpp honours the
  // window (runtime_fit.cc LlamaCppSlidesWindows); empty = unknown, sized
  // as a family that does not.
  std::string model_type;
  // What the runtime loads: the multimodal wrapper's model_type ("gemma4")
  // or the language model's; "deepseek_ocr" for DeepSeek-OCR (a
  // deepseek_vl_v2 of its own class); empty when not on record (a
  // multimodal model whose wrapper was not recorded). Checked against the
  // modeled version (runtime_support.h).
  std::string family;
  // Vision or audio parts beside the language model.
  bool multimodal = false;
  // Llama 3.2 Vision: layers among num_layers that attend to the images'
  // positions (cross_attention_positions per image; the workload's
  // images_per_sequence) instead of the text; 0 = none.
  int cross_attention_layers = 0;
  int64_t cross_attention_positions = 0;

  // The layers that keep a KV cache.
  int KvLayers() const { return attention_layers > 0 ? attention_layers : num_layers; }
};

struct RuntimeReservation {
  std::string component;
  double bytes = 0;  // per card
  std::string arithmetic;
  std::string source;
};

struct RuntimeFit {
  Runtime runtime = Runtime::kNone;
  std::string version;
  bool fits = false;
  std::string reason;
  std::vector<RuntimeReservation> reserved;
  double kv_cache_bytes_per_card = 0;
  double kv_cache_bytes_needed_per_card = 0;
  int block_size_tokens = 0;
  std::optional<int64_t> kv_cache_blocks;
  int kv_cache_groups = 0;  // vLLM's layer groups (VllmKvLayout)
  int64_t kv_cache_tokens = 0;
  std::optional<double> max_concurrency;
  int64_t max_model_len_tokens = 0;
  std::string launch_command;
  // Over several nodes: each node's command, node 0 first (RuntimeFit
  // proto node_commands).
  std::vector<std::string> node_commands;
  bool model_id_placeholder = false;
  std::vector<std::string> notes;
};

// vLLM 0.11.x's defaults for `vllm serve` (the OpenAI API server):
// max_num_batched_tokens and max_num_seqs by device memory and name
// (vllm/engine/arg_utils.py, EngineArgs._set_default_args: 8192 and 1024 on
// cards of at least 70 GiB that are not A100s, else 2048 and 256).
struct VllmDefaults {
  int max_num_batched_tokens = 0;
  int max_num_seqs = 0;
};
VllmDefaults VllmServeDefaults(double total_bytes, const std::string& device_name);

// Bytes per sequence and vocabulary entry at the peak of vLLM's dummy
// sampler run (vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run with
// PyTorch's top-k/top-p sampler, vllm/v1/sample/ops/topk_topp_sampler.py
// forward_native: fp32 logits, their sorted copy with int64 indices, the
// softmax and its cumulative sum). The peak activation vLLM 0.10.2-0.11
// logs is 38.4-38.9 bytes x max_num_seqs x vocabulary for Llama 3.1 8B,
// Llama 3.3 70B, Qwen3 0.6B and 32B, gpt-oss 20B and 120B and Qwen3-Next
// (docs/ACCURACY.md, "vLLM's activation peak"); the FlashInfer sampler, when
// installed and chosen, keeps less.
inline constexpr double kVllmSamplerBytesPerLogit = 38.5;

// Whether llama.cpp b10076 gives the multi-token-prediction blocks a file
// of this family keeps a KV cache: GLM-4.5's (glm4_moe, the converter keeps
// its nextn block) and K-EXAONE's (exaone_moe: blk.48). Since PR #24060
// (2026-06-05) the cache runs over every block and has_kv() is true unless
// a family filters its NextN layers (Step-3.5 and Qwen3.5 do); the blocks
// past n_layer() are never sliding (llama-hparams.cpp set_swa_pattern).
// Before it (GLM-4.5-Air at b6168: "131072 cells, 46 layers") and again
// from PR #28630 (GLM-4.5's filter restored) they had none.
bool LlamaCppCachesMtpBlocks(absl::string_view model_type);

// The activation peak vLLM profiles (gpu_model_runner.py profile_run), per
// card: the larger of a dummy forward of max_num_batched_tokens tokens (the
// residual stream, the gate/up projection and the activated FFN of one
// layer in 16 bits) and the dummy sampler run of max_num_seqs sequences.
// `arithmetic`, when not null, receives the sentence.
double VllmActivationPeak(const RuntimeModel& model, int tp, const VllmDefaults& defaults,
                          std::string* arithmetic);

// The non-torch memory vLLM counts inside its budget on cards that exchange
// activations over a scale-up link (NVLink, Infinity Fabric) in a
// tensor- or expert-parallel group, bytes per card: NCCL's buffers, the
// custom and symmetric-memory all-reduce buffers and the workspaces. The
// largest published figure rounded up: vLLM logs "non-torch memory" 1.38 GiB
// at TP 2 on H200s (0.10.2), 1.39 at TP 4 on A800s (0.8.2), 2.10 at TP 8 on
// A100s (0.7.1) and 2.06-2.21 at TP 2 and 4 on H100s for ten models (0.19.0,
// llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs at d3121e05),
// where one card alone logs 0.07-0.46 and eight PCIe L40S 0.21 at TP 8
// (docs/ACCURACY.md, "vLLM's non-torch memory").
inline constexpr double kVllmLinkedNonTorchBytes = 2.25 * 1024 * 1024 * 1024;
// ... and what NCCL takes at start-up on every card of a server of more
// than one (tensor, pipeline or expert parallel), which vLLM after
// vllm-project/vllm PR #25359 allocates before its start-up snapshot, so
// outside the budget: the free memory at start-up is 0.92-1.56 GiB lower at
// TP 2 and 4 and PP 2 and 4 than on one H100 in the same 0.19.0 logs (78.68
// against 77.12-77.76 GiB), bytes per card, with a margin. Kept free beside
// the CUDA context and the CUDA graphs when a command raises
// --gpu-memory-utilization.
inline constexpr double kVllmMultiCardStartupBytes = 1.75 * 1024 * 1024 * 1024;

// The memory vLLM leaves outside its budget must hold the CUDA context and,
// captured after the KV cache is sized, the CUDA graphs. The context, bytes
// per card: vLLM 0.19.0 logs 78.68 of 79.19 GiB free at start-up on one
// H100 (0.51 GiB in use), 0.10.2 logs 139.21 of 139.81 on an H200.
inline constexpr double kVllmCudaContextBytes = 0.6 * 1024 * 1024 * 1024;
// The CUDA graphs of one card, bytes: at most kVllmGraphBaseBytes plus, per
// layer on the card, kVllmGraphBytesPerLayer (dense attention) or
// kVllmGraphBytesPerMoeOrHybridLayer (routed experts or a recurrent mixer):
// an upper bound on the graph memory vLLM logs ("... GiB for CUDAGraph
// memory", "Graph capturing finished ..., took ... GiB"; docs/ACCURACY.md,
// "vLLM's CUDA graphs"): 0.51-1.85 GiB for 8 to 80 dense layers a card and
// 0.93-1.57 GiB for 24 to 48 mixture-of-experts layers in vLLM 0.19.0 on
// H100s (llm-d-incubation/llm-d-planner, d3121e05), 2.37 GiB for
// Qwen3-Next's 48 layers at TP 2 and 3.45 GiB for Qwen3-235B-A22B's 94 at
// TP 8 in 0.10.2 logs.
inline constexpr double kVllmGraphBaseBytes = 0.35 * 1024 * 1024 * 1024;
inline constexpr double kVllmGraphBytesPerLayer = 25.0 * 1024 * 1024;
inline constexpr double kVllmGraphBytesPerMoeOrHybridLayer = 60.0 * 1024 * 1024;

// The CUDA graphs vLLM captures on one card of a model split into
// `pipeline_stages` (VllmCudaGraphBytes's constants); a model without a
// layer count takes 1 GiB and the sentence says so. `arithmetic`, when not
// null, receives the sentence.
double VllmCudaGraphBytes(const RuntimeModel& model, int pipeline_stages, std::string* arithmetic);

// vLLM's non-torch memory on one card of a plan: the workload's overhead,
// raised to kVllmLinkedNonTorchBytes when `communicating_cards` (the tensor-
// or expert-parallel group) > 1 over a scale-up link (a card without one on
// record, PCIe, keeps the overhead: a log shows 0.21 GiB at TP 8);
// `arithmetic`, when not null, receives the sentence.
double VllmNonTorchBytes(double workload_overhead_bytes, int communicating_cards,
                         const DeviceLinks& links, std::string* arithmetic);

// NCCL's start-up buffers on each card of a vLLM server of `cards` cards,
// kept outside the budget beside the CUDA context and graphs:
// kVllmMultiCardStartupBytes when cards > 1, else 0.
double VllmNcclStartupBytes(int cards);

// vLLM's KV cache from the memory left for it (vllm/v1/core/kv_cache_utils.py
// get_num_blocks: available_memory // page_size // num_layers, i.e. floor of
// the memory over 16 tokens' K and V of every layer; and
// get_max_concurrency_for_kv_cache_config: blocks / ceil(max_model_len / 16)).
struct VllmBlocks {
  int64_t blocks = 0;          // "# GPU blocks"
  int64_t tokens = 0;          // "GPU KV cache size: N tokens"
  double max_concurrency = 0;  // "Maximum concurrency for L tokens per request: Xx"
  int64_t blocks_per_sequence = 0;
};
VllmBlocks VllmKvBlocks(double kv_cache_bytes, double kv_bytes_per_token, int64_t max_model_len);

// How vLLM lays out the KV cache of a model whose layers do not all keep the
// whole context (vllm/v1/core/kv_cache_utils.py, read at vllm-project/vllm
// 001cabc1): layers of one kind form groups of `group_size` layers (the
// smaller kind's count, or the larger's when it is under 1.5x; the last
// group of each kind padded), one block id spans one layer of a group, so a
// block is 16 tokens x group_size layers, get_num_blocks divides the memory
// by that, "GPU KV cache size" is blocks / groups x 16 tokens, and
// get_max_concurrency_for_kv_cache_config counts each group's blocks for
// one max_model_len request: a full-attention layer's ceil(max_model_len /
// 16), a sliding layer's ceil(min(window - 1 + max_num_batched_tokens,
// max_model_len) / 16) + 1 (SlidingWindowSpec.max_memory_usage_bytes). A
// model without a window is one group of every layer, as VllmKvBlocks
// above; so is Llama 4, whose chunked layers vLLM 0.11 keeps whole by
// default. A hybrid of attention and recurrent layers (vLLM 0.10.2-0.11,
// prefix caching off for it) takes its attention block from the state
// instead (vllm/model_executor/models/config.py
// HybridAttentionMambaModelConfig.verify_and_update_config): 16 x ceil(one
// recurrent layer's state / (16 x one attention layer's bytes per token)),
// the state's page padded to the attention page; attention and recurrent
// layers form groups as above, and one request counts ceil(max_model_len /
// block) blocks per attention group and one per recurrent group
// (MambaSpec.max_memory_usage_bytes: one page). Bytes per card.
struct VllmKvLayout {
  int full_layers = 0;
  int window_layers = 0;
  int group_size = 0;  // layers per group, per model
  int recurrent_layers = 0;
  int full_groups = 0;
  int window_groups = 0;
  int recurrent_groups = 0;
  int padding_layers = 0;
  // Tokens a block of the full-attention layers holds: 16, or a hybrid's
  // block raised until its page holds a recurrent layer's state.
  int64_t block_tokens = 16;
  double state_page_bytes = 0;  // one recurrent layer's state, one sequence, before padding
  int64_t window_kept = 0;      // tokens a sequence's sliding layer keeps: window - 1
  int64_t window_tokens = 0;    // what one request's sliding layer is counted for
  int64_t full_blocks = 0;      // one request's blocks in a full-attention group
  int64_t window_blocks = 0;    // ... in a sliding-window group
  int64_t blocks_per_request = 0;
  double block_bytes = 0;        // per card
  double one_request_bytes = 0;  // vLLM's start-up check: every layer's maximum, summed
  // Llama 4's chunked layers, which vLLM 0.11 keeps whole (one group of
  // every layer at the full context).
  int chunked_layers_kept_whole = 0;

  int Groups() const { return full_groups + window_groups + recurrent_groups; }
  // Blocks that hold `sequences` sequences of max_model_len tokens at once:
  // their windows add up, the batched tokens of a step are shared.
  int64_t BlocksFor(int64_t sequences, int64_t max_model_len, int max_num_batched_tokens) const;
};
// `kv_bytes_per_token`: the card's KV bytes per token of context over all
// its layers, as the plan sized them; `layer_token_bytes`: the card's bytes
// of one token in one layer that keeps the whole context.
VllmKvLayout VllmKvLayoutOf(const RuntimeModel& model, double kv_bytes_per_token,
                            double layer_token_bytes, int64_t max_model_len,
                            int max_num_batched_tokens);
// A hybrid's layout on one card of `tp` tensor-parallel ranks and `pp`
// pipeline stages, for `sizing`'s context: an attention layer keeps its KV
// heads' share (KvCacheDivisor), a recurrent layer its heads' share over
// the tensor-parallel ranks (vLLM's mamba state shapes divide the heads by
// the TP size), a stage its share of each kind of layer. nullopt when the
// model is not a hybrid with a recurrent state.
std::optional<VllmKvLayout> VllmHybridKvLayout(const RuntimeModel& model,
                                               const InferenceSizing& sizing, int tp, int pp);
VllmBlocks VllmKvBlocks(double kv_cache_bytes, const VllmKvLayout& layout);

// The KV cache llama.cpp keeps beyond the sliding windows the sizing holds:
// an interleaved-SWA cache gives its sliding layers n_swa x sequences +
// n_ubatch cells, padded, at most the context (src/llama-kv-cache-iswa.cpp:
// size_swa = min(size_base, GGML_PAD(n_swa * n_seq_max + n_ubatch, n_pad)),
// with --swa-full off, the default), where the sizing holds the window
// alone; a family llama.cpp runs without a window keeps the whole context
// in them: the sliding layers' extra cells x their bytes per cell, bytes in
// the sizing's KV format; 0 without sliding layers.
struct LlamaCppSwa {
  double bytes = 0;
  int64_t cells = 0;         // llama.cpp's cells for each sliding layer
  int64_t window_cells = 0;  // the sizing's
  bool whole = false;        // llama.cpp runs the family without a window
};
LlamaCppSwa LlamaCppSwaOf(const RuntimeModel& model, const InferenceSizing& sizing, int64_t context,
                          int64_t batch);

// What SGLang has used on a card before it sizes its pool, besides the
// weights, on a tensor- or expert-parallel card over a scale-up link: the
// CUDA context (about 0.5 GiB) and NCCL's and the custom all-reduce's
// buffers, which it logs as "Init torch distributed ends. mem usage=X GB"
// (GiB): 1.77-2.01 on eight H200s (sgl-project/sglang PR #11716), 1.88-2.50
// on eight 180 GB cards (PR #5390), where PCIe cards log 0.13 (four cards,
// custom all-reduce off). They come out of the pool: SGLang sizes it from
// the free memory after loading. Bytes per card.
inline constexpr double kSglangLinkedBeforePoolBytes = 3.0 * 1024 * 1024 * 1024;

// SGLang's memory used before the pool on one card of a plan: the
// workload's overhead, raised to kSglangLinkedBeforePoolBytes when
// `communicating_cards` > 1 over a scale-up link; `arithmetic` the sentence.
double SglangBeforePoolBytes(double workload_overhead_bytes, int communicating_cards,
                             const DeviceLinks& links, std::string* arithmetic);

// SGLang 0.5.x's default --mem-fraction-static for a card of `total_bytes`
// (in MiB, as nvidia-smi reports it) and tp x pp ranks
// (python/sglang/srt/server_args.py, ServerArgs._handle_gpu_memory_settings);
// `reserved_mib` receives the memory it keeps outside the static pool.
double SglangMemFractionStatic(double total_bytes, int parallel_size, double* reserved_mib);

// The default --mem-fraction-static of SGLang 0.5.3 and later
// (sgl-project/sglang PRs #10975 and #11076, server_args.py
// _handle_gpu_memory_settings as a stored copy of late 2025 reads it):
// round((M - R) / M, 3), R = 512 MiB + 1.5 MiB x max(chunked_prefill_size,
// 2048) + 2 MiB x cuda_graph_max_bs + TP x PP / 8 GiB, at least 10 GiB on
// cards over 60 GiB, with the card-size tiers' chunked prefill (2,048 under
// 35 GiB, 4,096 under 60, 8,192 under 160, 16,384 above) and graph batch
// (8 under 20 GiB; 24 or 80 from TP 4 under 35; 32 or 160 under 60; 256 or
// 512 under 160; 512 above). `reserved_mib` may be null.
double SglangLaterMemFractionStatic(double total_bytes, int parallel_size, double* reserved_mib);

// Whether the rules here hold on a device of `manufacturer` (the hardware
// record's): vLLM's and SGLang's are their CUDA and ROCm ones (NVIDIA, AMD);
// llama.cpp's hold on its GPU backends (CUDA, ROCm, Metal, SYCL, CANN, MUSA).
// Empty = why not.
std::string RuntimeNotCheckedReason(Runtime runtime, const std::string& manufacturer,
                                    const DeviceSpec& device);

// The plan `plan` (on `device` of `manufacturer`, for `sizing` at
// `workload`) under `runtime`'s rules. `runtime` must not be kNone. On a
// device the rules do not hold for, it does not fit, "not checked" and why.
RuntimeFit FitRuntime(Runtime runtime, const RuntimeModel& model, const InferenceSizing& sizing,
                      const ResolvedWorkload& workload, const DeviceSpec& device,
                      const DevicePlan& plan, const std::string& manufacturer);

}  // namespace modelatlas::estimator
