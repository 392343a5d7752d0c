// A model from anywhere (proto ModelSource): GGUF and safetensors headers
// parsed by the estimator, Hugging Face repositories fetched from a local
// stand-in of the Hub (tests/testing/hub_fixture_server.py) on the fetch
// threads, over the answers and over gRPC in process. No test reaches the
// internet.
#include "estimator-service/answers/model_sources.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/formats/gguf.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/core/weight_files.h"
#include "estimator-service/service.h"
#include "tests/estimator/fake_records.h"
#include "tests/estimator/model_files.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas::estimator {
namespace {

using testing::Catalog;
using testing::HubFixture;

// Waits for an answer that may come from a fetch thread.
template <typename Response>
class Waiter {
 public:
  AnswerDone<Response> done() {
    return [this](absl::StatusOr<Response> r) {
      result_ = std::move(r);
      ready_.Notify();
    };
  }
  absl::StatusOr<Response>& get() {
    EXPECT_TRUE(ready_.WaitForNotificationWithTimeout(absl::Seconds(30)));
    return *result_;
  }

 private:
  absl::Notification ready_;
  std::optional<absl::StatusOr<Response>> result_;
};

v1::ModelSource Gguf(const std::string& bytes, const std::string& name = "tiny.Q4_K_M.gguf") {
  v1::ModelSource source;
  source.mutable_gguf_header()->set_header(bytes);
  source.mutable_gguf_header()->set_file_name(name);
  return source;
}

v1::ModelSource Hf(const std::string& id, const std::string& revision = "") {
  v1::ModelSource source;
  source.mutable_hf_repo()->set_id(id);
  source.mutable_hf_repo()->set_revision(revision);
  return source;
}

absl::StatusOr<v1::EstimateInferenceMemoryResponse> Memory(const v1::ModelSource& source) {
  v1::EstimateInferenceMemoryRequest request;
  *request.mutable_source() = source;
  Waiter<v1::EstimateInferenceMemoryResponse> waiter;
  AnswerInferenceMemory(Catalog(), request, waiter.done());
  return std::move(waiter.get());
}

absl::StatusOr<v1::CountParametersResponse> Count(const v1::ModelSource& source) {
  v1::CountParametersRequest request;
  *request.mutable_model_source() = source;
  Waiter<v1::CountParametersResponse> waiter;
  AnswerCountParameters(Catalog(), request, waiter.done());
  return std::move(waiter.get());
}

const v1::EstimateLine* Line(const v1::EstimateInferenceMemoryResponse& r, const char* name) {
  for (const auto& line : r.lines()) {
    if (line.component() == name) return &line;
  }
  return nullptr;
}

uint64_t TinyLlamaBytes() {
  uint64_t bytes = 0;
  for (const testing::Tensor& t : testing::TinyLlamaTensors()) {
    uint64_t n = static_cast<uint64_t>(t.element_bytes);
    for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
    bytes += n;
  }
  return bytes;
}

TEST(ModelSourcesTest, GgufHeaderGivesArchitectureAndExactWeightBytes) {
  // The header only, as the CLI sends it: the data is never needed.
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> r =
      Memory(Gguf(testing::GgufBytes("llama", /*header_only=*/true)));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->source(), "GGUF header of tiny.Q4_K_M.gguf: Q4_K_M, 3 tensors");
  EXPECT_EQ(r->display_name(), "Tiny GGUF");
  EXPECT_DOUBLE_EQ(r->parameters(), static_cast<double>(testing::kGgufTensorElements));
  const v1::EstimateLine* weights = Line(*r, "weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(weights->bytes(), static_cast<int64_t>(testing::kGgufTensorBytes));
  EXPECT_TRUE(absl::StrContains(weights->arithmetic(), "exact bytes from the file"))
      << weights->arithmetic();
  EXPECT_TRUE(absl::StrContains(weights->arithmetic(), "q4_K")) << weights->arithmetic();
  EXPECT_TRUE(absl::StrContains(weights->arithmetic(), "q6_K")) << weights->arithmetic();
  // The workload names no weight format the file's tensors do not have.
  EXPECT_TRUE(r->workload().weights_from_file());
  EXPECT_TRUE(absl::StrContains(r->workload().statement(),
                                ", weights as stored in the file (their exact bytes), "))
      << r->workload().statement();
  EXPECT_FALSE(absl::StrContains(r->workload().statement(), "weights bf16"))
      << r->workload().statement();
  // The KV cache is sized from the GGUF's metadata: 2 layers x 2 KV heads.
  const v1::EstimateLine* kv = Line(*r, "kv_cache");
  ASSERT_NE(kv, nullptr);
  EXPECT_GT(kv->bytes(), 0);
  int64_t sum = 0;
  for (const auto& line : r->lines()) sum += line.bytes();
  EXPECT_EQ(r->total_bytes(), sum);
}

// Fused attention is read from a GGUF's tensor names (blk.N.attn_qkv), not
// guessed from the family: a llama file with attn_qkv tensors, a phi3 file
// with split attn_q/k/v (llama.cpp loads either), and a file whose header
// names no attention tensor (the family decides: phi3 fused).
TEST(ModelSourcesTest, GgufFusedAttentionIsReadFromTheTensorNames) {
  auto read = [](const std::string& arch, const std::vector<testing::GgufExtraTensor>& extra) {
    absl::StatusOr<GgufParseResult> parsed =
        ParseGgufHeader(testing::GgufBytes(arch, /*header_only=*/true, extra));
    EXPECT_TRUE(parsed.ok() && parsed->complete) << parsed.status();
    absl::StatusOr<common::v1::Architecture> a =
        ArchitectureFromGguf(parsed->header, "source.gguf_header.metadata.");
    EXPECT_TRUE(a.ok()) << a.status();
    return a.ok() ? *a : common::v1::Architecture{};
  };
  // hidden 256, 4 heads of 64, 2 KV heads: q 256 + k 128 + v 128 rows.
  const common::v1::Architecture fused =
      read("llama", {{"blk.0.attn_qkv.weight", {256, 512}}, {"blk.1.attn_qkv.weight", {256, 512}}});
  ASSERT_TRUE(fused.has_fused_qkv());
  EXPECT_TRUE(fused.fused_qkv());
  const common::v1::Architecture split = read("phi3", {{"blk.0.attn_q.weight", {256, 256}},
                                                       {"blk.0.attn_k.weight", {256, 128}},
                                                       {"blk.0.attn_v.weight", {256, 128}}});
  ASSERT_TRUE(split.has_fused_qkv());
  EXPECT_FALSE(split.fused_qkv());
  const common::v1::Architecture unnamed = read("phi3", {});
  EXPECT_FALSE(unnamed.has_fused_qkv());

  // The core shape follows the file, and a quantized file of it is sized
  // with the fused rule: attn_qkv takes attn_v's type (Q4_K_M: Q6_K in the
  // second of two layers, use_more_bits), the whole q|k|v matrix with it.
  const Architecture core_fused = ToCoreArchitecture(fused);
  const Architecture core_split = ToCoreArchitecture(split);
  EXPECT_TRUE(core_fused.fused_qkv);
  EXPECT_FALSE(core_split.fused_qkv);                  // phi3, yet split in this file
  EXPECT_TRUE(ToCoreArchitecture(unnamed).fused_qkv);  // phi3's default
  Architecture by_hand = core_fused;
  by_hand.fused_qkv = false;
  absl::StatusOr<WeightFile> with = WeightFileOf(core_fused, NumberFormat::kGgufQ4KM);
  absl::StatusOr<WeightFile> without = WeightFileOf(by_hand, NumberFormat::kGgufQ4KM);
  ASSERT_TRUE(with.ok() && without.ok());
  // One layer's q and k (256 x 384) move from Q4_K (144 bytes / 256) to
  // Q6_K (210 bytes / 256).
  EXPECT_DOUBLE_EQ(with->bytes - without->bytes, 256.0 * 384 / 256 * (210 - 144));
}

TEST(ModelSourcesTest, GgufErrorsNameTheField) {
  const std::string whole = testing::GgufBytes("llama", true);
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> cut = Memory(Gguf(whole.substr(0, 200)));
  ASSERT_EQ(cut.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(cut.status().message(), "send at least")) << cut.status();

  absl::StatusOr<v1::EstimateInferenceMemoryResponse> rwkv =
      Memory(Gguf(testing::GgufBytes("rwkv6", true)));
  ASSERT_EQ(rwkv.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetReason(rwkv.status()), "UNSUPPORTED_MODEL_TYPE");
  EXPECT_TRUE(absl::StrContains(rwkv.status().ToString(), "qwen2")) << rwkv.status();

  absl::StatusOr<v1::EstimateInferenceMemoryResponse> junk = Memory(Gguf("not a gguf at all"));
  EXPECT_EQ(junk.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ModelSourcesTest, SafetensorsHeaderWithConfigCountsExactly) {
  v1::ModelSource source;
  v1::ModelFileHeader* file = source.mutable_safetensors_header();
  file->set_header(testing::SafetensorsBytes(testing::TinyLlamaTensors(), /*with_data=*/false));
  file->set_file_name("model.safetensors");
  file->set_config_json(testing::kTinyLlamaConfig);
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> r = Memory(source);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(absl::StartsWith(r->source(), "safetensors header of model.safetensors"))
      << r->source();
  EXPECT_EQ(Line(*r, "weights")->bytes(), static_cast<int64_t>(TinyLlamaBytes()));

  absl::StatusOr<v1::CountParametersResponse> counted = Count(source);
  ASSERT_TRUE(counted.ok()) << counted.status();
  // The architecture's count and the file's agree for this checkpoint.
  EXPECT_DOUBLE_EQ(counted->total_parameters(), counted->tensor_parameters());
  EXPECT_EQ(counted->architecture().num_layers(), 2);
}

// A checkpoint that stores causal masks as BOOL tensors beside its weights
// (GPT-Neo, GPT-NeoX): the masks are not parameters, so the file's count
// still equals the architecture's, and the answer says what was left out;
// the weights line keeps the file's bytes, masks included.
TEST(ModelSourcesTest, SafetensorsMasksAreNotCountedAsParameters) {
  std::vector<testing::Tensor> tensors = testing::TinyLlamaTensors();
  tensors.push_back({"model.layers.0.self_attn.bias", "BOOL", {1, 1, 16, 16}, 1});
  tensors.push_back({"model.layers.1.self_attn.bias", "BOOL", {1, 1, 16, 16}, 1});
  v1::ModelSource source;
  v1::ModelFileHeader* file = source.mutable_safetensors_header();
  file->set_header(testing::SafetensorsBytes(tensors, /*with_data=*/false));
  file->set_file_name("model.safetensors");
  file->set_config_json(testing::kTinyLlamaConfig);
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> r = Memory(source);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(absl::StrContains(r->source(), "512 values of BOOL tensors")) << r->source();
  EXPECT_EQ(Line(*r, "weights")->bytes(), static_cast<int64_t>(TinyLlamaBytes() + 512));

  absl::StatusOr<v1::CountParametersResponse> counted = Count(source);
  ASSERT_TRUE(counted.ok()) << counted.status();
  EXPECT_DOUBLE_EQ(counted->total_parameters(), counted->tensor_parameters());
}

TEST(ModelSourcesTest, CatalogNameAndInlineSourcesAreNamed) {
  v1::ModelSource by_name;
  by_name.set_catalog_name("Llama 3.1 8B");
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> named = Memory(by_name);
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->source(), "catalog record models/llama-3-1-8b");

  v1::ModelSource config;
  config.mutable_inline_model()->set_hf_config_json(testing::kTinyLlamaConfig);
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> inline_config = Memory(config);
  ASSERT_TRUE(inline_config.ok()) << inline_config.status();
  EXPECT_EQ(inline_config->source(), "config.json (inline)");

  absl::StatusOr<v1::EstimateInferenceMemoryResponse> none = Memory(v1::ModelSource());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
}

// A config.json as an AWQ repository publishes it (hugging-quants/
// Meta-Llama-3.1-8B-Instruct-AWQ-INT4: Llama 3.1 8B's shape and AutoAWQ's
// quantization_config, groups of 128) is sized as that checkpoint when the
// request names no format: 5,727,854,592 bytes of weights, the figure
// weight_files_test.cc compares with the repository's 4.68 GB + 1.05 GB
// files (docs/ACCURACY.md), not the 16 GB bf16 would take; the answer says
// the format is the checkpoint's. A quantizer no format sizes (HQQ) keeps
// bf16 and says the checkpoint differs.
constexpr char kLlama31_8bShape[] =
    R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
        "intermediate_size": 14336, "max_position_embeddings": 131072,
        "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
        "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": false,
        "torch_dtype": "float16", "vocab_size": 128256, "quantization_config": )";

