// End to end: the real catalog-service, estimator-service and modelatlas-web
// binaries on free loopback ports, the pages and the JSON API fetched over
// HTTP the way a browser without JavaScript (or curl) would.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <thread>

#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "tests/testing/grpc_testing.h"
#include "tests/testing/process.h"
#include "tests/testing/shared_data.h"

namespace modelatlas {
namespace {

using testing::ChildProcess;

constexpr int kStartTimeoutMs = 30000;

// The port file's key=value lines once `key` is in it; empty on timeout.
// (testing::WaitForPortFile expects a gRPC server's grpc_port.)
std::map<std::string, std::string> WaitForPorts(const std::string& path, const std::string& key) {
  for (int waited = 0; waited < kStartTimeoutMs; waited += 50) {
    std::ifstream in(path);
    std::map<std::string, std::string> values;
    for (std::string line; std::getline(in, line);) {
      const size_t eq = line.find('=');
      if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
    }
    if (values.count(key) && values.count("metrics_port")) return values;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return {};
}

struct Stack {
  std::string dir;
  std::unique_ptr<ChildProcess> catalog, estimator, web;
  int catalog_port = 0, estimator_port = 0, http_port = 0, metrics_port = 0;
};

class WebEndToEndTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    stack_ = new Stack();
    stack_->dir = ::testing::TempDir() + "/web_e2e_" + std::to_string(getpid());
    std::filesystem::remove_all(stack_->dir);
    std::filesystem::create_directories(stack_->dir);
    auto start = [](const std::vector<std::string>& argv, const std::string& name,
                    const std::string& key = "grpc_port") {
      const std::string port_file = stack_->dir + "/" + name + ".ports";
      std::vector<std::string> args = argv;
      args.push_back("--metrics_address=127.0.0.1:0");
      args.push_back("--port_file=" + port_file);
      auto process = std::make_unique<ChildProcess>(args, stack_->dir + "/" + name + ".log");
      return std::make_pair(std::move(process), WaitForPorts(port_file, key));
    };
    auto [catalog, catalog_ports] =
        start({CATALOG_SERVICE_BIN, "--sqlite_path=" + stack_->dir + "/catalog.db",
               "--grpc_address=127.0.0.1:0", "--shutdown_deadline=1s"},
              "catalog");
    stack_->catalog = std::move(catalog);
    if (catalog_ports.empty()) return;
    stack_->catalog_port = std::stoi(catalog_ports["grpc_port"]);
    const std::string catalog_address = "127.0.0.1:" + std::to_string(stack_->catalog_port);
    auto [estimator, estimator_ports] = start(
        {ESTIMATOR_SERVICE_BIN, "--catalog_address=" + catalog_address,
         "--grpc_address=127.0.0.1:0", "--readiness_interval=200ms", "--shutdown_deadline=1s"},
        "estimator");
    stack_->estimator = std::move(estimator);
    if (estimator_ports.empty()) return;
    stack_->estimator_port = std::stoi(estimator_ports["grpc_port"]);
    auto [web, web_ports] =
        start({MODELATLAS_WEB_BIN, "--catalog_address=" + catalog_address,
               "--estimator_address=127.0.0.1:" + std::to_string(stack_->estimator_port),
               "--http_address=127.0.0.1:0"},
              "web", "http_port");
    stack_->web = std::move(web);
    if (web_ports.empty()) return;
    stack_->http_port = std::stoi(web_ports["http_port"]);
    stack_->metrics_port = std::stoi(web_ports["metrics_port"]);
    // Ready once both services answer.
    for (int waited = 0; waited < kStartTimeoutMs; waited += 100) {
      auto ready = httplib::Client("127.0.0.1", stack_->http_port).Get("/readyz");
      if (ready && ready->status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  static void TearDownTestSuite() {
    if (std::getenv("E2E_LOGS") != nullptr) {
      for (const char* name : {"catalog", "estimator", "web"}) {
        std::fprintf(stderr, "--- %s log ---\n%s\n", name,
                     testing::ReadFile(stack_->dir + "/" + name + ".log").c_str());
      }
    }
    std::filesystem::remove_all(stack_->dir);
    delete stack_;
    stack_ = nullptr;
  }

  void SetUp() override {
    ASSERT_GT(stack_->http_port, 0) << "the stack did not start; logs in " << stack_->dir;
  }

  static httplib::Result Get(const std::string& path) {
    httplib::Client client("127.0.0.1", stack_->http_port);
    client.set_read_timeout(30, 0);
    return client.Get(path);
  }
  static httplib::Result Post(const std::string& path, const std::string& json) {
    httplib::Client client("127.0.0.1", stack_->http_port);
    client.set_read_timeout(30, 0);
    return client.Post(path, json, "application/json");
  }
  static bool Has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }
  // "Needs 17.7 GB of memory" on a model page.
  static std::string Needs(const std::string& html) {
    std::smatch m;
    return std::regex_search(html, m, std::regex("Needs ([0-9.]+ [kMGT]?B) of memory")) ? m[1].str()
                                                                                        : "";
  }

  static Stack* stack_;
};

Stack* WebEndToEndTest::stack_ = nullptr;

TEST_F(WebEndToEndTest, HealthAndReadiness) {
  auto live = Get("/healthz");
  ASSERT_TRUE(live);
  EXPECT_EQ(live->status, 200);
  auto ready = Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200) << ready->body;
}

TEST_F(WebEndToEndTest, ClosedWeightsModelHasNoEstimate) {
  // megatron-bert: open_model_weights is false in the shipped dataset.
  auto page = Get("/models/megatron-bert");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_TRUE(Has(page->body, "No estimate: weights not published")) << page->body;
  EXPECT_FALSE(Has(page->body, "<table class=\"plan\""));
  // The full record, formatted for people, is in the HTML itself.
  EXPECT_TRUE(Has(page->body, "2.2 × 10²² FLOP"));
  EXPECT_TRUE(Has(page->body, "262.6 kW"));
  EXPECT_TRUE(Has(page->body, "17 September 2019"));
  EXPECT_TRUE(Has(page->body, "Is Megatron-BERT open source?"));
  EXPECT_TRUE(Has(page->body, "What GPU do I need to run Megatron-BERT?"));
}

TEST_F(WebEndToEndTest, OpenModelPlansAndReplansFromTheQuery) {
  auto page = Get("/models/llama-3-1-8b");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_TRUE(Has(page->body, "<table class=\"plan\""));
  EXPECT_TRUE(Has(page->body, "<svg"));
  EXPECT_TRUE(Has(page->body,
                  "Assumed workload: 4,096-token context, batch 1, weights BF16 (the default: no "
                  "quantized checkpoint on record)"));
  EXPECT_TRUE(Has(page->body, "8,030,261,248"));
  // Newer language models of about its size on the same card: the shipped
  // dataset has several (Llama 3.1 8B is from July 2024).
  const size_t newer = page->body.find("<h3>Newer models of the same size</h3>");
  ASSERT_NE(newer, std::string::npos);
  const std::string after = page->body.substr(newer, 4000);
  EXPECT_TRUE(Has(after, "Language models: open-weight models published after 23 July 2024"))
      << after;
  EXPECT_TRUE(Has(after, "<a href=\"/models/")) << after;
  EXPECT_FALSE(Has(after, "Stable Diffusion")) << after;  // not a language model
  auto longer = Get("/models/llama-3-1-8b?context=131072&batch=4&weights=int4");
  ASSERT_TRUE(longer);
  EXPECT_EQ(longer->status, 200);
  EXPECT_TRUE(Has(longer->body, "131,072-token context, batch 4, weights INT4"));
  EXPECT_FALSE(Needs(page->body).empty());
  EXPECT_FALSE(Needs(longer->body).empty());
  EXPECT_NE(Needs(page->body), Needs(longer->body));
  // The form keeps the state in the URL: GET, with the chosen values.
  EXPECT_TRUE(Has(longer->body, "method=\"get\""));
  EXPECT_TRUE(Has(longer->body, "value=\"131072\""));
  EXPECT_TRUE(Has(longer->body, "<option value=\"int4\" selected>"));
  auto bad = Get("/models/llama-3-1-8b?context=lots");
  ASSERT_TRUE(bad);
  EXPECT_TRUE(Has(bad->body, "context must be a whole number"));
}

TEST_F(WebEndToEndTest, CardPageFromTheModelPageListsModels) {
  auto page = Get("/models/llama-3-1-8b");
  ASSERT_TRUE(page);
  std::smatch link;
  ASSERT_TRUE(std::regex_search(page->body, link, std::regex("href=\"(/hardware/[a-z0-9-]+)\"")));
  auto card = Get(link[1].str());
  ASSERT_TRUE(card);
  EXPECT_EQ(card->status, 200) << link[1].str();
  EXPECT_TRUE(Has(card->body, "What it runs"));
  EXPECT_TRUE(Has(card->body, "href=\"/models/"));
  auto h100 = Get("/hardware/nvidia-h100-sxm5-80gb?context=8192&order=newest&domain=Language");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->status, 200);
  EXPECT_TRUE(Has(h100->body, "href=\"/models/llama-3-1-8b\""));
  EXPECT_TRUE(Has(h100->body, "8,192-token context"));
  // Models with no architecture on record (the shipped dataset has hundreds
  // of small open ones) count no KV cache: each such row says so, and the
  // summary counts them.
  auto any_domain = Get("/hardware/nvidia-h100-sxm5-80gb");
  ASSERT_TRUE(any_domain);
  EXPECT_TRUE(Has(any_domain->body, "class=\"kv-not-counted\""))
      << any_domain->body.substr(0, 2000);
  EXPECT_TRUE(
      Has(any_domain->body, "have no architecture on record: their KV cache is not counted"));
  // Llama 3.1 8B has one: its row has no such note.
  const size_t start = any_domain->body.find("<tr><td><a href=\"/models/llama-3-1-8b\">");
  ASSERT_NE(start, std::string::npos);
  const std::string row =
      any_domain->body.substr(start, any_domain->body.find("</tr>", start) - start);
  EXPECT_FALSE(Has(row, "kv-not-counted")) << row;
  // A card whose bandwidth on record no DRAM device reaches (Epoch AI's
  // MetaX MXC500 figure, 18 TB/s over 64 GiB, ten times the shipped
  // record's, as an import of Epoch's file over it would write it) says so
  // beside its decode column once the estimator's snapshot has the change;
  // the H100 page does not.
  {
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(stack_->catalog_port),
                                       grpc::InsecureChannelCredentials());
    auto stub = catalog::v1::CatalogService::NewStub(channel);
    catalog::v1::UpdateHardwareRequest request;
    request.mutable_hardware()->set_name("hardware/metax-mxc500-oam");
    request.mutable_hardware()->set_memory_bandwidth_bytes_per_second(18e12);
    request.mutable_update_mask()->add_paths("memory_bandwidth_bytes_per_second");
    common::v1::Hardware updated;
    grpc::ClientContext context;
    context.set_deadline(testing::DeadlineFromNow(10000));
    const grpc::Status status = stub->UpdateHardware(&context, request, &updated);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  std::optional<httplib::Result> mxc500;
  for (int attempt = 0; attempt < 100; ++attempt) {
    mxc500.emplace(Get("/hardware/metax-mxc500-oam"));
    if (*mxc500 && Has((*mxc500)->body, "bandwidth-doubtful")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(*mxc500);
  EXPECT_EQ((*mxc500)->status, 200);
  EXPECT_TRUE(Has((*mxc500)->body,
                  "<span class=\"bandwidth-doubtful\">Decode: bandwidth doubtful: 1.8e+04 GB/s "
                  "over 64.00 GiB reads the whole memory 261.9 times a second"))
      << (*mxc500)->body.substr(0, 3000);
  EXPECT_FALSE(Has(any_domain->body, "bandwidth-doubtful"));
  auto plan = Get("/plan?model=llama-3-1-8b&hardware=nvidia-h100-sxm5-80gb");
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->status, 200);
  EXPECT_TRUE(Has(plan->body, "NVIDIA H100 SXM5 80 GB"));
  EXPECT_TRUE(Has(plan->body, "The arithmetic"));
}

// gpt-oss-120b is published with MXFP4 experts: with no format asked, its
// page, its plan page and the H100's list size it as published and say so
// (one H100 80 GB holds it, as OpenAI states); asked for BF16, it is BF16.
TEST_F(WebEndToEndTest, AModelPublishedQuantizedIsShownAsPublished) {
  auto page = Get("/models/gpt-oss-120b");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_TRUE(Has(page->body, "weights MXFP4 (the published checkpoint&#39;s format)"))
      << page->body.substr(0, 3000);
  auto plan = Get("/plan?model=gpt-oss-120b&hardware=nvidia-h100-sxm5-80gb");
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->status, 200);
  EXPECT_TRUE(Has(plan->body, "weights MXFP4 (the published checkpoint"))
      << plan->body.substr(0, 3000);
  auto bf16 = Get("/plan?model=gpt-oss-120b&hardware=nvidia-h100-sxm5-80gb&weights=bf16");
  ASSERT_TRUE(bf16);
  EXPECT_TRUE(Has(bf16->body, "weights BF16, KV cache BF16")) << bf16->body.substr(0, 3000);
  auto h100 = Get("/hardware/nvidia-h100-sxm5-80gb?domain=Language");
  ASSERT_TRUE(h100);
  const size_t start = h100->body.find("<tr><td><a href=\"/models/gpt-oss-120b\">");
  ASSERT_NE(start, std::string::npos);
  const std::string row = h100->body.substr(start, h100->body.find("</tr>", start) - start);
  EXPECT_TRUE(Has(row, "(weights MXFP4, as published)")) << row;
  EXPECT_TRUE(Has(h100->body, "weights as published"));
}

TEST_F(WebEndToEndTest, UnknownIdsAreNotFoundPagesNamingTheRequest) {
  for (const std::string path : {"/models/no-such-model", "/hardware/no-such-card",
                                 "/plan?model=no-such-model", "/nowhere"}) {
    auto page = Get(path);
    ASSERT_TRUE(page) << path;
    EXPECT_EQ(page->status, 404) << path;
  }
  auto page = Get("/models/no-such-model");
  EXPECT_TRUE(Has(page->body, "No model called “no-such-model”"));
}

TEST_F(WebEndToEndTest, SearchPage) {
  auto found = Get("/search?q=llama&order_by=parameters%20desc");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->status, 200);
  EXPECT_TRUE(Has(found->body, "href=\"/models/llama-3-1-8b\""));
  EXPECT_FALSE(Has(found->body, "href=\"/models/megatron-bert\""));
  auto filtered = Get("/search?filter=parameters%20%3E%201e11");
  ASSERT_TRUE(filtered);
  EXPECT_TRUE(Has(filtered->body, "href=\"/models/llama-3-1-405b\""));
  EXPECT_FALSE(Has(filtered->body, "href=\"/models/llama-3-1-8b\""));
  auto cards = Get("/search?kind=hardware&q=H100");
  ASSERT_TRUE(cards);
  EXPECT_TRUE(Has(cards->body, "href=\"/hardware/nvidia-h100-sxm5-80gb\""));
  auto bad = Get("/search?filter=parameters%20%3E%3E");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
}

