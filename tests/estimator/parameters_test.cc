// Parameter counts from shapes, against published exact counts
// (../shared/docs/REFERENCE.md section 4) and the configs in ../shared/data.
#include "estimator-service/core/parameters.h"

#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <tuple>

#include "absl/strings/match.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::estimator {
namespace {

Architecture Gpt2() {
  Architecture arch;
  arch.num_layers = 12;
  arch.hidden_size = 768;
  arch.num_attention_heads = 12;
  arch.intermediate_size = 3072;
  arch.vocab_size = 50257;
  arch.tie_word_embeddings = true;
  arch.max_context_length = 1024;
  arch.learned_positions = true;
  arch.layer_norm = true;
  arch.attention_qkv_bias = arch.attention_output_bias = arch.mlp_bias = true;
  return arch;
}

Architecture Llama(int layers, int64_t hidden, int heads, int kv_heads, int64_t ffn,
                   int64_t vocab) {
  Architecture arch;
  arch.num_layers = layers;
  arch.hidden_size = hidden;
  arch.num_attention_heads = heads;
  arch.num_key_value_heads = kv_heads;
  arch.intermediate_size = ffn;
  arch.vocab_size = vocab;
  arch.gated_mlp = true;
  return arch;
}

TEST(ParametersTest, Gpt2IsExact) {
  auto count = CountParameters(Gpt2());
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->total, 124439808);
  EXPECT_EQ(count->embedding, 50257.0 * 768 + 1024.0 * 768);
  EXPECT_EQ(count->active, count->total);
}

TEST(ParametersTest, Llama2And3AreExact) {
  EXPECT_EQ(CountParameters(Llama(32, 4096, 32, 32, 11008, 32000))->total, 6738415616);
  EXPECT_EQ(CountParameters(Llama(32, 4096, 32, 8, 14336, 128256))->total, 8030261248);
}

TEST(ParametersTest, T2rSimplifiedCountWithNormsAndBiasesOff) {
  // Seed page: 32 layers, 8 heads x 128, width 1024, FFN 4096, tied ~260k vocab.
  Architecture arch;
  arch.num_layers = 32;
  arch.hidden_size = 1024;
  arch.num_attention_heads = 8;
  arch.head_dim = 128;
  arch.intermediate_size = 4096;
  arch.vocab_size = 260000;
  arch.tie_word_embeddings = true;
  auto count = CountParameters(arch, {.include_norms = false, .include_biases = false});
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->total, 668893184);
  EXPECT_EQ(count->non_embedding, 402653184);
}

TEST(ParametersTest, MixtureOfExpertsCountsActiveExperts) {
  // Mixtral-8x7B: 32 layers, 4096, 32/8 heads, 8 experts of 14336, top-2, vocab 32000.
  Architecture arch = Llama(32, 4096, 32, 8, 14336, 32000);
  arch.num_experts = 8;
  arch.num_experts_per_token = 2;
  auto count = CountParameters(arch);
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->total, 46702792704);  // published exact count of Mixtral-8x7B-v0.1
  EXPECT_NEAR(count->active, 12.9e9, 0.05e9);
}

