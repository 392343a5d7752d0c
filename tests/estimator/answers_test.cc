// The answer builders (answers/) with an in-memory record source instead of
// a running catalog: the workload resolved once and echoed, the one sizing
// shared by the memory estimate, the plan and the runnable-models list.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "common/formats/hf_config.h"
#include "common/status/errors.h"
#include "estimator-service/answers/audit.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/records.h"
#include "estimator-service/answers/runnable.h"
#include "estimator-service/answers/training.h"
#include "estimator-service/catalog/record_source.h"
#include "estimator-service/core/workload.h"
#include "tests/estimator/fake_records.h"
#include "tests/estimator/published_configs.h"

namespace modelatlas::estimator {
namespace {

using common::v1::Hardware;
using common::v1::Model;
using testing::Answer;
using testing::Catalog;
using testing::FakeRecords;
using testing::Gpt2;
using testing::H100;
using testing::Llama8B;

std::vector<std::string> Fields(const absl::Status& status) {
  std::vector<std::string> fields;
  for (const FieldViolation& v : GetFieldViolations(status)) fields.push_back(v.field);
  return fields;
}

TEST(WorkloadTest, OneResolutionWithOneMeaningForEveryUnsetField) {
  absl::StatusOr<ResolvedWorkload> w = ResolveWorkload(WorkloadRequest{});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->context_length_tokens, 4096);
  EXPECT_TRUE(w->context_defaulted);
  EXPECT_EQ(w->batch_size, 1);
  EXPECT_EQ(w->prefill_chunk_tokens, 512);
  EXPECT_EQ(w->prompt_tokens, 1000);
  EXPECT_EQ(w->weight_format, NumberFormat::kBf16);
  EXPECT_EQ(w->kv_cache_format, NumberFormat::kBf16);
  EXPECT_EQ(w->quantization_group_size, 128);
  EXPECT_EQ(w->overhead_bytes, int64_t{1} << 30);
  EXPECT_EQ(w->memory_utilization, 0.9);
  EXPECT_EQ(w->prefill_efficiency, 0.5);
  // What the request did not name says so.
  EXPECT_TRUE(absl::StartsWith(WorkloadStatement(*w),
                               "context 4096 tokens (the default), batch 1, weights bf16 (the "
                               "default), KV cache bf16, overhead 1 GiB"))
      << WorkloadStatement(*w);
  // Beside a model's maximum, so that the default is not read as what the
  // model allows; a context or format the request names is stated bare.
  const ResolvedWorkload long_model = WorkloadForModel(*w, 131072);
  EXPECT_EQ(long_model.model_max_context_tokens, 131072);
  EXPECT_TRUE(absl::StartsWith(WorkloadStatement(long_model),
                               "context 4096 tokens (the default; the model's maximum is 131072), "
                               "batch 1, weights bf16 (the default),"))
      << WorkloadStatement(long_model);
  WorkloadRequest named;
  named.context_length_tokens = 4096;
  named.weight_format = NumberFormat::kBf16;
  const ResolvedWorkload given = WorkloadForModel(*ResolveWorkload(named), 131072);
  EXPECT_TRUE(absl::StartsWith(WorkloadStatement(given),
                               "context 4096 tokens, batch 1, weights bf16, KV cache bf16"))
      << WorkloadStatement(given);

