#include "estimator-service/catalog/catalog_client.h"

#include <grpcpp/create_channel.h>

#include "absl/strings/str_cat.h"
#include "common/server/channels.h"
#include "common/server/security.h"
#include "common/status/errors.h"
#include "common/status/grpc_status.h"

namespace modelatlas::estimator {
namespace {

std::chrono::system_clock::time_point DeadlineAfter(absl::Duration timeout) {
  return std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout);
}

}  // namespace

CatalogClient::CatalogClient(std::string address, GrpcMetrics* metrics,
                             absl::Duration default_timeout, CatalogConnection connection)
    : address_(std::move(address)), default_timeout_(default_timeout) {
  // Every call balanced over the catalog's replicas; quick reconnects.
  grpc::ChannelArguments args = BalancedChannelArguments();
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  if (metrics != nullptr) interceptors.push_back(metrics->ClientInterceptorFactory());
  if (!connection.token.empty()) {
    interceptors.push_back(BearerTokenInterceptor(std::move(connection.token)));
  }
  channel_ = grpc::experimental::CreateCustomChannelWithInterceptors(
      ChannelTarget(address_),
      connection.credentials ? connection.credentials : grpc::InsecureChannelCredentials(), args,
      std::move(interceptors));
  stub_ = catalog::v1::CatalogService::NewStub(channel_);
}

absl::Status CatalogClient::TranslateError(const grpc::Status& status,
                                           const std::string& model_name) const {
  switch (status.error_code()) {
    case grpc::StatusCode::NOT_FOUND:
      return ResourceNotFoundError("Model", model_name);
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return WithReason(absl::UnavailableError(absl::StrCat(
                            "catalog at ", address_, " is unavailable: ", status.error_message())),
                        "CATALOG_UNAVAILABLE");
    default:
      return FromGrpcStatus(status, absl::StrCat("catalog at ", address_));
  }
}

std::unique_ptr<grpc::ClientContext> CatalogClient::NewContext(
    grpc::CallbackServerContext* caller) const {
  // Propagates the caller's deadline and cancellation (the earlier deadline wins).
  auto context = caller != nullptr ? grpc::ClientContext::FromCallbackServerContext(*caller)
                                   : std::make_unique<grpc::ClientContext>();
  context->set_deadline(DeadlineAfter(default_timeout_));
  return context;
}

void CatalogClient::GetHardware(
    grpc::CallbackServerContext* caller, const std::vector<std::string>& names,
    std::function<void(absl::StatusOr<std::vector<common::v1::Hardware>>)> done) {
  if (!names.empty()) {
    struct Call {
      std::unique_ptr<grpc::ClientContext> context;
      catalog::v1::BatchGetHardwareRequest request;
      catalog::v1::BatchGetHardwareResponse response;
      std::function<void(absl::StatusOr<std::vector<common::v1::Hardware>>)> done;
    };
    auto* call = new Call{NewContext(caller), {}, {}, std::move(done)};
    for (const std::string& name : names) call->request.add_names(name);
    stub_->async()->BatchGetHardware(
        call->context.get(), &call->request, &call->response, [this, call](grpc::Status status) {
          absl::StatusOr<std::vector<common::v1::Hardware>> result;
          if (status.ok()) {
            result = std::vector<common::v1::Hardware>(call->response.hardware().begin(),
                                                       call->response.hardware().end());
          } else if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
            result = WithReason(absl::NotFoundError(status.error_message()), "RESOURCE_NOT_FOUND");
          } else {
            result = TranslateError(status, "");
          }
          auto finish = std::move(call->done);
          delete call;  // the child context goes before the caller's call can finish
          finish(std::move(result));
        });
    return;
  }
  // Every record: pages of up to 1000, one after another.
  struct Pages : std::enable_shared_from_this<Pages> {
    CatalogClient* client;
    grpc::CallbackServerContext* caller;
    std::vector<common::v1::Hardware> records;
    std::function<void(absl::StatusOr<std::vector<common::v1::Hardware>>)> done;
    std::unique_ptr<grpc::ClientContext> context;
    catalog::v1::ListHardwareRequest request;
    catalog::v1::ListHardwareResponse response;

    void Next() {
      context = client->NewContext(caller);
      request.set_page_size(1000);
      request.set_page_token(response.next_page_token());
      response.Clear();
      auto self = shared_from_this();
      client->stub_->async()->ListHardware(
          context.get(), &request, &response, [self](grpc::Status status) {
            if (status.ok()) {
              for (auto& hw : *self->response.mutable_hardware()) {
                self->records.push_back(std::move(hw));
              }
              if (!self->response.next_page_token().empty()) return self->Next();
            }
            // The child context goes before the caller's call can finish.
            self->context.reset();
            if (!status.ok()) return self->done(self->client->TranslateError(status, ""));
            self->done(std::move(self->records));
          });
    }
  };
  auto pages = std::make_shared<Pages>();
  pages->client = this;
  pages->caller = caller;
  pages->done = std::move(done);
  pages->Next();
}

void CatalogClient::GetModel(grpc::CallbackServerContext* caller, const std::string& name,
                             std::function<void(absl::StatusOr<common::v1::Model>)> done) {
  struct Call {
    std::unique_ptr<grpc::ClientContext> context;
    catalog::v1::GetModelRequest request;
    common::v1::Model response;
    std::function<void(absl::StatusOr<common::v1::Model>)> done;
  };
  auto* call = new Call;
  call->context = NewContext(caller);
  call->request.set_name(name);
  call->done = std::move(done);
  stub_->async()->GetModel(
      call->context.get(), &call->request, &call->response, [this, call](grpc::Status status) {
        absl::StatusOr<common::v1::Model> result =
            status.ok() ? absl::StatusOr<common::v1::Model>(std::move(call->response))
                        : TranslateError(status, call->request.name());
        auto finish = std::move(call->done);
        // The child context (it propagates the caller's deadline)
        // goes before the caller's call can finish.
        delete call;
        finish(std::move(result));
      });
}

absl::StatusOr<catalog::v1::CatalogInfo> CatalogClient::GetCatalogInfo(absl::Duration timeout) {
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(timeout));
  catalog::v1::CatalogInfo info;
  grpc::Status status = stub_->GetCatalogInfo(&context, {}, &info);
  if (!status.ok()) return TranslateError(status, "");
  return info;
}

}  // namespace modelatlas::estimator
