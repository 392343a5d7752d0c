// Which inputs make which training figure, and the audit's decisions.
#include "estimator-service/core/training_run.h"

#include <gtest/gtest.h>

#include "common/status/errors.h"

namespace modelatlas::estimator {
namespace {

const NamedFigure* Find(const TrainingRunFigures& run, const std::string& name) {
  for (const NamedFigure& figure : run.figures) {
    if (figure.name == name) return &figure;
  }
  return nullptr;
}

TEST(TrainingRunTest, NothingKnownGivesNoFiguresAndSaysWhy) {
  auto run = ComputeTrainingRun({});
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->figures.empty());
  EXPECT_FALSE(run->training_compute_flop.has_value());
  EXPECT_GE(run->warnings.size(), 3u);
}

TEST(TrainingRunTest, WordsAndBytesBecomeTokens) {
  TrainingRunInputs in;
  in.parameters = 1e9;
  in.dataset_words = 3e9;
  in.epochs = 2;
  auto run = ComputeTrainingRun(in);
  ASSERT_TRUE(run.ok());
  EXPECT_DOUBLE_EQ(*run->tokens, 8e9);  // 3e9 words x 4/3 x 2 epochs
  EXPECT_DOUBLE_EQ(*run->operation_counting_flop, 6 * 1e9 * 8e9);
  EXPECT_NE(Find(*run, "operation_counting_flop")->arithmetic.find("x 2 epochs"),
            std::string::npos);
}

TEST(TrainingRunTest, AnAssumedEpochMakesTheHardwareMethodTheFigure) {
  TrainingRunInputs in;
  in.parameters = 1e9;
  in.dataset_tokens = 1e10;
  in.chips = 8;
  in.training_hours = 10;
  in.peak_flops_per_chip = 1e14;
  auto run = ComputeTrainingRun(in);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(*run->training_compute_flop, *run->hardware_method_flop);
  in.epochs = 1;
  run = ComputeTrainingRun(in);
  EXPECT_EQ(run->method, "geometric mean of operation counting and the hardware method");
}

TEST(TrainingRunTest, AttentionTermAddsKaplansSixLayerContextWidth) {
  TrainingRunInputs in;
  in.parameters = 1e9;
  in.steps = 1000;
  in.tokens_per_step = 1e6;
  in.attention_layers = 24;
  in.attention_width = 2048;
  in.attention_context = 4096;
  auto run = ComputeTrainingRun(in);
  ASSERT_TRUE(run.ok());
  EXPECT_DOUBLE_EQ(*run->operation_counting_flop, 6 * 1e9 * 1e9 + 6.0 * 24 * 4096 * 2048 * 1e9);
}

TEST(TrainingRunTest, BadInputsNameTheirFields) {
  TrainingRunInputs in;
  in.parameters = -1;
  in.utilization = 2;
  in.price_usd_per_chip_hour = -3;
  auto run = ComputeTrainingRun(in);
  ASSERT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::string> fields;
  for (const auto& v : GetFieldViolations(run.status())) fields.push_back(v.field);
  EXPECT_EQ(fields,
            (std::vector<std::string>{"parameters", "price_usd_per_chip_hour", "utilization"}));
}

TEST(TrainingRunTest, AuditComparesTheNamedMethodAndSkipsWhatItCannotCheck) {
  TrainingRunInputs in;
  in.parameters = 1e9;
  in.dataset_tokens = 1e10;  // no epochs on record
  in.chips = 8;
  in.training_hours = 10;
  in.peak_flops_per_chip = 1e14;
  RecordedFigures recorded;
  recorded.training_compute_flop = 8 * 10 * 3600 * 1e14 * 0.3;
  recorded.method_hardware = true;
  recorded.chip_hours = 100;  // 8 x 10 = 80: 25% off
  Audit audit = AuditTrainingRun(in, recorded, 0.1);
  ASSERT_EQ(audit.checks.size(), 2u);
  EXPECT_EQ(audit.checks[0].figure, "training_chip_hours");
  EXPECT_TRUE(audit.checks[0].disagrees);
  EXPECT_DOUBLE_EQ(audit.checks[0].relative_difference, 0.2);
  EXPECT_EQ(audit.checks[1].figure, "training_compute_flop");
  EXPECT_FALSE(audit.checks[1].disagrees);

  // Operation counting without epochs is not the record's arithmetic.
  recorded.method_hardware = false;
  recorded.method_operation_counting = true;
  audit = AuditTrainingRun(in, recorded, 0.1);
  ASSERT_EQ(audit.checks.size(), 1u);
  ASSERT_EQ(audit.skipped.size(), 1u);
  EXPECT_NE(audit.skipped[0].find("epochs not on record"), std::string::npos);
}

}  // namespace
}  // namespace modelatlas::estimator