TEST(ModelSourcesTest, AnAwqConfigIsSizedAsItsCheckpointAndSaysSo) {
  v1::ModelSource awq;
  awq.mutable_inline_model()->set_hf_config_json(
      std::string(kLlama31_8bShape) +
      R"({"bits": 4, "group_size": 128, "modules_to_not_convert": null, "quant_method": "awq",
          "version": "gemm", "zero_point": true}})");
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> r = Memory(awq);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE(Line(*r, "weights"), nullptr);
  EXPECT_EQ(Line(*r, "weights")->bytes(), 5727854592);
  EXPECT_EQ(r->workload().workload().weight_format(), v1::NUMBER_FORMAT_AWQ_INT4);
  EXPECT_EQ(r->workload().workload().quantization_group_size(), 128);
  EXPECT_TRUE(r->workload().weight_format_from_checkpoint());
  EXPECT_NE(r->workload().statement().find(
                "weights awq-int4 (the published checkpoint's format; the default is bf16)"),
            std::string::npos)
      << r->workload().statement();

  // Groups of 64: twice the scales and zeros, (16 + 4) bits per 64 weights
  // instead of per 128 over the 6,979,321,856 quantized weights.
  v1::ModelSource awq64 = awq;
  awq64.mutable_inline_model()->set_hf_config_json(
      std::string(kLlama31_8bShape) +
      R"({"bits": 4, "group_size": 64, "quant_method": "awq", "version": "gemm"}})");
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> r64 = Memory(awq64);
  ASSERT_TRUE(r64.ok()) << r64.status();
  EXPECT_EQ(r64->workload().workload().quantization_group_size(), 64);
  EXPECT_GT(Line(*r64, "weights")->bytes(), Line(*r, "weights")->bytes());

  v1::ModelSource hqq;
  hqq.mutable_inline_model()->set_hf_config_json(std::string(kLlama31_8bShape) +
                                                 R"({"quant_method": "hqq", "nbits": 4}})");
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> unsized = Memory(hqq);
  ASSERT_TRUE(unsized.ok()) << unsized.status();
  EXPECT_EQ(unsized->workload().workload().weight_format(), v1::NUMBER_FORMAT_BF16);
  EXPECT_TRUE(unsized->workload().checkpoint_quantization_not_sized());
  EXPECT_FALSE(unsized->workload().weight_format_from_checkpoint());
  EXPECT_NE(unsized->workload().statement().find(
                "the published checkpoint is quantized in a way not sized here"),
            std::string::npos)
      << unsized->workload().statement();
}

