#include "estimator-service/service.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "estimator-service/answers/audit.h"
#include "estimator-service/answers/catalog_view.h"
#include "estimator-service/answers/fit_matrix.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/inverse.h"
#include "estimator-service/answers/memory_answer.h"
#include "estimator-service/answers/memory_request.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/answers/plan_wire.h"
#include "estimator-service/answers/runnable.h"
#include "estimator-service/answers/training.h"
#include "estimator-service/catalog/sources.h"
#include "estimator-service/list_writer.h"
#include "estimator-service/reply_arena.h"

namespace modelatlas::estimator {
namespace {

// A message source whose first message also carries `first`'s fields (the
// stream's CatalogView).
template <typename Message, typename Source>
struct ViewOnFirst {
  Source source;
  Message first;
  bool sent = false;
  bool Fill(Message* message) {
    if (!source.Fill(message)) return false;
    if (!sent) message->MergeFrom(first);
    sent = true;
    return true;
  }
};

// The request's bytes: a view into its one slice (what a unary request
// usually is), else into a flattened copy. Kept answers are found by these
// bytes without copying them.
class RequestBytes {
 public:
  explicit RequestBytes(const grpc::ByteBuffer& buffer) {
    if (buffer.TrySingleSlice(&slice_).ok()) {
      view_ = absl::string_view(reinterpret_cast<const char*>(slice_.begin()), slice_.size());
      return;
    }
    std::vector<grpc::Slice> slices;
    if (!buffer.Dump(&slices).ok()) return;
    flat_.reserve(buffer.Length());
    for (const grpc::Slice& slice : slices) {
      flat_.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
    view_ = flat_;
  }
  RequestBytes(const RequestBytes&) = delete;
  RequestBytes& operator=(const RequestBytes&) = delete;

  absl::string_view view() const { return view_; }

 private:
  grpc::Slice slice_;
  std::string flat_;
  absl::string_view view_;
};

// Puts `count` slices into `out`: built in place and swapped in, because
// grpc::ByteBuffer (gRPC 1.51) has no move assignment: `*out = ByteBuffer(...)`
// copies the temporary (grpc_byte_buffer_copy: an allocation and a reference
// per slice) and then destroys it (grpc_byte_buffer_destroy, with an
// ExecCtx), per call (docs/BENCHMARKS.md, branch s13-shell).
void SetReply(grpc::Slice* slices, size_t count, grpc::ByteBuffer* out) {
  grpc::ByteBuffer built(slices, count);
  out->Swap(&built);
}

// A reply of a kept answer's bytes (shared, not copied) and then `tail`
// (copied into an inline slice: at most 30 bytes).
void ReplyBytes(std::shared_ptr<const std::string> body, absl::string_view tail,
                grpc::ByteBuffer* out) {
  auto* held = new std::shared_ptr<const std::string>(std::move(body));
  grpc::Slice slices[2] = {
      grpc::Slice(
          const_cast<char*>((*held)->data()), (*held)->size(),
          [](void* p) { delete static_cast<std::shared_ptr<const std::string>*>(p); }, held),
      grpc::Slice(tail.data(), tail.size())};
  SetReply(slices, tail.empty() ? 1 : 2, out);
}

// A reply of `message` serialized straight into a slice of its size, then
// `tail`: an answer that is not kept needs no string (SerializeAsString
// zero-fills its string before writing it; a plan over every accelerator is
// about 290 KB). `Message` is a protobuf message or PlanWireReply (the plan's
// cards written by hand), which offers the same two calls.
// `tail` (at most 30 bytes) is copied after the message into the same
// slice: one slice per reply, not two (docs/BENCHMARKS.md, session 15).
// A reply that can bound its size cheaply (PlanWireReply: UpperBoundBytes)
// is written in one walk into a slice of the bound, and the slice cut to what
// was written (a sub-slice: the same memory, no copy).
template <typename Message>
void ReplyMessage(const Message& message, absl::string_view tail, grpc::ByteBuffer* out) {
  if constexpr (requires { message.UpperBoundBytes(); }) {
    if (const size_t bound = message.UpperBoundBytes(); bound > 0) {
      grpc::Slice body(bound + tail.size());
      uint8_t* const begin = const_cast<uint8_t*>(body.begin());
      uint8_t* end = message.SerializeWithinBound(begin);
      if (!tail.empty()) std::memcpy(end, tail.data(), tail.size());
      grpc::Slice written = body.sub(0, static_cast<size_t>(end - begin) + tail.size());
      SetReply(&written, 1, out);
      return;
    }
  }
  const size_t size = message.ByteSizeLong();
  grpc::Slice body(size + tail.size());
  uint8_t* end = message.SerializeWithCachedSizesToArray(const_cast<uint8_t*>(body.begin()));
  if (!tail.empty()) std::memcpy(end, tail.data(), tail.size());
  SetReply(&body, 1, out);
}

// The memory answer's hand-written bytes (MemoryAnswerBytes) under
// protobuf's names, so that CachedUnary writes them as it writes a message:
// straight into the reply's slice (ReplyMessage), or kept.
class MemoryReply {
 public:
  explicit MemoryReply(const MemoryAnswer& answer) : bytes_(answer) {}
  size_t ByteSizeLong() const { return bytes_.size(); }
  uint8_t* SerializeWithCachedSizesToArray(uint8_t* target) const { return bytes_.Write(target); }
  std::string SerializeAsString() const {
    std::string out(bytes_.size(), '\0');
    bytes_.Write(reinterpret_cast<uint8_t*>(out.data()));
    return out;
  }

