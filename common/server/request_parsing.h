// Requests whose bytes do not parse as their message answer INVALID_ARGUMENT
// naming the message, on every method of a service, instead of gRPC's
// UNIMPLEMENTED.
//
// Why: gRPC 1.51's callback handlers (grpcpp/impl/codegen/
// server_callback_handlers.h, CallbackUnaryHandler::RunHandler and
// CallbackServerStreamingHandler::RunHandler) answer UNIMPLEMENTED with an
// empty message whenever the request does not deserialize, before any code
// of ours runs; a caller then believes the method does not exist.
//
// How: GuardRequestParsing() builds a grpc::Service with the same methods
// (taken from the service's descriptor, so a method added later is covered
// without code) whose handlers delegate every call to the service's own
// handler and take over only when deserialization failed. The hot path
// costs two more virtual calls per call and nothing else: the request is
// parsed once, by gRPC, as before.
//
// Client-streaming and bidirectional methods deserialize each message as it
// is read; a message that does not parse ends the reads as a half-close
// would (OnReadDone(false)), which no wrapper can tell apart. Those methods
// read raw bytes and parse them themselves (the catalog's ImportRecords).
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/service_type.h>

#include <memory>

#include "google/protobuf/descriptor.h"

namespace modelatlas {

// `service` (not owned) keeps serving the calls; register the returned
// service instead of it. Methods must be registered as callback methods
// (typed or raw).
std::unique_ptr<grpc::Service> GuardRequestParsing(
    grpc::Service* service, const google::protobuf::ServiceDescriptor& descriptor);

}  // namespace modelatlas
