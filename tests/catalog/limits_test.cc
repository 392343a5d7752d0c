// Every limit of the catalog's API, through the real server settings
// (ServerRunner on a loopback port): each bad or oversized request is refused
// with INVALID_ARGUMENT naming the field (RESOURCE_EXHAUSTED for a message
// beyond gRPC's size limit), and none of them changes the catalog.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "catalog-service/catalog.h"
#include "catalog-service/dataset.h"
#include "catalog-service/service.h"
#include "catalog-service/store/sqlite_store.h"
#include "common/server/server.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas::catalog {
namespace {

using common::v1::Model;

struct Case {
  std::string name;
  // Makes the call on `stub`, returns its status.
  std::function<grpc::Status(v1::CatalogService::Stub&)> call;
  grpc::StatusCode code;
  // The field the error names (BadRequest.field_violations), "" = not checked.
  std::string field;
};

Model ValidModel() {
  Model model;
  model.set_display_name("Limits Test Model");
  model.set_parameters(1e9);
  model.mutable_provenance()->set_source("limits test");
  return model;
}

grpc::Status Create(v1::CatalogService::Stub& stub, const Model& model, const std::string& id) {
  v1::CreateModelRequest request;
  request.set_model_id(id);
  *request.mutable_model() = model;
  grpc::ClientContext context;
  Model created;
  return stub.CreateModel(&context, request, &created);
}

// CreateModel with the valid model changed by `change`.
std::function<grpc::Status(v1::CatalogService::Stub&)> CreateWith(
    std::function<void(Model&)> change, std::string id = "limits-test-model") {
  return [change = std::move(change), id = std::move(id)](v1::CatalogService::Stub& stub) {
    Model model = ValidModel();
    change(model);
    return Create(stub, model, id);
  };
}

std::function<grpc::Status(v1::CatalogService::Stub&)> ListWith(
    std::function<void(v1::ListModelsRequest&)> change) {
  return [change = std::move(change)](v1::CatalogService::Stub& stub) {
    v1::ListModelsRequest request;
    change(request);
    grpc::ClientContext context;
    v1::ListModelsResponse response;
    return stub.ListModels(&context, request, &response);
  };
}

std::vector<Case> Cases() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const auto invalid = grpc::StatusCode::INVALID_ARGUMENT;
  return {
      {"invalid id", CreateWith([](Model&) {}, "Not An Id!"), invalid, "model_id"},
      {"id too long", CreateWith([](Model&) {}, std::string(64, 'a')), invalid, "model_id"},
      {"empty display name", CreateWith([](Model& m) { m.clear_display_name(); }), invalid,
       "model.display_name"},
      {"display name over 64 KiB",
       CreateWith([](Model& m) { m.set_display_name(std::string(65537, 'x')); }), invalid,
       "model.display_name"},
      {"abstract over 64 KiB",
       CreateWith([](Model& m) { m.set_abstract(std::string(70000, 'x')); }), invalid,
       "model.abstract"},
      {"10,001 domains", CreateWith([](Model& m) {
         for (int i = 0; i <= 10000; ++i) m.add_domains("Language");
       }),
       invalid, "model.domains"},
      {"a source column over 64 KiB", CreateWith([](Model& m) {
         (*m.mutable_other_source_columns())["Notes"] = std::string(65537, 'x');
       }),
       invalid, "model.other_source_columns[\"Notes\"]"},
      {"NaN parameters", CreateWith([nan](Model& m) { m.set_parameters(nan); }), invalid,
       "model.parameters"},
      {"infinite compute", CreateWith([inf](Model& m) { m.set_training_compute_flop(inf); }),
       invalid, "model.training_compute_flop"},
      {"negative parameters", CreateWith([](Model& m) { m.set_parameters(-1); }), invalid,
       "model.parameters"},
      {"utilization above 1", CreateWith([](Model& m) { m.set_hardware_utilization_mfu(1.5); }),
       invalid, "model.hardware_utilization_mfu"},
      {"unknown enum value", CreateWith([](Model& m) {
         m.set_accessibility(static_cast<common::v1::Accessibility>(99));
       }),
       invalid, "model.accessibility"},
      {"negative architecture size",
       CreateWith([](Model& m) { m.mutable_architecture()->set_num_layers(-2); }), invalid,
       "model.architecture.num_layers"},
      {"impossible date", CreateWith([](Model& m) {
         m.mutable_publication_date()->set_year(2024);
         m.mutable_publication_date()->set_month(13);
       }),
       invalid, "model.publication_date"},
      {"no provenance", CreateWith([](Model& m) { m.clear_provenance(); }), invalid,
       "model.provenance.source"},
      {"message over 16 MiB",
       CreateWith([](Model& m) { m.set_abstract(std::string(17 << 20, 'x')); }),
       grpc::StatusCode::RESOURCE_EXHAUSTED, ""},
      {"negative page size", ListWith([](v1::ListModelsRequest& r) { r.set_page_size(-1); }),
       invalid, "page_size"},
      {"filter over 4,096 characters",
       ListWith([](v1::ListModelsRequest& r) { r.set_filter(std::string(4097, 'a')); }), invalid,
       "filter"},
      {"malformed filter", ListWith([](v1::ListModelsRequest& r) { r.set_filter("parameters >"); }),
       invalid, "filter"},
      {"filter on an unknown field",
       ListWith([](v1::ListModelsRequest& r) { r.set_filter("no_such_field = 1"); }), invalid,
       "filter"},
      {"order by an unknown field",
       ListWith([](v1::ListModelsRequest& r) { r.set_order_by("no_such_field"); }), invalid,
       "order_by"},
      {"forged page token",
       ListWith([](v1::ListModelsRequest& r) { r.set_page_token("not-a-token"); }), invalid,
       "page_token"},
      {"1,001 names in a batch",
       [](v1::CatalogService::Stub& stub) {
         v1::BatchGetModelsRequest request;
         for (int i = 0; i <= 1000; ++i) request.add_names("models/gpt-2");
         grpc::ClientContext context;
         v1::BatchGetModelsResponse response;
         return stub.BatchGetModels(&context, request, &response);
       },
       invalid, "names"},
      {"empty name",
       [](v1::CatalogService::Stub& stub) {
         grpc::ClientContext context;
         Model model;
         return stub.GetModel(&context, v1::GetModelRequest(), &model);
       },
       invalid, "name"},
  };
}

class CatalogLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = SqliteStore::Open(":memory:");
    ASSERT_TRUE(store.ok()) << store.status();
    catalog_ = std::make_unique<Catalog>(*std::move(store));
    ASSERT_TRUE(catalog_->LoadIfEmpty(*ShippedDataset()).ok());
    service_ = std::make_unique<CatalogServiceImpl>(catalog_.get());
    runner_ = std::make_unique<ServerRunner>(ServerOptions{.program = "catalog-service",
                                                           .grpc_address = "127.0.0.1:0",
                                                           .metrics_address = "127.0.0.1:0"});
    runner_->AddService(service_.get(), v1::CatalogService::service_full_name());
    ASSERT_TRUE(runner_->Start().ok());
    stub_ = v1::CatalogService::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(runner_->grpc_port()), grpc::InsecureChannelCredentials()));
  }

  int64_t Revision() {
    absl::StatusOr<v1::CatalogInfo> info = catalog_->Info();
    return info.ok() ? info->revision() : -1;
  }

  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<CatalogServiceImpl> service_;
  std::unique_ptr<ServerRunner> runner_;
  std::unique_ptr<v1::CatalogService::Stub> stub_;
};

TEST_F(CatalogLimitsTest, EveryBadRequestIsRefusedNamingItsFieldAndChangesNothing) {
  const int64_t revision = Revision();
  ASSERT_TRUE(Create(*stub_, ValidModel(), "limits-valid").ok()) << "the valid request is valid";
  const int64_t after_valid = Revision();
  EXPECT_EQ(after_valid, revision + 1);
  for (const Case& test : Cases()) {
    SCOPED_TRACE(test.name);
    const grpc::Status status = test.call(*stub_);
    EXPECT_EQ(status.error_code(), test.code) << status.error_message();
    if (!test.field.empty()) {
      google::rpc::BadRequest bad_request;
      ASSERT_TRUE(testing::FindDetail(testing::DecodeDetails(status), &bad_request))
          << status.error_message();
      ASSERT_GT(bad_request.field_violations_size(), 0);
      EXPECT_EQ(bad_request.field_violations(0).field(), test.field) << status.error_message();
    }
  }
  EXPECT_EQ(Revision(), after_valid) << "a refused request changed the catalog";
}

}  // namespace
}  // namespace modelatlas::catalog
