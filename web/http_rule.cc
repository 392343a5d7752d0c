#include "web/http_rule.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/status/errors.h"
#include "common/status/grpc_status.h"
#include "google/api/annotations.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace modelatlas::web {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

const FieldDescriptor* FindField(const Descriptor* type, absl::string_view name) {
  const FieldDescriptor* f = type->FindFieldByName(std::string(name));
  if (f == nullptr) {
    for (int i = 0; i < type->field_count(); ++i) {
      if (type->field(i)->json_name() == name) return type->field(i);
    }
  }
  return f;
}

absl::Status AddRoute(const google::api::HttpRule& rule,
                      const google::protobuf::MethodDescriptor& method, int backend,
                      std::vector<ApiRoute>* routes) {
  ApiRoute route;
  std::string path;
  switch (rule.pattern_case()) {
    case google::api::HttpRule::kGet:
      route.http_method = "GET", path = rule.get();
      break;
    case google::api::HttpRule::kPut:
      route.http_method = "PUT", path = rule.put();
      break;
    case google::api::HttpRule::kPost:
      route.http_method = "POST", path = rule.post();
      break;
    case google::api::HttpRule::kDelete:
      route.http_method = "DELETE", path = rule.delete_();
      break;
    case google::api::HttpRule::kPatch:
      route.http_method = "PATCH", path = rule.patch();
      break;
    case google::api::HttpRule::kCustom:
      route.http_method = rule.custom().kind(), path = rule.custom().path();
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(method.full_name(), ": rule without a path"));
  }
  auto parsed = PathTemplate::Parse(path);
  if (!parsed.ok()) return parsed.status();
  route.path = *std::move(parsed);
  route.body = rule.body();
  if (!rule.response_body().empty()) {  // no rule here uses it; refuse rather than ignore
    return absl::InvalidArgumentError(
        absl::StrCat(method.full_name(), ": response_body is not supported"));
  }
  if (!route.body.empty() && route.body != "*" &&
      FindField(method.input_type(), route.body) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(method.full_name(), ": body \"", route.body, "\" names no field"));
  }
  if (method.client_streaming()) {
    return absl::InvalidArgumentError(absl::StrCat(method.full_name(), ": client streaming"));
  }
  route.method = &method;
  route.grpc_path = absl::StrCat("/", method.service()->full_name(), "/", method.name());
  route.backend = backend;
  routes->push_back(std::move(route));
  for (const google::api::HttpRule& more : rule.additional_bindings()) {
    if (absl::Status s = AddRoute(more, method, backend, routes); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// "NUMBER_FORMAT_" for NumberFormat: the prefix proto3 style gives values.
std::string EnumPrefix(const google::protobuf::EnumDescriptor& type) {
  std::string prefix;
  for (const char c : type.name()) {
    if (absl::ascii_isupper(c) && !prefix.empty()) prefix += '_';
    prefix += absl::ascii_toupper(c);
  }
  return prefix + "_";
}

}  // namespace

absl::StatusOr<std::vector<ApiRoute>> RoutesOf(const google::protobuf::ServiceDescriptor& service,
                                               int backend) {
  std::vector<ApiRoute> routes;
  for (int i = 0; i < service.method_count(); ++i) {
    const auto& method = *service.method(i);
    if (!method.options().HasExtension(google::api::http)) continue;
    const google::api::HttpRule& rule = method.options().GetExtension(google::api::http);
    if (absl::Status s = AddRoute(rule, method, backend, &routes); !s.ok()) return s;
  }
  return routes;
}

void OrderRoutes(std::vector<ApiRoute>* routes) {
  std::stable_sort(routes->begin(), routes->end(), [](const ApiRoute& a, const ApiRoute& b) {
    return a.path.literal_count() > b.path.literal_count();
  });
}

absl::Status SetFieldFromText(Message* message, const std::string& field_path,
                              const std::string& value) {
  std::vector<std::string> names = absl::StrSplit(field_path, '.');
  Message* target = message;
  for (size_t i = 0; i + 1 < names.size(); ++i) {
    const FieldDescriptor* f = FindField(target->GetDescriptor(), names[i]);
    if (f == nullptr || f->is_repeated() || f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      return InvalidFieldError(field_path, "no such field (or not a singular message)");
    }
    target = target->GetReflection()->MutableMessage(target, f);
  }
  const FieldDescriptor* f = FindField(target->GetDescriptor(), names.back());
  if (f == nullptr) return InvalidFieldError(field_path, "no such field");
  const Reflection* r = target->GetReflection();
  const bool rep = f->is_repeated();
  auto bad = [&](absl::string_view what) {
    return InvalidFieldError(field_path, absl::StrCat("\"", value, "\" is not ", what));
  };
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      rep ? r->AddString(target, f, value) : r->SetString(target, f, value);
      return absl::OkStatus();
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t v;
      if (!absl::SimpleAtoi(value, &v)) return bad("a 32-bit integer");
      rep ? r->AddInt32(target, f, v) : r->SetInt32(target, f, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t v;
      if (!absl::SimpleAtoi(value, &v)) return bad("an integer");
      rep ? r->AddInt64(target, f, v) : r->SetInt64(target, f, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v;
      if (!absl::SimpleAtoi(value, &v)) return bad("an unsigned 32-bit integer");
      rep ? r->AddUInt32(target, f, v) : r->SetUInt32(target, f, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v;
      if (!absl::SimpleAtoi(value, &v)) return bad("an unsigned integer");
      rep ? r->AddUInt64(target, f, v) : r->SetUInt64(target, f, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double v;
      if (!absl::SimpleAtod(value, &v)) return bad("a number");
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
        rep ? r->AddFloat(target, f, static_cast<float>(v))
            : r->SetFloat(target, f, static_cast<float>(v));
      } else {
        rep ? r->AddDouble(target, f, v) : r->SetDouble(target, f, v);
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      bool v;
      if (!absl::SimpleAtob(value, &v)) return bad("true or false");
      rep ? r->AddBool(target, f, v) : r->SetBool(target, f, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const auto* e = f->enum_type()->FindValueByName(absl::AsciiStrToUpper(value));
      if (e == nullptr) {  // the short form: "int8" for NUMBER_FORMAT_INT8
        e = f->enum_type()->FindValueByName(
            absl::StrCat(EnumPrefix(*f->enum_type()), absl::AsciiStrToUpper(value)));
      }
      int number;
      if (e == nullptr && absl::SimpleAtoi(value, &number)) {
        e = f->enum_type()->FindValueByNumber(number);
      }
      if (e == nullptr) return bad(absl::StrCat("a value of ", f->enum_type()->name()));
      rep ? r->AddEnum(target, f, e) : r->SetEnum(target, f, e);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return InvalidFieldError(field_path, "a message cannot be set from the query string");
  }
  return InvalidFieldError(field_path, "unsupported type");
}

absl::Status BindRequest(const ApiRoute& route, const std::map<std::string, std::string>& path_vars,
                         const QueryParams& query, const std::string& body, Message* request) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  if (!route.body.empty()) {
    Message* target = request;
    if (route.body != "*") {
      target = request->GetReflection()->MutableMessage(
          request, FindField(request->GetDescriptor(), route.body));
    }
    const std::string json = body.empty() ? "{}" : body;
    auto status = google::protobuf::util::JsonStringToMessage(json, target, options);
    if (!status.ok()) {
      return InvalidFieldError(route.body == "*" ? "body" : route.body,
                               std::string(status.message()));
    }
  } else if (!body.empty()) {
    return InvalidFieldError("body", "this method takes no body");
  }
  FieldViolations violations;
  if (route.body != "*") {
    for (const auto& [name, value] : query) {
      absl::Status s = SetFieldFromText(request, name, value);
      for (const FieldViolation& v : GetFieldViolations(s)) violations.Add(v.field, v.description);
    }
  }
  for (const auto& [name, value] : path_vars) {
    absl::Status s = SetFieldFromText(request, name, value);
    for (const FieldViolation& v : GetFieldViolations(s)) violations.Add(v.field, v.description);
  }
  return violations.empty() ? absl::OkStatus() : violations.ToStatus();
}

int HttpStatusOf(grpc::StatusCode code) {
  switch (code) {
    case grpc::OK:
      return 200;
    case grpc::CANCELLED:
      return 499;
    case grpc::INVALID_ARGUMENT:
      return 400;
    case grpc::DEADLINE_EXCEEDED:
      return 504;
    case grpc::NOT_FOUND:
      return 404;
    case grpc::ALREADY_EXISTS:
      return 409;
    case grpc::PERMISSION_DENIED:
      return 403;
    case grpc::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::FAILED_PRECONDITION:
      return 400;
    case grpc::ABORTED:
      return 409;
    case grpc::OUT_OF_RANGE:
      return 400;
    case grpc::UNIMPLEMENTED:
      return 501;
    case grpc::UNAVAILABLE:
      return 503;
    case grpc::UNAUTHENTICATED:
      return 401;
    default:
      return 500;  // UNKNOWN, INTERNAL, DATA_LOSS
  }
}

std::string JsonQuote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '<':
        out += "\\u003c";
        break;  // safe to embed anywhere
      case '>':
        out += "\\u003e";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string ErrorBody(const grpc::Status& status, int code) {
  // Links the google.rpc detail types, so that their Any can be printed.
  (void)google::rpc::BadRequest::descriptor();
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  std::string details;
  google::rpc::Status rich;
  if (!status.error_details().empty() && rich.ParseFromString(status.error_details())) {
    for (const auto& any : rich.details()) {
      std::string json;
      if (!google::protobuf::util::MessageToJsonString(any, &json, print).ok()) continue;
      if (!details.empty()) details += ",";
      details += json;
    }
  }
  return absl::StrCat("{\"error\":{\"code\":", code != 0 ? code : HttpStatusOf(status.error_code()),
                      ",\"message\":", JsonQuote(status.error_message()),
                      ",\"status\":", JsonQuote(GrpcCodeName(status.error_code())),
                      ",\"details\":[", details, "]}}\n");
}

}  // namespace modelatlas::web
