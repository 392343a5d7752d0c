// Epoch AI's hardware file states some figures in conventions other than the
// record's fields mean; these functions convert one row on the way in (and
// back on the way out), so that an imported value means what its field says
// and a curated value given the other way is no conflict. docs/IMPORT.md,
// "Epoch's conventions", lists each field and the decision taken.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "modelatlas/catalog/v1/import_export.pb.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::catalog {

// True for NVIDIA GeForce cards: NVIDIA quotes their tensor FP16 (and FP8)
// peaks with FP16 accumulation, twice the FP32-accumulate rate the record's
// tensor_fp16_bf16_flops holds, and Epoch's file takes the quoted figure.
bool QuotesFp16AccumulatePeaks(const common::v1::Hardware& hardware);

// Converts a record read from ml_hardware.csv (data row `row`) in place:
//   - memory_bytes: Epoch's decimal "N GB" (N x 1e9) becomes N GiB (the
//     record's convention, hardware.proto); N MB that is not a whole number
//     of GB (GeForce GTX 580's 1536 MB) becomes N MiB; a figure that is
//     already a whole number of MiB (TPU v1's 8589934592) is kept;
//   - GeForce cards: peak.tensor_fp16_bf16_flops and peak.fp8_flops hold
//     half of Epoch's FP16-accumulate figure, which is kept in
//     peak.tensor_fp16_fp16_accumulate_flops and peak.fp8_fp16_accumulate_flops.
// Appends one ImportConversion per converted field.
void ConvertEpochHardwareRow(int64_t row, common::v1::Hardware* hardware,
                             std::vector<v1::ImportConversion>* conversions);

// The figure ml_hardware.csv's "Tensor-FP16/BF16 performance (FLOP/s)" and
// "FP8 performance (FLOP/s)" columns hold for this record (Epoch's
// convention, the inverse of the conversion above), so that an export
// imports back to the same record. `fp8` picks the FP8 column. Returns
// false when the record has no figure for it.
bool EpochTensorPeak(const common::v1::Hardware& hardware, bool fp8, double* value);

// The utilization rate an Epoch compute estimate assumed, read from the
// text of its "Training compute notes" (issue 17, points 6 and 7), with the
// words of the note it was read from (`said`, e.g. "0.3 [assumed
// utilization]"). Conservative: a rate is read only where the note ties one
// number to the word utilization (utilisation, util, MFU, HFU) directly:
//   - the number before it: "0.3 [assumed utilization]", "40% MFU",
//     "0.4 (utilization assumption)", "33% actual GPU utilization";
//   - the number after it, with at most "rate" and one of ":", "=", "of",
//     "is", "at" between: "utilization rate of 0.3", "Utilization rate: 40%";
//   - Epoch's template line "(num gpu) * (peak flops) * (time in seconds) *
//     (assumed utilization rate)" under (or beside) the product it labels:
//     the product's last factor, "(0.3)".
// A number is a rate when it is a decimal fraction in (0, 1] ("0.3") or a
// percentage up to 100 ("30%"); whole numbers, exponents ("3e23"), ranges
// ("38-43%") and anything else are not. Two different rates in one note
// state none (a note comparing runs). Nothing when the note states none.
struct StatedUtilization {
  double fraction = 0;
  std::string said;
};
std::optional<StatedUtilization> AssumedUtilizationInNotes(absl::string_view notes);

// Fields of a record read from all_ai_models.csv (data row `row`) that its
// cells state but no column holds: hardware_utilization_assumed from the
// training compute notes (AssumedUtilizationInNotes), unless the row already
// holds one. Appends one ImportConversion per derived field.
void ConvertEpochModelRow(int64_t row, common::v1::Model* model,
                          std::vector<v1::ImportConversion>* conversions);

}  // namespace modelatlas::catalog
