// The estimator's client of the catalog: one channel (with grpc_client_*
// metrics), asynchronous calls that carry the caller's deadline and
// cancellation, and a readiness probe.
#pragma once

#include <grpcpp/security/credentials.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/server/grpc_metrics.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"

namespace modelatlas::estimator {

// How to reach the catalog: TLS credentials (insecure when null) and a
// bearer token for catalogs whose reads are protected.
struct CatalogConnection {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  std::string token;
};

class CatalogClient {
 public:
  // `metrics` may be null (no client metrics).
  CatalogClient(std::string address, GrpcMetrics* metrics, absl::Duration default_timeout,
                CatalogConnection connection = {});

  const std::string& address() const { return address_; }
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

  // Fetches a model; `done` runs on a gRPC thread. The call inherits the
  // deadline and cancellation of `caller` (may be null) and is bounded by the
  // default timeout. Errors name the catalog: UNAVAILABLE when it cannot be
  // reached, NOT_FOUND naming the model.
  void GetModel(grpc::CallbackServerContext* caller, const std::string& name,
                std::function<void(absl::StatusOr<common::v1::Model>)> done);

  // Fetches the named hardware records (BatchGetHardware), or every record
  // when `names` is empty (ListHardware, page by page).
  void GetHardware(grpc::CallbackServerContext* caller, const std::vector<std::string>& names,
                   std::function<void(absl::StatusOr<std::vector<common::v1::Hardware>>)> done);

  // Blocking: the catalog's revision and counts, for readiness.
  absl::StatusOr<catalog::v1::CatalogInfo> GetCatalogInfo(absl::Duration timeout);

 private:
  absl::Status TranslateError(const grpc::Status& status, const std::string& model_name) const;
  std::unique_ptr<grpc::ClientContext> NewContext(grpc::CallbackServerContext* caller) const;

  std::string address_;
  absl::Duration default_timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<catalog::v1::CatalogService::Stub> stub_;
};

}  // namespace modelatlas::estimator