TEST_F(WebEndToEndTest, JsonApi) {
  auto model = Get("/v1/models/megatron-bert");
  ASSERT_TRUE(model);
  EXPECT_EQ(model->status, 200);
  EXPECT_EQ(model->get_header_value("Content-Type"), "application/json; charset=utf-8");
  EXPECT_TRUE(Has(model->body, "\"display_name\":\"Megatron-BERT\"")) << model->body;
  auto list = Get("/v1/models?page_size=2&order_by=parameters%20desc");
  ASSERT_TRUE(list);
  EXPECT_TRUE(Has(list->body, "\"next_page_token\""));
  auto estimate =
      Post("/v1/estimates:memory",
           R"({"model": "models/llama-3-1-8b", "workload": {"context_length_tokens": 8192}})");
  ASSERT_TRUE(estimate);
  EXPECT_EQ(estimate->status, 200);
  EXPECT_TRUE(Has(estimate->body, "\"total_bytes\":\"18252559360\"")) << estimate->body;
  auto runnable =
      Get("/v1/hardware/nvidia-h100-sxm5-80gb/runnableModels?workload.weight_format=int4");
  ASSERT_TRUE(runnable);
  EXPECT_EQ(runnable->status, 200);
  EXPECT_EQ(runnable->body.substr(0, 2), "[{");
  auto missing = Get("/v1/models/no-such-model");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_TRUE(Has(missing->body, "{\"error\":{\"code\":404,"));
  EXPECT_TRUE(Has(missing->body, "\"status\":\"NOT_FOUND\""));
  EXPECT_TRUE(Has(missing->body, "google.rpc.ResourceInfo"));
  auto invalid =
      Post("/v1/estimates:memory", R"({"model": "models/gpt-2", "workload": {"batch_size": -1}})");
  ASSERT_TRUE(invalid);
  EXPECT_EQ(invalid->status, 400);
  EXPECT_TRUE(Has(invalid->body, "\"status\":\"INVALID_ARGUMENT\""));
  EXPECT_TRUE(Has(invalid->body, "\"field_violations\":[{\"field\":\"") &&
              Has(invalid->body, "batch_size"))
      << invalid->body;
  auto write = Post("/v1/models", R"({"display_name": "x"})");
  ASSERT_TRUE(write);
  EXPECT_EQ(write->status, 405);
  EXPECT_TRUE(Has(write->body, "\"code\":405"));
}

