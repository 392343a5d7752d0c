#include "web/api.h"

#include <grpcpp/generic/generic_stub.h>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "google/protobuf/util/json_util.h"

namespace modelatlas::web {
namespace {

void* Tag(intptr_t n) { return reinterpret_cast<void*>(n); }

bool Step(grpc::CompletionQueue* cq) {
  void* tag = nullptr;
  bool ok = false;
  return cq->Next(&tag, &ok) && ok;
}

}  // namespace

grpc::Status GenericCall(grpc::Channel* channel, const std::string& grpc_path,
                         const std::string& request, int timeout_ms,
                         std::vector<std::string>* responses) {
  grpc::GenericStub stub(std::shared_ptr<grpc::Channel>(channel, [](grpc::Channel*) {}));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  grpc::CompletionQueue cq;
  auto call = stub.PrepareCall(&context, grpc_path, &cq);
  grpc::Status status;
  call->StartCall(Tag(1));
  if (Step(&cq)) {
    grpc::Slice slice(request);
    grpc::ByteBuffer buffer(&slice, 1);
    call->WriteLast(buffer, grpc::WriteOptions(), Tag(2));
    if (Step(&cq)) {
      for (;;) {
        grpc::ByteBuffer in;
        call->Read(&in, Tag(3));
        if (!Step(&cq)) break;
        std::vector<grpc::Slice> slices;
        std::string bytes;
        if (in.Dump(&slices).ok()) {
          for (const auto& s : slices)
            bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
        }
        responses->push_back(std::move(bytes));
      }
    }
  }
  call->Finish(&status, Tag(4));
  Step(&cq);
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

absl::StatusOr<std::unique_ptr<JsonApi>> JsonApi::Create(std::vector<ApiBackend> backends) {
  auto api = std::unique_ptr<JsonApi>(new JsonApi());
  for (size_t i = 0; i < backends.size(); ++i) {
    auto routes = RoutesOf(*backends[i].service, static_cast<int>(i));
    if (!routes.ok()) return routes.status();
    api->routes_.insert(api->routes_.end(), routes->begin(), routes->end());
  }
  OrderRoutes(&api->routes_);
  api->backends_ = std::move(backends);
  return api;
}

ApiReply JsonApi::Handle(const std::string& http_method, const std::string& path,
                         const QueryParams& query, const std::string& body) const {
  const ApiRoute* found = nullptr;
  bool other_method = false;
  std::map<std::string, std::string> vars;
  for (const ApiRoute& route : routes_) {
    auto bound = route.path.Match(path);
    if (!bound) continue;
    if (route.http_method != http_method) {
      other_method = true;
      continue;
    }
    found = &route;
    vars = *std::move(bound);
    break;
  }
  if (found == nullptr) {
    if (other_method) {
      return {405,
              ErrorBody(
                  grpc::Status(grpc::UNIMPLEMENTED, absl::StrCat(http_method, " is not mapped for ",
                                                                 path, " (writes are gRPC only)")),
                  405),
              "unmatched"};
    }
    return {404, ErrorBody(grpc::Status(grpc::NOT_FOUND, absl::StrCat("no API method at ", path))),
            "unmatched"};
  }
  auto* factory = google::protobuf::MessageFactory::generated_factory();
  std::unique_ptr<google::protobuf::Message> request(
      factory->GetPrototype(found->method->input_type())->New());
  const std::string route_label = found->http_method + " " + found->path.text();
  if (absl::Status s = BindRequest(*found, vars, query, body, request.get()); !s.ok()) {
    const grpc::Status g = ToGrpcStatus(s);
    return {HttpStatusOf(g.error_code()), ErrorBody(g), route_label};
  }
  std::vector<std::string> responses;
  const grpc::Status status = GenericCall(backends_[found->backend].channel.get(), found->grpc_path,
                                          request->SerializeAsString(), 30000, &responses);
  if (!status.ok()) return {HttpStatusOf(status.error_code()), ErrorBody(status), route_label};
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  std::string out;
  const bool stream = found->method->server_streaming();
  if (stream) out = "[";
  for (size_t i = 0; i < responses.size(); ++i) {
    std::unique_ptr<google::protobuf::Message> message(
        factory->GetPrototype(found->method->output_type())->New());
    if (!message->ParseFromString(responses[i])) {
      return {502, ErrorBody(grpc::Status(grpc::INTERNAL, "unreadable response")), route_label};
    }
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(*message, &json, print);
    if (i > 0) out += ",";
    out += json;
  }
  if (stream) out += "]";
  out += "\n";
  return {200, std::move(out), route_label};
}

}  // namespace modelatlas::web
