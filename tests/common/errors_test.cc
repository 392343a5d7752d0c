#include "common/status/errors.h"

#include <gtest/gtest.h>

#include "common/status/grpc_status.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas {
namespace {

using testing::DecodeDetails;
using testing::FindDetail;

TEST(FieldViolationsTest, NoViolationsIsOk) {
  FieldViolations violations;
  EXPECT_TRUE(violations.empty());
  EXPECT_TRUE(violations.ToStatus().ok());
}

TEST(FieldViolationsTest, EveryViolationReachesTheGrpcDetails) {
  FieldViolations violations;
  violations.Add("page_size", "must not be negative, got -1");
  violations.Add("model.parameters", "must be a finite number");
  const absl::Status status = violations.ToStatus();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "page_size: must not be negative, got -1; model.parameters: must be a finite number");

  const grpc::Status grpc_status = ToGrpcStatus(status);
  EXPECT_EQ(grpc_status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const google::rpc::Status details = DecodeDetails(grpc_status);
  EXPECT_EQ(details.code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  google::rpc::BadRequest bad_request;
  ASSERT_TRUE(FindDetail(details, &bad_request));
  ASSERT_EQ(bad_request.field_violations_size(), 2);
  EXPECT_EQ(bad_request.field_violations(0).field(), "page_size");
  EXPECT_EQ(bad_request.field_violations(1).field(), "model.parameters");
  EXPECT_EQ(bad_request.field_violations(1).description(), "must be a finite number");
  google::rpc::ErrorInfo info;
  ASSERT_TRUE(FindDetail(details, &info));
  EXPECT_EQ(info.reason(), "INVALID_ARGUMENT");
  EXPECT_EQ(info.domain(), "modelatlas.dev");
}

TEST(ErrorsTest, NotFoundNamesTheResource) {
  const absl::Status status = ResourceNotFoundError("Model", "models/nope");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "Model \"models/nope\" not found");
  const google::rpc::Status details = DecodeDetails(ToGrpcStatus(status));
  google::rpc::ResourceInfo resource;
  ASSERT_TRUE(FindDetail(details, &resource));
  EXPECT_EQ(resource.resource_name(), "models/nope");
  EXPECT_EQ(resource.resource_type(), "modelatlas.dev/Model");
  google::rpc::ErrorInfo info;
  ASSERT_TRUE(FindDetail(details, &info));
  EXPECT_EQ(info.reason(), "RESOURCE_NOT_FOUND");
}

TEST(ErrorsTest, ReasonAndTabsInDescriptionsSurvive) {
  absl::Status status = WithReason(absl::AbortedError("stale"), "ETAG_MISMATCH");
  EXPECT_EQ(GetReason(status), "ETAG_MISMATCH");
  const absl::Status violation = InvalidFieldError("name", "has\ta tab\nand a newline");
  ASSERT_EQ(GetFieldViolations(violation).size(), 1u);
  EXPECT_EQ(GetFieldViolations(violation)[0].description, "has a tab and a newline");
}

TEST(GrpcStatusTest, OkMapsToOk) { EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok()); }

TEST(GrpcStatusTest, CodeLabelsAreCamelCase) {
  EXPECT_STREQ(GrpcCodeLabel(grpc::StatusCode::OK), "OK");
  EXPECT_STREQ(GrpcCodeLabel(grpc::StatusCode::NOT_FOUND), "NotFound");
  EXPECT_STREQ(GrpcCodeLabel(grpc::StatusCode::INVALID_ARGUMENT), "InvalidArgument");
  EXPECT_STREQ(GrpcCodeLabel(grpc::StatusCode::CANCELLED), "Canceled");
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::FAILED_PRECONDITION), "FAILED_PRECONDITION");
}

TEST(GrpcStatusTest, DownstreamErrorsKeepTheirCodeAndSayWhere) {
  const absl::Status status = FromGrpcStatus(
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection refused"), "catalog at localhost:1");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "catalog at localhost:1: connection refused");
}

}  // namespace
}  // namespace modelatlas
