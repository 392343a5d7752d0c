#include "web/server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/server/channels.h"
#include "common/server/message_limits.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"
#include "web/api.h"
#include "web/assets.h"
#include "web/catalog_pages.h"
#include "web/model_page.h"

namespace modelatlas::web {
namespace {

constexpr char kCsp[] =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// Serialized grpc.health.v1.HealthCheckRequest{service: "readiness"}.
const std::string kReadinessRequest = std::string("\x0a\x09readiness", 11);

bool Serving(grpc::Channel* channel) {
  std::vector<std::string> responses;
  const grpc::Status status =
      GenericCall(channel, "/grpc.health.v1.Health/Check", kReadinessRequest, 1000, &responses);
  // HealthCheckResponse{status: SERVING} is 08 01.
  return status.ok() && responses.size() == 1 && responses[0] == std::string("\x08\x01", 2);
}

const google::protobuf::ServiceDescriptor* Service(const char* full_name) {
  return google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(full_name);
}

}  // namespace

struct WebServer::Impl {
  WebOptions options;
  std::shared_ptr<prometheus::Registry> registry;
  prometheus::Family<prometheus::Counter>* requests = nullptr;
  prometheus::Family<prometheus::Histogram>* durations = nullptr;
  std::shared_ptr<grpc::Channel> catalog_channel, estimator_channel;
  Clients clients;
  std::unique_ptr<JsonApi> api;
  httplib::Server http;
  std::thread thread;
  int port = 0;
  std::atomic<bool> draining{false};

  void Observe(const std::string& route, int code, double seconds) {
    requests->Add({{"route", route}, {"code", std::to_string(code)}}).Increment();
    durations
        ->Add({{"route", route}},
              prometheus::Histogram::BucketBoundaries{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                      0.25, 0.5, 1, 2.5, 5, 10})
        .Observe(seconds);
  }

  static void Secure(httplib::Response& res) {
    res.set_header("Content-Security-Policy", kCsp);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("X-Frame-Options", "DENY");
  }

  // A page handler wrapped with timing, metrics and headers.
  template <typename Render>
  httplib::Server::Handler PageRoute(std::string route, Render render) {
    return [this, route, render](const httplib::Request& req, httplib::Response& res) {
      const auto start = std::chrono::steady_clock::now();
      Page page = render(req);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      res.status = page.status;
      res.set_content(page.html, "text/html; charset=utf-8");
      res.set_header("Cache-Control", "no-cache");
      // W3C Server-Timing: the render's own time (the calls to both services
      // included), readable in a browser's developer tools and by
      // scripts/web-bench.sh without the network in the figure.
      res.set_header("Server-Timing", absl::StrFormat("render;dur=%.3f", seconds * 1e3));
      Secure(res);
      Observe(route, page.status, seconds);
    };
  }

