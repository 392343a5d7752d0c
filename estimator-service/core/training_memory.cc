// Training memory as the idealized count, DeepSpeed, FSDP and Megatron-LM
// allocate it. About 740 lines: the frameworks' model states and the
// activation formulas share the per-layer shapes and the arithmetic text.

#include "estimator-service/core/training_memory.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status/errors.h"
#include "estimator-service/core/units.h"

namespace modelatlas::estimator {
namespace {

// Shared experts per MoE layer, as CountParameters counts them: a width of
// their own (Qwen2-MoE, Qwen3-Next: shared_expert_intermediate_size, no
// count in the config) means at least one.
int SharedExperts(const Architecture& shape) {
  return shape.shared_expert_intermediate_size > 0 ? std::max(1, shape.num_shared_experts)
                                                   : shape.num_shared_experts;
}

std::string Num(double value) { return absl::StrFormat("%.10g", value); }
std::string Bytes(double value) { return absl::StrFormat("%.0f bytes", value); }

// QLoRA's base weights: NF4 with double quantization, 4.127 bits per
// parameter (Dettmers et al. 2023, section 3; REFERENCE.md section 4).
constexpr double kNf4DoubleQuantBitsPerParameter = 4.127;

const char* OptimizerName(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kAdamW:
      return "AdamW: fp32 master 4 + momentum 4 + variance 4";
    case Optimizer::kSgdMomentum:
      return "SGD with momentum: fp32 master 4 + momentum 4";
    case Optimizer::kAdafactor:
      return "Adafactor: fp32 master 4 + factored second moment (rows + columns, ~0 per parameter)";
    case Optimizer::kAdamW8Bit:
      return "8-bit AdamW: fp32 master 4 + two 1-byte moments";
  }
  return "";
}

void Add(std::vector<MemoryLine>* lines, double* total, std::string component, double bytes,
         std::string arithmetic) {
  lines->push_back({std::move(component), bytes, std::move(arithmetic)});
  *total += bytes;
}

std::string FrameworkName(Framework framework) {
  switch (framework) {
    case Framework::kDeepSpeed:
      return "DeepSpeed";
    case Framework::kFsdp:
      return "PyTorch FSDP";
    case Framework::kMegatron:
      return "Megatron-LM";
    case Framework::kDefault:
    case Framework::kIdealized:
      break;
  }
  return "the idealized count";
}

const char* FsdpStrategy(int zero_stage) {
  return zero_stage == 3 ? "FULL_SHARD" : zero_stage == 2 ? "SHARD_GRAD_OP" : "NO_SHARD";
}

// What the answer says it followed: the framework, the version whose source
// was read, and the file the figures come from.
std::string Allocation(Framework framework, const TrainingMemoryInput& in) {
  switch (framework) {
    case Framework::kDeepSpeed:
      return absl::StrCat(
          "DeepSpeed ZeRO-", in.zero_stage, " (deepspeed/runtime/zero/",
          in.zero_stage == 3 ? "stage3.py estimate_zero3" : "stage_1_and_2.py estimate_zero2",
          "_model_states_mem_needs, as docs/code-docs/source/memory.rst prints it); activations of "
          "a Hugging Face transformers layer with FlashAttention-2; loss: ",
          LossName(in.loss));
    case Framework::kFsdp:
      return absl::StrCat(
          "PyTorch FSDP (torch.distributed.fsdp.FullyShardedDataParallel, PyTorch 2.x) ",
          FsdpStrategy(in.zero_stage),
          ", MixedPrecision(param_dtype=bf16, reduce_dtype=bf16) over fp32 parameters, "
          "backward_prefetch=BACKWARD_PRE; activations of a Hugging Face transformers layer with "
          "FlashAttention-2; loss: ",
          LossName(in.loss));
    case Framework::kMegatron:
      return absl::StrCat(
          "Megatron-LM (megatron-core 0.13, megatron/training/theoretical_memory_usage.py) ",
          in.zero_stage == 1 ? "with its distributed optimizer (docs distrib_optimizer.md)"
                             : "without the distributed optimizer",
          ", bf16 parameters with fp32 gradients; its activation formula");
    case Framework::kDefault:
    case Framework::kIdealized:
      break;
  }
  return "idealized: the ZeRO paper's 16 bytes per parameter (Rajbhandari et al. 2020), "
         "Korthikanti et al. 2022's activations (table 2); no framework's buffers";
}

absl::Status Validate(const TrainingMemoryInput& in) {
  FieldViolations v;
  if (!std::isfinite(in.parameters) || in.parameters <= 0) {
    v.Add("parameters", absl::StrCat("must be a positive number, got ", in.parameters));
  }
  if (in.expert_parameters < 0 || in.expert_parameters > in.parameters) {
    v.Add("expert_parameters", "must be between 0 and the total parameters");
  }
  if (in.zero_stage < 0 || in.zero_stage > 3) {
    v.Add("zero_stage", absl::StrCat("must be 0, 1, 2 or 3, got ", in.zero_stage));
  }
  for (auto [field, degree] : {std::pair<const char*, int>{"data_parallel", in.data_parallel},
                               {"tensor_parallel", in.tensor_parallel},
                               {"pipeline_parallel", in.pipeline_parallel},
                               {"expert_parallel", in.expert_parallel}}) {
    if (degree < 1 || degree > 1 << 20) {
      v.Add(field, absl::StrCat("must be between 1 and 1048576, got ", degree));
    }
  }
  if (in.sequence_length < 1 || in.sequence_length > int64_t{1} << 24) {
    v.Add("sequence_length",
          absl::StrCat("must be between 1 and 16777216 tokens, got ", in.sequence_length));
  }
  if (in.micro_batch < 1 || in.micro_batch > 1 << 20) {
    v.Add("micro_batch", absl::StrCat("must be between 1 and 1048576, got ", in.micro_batch));
  }
  if (in.offload_parameters && in.zero_stage != 3) {
    v.Add("offload_parameters", "needs ZeRO stage 3 (only ZeRO-3 partitions the parameters)");
  }
  if (in.architecture.num_attention_heads > 0 && in.tensor_parallel > 0 &&
      in.architecture.num_attention_heads % in.tensor_parallel != 0) {
    v.Add("tensor_parallel", absl::StrCat("must divide the ", in.architecture.num_attention_heads,
                                          " attention heads, got ", in.tensor_parallel));
  }
  if (in.architecture.num_layers > 0 && in.pipeline_parallel > in.architecture.num_layers) {
    v.Add("pipeline_parallel",
          absl::StrCat("cannot exceed the ", in.architecture.num_layers, " layers"));
  }
  if (in.fine_tuning != FineTuning::kFull) {
    if (in.lora_rank <= 0) v.Add("lora_rank", "must be positive for LoRA and QLoRA");
    if (!(in.lora_parameters > 0)) v.Add("lora_target_modules", "no adapter parameters");
  }
  if (!std::isfinite(in.overhead_bytes) || in.overhead_bytes < 0) {
    v.Add("overhead_bytes", "must be a non-negative number");
  }
  // Each framework's figures exist for the setups it states them for;
  // anything else would be a figure the framework never stated.
  const Framework framework = ResolveFramework(in);
  const char* field = in.deepspeed_model_states ? "deepspeed_model_states" : "framework";
  const std::string name = FrameworkName(framework);
  if (framework != Framework::kIdealized) {
    if (in.fine_tuning != FineTuning::kFull) {
      v.Add(field, absl::StrCat(name, "'s figures cover full training only"));
    }
    if (in.optimizer != Optimizer::kAdamW) {
      v.Add(field, absl::StrCat(name, "'s figures assume Adam (AdamW)"));
    }
  }
  if (framework == Framework::kDeepSpeed && in.zero_stage < 2) {
    v.Add(field,
          absl::StrCat("DeepSpeed's estimators cover ZeRO-2 and ZeRO-3, got ZeRO-", in.zero_stage));
  }
  if (in.loss != LossImplementation::kTransformers) {
    if (framework != Framework::kDeepSpeed && framework != Framework::kFsdp) {
      v.Add("loss", absl::StrCat("a loss implementation is chosen for DeepSpeed and FSDP (which "
                                 "train transformers models); ",
                                 name, " keeps its own loss"));
    } else if (in.tensor_parallel > 1) {
      v.Add("loss", absl::StrCat(LossName(in.loss),
                                 " does not split the vocabulary: needs tensor_parallel 1, got ",
                                 in.tensor_parallel));
    }
  }
  if (framework == Framework::kFsdp) {
    if (in.zero_stage == 1) {
      v.Add("zero_stage",
            "PyTorch FSDP has no ZeRO-1: 0 = NO_SHARD, 2 = SHARD_GRAD_OP, 3 = FULL_SHARD");
    }
    if (in.offload_optimizer || in.offload_parameters) {
      v.Add(in.offload_optimizer ? "offload_optimizer" : "offload_parameters",
            "FSDP's CPUOffload (parameters and gradients, the step on the CPU) is not modelled");
    }
  }
  if (framework == Framework::kMegatron) {
    if (in.zero_stage > 1) {
      v.Add("zero_stage", absl::StrCat("Megatron-LM shards the optimizer states and no more (its "
                                       "distributed optimizer = ZeRO stage 1): 0 or 1, got ",
                                       in.zero_stage));
    }
    if (in.offload_optimizer || in.offload_parameters) {
      v.Add(in.offload_optimizer ? "offload_optimizer" : "offload_parameters",
            "Megatron-LM's optimizer CPU offload is not modelled");
    }
  }
  return v.ToStatus();
}

// The model states of full training as DeepSpeed's estimators count them
// (docs/code-docs/source/memory.rst; deepspeed/runtime/zero/stage3.py
// estimate_zero3_model_states_mem_needs, stage_1_and_2.py
// estimate_zero2_model_states_mem_needs): 18 bytes per parameter under
// ZeRO-3 (fp16 parameters 2, fp32 parameters 4, fp32 gradients 4, Adam
// moments 8, all over the GPUs) plus 4 bytes per parameter of the largest
// layer gathered; ZeRO-2 4 bytes per parameter whole (fp16 parameters and
// gradients) plus 16 over the GPUs. With the optimizer offloaded the GPU
// keeps only fp16 parameters (2 over the GPUs under ZeRO-3, 2 whole under
// ZeRO-2): gradient shards go to the CPU with the optimizer. Host memory is
// DeepSpeed's CPU figure for one node (its 1.5 buffer factor, zero.Init)
// per GPU of that node.
void AddDeepSpeedModelStates(const TrainingMemoryInput& in, double local,
                             const std::string& local_text, double largest, TrainingMemory* out) {
  const int gpus = in.data_parallel;
  const int per_node = std::min(gpus, 8);
  const int nodes = (gpus + per_node - 1) / per_node;
  const std::string setup = absl::StrCat(
      " (DeepSpeed ",
      in.zero_stage == 3 ? "stage3.py estimate_zero3" : "stage_1_and_2.py estimate_zero2",
      "_model_states_mem_needs)");
  if (in.zero_stage == 3) {
    const double layer = largest / in.tensor_parallel;
    const DeepSpeedEstimate e = DeepSpeedZero3ModelStates(
        local, layer, per_node, nodes, in.offload_optimizer, in.offload_parameters, true);
    if (!in.offload_parameters) {
      Add(&out->device_lines, &out->device_bytes, "weights", 2 * local / gpus,
          absl::StrCat(local_text, " x 2 bytes (fp16/bf16) / ", gpus,
                       " (ZeRO-3) = ", Bytes(2 * local / gpus), setup));
    }
    if (!in.offload_optimizer && !in.offload_parameters) {
      Add(&out->device_lines, &out->device_bytes, "gradients_and_optimizer_states",
          16 * local / gpus,
          absl::StrCat(local_text,
                       " x 16 bytes (fp32 parameters 4 + fp32 gradients 4 + Adam "
                       "moments 8) / ",
                       gpus, " (ZeRO-3) = ", Bytes(16 * local / gpus), setup));
    }
    Add(&out->device_lines, &out->device_bytes, "zero3_gathered_layer", 4 * layer,
        absl::StrCat(Num(largest), " parameters of the largest layer / ", in.tensor_parallel,
                     " tensor x 4 bytes (fp16 parameters and gradients gathered) = ",
                     Bytes(4 * layer), setup));
    if (in.offload_optimizer || in.offload_parameters) {
      Add(&out->host_lines, &out->host_bytes, "offloaded_states", e.cpu_bytes / per_node,
          absl::StrCat(Num(local), " parameters x ", in.offload_parameters ? 18 : 16, " bytes / ",
                       nodes, " node(s) x 1.5 (DeepSpeed's buffer factor, zero.Init) / ", per_node,
                       " GPUs per node = ", Bytes(e.cpu_bytes / per_node), setup));
    }
    return;
  }
  const DeepSpeedEstimate e =
      DeepSpeedZero2ModelStates(local, per_node, nodes, in.offload_optimizer);
  Add(&out->device_lines, &out->device_bytes, "weights", 2 * local,
      absl::StrCat(local_text, " x 2 bytes (fp16/bf16, whole under ZeRO-2) = ", Bytes(2 * local),
                   setup));
  if (in.offload_optimizer) {
    Add(&out->host_lines, &out->host_bytes, "offloaded_states", e.cpu_bytes / per_node,
        absl::StrCat(Num(local), " parameters x max(4 x ", gpus,
                     " GPUs, 16) bytes x 1.5 "
                     "(DeepSpeed's buffer factor) / ",
                     per_node, " GPUs per node = ", Bytes(e.cpu_bytes / per_node), setup));
    return;
  }
  Add(&out->device_lines, &out->device_bytes, "gradients", 2 * local,
      absl::StrCat(local_text, " x 2 bytes (fp16/bf16 gradients, whole) = ", Bytes(2 * local),
                   setup));
  Add(&out->device_lines, &out->device_bytes, "optimizer_states", 16 * local / gpus,
      absl::StrCat(local_text,
                   " x 16 bytes (fp32 parameters 4 + fp32 gradients 4 + Adam moments "
                   "8) / ",
                   gpus, " (ZeRO-2) = ", Bytes(16 * local / gpus), setup));
}

// Megatron-LM's model states (megatron/training/theoretical_memory_usage.py
// compute_weight_and_optimizer_memory; docs/source/api-guide/
// dist_optimizer.md, "bf16 param, fp32 grads" row): bf16 parameters 2 and
// fp32 gradients 4 (its main_grad buffer) on every data-parallel rank, fp32
// main parameters 4 and Adam moments 8 whole (18 bytes) or, with the
// distributed optimizer (ZeRO stage 1 here), divided by d: 6 + 12/d.
void AddMegatronModelStates(const TrainingMemoryInput& in, double local,
                            const std::string& local_text, TrainingMemory* out) {
  const int dp = in.data_parallel;
  const bool distributed = in.zero_stage == 1;
  Add(&out->device_lines, &out->device_bytes, "weights", 2 * local,
      absl::StrCat(local_text, " x 2 bytes (bf16 parameters) = ", Bytes(2 * local)));
  Add(&out->device_lines, &out->device_bytes, "gradients", 4 * local,
      absl::StrCat(local_text, " x 4 bytes (fp32 main_grad buffer) = ", Bytes(4 * local)));
  const double states = 12 * local / (distributed ? dp : 1);
  Add(&out->device_lines, &out->device_bytes, "optimizer_states", states,
      absl::StrCat(local_text, " x 12 bytes (fp32 main parameters 4 + Adam moments 8)",
                   distributed ? absl::StrCat(" / ", dp, " (distributed optimizer)") : "", " = ",
                   Bytes(states), " (Megatron-LM: ", distributed ? "6 + 12/d" : "18",
                   " bytes per parameter)"));
}

// PyTorch FSDP (FullyShardedDataParallel) with bf16 mixed precision over
// fp32 parameters, as torch/distributed/fsdp documents it: each unit's
// FlatParameter is kept in fp32 and sharded over the d ranks (FULL_SHARD and
// SHARD_GRAD_OP) or whole (NO_SHARD); its gradient is reduced in bf16 and
// kept in fp32 at the parameter's size (keep_low_precision_grads=False);
// Adam's two fp32 moments follow the parameter. The unit being computed is
// all-gathered in bf16 with its bf16 gradient (2 + 2 bytes per parameter),
// and the default backward_prefetch=BACKWARD_PRE gathers the next unit's
// bf16 parameters early (2 more). SHARD_GRAD_OP keeps every unit's bf16
// parameters gathered from the forward pass through the backward (2 per
// parameter, whole). The largest unit is the largest layer.
void AddFsdpModelStates(const TrainingMemoryInput& in, double local, const std::string& local_text,
                        double largest, TrainingMemory* out) {
  const int dp = in.data_parallel;
  const bool sharded = in.zero_stage >= 2;
  const int shard = sharded ? dp : 1;
  const std::string over = sharded ? absl::StrCat(" / ", dp, " (", FsdpStrategy(in.zero_stage), ")")
                                   : std::string(" (NO_SHARD: whole)");
  const double layer = largest / in.tensor_parallel;
  Add(&out->device_lines, &out->device_bytes, "weights", 4 * local / shard,
      absl::StrCat(local_text, " x 4 bytes (fp32 FlatParameter)", over, " = ",
                   Bytes(4 * local / shard)));
  if (in.zero_stage == 2) {
    Add(&out->device_lines, &out->device_bytes, "gathered_weights", 2 * local,
        absl::StrCat(local_text,
                     " x 2 bytes (bf16 parameters gathered in the forward pass, kept through "
                     "the backward: SHARD_GRAD_OP) = ",
                     Bytes(2 * local)));
  }
  Add(&out->device_lines, &out->device_bytes, "gradients", 4 * local / shard,
      absl::StrCat(local_text, " x 4 bytes (fp32 gradients)", over, " = ",
                   Bytes(4 * local / shard)));
  Add(&out->device_lines, &out->device_bytes, "optimizer_states", 8 * local / shard,
      absl::StrCat(local_text, " x 8 bytes (Adam moments)", over, " = ", Bytes(8 * local / shard)));
  const double unit = (in.zero_stage == 3 ? 6 : in.zero_stage == 2 ? 2 : 4) * layer;
  const char* what =
      in.zero_stage == 3
          ? " x 6 bytes (bf16 parameters 2 + bf16 gradients 2 of the unit being computed, bf16 "
            "parameters 2 of the unit prefetched)"
      : in.zero_stage == 2 ? " x 2 bytes (bf16 gradients of the unit being computed)"
                           : " x 4 bytes (bf16 parameters 2 + bf16 gradients 2 of the unit being "
                             "computed)";
  Add(&out->device_lines, &out->device_bytes, "fsdp_unit_buffers", unit,
      absl::StrCat(Num(largest), " parameters of the largest layer / ", in.tensor_parallel,
                   " tensor", what, " = ", Bytes(unit)));
}

}  // namespace