  // The default context is capped at a smaller model maximum; a given one is kept.
  const ResolvedWorkload capped = WorkloadForModel(*w, 1024);
  EXPECT_EQ(capped.context_length_tokens, 1024);
  EXPECT_TRUE(capped.context_capped);
  EXPECT_EQ(WorkloadForModel(*w, 131072).context_length_tokens, 4096);
  EXPECT_EQ(WorkloadForModel(*w, 0).context_length_tokens, 4096);
  WorkloadRequest asked;
  asked.context_length_tokens = 8192;
  EXPECT_EQ(WorkloadForModel(*ResolveWorkload(asked), 1024).context_length_tokens, 8192);
}

// The statement is remembered per thread by the workload's figures: each
// field that changes must change it, and going back gives the first
// statement again.
TEST(WorkloadTest, StatementFollowsEveryChangeOfTheWorkload) {
  absl::StatusOr<ResolvedWorkload> w = ResolveWorkload(WorkloadRequest{});
  ASSERT_TRUE(w.ok());
  const std::string first = WorkloadStatement(*w);
  ResolvedWorkload other = *w;
  other.context_length_tokens = 8192;
  EXPECT_TRUE(absl::StartsWith(WorkloadStatement(other), "context 8192 tokens"));
  other = *w;
  other.memory_utilization = 0.85;
  EXPECT_NE(WorkloadStatement(other).find("memory utilization 0.85"), std::string::npos);
  other = *w;
  other.context_capped = true;
  EXPECT_NE(WorkloadStatement(other).find("the model's maximum"), std::string::npos);
  EXPECT_EQ(WorkloadStatement(*w), first);
  EXPECT_EQ(first.find("maximum"), std::string::npos);
  other = *w;
  other.weight_format = NumberFormat::kMxfp4;
  other.weight_format_from_checkpoint = true;
  EXPECT_NE(WorkloadStatement(other).find(
                "weights mxfp4 (the published checkpoint's format; the default is bf16)"),
            std::string::npos)
      << WorkloadStatement(other);
  EXPECT_EQ(WorkloadStatement(*w), first);
  EXPECT_EQ(first.find("checkpoint"), std::string::npos);
  // What the request named, the model's maximum and a file's own weights
  // each change it, and each is part of the key it is remembered by.
  other = *w;
  other.context_defaulted = false;
  EXPECT_TRUE(absl::StartsWith(WorkloadStatement(other), "context 4096 tokens, batch"))
      << WorkloadStatement(other);
  other = *w;
  other.weight_format_defaulted = false;
  EXPECT_NE(WorkloadStatement(other).find(", weights bf16, "), std::string::npos)
      << WorkloadStatement(other);
  other = *w;
  other.model_max_context_tokens = 32768;
  EXPECT_NE(WorkloadStatement(other).find("(the default; the model's maximum is 32768)"),
            std::string::npos)
      << WorkloadStatement(other);
  other = *w;
  other.weights_from_file = true;
  EXPECT_NE(WorkloadStatement(other).find(", weights as stored in the file (their exact bytes), "),
            std::string::npos)
      << WorkloadStatement(other);
  ResolvedWorkload changed = *w;
  changed.context_defaulted = false;
  EXPECT_NE(WorkloadKeyOf(changed), WorkloadKeyOf(*w));
  changed = *w;
  changed.weight_format_defaulted = false;
  EXPECT_NE(WorkloadKeyOf(changed), WorkloadKeyOf(*w));
  changed = *w;
  changed.model_max_context_tokens = 32768;
  EXPECT_NE(WorkloadKeyOf(changed), WorkloadKeyOf(*w));
  changed = *w;
  changed.weights_from_file = true;
  EXPECT_NE(WorkloadKeyOf(changed), WorkloadKeyOf(*w));
  EXPECT_EQ(WorkloadStatement(*w), first);
}

// A weight format the request left unset becomes the model's quantized
// checkpoint's (gpt-oss ships MXFP4 experts, DeepSeek-V3 FP8 with 128x128
// block scales): the answer is then about the files people download, and
// says so. A format the request names is kept, bf16 too.
TEST(WorkloadTest, AnUnsetWeightFormatIsTheCheckpointsAndSaysSo) {
  const ResolvedWorkload defaulted = *ResolveWorkload(WorkloadRequest{});
  EXPECT_TRUE(defaulted.weight_format_defaulted);
  const ResolvedWorkload fitted =
      WorkloadForModel(defaulted, 131072, {.format = NumberFormat::kMxfp4});
  EXPECT_EQ(fitted.weight_format, NumberFormat::kMxfp4);
  EXPECT_TRUE(fitted.weight_format_from_checkpoint);
  EXPECT_EQ(fitted.context_length_tokens, 4096);
  EXPECT_FALSE(fitted.context_capped);
  // Both changes at once: the context capped, the format the checkpoint's.
  const ResolvedWorkload both =
      WorkloadForModel(defaulted, 2048, {.format = NumberFormat::kFp8Block});
  EXPECT_EQ(both.context_length_tokens, 2048);
  EXPECT_TRUE(both.context_capped);
  EXPECT_EQ(both.weight_format, NumberFormat::kFp8Block);
  EXPECT_TRUE(both.weight_format_from_checkpoint);
  // A bf16 checkpoint is the default: nothing to say.
  const ResolvedWorkload bf16 = WorkloadForModel(defaulted, 0, {.format = NumberFormat::kBf16});
  EXPECT_EQ(bf16, defaulted);
  EXPECT_EQ(WorkloadForModel(defaulted, 0, {}), defaulted);

  WorkloadRequest asked;
  asked.weight_format = NumberFormat::kBf16;
  const ResolvedWorkload named = *ResolveWorkload(asked);
  EXPECT_FALSE(named.weight_format_defaulted);
  const ResolvedWorkload kept = WorkloadForModel(named, 131072, {.format = NumberFormat::kMxfp4});
  EXPECT_EQ(kept.weight_format, NumberFormat::kBf16);
  EXPECT_FALSE(kept.weight_format_from_checkpoint);
}

// A grouped checkpoint format brings its groups (an AWQ repository with
// groups of 64 has twice the scales of the default 128), and the statement
// names them; a request that names its format keeps its own groups.
TEST(WorkloadTest, AGroupedCheckpointFormatBringsItsGroupSize) {
  const ResolvedWorkload defaulted = *ResolveWorkload(WorkloadRequest{});
  const ResolvedWorkload awq =
      WorkloadForModel(defaulted, 0, {.format = NumberFormat::kAwqInt4, .group_size = 64});
  EXPECT_EQ(awq.weight_format, NumberFormat::kAwqInt4);
  EXPECT_EQ(awq.quantization_group_size, 64);
  EXPECT_NE(WorkloadStatement(awq).find("weights awq-int4 (the published checkpoint's format; "
                                        "the default is bf16) (groups of 64)"),
            std::string::npos)
      << WorkloadStatement(awq);
  // No group size on record: the default's.
  EXPECT_EQ(
      WorkloadForModel(defaulted, 0, {.format = NumberFormat::kGptqInt4}).quantization_group_size,
      ResolvedWorkload::kDefaultQuantizationGroupSize);

  WorkloadRequest asked;
  asked.weight_format = NumberFormat::kAwqInt4;
  asked.quantization_group_size = 32;
  const ResolvedWorkload named = WorkloadForModel(
      *ResolveWorkload(asked), 0, {.format = NumberFormat::kAwqInt4, .group_size = 64});
  EXPECT_EQ(named.quantization_group_size, 32);
  EXPECT_FALSE(named.weight_format_from_checkpoint);
}

// A checkpoint quantized in a way no format here sizes (HQQ, GPTQ at 3 bits)
// leaves the default format, and the statement says the checkpoint differs,
// so no one reads the bf16 figure as the download's. A named format has
// nothing to add.
TEST(WorkloadTest, ACheckpointQuantizedInAWayNotSizedIsSaid) {
  const ResolvedWorkload defaulted = *ResolveWorkload(WorkloadRequest{});
  const ResolvedWorkload unsized = WorkloadForModel(defaulted, 0, {.quantized_not_sized = true});
  EXPECT_EQ(unsized.weight_format, NumberFormat::kBf16);
  EXPECT_TRUE(unsized.checkpoint_quantization_not_sized);
  EXPECT_FALSE(unsized.weight_format_from_checkpoint);
  const std::string statement = WorkloadStatement(unsized);
  EXPECT_NE(statement.find("weights bf16 (the default: the published checkpoint is quantized in a "
                           "way not sized here"),
            std::string::npos)
      << statement;
  EXPECT_NE(WorkloadKeyOf(unsized), WorkloadKeyOf(defaulted));

  WorkloadRequest asked;
  asked.weight_format = NumberFormat::kFp8;
  const ResolvedWorkload named =
      WorkloadForModel(*ResolveWorkload(asked), 0, {.quantized_not_sized = true});
  EXPECT_FALSE(named.checkpoint_quantization_not_sized);
  EXPECT_EQ(WorkloadStatement(named).find("checkpoint"), std::string::npos);
}

// Statements remembered per thread (by every figure they show) are the ones
// a thread that has remembered nothing composes: every field changed in
// turn, each change between the unchanged workload and itself again, many
// workloads in a row (more than one is remembered now).
std::string StatementOnAFreshThread(const ResolvedWorkload& w) {
  std::string text;
  std::thread([&] { text = WorkloadStatement(w); }).join();
  return text;
}

TEST(WorkloadTest, RememberedStatementsAreTheFreshlyComposedOnes) {
  const ResolvedWorkload base;
  using Change = void (*)(ResolvedWorkload&);
  const std::vector<Change> changes = {
      [](ResolvedWorkload&) {},
      [](ResolvedWorkload& w) { w.context_length_tokens = 8192; },
      [](ResolvedWorkload& w) { w.context_length_tokens = 131072; },
      [](ResolvedWorkload& w) { w.context_capped = true; },
      [](ResolvedWorkload& w) { w.batch_size = 3; },
      [](ResolvedWorkload& w) { w.prefill_chunk_tokens = 2048; },
      [](ResolvedWorkload& w) { w.prompt_tokens = 7; },
      [](ResolvedWorkload& w) { w.weight_format = NumberFormat::kFp8; },
      [](ResolvedWorkload& w) { w.weight_format = NumberFormat::kAwqInt4; },
      [](ResolvedWorkload& w) {
        w.weight_format = NumberFormat::kAwqInt4;
        w.quantization_group_size = 64;
      },
      [](ResolvedWorkload& w) { w.kv_cache_format = NumberFormat::kFp8; },
      [](ResolvedWorkload& w) { w.overhead_bytes = 0; },
      [](ResolvedWorkload& w) { w.overhead_bytes = (int64_t{1} << 30) + 1; },
      [](ResolvedWorkload& w) { w.memory_utilization = 0.85; },
      [](ResolvedWorkload& w) { w.prefill_efficiency = 0.25; },
      // Swapped figures: each key word is one figure (or a pair), not a sum.
      [](ResolvedWorkload& w) {
        w.batch_size = 512;
        w.prefill_chunk_tokens = 1;
      },
      [](ResolvedWorkload& w) { w.model_has_cross_attention = true; },
      [](ResolvedWorkload& w) {
        w.model_has_cross_attention = true;
        w.images_per_sequence = 3;
        w.images_per_sequence_defaulted = false;
      },
      [](ResolvedWorkload& w) {
        w.images_per_sequence = 0;
        w.images_per_sequence_defaulted = false;
      },
  };
  std::vector<size_t> order;
  for (size_t i = 1; i < changes.size(); ++i) order.insert(order.end(), {0, i, 0, i, i});
  // Then all of them again, one after another: each still remembered.
  for (size_t i = 0; i < changes.size(); ++i) order.push_back(i);
  for (size_t i = 0; i < changes.size(); ++i) order.push_back(i);
  for (size_t i : order) {
    ResolvedWorkload w = base;
    changes[i](w);
    const std::string fresh = StatementOnAFreshThread(w);
    EXPECT_EQ(WorkloadStatement(w), fresh) << "change " << i;
    std::string into = "left over";
    WorkloadStatementInto(w, &into);
    EXPECT_EQ(into, fresh) << "change " << i;
  }
}

// Images per sequence size a cross-attention cache (Llama 3.2 Vision). A
// model with such layers states them, defaulted or asked; a model without
// them states them only when asked, as not used; otherwise they are not
// said at all, so no other answer changes.
TEST(WorkloadTest, ImagesPerSequenceAreStatedWhereTheySizeACache) {
  const ResolvedWorkload defaulted = *ResolveWorkload(WorkloadRequest{});
  EXPECT_EQ(defaulted.images_per_sequence, 1);
  EXPECT_TRUE(defaulted.images_per_sequence_defaulted);
  EXPECT_EQ(WorkloadStatement(defaulted).find("image"), std::string::npos);
  Architecture mllama;
  mllama.num_layers = 40;
  mllama.num_cross_attention_layers = 8;
  mllama.cross_attention_positions = 6404;
  const ResolvedWorkload vision = WorkloadForModel(defaulted, mllama);
  EXPECT_TRUE(vision.model_has_cross_attention);
  EXPECT_TRUE(ImagesPerSequenceStated(vision));
  EXPECT_TRUE(ImagesPerSequenceDefaultedForModel(vision));
  EXPECT_TRUE(absl::StartsWith(WorkloadStatement(vision),
                               "context 4096 tokens (the default), 1 image per sequence (the "
                               "default), batch 1"))
      << WorkloadStatement(vision);
  EXPECT_FALSE(WorkloadForModel(defaulted, Architecture{}).model_has_cross_attention);

  WorkloadRequest asked;
  asked.images_per_sequence = 3;
  const ResolvedWorkload three = WorkloadForModel(*ResolveWorkload(asked), mllama);
  EXPECT_EQ(three.images_per_sequence, 3);
  EXPECT_FALSE(ImagesPerSequenceDefaultedForModel(three));
  EXPECT_TRUE(absl::StrContains(WorkloadStatement(three), ", 3 images per sequence, batch 1"))
      << WorkloadStatement(three);
  const ResolvedWorkload text_model = WorkloadForModel(*ResolveWorkload(asked), Architecture{});
  EXPECT_TRUE(ImagesPerSequenceStated(text_model));
  EXPECT_TRUE(absl::StrContains(
      WorkloadStatement(text_model),
      ", 3 images per sequence (not used: no cross-attention layers on record), batch 1"))
      << WorkloadStatement(text_model);
  asked.images_per_sequence = 0;  // text-only requests
  EXPECT_TRUE(
      absl::StrContains(WorkloadStatement(WorkloadForModel(*ResolveWorkload(asked), mllama)),
                        ", 0 images per sequence, batch 1"));

  // Out of range: named by field, with the bound.
  for (int images : {-1, 1001}) {
    asked.images_per_sequence = images;
    const absl::StatusOr<ResolvedWorkload> refused = ResolveWorkload(asked);
    ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << images;
    EXPECT_EQ(Fields(refused.status()), (std::vector<std::string>{"images_per_sequence"}));
    EXPECT_TRUE(absl::StrContains(refused.status().message(), "between 0 and 1000 images"))
        << refused.status();
  }
  asked.images_per_sequence = 1000;
  EXPECT_TRUE(ResolveWorkload(asked).ok());
}

TEST(WorkloadTest, OutOfRangeFieldsAreNamed) {
  v1::InferenceWorkload workload;
  workload.set_context_length_tokens(-1);
  workload.set_batch_size(-2);
  workload.set_prompt_tokens(-3);
  workload.set_kv_cache_format(v1::NUMBER_FORMAT_GPTQ_INT4);
  workload.set_memory_utilization(1.5);
  workload.set_weight_format(static_cast<v1::NumberFormat>(99));
  absl::StatusOr<ResolvedWorkload> resolved = ResolveWorkload(workload);
  ASSERT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Fields(resolved.status()), (std::vector<std::string>{"weight_format"}));
  workload.clear_weight_format();
  resolved = ResolveWorkload(workload);
  EXPECT_EQ(Fields(resolved.status()),
            (std::vector<std::string>{"context_length_tokens", "batch_size", "prompt_tokens",
                                      "kv_cache_format", "memory_utilization"}));
}

