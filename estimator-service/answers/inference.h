// The inference answers, from request to response: validation, the records
// (through a RecordSource), the workload resolved once, the one sizing
// (core SizeInference), the plans, and the protos. No gRPC, no reactors:
// tested with an in-memory record source.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "estimator-service/answers/memory_answer.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/answers/records.h"
#include "estimator-service/catalog/record_source.h"
#include "estimator-service/catalog/snapshot.h"
#include "estimator-service/core/number_format.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {

// The cards of a plan kept for the wire (answers/plan_wire.h).
struct PlanWireCards;

template <typename Response>
using AnswerDone = std::function<void(absl::StatusOr<Response>)>;
// The end of an answer written into a message the caller owns (which may
// live on a protobuf Arena): OK when the message holds the answer.
using StatusDone = std::function<void(const absl::Status&)>;

// What is served next to the model: LoRA adapters and a draft model for
// speculative decoding (sized beforehand with the same workload).
struct ServingExtras {
  const v1::LoraAdapter* lora = nullptr;
  // The draft's lines ("draft_weights", "draft_kv_cache") and their bytes.
  std::vector<v1::EstimateLine> draft_lines;
  double draft_weight_bytes = 0;
  double draft_kv_cache_bytes = 0;
};

// The memory answer for `model` (a catalog record or an inline model turned
// into one); `sourced` (optional) names its source and gives exact weights;
// `architecture_check` (optional) is the record's ValidateModelArchitecture
// with the prefix "architecture", made once by the snapshot (null: check it).
absl::StatusOr<v1::EstimateInferenceMemoryResponse> EstimateMemoryForModel(
    const common::v1::Model& model, const v1::EstimateInferenceMemoryRequest& request,
    const SourcedModel* sourced = nullptr, const ServingExtras* extras = nullptr,
    const absl::Status* architecture_check = nullptr);
// The same answer written into `response` (empty; on the heap or an Arena:
// the service builds the computed answer on the reply's arena). On an error
// `response` holds a partial answer and must not be replied.
absl::Status EstimateMemoryForModelInto(v1::EstimateInferenceMemoryResponse* response,
                                        const common::v1::Model& model,
                                        const v1::EstimateInferenceMemoryRequest& request,
                                        const SourcedModel* sourced = nullptr,
                                        const ServingExtras* extras = nullptr,
                                        const absl::Status* architecture_check = nullptr);

// The same answer as plain figures into `answer` (empty: MemoryAnswer::Clear),
// for the service's hand-written reply (MemoryAnswerBytes). `resolved`, when
// given, is ResolveWorkload(request.workload()) already made (the request's
// validation makes it), not made again.
absl::Status EstimateMemoryForModelInto(MemoryAnswer* answer, const common::v1::Model& model,
                                        const v1::EstimateInferenceMemoryRequest& request,
                                        const SourcedModel* sourced = nullptr,
                                        const ServingExtras* extras = nullptr,
                                        const absl::Status* architecture_check = nullptr,
                                        const ResolvedWorkload* resolved = nullptr);

// A multimodal model's encoder or projector in the weights: bits per weight
// of the workload's weight format when the caller chose a plain format,
// else 16: weight-only quantization leaves encoders alone, and a published
// checkpoint's quantization covers its language model (quantization
// recipes leave vision towers in 16 bits: llm-compressor's examples ignore
// "re:visual.*"; Kimi K2.5 stores its tower in bf16 beside INT4 experts);
// and the part's bytes at those bits, whole bytes. The memory answer's
// lines and the fit matrix both use it.
double EncoderPartBitsPerWeight(const ResolvedWorkload& workload);
int64_t EncoderPartWeightBytes(double parameters, const ResolvedWorkload& workload);

// LoRA adapter parameters for `architecture`: rank x (in + out) per adapted
// projection per layer, with the arithmetic; INVALID_ARGUMENT naming the
// field (under "lora.") otherwise.
absl::StatusOr<std::pair<double, std::string>> LoraParameters(
    const v1::LoraAdapter& lora, const common::v1::Architecture& architecture);

