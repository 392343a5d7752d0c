// StreamFitMatrix's answer: every catalog model x every accelerator x a
// list of weight formats, each cell fitted as PlanInference fits it (the
// record sized by core SizeInference once per model and format, the fewest
// cards and layout by core FewestCardsLayout, the decode bound by core
// BoundDecode). The models are sized up front; the cells are computed a
// block at a time as the stream asks for them, into packed columns. No gRPC,
// no reactors.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "estimator-service/answers/inference.h"
#include "estimator-service/catalog/record_source.h"
#include "estimator-service/core/fit_matrix.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/speed.h"
#include "estimator-service/core/workload.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {

// Cells per stream message: about 120 KB of packed columns, so a message's
// fixed cost (a write, a completion) is spread over thousands of cells.
constexpr int kFitMatrixCellsPerMessage = 8192;

// The weight formats a request that names none gets: the fit-matrix
// benchmark's four (16-bit, 8-bit, GPTQ 4-bit, GGUF Q4_K_M).
std::vector<v1::NumberFormat> DefaultFitMatrixFormats();

// The matrix as a message source (list_writer.h's SourceWriter): the first
// message carries the index and the resolved workload, every message up to
// kFitMatrixCellsPerMessage cells.
class FitMatrixCells {
 public:
  // One accelerator in one weight format, as the plan sees it.
  struct Device {
    double usable_bytes_per_card = 0;
    bool memory_known = false;
    NodeSize node;
    std::optional<double> bandwidth_bytes_per_second;
    std::optional<double> peak_flops;
    bool decode_bound = false;  // bandwidth on record and the roofline applies
    std::optional<Link> within_node;
    Link between_nodes;
    // Position of node.cards among the matrix's distinct node sizes.
    size_t node_index = 0;
  };

  // `first` holds the index; `sizings` F per model, model-major; `devices` F
  // per accelerator, accelerator-major; `model_index` one entry per model.
  FitMatrixCells(v1::StreamFitMatrixResponse first, std::vector<v1::FitMatrixModel> model_index,
                 std::vector<InferenceSizing> sizings, std::vector<Device> devices, int formats,
                 int max_cards, const ResolvedWorkload& workload);

  // Fills `message` (cleared) with the next block; false when none is left.
  bool Fill(v1::StreamFitMatrixResponse* message);

  struct Cell {
    int cards = 0;
    int tensor_parallel = 0;
    double required_bytes_per_card = 0;
    double decode_tokens_per_second = 0;
  };

  size_t models() const { return model_index_.size(); }
  size_t hardware() const { return formats_ == 0 ? 0 : devices_.size() / formats_; }
  size_t cells() const { return models() * devices_.size(); }

 private:
  v1::StreamFitMatrixResponse first_;
  bool first_sent_ = false;
  std::vector<v1::FitMatrixModel> model_index_;
  std::vector<InferenceSizing> sizings_;
  std::vector<Device> devices_;
  size_t formats_;
  int max_cards_;
  int batch_size_;
  int64_t prompt_tokens_;
  int prefill_chunk_tokens_;
  double prefill_efficiency_;
  size_t next_cell_ = 0;

  // The cell of the current model (sizing `s`) on `d` in `format`.
  Cell CellOf(const InferenceSizing& s, const Device& d, size_t format);
  // Distinct node sizes of the devices (Device::node_index).
  std::vector<int> node_sizes_;
  // The current model's FewestCardsSearch per format and node size, built
  // when a cell first needs more than one card.
  size_t searches_model_ = static_cast<size_t>(-1);
  std::vector<std::optional<FewestCardsSearch>> searches_;
};

// StreamFitMatrix: validates (INVALID_ARGUMENT naming each bad field), reads
// every hardware record and walks every model of the catalog `source` holds
// (UNAVAILABLE when it holds none), sizing each model once per format.
// `done` runs before this returns when `source` answers synchronously (the
// snapshot does).
void AnswerFitMatrix(std::shared_ptr<RecordSource> source,
                     const v1::StreamFitMatrixRequest& request, AnswerDone<FitMatrixCells> done);

}  // namespace modelatlas::estimator