TEST(InferenceAnswersTest, MemoryEstimateEchoesTheResolvedWorkload) {
  auto records = Catalog();
  v1::EstimateInferenceMemoryRequest request;
  request.set_model("Llama 3.1 8B");
  Answer<v1::EstimateInferenceMemoryResponse> answer;
  AnswerInferenceMemory(records, request, answer.done());
  ASSERT_TRUE(answer.result.has_value());
  ASSERT_TRUE(answer.result->ok()) << answer.result->status();
  const v1::EstimateInferenceMemoryResponse& memory = **answer.result;
  EXPECT_EQ(memory.catalog_revision(), FakeRecords::kRevision);
  ASSERT_EQ(memory.lines_size(), 4);
  EXPECT_EQ(memory.lines(1).bytes(), 131072LL * 4096);  // the default 4096 tokens
  const v1::InferenceWorkload& assumed = memory.workload().workload();
  EXPECT_EQ(assumed.context_length_tokens(), 4096);
  EXPECT_EQ(assumed.batch_size(), 1);
  EXPECT_EQ(assumed.weight_format(), v1::NUMBER_FORMAT_BF16);
  EXPECT_EQ(assumed.kv_cache_format(), v1::NUMBER_FORMAT_BF16);
  EXPECT_EQ(assumed.quantization_group_size(), 128);
  EXPECT_TRUE(assumed.has_overhead_bytes());
  EXPECT_EQ(assumed.overhead_bytes(), int64_t{1} << 30);
  EXPECT_EQ(assumed.prefill_chunk_tokens(), 512);
  EXPECT_EQ(assumed.prompt_tokens(), 1000);
  EXPECT_EQ(assumed.memory_utilization(), 0.9);
  EXPECT_EQ(assumed.prefill_efficiency(), 0.5);
  EXPECT_FALSE(memory.workload().context_capped_at_model_maximum());
  EXPECT_TRUE(memory.workload().context_defaulted());
  EXPECT_TRUE(memory.workload().weight_format_defaulted());
  EXPECT_TRUE(absl::StartsWith(memory.workload().statement(), "context 4096 tokens (the default"))
      << memory.workload().statement();
}

