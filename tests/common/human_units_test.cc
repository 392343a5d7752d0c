// Figures for people, checked against how the seed pages write them
// (../shared/seeds: 262.6 kW, $171,819, 6,960,000,000 tokens, 20 April 2019).
#include "common/text/human_units.h"

#include "gtest/gtest.h"

namespace modelatlas {
namespace {

TEST(HumanUnitsTest, ThousandsSeparators) {
  EXPECT_EQ(WithThousands(6960000000), "6,960,000,000");
  EXPECT_EQ(WithThousands(191488), "191,488");
  EXPECT_EQ(WithThousands(999), "999");
  EXPECT_EQ(WithThousands(-1234567), "-1,234,567");
  EXPECT_EQ(WithThousands(0), "0");
}

TEST(HumanUnitsTest, PowerCostAndCounts) {
  EXPECT_EQ(HumanPower(262640.30207328824), "262.6 kW");
  EXPECT_EQ(HumanPower(300), "300 W");
  EXPECT_EQ(HumanPower(2.5e6), "2.5 MW");
  EXPECT_EQ(HumanUsd(171818.64196707975), "$171,819");
  EXPECT_EQ(HumanUsd(2.5), "$2.50");
  EXPECT_EQ(HumanCount(395000000), "395M");
  EXPECT_EQ(HumanCount(8030261248), "8.03B");
}

TEST(HumanUnitsTest, PowersOfTen) {
  EXPECT_EQ(TimesTenTo(1.5405e20), "1.54 × 10^20");
  EXPECT_EQ(TimesTenTo(2.2e22), "2.2 × 10^22");
  EXPECT_EQ(TimesTenTo(9.996e20), "1 × 10^21");
  EXPECT_EQ(TimesTenTo(123456), "123,456");
}

TEST(HumanUnitsTest, Dates) {
  EXPECT_EQ(HumanDate(2019, 4, 20), "20 April 2019");
  EXPECT_EQ(HumanDate(2019, 4, 0), "April 2019");
  EXPECT_EQ(HumanDate(2019, 0, 0), "2019");
  EXPECT_EQ(HumanDate(0, 0, 0), "");
}

}  // namespace
}  // namespace modelatlas
