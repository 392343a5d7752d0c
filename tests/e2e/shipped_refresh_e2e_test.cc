// The real catalog binary, restarted on a database whose shipped records an
// older dataset wrote: it refreshes the record nobody changed, keeps the one
// someone changed and says so in its log, and serves the result over gRPC.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <csignal>
#include <string>

#include "absl/strings/match.h"
#include "catalog-service/dataset.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "tests/e2e/end_to_end.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas {
namespace {

using catalog::v1::CatalogService;
using common::v1::Model;

constexpr int kCallTimeoutMs = 10000;

Model GetModel(CatalogService::Stub& stub, const std::string& name) {
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(kCallTimeoutMs));
  catalog::v1::GetModelRequest request;
  request.set_name(name);
  Model model;
  const grpc::Status status = stub.GetModel(&context, request, &model);
  EXPECT_TRUE(status.ok()) << name << ": " << status.error_message();
  return model;
}

void ReplaceModel(CatalogService::Stub& stub, const Model& model) {
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(kCallTimeoutMs));
  catalog::v1::UpdateModelRequest request;
  *request.mutable_model() = model;
  request.mutable_model()->clear_etag();
  request.mutable_update_mask()->add_paths("*");
  Model updated;
  const grpc::Status status = stub.UpdateModel(&context, request, &updated);
  ASSERT_TRUE(status.ok()) << model.name() << ": " << status.error_message();
}

// As an older binary's load left it: other content, an older version, and
// the fingerprint of that content (nobody changed it since).
Model AsLoadedByAnOlderDataset(Model model) {
  model.set_parameters(model.parameters() * 2);
  auto* shipped = model.mutable_provenance()->mutable_shipped();
  shipped->set_version(shipped->version() - 1);
  shipped->set_loaded_fingerprint(catalog::ContentFingerprint(model));
  return model;
}

catalog::v1::CatalogInfo Info(CatalogService::Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(kCallTimeoutMs));
  catalog::v1::CatalogInfo info;
  const grpc::Status status = stub.GetCatalogInfo(&context, {}, &info);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return info;
}

// As a catalog an older binary last refreshed (version 0: before versions).
void LowerTheShippedVersion(const std::string& path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "UPDATE catalog_state SET shipped_dataset_version = 0", nullptr,
                         nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST_F(EndToEndTest, ARestartRefreshesTheShippedRecordsNobodyChanged) {
  const std::string database = "--sqlite_path=" + dir_ + "/catalog.db";
  catalog_ = Start({CATALOG_SERVICE_BIN, database}, "catalog");
  auto stub = CatalogService::NewStub(Channel(catalog_));
  const std::string untouched = "models/llama-3-1-8b";
  const std::string edited = "models/llama-3-1-70b";
  const Model shipped_untouched = GetModel(*stub, untouched);
  const Model shipped_edited = GetModel(*stub, edited);
  ASSERT_TRUE(shipped_untouched.has_parameters());
  ASSERT_GE(shipped_untouched.provenance().shipped().version(), 1);
  const int shipped_version = Info(*stub).shipped_dataset_version();
  EXPECT_GE(shipped_version, shipped_untouched.provenance().shipped().version());
  ASSERT_EQ(shipped_untouched.provenance().shipped().loaded_fingerprint(),
            catalog::ContentFingerprint(shipped_untouched))
      << "the first start stamps each record with its fingerprint";

  ReplaceModel(*stub, AsLoadedByAnOlderDataset(shipped_untouched));
  // This one was loaded the same way, then someone changed its parameters.
  Model changed = AsLoadedByAnOlderDataset(shipped_edited);
  changed.set_parameters(12345e6);
  ReplaceModel(*stub, changed);

  ASSERT_EQ(catalog_.process->Stop(SIGTERM, kStartTimeoutMs), 0);
  LowerTheShippedVersion(dir_ + "/catalog.db");
  catalog_ = Start({CATALOG_SERVICE_BIN, database}, "catalog");
  stub = CatalogService::NewStub(Channel(catalog_));
  const Model refreshed = GetModel(*stub, untouched);
  EXPECT_EQ(refreshed.parameters(), shipped_untouched.parameters());
  EXPECT_EQ(refreshed.provenance().shipped().version(),
            shipped_untouched.provenance().shipped().version());
  const Model kept = GetModel(*stub, edited);
  EXPECT_EQ(kept.parameters(), 12345e6);

  const std::string log = testing::ReadFile(dir_ + "/catalog.log");
  EXPECT_TRUE(absl::StrContains(log, "1 records refreshed, 0 added")) << log;
  EXPECT_TRUE(absl::StrContains(log, "1 changed here and kept")) << log;
  EXPECT_TRUE(absl::StrContains(log, "write them over the changes): " + edited)) << log;
  EXPECT_EQ(Info(*stub).shipped_dataset_version(), shipped_version) << "raised again";
}

}  // namespace
}  // namespace modelatlas