TEST(InferenceAnswersTest, DefaultContextIsCappedAtTheModelsMaximumAndSaysSo) {
  auto records = Catalog();
  v1::EstimateInferenceMemoryRequest request;
  request.set_model("models/gpt-2-124m");
  Answer<v1::EstimateInferenceMemoryResponse> answer;
  AnswerInferenceMemory(records, request, answer.done());
  ASSERT_TRUE(answer.result->ok()) << answer.result->status();
  const v1::EstimateInferenceMemoryResponse& memory = **answer.result;
  EXPECT_EQ(memory.lines(1).bytes(), 2LL * 12 * 12 * 64 * 2 * 1024);
  EXPECT_EQ(memory.workload().workload().context_length_tokens(), 1024);
  EXPECT_TRUE(memory.workload().context_capped_at_model_maximum());
  EXPECT_TRUE(absl::StrContains(memory.workload().statement(), "the model's maximum"));
}

// The same question asked three ways gets the same assumed workload and
// the same figures: one resolution, one sizing.
TEST(InferenceAnswersTest, MemoryPlanAndRunnableEchoTheSameWorkloadAndFigures) {
  auto records = Catalog();
  v1::InferenceWorkload workload;
  workload.set_batch_size(2);
  workload.set_kv_cache_format(v1::NUMBER_FORMAT_FP8);

  v1::EstimateInferenceMemoryRequest memory_request;
  memory_request.set_model("Llama 3.1 8B");
  *memory_request.mutable_workload() = workload;
  Answer<v1::EstimateInferenceMemoryResponse> memory;
  AnswerInferenceMemory(records, memory_request, memory.done());
  ASSERT_TRUE(memory.result->ok()) << memory.result->status();

  v1::PlanInferenceRequest plan_request;
  plan_request.set_model("Llama 3.1 8B");
  *plan_request.mutable_workload() = workload;
  plan_request.add_hardware("H100");
  Answer<v1::PlanInferenceResponse> plan;
  AnswerPlanInference(records, plan_request, plan.done());
  ASSERT_TRUE(plan.result->ok()) << plan.result->status();

  v1::ListRunnableModelsRequest runnable_request;
  runnable_request.set_hardware("H100");
  *runnable_request.mutable_workload() = workload;
  runnable_request.set_filter("display_name = \"Llama 3.1 8B\"");
  Answer<RunnableRows> runnable;
  AnswerRunnableModels(records, runnable_request, runnable.done());
  ASSERT_TRUE(runnable.result->ok()) << runnable.result->status();
  v1::ListRunnableModelsResponse first;
  ASSERT_TRUE((*runnable.result)->Fill(&first));
  ASSERT_EQ(first.models_size(), 1);

  const v1::ResolvedWorkload& from_memory = (*memory.result)->workload();
  EXPECT_EQ(from_memory.workload().context_length_tokens(), 4096);
  EXPECT_EQ(from_memory.workload().batch_size(), 2);
  EXPECT_EQ(from_memory.workload().kv_cache_format(), v1::NUMBER_FORMAT_FP8);
  EXPECT_EQ(from_memory.SerializeAsString(),
            (*plan.result)->memory().workload().SerializeAsString());
  // The list is over many models: the same workload, without one model's
  // maximum context (each row states its own context).
  EXPECT_EQ(from_memory.workload().SerializeAsString(),
            first.workload().workload().SerializeAsString());
  EXPECT_TRUE(from_memory.context_defaulted());
  EXPECT_TRUE(first.workload().context_defaulted());
  EXPECT_EQ(from_memory.model_max_context_tokens(), 131072);
  EXPECT_EQ(first.workload().model_max_context_tokens(), 0);
  EXPECT_TRUE(absl::StartsWith(from_memory.statement(),
                               "context 4096 tokens (the default; the model's maximum is "
                               "131072), batch 2, weights bf16 (the default), KV cache fp8"))
      << from_memory.statement();
  EXPECT_TRUE(absl::StartsWith(first.workload().statement(),
                               "context 4096 tokens (the default), batch 2, weights bf16 (the "
                               "default), KV cache fp8"))
      << first.workload().statement();
  EXPECT_EQ(first.models(0).context_length_tokens(), 4096);

  // One sizing: on one card the plan needs the estimate's total, and so
  // does the runnable row.
  ASSERT_EQ((*plan.result)->plans_size(), 1);
  const v1::HardwarePlan& on_h100 = (*plan.result)->plans(0);
  EXPECT_EQ(on_h100.cards(), 1);
  EXPECT_EQ(on_h100.required_bytes_per_card(), (*memory.result)->total_bytes());
  EXPECT_EQ(first.models(0).required_bytes_per_card(), on_h100.required_bytes_per_card());
  EXPECT_EQ(first.models(0).headroom_bytes_per_card(), on_h100.headroom_bytes_per_card());
  EXPECT_DOUBLE_EQ(first.models(0).decode_tokens_per_second(), on_h100.decode_tokens_per_second());
}