double OptimizerBytesPerParameter(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kAdamW:
      return 12;
    case Optimizer::kSgdMomentum:
      return 8;
    case Optimizer::kAdafactor:
      return 4;
    case Optimizer::kAdamW8Bit:
      return 6;
  }
  return 12;
}

Framework ResolveFramework(const TrainingMemoryInput& in) {
  if (in.deepspeed_model_states) return Framework::kDeepSpeed;
  if (in.framework != Framework::kDefault) return in.framework;
  // Full training with AdamW: the framework each ZeRO stage is the default
  // of. Megatron-LM trains without sharding or with its distributed
  // optimizer (ZeRO-1); ZeRO-2 and ZeRO-3 are DeepSpeed's. Other setups
  // (LoRA, other optimizers, offload below ZeRO-2) have no stated figure.
  if (in.fine_tuning != FineTuning::kFull || in.optimizer != Optimizer::kAdamW) {
    return Framework::kIdealized;
  }
  if (in.zero_stage >= 2) return Framework::kDeepSpeed;
  if (!in.offload_optimizer && !in.offload_parameters) return Framework::kMegatron;
  return Framework::kIdealized;
}

Figure DerivedActivationBytesPerLayer(const Architecture& shape, int64_t s, int64_t b, int t,
                                      bool sequence_parallel) {
  const double tokens = static_cast<double>(s) * b;
  const int64_t h = shape.hidden_size;
  const int norms = shape.norms_per_layer > 0 ? shape.norms_per_layer : 2;
  // RMSNorm in transformers upcasts: the fp32 input (4h, saved by pow and
  // mul), the bf16 normalized value (2h, saved by the weight's mul) and the
  // output (2h, saved by the projections that read it). LayerNorm keeps
  // its bf16 input and output (2h + 2h; its fp32 mean and rstd per token
  // are negligible).
  const int64_t per_norm = shape.layer_norm ? 4 * h : 8 * h;
  // Fused attention's saved tensors (AttentionGeometry::ActivationBytesPerToken);
  // Gemma 4's full-attention layers at their own width and KV heads: the
  // larger of the two kinds of layer for every layer (an upper bound).
  const AttentionGeometry sliding = shape.AttentionOf(/*full=*/false);
  const AttentionGeometry full = shape.AttentionOf(/*full=*/true);
  const bool full_larger = shape.HasGlobalGeometry() &&
                           full.ActivationBytesPerToken() > sliding.ActivationBytesPerToken();
  const AttentionGeometry& counted = full_larger ? full : sliding;
  const int64_t attention = counted.ActivationBytesPerToken();
  // MLP: gated (SwiGLU) keeps gate, SiLU(gate), up and their product (the
  // down projection's input), 4 x 2f; plain keeps fc1's output and its
  // activation, 2 x 2f. Mixture of experts: per token, its k experts and the
  // shared ones.
  const int64_t f = shape.intermediate_size > 0 ? shape.intermediate_size : 4 * h;
  const int64_t per_width = shape.gated_mlp ? 8 : 4;
  double mlp = static_cast<double>(per_width) * f;
  std::string mlp_text =
      absl::StrCat(per_width, " x ", f, shape.gated_mlp ? " (gated" : " (plain", " MLP)");
  if (shape.IsMoe()) {
    const int64_t fe = shape.moe_intermediate_size > 0 ? shape.moe_intermediate_size : f;
    const int64_t fs =
        shape.shared_expert_intermediate_size > 0 ? shape.shared_expert_intermediate_size : fe;
    mlp = static_cast<double>(per_width) * (static_cast<double>(shape.num_experts_per_token) * fe +
                                            static_cast<double>(SharedExperts(shape)) * fs);
    mlp_text = absl::StrCat(per_width, " x (", shape.num_experts_per_token, " experts x ", fe,
                            " + ", SharedExperts(shape), " shared x ", fs, ") (MoE)");
  }
  const double replicated = static_cast<double>(norms) * per_norm;
  const double split = attention + mlp;
  const double per_token = replicated / (sequence_parallel ? t : 1) + split / t;
  const double bytes = tokens * per_token;
  // The layer whose attention is counted: queries and keys at td, values
  // and the output at tdv.
  const int64_t ta = counted.query_heads, tg = counted.kv_heads;
  const int64_t td = counted.head_dim, tdv = counted.value_dim;
  const std::string attention_text =
      tdv == td ? absl::StrCat("2 x (", ta, " + ", tg, " + ", tg, " + ", ta, ") x ", td)
                : absl::StrCat("2 x (", ta, " + ", tg, ") x ", td, " + 2 x (", tg, " + ", ta,
                               ") x ", tdv);
  return {bytes, absl::StrCat(s, " tokens x ", b, " sequences x [", norms, " norms x ", per_norm,
                              shape.layer_norm ? " (LayerNorm: input + output)"
                                               : " (RMSNorm: fp32 input 4h + bf16 2h + output 2h)",
                              sequence_parallel && t > 1 ? absl::StrCat(" / ", t) : "",
                              " + (attention ", attention_text, " + 4 x ", ta,
                              full_larger ? " (a full-attention layer's, the larger)" : "", " + ",
                              mlp_text, ")", t > 1 ? absl::StrCat(" / ", t) : "", " = ",
                              Num(per_token), " bytes per token] = ", Bytes(bytes))};
}

