#include "common/server/request_parsing.h"

#include <grpcpp/impl/codegen/server_callback_handlers.h>
#include <grpcpp/support/message_allocator.h>

#include <cstdlib>
#include <list>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/server/logging.h"
#include "common/status/grpc_status.h"

namespace modelatlas {
namespace {

using grpc::internal::MethodHandler;
using grpc::internal::RpcMethod;

// A server-streaming call refused before it starts.
class RefusedWrite : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  explicit RefusedWrite(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

// Delegates to the service's own handler; answers INVALID_ARGUMENT itself
// when the request did not deserialize (where gRPC's handler would answer
// UNIMPLEMENTED).
class GuardedHandler : public MethodHandler {
 public:
  GuardedHandler(MethodHandler* inner, RpcMethod::RpcType type, const std::string& request_type)
      : inner_(inner),
        type_(type),
        refusal_(ToGrpcStatus(absl::InvalidArgumentError(
            absl::StrCat("request: not a valid ", request_type,
                         " (the bytes do not parse as one; is the client built from the same "
                         "proto?)")))),
        refuse_unary_([this](grpc::CallbackServerContext* context, const grpc::ByteBuffer*,
                             grpc::ByteBuffer*) {
          grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
          reactor->Finish(refusal_);
          return reactor;
        }),
        refuse_stream_([this](grpc::CallbackServerContext*, const grpc::ByteBuffer*) {
          return new RefusedWrite(refusal_);
        }) {}

  void* Deserialize(grpc_call* call, grpc_byte_buffer* request, grpc::Status* status,
                    void** handler_data) override {
    void* parsed = inner_->Deserialize(call, request, status, handler_data);
    if (!status->ok() && type_ == RpcMethod::NORMAL_RPC && *handler_data != nullptr) {
      // CallbackUnaryHandler left its request and response (the request
      // perhaps half parsed, holding heap memory) in a MessageHolder in the
      // call's arena; its own path destroys them when the call ends
      // (DefaultMessageHolder::Release runs the destructor). The refusal
      // below does not hand them on, so they are destroyed here. The
      // holder's only base is RpcAllocatorState, whose destructor is virtual.
      static_cast<grpc::RpcAllocatorState*>(*handler_data)->~RpcAllocatorState();
      *handler_data = nullptr;
    }
    return parsed;
  }

  void RunHandler(const HandlerParameter& param) override {
    if (param.status.ok()) {
      inner_->RunHandler(param);
      return;
    }
    grpc::Status ok;
    void* data = nullptr;
    switch (type_) {
      case RpcMethod::NORMAL_RPC: {
        // A request holder of the refusal's own (ByteBuffer) types.
        void* request = refuse_unary_.Deserialize(param.call->call(), nullptr, &ok, &data);
        refuse_unary_.RunHandler(HandlerParameter(param.call, param.server_context, request, ok,
                                                  data, param.call_requester));
        return;
      }
      case RpcMethod::SERVER_STREAMING: {
        void* request = refuse_stream_.Deserialize(param.call->call(), nullptr, &ok, &data);
        refuse_stream_.RunHandler(HandlerParameter(param.call, param.server_context, request, ok,
                                                   data, param.call_requester));
        return;
      }
      default:  // streamed requests are not deserialized before the handler
        inner_->RunHandler(param);
    }
  }

 private:
  MethodHandler* inner_;
  RpcMethod::RpcType type_;
  grpc::Status refusal_;
  grpc::internal::CallbackUnaryHandler<grpc::ByteBuffer, grpc::ByteBuffer> refuse_unary_;
  grpc::internal::CallbackServerStreamingHandler<grpc::ByteBuffer, grpc::ByteBuffer> refuse_stream_;
};

class GuardedService : public grpc::Service {
 public:
  GuardedService(grpc::Service* service, const google::protobuf::ServiceDescriptor& descriptor) {
    // GetHandler is a protected member of grpc::Service. Named through this
    // class, its address has type MethodHandler* (grpc::Service::*)(int),
    // which applies to the wrapped service ([class.protected] checks the
    // class named in the pointer to member, not the object it is used on).
    MethodHandler* (grpc::Service::*handler_of)(int) = &GuardedService::GetHandler;
    // Generated services add their methods in the order of the descriptor's.
    for (int i = 0; i < descriptor.method_count(); ++i) {
      const google::protobuf::MethodDescriptor& method = *descriptor.method(i);
      MethodHandler* inner = (service->*handler_of)(i);
      if (inner == nullptr) {
        MA_LOG_ERROR("%s is not a callback method: cannot guard its request parsing",
                     method.full_name());
        std::abort();
      }
      const RpcMethod::RpcType type =
          method.client_streaming()
              ? (method.server_streaming() ? RpcMethod::BIDI_STREAMING
                                           : RpcMethod::CLIENT_STREAMING)
              : (method.server_streaming() ? RpcMethod::SERVER_STREAMING : RpcMethod::NORMAL_RPC);
      // RpcMethod keeps the pointer: the names live as long as the service.
      const std::string& name =
          names_.emplace_back(absl::StrCat("/", descriptor.full_name(), "/", method.name()));
      AddMethod(new grpc::internal::RpcServiceMethod(name.c_str(), type, nullptr));
      MarkMethodCallback(i, new GuardedHandler(inner, type, method.input_type()->full_name()));
    }
  }

 private:
  std::list<std::string> names_;
};

}  // namespace

std::unique_ptr<grpc::Service> GuardRequestParsing(
    grpc::Service* service, const google::protobuf::ServiceDescriptor& descriptor) {
  return std::make_unique<GuardedService>(service, descriptor);
}

}  // namespace modelatlas