 private:
  MemoryAnswerBytes bytes_;
};

// The serialized catalog_view field of a `Response` (empty when no record
// was read): appended to an answer's bytes, it parses as part of it.
template <typename Response>
CatalogViewField CatalogViewBytes(const RecordSource::View& view) {
  return SerializeCatalogViewField(view, Response::kCatalogViewFieldNumber);
}

// Whether a request's model is a catalog name or described inline: answers
// that read nothing but the request and the snapshot.
template <typename Request>
bool IsCatalogOrInline(const Request& request) {
  return !request.has_source() || request.source().has_catalog_name() ||
         request.source().has_inline_model();
}

}  // namespace

std::shared_ptr<RecordSource> EstimatorServiceImpl::Records(
    grpc::CallbackServerContext* context) const {
  return std::make_shared<SnapshotThenCatalog>(snapshot_, catalog_, context);
}

template <typename Request, typename Response, typename Answer>
grpc::ServerUnaryReactor* EstimatorServiceImpl::Unary(grpc::CallbackServerContext* context,
                                                      const Request* request, Response* response,
                                                      const char* kind, Answer answer) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status busy = Admit(); !busy.ok()) {
    reactor->Finish(ToGrpcStatus(busy));
    return reactor;
  }
  // A Hugging Face fetch started by the answer stops at the caller's deadline.
  CallDeadlineScope deadline(absl::FromChrono(context->deadline()),
                             [context] { return context->IsCancelled(); });
  std::shared_ptr<RecordSource> records = Records(context);
  answer(records, *request,
         [this, reactor, response, kind, records](absl::StatusOr<Response> result) {
           if (result.ok()) {
             if (on_estimate_) on_estimate_(kind);
             *response = *std::move(result);
             // How current the records it read were (the answer's provenance).
             SetCatalogView(*records, response);
           }
           reactor->Finish(ToGrpcStatus(result.status()));
         });
  return reactor;
}

namespace {

// The view of an answer read from the snapshot at `sync` (its catalog_view).
RecordSource::View SnapshotView(const CatalogSnapshot::Sync& sync) {
  RecordSource::View view;
  view.from_snapshot = true;
  view.snapshot_age = absl::Now() - sync.last_heard;
  view.snapshot_revision = sync.revision;
  return view;
}

// The memory answer's kind (its estimates counter and kept answers): one
// literal, whose address the counter's lookup remembers (main.cc).
constexpr char kInferenceMemoryKind[] = "inference_memory";

}  // namespace

CatalogSnapshot::Sync EstimatorServiceImpl::CacheSync() const {
  const bool cache_on =
      answers_ != nullptr && answers_->capacity_bytes() > 0 && snapshot_ != nullptr;
  return cache_on ? snapshot_->sync() : CatalogSnapshot::Sync{};
}

template <typename Response>
bool EstimatorServiceImpl::ReplyKept(const char* kind, absl::string_view request_bytes,
                                     const CatalogSnapshot::Sync& sync, grpc::ByteBuffer* out) {
  // A kept answer to these exact bytes at the snapshot's revision is replied
  // before the request is parsed: only requests that parsed and read nothing
  // but themselves and the snapshot were kept, and the same bytes parse the
  // same way.
  if (!sync.loaded) return false;
  std::shared_ptr<const std::string> kept = answers_->Find(kind, request_bytes, sync.revision);
  if (kept == nullptr) return false;
  if (on_estimate_) on_estimate_(kind);
  ReplyBytes(std::move(kept), CatalogViewBytes<Response>(SnapshotView(sync)).view(), out);
  return true;
}

