#include "catalog-service/import/columns.h"

#include <gtest/gtest.h>

#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::catalog {
namespace {

using common::v1::Hardware;
using common::v1::Model;

const Column& ModelColumn(absl::string_view header) {
  for (const Column& column : EpochModelColumns()) {
    if (column.header == header) return column;
  }
  ADD_FAILURE() << "no column " << header;
  return EpochModelColumns().front();
}

const Column& HardwareColumn(absl::string_view header) {
  for (const Column& column : EpochHardwareColumns()) {
    if (column.header == header) return column;
  }
  ADD_FAILURE() << "no column " << header;
  return EpochHardwareColumns().front();
}

TEST(EpochColumnsTest, ModelColumnsAreTheFiftySevenOfAllAiModels) {
  EXPECT_EQ(EpochModelColumns().size(), 57u);
  EXPECT_EQ(EpochModelColumns().front().header, "Model");
  EXPECT_EQ(EpochModelColumns().back().header, "Open model weights?");
  // Every field path names a real field.
  for (const Column& column : EpochModelColumns()) {
    Model model;
    EXPECT_TRUE(GetCell(column, model).empty()) << column.header;
  }
}

TEST(EpochColumnsTest, NumbersWrittenAsFloatsAndInExponentForm) {
  Model model;
  ASSERT_TRUE(SetCell(ModelColumn("Parameters"), "7000000000.0", &model).ok());
  EXPECT_EQ(model.parameters(), 7e9);
  ASSERT_TRUE(SetCell(ModelColumn("Training compute (FLOP)"), "1.5405e+20", &model).ok());
  EXPECT_EQ(model.training_compute_flop(), 1.5405e20);
  ASSERT_TRUE(SetCell(ModelColumn("Citations"), "512.0", &model).ok());
  EXPECT_EQ(model.citations(), 512);
  EXPECT_EQ(GetCell(ModelColumn("Parameters"), model), "7000000000");
  EXPECT_EQ(GetCell(ModelColumn("Training compute (FLOP)"), model), "1.5405e+20");
}

TEST(EpochColumnsTest, BadNumbersAreRejectedAndLeaveTheRecord) {
  Model model;
  absl::Status status = SetCell(ModelColumn("Parameters"), "about 7B", &model);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("about 7B"), std::string::npos);
  EXPECT_FALSE(model.has_parameters());
  EXPECT_FALSE(SetCell(ModelColumn("Parameters"), "nan", &model).ok());
  EXPECT_FALSE(SetCell(ModelColumn("Parameters"), "-5", &model).ok());
  EXPECT_FALSE(SetCell(ModelColumn("Citations"), "4.5", &model).ok());
}

TEST(EpochColumnsTest, CellWithTwoNumbers) {
  Model model;
  const Column& size = ModelColumn("Training dataset size (total)");
  ASSERT_TRUE(SetCell(size, "2590000000000,2592000000000", &model).ok());
  ASSERT_EQ(model.training_dataset_size_datapoints_size(), 2);
  EXPECT_EQ(model.training_dataset_size_datapoints(1), 2.592e12);
  EXPECT_EQ(GetCell(size, model), "2590000000000,2592000000000");
}

TEST(EpochColumnsTest, ListsSplitOnBareCommasOnly) {
  Model model;
  const Column& organizations = ModelColumn("Organization");
  ASSERT_TRUE(
      SetCell(organizations, "Google DeepMind,Troy Information Technology Co., Ltd.", &model).ok());
  ASSERT_EQ(model.organizations_size(), 2);
  EXPECT_EQ(model.organizations(1), "Troy Information Technology Co., Ltd.");
  EXPECT_EQ(GetCell(organizations, model), "Google DeepMind,Troy Information Technology Co., Ltd.");
}