TEST_F(WebEndToEndTest, HostileRecordNamesComeBackAsText) {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(stack_->catalog_port),
                                     grpc::InsecureChannelCredentials());
  auto stub = catalog::v1::CatalogService::NewStub(channel);
  catalog::v1::CreateModelRequest request;
  request.set_model_id("hostile-names");
  request.mutable_model()->set_display_name("<script>alert(1)</script> \u202Egnp.exe");
  request.mutable_model()->add_organizations("\"><img src=x onerror=alert(2)>");
  request.mutable_model()->set_parameters_notes("</p><script>alert(3)</script>");
  request.mutable_model()->mutable_provenance()->set_source("<b>a test</b>");
  common::v1::Model created;
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(10000));
  const grpc::Status status = stub->CreateModel(&context, request, &created);
  ASSERT_TRUE(status.ok() || status.error_code() == grpc::ALREADY_EXISTS) << status.error_message();
  for (const std::string path : {"/models/hostile-names", "/search?q=script"}) {
    auto page = Get(path);
    ASSERT_TRUE(page) << path;
    EXPECT_EQ(page->status, 200) << path;
    EXPECT_FALSE(Has(page->body, "<script>alert")) << path;
    EXPECT_FALSE(Has(page->body, "<img src=x")) << path;
    EXPECT_FALSE(Has(page->body, "\u202E")) << path;
    EXPECT_TRUE(Has(page->body, "&lt;script&gt;alert(1)&lt;/script&gt; [U+202E]gnp.exe")) << path;
  }
  auto json = Get("/v1/models/hostile-names");
  ASSERT_TRUE(json);
  EXPECT_FALSE(Has(json->body, "<script>"));
}