namespace {

// The error of request bytes that do not parse as a `Request`.
template <typename Request>
grpc::Status NotParsed() {
  return ToGrpcStatus(absl::InvalidArgumentError(
      absl::StrCat("request: not a valid ", Request::descriptor()->full_name(),
                   " (the bytes do not parse as one; is the client built from the same "
                   "proto?)")));
}

}  // namespace

template <typename Request, typename Response, typename Answer>
grpc::ServerUnaryReactor* EstimatorServiceImpl::CachedUnary(grpc::CallbackServerContext* context,
                                                            const grpc::ByteBuffer* raw,
                                                            grpc::ByteBuffer* out, const char* kind,
                                                            Answer answer) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status busy = Admit(); !busy.ok()) {
    reactor->Finish(ToGrpcStatus(busy));
    return reactor;
  }
  const RequestBytes raw_bytes(*raw);
  const CatalogSnapshot::Sync sync = CacheSync();
  if (ReplyKept<Response>(kind, raw_bytes.view(), sync, out)) {
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  // Kept alive until the answer is given (answers may finish later, after
  // a catalog read or a Hub fetch, and read the request then).
  auto request = std::make_shared<Request>();
  if (!request->ParseFromArray(raw_bytes.view().data(),
                               static_cast<int>(raw_bytes.view().size()))) {
    reactor->Finish(NotParsed<Request>());
    return reactor;
  }
  AnswerParsed<Request, Response>(context, reactor, raw_bytes.view(), sync, std::move(request), out,
                                  kind, std::move(answer));
  return reactor;
}

template <typename Request, typename Response, typename Answer>
void EstimatorServiceImpl::AnswerParsed(grpc::CallbackServerContext* context,
                                        grpc::ServerUnaryReactor* reactor,
                                        absl::string_view request_bytes,
                                        const CatalogSnapshot::Sync& sync,
                                        std::shared_ptr<const Request> request,
                                        grpc::ByteBuffer* out, const char* kind, Answer answer) {
  // Only answers that read nothing but the request and the snapshot are
  // kept (no Hub fetch, no live catalog read), for the snapshot's revision.
  const bool keepable = sync.loaded && IsCatalogOrInline(*request);
  const int64_t revision = keepable ? sync.revision : 0;
  // The request's bytes, the kept answer's key: copied only when it may be
  // kept (the answer cache on).
  std::shared_ptr<const std::string> bytes =
      keepable ? std::make_shared<const std::string>(request_bytes) : nullptr;
  // A Hugging Face fetch started by the answer stops at the caller's deadline.
  CallDeadlineScope deadline(absl::FromChrono(context->deadline()),
                             [context] { return context->IsCancelled(); });
  std::shared_ptr<RecordSource> records = Records(context);
  const Request& parsed = *request;
  // `answer` ends with the status and, when OK, the answer (on the heap or
  // an arena the answer owns: it is serialized here, not copied): a
  // `Response`, or what serializes as one (PlanWireReply).
  answer(records, parsed,
         [this, reactor, out, kind, records, request, bytes, keepable, revision](
             const absl::Status& status, const auto* result) {
           if (status.ok()) {
             if (on_estimate_) on_estimate_(kind);
             // How current the records it read were (the answer's provenance),
             // appended: a field added to serialized bytes is part of the message.
             const RecordSource::View view = records->view();
             if (keepable && view.from_snapshot && !view.read_live &&
                 view.snapshot_revision == revision) {
               auto body = std::make_shared<const std::string>(result->SerializeAsString());
               answers_->Put(kind, *bytes, revision, body);
               ReplyBytes(std::move(body), CatalogViewBytes<Response>(view).view(), out);
             } else {
               ReplyMessage(*result, CatalogViewBytes<Response>(view).view(), out);
             }
           }
           reactor->Finish(ToGrpcStatus(status));
         });
}