Figure RecurrentMixerActivationBytes(const Architecture& shape, int64_t s, int64_t b, int t) {
  const double tokens = static_cast<double>(s) * b;
  const double I = static_cast<double>(shape.ssm_inner_size);
  const double N = shape.ssm_state_size, R = shape.ssm_dt_rank, H = shape.ssm_num_heads,
               G = shape.ssm_num_groups;
  if (shape.recurrent_mixer == RecurrentMixer::kMamba) {
    // selective_scan_cuda.fwd keeps its state at the end of each chunk of
    // 2048 tokens (csrc/selective_scan/selective_scan.cpp: n_chunks, x of
    // batch x dim x n_chunks x 2 dstate in the weights' fp32).
    const double chunks = static_cast<double>((s + 2047) / 2048);
    const double per_token = (2 * 2 * I + 2 * (R + 2 * N) + 2 * 2 * N + 2 * I) / t;
    const double per_sequence = I * chunks * 2 * N * 4 / t;
    const double bytes = tokens * per_token + b * per_sequence;
    return {bytes, absl::StrCat(s, " tokens x ", b, " sequences x (xz 2 x 2 x ", Num(I),
                                " + x_dbl 2 x (", Num(R), " + 2 x ", Num(N), ") + B, C 2 x 2 x ",
                                Num(N), " + scan output 2 x ", Num(I), ")",
                                t > 1 ? absl::StrCat(" / ", t) : "", " + ", b, " sequences x ",
                                Num(chunks), " chunks of 2048 tokens x ", Num(I), " x 2 x ", Num(N),
                                " x 4 (fp32 scan states)", t > 1 ? absl::StrCat(" / ", t) : "",
                                " = ", Bytes(bytes), " (mamba_ssm MambaInnerFn)")};
  }
  if (shape.recurrent_mixer == RecurrentMixer::kMamba2) {
    // The gated RMSNorm's rstd only where the mixer has one (Falcon-H1's
    // mamba_rms_norm false passes no rmsnorm_weight).
    const double rstd = shape.ssm_gated_norm ? 4 * G : 0;
    const double per_token = (2 * (2 * I + 2 * G * N + H) + 2 * I + rstd) / t;
    const double bytes = tokens * per_token;
    return {bytes,
            absl::StrCat(s, " tokens x ", b, " sequences x (zxbcdt 2 x (2 x ", Num(I), " + 2 x ",
                         Num(G), " x ", Num(N), " + ", Num(H), ") + out_x 2 x ", Num(I),
                         shape.ssm_gated_norm ? absl::StrCat(" + rstd 4 x ", Num(G)) : "", ")",
                         t > 1 ? absl::StrCat(" / ", t) : "", " = ", Bytes(bytes),
                         " (mamba_ssm MambaSplitConv1dScanCombinedFn)")};
  }
  if (shape.recurrent_mixer == RecurrentMixer::kGatedDeltaNet) {
    // Qwen3NextGatedDeltaNet's training path (transformers
    // models/qwen3_next/modular_qwen3_next.py with causal-conv1d and
    // flash-linear-attention installed), G key heads of N, H value heads,
    // value width I, conv channels C = 2GN + I, per token:
    //  - causal_conv1d_fn (CausalConv1dFn) saves its input x, the
    //    concatenated q|k|v projections: 2C (its SiLU is recomputed);
    //  - beta = b.sigmoid() saves its output, the tensor the kernel saves as
    //    beta: 2H; g = -A_log.float().exp() * softplus(a.float() + dt_bias):
    //    softplus saves its fp32 input and the product its fp32 output, 8H;
    //  - fla/ops/gated_delta_rule/chunk.py ChunkGatedDeltaRuleFunction
    //    (use_qk_l2norm_in_kernel) saves q and k after l2norm_fwd at the H
    //    value heads (transformers repeat_interleaves them first) 2 x 2HN,
    //    their fp32 rstd 2 x 4H (fla/modules/l2norm.py), v made contiguous by
    //    input_guard 2I, the chunk-local cumsum of g in fp32 4H and A, the
    //    solved WY matrix of 64-token chunks [B, T, H, 64] in bf16, 2 x 64H.
    //    The chunk states h are not saved: chunk_gated_delta_rule_bwd
    //    recomputes them (recompute_w_u_fwd, chunk_gated_delta_rule_fwd_h);
    //  - FusedRMSNormGated (fla/modules/fused_norm_gate.py
    //    LayerNormGatedFunction) saves the kernel's output 2I, the gate z 2I
    //    and its fp32 rstd per head 4H; out_proj saves its input 2I.
    // The projections' input is the layer norm's output, counted with the
    // norms. No padding mask (apply_mask_to_padding_states is a no-op).
    const double C = 2 * G * N + I;
    const double per_head = 2 + 8 + 2 * 4 + 4 + 2 * 64 + 4;  // 154 bytes
    const double per_token = (2 * C + 2 * 2 * H * N + 2 * I + 3 * 2 * I + per_head * H) / t;
    const double bytes = tokens * per_token;
    return {bytes,
            absl::StrCat(s, " tokens x ", b, " sequences x (conv input 2 x ", Num(C),
                         " + q, k 2 x 2 x ", Num(H), " heads x ", Num(N), " + v 2 x ", Num(I),
                         " + norm input, gate, output 3 x 2 x ", Num(I), " + ", Num(per_head),
                         " x ", Num(H), " heads (beta, gate, rstd, WY matrix of 64-token chunks))",
                         t > 1 ? absl::StrCat(" / ", t) : "", " = ", Bytes(bytes),
                         " (flash-linear-attention chunk_gated_delta_rule, causal-conv1d)")};
  }
  if (shape.recurrent_mixer == RecurrentMixer::kShortConv) {
    // Lfm2ShortConv's forward (transformers models/lfm2/modeling_lfm2.py,
    // slow_forward; causal_conv1d_fn saves the same input): the products
    // B * x and C * conv keep in_proj's output B|C|x (3I), conv1d saves its
    // input B * x (I), the product its output (I), out_proj its input (I).
    const double per_token = 2 * (3 * I + I + I + I) / t;
    const double bytes = tokens * per_token;
    return {bytes, absl::StrCat(s, " tokens x ", b, " sequences x (B|C|x 2 x 3 x ", Num(I),
                                " + conv input, output and C x conv 3 x 2 x ", Num(I), ")",
                                t > 1 ? absl::StrCat(" / ", t) : "", " = ", Bytes(bytes),
                                " (transformers Lfm2ShortConv)")};
  }
  if (shape.recurrent_mixer == RecurrentMixer::kKimiDelta) {
    // Kimi Delta Attention (Kimi Linear's modeling_kimi.py on
    // flash-linear-attention's primitives), modelled on the Gated DeltaNet
    // path above with what KDA changes, per token: the three
    // ShortConvolutions save their inputs (the q|k|v projections, 2C); q and
    // k after l2norm 2 x 2GN, v 2I; the decay gate is per key channel, not
    // per head: fused_kda_gate's bf16 input and fp32 output and chunk_kda's
    // fp32 cumsum, (2 + 4 + 4) x GN; the gates' low-rank halves (f_a, g_a
    // outputs) 2 x 2N; the gated norm's input, gate and output and o_proj's
    // input 3 x 2I; per head beta 2, the q/k rstd 2 x 4, a 64-token chunk
    // matrix 2 x 64 and the norm's rstd 4 (142 bytes). Not measured against a
    // training run: the chunk kernels' saved tensors follow Gated DeltaNet's.
    const double C = 2 * G * N + I;
    const double per_head = 2 + 2 * 4 + 2 * 64 + 4;  // 142 bytes
    const double per_token =
        (2 * C + 2 * 2 * G * N + 2 * I + 10 * G * N + 2 * 2 * N + 3 * 2 * I + per_head * H) / t;
    const double bytes = tokens * per_token;
    return {bytes,
            absl::StrCat(s, " tokens x ", b, " sequences x (conv inputs 2 x ", Num(C),
                         " + q, k 2 x 2 x ", Num(G), " heads x ", Num(N), " + v 2 x ", Num(I),
                         " + decay gate 10 x ", Num(G * N), " + low-rank gates 2 x 2 x ", Num(N),
                         " + norm input, gate, output 3 x 2 x ", Num(I), " + ", Num(per_head),
                         " x ", Num(H), " heads (beta, rstd, chunk matrix))",
                         t > 1 ? absl::StrCat(" / ", t) : "", " = ", Bytes(bytes),
                         " (modelled on flash-linear-attention's Gated DeltaNet path)")};
  }
  return {0, "no Mamba, Mamba-2, Gated DeltaNet, short-conv or Kimi Delta Attention mixer"};
}