TEST(ModelSourcesTest, ParameterCountWithLargestLayerIsDeepSpeedsModelStates) {
  // DeepSpeed's example: 2851M parameters, a 32M largest layer, 8 GPUs, ZeRO-3.
  v1::EstimateTrainingMemoryRequest request;
  v1::InlineModel* model = request.mutable_model()->mutable_any()->mutable_inline_model();
  model->set_parameters(2851e6);
  model->set_largest_layer_parameters(32e6);
  request.mutable_settings()->set_zero_stage(3);
  request.mutable_settings()->set_data_parallel(8);
  Waiter<v1::EstimateTrainingMemoryResponse> waiter;
  AnswerTrainingMemoryFromAnySource(Catalog(), request, waiter.done());
  absl::StatusOr<v1::EstimateTrainingMemoryResponse>& r = waiter.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->source(), "parameter count (inline)");
  // 4 x 32e6 + 18 x 2851e6 / 8 (estimate_zero3_model_states_mem_needs, no offload).
  EXPECT_EQ(r->device_total_bytes(), 6542750000);
  // 32e6 x 4 x 8 GPUs per node x 1.5 (zero_init).
  EXPECT_EQ(r->host_total_bytes(), 1536000000);

  request.mutable_settings()->set_offload_optimizer(true);
  request.mutable_settings()->set_offload_parameters(true);
  Waiter<v1::EstimateTrainingMemoryResponse> offloaded;
  AnswerTrainingMemoryFromAnySource(Catalog(), request, offloaded.done());
  ASSERT_TRUE(offloaded.get().ok()) << offloaded.get().status();
  EXPECT_EQ(offloaded.get()->device_total_bytes(), 128000000);
  EXPECT_EQ(offloaded.get()->host_total_bytes(), 76977000000);  // 2851e6 x 18 x 1.5

  // ZeRO-3 without the largest layer names the field.
  model->clear_largest_layer_parameters();
  Waiter<v1::EstimateTrainingMemoryResponse> missing;
  AnswerTrainingMemoryFromAnySource(Catalog(), request, missing.done());
  ASSERT_EQ(missing.get().status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(missing.get().status().ToString(),
                                "model.any.inline_model.largest_layer_parameters"))
      << missing.get().status();

  // ZeRO-2 as DeepSpeed's estimate_zero2_model_states_mem_needs: 4P + 16P / n.
  request.mutable_settings()->set_zero_stage(2);
  request.mutable_settings()->set_offload_optimizer(false);
  request.mutable_settings()->set_offload_parameters(false);
  Waiter<v1::EstimateTrainingMemoryResponse> stage2;
  AnswerTrainingMemoryFromAnySource(Catalog(), request, stage2.done());
  ASSERT_TRUE(stage2.get().ok()) << stage2.get().status();
  EXPECT_EQ(stage2.get()->device_total_bytes(), 4 * int64_t{2851000000} + 5702000000);
}

