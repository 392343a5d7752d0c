#include "estimator-service/answers/fit_matrix.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/query/filter.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/answers/runnable.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/core/speed.h"

namespace modelatlas::estimator {
namespace {

constexpr int kMaxFormats = 32;

struct Validated {
  std::vector<v1::NumberFormat> formats;
  std::vector<ResolvedWorkload> workloads;  // one per format
  int max_cards = 64;
  query::Filter model_filter;
  query::Filter hardware_filter;
};

absl::StatusOr<Validated> Validate(const v1::StreamFitMatrixRequest& request) {
  FieldViolations violations;
  Validated v;
  if (request.max_cards() < 0 || request.max_cards() > 1024) {
    violations.Add("max_cards", absl::StrCat("must be between 1 and 1024 cards (0 = 64), got ",
                                             request.max_cards()));
  } else if (request.max_cards() > 0) {
    v.max_cards = request.max_cards();
  }
  if (request.workload().weight_format() != v1::NUMBER_FORMAT_UNSPECIFIED) {
    violations.Add("workload.weight_format",
                   "must be unset: the matrix's formats are weight_formats");
  }
  for (int format : request.weight_formats()) {
    v.formats.push_back(static_cast<v1::NumberFormat>(format));
  }
  if (v.formats.empty()) v.formats = DefaultFitMatrixFormats();
  if (v.formats.size() > kMaxFormats) {
    violations.Add("weight_formats",
                   absl::StrCat("at most ", kMaxFormats, " formats, got ", v.formats.size()));
  }
  // The workload's own violations once, not once per format.
  absl::StatusOr<ResolvedWorkload> base = ResolveWorkload(request.workload());
  if (!base.ok()) {
    const std::vector<FieldViolation> found = GetFieldViolations(base.status());
    if (found.empty()) return base.status();
    for (const FieldViolation& f : found) {
      violations.Add(absl::StrCat("workload.", f.field), f.description);
    }
  }
  absl::flat_hash_set<int> seen;
  for (size_t i = 0; i < v.formats.size(); ++i) {
    const std::string field = absl::StrCat("weight_formats[", i, "]");
    const v1::NumberFormat format = v.formats[i];
    if (format == v1::NUMBER_FORMAT_UNSPECIFIED) {
      violations.Add(field, "must name a format (UNSPECIFIED is none)");
    } else if (!ToCoreNumberFormat(format, NumberFormat::kBf16, field.c_str()).ok()) {
      violations.Add(field, absl::StrCat("has no value ", static_cast<int>(format)));
    } else if (!seen.insert(format).second) {
      violations.Add(field, absl::StrCat(v1::NumberFormat_Name(format), " is already listed"));
    } else if (base.ok()) {
      v1::InferenceWorkload workload = request.workload();
      workload.set_weight_format(format);
      absl::StatusOr<ResolvedWorkload> resolved = ResolveWorkload(workload);
      if (!resolved.ok()) return resolved.status();
      v.workloads.push_back(*resolved);
    }
  }
  absl::StatusOr<query::Filter> models =
      query::Filter::Parse(request.model_filter(), common::v1::Model::descriptor());
  if (!models.ok()) violations.Add("model_filter", std::string(models.status().message()));
  absl::StatusOr<query::Filter> hardware =
      query::Filter::Parse(request.hardware_filter(), common::v1::Hardware::descriptor());
  if (!hardware.ok()) violations.Add("hardware_filter", std::string(hardware.status().message()));
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;
  v.model_filter = *std::move(models);
  v.hardware_filter = *std::move(hardware);
  return v;
}

// The accelerator in one format as PlanOnDevice sees it (core/plan.cc):
// the same usable memory, node size and links.
FitMatrixCells::Device DeviceFor(const DeviceSpec& spec, const ResolvedWorkload& workload) {
  FitMatrixCells::Device d;
  d.usable_bytes_per_card = UsableBytesPerCard(spec, workload.memory_utilization);
  d.memory_known = spec.memory_bytes > 0;
  if (spec.scale_up_domain_size.has_value() && *spec.scale_up_domain_size > 1) {
    d.node = {.cards = *spec.scale_up_domain_size, .assumed = false};
  }
  d.bandwidth_bytes_per_second = spec.bandwidth_bytes_per_second;
  d.peak_flops = spec.peak_flops;
  d.decode_bound = !spec.roofline_does_not_apply && spec.bandwidth_bytes_per_second.has_value() &&
                   *spec.bandwidth_bytes_per_second > 0;
  d.within_node = WithinNodeLink(spec.links);
  d.between_nodes = BetweenNodesLink(spec.links);
  return d;
}

absl::StatusOr<FitMatrixCells> MatrixOf(const RecordSource& source,
                                        const SharedRecords<common::v1::Hardware>& all_hardware,
                                        const Validated& v, bool hypothetical) {
  const size_t formats = v.formats.size();
  v1::StreamFitMatrixResponse first;
  *first.mutable_workload() = ToProto(v.workloads.front());
  for (v1::NumberFormat format : v.formats) first.add_weight_formats(format);
  first.set_max_cards(v.max_cards);
  first.set_catalog_revision(source.revision());

  std::vector<FitMatrixCells::Device> devices;
  int hardware_not_planned = 0;
  for (const common::v1::Hardware& hw : all_hardware) {
    if (!v.hardware_filter.Matches(hw)) continue;
    // Without a memory size no cell could say whether a model fits: left
    // out and counted, as PlanInference says "memory size not on record",
    // rather than shown as "does not fit".
    if (!CheckDeviceFigures(hw).ok() || !hw.has_memory_bytes() || hw.memory_bytes() <= 0) {
      ++hardware_not_planned;
      continue;
    }
    v1::FitMatrixHardware* entry = first.add_hardware();
    entry->set_hardware(hw.name());
    entry->set_display_name(hw.display_name());
    for (size_t f = 0; f < formats; ++f) {
      const DeviceSpec spec = DeviceOf(hw, v.workloads[f].weight_format);
      devices.push_back(DeviceFor(spec, v.workloads[f]));
      if (f == 0) {
        const FitMatrixCells::Device& d = devices.back();
        entry->set_usable_bytes_per_card(static_cast<int64_t>(std::floor(d.usable_bytes_per_card)));
        entry->set_cards_per_node(d.node.cards);
        entry->set_cards_per_node_assumed(d.node.assumed);
        if (spec.roofline_does_not_apply) {
          entry->set_no_decode_bound_reason(
              "speed not modelled: on-chip SRAM (wafer-scale or SRAM-only design); the memory "
              "roofline does not apply");
        } else if (!d.decode_bound) {
          entry->set_no_decode_bound_reason("memory bandwidth not on record");
        } else if (spec.bandwidth_doubtful) {
          entry->set_decode_bound_doubtful(
              DoubtfulBandwidthReason(spec.memory_bytes, *spec.bandwidth_bytes_per_second));
        }
      }
    }
  }
  first.set_hardware_not_planned(hardware_not_planned);

  std::vector<v1::FitMatrixModel> index;
  std::vector<InferenceSizing> sizings;
  int not_sized = 0;
  absl::Status abandoned;
  int visits = 0;
  absl::Status visited = ForEachPreparedModel(
      source, [&](const common::v1::Model& model, const PreparedModel& prepared) {
        if (visits++ % kRecordsPerAbandonCheck == 0) {
          abandoned = CallAbandoned(
              absl::StrCat("sizing the fit matrix's models (", visits - 1, " models read)"));
          if (!abandoned.ok()) return false;
        }
        if (!v.model_filter.Matches(model)) return true;
        const std::optional<bool>& published = prepared.weights_published;
        const bool is_hypothetical = published.has_value() && !*published;
        if (is_hypothetical && !hypothetical) return true;
        // As the memory answer sizes a record (SizeForModel, answers/inference.cc):
        // the architecture converted once (PrepareModel), the encoder parts
        // beside the language model.
        if (!prepared.architecture_valid || !prepared.parameters.ok() ||
            !prepared.encoder_parts_counted) {
          ++not_sized;
          return true;
        }
        const double parameters = *prepared.parameters;
        double parts_parameters = 0;
        for (double part : prepared.encoder_parts) parts_parameters += part;
        InferenceMemoryInput input;
        if (prepared.architecture != nullptr) input.architecture = *prepared.architecture;
        input.parameters = std::max(0.0, parameters - parts_parameters);
        if (model.has_active_parameters()) input.active_parameters = model.active_parameters();
        const int64_t max_context =
            input.architecture.has_value() ? input.architecture->max_context_length : 0;
        const size_t start = sizings.size();
        ResolvedWorkload for_model;
        for (size_t f = 0; f < formats; ++f) {
          for_model = WorkloadForModel(v.workloads[f], max_context);
          input.workload = for_model;
          absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
          if (!sizing.ok()) {
            sizings.resize(start);
            ++not_sized;
            return true;
          }
          for (double part : prepared.encoder_parts) {
            sizing->weight_bytes += static_cast<double>(EncoderPartWeightBytes(part, for_model));
          }
          sizings.push_back(*sizing);
        }
        v1::FitMatrixModel& entry = index.emplace_back();
        entry.set_model(model.name());
        entry.set_display_name(model.display_name());
        entry.set_parameters(parameters);
        entry.set_context_length_tokens(for_model.context_length_tokens);
        entry.set_hypothetical(is_hypothetical);
        entry.set_kv_cache_not_counted(prepared.architecture == nullptr);
        return true;
      });
  if (!visited.ok()) return visited;
  if (!abandoned.ok()) return abandoned;
  first.set_models_not_sized(not_sized);
  return FitMatrixCells(std::move(first), std::move(index), std::move(sizings), std::move(devices),
                        static_cast<int>(formats), v.max_cards, v.workloads.front());
}

}  // namespace

std::vector<v1::NumberFormat> DefaultFitMatrixFormats() {
  return {v1::NUMBER_FORMAT_BF16, v1::NUMBER_FORMAT_INT8, v1::NUMBER_FORMAT_GPTQ_INT4,
          v1::NUMBER_FORMAT_GGUF_Q4_K_M};
}

FitMatrixCells::FitMatrixCells(v1::StreamFitMatrixResponse first,
                               std::vector<v1::FitMatrixModel> model_index,
                               std::vector<InferenceSizing> sizings, std::vector<Device> devices,
                               int formats, int max_cards, const ResolvedWorkload& workload)
    : first_(std::move(first)),
      model_index_(std::move(model_index)),
      sizings_(std::move(sizings)),
      devices_(std::move(devices)),
      formats_(static_cast<size_t>(formats)),
      max_cards_(max_cards),
      batch_size_(workload.batch_size),
      prompt_tokens_(workload.prompt_tokens),
      prefill_chunk_tokens_(workload.prefill_chunk_tokens),
      prefill_efficiency_(workload.prefill_efficiency) {
  for (Device& d : devices_) {
    auto at = std::find(node_sizes_.begin(), node_sizes_.end(), d.node.cards);
    d.node_index = static_cast<size_t>(at - node_sizes_.begin());
    if (at == node_sizes_.end()) node_sizes_.push_back(d.node.cards);
  }
}

FitMatrixCells::Cell FitMatrixCells::CellOf(const InferenceSizing& s, const Device& d,
                                            size_t format) {
  Cell cell;
  // PlanOnDevice's fit (core/plan.cc): no memory on record fits nothing.
  // One card first (FewestCardsLayout's first layout, and most cells');
  // else the model's search over every count, built once per format and
  // node size.
  std::optional<Layout> layout;
  if (d.memory_known) {
    const Layout one;
    if (RequiredBytesPerCard(s, one) <= d.usable_bytes_per_card) {
      layout = one;
    } else {
      std::optional<FewestCardsSearch>& search =
          searches_[format * node_sizes_.size() + d.node_index];
      if (!search.has_value()) search.emplace(s, max_cards_, d.node);
      layout = search->Find(d.usable_bytes_per_card);
    }
  }
  if (!layout.has_value()) {
    // As the plan: what one card would need, unless the card's memory is
    // not on record (then nothing is sized against it: 0).
    if (d.memory_known) cell.required_bytes_per_card = RequiredBytesPerCard(s, 1);
    return cell;
  }
  cell.cards = layout->cards();
  cell.tensor_parallel = layout->tensor_parallel;
  cell.required_bytes_per_card = RequiredBytesPerCard(s, *layout);
  if (d.decode_bound) {
    const int nodes = (cell.cards + d.node.cards - 1) / d.node.cards;
    SpeedInput speed{.sizing = &s,
                     .layout = *layout,
                     .nodes = nodes,
                     .batch_size = batch_size_,
                     .prompt_tokens = prompt_tokens_,
                     .prefill_chunk_tokens = prefill_chunk_tokens_,
                     .prefill_efficiency = prefill_efficiency_,
                     .bandwidth_bytes_per_second = d.bandwidth_bytes_per_second,
                     .peak_flops = d.peak_flops};
    if (cell.cards > 1) {
      speed.within_node = d.within_node;
      if (nodes > 1) speed.between_nodes = d.between_nodes;
    }
    cell.decode_tokens_per_second = BoundDecode(speed).tokens_per_second_per_sequence;
  }
  return cell;
}

bool FitMatrixCells::Fill(v1::StreamFitMatrixResponse* message) {
  const bool first = !first_sent_;
  if (first) {
    first_sent_ = true;
    message->Swap(&first_);
  } else if (next_cell_ >= cells()) {
    return false;
  }
  const size_t end = std::min(cells(), next_cell_ + kFitMatrixCellsPerMessage);
  const int n = static_cast<int>(end - next_cell_);
  message->set_first_cell(static_cast<int64_t>(next_cell_));
  message->mutable_cards()->Resize(n, 0);
  message->mutable_tensor_parallel()->Resize(n, 0);
  message->mutable_required_bytes_per_card()->Resize(n, 0);
  message->mutable_decode_tokens_per_second()->Resize(n, 0);
  int32_t* cards = message->mutable_cards()->mutable_data();
  int32_t* tp = message->mutable_tensor_parallel()->mutable_data();
  int64_t* required = message->mutable_required_bytes_per_card()->mutable_data();
  double* decode = message->mutable_decode_tokens_per_second()->mutable_data();
  const size_t per_model = devices_.size();
  for (int i = 0; i < n; ++i, ++next_cell_) {
    const size_t model = next_cell_ / per_model;
    const size_t within = next_cell_ % per_model;
    if (within == 0) *message->add_models() = model_index_[model];
    if (model != searches_model_) {
      searches_model_ = model;
      searches_.assign(formats_ * node_sizes_.size(), std::nullopt);
    }
    const size_t format = within % formats_;
    const Cell cell = CellOf(sizings_[model * formats_ + format], devices_[within], format);
    cards[i] = cell.cards;
    tp[i] = cell.tensor_parallel;
    required[i] = static_cast<int64_t>(std::ceil(cell.required_bytes_per_card));
    decode[i] = cell.decode_tokens_per_second;
  }
  return first || n > 0;
}

void AnswerFitMatrix(std::shared_ptr<RecordSource> source,
                     const v1::StreamFitMatrixRequest& request, AnswerDone<FitMatrixCells> done) {
  absl::StatusOr<Validated> validated = Validate(request);
  if (!validated.ok()) return done(validated.status());
  std::shared_ptr<RecordSource> reader = source;
  source->FindHardware({}, [reader = std::move(reader), validated = *std::move(validated),
                            hypothetical = request.hypothetical(), done = std::move(done)](
                               absl::StatusOr<SharedRecords<common::v1::Hardware>> hardware) {
    if (!hardware.ok()) return done(hardware.status());
    done(MatrixOf(*reader, *hardware, validated, hypothetical));
  });
}

}  // namespace modelatlas::estimator
