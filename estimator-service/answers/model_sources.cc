// Models from anywhere: a Hugging Face repository, a config.json, a GGUF or
// safetensors header, each turned into a catalog-shaped record with its
// source. About 680 lines: several short readers that share the record
// building and the errors that name what was read.

#include "estimator-service/answers/model_sources.h"

#include <cmath>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "common/formats/gguf_architecture.h"
#include "common/formats/hf_config.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/training.h"
#include "estimator-service/core/model_states.h"
#include "estimator-service/core/units.h"

namespace modelatlas::estimator {
namespace {

// Fetches waiting for a thread beyond this are refused (RESOURCE_EXHAUSTED).
constexpr size_t kMaxQueuedFetches = 64;

// A fixed pool of fetch threads: the Hub is blocking I/O, and gRPC's
// callback threads must not wait on it.
class FetchPool {
 public:
  explicit FetchPool(int threads) {
    for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Run(); });
  }
  ~FetchPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  bool Post(std::function<void()> work) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.size() >= kMaxQueuedFetches) return false;
      queue_.push_back(std::move(work));
    }
    wake_.notify_one();
    return true;
  }

 private:
  void Run() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

struct Hub {
  HfHubOptions options;
  std::unique_ptr<FetchPool> pool;
};

absl::Mutex hub_mu(absl::kConstInit);
Hub* hub ABSL_GUARDED_BY(hub_mu) = nullptr;

thread_local absl::Time call_deadline = absl::InfiniteFuture();
thread_local std::function<bool()> call_cancelled;

// The configured hub (from the environment until ConfigureHub runs).
Hub& CurrentHub() {
  absl::MutexLock lock(&hub_mu);
  if (hub == nullptr)
    hub = new Hub{HfHubOptions::FromEnvironment(), std::make_unique<FetchPool>(2)};
  return *hub;
}

// The source's note on BOOL tensors left out of the count (none: empty).
std::string MasksLeftOut(int64_t mask_elements) {
  if (mask_elements <= 0) return "";
  return absl::StrCat("; ", mask_elements,
                      " values of BOOL tensors (attention masks stored beside the weights) are "
                      "not counted as parameters");
}

std::string Bytes(uint64_t bytes) { return absl::StrFormat("%.4g B", static_cast<double>(bytes)); }

std::string Breakdown(absl::string_view what, const std::map<std::string, uint64_t>& bytes) {
  std::vector<std::string> parts;
  for (const auto& [type, n] : bytes) parts.push_back(absl::StrCat(type, " ", Bytes(n)));
  return absl::StrCat(what, ": ", absl::StrJoin(parts, ", "));
}

// The Hub's error, told for a caller of the estimator (the operator, not the
// caller, configures the token and the endpoint).
absl::Status HubErrorForCaller(const absl::Status& status, absl::string_view repo) {
  if (absl::IsUnauthenticated(status) || absl::IsPermissionDenied(status)) {
    return absl::Status(status.code(),
                        absl::StrCat(status.message(), " (Hugging Face repository ", repo,
                                     " is gated or private: the estimator's operator configures "
                                     "a token with --hf_token_file)"));
  }
  if (absl::IsFailedPrecondition(status)) {
    return absl::Status(status.code(), absl::StrCat(status.message(),
                                                    " (the estimator runs with --hf_offline "
                                                    "and its cache does not hold ",
                                                    repo, ")"));
  }
  return status;
}

std::string FileName(const v1::ModelFileHeader& file, absl::string_view fallback,
                     bool mmproj = false) {
  const std::string& name = mmproj ? file.mmproj_file_name() : file.file_name();
  return name.empty() ? std::string(fallback) : name;
}

using TensorTotals = std::map<std::string, std::pair<int64_t, uint64_t>>;