// EstimateInferenceMemory: validates, reads the model, estimates. `request`
// must outlive `done`.
void AnswerInferenceMemory(std::shared_ptr<RecordSource> source,
                           const v1::EstimateInferenceMemoryRequest& request,
                           AnswerDone<v1::EstimateInferenceMemoryResponse> done);
// The same answer written into `response` (empty), which must outlive
// `done`, as must `request`; `done` gets OK when `response` holds the answer.
void AnswerInferenceMemoryInto(std::shared_ptr<RecordSource> source,
                               const v1::EstimateInferenceMemoryRequest& request,
                               v1::EstimateInferenceMemoryResponse* response, StatusDone done);

// The same answer as plain figures into `answer` (cleared first, its buffers
// reused), which must outlive `done`, as must `request`: the computed
// EstimateInferenceMemory writes the reply's bytes from it by hand
// (MemoryAnswerBytes, answers/memory_answer.h), with no message between.
void AnswerInferenceMemoryFigures(std::shared_ptr<RecordSource> source,
                                  const v1::EstimateInferenceMemoryRequest& request,
                                  MemoryAnswer* answer, StatusDone done);

// The same answer in the caller's frame, for the service's synchronous path
// (issue 22 point 1; docs/BENCHMARKS.md, session 15), when `request` needs
// nothing but a record of the loaded `snapshot`: a catalog model by name
// (model or source.catalog_name), no LoRA and no draft model. Then the
// status AnswerInferenceMemoryFigures would give (a bad request's included),
// with `answer` (cleared first) holding the answer when OK and `*read` the
// snapshot's state the record was read at (its revision is the answer's
// catalog_revision). nullopt when it cannot (another source, the snapshot
// not loaded or without the model): the caller answers through
// AnswerInferenceMemoryFigures, which reaches the catalog.
std::optional<absl::Status> AnswerInferenceMemoryFromSnapshot(
    const CatalogSnapshot& snapshot, const v1::EstimateInferenceMemoryRequest& request,
    MemoryAnswer* answer, CatalogSnapshot::Sync* read);

// The same for a request read without its message (ReadCatalogMemoryRequest,
// answers/memory_request.h): the catalog model `name`, given in `field`
// (model is checked not to be empty, as the request's validation checks
// it), `workload` and `hypothetical`. The status the request's message
// would get from AnswerInferenceMemoryFromSnapshot, or nullopt.
enum class CatalogModelField { kModel, kSourceCatalogName };
std::optional<absl::Status> AnswerCatalogMemoryFromSnapshot(const CatalogSnapshot& snapshot,
                                                            CatalogModelField field,
                                                            absl::string_view name,
                                                            const v1::InferenceWorkload& workload,
                                                            bool hypothetical, MemoryAnswer* answer,
                                                            CatalogSnapshot::Sync* read);

// Where the computed memory answer's reply goes: called once, with the
// reply's exact size in bytes and the snapshot's state the record was read
// at (the answer's provenance), while the record is held; returns where to
// write that many bytes.
using ReserveReplyBytes =
    absl::FunctionRef<uint8_t*(size_t bytes, const CatalogSnapshot::Sync& read)>;

// AnswerCatalogMemoryFromSnapshot's answer written as its reply's bytes
// (the bytes MemoryAnswerBytes writes of the answer) into `reserve`'s
// memory while the record is held, with no MemoryAnswer filled when the
// record's own fields were encoded when it was loaded (PreparedRecord's
// answer_head: an open-weights model with an architecture, no encoders),
// else through `scratch` (a MemoryAnswer reused from call to call). The
// same status as AnswerCatalogMemoryFromSnapshot, or nullopt; `reserve` is
// called only when OK.
std::optional<absl::Status> WriteCatalogMemoryFromSnapshot(const CatalogSnapshot& snapshot,
                                                           absl::string_view name,
                                                           const v1::InferenceWorkload& workload,
                                                           bool hypothetical, MemoryAnswer* scratch,
                                                           ReserveReplyBytes reserve);