namespace {

// The general memory answer (any source): AnswerInferenceMemoryFigures into
// a pooled MemoryAnswer, ended by `finish` (CachedUnary's).
void AnswerMemoryFigures(std::shared_ptr<RecordSource> records,
                         const v1::EstimateInferenceMemoryRequest& parsed, auto finish) {
  // No message: the answer's figures (a pooled MemoryAnswer, whose
  // strings keep their buffers from reply to reply) are written as the
  // reply's bytes by hand, the same bytes as the message's
  // (answers/memory_answer.h; docs/BENCHMARKS.md, branch s12-estimate).
  std::shared_ptr<MemoryAnswer> answer = PooledForReply<MemoryAnswer>();
  MemoryAnswer* into = answer.get();
  AnswerInferenceMemoryFigures(
      std::move(records), parsed, into,
      [answer = std::move(answer), finish = std::move(finish)](const absl::Status& status) {
        if (!status.ok()) return finish(status, static_cast<const MemoryReply*>(nullptr));
        const MemoryReply reply(*answer);
        finish(status, &reply);
      });
}

}  // namespace

grpc::ServerUnaryReactor* EstimatorServiceImpl::EstimateInferenceMemory(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  using Request = v1::EstimateInferenceMemoryRequest;
  using Response = v1::EstimateInferenceMemoryResponse;
  // CachedUnary's steps, with a synchronous path for the common request (a
  // catalog model by name, answered from the loaded snapshot): everything in
  // this frame, on this thread's request message and answer, reused from
  // call to call; no shared request, record source, deadline scope or
  // callbacks, which were a fifth of the handler's instructions
  // (docs/BENCHMARKS.md, session 15).
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status busy = Admit(); !busy.ok()) {
    reactor->Finish(ToGrpcStatus(busy));
    return reactor;
  }
  const RequestBytes raw_bytes(*request);
  const CatalogSnapshot::Sync sync = CacheSync();
  if (ReplyKept<Response>(kInferenceMemoryKind, raw_bytes.view(), sync, response)) {
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  thread_local MemoryAnswer answer;
  CatalogSnapshot::Sync read;
  // The plainest request (a catalog model by name and a workload) is read
  // without its message (answers/memory_request.h).
  thread_local CatalogMemoryRequest plain;
  const bool read_plain =
      snapshot_ != nullptr && ReadCatalogMemoryRequest(raw_bytes.view(), &plain);
  if (read_plain) {
    // Its reply's bytes are written while the record is held, straight into
    // the reply's slice (then the catalog view), or into a string to keep
    // when the answer cache is on and the record was read at the revision
    // the call's lookup of kept answers used (as ReplyMemoryAnswer keeps).
    grpc::Slice slice;
    std::shared_ptr<std::string> kept;
    CatalogViewField tail;
    const auto reserve = [&](size_t bytes, const CatalogSnapshot::Sync& at) -> uint8_t* {
      tail = CatalogViewBytes<Response>(SnapshotView(at));
      if (sync.loaded && at.revision == sync.revision) {
        kept = std::make_shared<std::string>(bytes, '\0');
        return reinterpret_cast<uint8_t*>(kept->data());
      }
      slice = grpc::Slice(bytes + tail.size);
      uint8_t* body = const_cast<uint8_t*>(slice.begin());
      std::memcpy(body + bytes, tail.bytes, tail.size);
      return body;
    };
    if (std::optional<absl::Status> status = WriteCatalogMemoryFromSnapshot(
            *snapshot_, plain.model, plain.workload, plain.hypothetical, &answer, reserve)) {
      if (status->ok()) {
        if (on_estimate_) on_estimate_(kInferenceMemoryKind);
        if (kept != nullptr) {
          answers_->Put(kInferenceMemoryKind, raw_bytes.view(), sync.revision, kept);
          ReplyBytes(std::move(kept), tail.view(), response);
        } else {
          SetReply(&slice, 1, response);
        }
      }
      reactor->Finish(ToGrpcStatus(*status));
      return reactor;
    }
  }
  // Parsing clears the message first; its nested messages and strings keep
  // their memory.
  thread_local Request parsed;
  if (!parsed.ParseFromArray(raw_bytes.view().data(), static_cast<int>(raw_bytes.view().size()))) {
    reactor->Finish(NotParsed<Request>());
    return reactor;
  }
  // (A plain request the snapshot did not hold goes straight to the general
  // path: asking the snapshot again would find nothing.)
  if (snapshot_ != nullptr && !read_plain) {
    if (std::optional<absl::Status> status =
            AnswerInferenceMemoryFromSnapshot(*snapshot_, parsed, &answer, &read)) {
      if (status->ok()) ReplyMemoryAnswer(answer, read, raw_bytes.view(), sync, response);
      reactor->Finish(ToGrpcStatus(*status));
      return reactor;
    }
  }
  // Any other request (a Hub id, a live catalog read, the snapshot not
  // loaded): the general path, the request moved out of this thread's.
  AnswerParsed<Request, Response>(
      context, reactor, raw_bytes.view(), sync, std::make_shared<const Request>(std::move(parsed)),
      response, kInferenceMemoryKind, [](auto records, const Request& asked, auto finish) {
        AnswerMemoryFigures(std::move(records), asked, std::move(finish));
      });
  return reactor;
}