// Moves the bytes of the tensors under each encoder part's module out of
// `sourced->weights` into `sourced->part_weights`, when the architecture has
// parts; when some part has no tensor of its name, nothing moves and the
// weights keep them (encoders_in_weights).
void SplitEncoderParts(const TensorTotals& by_name, const common::v1::Architecture& arch,
                       absl::string_view what, SourcedModel* sourced) {
  if (arch.encoder_parts_size() == 0 || !sourced->weights.has_value()) return;
  std::map<std::string, std::pair<int64_t, uint64_t>> by_kind;
  for (const auto& [name, totals] : by_name) {
    const std::string kind = EncoderKindOfTensor(absl::StrCat(name, "."));
    if (kind.empty()) continue;
    by_kind[kind].first += totals.first;
    by_kind[kind].second += totals.second;
  }
  for (const common::v1::EncoderPart& part : arch.encoder_parts()) {
    if (!by_kind.count(part.kind())) {
      sourced->encoders_in_weights = true;
      return;
    }
  }
  ExactWeights& whole = *sourced->weights;
  uint64_t moved = 0;
  for (const auto& [kind, totals] : by_kind) {
    const auto [parameters, bytes] = totals;
    if (bytes > whole.bytes - moved) return;  // a lying header: leave the total alone
    moved += bytes;
  }
  for (const auto& [kind, totals] : by_kind) {
    const auto [parameters, bytes] = totals;
    sourced->part_weights[kind] = ExactWeights{
        bytes, static_cast<double>(parameters),
        absl::StrCat(what, " tensors of the ", kind, " (by module name) ", Bytes(bytes))};
    whole.parameters -= static_cast<double>(parameters);
  }
  whole.bytes -= moved;
  absl::StrAppend(&whole.breakdown, ", less the encoder parts' ", Bytes(moved));
}

}  // namespace

std::string InlineConfigSource(const common::v1::Architecture& arch) {
  // A multimodal config's reader says which parts it read.
  if (arch.source() == "config.json" || arch.source().empty()) return "config.json (inline)";
  return absl::StrCat(arch.source(), ", inline");
}

std::string EncoderKindOfTensor(absl::string_view name) {
  // llama.cpp's mmproj files: v.* vision tower, a.* audio tower, mm.* projector.
  if (absl::StartsWith(name, "v.")) return "vision_encoder";
  if (absl::StartsWith(name, "a.")) return "audio_encoder";
  if (absl::StartsWith(name, "mm.")) return "projector";
  // transformers: LlavaForConditionalGeneration and Gemma3 (vision_tower,
  // multi_modal_projector), Qwen2-VL (visual, visual.merger), Qwen2-Audio
  // (audio_tower, multi_modal_projector); newer versions nest them under model.
  // InternVL and H2OVL (vision_model, mlp1), Idefics3 and SmolVLM
  // (vision_model, connector), Kimi K2.5 (vision_tower, mm_projector),
  // DeepSeek-OCR (sam_model and vision_model, projector; its image_newline
  // and view_seperator vectors stay with the weights), Gemma 4
  // (vision_tower, embed_vision).
  absl::ConsumePrefix(&name, "model.");  // absl/strings/strip.h
  if (absl::StartsWith(name, "visual.merger.")) return "projector";
  if (absl::StartsWith(name, "visual.") || absl::StartsWith(name, "vision_tower.") ||
      absl::StartsWith(name, "vision_model.") || absl::StartsWith(name, "sam_model.")) {
    return "vision_encoder";
  }
  if (absl::StartsWith(name, "multi_modal_projector.") || absl::StartsWith(name, "mm_projector.") ||
      absl::StartsWith(name, "mlp1.") || absl::StartsWith(name, "connector.") ||
      absl::StartsWith(name, "projector.") || absl::StartsWith(name, "embed_vision.")) {
    return "projector";
  }
  if (absl::StartsWith(name, "audio_tower.")) return "audio_encoder";
  return "";
}

void ConfigureHub(HfHubOptions options, int fetch_threads) {
  auto* fresh = new Hub{std::move(options), std::make_unique<FetchPool>(fetch_threads)};
  absl::MutexLock lock(&hub_mu);
  // The previous hub is left alive: a fetch may still run on it (configured
  // once at startup, so at most one is left).
  hub = fresh;
}

