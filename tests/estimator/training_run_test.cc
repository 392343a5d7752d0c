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

// A hardware-method record of 8 chips x 10 hours at 1e14 FLOP/s whose
// compute implies `utilization` of that peak.
TrainingRunInputs EightChipsTenHours() {
  TrainingRunInputs in;
  in.chips = 8;
  in.training_hours = 10;
  in.peak_flops_per_chip = 1e14;
  in.peak_source = "X1, FP16/BF16 tensor peak";
  return in;
}

RecordedFigures HardwareMethodAt(double utilization, double peak = 1e14) {
  RecordedFigures recorded;
  recorded.training_compute_flop = 80 * 3600 * peak * utilization;
  recorded.method_hardware = true;
  return recorded;
}

TEST(AuditVerdictTest, AnUnstatedRateThatRealRunsReachIsAConventionNotADisagreement) {
  // Epoch's notes assume 40% for many language models; the audit's default
  // is 30%: 33% apart, but nothing on record contradicts it.
  Audit audit = AuditTrainingRun(EightChipsTenHours(), HardwareMethodAt(0.4), 0.1);
  ASSERT_EQ(audit.checks.size(), 1u);
  const AuditCheck& check = audit.checks[0];
  EXPECT_EQ(check.verdict, AuditVerdict::kRecordSemantics);
  EXPECT_FALSE(check.disagrees);
  ASSERT_TRUE(check.implied_utilization.has_value());
  EXPECT_NEAR(*check.implied_utilization, 0.4, 1e-12);
  EXPECT_NE(check.reason.find("implies 40% utilization"), std::string::npos) << check.reason;
}

TEST(AuditVerdictTest, ARateNoRunReachesIsADisagreementSayingWhichInputsToCheck) {
  for (double utilization : {0.01, 1.6}) {
    Audit audit = AuditTrainingRun(EightChipsTenHours(), HardwareMethodAt(utilization), 0.1);
    ASSERT_EQ(audit.checks.size(), 1u);
    const AuditCheck& check = audit.checks[0];
    EXPECT_EQ(check.verdict, AuditVerdict::kInputsDisagree) << utilization;
    EXPECT_TRUE(check.disagrees);
    EXPECT_NE(check.reason.find("chip count, training time, hardware or compute"),
              std::string::npos)
        << check.reason;
    EXPECT_NE(check.reason.find(utilization > 1 ? "more than the chips can do" : "below the 5%"),
              std::string::npos)
        << check.reason;
  }
}

TEST(AuditVerdictTest, AFigureAtAnotherPrecisionsPeakIsAConvention) {
  // 30% of an FP32 peak 16 times lower than the tensor peak: 1.9% of the
  // tensor peak, which no run reaches, but exactly the FP32 convention.
  TrainingRunInputs in = EightChipsTenHours();
  in.other_peaks = {{1e14 / 16, "X1, FP32 peak"}};
  Audit audit = AuditTrainingRun(in, HardwareMethodAt(0.3, 1e14 / 16), 0.1);
  ASSERT_EQ(audit.checks.size(), 1u);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kRecordSemantics);
  EXPECT_NE(audit.checks[0].reason.find("30% of the X1, FP32 peak"), std::string::npos)
      << audit.checks[0].reason;
  // Without that peak known, the same figure is a disagreement.
  audit = AuditTrainingRun(EightChipsTenHours(), HardwareMethodAt(0.3, 1e14 / 16), 0.1);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kInputsDisagree);
}

TEST(AuditVerdictTest, AStatedRateIsComparedAsAPoint) {
  TrainingRunInputs in = EightChipsTenHours();
  in.utilization = 0.4;
  in.utilization_source = "stated in the record's notes";
  Audit audit = AuditTrainingRun(in, HardwareMethodAt(0.4), 0.1);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kAgrees);
  EXPECT_NE(audit.checks[0].arithmetic.find("(stated in the record's notes)"), std::string::npos);
  // 25% is a plausible rate, but not the one the record states.
  audit = AuditTrainingRun(in, HardwareMethodAt(0.25), 0.1);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kInputsDisagree);
  EXPECT_NE(audit.checks[0].reason.find("states 40% utilization"), std::string::npos)
      << audit.checks[0].reason;
  // The stated 40% of the FP32 peak (a quarter of the tensor peak here).
  in.other_peaks = {{1e14 / 4, "X1, FP32 peak"}};
  audit = AuditTrainingRun(in, HardwareMethodAt(0.1), 0.1);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kRecordSemantics);
  EXPECT_NE(audit.checks[0].reason.find("stated 40% utilization of the X1, FP32 peak"),
            std::string::npos)
      << audit.checks[0].reason;
}

