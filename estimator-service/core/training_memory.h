// Memory to train a model, per device, the way the ZeRO paper (Rajbhandari
// et al. 2020, section 3) counts model states and Korthikanti et al. 2022
// ("Reducing Activation Recomputation in Large Transformer Models", table 2)
// count activations; optimizer bytes per parameter after EleutherAI's
// Transformer Math 101. Every figure comes with its arithmetic. Plain C++:
// no gRPC, no protobuf.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator-service/core/architecture.h"
#include "estimator-service/core/training_compute.h"

namespace modelatlas::estimator {

enum class Optimizer {
  kAdamW,        // fp32 master copy + two fp32 moments: 12 bytes/parameter
  kSgdMomentum,  // fp32 master copy + fp32 momentum: 8 bytes/parameter
  kAdafactor,    // fp32 master copy + factored second moment (rows + columns): ~4 bytes/parameter
  kAdamW8Bit,    // fp32 master copy + two 8-bit moments (bitsandbytes): 6 bytes/parameter
};

enum class Recompute {
  kNone,       // keep every activation
  kSelective,  // recompute attention's softmax/dropout (drops the 5as/h term)
  kFull,       // keep only each layer's input, recompute the rest
};

enum class FineTuning { kFull, kLora, kQlora };

// Whose allocation the estimate follows (issue 17, point 5).
enum class Framework {
  // The framework whose default the settings match: Megatron-LM for ZeRO
  // stages 0 and 1, DeepSpeed for 2 and 3 (full training with AdamW);
  // otherwise the idealized count. ResolveFramework says which.
  kDefault,
  // The ZeRO paper's 16 bytes per parameter, Korthikanti et al.'s
  // activations: no framework's buffers.
  kIdealized,
  // DeepSpeed's ZeRO-2/3 estimators; a Hugging Face transformers layer's
  // activations (DerivedActivationBytesPerLayer).
  kDeepSpeed,
  // PyTorch FSDP, bf16 mixed precision: stage 0 NO_SHARD, 2 SHARD_GRAD_OP,
  // 3 FULL_SHARD; transformers activations.
  kFsdp,
  // Megatron-LM: 18 bytes per parameter, 6 + 12/d with its distributed
  // optimizer (ZeRO stage 1); its own activation formula.
  kMegatron,
};

// How the loss over the vocabulary is computed (DeepSpeed and FSDP, which
// train Hugging Face transformers models; issue 17 point 5). Each is
// counted from its code (FORMULAS.md, "The loss").
enum class LossImplementation {
  // transformers' ForCausalLMLoss (loss/loss_utils.py): the whole logits
  // upcast to fp32, log_softmax + nll_loss; 12 bytes per token and
  // vocabulary entry at its peak. The default: it errs toward "does not fit".
  kTransformers,
  // torchtune's CEWithChunkedOutputLoss (modules/loss/ce_chunked_output_loss.py,
  // num_output_chunks 8, eager): bf16 logits computed per chunk and all
  // kept, each chunk upcast and log_softmax'd in turn; 2 + 4 + 4/8 = 6.5
  // bytes per element at the end of the forward pass.
  kChunked,
  // Liger-Kernel's LigerFusedLinearCrossEntropy (ops/fused_linear_cross_entropy.py):
  // the output projection and the loss fused per token chunk; never holds
  // the whole logits. Gradients are computed in the forward pass.
  kLigerFusedLinear,
};

// torchtune's num_output_chunks default (CEWithChunkedOutputLoss).
inline constexpr int kTorchtuneOutputChunks = 8;

struct TrainingMemoryInput {
  // Total parameters, and those in MoE experts (sharded by expert parallelism).
  double parameters = 0;
  double expert_parameters = 0;
  // The largest single layer (ZeRO-3 gathers it whole); 0 = vocab x hidden.
  double largest_layer_parameters = 0;
  // The shape the activation and LoRA formulas need; zeros mean unknown.
  Architecture architecture;