TEST(ParametersTest, TotalsWithoutArithmeticMatchTheFullCount) {
  Architecture moe = Llama(32, 4096, 32, 8, 14336, 32000);
  moe.num_experts = 8;
  moe.num_experts_per_token = 2;
  moe.num_shared_experts = 1;
  moe.num_dense_layers = 3;
  Architecture encoder = Gpt2();
  encoder.type_vocab_size = 2;
  encoder.pooler = true;
  encoder.norms_per_layer = 3;
  encoder.qk_norm = true;
  for (const Architecture& arch : {Gpt2(), Llama(32, 4096, 32, 8, 14336, 128256), moe, encoder}) {
    for (const ParameterCountOptions options :
         {ParameterCountOptions{}, ParameterCountOptions{false, false}}) {
      auto full = CountParameters(arch, options);
      auto totals = CountParameterTotals(arch, options);
      ASSERT_TRUE(full.ok() && totals.ok());
      EXPECT_EQ(totals->total, full->total);
      EXPECT_EQ(totals->active, full->active);
      EXPECT_EQ(totals->embedding, full->embedding);
      EXPECT_EQ(totals->non_embedding, full->non_embedding);
      EXPECT_TRUE(totals->components.empty());
      double sum = 0;
      for (const ParameterComponent& component : full->components) sum += component.parameters;
      EXPECT_EQ(sum, full->total);  // the components add up to the total
    }
  }
  EXPECT_EQ(CountParameterTotals(Architecture{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// OPT's position table keeps 2 rows before the first position; BLOOM norms
// its embedding besides the final norm. Each shows in its component's
// arithmetic, and the components still add up to the total.
TEST(ParametersTest, PositionOffsetRowsAndAnEmbeddingNormAreCountedAndShown) {
  Architecture opt = Gpt2();
  opt.max_context_length = 2048;
  opt.learned_position_offset = 2;
  Architecture embedding_normed = Gpt2();
  embedding_normed.embedding_norm = true;
  const double plain = CountParameters(Gpt2())->total;
  for (const auto& [arch, extra, component, text] :
       {std::tuple{opt, 1026.0 * 768, "position_embedding",
                   "(2048 positions + 2 offset rows) x 768"},
        std::tuple{embedding_normed, 2.0 * 768, "norms", "+ 1 final + 1 after the embedding"}}) {
    auto count = CountParameters(arch);
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(count->total, plain + extra) << component;
    double sum = 0;
    bool shown = false;
    for (const ParameterComponent& c : count->components) {
      sum += c.parameters;
      if (c.name == component) shown = c.arithmetic.find(text) != std::string::npos;
    }
    EXPECT_EQ(sum, count->total);
    EXPECT_TRUE(shown) << component << " does not show " << text;
    EXPECT_EQ(CountParameterTotals(arch)->total, count->total);
  }
  // Offset rows belong to a learned table only.
  Architecture rotary = Llama(32, 4096, 32, 8, 14336, 128256);
  rotary.learned_position_offset = 2;
  auto refused = CountParameters(rotary);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("architecture.learned_position_offset"),
            std::string::npos);
}

TEST(ParametersTest, IncompleteShapesNameTheField) {
  Architecture arch = Llama(32, 4096, 32, 6, 14336, 32000);  // 6 does not divide 32
  auto count = CountParameters(arch);
  ASSERT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(count.status().message().find("architecture.num_key_value_heads"), std::string::npos);
  EXPECT_EQ(CountParameters(Architecture{}).status().code(), absl::StatusCode::kInvalidArgument);
}

// Reads a Hugging Face config.json in place from ../shared/data.
TEST(ParametersTest, MetaLlama3ConfigFromSharedData) {
  REQUIRE_SHARED_DATA(path, "hf_configs/Qwen2-Audio/meta-llama_Meta-Llama-3-8B.config.json");
  google::protobuf::Struct config;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(testing::ReadFile(path), &config).ok());
  auto number = [&](const char* key) {
    return static_cast<int64_t>(config.fields().at(key).number_value());
  };
  Architecture arch = Llama(static_cast<int>(number("num_hidden_layers")), number("hidden_size"),
                            static_cast<int>(number("num_attention_heads")),
                            static_cast<int>(number("num_key_value_heads")),
                            number("intermediate_size"), number("vocab_size"));
  arch.tie_word_embeddings = config.fields().at("tie_word_embeddings").bool_value();
  EXPECT_EQ(CountParameters(arch)->total, 8030261248);
}

// Cross-attention layers (Llama 3.2 Vision) are counted only as some of a
// plain decoder-only transformer's layers, each caching image positions:
// every other combination is refused naming the field.
TEST(ParametersTest, CrossAttentionFieldsThatDisagreeAreRefusedByField) {
  Architecture base = Llama(40, 4096, 32, 8, 14336, 128256);
  base.num_cross_attention_layers = 8;
  base.cross_attention_positions = 6404;
  base.extra_embedding_rows = 8;
  ASSERT_TRUE(CountParameters(base).ok());
  struct Case {
    void (*edit)(Architecture*);
    const char* field;
  };
  for (const Case& c :
       std::initializer_list<Case>{{[](Architecture* a) { a->num_cross_attention_layers = 40; },
                                    "architecture.num_cross_attention_layers"},
                                   {[](Architecture* a) { a->sliding_window = 4096; },
                                    "architecture.num_cross_attention_layers"},
                                   {[](Architecture* a) { a->num_kv_shared_layers = 4; },
                                    "architecture.num_cross_attention_layers"},
                                   {[](Architecture* a) { a->cross_attention_positions = 0; },
                                    "architecture.cross_attention_positions"},
                                   {[](Architecture* a) { a->extra_embedding_rows = -1; },
                                    "architecture.extra_embedding_rows"}}) {
    Architecture edited = base;
    c.edit(&edited);
    const absl::Status refused = CheckArchitectureShape(edited);
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(absl::StrContains(refused.message(), c.field)) << refused;
  }
}

// Step-3.5-Flash's fields: the full-attention layers' own query heads must
// be a multiple of their KV heads; an MTP layer's own head or dense MLP
// needs MTP layers, and its own head contradicts sharing the embeddings.
TEST(ParametersTest, FullAttentionHeadsAndMtpFieldsThatDisagreeAreRefusedByField) {
  Architecture base = Llama(45, 4096, 96, 8, 11264, 128896);
  base.sliding_window = 512;
  base.num_sliding_window_layers = 33;
  base.num_global_attention_heads = 64;
  base.num_mtp_layers = 3;
  base.mtp_own_output_head = true;
  base.mtp_dense_mlp = true;
  ASSERT_TRUE(CountParameters(base).ok());
  struct Case {
    void (*edit)(Architecture*);
    const char* field;
  };
  for (const Case& c : std::initializer_list<Case>{
           {[](Architecture* a) { a->num_global_attention_heads = 60; },
            "architecture.num_global_key_value_heads"},
           {[](Architecture* a) { a->num_sliding_window_layers = 45; },
            "architecture.num_sliding_window_layers"},
           {[](Architecture* a) { a->mtp_shares_embeddings = true; },
            "architecture.mtp_own_output_head"},
           {[](Architecture* a) { a->num_mtp_layers = 0; }, "architecture.mtp_dense_mlp"}}) {
    Architecture edited = base;
    c.edit(&edited);
    const absl::Status refused = CheckArchitectureShape(edited);
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(absl::StrContains(refused.message(), c.field)) << refused;
  }
}

// MiMo-V2-Flash's fields: values of their own width (v_head_dim without
// latent attention) in every layer's self attention, sinks in the sliding
// layers only, and a 16-bit o_proj in an FP8 checkpoint. A value width the
// count cannot place is refused naming the field, not counted at head_dim.
TEST(ParametersTest, ValueWidthAndSlidingSinksThatDisagreeAreRefusedByField) {
  Architecture base = Llama(48, 4096, 64, 8, 16384, 152576);
  base.head_dim = 192;
  base.v_head_dim = 128;
  base.sliding_window = 128;
  base.num_sliding_window_layers = 39;
  base.num_global_key_value_heads = 4;
  base.attention_sinks = true;
  base.attention_sinks_sliding_only = true;
  base.checkpoint_weight_format = NumberFormat::kFp8Block;
  base.checkpoint_attention_output_16bit = true;
  absl::StatusOr<ParameterCount> count = CountParameters(base);
  ASSERT_TRUE(count.ok()) << count.status();
  // v_proj and o_proj at 128: a value width of 192 would count
  // (8 x 39 + 4 x 9) x 64 x 4096 + 48 x 64 x 64 x 4096 more.
  Architecture wider = base;
  wider.v_head_dim = 0;
  EXPECT_EQ(CountParameters(wider)->total - count->total,
            (8.0 * 39 + 4 * 9) * 64 * 4096 + 48.0 * 64 * 64 * 4096);
  // Sinks in the 39 sliding layers only: 9 x 64 fewer than in every layer.
  Architecture everywhere = base;
  everywhere.attention_sinks_sliding_only = false;
  EXPECT_EQ(CountParameters(everywhere)->total - count->total, 9.0 * 64);
  struct Case {
    void (*edit)(Architecture*);
    const char* field;
  };
  for (const Case& c : std::initializer_list<Case>{
           {[](Architecture* a) { a->global_head_dim = 256; }, "architecture.v_head_dim"},
           {[](Architecture* a) { a->num_decoder_layers = 12; }, "architecture.v_head_dim"},
           {[](Architecture* a) { a->v_head_dim = -1; }, "architecture.v_head_dim"},
           {[](Architecture* a) { a->attention_sinks = false; },
            "architecture.attention_sinks_sliding_only"},
           {[](Architecture* a) { a->num_sliding_window_layers = 0; },
            "architecture.num_sliding_window_layers"},
           {[](Architecture* a) { a->checkpoint_weight_format = NumberFormat::kFp8; },
            "architecture.checkpoint_attention_output_16bit"}}) {
    Architecture edited = base;
    c.edit(&edited);
    const absl::Status refused = CheckArchitectureShape(edited);
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(absl::StrContains(refused.message(), c.field)) << refused;
  }
}

}  // namespace
}  // namespace modelatlas::estimator