TEST(EpochColumnsTest, DatesAndTimesWithOrWithoutZone) {
  Model model;
  ASSERT_TRUE(SetCell(ModelColumn("Publication date"), "2024-09-24", &model).ok());
  EXPECT_EQ(model.publication_date().day(), 24);
  ASSERT_TRUE(SetCell(ModelColumn("Publication date"), "2019-10 ", &model).ok());
  EXPECT_EQ(GetCell(ModelColumn("Publication date"), model), "2019-10");
  const Column& modified = ModelColumn("Last modified");
  ASSERT_TRUE(SetCell(modified, "2025-11-28 11:53:44+00:00", &model).ok());
  EXPECT_EQ(model.last_modified_time().seconds(), 1764330824);
  EXPECT_EQ(GetCell(modified, model), "2025-11-28 11:53:44+00:00");
  // Another zone is converted; no zone means UTC.
  ASSERT_TRUE(SetCell(modified, "2025-11-28T13:53:44+02:00", &model).ok());
  EXPECT_EQ(model.last_modified_time().seconds(), 1764330824);
  ASSERT_TRUE(SetCell(modified, "2025-11-28 11:53:44", &model).ok());
  EXPECT_EQ(model.last_modified_time().seconds(), 1764330824);
  EXPECT_FALSE(SetCell(modified, "last tuesday", &model).ok());
  EXPECT_FALSE(SetCell(ModelColumn("Publication date"), "2024-13-01", &model).ok());
}

TEST(EpochColumnsTest, EnumLabelsBothWays) {
  Model model;
  ASSERT_TRUE(
      SetCell(ModelColumn("Model accessibility"), "Open weights (non-commercial)", &model).ok());
  EXPECT_EQ(model.accessibility(), common::v1::ACCESSIBILITY_OPEN_WEIGHTS_NON_COMMERCIAL);
  const Column& methods = ModelColumn("Training compute estimation method");
  ASSERT_TRUE(SetCell(methods, "Operation counting,Hardware", &model).ok());
  EXPECT_EQ(GetCell(methods, model), "Operation counting,Hardware");
  absl::Status status = SetCell(ModelColumn("Confidence"), "Sure", &model);
  EXPECT_NE(status.message().find("\"Confident\""), std::string::npos) << status;
  ASSERT_TRUE(SetCell(ModelColumn("Open model weights?"), "Yes", &model).ok());
  EXPECT_TRUE(model.open_model_weights());
  ASSERT_TRUE(SetCell(ModelColumn("Frontier model"), "True", &model).ok());
  EXPECT_EQ(GetCell(ModelColumn("Frontier model"), model), "True");
}

TEST(EpochColumnsTest, HardwareUnitsAndPrices) {
  Hardware hardware;
  // Epoch writes the network in bits per second; the record holds bytes.
  const Column& internode = HardwareColumn("Internode bandwidth (bit/s)");
  ASSERT_TRUE(SetCell(internode, "400000000000", &hardware).ok());
  EXPECT_EQ(hardware.inter_node_bandwidth_bytes_per_second(), 50e9);
  EXPECT_EQ(GetCell(internode, hardware), "400000000000");
  ASSERT_TRUE(
      SetCell(HardwareColumn("FP8 performance (FLOP/s)"), "1979000000000000.0", &hardware).ok());
  EXPECT_EQ(hardware.peak().fp8_flops(), 1.979e15);
  ASSERT_TRUE(SetCell(HardwareColumn("Release price (USD)"), "$5,412.00", &hardware).ok());
  EXPECT_EQ(hardware.release_price_usd(), 5412);
  ASSERT_TRUE(SetCell(HardwareColumn("Type"), "XPU-R", &hardware).ok());
  EXPECT_EQ(hardware.type(), common::v1::HARDWARE_TYPE_ACCELERATOR);
}

TEST(FormatNumberTest, ShortestTextThatReadsBackExactly) {
  EXPECT_EQ(FormatNumber(0.52), "0.52");
  EXPECT_EQ(FormatNumber(9551.591619865147), "9551.591619865147");
  EXPECT_EQ(FormatNumber(2.90000000001e+24), "2.90000000001e+24");
}

}  // namespace
}  // namespace modelatlas::catalog
