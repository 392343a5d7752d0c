// The HTTP/JSON mapping of the gRPC API, read once from the services'
// `google.api.http` method options: each annotated method becomes a route
// (HTTP method + path template); a request binds path variables, the query
// string and the body to the method's request message by field name.
// Methods without an annotation have no route: writes stay gRPC-only.
#pragma once

#include <grpcpp/support/status.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "web/path_template.h"

namespace modelatlas::web {

struct ApiRoute {
  std::string http_method;  // "GET", "POST", "PUT", "DELETE", "PATCH" or a custom kind
  PathTemplate path;
  std::string body;  // "" (no body), "*" (every field not in the path) or a field name
  const google::protobuf::MethodDescriptor* method = nullptr;
  std::string grpc_path;  // "/modelatlas.catalog.v1.CatalogService/GetModel"
  int backend = 0;        // index of the service's channel
};

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// Every route of `service` (additional_bindings included), tagged with
// `backend`. INVALID_ARGUMENT for a bad template, a body naming no field or
// an annotated client-streaming method.
absl::StatusOr<std::vector<ApiRoute>> RoutesOf(const google::protobuf::ServiceDescriptor& service,
                                               int backend);

// Sorts routes so that the most specific template matches first.
void OrderRoutes(std::vector<ApiRoute>* routes);

// Fills `request` (of route.method's input type): the body first (JSON,
// protobuf mapping, unknown fields refused), then query parameters (when
// the body is not "*"; dotted field paths, repeated fields take every
// occurrence, enums by name or number), then path variables.
// INVALID_ARGUMENT with a field violation per bad input.
absl::Status BindRequest(const ApiRoute& route, const std::map<std::string, std::string>& path_vars,
                         const QueryParams& query, const std::string& body,
                         google::protobuf::Message* request);

// Sets one field (by dotted path of proto or JSON names) from text.
absl::Status SetFieldFromText(google::protobuf::Message* message, const std::string& field_path,
                              const std::string& value);

// HTTP status of a gRPC code (google.rpc.Code's documented mapping).
int HttpStatusOf(grpc::StatusCode code);

// AIP-193 body: {"error": {"code", "message", "status", "details"}}, the
// details being the google.rpc.Status details the status carries. `code`
// is the HTTP status (0 = the one the gRPC code maps to).
std::string ErrorBody(const grpc::Status& status, int code = 0);

// A JSON string literal.
std::string JsonQuote(const std::string& text);

}  // namespace modelatlas::web