Figure HybridActivationBytes(const Architecture& shape, int64_t s, int64_t b, int t,
                             bool sequence_parallel, Figure* largest) {
  const double tokens = static_cast<double>(s) * b;
  const int64_t h = shape.hidden_size;
  const int norms = shape.norms_per_layer > 0 ? shape.norms_per_layer : 2;
  const double per_norm = (shape.layer_norm ? 4.0 : 8.0) * h / (sequence_parallel ? t : 1);
  // The attention and MLP tensors of a transformers layer
  // (DerivedActivationBytesPerLayer) without its norms.
  double attention = 0;
  if (shape.AttentionLayers() > 0 && shape.num_attention_heads > 0) {
    const AttentionGeometry layer = shape.AttentionOf(/*full=*/false);
    // Qwen3NextAttention's output gate (modular_qwen3_next.py: attn_output
    // * torch.sigmoid(gate)) keeps the sigmoid's output and the product
    // o_proj reads, 2 x 2ad more; the kernel's output is saved as before.
    const double gate = shape.attention_output_gate ? 4.0 * layer.query_heads * layer.head_dim : 0;
    attention = (static_cast<double>(layer.ActivationBytesPerToken()) + gate) / t;
  }
  const double per_width = shape.gated_mlp ? 8 : 4;
  const double f = shape.intermediate_size > 0 ? shape.intermediate_size : 4.0 * h;
  const int mlp_layers = shape.MlpLayers();
  const int dense_layers =
      shape.IsMoe() ? std::min(shape.num_dense_layers, mlp_layers) : mlp_layers;
  const int moe_layers = mlp_layers - dense_layers;
  const double dense = per_width * f / t;
  double moe = 0;
  if (moe_layers > 0) {
    const double fe = shape.moe_intermediate_size > 0 ? shape.moe_intermediate_size : f;
    const double fs =
        shape.shared_expert_intermediate_size > 0 ? shape.shared_expert_intermediate_size : fe;
    moe = per_width * (shape.num_experts_per_token * fe + SharedExperts(shape) * fs) / t;
  }
  const Figure mixer = RecurrentMixerActivationBytes(shape, s, b, t);
  // Nemotron-NAS: each layer's MLP at its width, a norm before each block
  // a layer has.
  const bool widths = shape.HasLayerWidths();
  const double norm_count = widths ? shape.AttentionLayers() + shape.MlpLayers()
                                   : static_cast<double>(norms) * shape.num_layers;
  const double dense_total = widths ? per_width * shape.MlpWidthTotal() / t : dense * dense_layers;
  const double bytes = tokens * (norm_count * per_norm + attention * shape.AttentionLayers() +
                                 dense_total + moe * moe_layers) +
                       mixer.value * shape.num_recurrent_layers;
  if (largest != nullptr) {
    const double mlp = std::max(dense_layers > 0 ? dense : 0.0, moe);
    const double one = tokens * (norms * per_norm + attention + mlp) + mixer.value;
    largest->value = one;
    largest->arithmetic = absl::StrCat(
        s, " tokens x ", b, " sequences x (", norms, " norms x ", Num(per_norm),
        attention > 0 ? absl::StrCat(" + attention ", Num(attention)) : "",
        mlp > 0 ? absl::StrCat(" + MLP ", Num(mlp)) : "", ") + one mixer ", Bytes(mixer.value),
        " = ", Bytes(one), " (a layer with every block the model has: an upper bound)");
  }
  return {
      bytes,
      absl::StrCat(
          s, " tokens x ", b, " sequences x (",
          widths ? absl::StrCat(Num(norm_count), " norms (one before each block a layer has) x ")
                 : absl::StrCat(shape.num_layers, " layers x ", norms, " norms x "),
          Num(per_norm),
          shape.layer_norm ? " (LayerNorm: input + output)"
                           : " (RMSNorm: fp32 input 4h + bf16 2h + output 2h)",
          attention > 0
              ? absl::StrCat(" + ", shape.AttentionLayers(), " attention layers x ", Num(attention))
              : "",
          widths ? absl::StrCat(" + ", dense_layers, " MLP layers of ", Num(shape.MlpWidthTotal()),
                                " widths in all x ", per_width, t > 1 ? absl::StrCat(" / ", t) : "")
          : dense_layers > 0 ? absl::StrCat(" + ", dense_layers, " MLP layers x ", Num(dense))
                             : "",
          moe_layers > 0 ? absl::StrCat(" + ", moe_layers, " MoE layers x ", Num(moe)) : "",
          " bytes per token)",
          shape.num_recurrent_layers > 0
              ? absl::StrCat(" + ", shape.num_recurrent_layers, " recurrent layers x [",
                             mixer.arithmetic, "]")
              : "",
          " = ", Bytes(bytes))};
}

