// SerializeCatalogViewField writes a response's catalog_view field without
// building the response (a kept answer's reply appends it to the kept
// bytes): it must give the very bytes protobuf gives for that field.
#include "estimator-service/answers/catalog_view.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {
namespace {

std::vector<RecordSource::View> Views() {
  std::vector<RecordSource::View> views;
  RecordSource::View snapshot;
  snapshot.from_snapshot = true;
  snapshot.snapshot_age = absl::Milliseconds(1234);
  snapshot.snapshot_revision = 42;
  views.push_back(snapshot);
  RecordSource::View fresh = snapshot;  // age 0 and revision 0 are not written
  fresh.snapshot_age = absl::ZeroDuration();
  fresh.snapshot_revision = 0;
  views.push_back(fresh);
  RecordSource::View largest = snapshot;  // every field at its longest encoding
  largest.read_live = true;
  largest.snapshot_revision = std::numeric_limits<int64_t>::min();
  largest.snapshot_age = absl::Hours(24 * 365);
  views.push_back(largest);
  RecordSource::View live;
  live.read_live = true;
  views.push_back(live);
  return views;
}

template <typename Response>
std::string ProtobufBytes(const RecordSource::View& view) {
  Response only_the_view;
  if (!ToCatalogView(view, only_the_view.mutable_catalog_view())) return "";
  return only_the_view.SerializeAsString();
}

TEST(CatalogViewFieldTest, WritesTheBytesProtobufWritesForTheField) {
  for (const RecordSource::View& view : Views()) {
    const CatalogViewField estimate = SerializeCatalogViewField(
        view, v1::EstimateInferenceMemoryResponse::kCatalogViewFieldNumber);
    EXPECT_EQ(std::string(estimate.view()),
              ProtobufBytes<v1::EstimateInferenceMemoryResponse>(view));
    EXPECT_GT(estimate.size, 0u);
    const CatalogViewField plan =
        SerializeCatalogViewField(view, v1::PlanInferenceResponse::kCatalogViewFieldNumber);
    EXPECT_EQ(std::string(plan.view()), ProtobufBytes<v1::PlanInferenceResponse>(view));
  }
  // The largest view (24 bytes) under the largest field number (a 5-byte
  // tag) still fits the fixed buffer.
  v1::CatalogView largest;
  ASSERT_TRUE(ToCatalogView(Views()[2], &largest));
  EXPECT_EQ(largest.ByteSizeLong(), 24u);
  const CatalogViewField far = SerializeCatalogViewField(Views()[2], (1 << 29) - 1);
  EXPECT_EQ(far.size, 5u + 1u + 24u);
}

TEST(CatalogViewFieldTest, NothingWhenNoRecordWasRead) {
  const CatalogViewField none = SerializeCatalogViewField(
      RecordSource::View{}, v1::EstimateInferenceMemoryResponse::kCatalogViewFieldNumber);
  EXPECT_EQ(none.size, 0u);
  EXPECT_TRUE(none.view().empty());
}

TEST(CatalogViewFieldTest, AppendedToAnAnswerItParsesAsTheAnswersView) {
  v1::EstimateInferenceMemoryResponse answer;
  answer.set_total_bytes(18252559360);
  answer.set_display_name("Llama 3.1 8B");
  const RecordSource::View view = Views()[0];
  const std::string bytes =
      answer.SerializeAsString() +
      std::string(SerializeCatalogViewField(
                      view, v1::EstimateInferenceMemoryResponse::kCatalogViewFieldNumber)
                      .view());
  v1::EstimateInferenceMemoryResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_EQ(parsed.total_bytes(), 18252559360);
  EXPECT_TRUE(parsed.catalog_view().from_snapshot());
  EXPECT_EQ(parsed.catalog_view().snapshot_revision(), 42);
  EXPECT_DOUBLE_EQ(parsed.catalog_view().snapshot_age_seconds(), 1.234);
}

}  // namespace
}  // namespace modelatlas::estimator