CallDeadlineScope::CallDeadlineScope(absl::Time deadline, std::function<bool()> cancelled)
    : previous_(call_deadline), previous_cancelled_(std::move(call_cancelled)) {
  call_deadline = deadline;
  call_cancelled = std::move(cancelled);
}
CallDeadlineScope::~CallDeadlineScope() {
  call_deadline = previous_;
  call_cancelled = std::move(previous_cancelled_);
}

absl::Status CallAbandoned(absl::string_view what) {
  if (call_cancelled && call_cancelled()) {
    // IsCancelled() is also true past the deadline: say which it was.
    if (absl::Now() >= call_deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("the call's deadline passed while ", what, "; stopped there"));
    }
    return absl::CancelledError(
        absl::StrCat("the caller cancelled while ", what, "; stopped there"));
  }
  if (absl::Now() >= call_deadline) {
    return absl::DeadlineExceededError(
        absl::StrCat("the call's deadline passed while ", what, "; stopped there"));
  }
  return absl::OkStatus();
}

namespace {

// llama.cpp's multimodal projector file (mmproj, general.architecture
// "clip"; tools/mtmd/clip.cpp): its vision/audio tower (v.*, a.*) and
// projector (mm.*) tensors become encoder parts sized exactly.
absl::Status AddMmproj(const v1::ModelFileHeader& file, absl::string_view field,
                       SourcedModel* out) {
  const std::string f = absl::StrCat(field, "mmproj_header");
  absl::StatusOr<GgufParseResult> parsed = ParseGgufHeader(file.mmproj_header());
  if (!parsed.ok()) {
    return InvalidFieldError(f, absl::StrCat("is not a GGUF header: ", parsed.status().message()));
  }
  if (!parsed->complete) {
    return InvalidFieldError(
        f, absl::StrCat("ends before the GGUF header does (", file.mmproj_header().size(),
                        " bytes given); send at least the first ", parsed->bytes_needed, " bytes"));
  }
  const GgufHeader& mm = parsed->header;
  if (mm.model.architecture != "clip") {
    return InvalidFieldError(f, absl::StrCat("general.architecture is \"", mm.model.architecture,
                                             "\": not a llama.cpp mmproj file (\"clip\")"));
  }
  common::v1::Architecture& arch = *out->model->mutable_architecture();
  // The projector maps into the language model's embeddings: a file made
  // for another model is refused rather than summed.
  for (const char* key : {"clip.vision.projection_dim", "clip.audio.projection_dim"}) {
    const std::optional<int64_t> dim = mm.GetInt(key);
    if (dim.has_value() && arch.hidden_size() > 0 && *dim != arch.hidden_size()) {
      return InvalidFieldError(
          f, absl::StrCat(key, " is ", *dim, " but the model's embedding_length is ",
                          arch.hidden_size(), ": this mmproj file belongs to another model"));
    }
  }
  struct Part {
    int64_t elements = 0;
    uint64_t bytes = 0;
    std::map<std::string, uint64_t> by_type;
  };
  std::map<std::string, Part> parts;
  for (const GgufTensorInfo& t : mm.tensors) {
    std::string kind = EncoderKindOfTensor(t.name);
    if (kind.empty()) kind = "projector";  // e.g. a model-specific adapter's tensors
    Part& part = parts[kind];
    part.elements += static_cast<int64_t>(t.elements);
    part.bytes += t.bytes;
    part.by_type[t.type_name] += t.bytes;
  }
  if (parts.empty()) return InvalidFieldError(f, "holds no tensors");
  for (const char* kind : {"vision_encoder", "audio_encoder", "projector"}) {
    auto it = parts.find(kind);
    if (it == parts.end()) continue;
    common::v1::EncoderPart* p = arch.add_encoder_parts();
    p->set_kind(kind);
    p->set_layout("tensors");
    p->set_parameters(it->second.elements);
    const std::string tower = std::string(kind) == "audio_encoder" ? "clip.audio." : "clip.vision.";
    if (std::string(kind) != "projector") {
      auto bounded = [](std::optional<int64_t> v) {
        return v.has_value() && *v > 0 && *v <= (1 << 20) ? *v : 0;
      };
      p->set_num_layers(static_cast<int32_t>(bounded(mm.GetInt(tower + "block_count"))));
      p->set_hidden_size(bounded(mm.GetInt(tower + "embedding_length")));
      p->set_intermediate_size(bounded(mm.GetInt(tower + "feed_forward_length")));
      p->set_image_size(static_cast<int32_t>(bounded(mm.GetInt("clip.vision.image_size"))));
      p->set_patch_size(static_cast<int32_t>(bounded(mm.GetInt("clip.vision.patch_size"))));
    }
    out->part_weights[kind] =
        ExactWeights{it->second.bytes, static_cast<double>(it->second.elements),
                     Breakdown(absl::StrCat("mmproj ", kind, " tensors"), it->second.by_type)};
  }
  out->model->set_parameters(out->model->parameters() + static_cast<double>(mm.total_elements));
  const std::string projector =
      mm.GetString("clip.projector_type")
          .value_or(mm.GetString("clip.vision.projector_type").value_or("unnamed"));
  absl::StrAppend(&out->source, "; mmproj ", FileName(file, "file", true), ": ", projector,
                  " projector, ", mm.tensors.size(), " tensors");
  return absl::OkStatus();
}

// The bytes of blocks `first` and later ("blk.N." with N >= first): the
// multi-token-prediction blocks llama.cpp's converters keep after the
// model's (GLM-4.5, MiMo-V2-Flash since b9055, Step-3.5-Flash since b9480).
uint64_t BytesOfBlocksFrom(const GgufHeader& header, int64_t first) {
  uint64_t bytes = 0;
  for (const GgufTensorInfo& t : header.tensors) {
    absl::string_view rest = t.name;
    if (!absl::ConsumePrefix(&rest, "blk.")) continue;
    int64_t block = -1;
    if (absl::SimpleAtoi(rest.substr(0, rest.find('.')), &block) && block >= first) {
      bytes += t.bytes;
    }
  }
  return bytes;
}

}  // namespace

