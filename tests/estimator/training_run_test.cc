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

// Issue 20: when the two methods are more than 3x apart, the answer says why.
// 1e9 parameters x 1e10 tokens x 6 = 6e19 FLOP counted; 64 chips x 1000 h x
// 1e15 FLOP/s x 3600 x 0.3 = 6.912e22 FLOP by the hardware method: 1152x.
TEST(TrainingRunTest, MethodsFarApartSayWhy) {
  TrainingRunInputs in;
  in.parameters = 1e9;
  in.dataset_tokens = 1e10;
  in.chips = 64;
  in.training_hours = 1000;
  in.peak_flops_per_chip = 1e15;
  in.language_model = true;
  auto run = ComputeTrainingRun(in);
  ASSERT_TRUE(run.ok());
  auto explained = [&run](const std::string& text) {
    for (const std::string& warning : run->warnings) {
      if (warning.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(
      explained("the two methods are 1152x apart (operation counting 6e+19 FLOP, "
                "hardware method 6.91e+22 FLOP): the epochs are not on record"));
  EXPECT_TRUE(explained("assumed 30% utilization"));

  // Epochs on record and the hardware figure below: the other explanation,
  // and no word about an assumed utilization when it is on record.
  in.epochs = 1;
  in.training_hours = 0.1;  // 6.912e18 FLOP: 8.7x below the count
  in.utilization = 0.5;     // 1.152e19: 5.2x below
  run = ComputeTrainingRun(in);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(explained("5x apart"));
  EXPECT_TRUE(explained("the chip-hours or the peak on record may be too low"));
  EXPECT_FALSE(explained("utilization; "));
  EXPECT_FALSE(explained("assumed"));

  // Within 3x: nothing to explain.
  in.training_hours = 0.3;  // 3.456e19 vs 6e19: 1.7x
  run = ComputeTrainingRun(in);
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(explained("apart"));
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