std::string LossName(LossImplementation loss) {
  switch (loss) {
    case LossImplementation::kChunked:
      return "torchtune's CEWithChunkedOutputLoss (8 output chunks, eager; "
             "torchtune/modules/loss/ce_chunked_output_loss.py at bd2a0fc)";
    case LossImplementation::kLigerFusedLinear:
      return "Liger-Kernel's fused linear cross entropy "
             "(src/liger_kernel/ops/fused_linear_cross_entropy.py at ead96b6)";
    case LossImplementation::kTransformers:
      break;
  }
  return "transformers' ForCausalLMLoss (src/transformers/loss/loss_utils.py)";
}

LossMemory LossBytes(LossImplementation loss, int64_t s, int64_t b, int64_t h, int64_t vocab,
                     int t) {
  LossMemory out;
  const double tokens = static_cast<double>(s) * b;
  const double elements = tokens * vocab / t;
  const std::string what =
      absl::StrCat(s, " tokens x ", b, " sequences x ", vocab, " vocabulary / ", t, " tensor");
  switch (loss) {
    case LossImplementation::kTransformers: {
      // loss_utils.py ForCausalLMLoss: `logits.float()` then cross_entropy
      // = log_softmax + nll_loss. Autograd saves log_softmax's fp32 output
      // (derivatives.yaml: _log_softmax_backward_data reads `result`;
      // nll_loss saves the same tensor); ToCopyBackward keeps nothing.
      // Forward: bf16 2 + fp32 copy 4 + output 4 = 10 per element; backward,
      // at log_softmax: saved output 4 + nll_loss's dense gradient 4 + the
      // gradient returned for the fp32 logits 4 = 12 (the bf16 logits gone
      // with the model's output): the peak.
      out.logits = {4 * elements,
                    absl::StrCat(what,
                                 " x 4 bytes (fp32 logits for the loss, then their fp32 "
                                 "gradient) = ",
                                 Bytes(4 * elements))};
      out.buffers = {
          8 * elements,
          absl::StrCat(what,
                       " x 8 bytes (log_softmax's fp32 output, saved for the backward pass, 4 + "
                       "the fp32 gradient nll_loss returns for it 4, held while the logits' "
                       "gradient is computed: transformers' ForCausalLMLoss, 12 bytes per element "
                       "with the logits line; the forward pass holds 10: bf16 logits 2 + their "
                       "fp32 copy 4 + log_softmax's output 4) = ",
                       Bytes(8 * elements))};
      break;
    }
    case LossImplementation::kChunked: {
      // torchtune TransformerDecoder.chunked_output computes the output
      // projection per chunk of tokens (tensor_split into 8) and returns
      // the list: every chunk's bf16 logits live until the loss returns
      // (the recipes `del logits` before backward). CEWithChunkedOutputLoss
      // then, chunk by chunk, upcasts (`logits.float()`, saved by nothing)
      // and calls cross_entropy, whose log_softmax saves its fp32 output for
      // the backward pass. At the last chunk: bf16 logits 2 + the saved
      // outputs of all chunks 4 + that chunk's fp32 copy 4/8 = 6.5 bytes per
      // element; the backward pass, chunk by chunk, holds at most 4 + 2 x
      // 4/8 + 2/8 = 5.25. Eager: compiling compute_cross_entropy (the
      // recipes' compile=True) saves less; not counted.
      const double chunks = kTorchtuneOutputChunks;
      out.logits = {2 * elements, absl::StrCat(what,
                                               " x 2 bytes (bf16 logits of all 8 output "
                                               "chunks, kept until the loss returns) = ",
                                               Bytes(2 * elements))};
      const double buffers = 4 * elements + 4 * elements / chunks;
      out.buffers = {
          buffers,
          absl::StrCat(what,
                       " x (4 + 4/8) bytes (log_softmax's fp32 output of every chunk, saved for "
                       "the backward pass, 4, + the fp32 copy of the chunk being computed, 4 / 8 "
                       "chunks: torchtune's CEWithChunkedOutputLoss, 6.5 bytes per element with "
                       "the logits line) = ",
                       Bytes(buffers))};
      break;
    }
    case LossImplementation::kLigerFusedLinear: {
      // fused_linear_cross_entropy_forward: tokens BT in chunks of
      // next_power_of_2(ceil(BT / ceil(V / H))) rows; per chunk the bf16
      // logits (input dtype) are computed and turned into their gradient in
      // place by liger_cross_entropy_kernel; the gradients of the input
      // (zeros_like(_input): BT x H, bf16) and of the weight
      // (zeros_like(weight): V x H in the weight's bf16) are accumulated in
      // the forward pass and saved for the backward pass, with the fp32
      // per-token loss loss_1d (4 x BT). `grad_weight += torch.mm(...).float()`
      // makes a bf16 V x H product and its fp32 copy (2 + 4 per weight
      // element) while the chunk's logits live: the peak.
      const int64_t inc_factor = (vocab + h - 1) / h;
      const int64_t rows = (s * b + inc_factor - 1) / inc_factor;
      int64_t chunk = 1;
      while (chunk < rows) chunk *= 2;
      const double chunk_logits = 2.0 * static_cast<double>(chunk) * vocab;
      out.logits = {chunk_logits,
                    absl::StrCat(chunk, " tokens (next power of 2 of ", s * b, " / ceil(", vocab,
                                 " / ", h, ")) x ", vocab,
                                 " vocabulary x 2 bytes (bf16 logits of one chunk, turned into "
                                 "their gradient in place) = ",
                                 Bytes(chunk_logits))};
      const double weight = static_cast<double>(vocab) * h;
      const double buffers = 2 * tokens * h + 4 * tokens + 8 * weight;
      out.buffers = {
          buffers,
          absl::StrCat("gradient of the input ", Num(tokens), " tokens x ", h,
                       " hidden x 2 bytes + fp32 loss per token ", Num(tokens),
                       " x 4 bytes + the output projection's weight gradient ", vocab, " x ", h,
                       " x (2 bytes accumulated + 2 + 4 for the bf16 product and its fp32 copy) "
                       "(Liger's fused linear cross entropy, gradients computed in the forward "
                       "pass) = ",
                       Bytes(buffers))};
      break;
    }
  }
  return out;
}