TEST(ServingExtrasTest, LoraAdaptersAndADraftModelAddTheirLines) {
  v1::EstimateInferenceMemoryRequest base;
  base.set_model("Llama 3.1 8B");
  base.mutable_workload()->set_context_length_tokens(8192);
  Waiter<v1::EstimateInferenceMemoryResponse> plain;
  AnswerInferenceMemory(Catalog(), base, plain.done());
  ASSERT_TRUE(plain.get().ok()) << plain.get().status();

  v1::EstimateInferenceMemoryRequest with = base;
  // rank 16 on q_proj and v_proj (from a PEFT adapter_config.json), two adapters:
  // (16 x (4096 + 4096) + 16 x (4096 + 1024)) x 32 layers = 6815744 parameters.
  with.mutable_lora()->set_adapter_config_json(
      R"({"r": 16, "target_modules": ["q_proj", "v_proj"], "peft_type": "LORA"})");
  with.mutable_lora()->set_adapters(2);
  *with.mutable_draft_model() = Gguf(testing::GgufBytes("llama", true), "draft.gguf");
  Waiter<v1::EstimateInferenceMemoryResponse> extra;
  AnswerInferenceMemory(Catalog(), with, extra.done());
  ASSERT_TRUE(extra.get().ok()) << extra.get().status();
  const v1::EstimateLine* lora = Line(*extra.get(), "lora_adapters");
  ASSERT_NE(lora, nullptr);
  EXPECT_EQ(lora->bytes(), 6815744 * 2 * 2);
  const v1::EstimateLine* draft = Line(*extra.get(), "draft_weights");
  ASSERT_NE(draft, nullptr);
  EXPECT_EQ(draft->bytes(), static_cast<int64_t>(testing::kGgufTensorBytes));
  EXPECT_TRUE(absl::StrContains(draft->arithmetic(), "GGUF header of draft.gguf"))
      << draft->arithmetic();
  const v1::EstimateLine* draft_kv = Line(*extra.get(), "draft_kv_cache");
  ASSERT_NE(draft_kv, nullptr);
  // The same workload: 2 (K, V) x 2 layers x 2 KV heads x 64 head dim x 2 bytes
  // = 1024 bytes per token, x 8192 tokens.
  EXPECT_EQ(draft_kv->bytes(), 1024 * 8192);
  EXPECT_EQ(extra.get()->total_bytes(),
            plain.get()->total_bytes() + lora->bytes() + draft->bytes() + draft_kv->bytes());

  // A plan counts them per card too.
  v1::PlanInferenceRequest plan;
  plan.set_model("Llama 3.1 8B");
  *plan.mutable_lora() = with.lora();
  *plan.mutable_draft_model() = with.draft_model();
  Waiter<v1::PlanInferenceResponse> planned;
  AnswerPlanInference(Catalog(), plan, planned.done());
  ASSERT_TRUE(planned.get().ok()) << planned.get().status();
  EXPECT_NE(Line(planned.get()->memory(), "draft_kv_cache"), nullptr);

  v1::EstimateInferenceMemoryRequest bad = base;
  bad.mutable_lora()->add_target_modules("attention");
  bad.mutable_lora()->set_rank(8);
  Waiter<v1::EstimateInferenceMemoryResponse> refused;
  AnswerInferenceMemory(Catalog(), bad, refused.done());
  EXPECT_EQ(refused.get().status().code(), absl::StatusCode::kInvalidArgument);
}

