// The HTTP mapping: path templates, routes read from the services'
// google.api.http options, and binding path, query and body to requests.
#include "web/http_rule.h"

#include <gtest/gtest.h>

#include "common/status/errors.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"
#include "web/path_template.h"

namespace modelatlas::web {
namespace {

using Vars = std::map<std::string, std::string>;

PathTemplate Parsed(const std::string& text) {
  auto t = PathTemplate::Parse(text);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : PathTemplate();
}

TEST(PathTemplateTest, LiteralsAndVerbs) {
  const PathTemplate t = Parsed("/v1/estimates:memory");
  EXPECT_EQ(t.verb(), "memory");
  EXPECT_EQ(t.Match("/v1/estimates:memory"), Vars{});
  EXPECT_FALSE(t.Match("/v1/estimates"));
  EXPECT_FALSE(t.Match("/v1/estimates:other"));
  EXPECT_FALSE(t.Match("/v2/estimates:memory"));
}

TEST(PathTemplateTest, VariableWithPattern) {
  const PathTemplate t = Parsed("/v1/{name=models/*}");
  EXPECT_EQ(t.Match("/v1/models/llama-2-7b"), (Vars{{"name", "models/llama-2-7b"}}));
  EXPECT_EQ(t.Match("/v1/models/Llama%202%207B"), (Vars{{"name", "models/Llama 2 7B"}}));
  EXPECT_FALSE(t.Match("/v1/hardware/h100"));
  EXPECT_FALSE(t.Match("/v1/models"));
  EXPECT_FALSE(t.Match("/v1/models/"));
  EXPECT_FALSE(t.Match("/v1/models/a/b"));
  EXPECT_FALSE(t.Match("/v1/models:batchGet"));
}

TEST(PathTemplateTest, VariableInTheMiddleAndVerbAfterAVariable) {
  const PathTemplate runnable = Parsed("/v1/{hardware=hardware/*}/runnableModels");
  EXPECT_EQ(runnable.Match("/v1/hardware/h100/runnableModels"),
            (Vars{{"hardware", "hardware/h100"}}));
  EXPECT_FALSE(runnable.Match("/v1/hardware/h100"));
  const PathTemplate audit = Parsed("/v1/{model=models/*}:audit");
  EXPECT_EQ(audit.verb(), "audit");
  EXPECT_EQ(audit.Match("/v1/models/gpt-2:audit"), (Vars{{"model", "models/gpt-2"}}));
  EXPECT_FALSE(audit.Match("/v1/models/gpt-2"));
}

TEST(PathTemplateTest, BareVariableAndDoubleWildcard) {
  EXPECT_EQ(Parsed("/v1/things/{id}").Match("/v1/things/7"), (Vars{{"id", "7"}}));
  const PathTemplate rest = Parsed("/v1/{path=files/**}");
  EXPECT_EQ(rest.Match("/v1/files/a/b/c"), (Vars{{"path", "files/a/b/c"}}));
  EXPECT_FALSE(rest.Match("/v1/other/a"));
}

TEST(PathTemplateTest, RefusesMalformedTemplates) {
  for (const char* bad :
       {"", "v1/x", "/v1/{name", "/v1/{=x}", "/v1/**/x", "/v1/", "/v1/a b{", "/v1/{name=a/{b}}"}) {
    EXPECT_FALSE(PathTemplate::Parse(bad).ok()) << bad;
  }
}

const google::protobuf::ServiceDescriptor& Service(const char* name) {
  return *google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
}

const ApiRoute* Find(const std::vector<ApiRoute>& routes, const std::string& method) {
  for (const ApiRoute& r : routes) {
    if (r.method->name() == method) return &r;
  }
  return nullptr;
}

TEST(RoutesTest, EveryReadAndEstimateIsMappedAndNoWriteIs) {
  auto catalog = RoutesOf(Service(catalog::v1::CatalogService::service_full_name()), 0);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  auto estimator = RoutesOf(Service(estimator::v1::EstimatorService::service_full_name()), 1);
  ASSERT_TRUE(estimator.ok()) << estimator.status();
  for (const char* read : {"GetModel", "ListModels", "BatchGetModels", "GetHardware",
                           "ListHardware", "BatchGetHardware", "GetCatalogInfo"}) {
    EXPECT_NE(Find(*catalog, read), nullptr) << read;
  }
  for (const char* write : {"CreateModel", "UpdateModel", "DeleteModel", "CreateHardware",
                            "UpdateHardware", "DeleteHardware", "ImportRecords", "Watch"}) {
    EXPECT_EQ(Find(*catalog, write), nullptr) << write;
  }
  const ApiRoute* get = Find(*catalog, "GetModel");
  EXPECT_EQ(get->http_method, "GET");
  EXPECT_EQ(get->path.text(), "/v1/{name=models/*}");
  EXPECT_EQ(get->grpc_path, "/modelatlas.catalog.v1.CatalogService/GetModel");
  for (const char* method :
       {"EstimateInferenceMemory", "CountParameters", "PlanInference", "ListRunnableModels",
        "EstimateTrainingCompute", "EstimateTrainingMemory", "PlanTraining", "AuditModel",
        "FindMaxContext", "FindMaxBatch", "FindBestWeightFormat"}) {
    const ApiRoute* r = Find(*estimator, method);
    ASSERT_NE(r, nullptr) << method;
    EXPECT_EQ(r->backend, 1);
  }
  EXPECT_EQ(Find(*estimator, "EstimateInferenceMemory")->path.text(), "/v1/estimates:memory");
  EXPECT_EQ(Find(*estimator, "EstimateInferenceMemory")->body, "*");
  EXPECT_TRUE(Find(*estimator, "ListRunnableModels")->method->server_streaming());
  EXPECT_EQ(Find(*estimator, "FindMaxContext")->path.text(), "/v1/limits:maxContext");
  EXPECT_EQ(Find(*estimator, "FindMaxContext")->http_method, "POST");
}

TEST(RoutesTest, SpecificTemplatesComeFirst) {
  auto routes = RoutesOf(Service(catalog::v1::CatalogService::service_full_name()), 0);
  ASSERT_TRUE(routes.ok());
  OrderRoutes(&*routes);
  // "/v1/models:batchGet" must not be read as GetModel of "models:batchGet".
  for (const ApiRoute& r : *routes) {
    if (r.http_method == "GET" && r.path.Match("/v1/models:batchGet")) {
      EXPECT_EQ(r.method->name(), "BatchGetModels");
      break;
    }
  }
}

TEST(BindTest, PathVariablesAndQueryParameters) {
  auto routes = RoutesOf(Service(catalog::v1::CatalogService::service_full_name()), 0);
  ASSERT_TRUE(routes.ok());
  catalog::v1::GetModelRequest get;
  ASSERT_TRUE(
      BindRequest(*Find(*routes, "GetModel"), {{"name", "models/gpt-2"}}, {}, "", &get).ok());
  EXPECT_EQ(get.name(), "models/gpt-2");
  catalog::v1::ListModelsRequest list;
  ASSERT_TRUE(BindRequest(*Find(*routes, "ListModels"), {},
                          {{"filter", "parameters > 1e9"}, {"page_size", "5"}, {"orderBy", "x"}},
                          "", &list)
                  .ok());
  EXPECT_EQ(list.filter(), "parameters > 1e9");
  EXPECT_EQ(list.page_size(), 5);
  EXPECT_EQ(list.order_by(), "x");
  catalog::v1::BatchGetModelsRequest batch;
  ASSERT_TRUE(BindRequest(*Find(*routes, "BatchGetModels"), {}, {{"names", "a"}, {"names", "b"}},
                          "", &batch)
                  .ok());
  EXPECT_EQ(batch.names_size(), 2);
}

TEST(BindTest, BadQueryParametersAreFieldViolations) {
  auto routes = RoutesOf(Service(catalog::v1::CatalogService::service_full_name()), 0);
  ASSERT_TRUE(routes.ok());
  catalog::v1::ListModelsRequest list;
  const absl::Status s = BindRequest(*Find(*routes, "ListModels"), {},
                                     {{"page_size", "many"}, {"colour", "red"}}, "", &list);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  const auto violations = GetFieldViolations(s);
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_EQ(violations[0].field, "page_size");
  EXPECT_EQ(violations[1].field, "colour");
  catalog::v1::GetModelRequest get;
  EXPECT_FALSE(BindRequest(*Find(*routes, "GetModel"), {}, {}, "{\"name\":\"x\"}", &get).ok());
}

TEST(BindTest, JsonBodyWithEnumsNestedFieldsAndUnknownFields) {
  auto routes = RoutesOf(Service(estimator::v1::EstimatorService::service_full_name()), 1);
  ASSERT_TRUE(routes.ok());
  const ApiRoute& memory = *Find(*routes, "EstimateInferenceMemory");
  estimator::v1::EstimateInferenceMemoryRequest request;
  ASSERT_TRUE(
      BindRequest(memory, {}, {},
                  R"({"model": "models/gpt-2", "workload": {"weight_format": "NUMBER_FORMAT_INT4",
                              "contextLengthTokens": "8192"}})",
                  &request)
          .ok());
  EXPECT_EQ(request.model(), "models/gpt-2");
  EXPECT_EQ(request.workload().weight_format(), estimator::v1::NUMBER_FORMAT_INT4);
  EXPECT_EQ(request.workload().context_length_tokens(), 8192);
  estimator::v1::EstimateInferenceMemoryRequest unknown;
  const absl::Status s = BindRequest(memory, {}, {}, R"({"modle": "x"})", &unknown);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetFieldViolations(s).at(0).field, "body");
  EXPECT_FALSE(BindRequest(memory, {}, {}, "not json", &unknown).ok());
}