absl::StatusOr<SourcedModel> ModelFromGgufHeader(const v1::ModelFileHeader& file,
                                                 absl::string_view field) {
  absl::StatusOr<GgufParseResult> parsed = ParseGgufHeader(file.header());
  if (!parsed.ok()) return PrefixFieldViolations(parsed.status(), field);
  if (!parsed->complete) {
    return InvalidFieldError(
        absl::StrCat(field, "header"),
        absl::StrCat("ends before the GGUF header does (", file.header().size(),
                     " bytes given); send at least the first ", parsed->bytes_needed, " bytes"));
  }
  const GgufHeader& header = parsed->header;
  absl::StatusOr<common::v1::Architecture> arch =
      ArchitectureFromGguf(header, absl::StrCat(field, "metadata."));
  if (!arch.ok()) return arch.status();
  const std::string name = FileName(file, "a GGUF file");
  const std::string quant =
      header.model.file_type_name.empty() ? "mixed types" : header.model.file_type_name;
  SourcedModel out;
  common::v1::Model model;
  model.set_display_name(header.model.name.empty() ? name : header.model.name);
  *model.mutable_architecture() = *std::move(arch);
  model.set_parameters(static_cast<double>(header.total_elements));
  model.set_open_model_weights(true);
  out.model = std::move(model);
  out.source =
      absl::StrCat("GGUF header of ", name, ": ", quant, ", ", header.tensors.size(), " tensors");
  if (const int mtp = out.model->architecture().num_mtp_layers(); mtp > 0) {
    // In the file's bytes and so in the weights: above what a runtime that
    // skips them holds (llama.cpp's mimo2 loader, src/models/mimo2.cpp at
    // cb489bc0, creates them with TENSOR_SKIP), never below.
    const uint64_t bytes = BytesOfBlocksFrom(header, out.model->architecture().num_layers());
    absl::StrAppend(&out.source, "; its ", mtp, " multi-token-prediction block",
                    mtp == 1 ? "" : "s", " (", bytes, " bytes, ",
                    absl::StrFormat("%.2f GB", BytesToGB(static_cast<double>(bytes))),
                    ") counted in the weights, whether or not the runtime loads them");
  }
  out.from_gguf = true;
  out.weights = ExactWeights{header.total_bytes, static_cast<double>(header.total_elements),
                             Breakdown("GGUF tensors", header.bytes_by_type)};
  if (!file.mmproj_header().empty()) {
    if (absl::Status bad = AddMmproj(file, field, &out); !bad.ok()) return bad;
  } else if (!file.mmproj_file_name().empty()) {
    return InvalidFieldError(absl::StrCat(field, "mmproj_header"),
                             "is empty but mmproj_file_name is set");
  }
  return out;
}