Figure MegatronActivationBytesPerLayer(int64_t s, int64_t b, int64_t h, int64_t f, int t,
                                       bool sequence_parallel) {
  const double sbh = static_cast<double>(s) * b * h;
  const double width = f > 0 ? static_cast<double>(f) : 4.0 * h;
  const double factor = 18 + 4 * width / h;
  // Megatron's formula assumes sequence parallelism; without it the 10
  // replicated s·b·h of Korthikanti's table 2 stay whole on every rank.
  const double bytes =
      sequence_parallel || t == 1 ? sbh * factor / t : sbh * (factor / t + 10.0 * (1 - 1.0 / t));
  return {bytes,
          absl::StrCat(s, " tokens x ", b, " sequences x ", h, " hidden x (18 + 4 x ", Num(width),
                       " / ", h, ")", t > 1 ? absl::StrCat(" / ", t, " tensor") : "",
                       t > 1 && !sequence_parallel
                           ? absl::StrCat(" + 10 x (1 - 1/", t, ") (no sequence parallel)")
                           : "",
                       " = ", Bytes(bytes), " (Megatron-LM compute_activation_memory)")};
}

Figure ActivationBytesPerLayer(int64_t s, int64_t b, int64_t h, int64_t a, int t,
                               bool sequence_parallel, Recompute recompute) {
  const double sbh = static_cast<double>(s) * b * h;
  const double attention = 5.0 * a * s / h;  // softmax input, output and dropout mask
  const std::string prefix = absl::StrCat(s, " tokens x ", b, " sequences x ", h, " hidden");
  if (recompute == Recompute::kFull) {
    const double bytes = 2 * sbh / (sequence_parallel ? t : 1);
    return {bytes,
            absl::StrCat(prefix, " x 2 bytes (the layer input only)",
                         sequence_parallel ? absl::StrCat(" / ", t, " (sequence parallel)") : "",
                         " = ", Bytes(bytes))};
  }
  const double kept_attention = recompute == Recompute::kSelective ? 0 : attention;
  double factor = 0;
  std::string terms;
  if (t == 1) {
    factor = 34 + kept_attention;
    terms = recompute == Recompute::kSelective
                ? "34"
                : absl::StrFormat("(34 + 5 x %d heads x %d / %d = %.6g)", a, s, h, factor);
  } else if (sequence_parallel) {
    factor = (34 + kept_attention) / t;
    terms = recompute == Recompute::kSelective
                ? absl::StrFormat("34 / %d", t)
                : absl::StrFormat("(34 + 5 x %d x %d / %d) / %d = %.6g", a, s, h, t, factor);
  } else {
    factor = 10 + 24.0 / t + kept_attention / t;
    terms = recompute == Recompute::kSelective
                ? absl::StrFormat("(10 + 24 / %d = %.6g)", t, factor)
                : absl::StrFormat("(10 + 24 / %d + 5 x %d x %d / (%d x %d) = %.6g)", t, a, s, h, t,
                                  factor);
  }
  const double bytes = sbh * factor;
  return {bytes, absl::StrCat(prefix, " x ", terms, " bytes = ", Bytes(bytes))};
}

absl::StatusOr<Figure> LoraParameters(const Architecture& shape, int rank,
                                      const std::vector<std::string>& target_modules) {
  FieldViolations v;
  if (rank <= 0) v.Add("lora_rank", "must be positive");
  if (shape.num_layers <= 0 || shape.hidden_size <= 0 || shape.num_attention_heads <= 0) {
    v.Add("architecture", "LoRA needs the model's layers, hidden size and heads");
  }
  if (absl::Status s = v.ToStatus(); !s.ok()) return s;
  if (target_modules.empty()) {
    return InvalidFieldError("lora_target_modules", "name at least one module");
  }
  const int64_t h = shape.hidden_size;
  const int64_t f = shape.intermediate_size;
  // The adapters of one layer whose heads are d wide over g KV heads
  // (Gemma 4's full-attention layers: their own; no v_proj to adapt when
  // their values come from the keys).
  struct Group {
    int layers;
    const char* label;
    double per_layer = 0;
    std::vector<std::string> parts;
    bool whole_model = false;  // per_layer is the whole model's (label names where)
  };
  const auto group = [&](int layers, const AttentionGeometry& kind,
                         const std::vector<std::string>& modules) -> absl::StatusOr<Group> {
    Group out{.layers = layers, .label = " layers x ("};
    // Values and the output at the value width (MiMo-V2-Flash's 128).
    const bool values = kind.has_values;
    const int64_t q = kind.query_heads * kind.head_dim, k = kind.kv_heads * kind.head_dim;
    const int64_t values_width = kind.kv_heads * kind.value_dim;
    const int64_t o = kind.query_heads * kind.value_dim;
    for (const std::string& module : modules) {
      int64_t in = 0, width = 0;
      if (module == "q")
        in = h, width = q;
      else if (module == "k")
        in = h, width = k;
      else if (module == "v")
        in = h, width = values ? values_width : 0;
      else if (module == "o")
        in = o, width = h;
      else if ((module == "gate" && shape.gated_mlp) || module == "up")
        in = h, width = f;
      else if (module == "down")
        in = f, width = h;
      else {
        return InvalidFieldError(
            "lora_target_modules",
            absl::StrCat("unknown module \"", module,
                         "\" (q, k, v, o, up, down, and gate for gated MLPs)"));
      }
      if (module == "v" && !values) {
        out.parts.push_back("no v (values from the keys)");
        continue;
      }
      if (in <= 0 || width <= 0) {
        return InvalidFieldError(
            "lora_target_modules",
            absl::StrCat("the architecture lacks the size of \"", module, "\""));
      }
      out.per_layer += static_cast<double>(rank) * (in + width);
      out.parts.push_back(absl::StrCat(module, " ", rank, " x (", in, " + ", width, ")"));
    }
    return out;
  };
  std::vector<Group> groups;
  std::vector<std::string> modules = target_modules;
  std::optional<Group> mlp_widths;
  if (shape.HasLayerWidths()) {
    // Nemotron-NAS: q, k, v and o in the layers with attention; the MLP's
    // modules in those with an MLP, each at its layer's width: rank x
    // (layers x h + the widths added up) per module.
    std::vector<std::string> attention, mlp;
    for (const std::string& module : target_modules) {
      (module == "gate" || module == "up" || module == "down" ? mlp : attention).push_back(module);
    }
    modules = attention;
    if (!mlp.empty()) {
      absl::StatusOr<Group> one = group(1, shape.AttentionOf(false), mlp);  // validates the names
      if (!one.ok()) return one.status();
      Group widths{.layers = 1, .label = "every layer with an MLP (", .whole_model = true};
      const double per_module =
          static_cast<double>(rank) *
          (static_cast<double>(shape.MlpLayers()) * h + shape.MlpWidthTotal());
      for (const std::string& module : mlp) {
        widths.per_layer += per_module;
        widths.parts.push_back(absl::StrCat(module, " ", rank, " x (", shape.MlpLayers(), " x ", h,
                                            " + ", Num(shape.MlpWidthTotal()),
                                            ", the layers' MLP widths added up)"));
      }
      mlp_widths = std::move(widths);
    }
  }
  const int full = shape.HasGlobalGeometry() ? shape.FullAttentionLayers() : 0;
  const int attention_layers = shape.HasLayerWidths() ? shape.AttentionLayers() : shape.num_layers;
  for (const auto& [layers, kind] :
       {std::pair<int, AttentionGeometry>{attention_layers - full, shape.AttentionOf(false)},
        {full, shape.AttentionOf(true)}}) {
    if (layers <= 0 || modules.empty()) continue;
    absl::StatusOr<Group> one = group(layers, kind, modules);
    if (!one.ok()) return one.status();
    if (full > 0) {
      one->label = groups.empty() ? " sliding-window layers x (" : " full-attention layers x (";
    }
    groups.push_back(*std::move(one));
  }
  if (mlp_widths.has_value()) groups.push_back(*std::move(mlp_widths));
  double total = 0;
  std::vector<std::string> texts;
  for (const Group& one : groups) {
    total += one.per_layer * one.layers;
    texts.push_back(absl::StrCat(one.whole_model ? "" : absl::StrCat(one.layers), one.label,
                                 absl::StrJoin(one.parts, " + "), ")"));
  }
  return Figure{
      total, absl::StrCat(absl::StrJoin(texts, " + "), " = ", Num(total), " adapter parameters")};
}

