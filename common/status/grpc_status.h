// The one place where absl::Status becomes grpc::Status (and back, for the
// estimator's calls to the catalog). absl and gRPC share code numbers.
#pragma once

#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace modelatlas {

// Maps the code and message, and encodes the attached detail as a
// google.rpc.Status with ErrorInfo (always), BadRequest (field violations)
// and ResourceInfo (the resource an error is about).
grpc::Status ToGrpcStatus(const absl::Status& status);

// Maps a gRPC status from a downstream call to absl::Status, prefixing the
// message with what was called (e.g. "catalog at localhost:50051").
absl::Status FromGrpcStatus(const grpc::Status& status, absl::string_view context);

// The gRPC code's name in CamelCase as metrics label it ("OK", "NotFound").
const char* GrpcCodeLabel(grpc::StatusCode code);
// The code's name in UPPER_SNAKE_CASE ("NOT_FOUND"), the default ErrorInfo reason.
std::string GrpcCodeName(grpc::StatusCode code);

}  // namespace modelatlas
