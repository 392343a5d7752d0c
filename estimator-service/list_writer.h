// A server-streaming reactor that writes a prepared list of messages one
// after another (or finishes with the error that prevented the list).
#pragma once

#include <grpcpp/grpcpp.h>

#include <vector>

#include "absl/status/statusor.h"
#include "common/grpc_status.h"

namespace modelatlas::estimator {

// Writes a prepared list of messages one after another.
template <typename Message>
class ListWriter : public grpc::ServerWriteReactor<Message> {
 public:
  explicit ListWriter(absl::StatusOr<std::vector<Message>> messages)
      : messages_(std::move(messages)) {
    if (!messages_.ok()) {
      this->Finish(ToGrpcStatus(messages_.status()));
    } else {
      Next();
    }
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return this->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
    Next();
  }
  void OnDone() override { delete this; }

 private:
  void Next() {
    if (next_ == messages_->size()) return this->Finish(grpc::Status::OK);
    this->StartWrite(&(*messages_)[next_++]);
  }
  absl::StatusOr<std::vector<Message>> messages_;
  size_t next_ = 0;
};

}  // namespace modelatlas::estimator
