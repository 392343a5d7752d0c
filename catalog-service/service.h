// The gRPC adapter of the catalog: translates requests to Catalog calls and
// statuses to gRPC statuses, nothing more.
#pragma once

#include "catalog-service/catalog.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"

namespace modelatlas::catalog {

class CatalogServiceImpl final : public v1::CatalogService::CallbackService {
 public:
  explicit CatalogServiceImpl(Catalog* catalog) : catalog_(catalog) {}

  grpc::ServerUnaryReactor* GetModel(grpc::CallbackServerContext* context,
                                     const v1::GetModelRequest* request,
                                     common::v1::Model* response) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const v1::ListModelsRequest* request,
                                       v1::ListModelsResponse* response) override;
  grpc::ServerUnaryReactor* GetHardware(grpc::CallbackServerContext* context,
                                        const v1::GetHardwareRequest* request,
                                        common::v1::Hardware* response) override;
  grpc::ServerUnaryReactor* ListHardware(grpc::CallbackServerContext* context,
                                         const v1::ListHardwareRequest* request,
                                         v1::ListHardwareResponse* response) override;
  grpc::ServerUnaryReactor* GetCatalogInfo(grpc::CallbackServerContext* context,
                                           const v1::GetCatalogInfoRequest* request,
                                           v1::CatalogInfo* response) override;

 private:
  Catalog* catalog_;
};

}  // namespace modelatlas::catalog