  void Api(const httplib::Request& req, httplib::Response& res) {
    const auto start = std::chrono::steady_clock::now();
    std::string path = req.target.substr(0, req.target.find('?'));
    QueryParams query(req.params.begin(), req.params.end());
    ApiReply reply = api->Handle(req.method, path, query, req.body);
    res.status = reply.http_status;
    res.set_content(reply.body, "application/json; charset=utf-8");
    Secure(res);
    Observe(reply.route, reply.http_status,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

  void Static(const std::string& route, std::string_view content, const char* type) {
    http.Get(route, [this, route, content, type](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(content), type);
      res.set_header("Cache-Control", "public, max-age=3600");
      Secure(res);
      Observe(route, 200, 0);
    });
  }

  void Routes() {
    http.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain");
      Observe("/healthz", 200, 0);
    });
    http.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
      if (draining) {
        res.status = 503;
        res.set_content("shutting down\n", "text/plain");
        Observe("/readyz", res.status, 0);
        return;
      }
      const bool catalog = Serving(catalog_channel.get());
      const bool estimator = Serving(estimator_channel.get());
      res.status = catalog && estimator ? 200 : 503;
      res.set_content(absl::StrCat("catalog ", catalog ? "ready" : "not ready", "\nestimator ",
                                   estimator ? "ready" : "not ready", "\n"),
                      "text/plain");
      Observe("/readyz", res.status, 0);
    });
    Static("/static/site.css", kSiteCss, "text/css; charset=utf-8");
    Static("/static/site.js", kSiteJs, "text/javascript; charset=utf-8");
    Static("/favicon.ico", kIconSvg, "image/svg+xml");
    http.Get("/", PageRoute("/", [this](const httplib::Request&) { return HomePage(clients); }));
    http.Get(R"(/models/([^/]+))", PageRoute("/models/{id}", [this](const httplib::Request& req) {
               return ModelPage(clients, req.matches[1], req.params);
             }));
    http.Get(R"(/hardware/([^/]+))",
             PageRoute("/hardware/{id}", [this](const httplib::Request& req) {
               return HardwarePage(clients, req.matches[1], req.params);
             }));
    http.Get("/plan", PageRoute("/plan", [this](const httplib::Request& req) {
               return PlanPage(clients, req.params);
             }));
    http.Get("/search", PageRoute("/search", [this](const httplib::Request& req) {
               return SearchPage(clients, req.params);
             }));
    auto api_handler = [this](const httplib::Request& req, httplib::Response& res) {
      Api(req, res);
    };
    http.Get(R"(/v1/.*)", api_handler);
    http.Post(R"(/v1/.*)", api_handler);
    http.Put(R"(/v1/.*)", api_handler);
    http.Patch(R"(/v1/.*)", api_handler);
    http.Delete(R"(/v1/.*)", api_handler);
    http.Get(R"(.*)", PageRoute("unmatched",
                                [](const httplib::Request& req) { return NoSuchPage(req.path); }));
  }
};

WebServer::WebServer(WebOptions options, std::shared_ptr<prometheus::Registry> registry)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->registry = std::move(registry);
  impl_->requests = &prometheus::BuildCounter()
                         .Name("modelatlas_web_requests_total")
                         .Help("HTTP requests by route pattern and status code")
                         .Register(*impl_->registry);
  impl_->durations = &prometheus::BuildHistogram()
                          .Name("modelatlas_web_request_duration_seconds")
                          .Help("HTTP request duration by route pattern, seconds")
                          .Register(*impl_->registry);
}

WebServer::~WebServer() { Stop(); }

absl::Status WebServer::Start() {
  Impl& s = *impl_;
  const grpc::ChannelArguments args = BalancedChannelArguments();
  s.catalog_channel = grpc::CreateCustomChannel(ChannelTarget(s.options.catalog_address),
                                                grpc::InsecureChannelCredentials(), args);
  s.estimator_channel = grpc::CreateCustomChannel(ChannelTarget(s.options.estimator_address),
                                                  grpc::InsecureChannelCredentials(), args);
  s.clients.catalog = catalog::v1::CatalogService::NewStub(s.catalog_channel);
  s.clients.estimator = estimator::v1::EstimatorService::NewStub(s.estimator_channel);
  s.clients.timeout_ms = s.options.call_timeout_ms;
  auto api = JsonApi::Create(
      {{Service(catalog::v1::CatalogService::service_full_name()), s.catalog_channel},
       {Service(estimator::v1::EstimatorService::service_full_name()), s.estimator_channel}});
  if (!api.ok()) return api.status();
  s.api = *std::move(api);
  s.http.set_payload_max_length(kMaxRequestBytes);  // the services' own request limit
  s.Routes();
  const std::string& address = s.options.http_address;
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bad --http_address \"", address, "\""));
  }
  std::string host = address.substr(0, colon);
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) {
    host = host.substr(1, host.size() - 2);
  }
  s.port =
      port == 0 ? s.http.bind_to_any_port(host) : (s.http.bind_to_port(host, port) ? port : -1);
  if (s.port <= 0) return absl::UnavailableError(absl::StrCat("cannot listen on ", address));
  s.thread = std::thread([&s] { s.http.listen_after_bind(); });
  return absl::OkStatus();
}

int WebServer::http_port() const { return impl_->port; }

void WebServer::Drain() { impl_->draining = true; }

void WebServer::Stop() {
  if (impl_->thread.joinable()) {
    impl_->http.stop();
    impl_->thread.join();
  }
}

}  // namespace modelatlas::web
