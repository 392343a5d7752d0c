// Who may write (and, when protected, read) the catalog: bearer tokens and
// roles, over in-process gRPC. A refused call changes nothing.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <fstream>

#include "catalog-service/dataset.h"
#include "catalog-service/service.h"
#include "catalog-service/store/sqlite_store.h"
#include "common/server/security.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas::catalog {
namespace {

constexpr char kWriterToken[] = "writer-token-0123456789";
constexpr char kReaderToken[] = "reader-token-0123456789";

class CatalogAuthTest : public ::testing::Test {
 protected:
  void Start(bool protect_reads) {
    const std::string tokens = ::testing::TempDir() + "/tokens";
    std::ofstream(tokens) << "# token role name\n"
                          << kWriterToken << " writer ci-bot\n"
                          << kReaderToken << " reader dashboard\n";
    auto authorizer = Authorizer::FromFiles(tokens, "", protect_reads);
    ASSERT_TRUE(authorizer.ok()) << authorizer.status();
    authorizer_ = *std::move(authorizer);
    auto store = SqliteStore::Open(":memory:");
    ASSERT_TRUE(store.ok());
    catalog_ = std::make_unique<Catalog>(*std::move(store));
    ASSERT_TRUE(catalog_->LoadIfEmpty(*ShippedDataset()).ok());
    service_ = std::make_unique<CatalogServiceImpl>(catalog_.get(), absl::Milliseconds(200),
                                                    nullptr, authorizer_.get());
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::CatalogService::NewStub(server_->InProcessChannel({}));
  }
  void TearDown() override {
    if (server_) server_->Shutdown(testing::DeadlineFromNow(1000));
  }

  grpc::Status Create(const std::string& token) {
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    v1::CreateModelRequest request;
    request.set_model_id("auth-test-model");
    request.mutable_model()->set_display_name("Auth Test Model");
    request.mutable_model()->mutable_provenance()->set_source("test");
    common::v1::Model model;
    return stub_->CreateModel(&context, request, &model);
  }
  grpc::Status Get(const std::string& token) {
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    v1::GetModelRequest request;
    request.set_name("Megatron-BERT");
    common::v1::Model model;
    return stub_->GetModel(&context, request, &model);
  }
  int64_t Revision() { return catalog_->Info()->revision(); }

  std::unique_ptr<Authorizer> authorizer_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<CatalogServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::CatalogService::Stub> stub_;
};

TEST_F(CatalogAuthTest, WritesNeedTheWriterRoleAndRefusalsChangeNothing) {
  Start(false);
  const int64_t revision = Revision();
  grpc::Status none = Create("");
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(none.error_message().find("needs credentials"), std::string::npos);
  grpc::Status wrong = Create("not-a-real-token-at-all");
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(wrong.error_message().find("not-a-real-token"), std::string::npos)
      << "a token appears in an error message";
  grpc::Status reader = Create(kReaderToken);
  EXPECT_EQ(reader.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(reader.error_message().find("\"dashboard\""), std::string::npos);
  EXPECT_EQ(Revision(), revision) << "a refused write changed the catalog";
  EXPECT_FALSE(catalog_->Get<Model>("models/auth-test-model").ok());

  // Reads stay open; the writer writes.
  EXPECT_TRUE(Get("").ok());
  EXPECT_TRUE(Create(kWriterToken).ok());
  EXPECT_EQ(Revision(), revision + 1);

  // Deletes and imports are writes too.
  grpc::ClientContext context;
  v1::DeleteModelRequest remove;
  remove.set_name("models/auth-test-model");
  google::protobuf::Empty empty;
  EXPECT_EQ(stub_->DeleteModel(&context, remove, &empty).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  grpc::ClientContext import_context;
  import_context.AddMetadata("authorization", std::string("Bearer ") + kReaderToken);
  v1::ImportRecordsResponse response;
  auto writer = stub_->ImportRecords(&import_context, &response);
  v1::ImportRecordsRequest chunk;
  chunk.mutable_options();
  chunk.set_data("Model\nX\n");
  writer->Write(chunk);
  writer->WritesDone();
  EXPECT_EQ(writer->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Revision(), revision + 1);
}

TEST_F(CatalogAuthTest, ProtectedReadsNeedAnyKnownIdentity) {
  Start(true);
  EXPECT_EQ(Get("").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Get("not-a-real-token-at-all").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(Get(kReaderToken).ok());
  EXPECT_TRUE(Get(kWriterToken).ok());
  grpc::ClientContext context;
  auto watch = stub_->Watch(&context, v1::WatchRequest());
  v1::WatchResponse message;
  EXPECT_FALSE(watch->Read(&message));
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST(AuthorizerTest, BadFilesNameTheLine) {
  const std::string path = ::testing::TempDir() + "/bad_tokens";
  std::ofstream(path) << "short reader someone\n";
  auto short_token = Authorizer::FromFiles(path, "", false);
  EXPECT_EQ(short_token.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(short_token.status().message().find("line 1"), std::string::npos);
  std::ofstream(path) << "\n" << kWriterToken << " admin root\n";
  auto bad_role = Authorizer::FromFiles(path, "", false);
  EXPECT_NE(bad_role.status().message().find("line 2: role must be reader or writer"),
            std::string::npos)
      << bad_role.status();
  EXPECT_EQ(Authorizer::FromFiles("/no/such/file", "", false).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Authorizer::FromFiles("", "", true).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace modelatlas::catalog