absl::StatusOr<TrainingMemory> EstimateTrainingMemory(const TrainingMemoryInput& in) {
  if (absl::Status s = Validate(in); !s.ok()) return s;
  TrainingMemory out;
  const int tp = in.tensor_parallel, pp = in.pipeline_parallel, dp = in.data_parallel;
  const double model_parallel = static_cast<double>(tp) * pp;
  const double local = (in.parameters - in.expert_parameters) / model_parallel +
                       in.expert_parameters / (model_parallel * in.expert_parallel);
  std::string local_text =
      absl::StrCat(Num(in.parameters), " parameters / (", tp, " tensor x ", pp, " pipeline)");
  if (in.expert_parameters > 0 && in.expert_parallel > 1) {
    local_text =
        absl::StrCat("(", Num(in.parameters - in.expert_parameters), " dense + ",
                     Num(in.expert_parameters), " expert / ", in.expert_parallel,
                     " expert-parallel) parameters / (", tp, " tensor x ", pp, " pipeline)");
  }
  const double optimizer_bytes = OptimizerBytesPerParameter(in.optimizer);
  const double gradient_bytes = in.fp32_gradients ? 4 : 2;
  auto shard = [&](int from_stage) { return in.zero_stage >= from_stage ? dp : 1; };
  auto shard_text = [&](int from_stage) {
    return in.zero_stage >= from_stage ? absl::StrCat(" / ", dp, " (ZeRO-", in.zero_stage, ")")
                                       : std::string();
  };

  const double largest =
      in.largest_layer_parameters > 0
          ? in.largest_layer_parameters
          : static_cast<double>(in.architecture.vocab_size) * in.architecture.hidden_size;

  const Framework framework = ResolveFramework(in);
  out.framework = framework;
  out.allocation = Allocation(framework, in);

  // Trainable parameters and frozen base weights.
  double trainable = local;
  if (framework == Framework::kDeepSpeed) {
    AddDeepSpeedModelStates(in, local, local_text, largest, &out);
    out.notes.push_back(
        "Model states as DeepSpeed allocates them (its estimators in deepspeed/runtime/zero/, "
        "docs/code-docs/source/memory.rst): 18 bytes per parameter under ZeRO-3, not the ZeRO "
        "paper's 16; with the optimizer offloaded the gradient shards leave the GPU too.");
  } else if (framework == Framework::kMegatron) {
    AddMegatronModelStates(in, local, local_text, &out);
  } else if (framework == Framework::kFsdp) {
    AddFsdpModelStates(in, local, local_text, largest, &out);
  } else if (in.fine_tuning == FineTuning::kFull) {
    const double weights = 2 * local / (in.offload_parameters ? 1 : shard(3));
    const std::string text =
        absl::StrCat(local_text, " x 2 bytes (bf16)", shard_text(3), " = ", Bytes(weights));
    if (in.offload_parameters) {
      Add(&out.host_lines, &out.host_bytes, "weights", weights / dp,
          absl::StrCat(local_text, " x 2 bytes (bf16) / ", dp,
                       " (ZeRO-3, offloaded) = ", Bytes(weights / dp)));
    } else {
      Add(&out.device_lines, &out.device_bytes, "weights", weights, text);
    }
  } else {
    const bool qlora = in.fine_tuning == FineTuning::kQlora;
    const double bits = qlora ? kNf4DoubleQuantBitsPerParameter : 16;
    const double base = local * bits / 8;
    Add(&out.device_lines, &out.device_bytes, "frozen_weights", base,
        absl::StrCat(local_text, " x ", Num(bits), " bits (",
                     qlora ? "NF4 with double quantization" : "bf16",
                     ", frozen) / 8 = ", Bytes(base)));
    trainable = in.lora_parameters / model_parallel;
    local_text = absl::StrCat(Num(in.lora_parameters), " adapter parameters (rank ", in.lora_rank,
                              ") / ", Num(model_parallel), " model-parallel");
    const double adapters = 2 * trainable;
    Add(&out.device_lines, &out.device_bytes, "adapter_weights", adapters,
        absl::StrCat(local_text, " x 2 bytes (bf16) = ", Bytes(adapters)));
  }

  if (framework == Framework::kIdealized) {
    const double gradients = gradient_bytes * trainable / shard(2);
    const std::string gradient_text = absl::StrCat(local_text, " x ", Num(gradient_bytes),
                                                   " bytes (", in.fp32_gradients ? "fp32" : "bf16",
                                                   ")", shard_text(2), " = ", Bytes(gradients));
    if (in.offload_parameters) {
      Add(&out.host_lines, &out.host_bytes, "gradients", gradients, gradient_text + " (offloaded)");
    } else {
      Add(&out.device_lines, &out.device_bytes, "gradients", gradients, gradient_text);
    }
    const double states = optimizer_bytes * trainable / shard(1);
    const std::string states_text =
        absl::StrCat(local_text, " x ", Num(optimizer_bytes), " bytes (",
                     OptimizerName(in.optimizer), ")", shard_text(1), " = ", Bytes(states));
    if (in.offload_optimizer) {
      Add(&out.host_lines, &out.host_bytes, "optimizer_states", states,
          states_text + " (offloaded)");
    } else {
      Add(&out.device_lines, &out.device_bytes, "optimizer_states", states, states_text);
    }

    // ZeRO-3 gathers each layer whole before using it.
    if (in.zero_stage == 3 && in.fine_tuning == FineTuning::kFull && largest > 0) {
      Add(&out.device_lines, &out.device_bytes, "zero3_gathered_layer", 4 * largest / tp,
          absl::StrCat(
              Num(largest), " parameters of the largest layer / ", tp,
              " tensor x 4 bytes (bf16 weights and gradients) = ", Bytes(4 * largest / tp)));
    }
  }  // the idealized model states

  // Activations: the first pipeline stage keeps `pp` micro-batches of
  // layers/pp layers in flight under 1F1B, i.e. all layers' worth.
  const Architecture& shape = in.architecture;
  // Every recurrent mixer the estimator knows (Mamba, Mamba-2, Gated
  // DeltaNet, short conv, Kimi Delta Attention): what their fused kernels
  // save (HybridActivationBytes), whatever the framework.
  const bool ssm = shape.IsHybrid() && shape.recurrent_mixer != RecurrentMixer::kUnknown;
  if (shape.num_layers > 0 && shape.hidden_size > 0 && (shape.num_attention_heads > 0 || ssm)) {
    const int64_t s = in.sequence_length, b = in.micro_batch;
    // One layer's activations as the framework's implementation keeps them
    // (the idealized count: Korthikanti et al.'s table 2 as published).
    auto layer_of = [&](Recompute recompute) -> Figure {
      if (framework == Framework::kIdealized || recompute == Recompute::kFull) {
        return ActivationBytesPerLayer(s, b, shape.hidden_size, shape.num_attention_heads, tp,
                                       in.sequence_parallel, recompute);
      }
      if (framework == Framework::kMegatron) {
        return MegatronActivationBytesPerLayer(s, b, shape.hidden_size, shape.intermediate_size, tp,
                                               in.sequence_parallel);
      }
      return DerivedActivationBytesPerLayer(shape, s, b, tp, in.sequence_parallel);
    };
    const char* source =
        framework == Framework::kIdealized ? " (Korthikanti et al. 2022)"
        : framework == Framework::kMegatron
            ? " (Megatron-LM's formula)"
            : " (the tensors autograd keeps in a transformers layer, FlashAttention-2)";
    const std::string stages =
        pp > 1 ? absl::StrCat(" (1F1B: the first stage holds ", pp, " micro-batches of ",
                              shape.num_layers, "/", pp, " layers)")
               : "";
    Figure largest_hybrid_layer;
    // Nemotron-NAS's layers differ: counted block by block, as a hybrid's.
    const bool layers_differ = shape.HasLayerWidths();
    if ((ssm || layers_differ) && in.recompute != Recompute::kFull) {
      const Figure all = HybridActivationBytes(shape, s, b, tp, in.sequence_parallel, nullptr);
      Add(&out.device_lines, &out.device_bytes, "activations", all.value,
          absl::StrCat("all layers", stages, ": ", all.arithmetic,
                       ssm ? " (a transformers layer's norms, attention and MLP tensors; the "
                             "mixers' fused kernels)"
                           : " (a transformers layer's norms, attention and MLP tensors, each "
                             "block where a layer has one)"));
      if (layers_differ &&
          (framework == Framework::kIdealized || framework == Framework::kMegatron)) {
        out.notes.push_back(
            "Layers that differ (Nemotron-NAS block_configs): activations counted block by "
            "block as a transformers layer keeps them, not by this framework's per-layer "
            "formula.");
      }
    } else {
      const Figure layer = layer_of(in.recompute);
      const double activations = layer.value * shape.num_layers;
      Add(&out.device_lines, &out.device_bytes, "activations", activations,
          absl::StrCat(shape.num_layers, " layers", stages, " x [", layer.arithmetic,
                       "] = ", Bytes(activations),
                       in.recompute == Recompute::kFull ? " (the layer inputs)" : source));
    }
    if (ssm) {
      HybridActivationBytes(shape, s, b, tp, in.sequence_parallel, &largest_hybrid_layer);
      if (framework == Framework::kIdealized || framework == Framework::kMegatron) {
        out.notes.push_back(
            "Recurrent layers (Mamba, Mamba-2, Gated DeltaNet, short conv, Kimi Delta "
            "Attention): activations counted as their fused kernels (mamba_ssm, "
            "flash-linear-attention) save them and as a transformers layer keeps its norms, "
            "attention and MLP tensors, not by this framework's transformer formula; Kimi Delta "
            "Attention's are modelled on Gated DeltaNet's, not measured.");
      }
    }
    // The loss over the vocabulary (s·b·V elements per device): DeepSpeed
    // and FSDP run a Hugging Face transformers model, whose loss is
    // transformers' ForCausalLMLoss unless another implementation is named
    // (LossBytes counts each from its code). The idealized count and
    // Megatron (its fused vocab-parallel cross entropy) keep one fp32
    // tensor, 4 bytes per element.
    const bool transformers_loss =
        framework == Framework::kDeepSpeed || framework == Framework::kFsdp;
    const double vocab_elements =
        static_cast<double>(in.sequence_length) * in.micro_batch * shape.vocab_size / tp;
    const LossMemory loss = LossBytes(in.loss, in.sequence_length, in.micro_batch,
                                      shape.hidden_size, shape.vocab_size, tp);
    const double loss_peak =
        shape.vocab_size > 0 ? (transformers_loss ? loss.peak() : 4 * vocab_elements) : 0;
    if (in.recompute == Recompute::kFull) {
      // Full recomputation keeps each layer's input, but the backward pass
      // recomputes one layer at a time and that layer holds its
      // activations while its gradients are taken (Korthikanti et al. 2022
      // count only the inputs). The idealized count assumes fused attention
      // there: no 5as/h.
      const Figure working =
          ssm ? largest_hybrid_layer
              : layer_of(framework == Framework::kIdealized ? Recompute::kSelective
                                                            : Recompute::kNone);
      if (transformers_loss && loss_peak > 0 && pp == 1) {
        // The loss's buffers are freed before the last layer is recomputed:
        // the two never coexist, the peak is the larger of them (with
        // pipeline stages the loss is on the last one, not here).
        const double beyond = std::max(0.0, working.value - loss_peak);
        Add(&out.device_lines, &out.device_bytes, "recomputed_layer", beyond,
            absl::StrCat("the layer being recomputed in the backward pass holds its activations (",
                         working.arithmetic, source,
                         ") after the loss's buffers are freed: counted beyond the loss's ",
                         Bytes(loss_peak), " = ", Bytes(beyond)));
      } else {
        Add(&out.device_lines, &out.device_bytes, "recomputed_layer", working.value,
            absl::StrCat(
                "the layer being recomputed in the backward pass holds its activations: ",
                working.arithmetic,
                framework == Framework::kIdealized ? " (fused attention: no 5as/h term)" : source));
      }
    }
    if (in.recompute == Recompute::kNone && framework == Framework::kIdealized) {
      out.notes.push_back(
          "Activations keep the attention scores (the 5as/h term). Fused attention kernels such as "
          "FlashAttention never store them: selective recomputation models that.");
    }
    if (shape.vocab_size > 0) {
      const std::string elements =
          absl::StrCat(in.sequence_length, " tokens x ", in.micro_batch, " sequences x ",
                       shape.vocab_size, " vocabulary / ", tp, " tensor");
      const double logits = transformers_loss ? loss.logits.value : 4 * vocab_elements;
      const std::string text =
          transformers_loss
              ? loss.logits.arithmetic
              : absl::StrCat(elements, " x 4 bytes (fp32 logits for the loss) = ", Bytes(logits));
      const double buffers = transformers_loss ? loss.buffers.value : 0;
      const std::string& buffers_text = loss.buffers.arithmetic;
      if (pp == 1) {
        Add(&out.device_lines, &out.device_bytes, "logits", logits, text);
        if (transformers_loss) {
          Add(&out.device_lines, &out.device_bytes, "loss_buffers", buffers, buffers_text);
        }
      } else {
        out.notes.push_back(
            absl::StrCat("The last pipeline stage also holds the logits: ", text,
                         transformers_loss ? absl::StrCat("; and ", buffers_text) : std::string(),
                         "; it keeps fewer micro-batches of activations."));
      }
      if (transformers_loss) {
        out.notes.push_back(
            in.loss == LossImplementation::kTransformers
                ? "The loss is transformers' (an fp32 copy of the logits, log_softmax and "
                  "nll_loss: 12 bytes per token and vocabulary entry at its peak); a fused or "
                  "chunked cross entropy (--loss=chunked for torchtune's, --loss=liger for "
                  "Liger's fused linear cross entropy) keeps less."
                : absl::StrCat("The loss is ", LossName(in.loss),
                               ", as asked; transformers' stock loss would hold 12 bytes per token "
                               "and vocabulary entry at its peak."));
      }
    }
  } else {
    out.notes.push_back(
        "Activations not counted: the model's layers, hidden size and heads are not on record.");
  }
  if (in.overhead_bytes > 0) {
    Add(&out.device_lines, &out.device_bytes, "overhead", in.overhead_bytes,
        absl::StrCat(Bytes(in.overhead_bytes), " (CUDA context and allocator reserve)"));
  }
  if (in.offload_optimizer || in.offload_parameters) {
    out.notes.push_back(
        "Offloaded states live in host memory, per device; the optimizer step "
        "runs on the CPU (ZeRO-Offload).");
  }
  if (in.optimizer == Optimizer::kAdafactor) {
    out.notes.push_back(
        "Adafactor's factored second moment (4 bytes x (rows + columns) per "
        "matrix) is counted as zero per parameter.");
  }
  if (!(out.device_bytes <= kMaxBytes) || !(out.host_bytes <= kMaxBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training this model needs ", Num(std::max(out.device_bytes, out.host_bytes)),
        " bytes per device, beyond any device or cluster (more than ", Num(kMaxBytes),
        "): check the architecture (", in.architecture.num_layers, " layers, hidden size ",
        in.architecture.hidden_size, ") and the parallelism"));
  }
  return out;
}

