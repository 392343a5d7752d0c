// The JSON API: every annotated read and estimate method of the catalog and
// the estimator, reached over HTTP (routes from http_rule.h) and called
// through grpc::GenericStub with the serialized request.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "web/http_rule.h"

namespace modelatlas::web {

struct ApiReply {
  int http_status = 200;
  std::string body;   // JSON
  std::string route;  // the matched template (metrics label), or "unmatched"
};

// One backend: a service and the channel that reaches it.
struct ApiBackend {
  const google::protobuf::ServiceDescriptor* service = nullptr;
  std::shared_ptr<grpc::Channel> channel;
};

// Calls `grpc_path` with one serialized request and collects every response
// message (one for unary methods). Returns the call's status.
grpc::Status GenericCall(grpc::Channel* channel, const std::string& grpc_path,
                         const std::string& request, int timeout_ms,
                         std::vector<std::string>* responses);

class JsonApi {
 public:
  static absl::StatusOr<std::unique_ptr<JsonApi>> Create(std::vector<ApiBackend> backends);

  const std::vector<ApiRoute>& routes() const { return routes_; }

  // `path` is the raw (still percent-encoded) path without the query.
  ApiReply Handle(const std::string& http_method, const std::string& path, const QueryParams& query,
                  const std::string& body) const;

 private:
  std::vector<ApiBackend> backends_;
  std::vector<ApiRoute> routes_;
};

}  // namespace modelatlas::web