absl::StatusOr<SourcedModel> ModelFromSafetensorsHeader(const v1::ModelFileHeader& file,
                                                        absl::string_view field) {
  std::vector<const std::string*> buffers = {&file.header()};
  for (const std::string& more : file.more_headers()) buffers.push_back(&more);
  uint64_t bytes = 0;
  int64_t parameters = 0;
  int64_t masks = 0;  // BOOL tensors' elements: no parameters
  int64_t largest_tensor = 0;
  size_t tensors = 0;
  std::map<std::string, uint64_t> by_dtype;
  TensorTotals by_name;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const std::string f =
        i == 0 ? absl::StrCat(field, "header") : absl::StrCat(field, "more_headers[", i - 1, "]");
    absl::StatusOr<SafetensorsHeader> header = ParseSafetensorsFileStart(*buffers[i]);
    if (!header.ok()) {
      return InvalidFieldError(
          f, absl::StrCat("is not a safetensors header: ", header.status().message()));
    }
    bytes += header->total_bytes;
    parameters += header->total_parameters;
    masks += header->mask_elements;
    tensors += header->tensors.size();
    for (const SafetensorsTensor& t : header->tensors) {
      largest_tensor = std::max(largest_tensor, t.parameters);
      if (!EncoderKindOfTensor(t.name).empty()) {
        by_name[t.name].first += t.parameters;
        by_name[t.name].second += t.bytes();
      }
    }
    for (const auto& [dtype, n] : header->bytes_by_dtype) by_dtype[dtype] += n;
  }
  if (!file.index_json().empty()) {
    absl::StatusOr<SafetensorsIndex> index = ParseSafetensorsIndex(file.index_json());
    if (!index.ok()) return PrefixFieldViolations(index.status(), field);
    if (index->shards.size() != buffers.size()) {
      return InvalidFieldError(absl::StrCat(field, "more_headers"),
                               absl::StrCat("the index names ", index->shards.size(), " shards; ",
                                            buffers.size(), " headers were given"));
    }
  }
  common::v1::Model model;
  const std::string name = FileName(file, "a safetensors file");
  model.set_display_name(name);
  if (!file.config_json().empty()) {
    absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(file.config_json());
    if (!arch.ok()) return PrefixFieldViolations(arch.status(), field);
    *model.mutable_architecture() = *std::move(arch);
  }
  model.set_parameters(static_cast<double>(parameters));
  model.set_open_model_weights(true);
  SourcedModel out;
  out.model = std::move(model);
  out.source = absl::StrCat(
      "safetensors header", buffers.size() > 1 ? "s" : "", " of ", name, ": ", tensors, " tensors",
      buffers.size() > 1 ? absl::StrCat(" in ", buffers.size(), " shards") : "",
      file.config_json().empty() ? " (no config.json: no architecture)" : ", config.json (inline)",
      MasksLeftOut(masks));
  out.weights = ExactWeights{bytes, static_cast<double>(parameters),
                             Breakdown("safetensors tensors", by_dtype)};
  SplitEncoderParts(by_name, out.model->architecture(), "safetensors", &out);
  if (largest_tensor > 0) out.largest_layer_parameters = static_cast<double>(largest_tensor);
  return out;
}

