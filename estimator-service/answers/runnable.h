// ListRunnableModels' answer: every catalog model that runs on a hardware
// record with the given cards and workload, sized by the one composition
// (core SizeInference, as the memory estimate and the plan), best fit first.
// No gRPC, no reactors.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/query/filter.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/catalog/record_source.h"
#include "estimator-service/core/architecture.h"
#include "estimator-service/core/workload.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {

// Rows per stream message: one gRPC message per row cost about 15 us each,
// a whole message of rows little more than one.
constexpr int kRunnableRowsPerMessage = 256;

// One row of the fit matrix before it becomes a message. Rows are kept as
// plain numbers, their names in one buffer for the whole answer, sorted by
// position, and copied into one reused message at a time (see
// SourceWriter): a RunnableModel message per row, allocated, moved and
// freed, cost a third of the answer's time, and a string per name a tenth.
struct RunnableRow {
  size_t names_offset = 0;  // into RunnableRows' buffer: model, then display name
  uint32_t model_size = 0;
  uint32_t display_name_size = 0;
  double parameters = 0;
  int cards = 0;
  int64_t required_bytes_per_card = 0;
  int64_t headroom_bytes_per_card = 0;
  std::optional<double> decode_tokens_per_second;
  std::optional<double> prefill_tokens_per_second;
  bool hypothetical = false;
  // No architecture on record (or no layers in it): the row counts the
  // weights and overhead only (RunnableModel.kv_cache_not_counted).
  bool kv_cache_not_counted = false;
  int64_t context_length_tokens = 0;
  // The format the weights were sized in, and whether it is the model's
  // published checkpoint's (the request named none; WorkloadForModel).
  NumberFormat weight_format = NumberFormat::kBf16;
  bool weight_format_from_checkpoint = false;
};

// The rows of an answer, best fit first (fewest cards, then most headroom),
// kRunnableRowsPerMessage to a message.
class RunnableRows {
 public:
  RunnableRows(int64_t revision, v1::ResolvedWorkload workload)
      : revision_(revision), workload_(std::move(workload)) {}

  // A new row named so; the caller sets its figures.
  RunnableRow& Add(absl::string_view model, absl::string_view display_name) {
    RunnableRow& row = rows_.emplace_back();
    row.names_offset = names_.size();
    row.model_size = static_cast<uint32_t>(model.size());
    row.display_name_size = static_cast<uint32_t>(display_name.size());
    names_.append(model.data(), model.size()).append(display_name.data(), display_name.size());
    return row;
  }

