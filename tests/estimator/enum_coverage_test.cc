// Every value of every contract enum the estimator takes has a core mapping:
// a value added to a proto without one fails here (its CLI spelling is
// checked by tests/cli/enum_spellings_test.cc, its documentation line by
// tests/cli/values_doc_test.cc).
#include "common/records/bounds.h"
#include "estimator-service/answers/conversions.h"
#include "gtest/gtest.h"

namespace modelatlas::estimator {
namespace {

// Calls `check` with every value of `Enum` (from its descriptor).
template <typename Enum, typename Check>
void ForEachValue(Check check) {
  const google::protobuf::EnumDescriptor* descriptor = google::protobuf::GetEnumDescriptor<Enum>();
  ASSERT_GT(descriptor->value_count(), 1) << descriptor->full_name();
  for (int i = 0; i < descriptor->value_count(); ++i) {
    check(static_cast<Enum>(descriptor->value(i)->number()), descriptor->value(i)->name());
  }
}

TEST(EnumCoverageTest, EveryNumberFormatHasACoreFormatThatMapsBack) {
  ForEachValue<v1::NumberFormat>([](v1::NumberFormat value, const std::string& name) {
    absl::StatusOr<NumberFormat> core = ToCoreNumberFormat(value, NumberFormat::kBf16, "format");
    ASSERT_TRUE(core.ok()) << name << ": " << core.status();
    if (value != v1::NUMBER_FORMAT_UNSPECIFIED) {
      EXPECT_EQ(ToProtoNumberFormat(*core), value) << name;
      EXPECT_TRUE(EncodingOf(*core).ok()) << name << " has no storage cost";
      EXPECT_FALSE(NumberFormatName(*core).empty()) << name;
    }
  });
  EXPECT_FALSE(
      ToCoreNumberFormat(static_cast<v1::NumberFormat>(999), NumberFormat::kBf16, "f").ok());
  // A core value past the last format (the table's end) has no proto value.
  EXPECT_EQ(ToProtoNumberFormat(static_cast<NumberFormat>(999)), v1::NUMBER_FORMAT_UNSPECIFIED);
}

TEST(EnumCoverageTest, EveryPlanObjectiveAndTrainingSettingHasACoreValue) {
  ForEachValue<v1::PlanObjective>([](v1::PlanObjective value, const std::string& name) {
    EXPECT_TRUE(ToCorePlanObjective(value, "objective").ok()) << name;
  });
  ForEachValue<v1::Optimizer>([](v1::Optimizer value, const std::string& name) {
    EXPECT_TRUE(ToCoreOptimizer(value, "optimizer").ok()) << name;
  });
  ForEachValue<v1::Recompute>([](v1::Recompute value, const std::string& name) {
    EXPECT_TRUE(ToCoreRecompute(value, "recompute").ok()) << name;
  });
  ForEachValue<v1::FineTuning>([](v1::FineTuning value, const std::string& name) {
    EXPECT_TRUE(ToCoreFineTuning(value, "fine_tuning").ok()) << name;
  });
  ForEachValue<v1::TrainingFramework>([](v1::TrainingFramework value, const std::string& name) {
    absl::StatusOr<Framework> core = ToCoreFramework(value, "framework");
    ASSERT_TRUE(core.ok()) << name;
    // Every named framework comes back as itself in the answer's echo.
    if (value != v1::TRAINING_FRAMEWORK_UNSPECIFIED) {
      EXPECT_EQ(ToProtoFramework(*core), value);
    }
  });
  ForEachValue<v1::TrainingLoss>([](v1::TrainingLoss value, const std::string& name) {
    absl::StatusOr<LossImplementation> core = ToCoreLoss(value, "loss");
    ASSERT_TRUE(core.ok()) << name;
    if (value != v1::TRAINING_LOSS_UNSPECIFIED) {
      EXPECT_EQ(ToProtoLoss(*core), value);
    }
  });
  // A value this build does not know is refused, naming the field.
  absl::StatusOr<PlanObjective> unknown =
      ToCorePlanObjective(static_cast<v1::PlanObjective>(99), "objective");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ToCoreOptimizer(static_cast<v1::Optimizer>(99), "optimizer").ok());
  EXPECT_FALSE(ToCoreRecompute(static_cast<v1::Recompute>(99), "recompute").ok());
  EXPECT_FALSE(ToCoreFineTuning(static_cast<v1::FineTuning>(99), "fine_tuning").ok());
  EXPECT_FALSE(ToCoreFramework(static_cast<v1::TrainingFramework>(99), "framework").ok());
}

// Every mixer name the catalog accepts maps to the estimator's formulas, and
// a name outside the list to none (the estimator refuses it by name).
TEST(EnumCoverageTest, EveryRecurrentMixerTheCatalogAcceptsHasFormulas) {
  for (const char* name : records::kRecurrentMixers) {
    common::v1::Architecture arch;
    arch.set_recurrent_mixer(name);
    EXPECT_NE(ToCoreArchitecture(arch).recurrent_mixer, RecurrentMixer::kUnknown) << name;
    EXPECT_NE(ToCoreArchitecture(arch).recurrent_mixer, RecurrentMixer::kNone) << name;
  }
  common::v1::Architecture other;
  other.set_recurrent_mixer("rwkv7");
  EXPECT_FALSE(records::IsRecurrentMixer("rwkv7"));
  EXPECT_EQ(ToCoreArchitecture(other).recurrent_mixer, RecurrentMixer::kUnknown);
}

}  // namespace
}  // namespace modelatlas::estimator