// A served adapter is counted by the training estimate's formula
// (core/training_memory.h LoraParameters) under PEFT's module names:
// "all-linear" on Llama 3.1 8B adapts q, k, v, o, up, down and gate,
// 32 x 16 x ((4096 + 4096) + 2 x (4096 + 1024) + (4096 + 4096)
// + 2 x (4096 + 14336) + (14336 + 4096)) = 41,943,040 parameters; GPT-2 has
// no gate projection, so all-linear leaves it out and naming it is refused.
TEST(ServingExtrasTest, LoraAdaptersTakeTheTrainingFormulaUnderPeftNames) {
  const auto lora_line =
      [](const std::string& model,
         const std::vector<std::string>& targets) -> absl::StatusOr<v1::EstimateLine> {
    v1::EstimateInferenceMemoryRequest request;
    request.set_model(model);
    request.mutable_workload()->set_context_length_tokens(1024);
    request.mutable_lora()->set_rank(16);
    for (const std::string& target : targets) request.mutable_lora()->add_target_modules(target);
    Waiter<v1::EstimateInferenceMemoryResponse> waiter;
    AnswerInferenceMemory(Catalog(), request, waiter.done());
    if (!waiter.get().ok()) return waiter.get().status();
    const v1::EstimateLine* line = Line(*waiter.get(), "lora_adapters");
    if (line == nullptr) return absl::NotFoundError("no lora_adapters line");
    return *line;
  };
  absl::StatusOr<v1::EstimateLine> llama = lora_line("Llama 3.1 8B", {"all-linear"});
  ASSERT_TRUE(llama.ok()) << llama.status();
  const double llama_parameters =
      32 * 16.0 * (8192 + 2 * (4096 + 1024) + 8192 + 2 * (4096 + 14336) + (14336 + 4096));
  EXPECT_EQ(llama_parameters, 41943040);
  EXPECT_EQ(llama->bytes(), llama_parameters * 2);
  EXPECT_TRUE(absl::StrContains(llama->arithmetic(),
                                "LoRA rank 16 on q_proj, k_proj, v_proj, o_proj, up_proj, "
                                "down_proj, gate_proj: 32 layers x (q 16 x (4096 + 4096) + "))
      << llama->arithmetic();

  absl::StatusOr<v1::EstimateLine> gpt2 = lora_line("GPT-2 (124M)", {"all-linear"});
  ASSERT_TRUE(gpt2.ok()) << gpt2.status();
  // 12 layers x 16 x (4 x (768 + 768) + (768 + 3072) + (3072 + 768)).
  EXPECT_EQ(gpt2->bytes(), 12 * 16 * (4 * 1536 + 2 * 3840) * 2);
  absl::StatusOr<v1::EstimateLine> gated = lora_line("GPT-2 (124M)", {"q_proj", "gate_proj"});
  EXPECT_EQ(gated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(gated.status().message(), "lora.target_modules")) << gated.status();
}

class HubSourcesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    hub_ = new HubFixture(std::filesystem::path(::testing::TempDir()) /
                          absl::StrCat("model_sources_hub_", getpid()));
    ASSERT_NE(hub_->port(), 0);
  }
  static void TearDownTestSuite() {
    delete hub_;
    hub_ = nullptr;
  }
  void SetUp() override { Configure(hub_->endpoint()); }

  // A fresh cache per test; the endpoint as the operator gives it.
  void Configure(const std::string& endpoint, bool offline = false) {
    HfHubOptions options;
    options.endpoint = endpoint;
    options.cache_dir =
        (std::filesystem::path(::testing::TempDir()) /
         absl::StrCat("model_sources_cache_", getpid(), "_",
                      ::testing::UnitTest::GetInstance()->current_test_info()->name()))
            .string();
    options.offline = offline;
    options.timeout = absl::Seconds(10);
    ConfigureHub(options, 2);
  }

  static HubFixture* hub_;
};
HubFixture* HubSourcesTest::hub_ = nullptr;

TEST_F(HubSourcesTest, RepositoryIdIsFetchedPinnedAndSizedExactly) {
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> r = Memory(Hf("org/tiny-llama"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->source(), absl::StrCat("Hugging Face org/tiny-llama at ", testing::kTinyLlamaSha));
  EXPECT_EQ(r->source_revision(), testing::kTinyLlamaSha);
  EXPECT_EQ(r->display_name(), "org/tiny-llama");
  EXPECT_EQ(Line(*r, "weights")->bytes(), static_cast<int64_t>(TinyLlamaBytes()));
  // The weights were never fetched: only the header by range requests.
  EXPECT_FALSE(absl::StrContains(hub_->log(),
                                 "\"range\": \"\", \"authorization\": \"\", "
                                 "\"status\": 200, \"bytes\": 9"))
      << hub_->log();

  // The same at the pinned sha.
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> pinned =
      Memory(Hf("org/tiny-llama", testing::kTinyLlamaSha));
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ(pinned->total_bytes(), r->total_bytes());
}

TEST_F(HubSourcesTest, PlanCountAndTrainingTakeARepository) {
  v1::PlanInferenceRequest plan;
  *plan.mutable_source() = Hf("org/tiny-llama");
  Waiter<v1::PlanInferenceResponse> planned;
  AnswerPlanInference(Catalog(), plan, planned.done());
  ASSERT_TRUE(planned.get().ok()) << planned.get().status();
  EXPECT_EQ(planned.get()->memory().source_revision(), testing::kTinyLlamaSha);
  ASSERT_EQ(planned.get()->plans_size(), 1);
  EXPECT_TRUE(planned.get()->plans(0).fits());

  v1::CountParametersRequest count;
  *count.mutable_model_source() = Hf("org/tiny-llama");
  Waiter<v1::CountParametersResponse> counted;
  AnswerCountParameters(Catalog(), count, counted.done());
  ASSERT_TRUE(counted.get().ok()) << counted.get().status();
  EXPECT_DOUBLE_EQ(counted.get()->total_parameters(), counted.get()->tensor_parameters());

  v1::EstimateTrainingMemoryRequest training;
  *training.mutable_model()->mutable_any() = Hf("org/tiny-llama");
  Waiter<v1::EstimateTrainingMemoryResponse> trained;
  AnswerTrainingMemoryFromAnySource(Catalog(), training, trained.done());
  ASSERT_TRUE(trained.get().ok()) << trained.get().status();
  EXPECT_EQ(trained.get()->source(),
            absl::StrCat("Hugging Face org/tiny-llama at ", testing::kTinyLlamaSha));
  EXPECT_EQ(trained.get()->display_name(), "org/tiny-llama");
  EXPECT_GT(trained.get()->device_total_bytes(), 0);

  v1::PlanTrainingRequest plan_training;
  *plan_training.mutable_model()->mutable_any() = Hf("org/tiny-llama");
  plan_training.set_hardware("H100");
  Waiter<v1::PlanTrainingResponse> plan_trained;
  AnswerPlanTrainingFromAnySource(Catalog(), plan_training, plan_trained.done());
  ASSERT_TRUE(plan_trained.get().ok()) << plan_trained.get().status();
  EXPECT_TRUE(absl::StartsWith(plan_trained.get()->memory().source(), "Hugging Face"));

  v1::EstimateTrainingComputeRequest compute;
  *compute.mutable_source() = Hf("org/tiny-llama");
  compute.mutable_inputs()->set_dataset_tokens(1e9);
  Waiter<v1::EstimateTrainingComputeResponse> computed;
  AnswerTrainingComputeFromAnySource(Catalog(), compute, computed.done());
  ASSERT_TRUE(computed.get().ok()) << computed.get().status();
  EXPECT_TRUE(absl::StartsWith(computed.get()->source(), "Hugging Face"));
  ASSERT_TRUE(computed.get()->has_operation_counting_flop());
  EXPECT_DOUBLE_EQ(computed.get()->operation_counting_flop(),
                   6 * counted.get()->tensor_parameters() * 1e9);
}

TEST_F(HubSourcesTest, HubErrorsAreClear) {
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> missing = Memory(Hf("org/missing"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "org/missing")) << missing.status();

  absl::StatusOr<v1::EstimateInferenceMemoryResponse> gated = Memory(Hf("org/gated"));
  EXPECT_EQ(gated.status().code(), absl::StatusCode::kUnauthenticated) << gated.status();
  EXPECT_TRUE(absl::StrContains(gated.status().message(), "--hf_token_file")) << gated.status();

  absl::StatusOr<v1::EstimateInferenceMemoryResponse> rwkv = Memory(Hf("org/rwkv"));
  EXPECT_EQ(rwkv.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(rwkv.status().ToString(), "llama")) << rwkv.status();

  absl::StatusOr<v1::EstimateInferenceMemoryResponse> bad_id = Memory(Hf("../etc/passwd"));
  EXPECT_EQ(bad_id.status().code(), absl::StatusCode::kInvalidArgument);

  Configure("http://127.0.0.1:1");  // nothing listens there
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> down = Memory(Hf("org/tiny-llama"));
  EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(down.status().message(), "127.0.0.1")) << down.status();

  Configure(hub_->endpoint(), /*offline=*/true);
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> offline = Memory(Hf("org/tiny-llama"));
  EXPECT_EQ(offline.status().code(), absl::StatusCode::kFailedPrecondition) << offline.status();
}