TEST(AuditVerdictTest, AMethodTheAuditCannotRedoLeavesThePartUnjudged) {
  RecordedFigures recorded = HardwareMethodAt(0.01);
  recorded.method_other = true;  // e.g. hardware and benchmarks
  Audit audit = AuditTrainingRun(EightChipsTenHours(), recorded, 0.1);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kCannotCheck);
  EXPECT_FALSE(audit.checks[0].disagrees);
}

TEST(AuditVerdictTest, OperationCountingConventions) {
  TrainingRunInputs in;
  in.parameters = 1e9;
  in.dataset_tokens = 1e10;
  in.epochs = 4;
  RecordedFigures recorded;
  recorded.method_operation_counting = true;
  // 6 x 1e9 x 1e10 x 4 epochs = 2.4e20; the record holds one pass.
  recorded.training_compute_flop = 6e19;
  Audit audit = AuditTrainingRun(in, recorded, 0.1);
  ASSERT_EQ(audit.checks.size(), 1u);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kRecordSemantics);
  EXPECT_NE(audit.checks[0].reason.find("one pass"), std::string::npos);
  // Counted with every expert's parameters instead of the active ones.
  in.total_parameters = 8e9;
  recorded.training_compute_flop = 2.4e20 * 8;
  audit = AuditTrainingRun(in, recorded, 0.1);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kRecordSemantics);
  EXPECT_NE(audit.checks[0].reason.find("mixture of experts"), std::string::npos);
  // Nothing explains 5 times.
  recorded.training_compute_flop = 2.4e20 * 5;
  audit = AuditTrainingRun(in, recorded, 0.1);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kInputsDisagree);
  EXPECT_TRUE(audit.checks[0].disagrees);
}

TEST(AuditVerdictTest, ChipHoursEqualToTheWallClockSayTheChipsWereNotMultipliedIn) {
  TrainingRunInputs in = EightChipsTenHours();
  RecordedFigures recorded;
  recorded.chip_hours = 10;
  Audit audit = AuditTrainingRun(in, recorded, 0.1);
  ASSERT_EQ(audit.checks.size(), 1u);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kInputsDisagree);
  EXPECT_NE(audit.checks[0].reason.find("not multiplied in"), std::string::npos);
}

TEST(AuditVerdictTest, PowerAtAnotherTdpIsAConventionFarOffIsADisagreement) {
  TrainingRunInputs in = EightChipsTenHours();
  in.tdp_watts = 192;  // e.g. a TPU v4 record; Epoch's power used 340 W
  in.fractional_year = 2022.5;
  const double at_192 = *ComputeTrainingRun(in)->power_draw_watts;
  RecordedFigures recorded;
  recorded.power_draw_watts = at_192 * 340 / 192;
  Audit audit = AuditTrainingRun(in, recorded, 0.1);
  ASSERT_EQ(audit.checks.size(), 1u);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kRecordSemantics);
  EXPECT_NE(audit.checks[0].reason.find("implies 340 W per chip"), std::string::npos)
      << audit.checks[0].reason;
  recorded.power_draw_watts = at_192 * 8;  // eight times: not a TDP, a count
  audit = AuditTrainingRun(in, recorded, 0.1);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kInputsDisagree);
}

TEST(AuditVerdictTest, FineTunesSeveralChipsAndOneOfTwoMethodsAreNotCalledErrors) {
  // A fine-tune: 80 chip-hours at 30%, the record's compute adds its base
  // model's 1e22 FLOP.
  RecordedFigures recorded = HardwareMethodAt(0.3);
  const double finetune = *recorded.training_compute_flop;
  recorded.training_compute_flop = 1e22 + finetune;
  recorded.has_base_model = true;
  Audit audit = AuditTrainingRun(EightChipsTenHours(), recorded, 0.1);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kCannotCheck);
  EXPECT_NE(audit.checks[0].reason.find("fine-tuned"), std::string::npos);
  recorded.finetune_compute_flop = finetune;
  audit = AuditTrainingRun(EightChipsTenHours(), recorded, 0.1);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kRecordSemantics);

  recorded = HardwareMethodAt(0.01);
  recorded.several_kinds_of_hardware = true;
  audit = AuditTrainingRun(EightChipsTenHours(), recorded, 0.1);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kCannotCheck);

  // Both methods named, the figure is the operation count alone.
  TrainingRunInputs in = EightChipsTenHours();
  in.parameters = 1e9;
  in.dataset_tokens = 1e10;
  in.epochs = 1;
  recorded = RecordedFigures{};
  recorded.method_operation_counting = recorded.method_hardware = true;
  recorded.training_compute_flop = 6e19;
  audit = AuditTrainingRun(in, recorded, 0.1);
  ASSERT_EQ(audit.checks.size(), 1u);
  EXPECT_EQ(audit.checks[0].verdict, AuditVerdict::kRecordSemantics);
  EXPECT_NE(audit.checks[0].reason.find("the operation count alone"), std::string::npos);
}

}  // namespace
}  // namespace modelatlas::estimator
