// CatalogService over gRPC, in process, with the shipped dataset.
#include "catalog-service/service.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "catalog-service/dataset.h"
#include "catalog-service/store/sqlite_store.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas::catalog {
namespace {

using testing::DecodeDetails;
using testing::FindDetail;

class CatalogServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = SqliteStore::Open(":memory:");
    ASSERT_TRUE(store.ok());
    catalog_ = std::make_unique<Catalog>(*std::move(store));
    ASSERT_TRUE(catalog_->LoadIfEmpty(*ShippedDataset()).ok());
    service_ = std::make_unique<CatalogServiceImpl>(catalog_.get());
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::CatalogService::NewStub(server_->InProcessChannel({}));
  }
  void TearDown() override { server_->Shutdown(); }

  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<CatalogServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::CatalogService::Stub> stub_;
};

TEST_F(CatalogServiceTest, GetModelByDisplayName) {
  grpc::ClientContext context;
  v1::GetModelRequest request;
  request.set_name("megatron bert");
  common::v1::Model model;
  ASSERT_TRUE(stub_->GetModel(&context, request, &model).ok());
  EXPECT_EQ(model.name(), "models/megatron-bert");
  EXPECT_EQ(model.display_name(), "Megatron-BERT");
  EXPECT_DOUBLE_EQ(model.training_chip_hours(), 191488);
  EXPECT_FALSE(model.etag().empty());
}

TEST_F(CatalogServiceTest, UnknownModelIsNotFoundWithResourceInfo) {
  grpc::ClientContext context;
  v1::GetModelRequest request;
  request.set_name("models/no-such-model");
  common::v1::Model model;
  const grpc::Status status = stub_->GetModel(&context, request, &model);
  ASSERT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "Model \"models/no-such-model\" not found");
  google::rpc::ResourceInfo resource;
  ASSERT_TRUE(FindDetail(DecodeDetails(status), &resource));
  EXPECT_EQ(resource.resource_name(), "models/no-such-model");
  google::rpc::ErrorInfo info;
  ASSERT_TRUE(FindDetail(DecodeDetails(status), &info));
  EXPECT_EQ(info.reason(), "RESOURCE_NOT_FOUND");
}

TEST_F(CatalogServiceTest, ListModelsPagesThroughEverything) {
  v1::ListModelsRequest request;
  request.set_page_size(2);
  int total = 0;
  do {
    grpc::ClientContext context;
    v1::ListModelsResponse response;
    ASSERT_TRUE(stub_->ListModels(&context, request, &response).ok());
    EXPECT_LE(response.models_size(), 2);
    EXPECT_EQ(response.catalog_revision(), 1);
    total += response.models_size();
    request.set_page_token(response.next_page_token());
  } while (!request.page_token().empty());
  EXPECT_EQ(total, ShippedDataset()->models_size());
}

TEST_F(CatalogServiceTest, NegativePageSizeIsABadRequestNamingTheField) {
  grpc::ClientContext context;
  v1::ListHardwareRequest request;
  request.set_page_size(-5);
  v1::ListHardwareResponse response;
  const grpc::Status status = stub_->ListHardware(&context, request, &response);
  ASSERT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  google::rpc::BadRequest bad_request;
  ASSERT_TRUE(FindDetail(DecodeDetails(status), &bad_request));
  ASSERT_EQ(bad_request.field_violations_size(), 1);
  EXPECT_EQ(bad_request.field_violations(0).field(), "page_size");
}

TEST_F(CatalogServiceTest, HardwareByAliasAndCatalogInfo) {
  grpc::ClientContext context;
  v1::GetHardwareRequest request;
  request.set_name("NVIDIA V100");
  common::v1::Hardware hardware;
  ASSERT_TRUE(stub_->GetHardware(&context, request, &hardware).ok());
  EXPECT_EQ(hardware.name(), "hardware/nvidia-v100-sxm2-32gb");
  EXPECT_DOUBLE_EQ(hardware.tdp_watts(), 300);

  grpc::ClientContext info_context;
  v1::CatalogInfo info;
  ASSERT_TRUE(stub_->GetCatalogInfo(&info_context, {}, &info).ok());
  EXPECT_EQ(info.revision(), 1);
  EXPECT_EQ(info.model_count(), ShippedDataset()->models_size());
  EXPECT_EQ(info.hardware_count(), ShippedDataset()->hardware_size());
  EXPECT_EQ(info.store(), "sqlite");
}

}  // namespace
}  // namespace modelatlas::catalog