TEST_F(WebEndToEndTest, ContentSecurityPolicyAndNoInlineScript) {
  auto page = Get("/models/llama-3-1-8b");
  ASSERT_TRUE(page);
  const std::string csp = page->get_header_value("Content-Security-Policy");
  EXPECT_TRUE(Has(csp, "default-src 'self'")) << csp;
  EXPECT_TRUE(Has(csp, "script-src 'self'"));
  EXPECT_FALSE(Has(csp, "unsafe-inline"));
  EXPECT_EQ(page->get_header_value("X-Content-Type-Options"), "nosniff");
  // Every script comes from this server; nothing is loaded from elsewhere.
  EXPECT_FALSE(std::regex_search(page->body, std::regex("<script(?![^>]*src=\"/static/)")));
  EXPECT_FALSE(
      std::regex_search(page->body, std::regex("(src|href)=\"(https?:)?//[^\"]*\\.(js|css)")));
  EXPECT_FALSE(Has(page->body, " style=\""));
  auto css = Get("/static/site.css");
  ASSERT_TRUE(css);
  EXPECT_EQ(css->status, 200);
  EXPECT_EQ(css->get_header_value("Content-Type"), "text/css; charset=utf-8");
  auto js = Get("/static/site.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
}

TEST_F(WebEndToEndTest, MetricsByRoutePatternNeverByPath) {
  ASSERT_TRUE(Get("/models/megatron-bert"));
  ASSERT_TRUE(Get("/v1/models/megatron-bert"));
  const std::string metrics = testing::HttpGet(stack_->metrics_port, "/metrics");
  EXPECT_GE(testing::SeriesValue(metrics, "modelatlas_web_requests_total",
                                 {"route=\"/models/{id}\"", "code=\"200\""}),
            1)
      << metrics;
  EXPECT_GE(testing::SeriesValue(metrics, "modelatlas_web_request_duration_seconds_count",
                                 {"route=\"GET /v1/{name=models/*}\""}),
            1);
  EXPECT_FALSE(Has(metrics, "megatron-bert"));
  EXPECT_TRUE(Has(metrics, "process_resident_memory_bytes"));
  // Every web series the Grafana dashboard reads is one modelatlas-web exports.
  const std::string dashboard =
      testing::ReadFile(std::string(MODELATLAS_SOURCE_DIR) + "/deploy/grafana/modelatlas.json");
  const std::regex series("(modelatlas_web_[a-z_]+)\\{");
  int checked = 0;
  for (std::sregex_iterator it(dashboard.begin(), dashboard.end(), series), end; it != end;
       ++it, ++checked) {
    EXPECT_TRUE(Has(metrics, "\n" + (*it)[1].str() + "{")) << (*it)[1].str();
  }
  EXPECT_GE(checked, 3);
}

TEST_F(WebEndToEndTest, DrainsReadinessBeforeStopping) {
  // A second web front on the same services, stopped with SIGTERM.
  const std::string ports = stack_->dir + "/drain.ports";
  ChildProcess web(
      {MODELATLAS_WEB_BIN, "--catalog_address=127.0.0.1:" + std::to_string(stack_->catalog_port),
       "--estimator_address=127.0.0.1:" + std::to_string(stack_->estimator_port),
       "--http_address=127.0.0.1:0", "--metrics_address=127.0.0.1:0", "--readiness_drain=2s",
       "--port_file=" + ports},
      stack_->dir + "/drain.log");
  auto values = WaitForPorts(ports, "http_port");
  ASSERT_FALSE(values.empty());
  httplib::Client client("127.0.0.1", std::stoi(values["http_port"]));
  auto ready = client.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  ASSERT_EQ(kill(web.pid(), SIGTERM), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto draining = client.Get("/readyz");
  ASSERT_TRUE(draining);
  EXPECT_EQ(draining->status, 503);
  auto page = client.Get("/models/megatron-bert");  // still answering while it drains
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(web.Stop(SIGTERM, 10000), 0);
}

// With no readiness drain the web front exits at once, even right after a
// scrape: ~Exposer alone waited out civetweb's 2 s poll, which the scrape
// restarts (2.0 s before; common/server/metrics_exposer.h). Generous for a
// loaded machine: it exits in about 0.05 s.
TEST_F(WebEndToEndTest, StopsPromptlyRightAfterAScrape) {
  const std::string ports = stack_->dir + "/stop.ports";
  ChildProcess web(
      {MODELATLAS_WEB_BIN, "--catalog_address=127.0.0.1:" + std::to_string(stack_->catalog_port),
       "--estimator_address=127.0.0.1:" + std::to_string(stack_->estimator_port),
       "--http_address=127.0.0.1:0", "--metrics_address=127.0.0.1:0", "--port_file=" + ports},
      stack_->dir + "/stop.log");
  auto values = WaitForPorts(ports, "http_port");
  ASSERT_FALSE(values.empty());
  ASSERT_NE(testing::HttpGet(std::stoi(values["metrics_port"]), "/metrics"), "");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(web.Stop(SIGTERM, 10000), 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
}

}  // namespace
}  // namespace modelatlas
