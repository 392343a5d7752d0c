#include "common/status/grpc_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/status/errors.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace modelatlas {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const auto code = static_cast<grpc::StatusCode>(status.code());
  // Whatever the message quotes, the status stays far below the 8 KiB of
  // metadata a peer accepts (else the caller sees RESOURCE_EXHAUSTED
  // "metadata size exceeds limit" instead of this status), and valid UTF-8.
  constexpr size_t kMaxMessageBytes = 1024;
  constexpr size_t kMaxDetailBytes = 256;
  const std::string message = QuoteInput(status.message(), kMaxMessageBytes);

  google::rpc::Status rpc_status;
  rpc_status.set_code(static_cast<int>(code));
  rpc_status.set_message(message);

  google::rpc::ErrorInfo info;
  std::string reason = GetReason(status);
  info.set_reason(reason.empty() ? GrpcCodeName(code) : QuoteInput(reason, kMaxDetailBytes));
  info.set_domain(std::string(kErrorDomain));
  rpc_status.add_details()->PackFrom(info);

  std::vector<FieldViolation> violations = GetFieldViolations(status);
  if (!violations.empty()) {
    google::rpc::BadRequest bad_request;
    for (const FieldViolation& v : violations) {
      auto* out = bad_request.add_field_violations();
      out->set_field(QuoteInput(v.field, kMaxDetailBytes));
      out->set_description(QuoteInput(v.description, kMaxDetailBytes));
    }
    rpc_status.add_details()->PackFrom(bad_request);
  }
  auto [resource_type, resource_name] = GetResource(status);
  if (!resource_name.empty()) {
    google::rpc::ResourceInfo resource;
    resource.set_resource_type(absl::StrCat(kErrorDomain, "/", resource_type));
    resource.set_resource_name(QuoteInput(resource_name, kMaxDetailBytes));
    resource.set_description(message);
    rpc_status.add_details()->PackFrom(resource);
  }
  return grpc::Status(code, message, rpc_status.SerializeAsString());
}

absl::Status FromGrpcStatus(const grpc::Status& status, absl::string_view context) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(context, ": ", status.error_message()));
}

const char* GrpcCodeLabel(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "Canceled";
    case grpc::StatusCode::UNKNOWN:
      return "Unknown";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "InvalidArgument";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DeadlineExceeded";
    case grpc::StatusCode::NOT_FOUND:
      return "NotFound";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "AlreadyExists";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PermissionDenied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "ResourceExhausted";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FailedPrecondition";
    case grpc::StatusCode::ABORTED:
      return "Aborted";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OutOfRange";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "Unimplemented";
    case grpc::StatusCode::INTERNAL:
      return "Internal";
    case grpc::StatusCode::UNAVAILABLE:
      return "Unavailable";
    case grpc::StatusCode::DATA_LOSS:
      return "DataLoss";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "Unauthenticated";
    default:
      return "Unknown";
  }
}

std::string GrpcCodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

}  // namespace modelatlas