absl::StatusOr<SourcedModel> ModelFromHfDescription(const HfModelDescription& d) {
  common::v1::Model model;
  model.set_display_name(d.repo_id);
  if (!d.config_json.empty()) {
    absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(d.config_json);
    if (!arch.ok()) return PrefixFieldViolations(arch.status(), "source.hf_repo.config.json.");
    *model.mutable_architecture() = *std::move(arch);
  } else if (d.total_parameters <= 0) {
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "Hugging Face repository ", d.repo_id, " at ", d.commit_sha,
                          " has neither a config.json nor safetensors weights to count")),
                      "ARCHITECTURE_UNKNOWN");
  }
  if (d.total_parameters > 0) model.set_parameters(static_cast<double>(d.total_parameters));
  model.set_open_model_weights(true);
  SourcedModel out;
  out.model = std::move(model);
  out.revision = d.commit_sha;
  out.source = absl::StrCat("Hugging Face ", d.repo_id, " at ", d.commit_sha);
  if (d.tensor_source == "safetensors" && d.total_bytes > 0) {
    out.weights = ExactWeights{
        d.total_bytes, static_cast<double>(d.total_parameters),
        Breakdown(absl::StrCat("safetensors tensors of ", d.safetensors_files.size(), " file(s)"),
                  d.bytes_by_dtype)};
    SplitEncoderParts(d.totals_by_name_prefix, out.model->architecture(), "safetensors", &out);
  } else if (d.tensor_source == "api") {
    absl::StrAppend(&out.source, " (parameters from the Hub's safetensors summary)");
  }
  absl::StrAppend(&out.source, MasksLeftOut(d.mask_elements));
  return out;
}

std::string ExactWeightsArithmetic(const ExactWeights& weights) {
  return absl::StrCat("exact bytes from the file, not a per-format average: ", weights.breakdown,
                      " = ", weights.bytes, " bytes for ",
                      absl::StrFormat("%.0f", weights.parameters), " parameters");
}

