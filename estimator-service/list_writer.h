// Server-streaming reactors: SourceWriter writes the messages a source fills
// one at a time; ListWriter is the same over a prepared list of messages.
// Both finish with the error that prevented the answer, if one did.
#pragma once

#include <grpcpp/grpcpp.h>

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/status/grpc_status.h"

namespace modelatlas::estimator {

// Writes the messages `source` fills, one at a time, into one message that
// is cleared and reused: its repeated fields keep their elements and its
// strings their buffers from one message to the next, so a long answer
// allocates (and frees) one message's worth, not one per message. Source
// has `bool Fill(Message*)`, called on a cleared message, false when done.
template <typename Message, typename Source>
class SourceWriter : public grpc::ServerWriteReactor<Message> {
 public:
  explicit SourceWriter(absl::StatusOr<Source> source) : source_(std::move(source)) {
    if (!source_.ok()) {
      this->Finish(ToGrpcStatus(source_.status()));
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
    message_.Clear();
    if (!source_->Fill(&message_)) return this->Finish(grpc::Status::OK);
    this->StartWrite(&message_);
  }
  absl::StatusOr<Source> source_;
  Message message_;
};

// A prepared list of messages as a source: each is swapped, not copied,
// into the message being written.
template <typename Message>
class PreparedMessages {
 public:
  // Implicit, so that a StatusOr<std::vector<Message>> converts.
  PreparedMessages(std::vector<Message> messages)  // NOLINT(google-explicit-constructor)
      : messages_(std::move(messages)) {}
  bool Fill(Message* message) {
    if (next_ == messages_.size()) return false;
    message->Swap(&messages_[next_++]);
    return true;
  }

 private:
  std::vector<Message> messages_;
  size_t next_ = 0;
};

// Writes a prepared list of messages one after another.
template <typename Message>
using ListWriter = SourceWriter<Message, PreparedMessages<Message>>;

}  // namespace modelatlas::estimator