TEST(InferenceAnswersTest, RecordsAreReadThroughTheSource) {
  auto records = Catalog();
  v1::EstimateInferenceMemoryRequest request;
  request.set_model("models/not-here");
  Answer<v1::EstimateInferenceMemoryResponse> missing;
  AnswerInferenceMemory(records, request, missing.done());
  ASSERT_EQ(missing.result->status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(records->model_reads(), 1);

  // An inline model reads nothing.
  request.mutable_inline_model()->set_parameters(1e9);
  Answer<v1::EstimateInferenceMemoryResponse> inline_answer;
  AnswerInferenceMemory(records, request, inline_answer.done());
  ASSERT_TRUE(inline_answer.result->ok()) << inline_answer.result->status();
  EXPECT_EQ(records->model_reads(), 1);
  EXPECT_EQ((*inline_answer.result)->lines(0).bytes(), 2000000000);

  // Unknown hardware in a plan is NOT_FOUND naming it.
  v1::PlanInferenceRequest plan_request;
  plan_request.set_model("Llama 3.1 8B");
  plan_request.add_hardware("TPU v9");
  Answer<v1::PlanInferenceResponse> plan;
  AnswerPlanInference(records, plan_request, plan.done());
  EXPECT_EQ(plan.result->status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(GetResource(plan.result->status()).second, "TPU v9");

  // The runnable list needs a source that holds the whole catalog.
  records->set_whole_catalog(false);
  v1::ListRunnableModelsRequest runnable_request;
  runnable_request.set_hardware("H100");
  Answer<RunnableRows> runnable;
  AnswerRunnableModels(records, runnable_request, runnable.done());
  EXPECT_EQ(runnable.result->status().code(), absl::StatusCode::kUnavailable);
}

TEST(InferenceAnswersTest, PlanFieldsAndWorkloadFieldsAreCheckedTogether) {
  v1::PlanInferenceRequest request;
  request.set_model("Llama 3.1 8B");
  request.set_max_cards(1025);  // any count up to 1024 (3 is a plan: PP 3)
  request.mutable_workload()->set_prefill_efficiency(-0.5);
  Answer<v1::PlanInferenceResponse> plan;
  AnswerPlanInference(Catalog(), request, plan.done());
  ASSERT_EQ(plan.result->status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Fields(plan.result->status()),
            (std::vector<std::string>{"max_cards", "workload.prefill_efficiency"}));
}

TEST(InferenceAnswersTest, RunnableListWithNoRowsStillSaysWhatItAssumed) {
  auto records = Catalog();
  v1::ListRunnableModelsRequest request;
  request.set_hardware("H100");
  request.set_filter("parameters > 1e15");
  Answer<RunnableRows> runnable;
  AnswerRunnableModels(records, request, runnable.done());
  ASSERT_TRUE(runnable.result->ok()) << runnable.result->status();
  v1::ListRunnableModelsResponse message;
  ASSERT_TRUE((*runnable.result)->Fill(&message));
  EXPECT_EQ(message.models_size(), 0);
  EXPECT_EQ(message.workload().workload().context_length_tokens(), 4096);
  message.Clear();
  EXPECT_FALSE((*runnable.result)->Fill(&message));
}

// A model with no architecture on record counts no KV cache (nor
// activations): its row says so, and its figure does not grow with the
// context, while a model with one does (issue 21, point 3 of the offload
// branch; the fit matrix says the same per model).
TEST(InferenceAnswersTest, RunnableRowsSayWhenTheKvCacheIsNotCounted) {
  auto records = Catalog();
  Model bare;
  bare.set_name("models/no-architecture-7b");
  bare.set_display_name("No Architecture 7B");
  bare.set_parameters(7e9);
  bare.set_open_model_weights(true);
  records->Add(bare);
  auto rows_at = [&](int64_t context) {
    v1::ListRunnableModelsRequest request;
    request.set_hardware("H100");
    request.mutable_workload()->set_context_length_tokens(context);
    request.set_filter("parameters > 1e9");
    Answer<RunnableRows> runnable;
    AnswerRunnableModels(records, request, runnable.done());
    EXPECT_TRUE(runnable.result->ok()) << runnable.result->status();
    std::map<std::string, v1::RunnableModel> rows;
    v1::ListRunnableModelsResponse message;
    while ((*runnable.result)->Fill(&message)) {
      for (const v1::RunnableModel& row : message.models()) rows[row.model()] = row;
      message.Clear();
    }
    return rows;
  };
  std::map<std::string, v1::RunnableModel> short_rows = rows_at(1024);
  std::map<std::string, v1::RunnableModel> long_rows = rows_at(32768);
  ASSERT_EQ(short_rows.size(), 2u);
  ASSERT_EQ(long_rows.size(), 2u);
  EXPECT_TRUE(short_rows["models/no-architecture-7b"].kv_cache_not_counted());
  EXPECT_FALSE(short_rows["models/llama-3-1-8b"].kv_cache_not_counted());
  EXPECT_EQ(long_rows["models/no-architecture-7b"].required_bytes_per_card(),
            short_rows["models/no-architecture-7b"].required_bytes_per_card());
  // Llama 3.1 8B's KV cache, 131,072 bytes per token (bf16), grows with the
  // context: 31,744 tokens more.
  EXPECT_GE(long_rows["models/llama-3-1-8b"].required_bytes_per_card() -
                short_rows["models/llama-3-1-8b"].required_bytes_per_card(),
            int64_t{131072} * (32768 - 1024));

  // The bare row needs what the memory estimate's total says: the weights
  // and the overhead, with its warning.
  v1::EstimateInferenceMemoryRequest memory_request;
  memory_request.set_model("models/no-architecture-7b");
  memory_request.mutable_workload()->set_context_length_tokens(32768);
  Answer<v1::EstimateInferenceMemoryResponse> memory;
  AnswerInferenceMemory(records, memory_request, memory.done());
  ASSERT_TRUE(memory.result->ok()) << memory.result->status();
  EXPECT_EQ(long_rows["models/no-architecture-7b"].required_bytes_per_card(),
            (*memory.result)->total_bytes());
}

// A model whose record names its quantized checkpoint (gpt-oss-20b's
// config.json with its quantization_config) is sized in that format when
// the request names none, in the memory answer and in each runnable row,
// and says so; a format the request names (bf16) is used as named.
TEST(InferenceAnswersTest, AnUnnamedFormatIsThePublishedCheckpointsAndEveryAnswerSaysSo) {
  std::string config = testing::GptOssConfigJson(24, 32);
  config.pop_back();  // the closing brace
  config += R"(, "quantization_config": {"quant_method": "mxfp4"}})";
  absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(config);
  ASSERT_TRUE(arch.ok()) << arch.status();
  ASSERT_EQ(arch->checkpoint_weight_format(), "mxfp4");
  Model model;
  model.set_name("models/gpt-oss-20b");
  model.set_display_name("gpt-oss-20b");
  model.set_parameters(20914757184);  // the checkpoint's count (ShippedModelsTest)
  model.set_open_model_weights(true);
  *model.mutable_architecture() = *arch;
  auto records = Catalog();
  records->Add(model);

  const auto memory = [&](std::optional<v1::NumberFormat> format) {
    v1::EstimateInferenceMemoryRequest request;
    request.set_model("models/gpt-oss-20b");
    if (format) request.mutable_workload()->set_weight_format(*format);
    Answer<v1::EstimateInferenceMemoryResponse> answer;
    AnswerInferenceMemory(records, request, answer.done());
    EXPECT_TRUE(answer.result->ok()) << answer.result->status();
    return answer.result->ok() ? **answer.result : v1::EstimateInferenceMemoryResponse();
  };
  const v1::EstimateInferenceMemoryResponse published = memory(std::nullopt);
  EXPECT_EQ(published.workload().workload().weight_format(), v1::NUMBER_FORMAT_MXFP4);
  EXPECT_TRUE(published.workload().weight_format_from_checkpoint());
  EXPECT_NE(published.workload().statement().find("weights mxfp4 (the published checkpoint's"),
            std::string::npos)
      << published.workload().statement();
  const v1::EstimateInferenceMemoryResponse named = memory(v1::NUMBER_FORMAT_MXFP4);
  EXPECT_FALSE(named.workload().weight_format_from_checkpoint());
  EXPECT_EQ(published.total_bytes(), named.total_bytes());
  const v1::EstimateInferenceMemoryResponse bf16 = memory(v1::NUMBER_FORMAT_BF16);
  EXPECT_EQ(bf16.workload().workload().weight_format(), v1::NUMBER_FORMAT_BF16);
  EXPECT_GT(bf16.total_bytes(), 2 * published.total_bytes());  // 43.0 GB against 15.0 GB

  const auto row = [&](std::optional<v1::NumberFormat> format) {
    v1::ListRunnableModelsRequest request;
    request.set_hardware("H100");
    request.set_filter("parameters > 1e10");
    if (format) request.mutable_workload()->set_weight_format(*format);
    Answer<RunnableRows> runnable;
    AnswerRunnableModels(records, request, runnable.done());
    EXPECT_TRUE(runnable.result->ok()) << runnable.result->status();
    v1::RunnableModel found;
    v1::ListRunnableModelsResponse message;
    while (runnable.result->ok() && (*runnable.result)->Fill(&message)) {
      for (const v1::RunnableModel& r : message.models()) {
        if (r.model() == "models/gpt-oss-20b") found = r;
      }
      message.Clear();
    }
    return found;
  };
  const v1::RunnableModel as_published = row(std::nullopt);
  EXPECT_EQ(as_published.weight_format(), v1::NUMBER_FORMAT_MXFP4);
  EXPECT_TRUE(as_published.weight_format_from_checkpoint());
  EXPECT_EQ(as_published.required_bytes_per_card(), published.total_bytes());
  const v1::RunnableModel as_named = row(v1::NUMBER_FORMAT_BF16);
  EXPECT_EQ(as_named.weight_format(), v1::NUMBER_FORMAT_BF16);
  EXPECT_FALSE(as_named.weight_format_from_checkpoint());
  EXPECT_EQ(as_named.required_bytes_per_card(), bf16.total_bytes());
}

TEST(TrainingAnswersTest, InlineArchitectureAndAuditReadThroughTheSource) {
  auto records = Catalog();
  v1::EstimateTrainingMemoryRequest memory_request;
  *memory_request.mutable_model()->mutable_architecture() = Llama8B().architecture();
  Answer<v1::EstimateTrainingMemoryResponse> memory;
  AnswerTrainingMemory(records, memory_request, memory.done());
  ASSERT_TRUE(memory.result->ok()) << memory.result->status();
  EXPECT_GT((*memory.result)->device_total_bytes(), 0);
  EXPECT_EQ(records->model_reads(), 0);

  v1::PlanTrainingRequest plan_request;
  plan_request.mutable_model()->set_model("Llama 3.1 8B");
  Answer<v1::PlanTrainingResponse> no_hardware;
  AnswerPlanTraining(records, plan_request, no_hardware.done());
  EXPECT_EQ(no_hardware.result->status().code(), absl::StatusCode::kInvalidArgument);

  v1::AuditModelRequest audit_request;
  audit_request.set_model("Llama 3.1 8B");
  Answer<v1::AuditModelResponse> audit;
  AnswerAuditModel(records, audit_request, audit.done());
  ASSERT_TRUE(audit.result->ok()) << audit.result->status();
  EXPECT_EQ((*audit.result)->model(), "models/llama-3-1-8b");
}

TEST(RecordsTest, OptionalTrainingHardwareThatIsNotFoundIsLeftOut) {
  auto records = std::make_shared<FakeRecords>();
  Model model = Llama8B();
  model.add_training_hardware("NVIDIA H100 SXM5 80GB");
  records->Add(model);
  RecordsWanted wanted;
  wanted.model = "Llama 3.1 8B";
  wanted.model_training_hardware = true;
  wanted.hardware_optional = true;
  std::optional<absl::StatusOr<Records>> found;
  ReadRecords(records, wanted, [&](absl::StatusOr<Records> r) { found = std::move(r); });
  ASSERT_TRUE(found.has_value() && found->ok());
  EXPECT_TRUE((*found)->model.has_value());
  EXPECT_TRUE((*found)->hardware.empty());

  wanted.hardware_optional = false;
  ReadRecords(records, wanted, [&](absl::StatusOr<Records> r) { found = std::move(r); });
  EXPECT_EQ(found->status().code(), absl::StatusCode::kNotFound);
}

TEST(UtilizationStatedInTest, ReadsTheOneRateANoteStates) {
  EXPECT_EQ(UtilizationStatedIn("Assuming 30% utilization of the A100s"), 0.3);
  EXPECT_EQ(UtilizationStatedIn("the paper reports an MFU of 0.38."), 0.38);
  EXPECT_EQ(UtilizationStatedIn("utilization rate 40 % (our assumption)"), 0.4);
  EXPECT_EQ(UtilizationStatedIn("1024 GPUs x 30 days x 24 h x 312e12 FLOP/s x 0.35 utilization"),
            0.35);
  EXPECT_EQ(UtilizationStatedIn("Hardware utilisation: 50%"), 0.5);
  // The same rate twice is still one rate.
  EXPECT_EQ(UtilizationStatedIn("0.4 utilization ... again with 40% utilization"), 0.4);
}

TEST(UtilizationStatedInTest, NothingWhenNoneOrSeveralOrNotARate) {
  EXPECT_EQ(UtilizationStatedIn(""), std::nullopt);
  EXPECT_EQ(UtilizationStatedIn("6 * 175e9 * 300e9 = 3.15e23 FLOP"), std::nullopt);
  // Two different rates: which one the figure used is not knowable.
  EXPECT_EQ(UtilizationStatedIn("30% utilization for pre-training, 45% utilization after"),
            std::nullopt);
  // Counts and exponents near the word are not rates.
  EXPECT_EQ(UtilizationStatedIn("utilization over 2048 chips"), std::nullopt);
  EXPECT_EQ(UtilizationStatedIn("MFU unknown; 3e23 FLOP"), std::nullopt);
  EXPECT_EQ(UtilizationStatedIn("utilization of 150%"), std::nullopt);
  // A long note is read in one pass (no quadratic scan): it still answers.
  std::string long_note(200000, 'a');
  for (size_t i = 0; i < long_note.size(); i += 100) long_note.replace(i, 11, "utilization");
  EXPECT_EQ(UtilizationStatedIn(long_note + " at 0.3 utilization"), 0.3);
}

TEST(TrainingInputsTest, ACardWithoutTensorCoresAndSlowFp16TrainsAtItsFp32Peak) {
  // GeForce GTX 1080 Ti: FP16 at 1/64 rate (0.177 TFLOP/s), FP32 11.34.
  common::v1::Hardware pascal;
  pascal.set_display_name("NVIDIA GeForce GTX 1080 Ti");
  pascal.mutable_peak()->set_fp16_flops(177e9);
  pascal.mutable_peak()->set_fp32_flops(11.34e12);
  absl::StatusOr<TrainingRunInputs> in = TrainingInputsFor(nullptr, &pascal, {});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->peak_flops_per_chip, 11.34e12);
  EXPECT_NE(in->peak_source.find("FP32"), std::string::npos);
  ASSERT_EQ(in->other_peaks.size(), 1u);
  EXPECT_EQ(in->other_peaks[0].first, 177e9);
}

TEST(TrainingInputsTest, StepsBatchAndTheNotesRateComeFromTheRecord) {
  // Megatron-BERT's page: 6ND = 6 x 3.9e9 x (2e6 + 1e4) steps x 1024 x 512
  // tokens per step; its notes: "39 TFLOPS which is 30% of the peak".
  common::v1::Model model;
  model.set_parameters(3.9e9);
  model.add_domains("Language");
  model.set_training_steps(2e6 + 1e4);
  model.set_batch_size(1024 * 512);
  model.set_training_compute_notes("... assuming 0.3 utilization of the V100S ...");
  absl::StatusOr<TrainingRunInputs> in = TrainingInputsFor(&model, nullptr, {});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->steps, 2e6 + 1e4);
  EXPECT_EQ(in->tokens_per_step, 1024 * 512);
  EXPECT_EQ(in->utilization, 0.3);
  EXPECT_EQ(in->utilization_source, "stated in the record's notes");
  absl::StatusOr<TrainingRunFigures> run = ComputeTrainingRun(*in);
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(run->operation_counting_flop.has_value());
  EXPECT_NEAR(*run->operation_counting_flop, 2.5e22, 0.05e22);
  // The record's MFU comes first; a request's utilization replaces both.
  model.set_hardware_utilization_mfu(0.45);
  in = TrainingInputsFor(&model, nullptr, {});
  EXPECT_EQ(in->utilization, 0.45);
  v1::TrainingRunInputs request;
  request.set_utilization(0.2);
  in = TrainingInputsFor(&model, nullptr, request);
  EXPECT_EQ(in->utilization, 0.2);
  EXPECT_EQ(in->utilization_source, "");
}

}  // namespace
}  // namespace modelatlas::estimator