TEST(SetFieldTest, TypesByText) {
  estimator::v1::ListRunnableModelsRequest r;
  EXPECT_TRUE(SetFieldFromText(&r, "workload.weight_format", "int8").ok());
  EXPECT_EQ(r.workload().weight_format(), estimator::v1::NUMBER_FORMAT_INT8);
  EXPECT_TRUE(SetFieldFromText(&r, "workload.weight_format", "NUMBER_FORMAT_FP8").ok());
  EXPECT_TRUE(SetFieldFromText(&r, "workload.kv_cache_format", "2").ok());
  EXPECT_EQ(r.workload().kv_cache_format(), estimator::v1::NUMBER_FORMAT_FP16);
  EXPECT_TRUE(SetFieldFromText(&r, "workload.memory_utilization", "0.8").ok());
  EXPECT_DOUBLE_EQ(r.workload().memory_utilization(), 0.8);
  EXPECT_TRUE(SetFieldFromText(&r, "hypothetical", "true").ok());
  EXPECT_TRUE(r.hypothetical());
  EXPECT_FALSE(SetFieldFromText(&r, "workload.weight_format", "int3").ok());
  EXPECT_FALSE(SetFieldFromText(&r, "cards", "1.5").ok());
  estimator::v1::PlanInferenceRequest plan;
  EXPECT_TRUE(SetFieldFromText(&plan, "workload.batch_size", "4").ok());
  EXPECT_EQ(plan.workload().batch_size(), 4);
  EXPECT_FALSE(SetFieldFromText(&plan, "hardware.x", "4").ok());
}

TEST(ErrorBodyTest, Aip193WithDetails) {
  const grpc::Status status(grpc::NOT_FOUND, "Model \"models/x\" not found");
  EXPECT_EQ(ErrorBody(status),
            "{\"error\":{\"code\":404,\"message\":\"Model \\\"models/x\\\" not found\","
            "\"status\":\"NOT_FOUND\",\"details\":[]}}\n");
  EXPECT_EQ(HttpStatusOf(grpc::INVALID_ARGUMENT), 400);
  EXPECT_EQ(HttpStatusOf(grpc::UNAVAILABLE), 503);
  EXPECT_EQ(HttpStatusOf(grpc::DEADLINE_EXCEEDED), 504);
  EXPECT_EQ(HttpStatusOf(grpc::ALREADY_EXISTS), 409);
  EXPECT_EQ(JsonQuote("<a\n\"b\">"), "\"\\u003ca\\n\\\"b\\\"\\u003e\"");
}

}  // namespace
}  // namespace modelatlas::web