TEST_F(HubSourcesTest, NoFetchForACallerThatIsGoneOrOutOfTime) {
  {
    CallDeadlineScope gone(absl::InfiniteFuture(), [] { return true; });
    absl::StatusOr<v1::EstimateInferenceMemoryResponse> r = Memory(Hf("org/tiny-llama"));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << r.status();
  }
  {
    CallDeadlineScope late(absl::Now() - absl::Seconds(1));
    absl::StatusOr<v1::EstimateInferenceMemoryResponse> r = Memory(Hf("org/tiny-llama"));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  }
  EXPECT_TRUE(Memory(Hf("org/tiny-llama")).ok());  // the scopes are over
}

TEST_F(HubSourcesTest, AMultimodalRepositorySizesEachPartFromItsTensors) {
  // org/tiny-llava: a llava config.json and one safetensors file whose
  // tensors live under language_model., vision_tower. and
  // multi_modal_projector.: each part's line is its tensors' bytes.
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> r = Memory(Hf("org/tiny-llava"));
  ASSERT_TRUE(r.ok()) << r.status();
  uint64_t vision = 0, projector = 0, rest = 0;
  for (const testing::Tensor& t : testing::TinyLlavaTensors()) {
    uint64_t n = static_cast<uint64_t>(t.element_bytes);
    for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
    const std::string kind = EncoderKindOfTensor(t.name);
    (kind == "vision_encoder" ? vision : kind == "projector" ? projector : rest) += n;
  }
  ASSERT_NE(Line(*r, "vision_encoder"), nullptr);
  ASSERT_NE(Line(*r, "projector"), nullptr);
  EXPECT_EQ(Line(*r, "vision_encoder")->bytes(), static_cast<int64_t>(vision));
  EXPECT_EQ(Line(*r, "projector")->bytes(), static_cast<int64_t>(projector));
  EXPECT_EQ(Line(*r, "weights")->bytes(), static_cast<int64_t>(rest));
  EXPECT_EQ(rest, TinyLlamaBytes());
}