DeepSpeedEstimate DeepSpeedZero3ModelStates(double total, double largest_layer, int gpus_per_node,
                                            int nodes, bool offload_optimizer,
                                            bool offload_parameters, bool zero_init) {
  constexpr double kBuffer = 1.5;  // DeepSpeed's additional_buffer_factor
  const double total_gpus = static_cast<double>(gpus_per_node) * nodes;
  const double gpus_factor = 1.0 / nodes;
  const double largest_layer_memory = 4 * largest_layer;
  DeepSpeedEstimate e;
  if (offload_optimizer || offload_parameters) {
    if (offload_parameters) {
      e.gpu_bytes = largest_layer_memory;
      e.cpu_bytes =
          total * (zero_init ? 18 * gpus_factor : std::max(4.0 * gpus_per_node, 18 * gpus_factor)) *
          kBuffer;
    } else {
      e.gpu_bytes = largest_layer_memory + std::floor(2 * total / total_gpus);
      e.cpu_bytes =
          total * (zero_init ? 16 * gpus_factor : std::max(4.0 * gpus_per_node, 16 * gpus_factor)) *
          kBuffer;
    }
  } else {
    e.gpu_bytes = largest_layer_memory + std::floor(18 * total / total_gpus);
    e.cpu_bytes = (zero_init ? largest_layer : total) * 4 * gpus_per_node * kBuffer;
  }
  return e;
}

DeepSpeedEstimate DeepSpeedZero2ModelStates(double total, int gpus_per_node, int nodes,
                                            bool offload_optimizer) {
  constexpr double kBuffer = 1.5;
  const double total_gpus = static_cast<double>(gpus_per_node) * nodes;
  DeepSpeedEstimate e;
  if (offload_optimizer) {
    e.gpu_bytes = 2 * total;
    e.cpu_bytes = total * std::max(4 * total_gpus, 16.0) * kBuffer;
  } else {
    e.gpu_bytes = 4 * total + std::floor(16 * total / total_gpus);
    e.cpu_bytes = total * 4 * gpus_per_node * kBuffer;
  }
  return e;
}

}  // namespace modelatlas::estimator
