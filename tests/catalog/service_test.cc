// CatalogService over gRPC, in process, with the shipped dataset, on each
// store: SQLite (in memory) and PostgreSQL (a throw-away database).
#include "catalog-service/service.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "catalog-service/dataset.h"
#include "tests/catalog/catalog_on_store.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas::catalog {
namespace {

using testing::DecodeDetails;
using testing::FindDetail;

class CatalogServiceTest : public CatalogOnStoreTest {
 protected:
  void SetUp() override {
    CatalogOnStoreTest::SetUp();
    if (catalog_ == nullptr) return;  // skipped or failed
    ASSERT_TRUE(catalog_->LoadIfEmpty(*ShippedDataset()).ok());
    service_ = std::make_unique<CatalogServiceImpl>(catalog_.get());
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::CatalogService::NewStub(server_->InProcessChannel({}));
  }
  void TearDown() override {
    if (server_) server_->Shutdown(testing::DeadlineFromNow(1000));
    server_.reset();
    CatalogOnStoreTest::TearDown();
  }

  std::unique_ptr<CatalogServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::CatalogService::Stub> stub_;
};

TEST_P(CatalogServiceTest, GetModelByDisplayName) {
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

TEST_P(CatalogServiceTest, UnknownModelIsNotFoundWithResourceInfo) {
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

TEST_P(CatalogServiceTest, ListModelsPagesThroughEverything) {
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

TEST_P(CatalogServiceTest, NegativePageSizeIsABadRequestNamingTheField) {
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

TEST_P(CatalogServiceTest, HardwareByAliasAndCatalogInfo) {
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
  EXPECT_EQ(info.store(), GetParam());
}

TEST_P(CatalogServiceTest, CreateUpdateDeleteOverGrpcWithStaleEtagAborted) {
  v1::CreateModelRequest create;
  create.set_model_id("new-model");
  create.mutable_model()->set_display_name("New Model");
  create.mutable_model()->set_parameters(1e9);
  create.mutable_model()->mutable_provenance()->set_source("test");
  common::v1::Model created;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->CreateModel(&context, create, &created).ok());
  }
  EXPECT_EQ(created.name(), "models/new-model");
  {
    grpc::ClientContext context;
    common::v1::Model again;
    EXPECT_EQ(stub_->CreateModel(&context, create, &again).error_code(),
              grpc::StatusCode::ALREADY_EXISTS);
  }
  v1::UpdateModelRequest update;
  *update.mutable_model() = created;
  update.mutable_model()->set_parameters(2e9);
  update.mutable_update_mask()->add_paths("parameters");
  common::v1::Model updated;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->UpdateModel(&context, update, &updated).ok());
  }
  EXPECT_EQ(updated.parameters(), 2e9);
  {
    grpc::ClientContext context;  // same etag again: now stale
    common::v1::Model ignored;
    const grpc::Status stale = stub_->UpdateModel(&context, update, &ignored);
    EXPECT_EQ(stale.error_code(), grpc::StatusCode::ABORTED);
    google::rpc::ErrorInfo info;
    ASSERT_TRUE(FindDetail(DecodeDetails(stale), &info));
    EXPECT_EQ(info.reason(), "ETAG_MISMATCH");
  }
  v1::DeleteModelRequest remove;
  remove.set_name("models/new-model");
  remove.set_etag(updated.etag());
  google::protobuf::Empty empty;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->DeleteModel(&context, remove, &empty).ok());
  }
  grpc::ClientContext context;
  v1::GetModelRequest get;
  get.set_name("models/new-model");
  common::v1::Model gone;
  EXPECT_EQ(stub_->GetModel(&context, get, &gone).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_P(CatalogServiceTest, FilteredListAndBatchGet) {
  grpc::ClientContext context;
  v1::ListModelsRequest request;
  request.set_filter("architecture.num_layers:* AND parameters > 5e9");
  request.set_order_by("parameters desc");
  v1::ListModelsResponse response;
  ASSERT_TRUE(stub_->ListModels(&context, request, &response).ok());
  ASSERT_GE(response.models_size(), 2);
  for (const auto& model : response.models()) EXPECT_GT(model.parameters(), 5e9);
  EXPECT_GE(response.models(0).parameters(), response.models(1).parameters());

  grpc::ClientContext bad_context;
  request.set_filter("parameters >");
  const grpc::Status bad = stub_->ListModels(&bad_context, request, &response);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  grpc::ClientContext batch_context;
  v1::BatchGetHardwareRequest batch;
  batch.add_names("NVIDIA V100");
  batch.add_names("hardware/nvidia-t4");
  v1::BatchGetHardwareResponse hardware;
  ASSERT_TRUE(stub_->BatchGetHardware(&batch_context, batch, &hardware).ok());
  ASSERT_EQ(hardware.hardware_size(), 2);
  EXPECT_EQ(hardware.hardware(1).name(), "hardware/nvidia-t4");
}

TEST_P(CatalogServiceTest, WatchStreamsTheRevisionThenEachWrite) {
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(20000));
  v1::WatchRequest request;
  request.set_start_revision(1);  // after the shipped dataset
  auto reader = stub_->Watch(&context, request);
  v1::WatchResponse first;
  ASSERT_TRUE(reader->Read(&first));
  EXPECT_EQ(first.revision(), 1);
  EXPECT_EQ(first.changes_size(), 0);

  v1::CreateHardwareRequest create;
  create.set_hardware_id("test-chip");
  create.mutable_hardware()->set_display_name("Test Chip");
  create.mutable_hardware()->mutable_provenance()->set_source("test");
  {
    grpc::ClientContext create_context;
    common::v1::Hardware created;
    ASSERT_TRUE(stub_->CreateHardware(&create_context, create, &created).ok());
  }
  v1::WatchResponse next;
  ASSERT_TRUE(reader->Read(&next));
  EXPECT_EQ(next.revision(), 2);
  ASSERT_EQ(next.changes_size(), 1);
  EXPECT_EQ(next.changes(0).name(), "hardware/test-chip");
  EXPECT_EQ(next.changes(0).type(), v1::CHANGE_TYPE_CREATED);
  EXPECT_EQ(next.changes(0).hardware().display_name(), "Test Chip");
  context.TryCancel();
  v1::WatchResponse ignored;
  while (reader->Read(&ignored)) {
  }
  reader->Finish().IgnoreError();
}

INSTANTIATE_TEST_SUITE_P(Stores, CatalogServiceTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& test_info) { return test_info.param; });

}  // namespace
}  // namespace modelatlas::catalog