void ResolveModelSource(const v1::ModelSource& source, const std::string& field,
                        std::function<void(absl::StatusOr<SourcedModel>)> done) {
  switch (source.kind_case()) {
    case v1::ModelSource::kCatalogName: {
      if (source.catalog_name().empty()) {
        return done(
            InvalidFieldError(absl::StrCat(field, "catalog_name"), "must name a catalog model"));
      }
      SourcedModel out;
      out.catalog_name = source.catalog_name();
      return done(std::move(out));
    }
    case v1::ModelSource::kInlineModel: {
      const v1::InlineModel& inline_model = source.inline_model();
      if (!inline_model.has_parameters() && !inline_model.has_architecture() &&
          inline_model.hf_config_json().empty()) {
        return done(InvalidFieldError(absl::StrCat(field, "inline_model"),
                                      "needs parameters, an architecture or hf_config_json"));
      }
      absl::StatusOr<common::v1::Model> model = ModelFromInline(inline_model);
      if (!model.ok()) return done(PrefixFieldViolations(model.status(), field));
      if (inline_model.has_largest_layer_parameters() &&
          (!std::isfinite(inline_model.largest_layer_parameters()) ||
           inline_model.largest_layer_parameters() <= 0)) {
        return done(InvalidFieldError(absl::StrCat(field, "inline_model.largest_layer_parameters"),
                                      "must be a positive finite number"));
      }
      SourcedModel out;
      out.model = *std::move(model);
      if (inline_model.has_largest_layer_parameters()) {
        out.largest_layer_parameters = inline_model.largest_layer_parameters();
      }
      out.source = !inline_model.hf_config_json().empty()
                       ? InlineConfigSource(out.model->architecture())
                   : inline_model.has_architecture() ? "architecture (inline)"
                                                     : "parameter count (inline)";
      return done(std::move(out));
    }
    case v1::ModelSource::kGgufHeader:
      return done(ModelFromGgufHeader(source.gguf_header(), absl::StrCat(field, "gguf_header.")));
    case v1::ModelSource::kSafetensorsHeader:
      return done(ModelFromSafetensorsHeader(source.safetensors_header(),
                                             absl::StrCat(field, "safetensors_header.")));
    case v1::ModelSource::kHfRepo: {
      const std::string repo = source.hf_repo().id();
      const std::string revision =
          source.hf_repo().revision().empty() ? "main" : source.hf_repo().revision();
      if (absl::Status bad = ValidateRepoId(repo); !bad.ok()) {
        return done(InvalidFieldError(absl::StrCat(field, "hf_repo.id"), bad.message()));
      }
      if (absl::Status bad = ValidateRevision(revision); !bad.ok()) {
        return done(InvalidFieldError(absl::StrCat(field, "hf_repo.revision"), bad.message()));
      }
      Hub& current = CurrentHub();
      HfHubOptions options = current.options;
      const absl::Time deadline = call_deadline;
      std::function<bool()> cancelled = call_cancelled;
      auto shared_done =
          std::make_shared<std::function<void(absl::StatusOr<SourcedModel>)>>(std::move(done));
      const bool queued = current.pool->Post([options, deadline, cancelled, repo, revision,
                                              shared_done] {
        if (cancelled && cancelled()) {
          return (*shared_done)(absl::CancelledError(absl::StrCat(
              "the caller cancelled before Hugging Face repository ", repo, " was fetched")));
        }
        HfHubOptions bounded = options;
        const absl::Duration left = deadline - absl::Now();
        if (left <= absl::ZeroDuration()) {
          return (*shared_done)(absl::DeadlineExceededError(absl::StrCat(
              "the call's deadline passed before Hugging Face repository ", repo, " was fetched")));
        }
        bounded.timeout = std::min(bounded.timeout, left);
        bounded.connect_timeout = std::min(bounded.connect_timeout, left);
        // A transfer under way stops when the caller cancels (libcurl's
        // progress callback polls this), not only at the deadline.
        bounded.cancelled = cancelled;
        HfHubClient client(bounded);
        absl::StatusOr<HfModelDescription> description =
            client.FetchModelDescription(repo, revision);
        if (absl::IsCancelled(description.status())) {
          // gRPC's IsCancelled is also true past the deadline: say which.
          if (absl::Now() >= deadline) {
            return (*shared_done)(absl::DeadlineExceededError(
                absl::StrCat("the call's deadline passed while Hugging Face repository ", repo,
                             " was being fetched; the fetch was stopped")));
          }
          return (*shared_done)(absl::CancelledError(
              absl::StrCat("the caller cancelled while Hugging Face repository ", repo,
                           " was being fetched; the fetch was stopped")));
        }
        if (!description.ok()) return (*shared_done)(HubErrorForCaller(description.status(), repo));
        absl::StatusOr<SourcedModel> sourced = ModelFromHfDescription(*description);
        if (sourced.ok()) {
          sourced->url = absl::StrCat(options.endpoint, "/", repo, "/tree/", sourced->revision);
        }
        (*shared_done)(std::move(sourced));
      });
      if (!queued) {
        return (*shared_done)(absl::ResourceExhaustedError(
            "too many Hugging Face fetches waiting; try again shortly"));
      }
      return;
    }
    case v1::ModelSource::KIND_NOT_SET:
      break;
  }
  done(InvalidFieldError(absl::StrCat(field, "kind"),
                         "give catalog_name, inline_model, hf_repo, gguf_header or "
                         "safetensors_header"));
}

}  // namespace modelatlas::estimator