  // Puts the rows in answer order (`order`; ties best fit first); called
  // once, after the last Add.
  void Sort(v1::RunnableOrder order = v1::RUNNABLE_ORDER_BEST_FIT) {
    order_.resize(rows_.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<uint32_t>(i);
    std::stable_sort(order_.begin(), order_.end(), [this, order](uint32_t x, uint32_t y) {
      const RunnableRow& a = rows_[x];
      const RunnableRow& b = rows_[y];
      if (order == v1::RUNNABLE_ORDER_MOST_PARAMETERS && a.parameters != b.parameters) {
        return a.parameters > b.parameters;
      }
      if (order == v1::RUNNABLE_ORDER_FASTEST &&
          a.decode_tokens_per_second != b.decode_tokens_per_second) {
        // A bound beats none; then the higher.
        return b.decode_tokens_per_second < a.decode_tokens_per_second;
      }
      if (a.cards != b.cards) return a.cards < b.cards;
      return a.headroom_bytes_per_card > b.headroom_bytes_per_card;
    });
  }

  size_t size() const { return rows_.size(); }

  // The card's capacity the rows were fitted in, sent with the workload.
  void SetDeviceMemory(const v1::DeviceMemory& memory, int64_t usable_bytes_per_card) {
    device_memory_ = memory;
    usable_bytes_per_card_ = usable_bytes_per_card;
  }
  // Why the card's bandwidth, on which every row's decode bound rests, is
  // doubtful (DoubtfulBandwidthReason, core/speed.h), sent with the workload.
  void SetDecodeBoundDoubtful(std::string reason) { decode_bound_doubtful_ = std::move(reason); }

  // Fills `message` with the next rows (the first message also with the
  // resolved workload, alone when there are no rows); false when none are left.
  bool Fill(v1::ListRunnableModelsResponse* message) {
    if (!workload_sent_) {
      workload_sent_ = true;
      *message->mutable_workload() = workload_;
      *message->mutable_device_memory() = device_memory_;
      message->set_usable_bytes_per_card(usable_bytes_per_card_);
      message->set_decode_bound_doubtful(decode_bound_doubtful_);
      if (order_.empty()) return true;
    }
    if (next_ == order_.size()) return false;
    const size_t end = std::min(order_.size(), next_ + kRunnableRowsPerMessage);
    for (; next_ < end; ++next_) {
      const RunnableRow& row = rows_[order_[next_]];
      const char* names = names_.data() + row.names_offset;
      v1::RunnableModel* out = message->add_models();
      out->set_model(names, row.model_size);
      out->set_display_name(names + row.model_size, row.display_name_size);
      out->set_parameters(row.parameters);
      out->set_cards(row.cards);
      out->set_required_bytes_per_card(row.required_bytes_per_card);
      out->set_headroom_bytes_per_card(row.headroom_bytes_per_card);
      if (row.decode_tokens_per_second.has_value()) {
        out->set_decode_tokens_per_second(*row.decode_tokens_per_second);
      }
      if (row.prefill_tokens_per_second.has_value()) {
        out->set_prefill_tokens_per_second(*row.prefill_tokens_per_second);
      }
      out->set_hypothetical(row.hypothetical);
      out->set_catalog_revision(revision_);
      out->set_context_length_tokens(row.context_length_tokens);
      out->set_weight_format(ToProtoNumberFormat(row.weight_format));
      out->set_weight_format_from_checkpoint(row.weight_format_from_checkpoint);
      out->set_kv_cache_not_counted(row.kv_cache_not_counted);
    }
    return true;
  }

 private:
  int64_t revision_;
  v1::ResolvedWorkload workload_;
  bool workload_sent_ = false;
  v1::DeviceMemory device_memory_;
  int64_t usable_bytes_per_card_ = 0;
  std::string decode_bound_doubtful_;
  std::string names_;
  std::vector<RunnableRow> rows_;
  std::vector<uint32_t> order_;
  size_t next_ = 0;
};

// Every model of the catalog `source` holds that `filter` keeps and that
// runs on `cards` or fewer cards of `hardware` at `workload` (closed-weight
// models only when `hypothetical`), sized as ListRunnableModels sizes them.
// ListRunnableModels and the plan's newer models (newer_models.h) share it.
absl::StatusOr<RunnableRows> RunnableModelsOn(
    const RecordSource& source, const common::v1::Hardware& hardware, int cards,
    const ResolvedWorkload& workload, const query::Filter& filter, bool hypothetical,
    v1::RunnableOrder order = v1::RUNNABLE_ORDER_BEST_FIT);
// A catalog record as the whole-catalog answers (runnable models, the fit
// matrix) size it: converted for the formulas once per state of the
// snapshot's models, not once per request and model (the conversion and
// the parameter count were a sixth of a runnable list's time).
struct PreparedModel {
  // ToCoreArchitecture of the record's architecture; null without one.
  std::shared_ptr<const Architecture> architecture;
  // ParametersOfModel.
  absl::StatusOr<double> parameters = 0.0;
  // ValidateModelArchitecture passed.
  bool architecture_valid = true;
  // A multimodal record's encoder and projector parameters (CountEncoderParts),
  // in order; encoder_parts_counted false when they cannot be counted.
  std::vector<double> encoder_parts;
  bool encoder_parts_counted = true;
  // WeightsPublished.
  std::optional<bool> weights_published;
};
PreparedModel PrepareModel(const common::v1::Model& model);

// Calls `visit` for every model of `source` with its PreparedModel, kept from
// an earlier walk over the same state of the models (the source's
// generation) or prepared now. `visit` returns false to stop using the walk
// (the call was abandoned): the rest is walked without preparing.
absl::Status ForEachPreparedModel(
    const RecordSource& source,
    const std::function<bool(const common::v1::Model&, const PreparedModel&)>& visit);

// ListRunnableModels: validates, reads the hardware, sizes every model of
// the catalog `source` holds (UNAVAILABLE when it holds none).
void AnswerRunnableModels(std::shared_ptr<RecordSource> source,
                          const v1::ListRunnableModelsRequest& request,
                          AnswerDone<RunnableRows> done);

}  // namespace modelatlas::estimator
