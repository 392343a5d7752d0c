// The seed pages' training arithmetic, reproduced from their records'
// inputs (../shared/seeds; REFERENCE.md section 4).
#include "estimator-service/core/training_compute.h"

#include <gtest/gtest.h>

#include "common/status/errors.h"

namespace modelatlas::estimator {
namespace {

TEST(TrainingComputeTest, BertLargeCasOperationCounting) {
  // "6 FLOP / token / parameter * 395000000 parameters * 1300000000 [tokens] * 50 epochs
  // = 1.5405e+20"
  auto flop = OperationCountingFlop(395e6, 1.3e9, 50);
  ASSERT_TRUE(flop.ok());
  EXPECT_DOUBLE_EQ(flop->value, 1.5405e20);
  EXPECT_NE(flop->arithmetic.find("1.5405e+20 FLOP"), std::string::npos) << flop->arithmetic;
}

TEST(TrainingComputeTest, T2rPretrainBothMethodsAndTheirMean) {
  // "Training compute: 6*668893184*142000*25000=1.4247425e+19
  //  GPU hour estimate: 95*60*60*125000000000000*0.3=1.2825e+19
  //  Geometric mean: 13517515512289972224  Epochs: 142000*25000/103000000=34.4660194175"
  auto counted = OperationCountingFlop(668893184, 142000.0 * 25000);
  auto hardware = HardwareMethodFlop(1, 125e12, 95, 0.3);
  ASSERT_TRUE(counted.ok() && hardware.ok());
  // The page prints the product rounded to 8 digits (exactly 1.42474248192e19) and takes
  // the mean of the rounded figure; both agree to 1 part in 10^7.
  EXPECT_DOUBLE_EQ(counted->value, 1.42474248192e19);
  EXPECT_NEAR(counted->value, 1.4247425e19, 1.4247425e19 * 1e-7);
  EXPECT_DOUBLE_EQ(hardware->value, 1.2825e19);
  EXPECT_NEAR(GeometricMean(counted->value, hardware->value).value, 13517515512289972224.0,
              1.35e19 * 1e-7);
  EXPECT_NEAR(Epochs(142000, 25000, 103e6)->value, 34.4660194175, 1e-9);
}

TEST(TrainingComputeTest, T2rRandomInitAndCtrBert) {
  // "6 ... * 450000000 parameters * 74000 tokens per batch * 286000 steps = 5.71428e+19 FLOP
  //  125000000000000 * 98 GPU-hours * 3600 * 0.3 = 1.323e+19  sqrt(...) = 2.749544e+19"
  const double counted = OperationCountingFlop(450e6, 74000.0 * 286000)->value;
  const double hardware = HardwareMethodFlop(1, 125e12, 98, 0.3)->value;
  EXPECT_DOUBLE_EQ(counted, 5.71428e19);
  EXPECT_DOUBLE_EQ(hardware, 1.323e19);
  EXPECT_NEAR(GeometricMean(counted, hardware).value, 2.749544e19, 1e13);
  EXPECT_NEAR(Epochs(286000, 74000, 103e6)->value, 205.48, 0.005);
  // CTR-BERT: "(8) * (312 * 10**12) * (24 * 3600) * (0.3)" = 6.469632e19.
  EXPECT_DOUBLE_EQ(HardwareMethodFlop(8, 312e12, 24, 0.3)->value, 6.469632e19);
}

TEST(TrainingComputeTest, MegatronBertTokensChipHoursAndPower) {
  // "174e9 bytes * (1 word / 5 bytes) * (4 tokens / 3 words) = 4.64e10 tokens"
  EXPECT_DOUBLE_EQ(TokensFromBytes(174e9).value, 4.64e10);
  EXPECT_DOUBLE_EQ(ChipHours(512, 374).value, 191488);
  // Recorded power: 262,640.3 W for 512 x 250 W V100S, published 2019-09-17.
  auto power = TrainingPowerDrawWatts(250, 512, FractionalYear(2019, 9, 17));
  ASSERT_TRUE(power.ok());
  EXPECT_NEAR(power->value, 262640.30207328824, 262640.3 * 1e-5);
}

TEST(TrainingComputeTest, PowerDrawOfTheOtherSeedRecords) {
  // Recorded: T2R 4,864.12 W (8 x V100 300 W, 2021-03-24); CTR-BERT 6,448.49 W (8 x A100 400 W,
  // 2021-12-06). REFERENCE.md: "8 x V100 (300 W) in March 2021 -> 4,864 W".
  EXPECT_NEAR(TrainingPowerDrawWatts(300, 8, FractionalYear(2021, 3, 24))->value, 4864.124132899583,
              4864.1 * 2e-5);
  EXPECT_NEAR(TrainingPowerDrawWatts(400, 8, FractionalYear(2021, 12, 6))->value,
              6448.4868676049155, 6448.5 * 2e-5);
  // One chip: no server overhead factor.
  EXPECT_NEAR(TrainingPowerDrawWatts(300, 1, 2020)->value, 300 * 1.12474, 1e-9);
}

TEST(TrainingComputeTest, BadInputNamesTheField) {
  auto flop = OperationCountingFlop(-1, 0);
  ASSERT_EQ(flop.status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::string> fields;
  for (const auto& v : GetFieldViolations(flop.status())) fields.push_back(v.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"parameters", "tokens"}));
  EXPECT_EQ(HardwareMethodFlop(8, 312e12, 24, 1.5).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TrainingPowerDrawWatts(300, 8, 3000).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace modelatlas::estimator