TEST_F(HubSourcesTest, AFetchUnderWayStopsWhenTheCallerCancels) {
  // org/slow answers after 5 s; the caller cancels after 300 ms.
  std::atomic<bool> gone{false};
  std::thread caller([&gone] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    gone = true;
  });
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> r;
  {
    CallDeadlineScope scope(absl::Now() + absl::Seconds(30), [&gone] { return gone.load(); });
    r = Memory(Hf("org/slow"));
  }
  const auto took = std::chrono::steady_clock::now() - start;
  caller.join();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "was being fetched")) << r.status();
  EXPECT_LT(took, std::chrono::milliseconds(2500));
}

TEST_F(HubSourcesTest, OverGrpcACancelledCallFreesItsFetchThread) {
  // One fetch thread: while a fetch of org/slow (5 s) holds it, another
  // repository waits. The caller of the slow one cancels after 300 ms; the
  // next call is answered well before the slow answer would have come.
  HfHubOptions options;
  options.endpoint = hub_->endpoint();
  options.timeout = absl::Seconds(10);
  ConfigureHub(options, 1);
  prometheus::Registry registry;
  GrpcMetrics metrics(registry, "client");
  CatalogClient client("127.0.0.1:1", &metrics, absl::Seconds(1));
  EstimatorServiceImpl service(&client, nullptr);
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  auto stub = v1::EstimatorService::NewStub(server->InProcessChannel({}));

  const auto start = std::chrono::steady_clock::now();
  v1::EstimateInferenceMemoryRequest slow;
  *slow.mutable_source() = Hf("org/slow");
  v1::EstimateInferenceMemoryResponse response;
  grpc::ClientContext slow_context;
  slow_context.set_deadline(modelatlas::testing::DeadlineFromNow(20000));
  std::thread canceller([&slow_context] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    slow_context.TryCancel();
  });
  EXPECT_EQ(stub->EstimateInferenceMemory(&slow_context, slow, &response).error_code(),
            grpc::StatusCode::CANCELLED);
  canceller.join();

  v1::EstimateInferenceMemoryRequest next;
  *next.mutable_source() = Hf("org/tiny-llama");
  grpc::ClientContext next_context;
  next_context.set_deadline(modelatlas::testing::DeadlineFromNow(20000));
  grpc::Status status = stub->EstimateInferenceMemory(&next_context, next, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(3000));
  server->Shutdown(modelatlas::testing::DeadlineFromNow(1000));
}

TEST_F(HubSourcesTest, OverGrpcTheFetchRunsOffTheCallbackThreads) {
  // No catalog at all: a repository id needs none.
  prometheus::Registry registry;
  GrpcMetrics metrics(registry, "client");
  CatalogClient client("127.0.0.1:1", &metrics, absl::Seconds(1));
  EstimatorServiceImpl service(&client, nullptr);
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  auto stub = v1::EstimatorService::NewStub(server->InProcessChannel({}));

  v1::EstimateInferenceMemoryRequest request;
  *request.mutable_source() = Hf("org/tiny-llama");
  v1::EstimateInferenceMemoryResponse response;
  grpc::ClientContext context;
  context.set_deadline(modelatlas::testing::DeadlineFromNow(20000));
  grpc::Status status = stub->EstimateInferenceMemory(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.source_revision(), testing::kTinyLlamaSha);

  v1::EstimateInferenceMemoryRequest missing;
  *missing.mutable_source() = Hf("org/missing");
  grpc::ClientContext missing_context;
  missing_context.set_deadline(modelatlas::testing::DeadlineFromNow(20000));
  EXPECT_EQ(stub->EstimateInferenceMemory(&missing_context, missing, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);

  v1::EstimateTrainingMemoryRequest training;
  *training.mutable_model()->mutable_any() = Hf("org/tiny-llama");
  v1::EstimateTrainingMemoryResponse trained;
  grpc::ClientContext training_context;
  training_context.set_deadline(modelatlas::testing::DeadlineFromNow(20000));
  ASSERT_TRUE(stub->EstimateTrainingMemory(&training_context, training, &trained).ok());
  EXPECT_TRUE(absl::StartsWith(trained.source(), "Hugging Face org/tiny-llama"));
  server->Shutdown(modelatlas::testing::DeadlineFromNow(1000));
}

}  // namespace
}  // namespace modelatlas::estimator
