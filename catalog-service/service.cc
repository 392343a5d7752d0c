#include "catalog-service/service.h"

#include "common/grpc_status.h"

namespace modelatlas::catalog {
namespace {

// Finishes a unary call with `result` moved into `response` or its error.
template <typename Result, typename Response>
grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* context, absl::StatusOr<Result> result,
                                Response* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (result.ok()) *response = *std::move(result);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

template <typename Record, typename Response, typename AddFn>
absl::StatusOr<Response> ToListResponse(absl::StatusOr<Page<Record>> page, AddFn add) {
  if (!page.ok()) return page.status();
  Response response;
  for (Record& record : page->records) *add(response) = std::move(record);
  response.set_next_page_token(page->next_page_token);
  response.set_catalog_revision(page->revision);
  return response;
}

}  // namespace

grpc::ServerUnaryReactor* CatalogServiceImpl::GetModel(grpc::CallbackServerContext* context,
                                                       const v1::GetModelRequest* request,
                                                       common::v1::Model* response) {
  return Reply(context, catalog_->GetModel(request->name()), response);
}

grpc::ServerUnaryReactor* CatalogServiceImpl::ListModels(grpc::CallbackServerContext* context,
                                                         const v1::ListModelsRequest* request,
                                                         v1::ListModelsResponse* response) {
  return Reply(context,
               ToListResponse<common::v1::Model, v1::ListModelsResponse>(
                   catalog_->ListModels(request->page_size(), request->page_token()),
                   [](v1::ListModelsResponse& r) { return r.add_models(); }),
               response);
}

grpc::ServerUnaryReactor* CatalogServiceImpl::GetHardware(grpc::CallbackServerContext* context,
                                                          const v1::GetHardwareRequest* request,
                                                          common::v1::Hardware* response) {
  return Reply(context, catalog_->GetHardware(request->name()), response);
}

grpc::ServerUnaryReactor* CatalogServiceImpl::ListHardware(grpc::CallbackServerContext* context,
                                                           const v1::ListHardwareRequest* request,
                                                           v1::ListHardwareResponse* response) {
  return Reply(context,
               ToListResponse<common::v1::Hardware, v1::ListHardwareResponse>(
                   catalog_->ListHardware(request->page_size(), request->page_token()),
                   [](v1::ListHardwareResponse& r) { return r.add_hardware(); }),
               response);
}

grpc::ServerUnaryReactor* CatalogServiceImpl::GetCatalogInfo(
    grpc::CallbackServerContext* context, const v1::GetCatalogInfoRequest* /*request*/,
    v1::CatalogInfo* response) {
  return Reply(context, catalog_->Info(), response);
}

}  // namespace modelatlas::catalog
