// Arithmetic that would leave int64 gives a clear error, never a confident
// wrong figure (issue 16, point 6). Members of the class: an inline
// architecture too large to train or run, a hardware record whose memory is
// not a real figure (in a plan, in the runnable list), and a model whose
// parameter count is absurd.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/records/bounds.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/runnable.h"
#include "estimator-service/answers/training.h"
#include "tests/estimator/fake_records.h"

namespace modelatlas::estimator {
namespace {

using common::v1::Hardware;
using common::v1::Model;
using testing::Answer;
using testing::Catalog;
using testing::H100;
using testing::Llama8B;

common::v1::Architecture Enormous() {
  common::v1::Architecture a;
  a.set_num_layers(20'000);
  a.set_hidden_size(1'600'000);
  a.set_num_attention_heads(12'500);
  a.set_intermediate_size(6'400'000);
  a.set_vocab_size(50'000);
  a.set_max_context_length(4096);
  return a;
}

TEST(OverflowTest, TrainingMemoryOfAnEnormousArchitectureIsAnErrorNotANegativeTotal) {
  v1::EstimateTrainingMemoryRequest request;
  *request.mutable_model()->mutable_architecture() = Enormous();
  Answer<v1::EstimateTrainingMemoryResponse> answer;
  AnswerTrainingMemory(Catalog(), request, answer.done());
  ASSERT_TRUE(answer.result.has_value());
  if (answer.result->ok()) {
    // If it answers at all, every figure is a real, non-negative byte count.
    EXPECT_GE((*answer.result)->device_total_bytes(), 0);
    for (const auto& line : (*answer.result)->device_lines()) EXPECT_GE(line.bytes(), 0);
  } else {
    EXPECT_EQ(answer.result->status().code(), absl::StatusCode::kInvalidArgument)
        << answer.result->status();
  }
}

TEST(OverflowTest, InferenceMemoryOfAnEnormousArchitectureIsAnError) {
  v1::EstimateInferenceMemoryRequest request;
  *request.mutable_inline_model()->mutable_architecture() = Enormous();
  request.mutable_workload()->set_context_length_tokens(1'000'000);
  request.mutable_workload()->set_batch_size(1000);
  Answer<v1::EstimateInferenceMemoryResponse> answer;
  AnswerInferenceMemory(Catalog(), request, answer.done());
  ASSERT_TRUE(answer.result.has_value());
  ASSERT_FALSE(answer.result->ok());
  EXPECT_EQ(answer.result->status().code(), absl::StatusCode::kInvalidArgument);
}

Hardware Absurd(double memory_bytes) {
  Hardware hw;
  hw.set_name("hardware/absurd");
  hw.set_display_name("Absurd X1");
  hw.set_memory_bytes(memory_bytes);
  hw.set_memory_bandwidth_bytes_per_second(1e12);
  return hw;
}

TEST(OverflowTest, APlanNeverCarriesAByteCountBeyondInt64) {
  for (double memory : {1e300, 1e19, 9.3e18}) {
    auto records = Catalog();
    records->Add(Absurd(memory));
    v1::PlanInferenceRequest request;
    request.set_model("Llama 3.1 8B");
    Answer<v1::PlanInferenceResponse> answer;
    AnswerPlanInference(records, request, answer.done());
    ASSERT_TRUE(answer.result.has_value());
    ASSERT_TRUE(answer.result->ok()) << answer.result->status();
    bool found = false;
    for (const auto& plan : (*answer.result)->plans()) {
      EXPECT_GE(plan.usable_bytes_per_card(), 0) << plan.hardware() << " at " << memory;
      EXPECT_GE(plan.required_bytes_per_card(), 0) << plan.hardware();
      if (plan.hardware() == "hardware/absurd") {
        found = true;
        // Not planned, and the answer says why.
        EXPECT_FALSE(plan.fits()) << memory;
        EXPECT_TRUE(absl::StrContains(plan.reason(), "memory_bytes")) << plan.reason();
      }
    }
    EXPECT_TRUE(found) << memory;
  }
}

TEST(OverflowTest, TheRunnableListOnAnAbsurdRecordIsAFailedPrecondition) {
  auto records = Catalog();
  records->Add(Absurd(1e300));
  v1::ListRunnableModelsRequest request;
  request.set_hardware("hardware/absurd");
  Answer<RunnableRows> answer;
  AnswerRunnableModels(records, request, answer.done());
  ASSERT_TRUE(answer.result.has_value());
  ASSERT_FALSE(answer.result->ok());
  EXPECT_EQ(answer.result->status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(answer.result->status().message(), "hardware/absurd"))
      << answer.result->status();
}

TEST(OverflowTest, AStoredModelWithAnAbsurdCountIsAFailedPreconditionNotTheCallersFault) {
  auto records = Catalog();
  Model absurd = Llama8B();
  absurd.set_name("models/absurd");
  absurd.set_display_name("Absurd");
  absurd.mutable_architecture()->set_num_layers(2'000'000'000);
  records->Add(absurd);
  v1::EstimateInferenceMemoryRequest request;
  request.set_model("models/absurd");
  Answer<v1::EstimateInferenceMemoryResponse> answer;
  AnswerInferenceMemory(records, request, answer.done());
  ASSERT_TRUE(answer.result.has_value());
  ASSERT_FALSE(answer.result->ok());
  EXPECT_EQ(answer.result->status().code(), absl::StatusCode::kFailedPrecondition)
      << answer.result->status();
  EXPECT_TRUE(absl::StrContains(answer.result->status().message(), "models/absurd"))
      << answer.result->status();
}

// The estimator's limits are the catalog's (common/records/bounds.h): every
// architecture field of the table is accepted at its bound and refused just
// past it, and every hardware figure of the table likewise makes a record
// unplannable past its bound (the catalog test
// FiguresBeyondTheSharedBoundsAreRefusedNamingFieldAndBound checks the
// catalog's side against the same table).
TEST(OverflowTest, TheEstimatorUsesTheCatalogsBoundsTable) {
  int architecture_fields = 0, hardware_fields = 0;
  for (const records::Bound& bound : records::kBounds) {
    if (bound.record == records::RecordKind::kModel) {
      if (bound.path.substr(0, 13) != "architecture.") continue;
      const std::string name(bound.path.substr(13));
      const auto* field = common::v1::Architecture::descriptor()->FindFieldByName(name);
      ASSERT_NE(field, nullptr) << name;
      auto with = [&](int64_t value) {
        common::v1::Architecture arch;
        const auto* reflection = arch.GetReflection();
        if (field->is_repeated()) {  // layer_intermediate_sizes: one entry
          reflection->AddInt64(&arch, field, value);
        } else if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_INT32) {
          reflection->SetInt32(&arch, field, static_cast<int32_t>(value));
        } else {
          reflection->SetInt64(&arch, field, value);
        }
        return ValidateArchitecture(arch, "model.architecture");
      };
      const auto most = static_cast<int64_t>(bound.max);
      EXPECT_TRUE(with(most).ok()) << name << ": " << with(most);
      const absl::Status beyond = with(most + 1);
      EXPECT_EQ(beyond.code(), absl::StatusCode::kInvalidArgument) << name;
      EXPECT_TRUE(absl::StrContains(beyond.message(), absl::StrCat("model.architecture.", name)))
          << beyond;
      EXPECT_TRUE(absl::StrContains(beyond.message(), absl::StrCat("between 0 and ", most)))
          << beyond;
      ++architecture_fields;
    } else {
      std::vector<std::string> paths;
      if (bound.path == "peak.*") {
        const auto* peak = common::v1::PeakThroughput::descriptor();
        for (int i = 0; i < peak->field_count(); ++i) {
          paths.push_back(absl::StrCat("peak.", peak->field(i)->name()));
        }
      } else {
        paths.emplace_back(bound.path);
      }
      for (const std::string& path : paths) {
        auto with = [&](double value) {
          Hardware hw = H100();
          google::protobuf::Message* message = &hw;
          std::string name = path;
          if (absl::StartsWith(path, "peak.")) {
            message = hw.mutable_peak();
            name = path.substr(5);
          }
          const auto* field = message->GetDescriptor()->FindFieldByName(name);
          EXPECT_NE(field, nullptr) << path;
          if (field != nullptr) message->GetReflection()->SetDouble(message, field, value);
          return CheckDeviceFigures(hw);
        };
        EXPECT_TRUE(with(bound.max).ok()) << path << ": " << with(bound.max);
        for (double beyond : {bound.max * 1.001, 1e300}) {
          const absl::Status refused = with(beyond);
          EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << path;
          EXPECT_TRUE(absl::StrContains(refused.message(), path)) << refused;
          EXPECT_TRUE(absl::StrContains(refused.message(), absl::StrCat("at most ", bound.max)))
              << refused;
        }
        ++hardware_fields;
      }
    }
  }
  EXPECT_EQ(architecture_fields, 49);
  EXPECT_EQ(hardware_fields, 3 + common::v1::PeakThroughput::descriptor()->field_count());
}

}  // namespace
}  // namespace modelatlas::estimator
