// Memory to run a model. Reference figures: ../shared/docs/REFERENCE.md
// section 4 (Llama-3.1-8B in bf16 caches 131,072 bytes per token).
#include "estimator-service/core/inference_memory.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status/errors.h"

namespace modelatlas::estimator {
namespace {

// Llama-3.1-8B (config.json): 32 layers, hidden 4096, 32 heads, 8 KV heads.
Architecture Llama31_8B() {
  Architecture arch;
  arch.num_layers = 32;
  arch.hidden_size = 4096;
  arch.num_attention_heads = 32;
  arch.num_key_value_heads = 8;
  arch.head_dim = 128;
  arch.max_context_length = 131072;
  arch.intermediate_size = 14336;
  arch.gated_mlp = true;
  arch.vocab_size = 128256;
  return arch;
}

// Makes `arch` a Mamba-2 hybrid: 24 recurrent and 8 attention layers, a
// recurrent state line of its own.
void MakeMamba2Hybrid(Architecture& arch) {
  arch.recurrent_mixer = RecurrentMixer::kMamba2;
  arch.num_recurrent_layers = 24;
  arch.num_attention_layers = 8;
  arch.ssm_inner_size = 8192;
  arch.ssm_state_size = 128;
  arch.ssm_num_heads = 128;
  arch.ssm_num_groups = 8;
  arch.ssm_conv_kernel = 4;
}

const EstimateLine* Line(const InferenceMemoryEstimate& estimate, const std::string& component) {
  for (const auto& line : estimate.lines) {
    if (line.component == component) return &line;
  }
  return nullptr;
}

TEST(KvCacheTest, GroupedQueryAttentionUsesKvHeadsNotHeads) {
  std::string arithmetic;
  EXPECT_EQ(KvCacheBytesPerToken(Llama31_8B(), NumberFormat::kBf16, &arithmetic), 131072);
  EXPECT_EQ(arithmetic,
            "2 (K and V) x 32 layers x 8 KV heads x 128 head dim x 2 bytes (bf16) = 131072 bytes "
            "per token");
  Architecture mha = Llama31_8B();
  mha.num_key_value_heads = 32;  // what GQA-blind calculators compute: 4x too much
  EXPECT_EQ(KvCacheBytesPerToken(mha, NumberFormat::kBf16, &arithmetic), 4 * 131072);
  EXPECT_EQ(KvCacheBytesPerToken(Llama31_8B(), NumberFormat::kFp8, &arithmetic), 65536);
}

// Gemma 4 31B's shape (google/gemma-4-31B-it config.json): 60 layers, 50
// sliding (window 1024, 16 KV heads of 256), 10 full-attention ones (4 KV
// heads of 512, values from the keys).
Architecture Gemma4_31B() {
  Architecture arch;
  arch.num_layers = 60;
  arch.hidden_size = 5376;
  arch.num_attention_heads = 32;
  arch.num_key_value_heads = 16;
  arch.head_dim = 256;
  arch.intermediate_size = 21504;
  arch.gated_mlp = true;
  arch.vocab_size = 262144;
  arch.tie_word_embeddings = true;
  arch.max_context_length = 262144;
  arch.sliding_window = 1024;
  arch.num_sliding_window_layers = 50;
  arch.qk_norm = true;
  arch.norms_per_layer = 4;
  arch.global_head_dim = 512;
  arch.num_global_key_value_heads = 4;
  arch.global_values_from_keys = true;
  return arch;
}

TEST(KvCacheTest, FullAttentionLayersOfTheirOwnGeometryAreSizedAtIt) {
  const Architecture arch = Gemma4_31B();
  // 2 x (50 x 16 x 256 + 10 x 4 x 512) x 2 bytes.
  EXPECT_EQ(KvCacheBytesPerToken(arch, NumberFormat::kBf16, nullptr), 901120);
  // Below the window every layer keeps every token.
  EXPECT_EQ(KvCacheBytes(arch, NumberFormat::kBf16, 1000, 1), 901120.0 * 1000);
  // Above it: the sliding layers the window at 16,384 bytes a token, the
  // full ones the context at 8,192 (not the average 15,018.7 a layer).
  EXPECT_EQ(KvCacheBytes(arch, NumberFormat::kBf16, 131072, 2),
            2 * (50.0 * 1024 * 16384 + 10.0 * 131072 * 8192));
  InferenceMemoryInput input;
  input.parameters = 31273086512;
  input.architecture = arch;
  input.workload.context_length_tokens = 131072;
  absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
  ASSERT_TRUE(sizing.ok()) << sizing.status();
  // The largest layer (a pipeline stage's and a split card's bound): a
  // sliding layer's bytes at the whole context, above a full layer's.
  EXPECT_EQ(sizing->kv_cache_bytes_largest_layer, 16384.0 * 131072);
  // Tensor parallelism divides the cache by the fewer KV heads at most.
  EXPECT_EQ(sizing->num_key_value_heads, 4);
  // One geometry for every layer: the full layers' understates the
  // sliding layers' cache by half.
  Architecture uniform = arch;
  uniform.head_dim = 512;
  uniform.num_key_value_heads = 4;
  uniform.global_head_dim = 0;
  uniform.num_global_key_value_heads = 0;
  uniform.global_values_from_keys = false;
  EXPECT_EQ(KvCacheBytes(arch, NumberFormat::kBf16, 131072, 1) -
                KvCacheBytes(uniform, NumberFormat::kBf16, 131072, 1),
            50.0 * 1024 * (16384 - 8192));
}

TEST(KvCacheTest, AFullAttentionGeometryNeedsSlidingAndFullLayers) {
  Architecture arch = Gemma4_31B();
  arch.sliding_window = 0;
  InferenceMemoryInput input;
  input.parameters = 31273086512;
  input.architecture = arch;
  input.workload.context_length_tokens = 4096;
  absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
  ASSERT_FALSE(sizing.ok());
  EXPECT_EQ(sizing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(sizing.status().ToString(), "architecture.num_sliding_window_layers"))
      << sizing.status();
  arch = Gemma4_31B();
  arch.num_global_key_value_heads = 5;  // 32 heads in groups of 5
  input.architecture = arch;
  sizing = SizeInference(input);
  ASSERT_FALSE(sizing.ok());
  EXPECT_TRUE(
      absl::StrContains(sizing.status().ToString(), "architecture.num_global_key_value_heads"))
      << sizing.status();
}

TEST(KvCacheTest, HeadDimDefaultsToHiddenOverHeads) {
  Architecture arch;
  arch.num_layers = 12;
  arch.hidden_size = 768;
  arch.num_attention_heads = 12;  // GPT-2: no separate KV heads, head_dim 64
  std::string arithmetic;
  EXPECT_EQ(KvCacheBytesPerToken(arch, NumberFormat::kFp16, &arithmetic), 2 * 12 * 12 * 64 * 2);
}

TEST(KvCacheTest, MultiHeadLatentAttentionCachesTheLatent) {
  // DeepSeek-V3 config.json: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64.
  Architecture arch;
  arch.num_layers = 61;
  arch.hidden_size = 7168;
  arch.num_attention_heads = 128;
  arch.kv_lora_rank = 512;
  arch.qk_rope_head_dim = 64;
  std::string arithmetic;
  EXPECT_EQ(KvCacheBytesPerToken(arch, NumberFormat::kBf16, &arithmetic), 61 * 576 * 2);
  EXPECT_NE(arithmetic.find("kv_lora_rank"), std::string::npos);
}

TEST(InferenceMemoryTest, Llama31At8kContextInBf16) {
  InferenceMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  input.workload.context_length_tokens = 8192;
  auto estimate = EstimateInferenceMemory(input);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  ASSERT_EQ(estimate->lines.size(), 4u);
  EXPECT_EQ(Line(*estimate, "weights")->bytes, 16060522496);
  EXPECT_EQ(Line(*estimate, "weights")->arithmetic,
            "8030261248 parameters x 16 bits (bf16: bfloat16) / 8 = 16060522496 bytes");
  EXPECT_EQ(Line(*estimate, "kv_cache")->bytes, 131072LL * 8192);
  // 512 tokens x (2x4096 + (32 + 2x8) x 128 + 2x14336) x 2 bytes + 128256 x 4 bytes.
  EXPECT_EQ(Line(*estimate, "activations")->bytes, 512LL * 43008 * 2 + 128256LL * 4);
  EXPECT_EQ(Line(*estimate, "overhead")->bytes, 1LL << 30);
  EXPECT_EQ(estimate->total_bytes, 16060522496 + 131072LL * 8192 + 44553216 + (1LL << 30));
  EXPECT_TRUE(estimate->warnings.empty());
}

// A mixture of experts' prefill step expands each token over its active
// experts: Mixtral 8x7B's 2 of 14,336 (vLLM's fused MoE holds the chunk's
// gate/up outputs for every (token, expert) pair); Qwen2-MoE adds its
// shared expert of its own width; DeepSeek-V3's leading dense layers
// (18,432) are wider than 8 x 2,048 + one shared 2,048.
TEST(InferenceMemoryTest, AMixtureOfExpertsPrefillTakesItsActiveExpertsOrItsDenseLayers) {
  Architecture mixtral;
  mixtral.num_layers = 32;
  mixtral.hidden_size = 4096;
  mixtral.num_attention_heads = 32;
  mixtral.num_key_value_heads = 8;
  mixtral.intermediate_size = 14336;
  mixtral.vocab_size = 32000;
  mixtral.num_experts = 8;
  mixtral.num_experts_per_token = 2;
  mixtral.gated_mlp = true;
  std::string text;
  // 512 x (2x4096 + (32 + 16) x 128 + 2 experts x 14336 x 2) x 2 + 32000 x 4.
  EXPECT_EQ(PrefillWorkspaceBytes(mixtral, 512, 1, &text),
            512.0 * (8192 + 6144 + 57344) * 2 + 32000.0 * 4);
  EXPECT_NE(text.find("57344 MLP"), std::string::npos) << text;

  Architecture qwen2_moe = mixtral;
  qwen2_moe.moe_intermediate_size = 1408;
  qwen2_moe.num_experts = 60;
  qwen2_moe.num_experts_per_token = 4;
  qwen2_moe.shared_expert_intermediate_size = 5632;
  EXPECT_EQ(PrefillWorkspaceBytes(qwen2_moe, 512, 1, nullptr),
            512.0 * (8192 + 6144 + (4 * 1408 + 5632) * 2) * 2 + 32000.0 * 4);

  Architecture deepseek = mixtral;
  deepseek.moe_intermediate_size = 2048;
  deepseek.intermediate_size = 18432;
  deepseek.num_experts = 256;
  deepseek.num_experts_per_token = 8;
  deepseek.num_shared_experts = 1;
  deepseek.num_dense_layers = 3;
  EXPECT_EQ(PrefillWorkspaceBytes(deepseek, 512, 1, nullptr),
            512.0 * (8192 + 6144 + 18432 * 2) * 2 + 32000.0 * 4);
  deepseek.num_dense_layers = 0;  // every layer an MoE one: its experts' width
  EXPECT_EQ(PrefillWorkspaceBytes(deepseek, 512, 1, nullptr),
            512.0 * (8192 + 6144 + 9 * 2048 * 2) * 2 + 32000.0 * 4);
}

TEST(InferenceMemoryTest, TheModelsMaximumContextIsAskedForExplicitlyAndBatchMultiplies) {
  InferenceMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  input.workload.context_length_tokens = 131072;  // the model's maximum, asked for
  input.workload.batch_size = 4;
  auto estimate = EstimateInferenceMemory(input);
  ASSERT_TRUE(estimate.ok());
  EXPECT_EQ(Line(*estimate, "kv_cache")->bytes, 131072LL * 131072 * 4);  // 64 GiB
}

TEST(InferenceMemoryTest, TheDefaultWorkloadHolds4096Tokens) {
  InferenceMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  auto estimate = EstimateInferenceMemory(input);
  ASSERT_TRUE(estimate.ok());
  EXPECT_EQ(Line(*estimate, "kv_cache")->bytes, 131072LL * 4096);  // 512 MiB
  EXPECT_EQ(estimate->sizing.kv_cache_bytes, 131072.0 * 4096);
  EXPECT_EQ(estimate->sizing.context_length_tokens, 4096);
}

TEST(InferenceMemoryTest, SizingWithoutArithmeticGivesTheSameNumbers) {
  InferenceMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  input.workload.context_length_tokens = 8192;
  auto estimate = EstimateInferenceMemory(input);
  auto sizing = SizeInference(input);
  ASSERT_TRUE(estimate.ok());
  ASSERT_TRUE(sizing.ok());
  EXPECT_EQ(sizing->weight_bytes, Line(*estimate, "weights")->bytes);
  EXPECT_EQ(sizing->kv_cache_bytes, Line(*estimate, "kv_cache")->bytes);
  EXPECT_EQ(sizing->activation_bytes, Line(*estimate, "activations")->bytes);
  EXPECT_EQ(sizing->overhead_bytes, Line(*estimate, "overhead")->bytes);
  EXPECT_EQ(sizing->total_bytes(), estimate->total_bytes);
  EXPECT_EQ(sizing->active_share, 1.0);
}

// The memory answer asks for no split figures (split_figures false): the
// same lines, texts and totals, without the parameter count's figures that
// only plans divide over cards.
TEST(InferenceMemoryTest, WithoutSplitFiguresTheLinesAreTheSameAndTheCountIsSkipped) {
  InferenceMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  input.workload.context_length_tokens = 8192;
  auto with_split = EstimateInferenceMemory(input);
  input.split_figures = false;
  auto without = EstimateInferenceMemory(input);
  ASSERT_TRUE(with_split.ok());
  ASSERT_TRUE(without.ok());
  ASSERT_EQ(without->lines.size(), with_split->lines.size());
  for (size_t i = 0; i < without->lines.size(); ++i) {
    EXPECT_EQ(without->lines[i].component, with_split->lines[i].component);
    EXPECT_EQ(without->lines[i].bytes, with_split->lines[i].bytes);
    EXPECT_EQ(without->lines[i].arithmetic, with_split->lines[i].arithmetic);
  }
  EXPECT_EQ(without->total_bytes, with_split->total_bytes);
  EXPECT_EQ(without->sizing.weight_bytes, with_split->sizing.weight_bytes);
  EXPECT_EQ(without->sizing.kv_cache_bytes, with_split->sizing.kv_cache_bytes);
  // The count's figures: Llama's 128,256 x 4,096 input embedding and its
  // untied output head with the split, nothing without.
  EXPECT_EQ(with_split->sizing.embedding_parameters, 2 * 128256.0 * 4096);
  EXPECT_EQ(with_split->sizing.output_head_parameters, 128256.0 * 4096);
  EXPECT_EQ(without->sizing.embedding_parameters, 0);
  EXPECT_EQ(without->sizing.output_head_parameters, 0);
}

// A reused arithmetic and estimate (the pooled memory answer's) give the
// texts a fresh pair gives, whatever they held before: the texts are
// written into the lines in place, in the four-line order of a model with
// a shape, and moved for a hybrid's five lines and a bare model's two; a
// call that fails in between (its texts partly written) leaves nothing in
// the next.
TEST(InferenceMemoryTest, AReusedScratchWritesWhatAFreshOneWrites) {
  InferenceMemoryInput llama;
  llama.parameters = 8030261248;
  llama.architecture = Llama31_8B();
  llama.workload.context_length_tokens = 8192;
  InferenceMemoryInput bare;  // no architecture: two lines and a warning
  bare.parameters = 1.5e9;
  InferenceMemoryInput hybrid = llama;  // a recurrent state line: five lines
  MakeMamba2Hybrid(*hybrid.architecture);
  InferenceMemoryInput refused = llama;                  // fails after its weights text is written
  refused.workload.context_length_tokens = 100'000'000;  // the KV cache past 4e18 bytes
  refused.workload.batch_size = 1'000'000;
  InferenceArithmetic arithmetic;
  InferenceMemoryEstimate reused;
  ASSERT_EQ(EstimateInferenceMemory(hybrid)->lines.size(), 5u);
  ASSERT_FALSE(EstimateInferenceMemory(refused).ok());
  for (const InferenceMemoryInput* input : {&llama, &bare, &llama, &hybrid, &llama, &hybrid, &bare,
                                            &hybrid, &refused, &llama, &refused, &bare, &llama}) {
    auto fresh = EstimateInferenceMemory(*input);
    const absl::Status status = EstimateInferenceMemoryInto(*input, &arithmetic, &reused);
    ASSERT_EQ(status, fresh.status());
    if (!status.ok()) continue;
    ASSERT_EQ(reused.lines.size(), fresh->lines.size());
    for (size_t i = 0; i < reused.lines.size(); ++i) {
      EXPECT_EQ(reused.lines[i].component, fresh->lines[i].component);
      EXPECT_EQ(reused.lines[i].bytes, fresh->lines[i].bytes);
      EXPECT_EQ(reused.lines[i].arithmetic, fresh->lines[i].arithmetic);
    }
    EXPECT_EQ(reused.warnings, fresh->warnings);
    EXPECT_EQ(reused.total_bytes, fresh->total_bytes);
  }
}

// The texts SizeInference remembers per thread (keyed by the figures they
// show) are the texts written afresh, whatever was asked before: every
// figure a text depends on is changed in turn, back and forth, and the
// lines compared with those of a thread that has remembered nothing.
std::vector<std::string> TextsOnAFreshThread(const InferenceMemoryInput& input) {
  std::vector<std::string> texts;
  std::thread([&] {
    absl::StatusOr<InferenceMemoryEstimate> estimate = EstimateInferenceMemory(input);
    if (!estimate.ok()) return;
    for (const EstimateLine& line : estimate->lines) texts.push_back(line.arithmetic);
  }).join();
  return texts;
}

TEST(InferenceMemoryTest, RememberedTextsFollowEveryChangeOfTheirFigures) {
  InferenceMemoryInput llama;
  llama.parameters = 8030261248;
  llama.architecture = Llama31_8B();
  llama.workload.context_length_tokens = 8192;
  using Change = void (*)(InferenceMemoryInput&);
  const std::vector<Change> changes = {
      [](InferenceMemoryInput&) {},
      [](InferenceMemoryInput& in) { in.parameters += 1; },
      [](InferenceMemoryInput& in) { in.parameters = 8030261248.5; },
      [](InferenceMemoryInput& in) { in.architecture->num_layers = 31; },
      [](InferenceMemoryInput& in) { in.architecture->num_key_value_heads = 4; },
      [](InferenceMemoryInput& in) { in.architecture->head_dim = 64; },
      [](InferenceMemoryInput& in) { in.architecture->head_dim = 0; },  // hidden / heads
      // The same totals from other figures: the texts still differ.
      [](InferenceMemoryInput& in) {
        in.architecture->num_key_value_heads = 16;
        in.architecture->head_dim = 64;
      },
      [](InferenceMemoryInput& in) {
        in.workload.context_length_tokens = 4096;
        in.workload.batch_size = 2;
      },
      [](InferenceMemoryInput& in) {
        in.architecture->num_layers = 64;
        in.architecture->num_key_value_heads = 4;
      },
      [](InferenceMemoryInput& in) { in.architecture->hidden_size = 5120; },
      [](InferenceMemoryInput& in) { in.architecture->num_attention_heads = 64; },
      [](InferenceMemoryInput& in) { in.architecture->intermediate_size = 14335; },
      [](InferenceMemoryInput& in) { in.architecture->gated_mlp = false; },
      [](InferenceMemoryInput& in) { in.architecture->vocab_size = 32000; },
      [](InferenceMemoryInput& in) { in.architecture->sliding_window = 4096; },
      [](InferenceMemoryInput& in) {
        in.architecture->sliding_window = 4096;
        in.architecture->num_sliding_window_layers = 16;
      },
      [](InferenceMemoryInput& in) {
        in.architecture->kv_lora_rank = 512;
        in.architecture->qk_rope_head_dim = 64;
      },
      [](InferenceMemoryInput& in) {
        in.architecture->kv_lora_rank = 512;
        in.architecture->qk_rope_head_dim = 32;
      },
      [](InferenceMemoryInput& in) { in.architecture->num_decoder_layers = 24; },
      [](InferenceMemoryInput& in) {
        in.architecture->num_experts = 8;
        in.architecture->moe_intermediate_size = 2048;
      },
      [](InferenceMemoryInput& in) { MakeMamba2Hybrid(*in.architecture); },
      [](InferenceMemoryInput& in) {
        in.architecture->recurrent_mixer = RecurrentMixer::kMamba2;
        in.architecture->num_recurrent_layers = 32;
        in.architecture->num_attention_layers = 0;
      },
      [](InferenceMemoryInput& in) { in.workload.kv_cache_format = NumberFormat::kFp8; },
      [](InferenceMemoryInput& in) { in.workload.weight_format = NumberFormat::kFp16; },
      [](InferenceMemoryInput& in) { in.workload.weight_format = NumberFormat::kNf4; },
      [](InferenceMemoryInput& in) { in.workload.weight_format = NumberFormat::kGgufQ4KM; },
      [](InferenceMemoryInput& in) {
        in.workload.weight_format = NumberFormat::kGptqInt4;
        in.workload.quantization_group_size = 32;
      },
      [](InferenceMemoryInput& in) {
        in.workload.weight_format = NumberFormat::kGptqInt4;
        in.workload.quantization_group_size = 64;
      },
      [](InferenceMemoryInput& in) { in.workload.context_length_tokens = 8191; },
      [](InferenceMemoryInput& in) { in.workload.context_length_tokens = 0; },
      [](InferenceMemoryInput& in) { in.workload.batch_size = 3; },
      [](InferenceMemoryInput& in) { in.workload.prefill_chunk_tokens = 2048; },
      [](InferenceMemoryInput& in) { in.workload.overhead_bytes = 0; },
      [](InferenceMemoryInput& in) { in.workload.overhead_bytes = (int64_t{1} << 30) + 1; },
      [](InferenceMemoryInput& in) { in.architecture.reset(); },
  };
  InferenceArithmetic arithmetic;
  InferenceMemoryEstimate estimate;
  // Each change after the unchanged model and before it again, so that a
  // remembered text would be reused wrongly if its key missed the figure.
  std::vector<size_t> order;
  for (size_t i = 1; i < changes.size(); ++i) {
    order.insert(order.end(), {0, i, 0, i, i});
  }
  for (size_t i : order) {
    InferenceMemoryInput input = llama;
    changes[i](input);
    const std::vector<std::string> fresh = TextsOnAFreshThread(input);
    ASSERT_FALSE(fresh.empty()) << "change " << i;
    ASSERT_TRUE(EstimateInferenceMemoryInto(input, &arithmetic, &estimate).ok()) << "change " << i;
    ASSERT_EQ(estimate.lines.size(), fresh.size()) << "change " << i;
    for (size_t line = 0; line < fresh.size(); ++line) {
      EXPECT_EQ(estimate.lines[line].arithmetic, fresh[line])
          << "change " << i << ", line " << estimate.lines[line].component;
    }
  }
  // And what a changed head dim writes, spelled out.
  InferenceMemoryInput narrow = llama;
  narrow.architecture->head_dim = 64;
  ASSERT_TRUE(EstimateInferenceMemoryInto(narrow, &arithmetic, &estimate).ok());
  EXPECT_EQ(Line(estimate, "kv_cache")->arithmetic,
            "2 (K and V) x 32 layers x 8 KV heads x 64 head dim x 2 bytes (bf16) = 65536 bytes "
            "per token; x 8192 tokens x 1 sequences = 536870912 bytes");
  ASSERT_TRUE(EstimateInferenceMemoryInto(llama, &arithmetic, &estimate).ok());
  EXPECT_EQ(Line(estimate, "kv_cache")->arithmetic,
            "2 (K and V) x 32 layers x 8 KV heads x 128 head dim x 2 bytes (bf16) = 131072 bytes "
            "per token; x 8192 tokens x 1 sequences = 1073741824 bytes");
}

// A model's weights kept per format (PreparedWeights, a catalog record's):
// every line of the estimate made with them is the line made without them,
// in every weight format, for a dense shape, an MoE shape and a model
// without one; each format is sized once and kept.
void ExpectSameEstimate(const InferenceMemoryInput& with, const std::string& what) {
  InferenceMemoryInput without = with;
  without.prepared_weights = nullptr;
  absl::StatusOr<InferenceMemoryEstimate> fresh = EstimateInferenceMemory(without);
  InferenceArithmetic arithmetic;
  InferenceMemoryEstimate kept;
  const absl::Status status = EstimateInferenceMemoryInto(with, &arithmetic, &kept);
  ASSERT_EQ(status, fresh.status()) << what;
  if (!status.ok()) return;
  ASSERT_EQ(kept.lines.size(), fresh->lines.size()) << what;
  for (size_t i = 0; i < kept.lines.size(); ++i) {
    EXPECT_EQ(kept.lines[i].component, fresh->lines[i].component) << what;
    EXPECT_EQ(kept.lines[i].bytes, fresh->lines[i].bytes) << what;
    EXPECT_EQ(kept.lines[i].arithmetic, fresh->lines[i].arithmetic) << what;
  }
  EXPECT_EQ(kept.total_bytes, fresh->total_bytes) << what;
  EXPECT_EQ(kept.sizing.weight_bytes, fresh->sizing.weight_bytes) << what;
  EXPECT_EQ(kept.warnings, fresh->warnings) << what;
  // The split figures (a plan's) too: the format's own bits decide the
  // experts' share.
  InferenceMemoryInput split = with;
  split.split_figures = true;
  InferenceMemoryInput split_without = without;
  split_without.split_figures = true;
  InferenceMemoryEstimate split_kept;
  ASSERT_TRUE(EstimateInferenceMemoryInto(split, &arithmetic, &split_kept).ok()) << what;
  absl::StatusOr<InferenceMemoryEstimate> split_fresh = EstimateInferenceMemory(split_without);
  ASSERT_TRUE(split_fresh.ok()) << what;
  EXPECT_EQ(split_kept.sizing.expert_weight_bytes, split_fresh->sizing.expert_weight_bytes) << what;
  EXPECT_EQ(split_kept.sizing.weight_bytes, split_fresh->sizing.weight_bytes) << what;
}

TEST(PreparedWeightsTest, KeptWeightsAreTheSizingsOwnInEveryFormat) {
  Architecture moe = Llama31_8B();
  moe.num_experts = 8;
  moe.num_experts_per_token = 2;
  moe.moe_intermediate_size = 2048;
  moe.num_dense_layers = 1;
  const std::optional<Architecture> shapes[] = {Llama31_8B(), moe, std::nullopt};
  constexpr int kFormats = static_cast<int>(NumberFormat::kFp8Block) + 1;
  for (const std::optional<Architecture>& shape : shapes) {
    InferenceMemoryInput input;
    input.parameters = shape.has_value() && shape->IsMoe() ? 47e9 : 8030261248;
    input.architecture = shape;
    input.workload.context_length_tokens = 8192;
    input.split_figures = false;
    PreparedWeights prepared;
    input.prepared_weights = &prepared;
    const Architecture* sized_shape = shape.has_value() ? &*shape : nullptr;
    for (int round = 0; round < 2; ++round) {
      for (int f = 0; f < kFormats; ++f) {
        const auto format = static_cast<NumberFormat>(f);
        input.workload.weight_format = format;
        const std::string what =
            absl::StrCat(shape.has_value() ? shape->IsMoe() ? "moe" : "dense" : "no shape", " ",
                         NumberFormatName(format), " round ", round);
        ExpectSameEstimate(input, what);
        // Kept at the first ask, the same part afterwards.
        const WeightsPart* part = prepared.Get(input.parameters, sized_shape, format,
                                               input.workload.quantization_group_size);
        ASSERT_NE(part, nullptr) << what;
        EXPECT_EQ(part, prepared.Get(input.parameters, sized_shape, format,
                                     input.workload.quantization_group_size))
            << what;
        EXPECT_EQ(prepared.kept(), static_cast<size_t>(round == 0 ? f + 1 : kFormats)) << what;
      }
    }
  }
}

TEST(PreparedWeightsTest, FiguresNotKeptAreSizedWithoutThem) {
  InferenceMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  input.workload.context_length_tokens = 8192;
  input.workload.weight_format = NumberFormat::kGptqInt4;
  PreparedWeights prepared;
  input.prepared_weights = &prepared;
  ExpectSameEstimate(input, "groups of 128");
  ASSERT_EQ(prepared.kept(), 1u);
  const WeightsPart* kept128 =
      prepared.Get(input.parameters, &*input.architecture, NumberFormat::kGptqInt4, 128);
  ASSERT_NE(kept128, nullptr);
  // Another group size: not what was kept; sized as without it, and the
  // kept part left as it was.
  input.workload.quantization_group_size = 32;
  EXPECT_EQ(prepared.Get(input.parameters, &*input.architecture, NumberFormat::kGptqInt4, 32),
            nullptr);
  ExpectSameEstimate(input, "groups of 32");
  InferenceArithmetic arithmetic;
  InferenceMemoryEstimate estimate;
  ASSERT_TRUE(EstimateInferenceMemoryInto(input, &arithmetic, &estimate).ok());
  EXPECT_NE(estimate.lines[0].arithmetic, kept128->text);
  EXPECT_NE(estimate.lines[0].arithmetic.find("32-weight group"), std::string::npos)
      << estimate.lines[0].arithmetic;
  // Other parameters: the same.
  input.workload.quantization_group_size = 128;
  input.parameters += 1;
  EXPECT_EQ(prepared.Get(input.parameters, &*input.architecture, NumberFormat::kGptqInt4, 128),
            nullptr);
  ExpectSameEstimate(input, "other parameters");
  // A group size the format refuses: the same error, nothing kept.
  input.parameters -= 1;
  input.workload.weight_format = NumberFormat::kAwqInt4;
  input.workload.quantization_group_size = 3;
  EXPECT_EQ(prepared.Get(input.parameters, &*input.architecture, NumberFormat::kAwqInt4, 3),
            nullptr);
  ExpectSameEstimate(input, "bad group size");
  EXPECT_FALSE(EstimateInferenceMemoryInto(input, &arithmetic, &estimate).ok());
  EXPECT_EQ(prepared.kept(), 1u);
  // Still sized for that format once asked with a group size it takes.
  input.workload.quantization_group_size = 128;
  ExpectSameEstimate(input, "awq groups of 128");
  EXPECT_EQ(prepared.kept(), 2u);
}

// Two threads asking for the same format first both get one kept part.
TEST(PreparedWeightsTest, FirstAsksFromManyThreadsKeepOnePart) {
  const Architecture shape = Llama31_8B();
  for (int attempt = 0; attempt < 20; ++attempt) {
    PreparedWeights prepared;
    std::vector<const WeightsPart*> seen(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < seen.size(); ++t) {
      threads.emplace_back(
          [&, t] { seen[t] = prepared.Get(8030261248, &shape, NumberFormat::kFp8, 128); });
    }
    for (std::thread& thread : threads) thread.join();
    for (const WeightsPart* part : seen) EXPECT_EQ(part, seen[0]);
    ASSERT_NE(seen[0], nullptr);
    EXPECT_EQ(prepared.kept(), 1u);
  }
}

TEST(InferenceMemoryTest, WeightFormatsAndRounding) {
  InferenceMemoryInput input;
  input.parameters = 7;
  input.workload.weight_format = NumberFormat::kInt4;
  input.workload.overhead_bytes = 0;
  auto estimate = EstimateInferenceMemory(input);
  ASSERT_TRUE(estimate.ok());
  EXPECT_EQ(Line(*estimate, "weights")->bytes, 4);  // 3.5 bytes, rounded up
  input.workload.weight_format = NumberFormat::kFp32;
  EXPECT_EQ(Line(*EstimateInferenceMemory(input), "weights")->bytes, 28);
}

TEST(InferenceMemoryTest, SlidingWindowCapsTheCache) {
  // Mistral-7B-v0.1: window 4096 in every layer.
  InferenceMemoryInput input;
  input.parameters = 7241732096;
  input.architecture = Llama31_8B();
  input.architecture->sliding_window = 4096;
  input.workload.context_length_tokens = 32768;
  auto estimate = EstimateInferenceMemory(input);
  ASSERT_TRUE(estimate.ok());
  EXPECT_EQ(Line(*estimate, "kv_cache")->bytes, 131072LL * 4096);
  // Half the layers windowed (Gemma-2 style): the other half keep everything.
  input.architecture->num_sliding_window_layers = 16;
  estimate = EstimateInferenceMemory(input);
  EXPECT_EQ(Line(*estimate, "kv_cache")->bytes, 131072LL / 2 * 4096 + 131072LL / 2 * 32768);
  // A context shorter than the window is not capped.
  input.workload.context_length_tokens = 1000;
  estimate = EstimateInferenceMemory(input);
  EXPECT_EQ(Line(*estimate, "kv_cache")->bytes, 131072LL * 1000);
}

// A context beyond the model's maximum is sized as asked (serving engines
// can extend a context with RoPE scaling), and the answer says it is beyond.
TEST(InferenceMemoryTest, AContextBeyondTheModelsMaximumIsSizedAndSaysSo) {
  InferenceMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  input.architecture->max_context_length = 131072;
  input.workload.context_length_tokens = 131072;
  auto at_maximum = EstimateInferenceMemory(input);
  ASSERT_TRUE(at_maximum.ok()) << at_maximum.status();
  EXPECT_TRUE(at_maximum->warnings.empty());

  input.workload.context_length_tokens = 300000;
  auto beyond = EstimateInferenceMemory(input);
  ASSERT_TRUE(beyond.ok()) << beyond.status();
  EXPECT_EQ(Line(*beyond, "kv_cache")->bytes, 131072LL * 300000);
  ASSERT_EQ(beyond->warnings.size(), 1u);
  EXPECT_NE(beyond->warnings[0].find("context 300000 tokens is beyond the model's maximum "
                                     "context on record (131072 tokens)"),
            std::string::npos)
      << beyond->warnings[0];
}

TEST(InferenceMemoryTest, WithoutArchitectureTheCacheIsNotCountedAndSaysSo) {
  InferenceMemoryInput input;
  input.parameters = 3.9e9;
  auto estimate = EstimateInferenceMemory(input);
  ASSERT_TRUE(estimate.ok());
  EXPECT_EQ(Line(*estimate, "kv_cache"), nullptr);
  ASSERT_EQ(estimate->warnings.size(), 1u);
  EXPECT_NE(estimate->warnings[0].find("KV cache not counted"), std::string::npos);
  EXPECT_EQ(estimate->total_bytes, 7800000000 + (1LL << 30));
}

TEST(InferenceMemoryTest, BadInputNamesEveryField) {
  InferenceMemoryInput input;
  input.parameters = std::numeric_limits<double>::quiet_NaN();
  input.workload.context_length_tokens = -1;
  input.workload.batch_size = 0;
  input.workload.overhead_bytes = -5;
  auto estimate = EstimateInferenceMemory(input);
  ASSERT_EQ(estimate.status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::string> fields;
  for (const auto& v : GetFieldViolations(estimate.status())) fields.push_back(v.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"parameters", "context_length_tokens", "batch_size",
                                              "overhead_bytes"}));
  input = InferenceMemoryInput{};
  input.parameters = 1e16;  // absurd
  EXPECT_EQ(EstimateInferenceMemory(input).status().code(), absl::StatusCode::kInvalidArgument);
  input.parameters = std::numeric_limits<double>::infinity();
  EXPECT_EQ(EstimateInferenceMemory(input).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(InferenceMemoryTest, AbsurdCacheIsRefusedNotOverflowed) {
  InferenceMemoryInput input;
  input.parameters = 1e9;
  input.architecture = Llama31_8B();
  input.workload.context_length_tokens = 100'000'000;
  input.workload.batch_size = 1'000'000;
  auto estimate = EstimateInferenceMemory(input);
  EXPECT_EQ(estimate.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace modelatlas::estimator
