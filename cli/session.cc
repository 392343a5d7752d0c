// Session: the channels to both services, with the TLS files and the bearer
// token the flags give, and the flags every command shares.
#include <cstdlib>
#include <iostream>

#include "absl/flags/flag.h"
#include "cli/command.h"
#include "cli/output.h"
#include "common/server/channels.h"
#include "common/server/security.h"

ABSL_FLAG(std::string, catalog, "localhost:50051", "catalog-service address (host:port)");
ABSL_FLAG(std::string, estimator, "localhost:50052", "estimator-service address (host:port)");
ABSL_FLAG(std::string, token_file, "",
          "File holding a bearer token for the catalog (the MODELATLAS_TOKEN environment "
          "variable works too)");
ABSL_FLAG(std::string, tls_ca_file, "", "PEM CA to verify the servers' certificates (TLS)");
ABSL_FLAG(std::string, tls_cert_file, "", "PEM client certificate (mutual TLS)");
ABSL_FLAG(std::string, tls_key_file, "", "PEM private key of --tls_cert_file");
ABSL_FLAG(bool, json, false,
          "Print JSON (protobuf's JSON mapping) instead of tables: one document, lists and "
          "streams as one array");
ABSL_FLAG(bool, jsonl, false,
          "Print JSON Lines: one compact JSON object per line (a list's or stream's elements)");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(10), "Deadline of each call");
ABSL_FLAG(std::string, filter, "",
          "List filter (AIP-160), e.g. 'parameters > 1e9 AND domains:\"Language\"'");
ABSL_FLAG(std::string, hardware, "",
          "plan: comma-separated hardware names or aliases (empty = every catalog record); "
          "estimate compute, plan training: the hardware of the run");

namespace modelatlas::cli {
namespace {

// A channel with the TLS files and token the flags give (exits on a bad file).
std::shared_ptr<grpc::Channel> Channel(const std::string& address) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials({absl::GetFlag(FLAGS_tls_cert_file), absl::GetFlag(FLAGS_tls_key_file),
                              absl::GetFlag(FLAGS_tls_ca_file)});
  if (!credentials.ok()) {
    std::cerr << "modelatlas: " << credentials.status().message() << "\n";
    std::exit(kExitUsage);
  }
  std::string token;
  if (const char* env = std::getenv("MODELATLAS_TOKEN"); env != nullptr) token = env;
  if (!absl::GetFlag(FLAGS_token_file).empty()) {
    absl::StatusOr<std::string> from_file =
        ReadTokenFile(absl::GetFlag(FLAGS_token_file), "token_file");
    if (!from_file.ok()) {
      std::cerr << "modelatlas: " << from_file.status().message() << "\n";
      std::exit(kExitUsage);
    }
    token = *from_file;
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  if (!token.empty()) interceptors.push_back(BearerTokenInterceptor(token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      ChannelTarget(address), *credentials, BalancedChannelArguments(), std::move(interceptors));
}

}  // namespace

Session::Session()
    : catalog_address_(absl::GetFlag(FLAGS_catalog)),
      estimator_address_(absl::GetFlag(FLAGS_estimator)),
      json_(absl::GetFlag(FLAGS_json) || absl::GetFlag(FLAGS_jsonl)),
      jsonl_(absl::GetFlag(FLAGS_jsonl)) {
  SetJsonLines(jsonl_);
}

catalog::v1::CatalogService::Stub& Session::catalog() {
  if (!catalog_stub_)
    catalog_stub_ = catalog::v1::CatalogService::NewStub(Channel(catalog_address_));
  return *catalog_stub_;
}

estimator::v1::EstimatorService::Stub& Session::estimator() {
  if (!estimator_stub_) {
    estimator_stub_ = estimator::v1::EstimatorService::NewStub(Channel(estimator_address_));
  }
  return *estimator_stub_;
}

std::unique_ptr<grpc::ClientContext> Session::NewContext() {
  return NewContext(absl::GetFlag(FLAGS_timeout));
}

std::unique_ptr<grpc::ClientContext> Session::NewContext(absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
  return context;
}

int Session::CatalogFailed(const grpc::Status& status) const {
  return CallFailed(status, "catalog-service", catalog_address_);
}

int Session::EstimatorFailed(const grpc::Status& status) const {
  return CallFailed(status, "estimator-service", estimator_address_);
}

int UsageError(absl::string_view message) {
  std::cerr << "modelatlas: " << message << "\n";
  return kExitUsage;
}

}  // namespace modelatlas::cli
