// Which model a request is about, from any source (proto ModelSource): a
// catalog name, an inline model, a Hugging Face repository (fetched here, on
// a small pool of fetch threads, never on a gRPC callback thread), or the
// header of a GGUF or safetensors file the caller read (parsed with
// common/formats, the readers the fuzzers exercise). Every resolved model
// names where its architecture and counts came from, and carries the exact
// weight bytes when the file gives them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/fetch/hf_hub.h"
#include "common/formats/gguf.h"
#include "common/formats/gguf_architecture.h"
#include "common/formats/safetensors.h"
#include "estimator-service/catalog/record_source.h"
#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/model_source.pb.h"
#include "modelatlas/estimator/v1/training.pb.h"

namespace modelatlas::estimator {

// Weights as a file stores them: the sum of its tensors' bytes.
struct ExactWeights {
  uint64_t bytes = 0;
  double parameters = 0;
  // e.g. "GGUF tensors: q4_K 3.53e9 B, q6_K 8.8e8 B, f32 2.7e5 B".
  std::string breakdown;
};

struct SourcedModel {
  // A catalog model to read (the other fields are then empty but `source`).
  std::string catalog_name;
  // A model the source described.
  std::optional<common::v1::Model> model;
  // Where the architecture and the counts came from.
  std::string source;
  // The model is a GGUF file's, which llama.cpp runs.
  bool from_gguf = false;
  // The commit sha a Hugging Face repository was read at.
  std::string revision;
  // Where the model can be seen ({hub}/{repo}/tree/{sha}); empty otherwise.
  std::string url;
  // The file's own weight bytes, when it gives them (a multimodal model's:
  // the language model's, its encoders and projectors in part_weights).
  std::optional<ExactWeights> weights;
  // Exact bytes of each encoder part ("vision_encoder", "projector",
  // "audio_encoder") from the tensors under its module's name.
  std::map<std::string, ExactWeights> part_weights;
  // True when the file's tensors could not be told apart by name: `weights`
  // then holds the encoder parts too, and they get no lines of their own.
  bool encoders_in_weights = false;
  // Parameters of the largest layer (given inline, or the largest tensor of
  // a safetensors checkpoint): with no architecture, training memory is
  // DeepSpeed's model-states estimate.
  std::optional<double> largest_layer_parameters;
};

// The Hub the estimator reaches and how many fetches run at once: set by
// the operator (estimator-service flags) before serving. Until called, the
// options come from the environment (HF_ENDPOINT, HF_TOKEN, ...).
void ConfigureHub(HfHubOptions options, int fetch_threads = 2);

// The caller's deadline, and whether the caller has gone, for fetches
// started on this thread while the scope lives (the service sets them around
// each answer). A fetch not yet started when the caller cancels is not
// started (CANCELLED); one under way stops at the deadline, or within about
// a second of the caller cancelling (libcurl's progress callback polls
// `cancelled`).
class CallDeadlineScope {
 public:
  explicit CallDeadlineScope(absl::Time deadline, std::function<bool()> cancelled = nullptr);
  ~CallDeadlineScope();
  CallDeadlineScope(const CallDeadlineScope&) = delete;
  CallDeadlineScope& operator=(const CallDeadlineScope&) = delete;

 private:
  absl::Time previous_;
  std::function<bool()> previous_cancelled_;
};

// Whether the call whose CallDeadlineScope this thread is in has been
// abandoned: CANCELLED once its caller cancelled, DEADLINE_EXCEEDED once its
// deadline passed (the message says what was being done, `what`), else OK;
// OK outside any scope. Whole-catalog loops (the runnable list, a plan over
// every accelerator, the catalog audit) ask it every kRecordsPerAbandonCheck
// records and stop, so no CPU goes to an answer nobody waits for.
absl::Status CallAbandoned(absl::string_view what);
inline constexpr int kRecordsPerAbandonCheck = 64;

// Resolves `source`; `field` prefixes field violations (e.g. "source.").
// `done` runs on this thread, except for a Hugging Face repository: then on
// a fetch thread once the fetch is over (bounded by the caller's deadline).
void ResolveModelSource(const v1::ModelSource& source, const std::string& field,
                        std::function<void(absl::StatusOr<SourcedModel>)> done);

// The parts, synchronous (tests, the fuzzers).
absl::StatusOr<SourcedModel> ModelFromGgufHeader(const v1::ModelFileHeader& file,
                                                 absl::string_view field);
absl::StatusOr<SourcedModel> ModelFromSafetensorsHeader(const v1::ModelFileHeader& file,
                                                        absl::string_view field);
absl::StatusOr<SourcedModel> ModelFromHfDescription(const HfModelDescription& description);

// The encoder part a checkpoint tensor belongs to, by its transformers
// module name ("vision_encoder", "projector", "audio_encoder"), or "" for
// the language model's.
std::string EncoderKindOfTensor(absl::string_view name);

// Where an inline config.json's architecture came from, for the answer:
// "config.json (inline)", or what a multimodal config's parts were read from.
std::string InlineConfigSource(const common::v1::Architecture& arch);

// The weights line of an answer when the file gave exact bytes.
std::string ExactWeightsArithmetic(const ExactWeights& weights);

// The training answers with a model from any source (TrainingModel.any,
// EstimateTrainingComputeRequest.source): the source is resolved, the
// request rewritten to a catalog name or an inline architecture (or, for
// compute, a parameter count), answered by the training answers, and the
// response names the source. Other requests go straight through.
void AnswerTrainingMemoryFromAnySource(
    std::shared_ptr<RecordSource> source, const v1::EstimateTrainingMemoryRequest& request,
    std::function<void(absl::StatusOr<v1::EstimateTrainingMemoryResponse>)> done);
void AnswerPlanTrainingFromAnySource(
    std::shared_ptr<RecordSource> source, const v1::PlanTrainingRequest& request,
    std::function<void(absl::StatusOr<v1::PlanTrainingResponse>)> done);
void AnswerTrainingComputeFromAnySource(
    std::shared_ptr<RecordSource> source, const v1::EstimateTrainingComputeRequest& request,
    std::function<void(absl::StatusOr<v1::EstimateTrainingComputeResponse>)> done);

}  // namespace modelatlas::estimator