void EstimatorServiceImpl::ReplyMemoryAnswer(const MemoryAnswer& answer,
                                             const CatalogSnapshot::Sync& read,
                                             absl::string_view request_bytes,
                                             const CatalogSnapshot::Sync& sync,
                                             grpc::ByteBuffer* out) {
  if (on_estimate_) on_estimate_(kInferenceMemoryKind);
  // The record was read from the snapshot at `read`: the answer's
  // provenance, and kept (the cache on) when that is the revision the
  // call's lookup of kept answers used, as CachedUnary keeps.
  const CatalogViewField tail =
      CatalogViewBytes<v1::EstimateInferenceMemoryResponse>(SnapshotView(read));
  const MemoryReply reply(answer);
  if (sync.loaded && read.revision == sync.revision) {
    auto body = std::make_shared<const std::string>(reply.SerializeAsString());
    answers_->Put(kInferenceMemoryKind, request_bytes, sync.revision, body);
    ReplyBytes(std::move(body), tail.view(), out);
  } else {
    ReplyMessage(reply, tail.view(), out);
  }
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::PlanInference(grpc::CallbackServerContext* context,
                                                              const grpc::ByteBuffer* request,
                                                              grpc::ByteBuffer* response) {
  using Response = v1::PlanInferenceResponse;
  return CachedUnary<v1::PlanInferenceRequest, Response>(
      context, request, response, "plan_inference",
      [](std::shared_ptr<RecordSource> records, const v1::PlanInferenceRequest& parsed,
         auto finish) {
        // Built on an arena (ReplyArena), the plans pooled on it from reply
        // to reply; the cards are not messages: PlanWireReply writes them
        // from the plans straight into the reply's bytes, the rest of the
        // answer serialized by protobuf (answers/plan_wire.h).
        auto arena = std::make_shared<ReplyArena>();
        Response* answer = arena->Create<Response>();
        auto* cards = google::protobuf::Arena::Create<PlanWireCards>(arena->arena());
        auto* reply = google::protobuf::Arena::Create<PlanWireReply>(arena->arena(), answer, cards);
        AnswerPlanInferenceInto(
            std::move(records), parsed, answer, cards,
            [arena = std::move(arena), reply, finish = std::move(finish)](
                const absl::Status& status) { finish(status, status.ok() ? reply : nullptr); });
      });
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::CountParameters(
    grpc::CallbackServerContext* context, const v1::CountParametersRequest* request,
    v1::CountParametersResponse* response) {
  return Unary(context, request, response, "count_parameters", AnswerCountParameters);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::FindMaxContext(
    grpc::CallbackServerContext* context, const v1::FindMaxContextRequest* request,
    v1::InverseAnswer* response) {
  return Unary(context, request, response, "max_context", AnswerFindMaxContext);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::FindMaxBatch(grpc::CallbackServerContext* context,
                                                             const v1::FindMaxBatchRequest* request,
                                                             v1::InverseAnswer* response) {
  return Unary(context, request, response, "max_batch", AnswerFindMaxBatch);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::FindBestWeightFormat(
    grpc::CallbackServerContext* context, const v1::FindBestWeightFormatRequest* request,
    v1::InverseAnswer* response) {
  return Unary(context, request, response, "best_weight_format", AnswerFindBestWeightFormat);
}

grpc::ServerWriteReactor<v1::ListRunnableModelsResponse>* EstimatorServiceImpl::ListRunnableModels(
    grpc::CallbackServerContext* context, const v1::ListRunnableModelsRequest* request) {
  using Writer = SourceWriter<v1::ListRunnableModelsResponse,
                              ViewOnFirst<v1::ListRunnableModelsResponse, RunnableRows>>;
  if (absl::Status busy = Admit(); !busy.ok()) return new Writer(busy);
  // The walk over every model stops once the caller has gone or its
  // deadline has passed (CallAbandoned).
  CallDeadlineScope deadline(absl::FromChrono(context->deadline()),
                             [context] { return context->IsCancelled(); });
  // Whole-catalog answers need the snapshot: the builder reads it
  // synchronously (hardware included), so the writer starts with the rows.
  absl::StatusOr<RunnableRows> runnable = absl::UnavailableError("no answer");
  auto records = std::make_shared<SnapshotRecords>(snapshot_, catalog_->address());
  AnswerRunnableModels(records, *request, [&runnable](absl::StatusOr<RunnableRows> rows) {
    runnable = std::move(rows);
  });
  if (!runnable.ok()) return new Writer(runnable.status());
  if (on_estimate_) on_estimate_("runnable_models");
  ViewOnFirst<v1::ListRunnableModelsResponse, RunnableRows> rows{*std::move(runnable)};
  SetCatalogView(*records, &rows.first);
  return new Writer(std::move(rows));
}

grpc::ServerWriteReactor<v1::StreamFitMatrixResponse>* EstimatorServiceImpl::StreamFitMatrix(
    grpc::CallbackServerContext* context, const v1::StreamFitMatrixRequest* request) {
  using Writer = SourceWriter<v1::StreamFitMatrixResponse,
                              ViewOnFirst<v1::StreamFitMatrixResponse, FitMatrixCells>>;
  if (absl::Status busy = AdmitStream(context); !busy.ok()) return new Writer(busy);
  // As ListRunnableModels: the walk over every model stops once the caller
  // has gone or its deadline has passed; the models are sized from the
  // snapshot here, the cells computed as the stream is written.
  CallDeadlineScope deadline(absl::FromChrono(context->deadline()),
                             [context] { return context->IsCancelled(); });
  absl::StatusOr<FitMatrixCells> matrix = absl::UnavailableError("no answer");
  auto records = std::make_shared<SnapshotRecords>(snapshot_, catalog_->address());
  AnswerFitMatrix(records, *request,
                  [&matrix](absl::StatusOr<FitMatrixCells> cells) { matrix = std::move(cells); });
  if (!matrix.ok()) return new Writer(matrix.status());
  if (on_estimate_) on_estimate_("fit_matrix");
  ViewOnFirst<v1::StreamFitMatrixResponse, FitMatrixCells> cells{*std::move(matrix)};
  SetCatalogView(*records, &cells.first);
  return new Writer(std::move(cells));
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::EstimateTrainingCompute(
    grpc::CallbackServerContext* context, const v1::EstimateTrainingComputeRequest* request,
    v1::EstimateTrainingComputeResponse* response) {
  return Unary(context, request, response, "training_compute", AnswerTrainingComputeFromAnySource);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::EstimateTrainingMemory(
    grpc::CallbackServerContext* context, const v1::EstimateTrainingMemoryRequest* request,
    v1::EstimateTrainingMemoryResponse* response) {
  return Unary(context, request, response, "training_memory", AnswerTrainingMemoryFromAnySource);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::PlanTraining(grpc::CallbackServerContext* context,
                                                             const v1::PlanTrainingRequest* request,
                                                             v1::PlanTrainingResponse* response) {
  return Unary(context, request, response, "plan_training", AnswerPlanTrainingFromAnySource);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::AuditModel(grpc::CallbackServerContext* context,
                                                           const v1::AuditModelRequest* request,
                                                           v1::AuditModelResponse* response) {
  return Unary(context, request, response, "audit_model", AnswerAuditModel);
}

grpc::ServerWriteReactor<v1::AuditCatalogResponse>* EstimatorServiceImpl::AuditCatalog(
    grpc::CallbackServerContext* context, const v1::AuditCatalogRequest* request) {
  using Writer = ListWriter<v1::AuditCatalogResponse>;
  if (absl::Status busy = Admit(); !busy.ok()) return new Writer(busy);
  CallDeadlineScope deadline(absl::FromChrono(context->deadline()),
                             [context] { return context->IsCancelled(); });
  absl::StatusOr<std::vector<v1::AuditCatalogResponse>> audit = absl::UnavailableError("no answer");
  auto records = std::make_shared<SnapshotRecords>(snapshot_, catalog_->address());
  AnswerAuditCatalog(records, *request,
                     [&audit](absl::StatusOr<std::vector<v1::AuditCatalogResponse>> out) {
                       audit = std::move(out);
                     });
  if (audit.ok() && on_estimate_) on_estimate_("audit_catalog");
  if (audit.ok() && !audit->empty()) SetCatalogView(*records, &audit->front());
  return new Writer(std::move(audit));
}

}  // namespace modelatlas::estimator