  int64_t sequence_length = 2048;  // tokens
  int64_t micro_batch = 1;         // sequences per device per step
  Optimizer optimizer = Optimizer::kAdamW;
  // Gradients kept in fp32 (4 bytes) instead of bf16 (2): Megatron-LM's
  // gradient accumulation buffer.
  bool fp32_gradients = false;
  int zero_stage = 0;  // 0..3, over the data-parallel degree
  int data_parallel = 1;
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int expert_parallel = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  bool offload_optimizer = false;   // optimizer states (and the update) in CPU memory
  bool offload_parameters = false;  // ZeRO-3 only: parameters in CPU memory too
  FineTuning fine_tuning = FineTuning::kFull;
  int lora_rank = 0;
  // Trainable adapter parameters (see LoraParameters); LoRA/QLoRA only.
  double lora_parameters = 0;
  // Runtime overhead per device (CUDA context, allocator reserve), bytes.
  double overhead_bytes = 0;
  // Model states as DeepSpeed allocates them (its own estimators,
  // DeepSpeedZero3ModelStates / DeepSpeedZero2ModelStates below) instead of
  // the ZeRO paper's idealized 16 bytes per parameter: ZeRO-2 and ZeRO-3,
  // full training with Adam(W) only.
  bool deepspeed_model_states = false;
  // Whose allocation to follow; kIdealized unless asked (the answers pass
  // kDefault for an unspecified framework). deepspeed_model_states means
  // kDeepSpeed.
  Framework framework = Framework::kIdealized;
  // The loss's implementation (DeepSpeed and FSDP only; INVALID_ARGUMENT
  // naming `loss` otherwise, and with tensor parallelism: none of the
  // alternatives splits the vocabulary).
  LossImplementation loss = LossImplementation::kTransformers;
};

struct MemoryLine {
  std::string component;
  double bytes = 0;
  std::string arithmetic;
};

struct TrainingMemory {
  // Per device (GPU/accelerator) memory, bytes, one line per component.
  std::vector<MemoryLine> device_lines;
  double device_bytes = 0;
  // Host (CPU) memory per device when something is offloaded, bytes.
  std::vector<MemoryLine> host_lines;
  double host_bytes = 0;
  std::vector<std::string> notes;
  // The framework the figures follow (never kDefault) and its name with the
  // source of its figures.
  Framework framework = Framework::kIdealized;
  std::string allocation;
};

// The framework an input's figures follow: kDefault resolved for its
// settings, deepspeed_model_states as kDeepSpeed.
Framework ResolveFramework(const TrainingMemoryInput& input);

// Bytes per parameter the optimizer keeps, with its fp32 master copy.
double OptimizerBytesPerParameter(Optimizer optimizer);

// INVALID_ARGUMENT naming the field for impossible settings (ZeRO stage 4,
// parameter offload below ZeRO-3, a tensor-parallel degree that does not
// divide the heads, LoRA without a rank...).
absl::StatusOr<TrainingMemory> EstimateTrainingMemory(const TrainingMemoryInput& input);

// Korthikanti et al. 2022, table 2: activation bytes of one transformer
// layer for sequence s, micro-batch b, hidden h, heads a, tensor-parallel t
// (16-bit activations).
Figure ActivationBytesPerLayer(int64_t s, int64_t b, int64_t h, int64_t a, int t,
                               bool sequence_parallel, Recompute recompute);

// Activation bytes of one layer as PyTorch autograd keeps them in a
// Hugging Face transformers decoder layer (modeling_llama.py and its
// copies) with fused attention (FlashAttention-2: q, k, v at their own head
// counts, the output and the fp32 log-sum-exp), for micro-batch b of s
// tokens, tensor-parallel t: RMSNorm (upcast to fp32: the fp32 input, the
// bf16 normalized value and the weighted output) or LayerNorm, the
// attention's saved tensors (GQA: k and v at the KV heads), and the MLP's
// (gated: gate, SiLU, up, product; plain: fc1 and its activation).
Figure DerivedActivationBytesPerLayer(const Architecture& shape, int64_t s, int64_t b, int t,
                                      bool sequence_parallel);

// Activation bytes one recurrent mixer keeps for the backward pass
// (micro-batch b of s tokens, tensor-parallel t), as mamba_ssm's fused
// kernels save them, the path transformers' MambaMixer and Mamba2Mixer
// take in training (16-bit activations, inner width I, state N, dt rank R,
// heads H, groups G):
//   Mamba (ops/selective_scan_interface.py MambaInnerFn, checkpoint_lvl 1:
//     conv1d_out and delta recomputed): xz 2 x 2I, x_dbl 2 x (R + 2N), the
//     contiguous B and C 2 x N each, the scan output 2 x I per token, and
//     the scan's fp32 chunk states I x 2N x 4 per 2048 tokens of a sequence;
//   Mamba-2 (ops/triton/ssd_combined.py MambaSplitConv1dScanCombinedFn):
//     zxbcdt 2 x (2I + 2GN + H), out_x 2 x I and, with a gated norm, its
//     fp32 rstd 4 x G per token (the output projection is recomputed);
//   Gated DeltaNet (Qwen3NextGatedDeltaNet with causal-conv1d and
//     flash-linear-attention's chunk_gated_delta_rule; G key heads of N, H
//     value heads, value width I, C = 2GN + I): the conv input 2C, q and k
//     l2-normalized at the H value heads 2 x 2HN, v 2I, the gated norm's
//     input, gate and output 3 x 2I, and 154 bytes per value head (beta 2,
//     the decay's softplus input and output 8, fp32 rstd of q, k and the
//     norm 12, the fp32 cumulative decay 4, the WY matrix of 64-token
//     chunks 128) per token; the chunk states are recomputed.
// Zero for other mixers.
Figure RecurrentMixerActivationBytes(const Architecture& shape, int64_t s, int64_t b, int t);

// Activation bytes of all layers of a state-space or hybrid model:
// the transformers layer's norms on every layer, its attention tensors on
// the attention layers, its MLP tensors on the MLP layers (dense and MoE)
// and RecurrentMixerActivationBytes on the recurrent layers. `largest`
// (optional) gets the largest single layer: its norms, attention, mixer
// and MLP together (Falcon-H1's layer; an upper bound for the others).
Figure HybridActivationBytes(const Architecture& shape, int64_t s, int64_t b, int t,
                             bool sequence_parallel, Figure* largest);

// Peak bytes the loss holds beyond the model's activations, per device, for
// s·b tokens, hidden h, vocabulary V (tensor-parallel t for the
// transformers loss), split in `logits` (the logits as the implementation
// keeps them) and `buffers` (the rest), with the arithmetic of each.
struct LossMemory {
  Figure logits;
  Figure buffers;
  double peak() const { return logits.value + buffers.value; }
};
LossMemory LossBytes(LossImplementation loss, int64_t s, int64_t b, int64_t h, int64_t vocab,
                     int t);

// The answer's name for a loss implementation, with its source.
std::string LossName(LossImplementation loss);

// Megatron-LM's own per-layer figure (megatron/training/
// theoretical_memory_usage.py compute_activation_memory):
// s·b·h·(18 + 4·f/h) / t, Korthikanti et al.'s table 2 with the MLP width f
// (34 at f = 4h), fused attention and sequence parallelism assumed.
Figure MegatronActivationBytesPerLayer(int64_t s, int64_t b, int64_t h, int64_t f, int t,
                                       bool sequence_parallel);

// LoRA adapter parameters: rank x (in + out) for each targeted projection
// ("q", "k", "v", "o", "gate", "up", "down") in every layer.
absl::StatusOr<Figure> LoraParameters(const Architecture& shape, int rank,
                                      const std::vector<std::string>& target_modules);

// DeepSpeed's own estimate of ZeRO-3 model-state memory
// (deepspeed.runtime.zero.stage3.estimate_zero3_model_states_mem_needs):
// bytes per GPU and per CPU (per node) for a setup, with DeepSpeed's
// 1.5 buffer factor on CPU memory.
struct DeepSpeedEstimate {
  double gpu_bytes = 0;
  double cpu_bytes = 0;
};
DeepSpeedEstimate DeepSpeedZero3ModelStates(double total_parameters,
                                            double largest_layer_parameters, int gpus_per_node,
                                            int nodes, bool offload_optimizer,
                                            bool offload_parameters, bool zero_init);
// The same for ZeRO-2 (estimate_zero2_model_states_mem_needs).
DeepSpeedEstimate DeepSpeedZero2ModelStates(double total_parameters, int gpus_per_node, int nodes,
                                            bool offload_optimizer);

}  // namespace modelatlas::estimator