// The checks of a PlanInferenceRequest (its workload included);
// INVALID_ARGUMENT naming each bad field.
absl::Status ValidatePlanRequest(const v1::PlanInferenceRequest& request);

// Plans `model` on every record of `hardware`; with offload in the request,
// `offload_host` is the host record it names (read beforehand).
absl::StatusOr<v1::PlanInferenceResponse> PlanInferenceFor(
    const common::v1::Model& model, const SharedRecords<common::v1::Hardware>& hardware,
    const v1::PlanInferenceRequest& request, const SourcedModel* sourced = nullptr,
    const ServingExtras* extras = nullptr, const common::v1::Hardware* offload_host = nullptr);
// PlanInferenceFor written into `response` (empty; on the heap or an Arena:
// a plan over every accelerator is about 1,550 strings and 258 messages, one
// allocation each off an arena). On an error `response` holds a partial
// answer and must not be replied.
absl::Status PlanInferenceInto(v1::PlanInferenceResponse* response, const common::v1::Model& model,
                               const SharedRecords<common::v1::Hardware>& hardware,
                               const v1::PlanInferenceRequest& request,
                               const SourcedModel* sourced = nullptr,
                               const ServingExtras* extras = nullptr,
                               const common::v1::Hardware* offload_host = nullptr);
// The same with the cards left in *wire (answers/plan_wire.h) instead of the
// reply's plans, for the hand serializer (PlanWireReply); `response` must be
// on an Arena (the plans are pooled on it). wire null = PlanInferenceInto.
// `architecture_check`, when given, is the record's architecture check as
// its source made it (RecordSource::UseModel); null: checked here.
absl::Status PlanInferenceInto(v1::PlanInferenceResponse* response, PlanWireCards* wire,
                               const common::v1::Model& model,
                               const SharedRecords<common::v1::Hardware>& hardware,
                               const v1::PlanInferenceRequest& request,
                               const SourcedModel* sourced = nullptr,
                               const ServingExtras* extras = nullptr,
                               const common::v1::Hardware* offload_host = nullptr,
                               const absl::Status* architecture_check = nullptr);

// PlanInference: validates, reads the model and the hardware, plans.
void AnswerPlanInference(std::shared_ptr<RecordSource> source,
                         const v1::PlanInferenceRequest& request,
                         AnswerDone<v1::PlanInferenceResponse> done);
// The same answer written into `response` (empty), which must outlive
// `done`, as must `request`; `done` gets OK when `response` holds the answer.
void AnswerPlanInferenceInto(std::shared_ptr<RecordSource> source,
                             const v1::PlanInferenceRequest& request,
                             v1::PlanInferenceResponse* response, StatusDone done);
// The same with the cards left in *wire (PlanInferenceInto above), which
// must outlive `done`: the service's reply (PlanWireReply of response and
// *wire, both on the reply's arena).
void AnswerPlanInferenceInto(std::shared_ptr<RecordSource> source,
                             const v1::PlanInferenceRequest& request,
                             v1::PlanInferenceResponse* response, PlanWireCards* wire,
                             StatusDone done);

// Counts the parameters of `architecture`.
absl::StatusOr<v1::CountParametersResponse> CountParametersOf(
    const common::v1::Architecture& architecture, const v1::CountParametersRequest& request);

// CountParameters: an architecture, a config.json or a catalog model's.
void AnswerCountParameters(std::shared_ptr<RecordSource> source,
                           const v1::CountParametersRequest& request,
                           AnswerDone<v1::CountParametersResponse> done);

// Resolves `model_source` (fetching from the Hub off this thread), then reads
// the records `wanted` names besides it; `done` gets both.
void WithSourcedModel(std::shared_ptr<RecordSource> source, const v1::ModelSource& model_source,
                      RecordsWanted wanted,
                      std::function<void(absl::StatusOr<Records>, const SourcedModel&)> done,
                      const std::string& field = "source.");

// A model described in a request, as a record; INVALID_ARGUMENT naming the
// bad fields (under "inline_model.").
absl::StatusOr<common::v1::Model> ModelFromInline(const v1::InlineModel& inline_model);

}  // namespace modelatlas::estimator
