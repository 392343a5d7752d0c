#include "catalog-service/import/epoch_conventions.h"

#include <cmath>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace modelatlas::catalog {
namespace {

using common::v1::Hardware;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

// Whole numbers as the report shows them ("80000000000", not "8e+10").
std::string Figure(double value) { return absl::StrFormat("%.17g", value); }

void Add(int64_t row, const Hardware& hardware, const char* field, double file_value,
         double stored_value, std::string reason, std::vector<v1::ImportConversion>* out) {
  v1::ImportConversion* conversion = &out->emplace_back();
  conversion->set_row(row);
  conversion->set_display_name(hardware.display_name());
  conversion->set_field(field);
  conversion->set_file_value(Figure(file_value));
  conversion->set_stored_value(Figure(stored_value));
  conversion->set_reason(std::move(reason));
}

// One tensor peak of a GeForce card: Epoch's FP16-accumulate figure moves
// to its own field and the record's field gets the FP32-accumulate half.
void HalveAccumulatePeak(int64_t row, Hardware* hardware, bool fp8,
                         std::vector<v1::ImportConversion>* conversions) {
  auto* peak = hardware->mutable_peak();
  const bool present = fp8 ? peak->has_fp8_flops() : peak->has_tensor_fp16_bf16_flops();
  if (!present) return;
  const double quoted = fp8 ? peak->fp8_flops() : peak->tensor_fp16_bf16_flops();
  if (fp8) {
    peak->set_fp8_fp16_accumulate_flops(quoted);
    peak->set_fp8_flops(quoted / 2);
  } else {
    peak->set_tensor_fp16_fp16_accumulate_flops(quoted);
    peak->set_tensor_fp16_bf16_flops(quoted / 2);
  }
  Add(row, *hardware, fp8 ? "peak.fp8_flops" : "peak.tensor_fp16_bf16_flops", quoted, quoted / 2,
      absl::StrCat(
          "a GeForce card: Epoch's figure is the FP16-accumulate rate; the field holds "
          "the FP32-accumulate rate, half of it (the quoted figure is kept in ",
          fp8 ? "peak.fp8_fp16_accumulate_flops" : "peak.tensor_fp16_fp16_accumulate_flops", ")"),
      conversions);
}

}  // namespace

bool QuotesFp16AccumulatePeaks(const Hardware& hardware) {
  // Every GeForce card with tensor cores (RTX 20 series on) is marketed
  // this way (Turing, Ampere GA102, Ada and Blackwell GeForce whitepapers);
  // workstation (RTX A6000, RTX 6000 Ada, RTX PRO) and data-center cards
  // run FP32 accumulation at the full rate and quote that.
  return absl::StrContains(absl::AsciiStrToLower(hardware.display_name()), "geforce");
}

void ConvertEpochHardwareRow(int64_t row, Hardware* hardware,
                             std::vector<v1::ImportConversion>* conversions) {
  if (hardware->has_memory_bytes() && hardware->memory_bytes() > 0) {
    const double bytes = hardware->memory_bytes();
    if (std::fmod(bytes, kMiB) != 0) {
      if (std::fmod(bytes, 1e9) == 0 || std::fmod(bytes, 1e6) != 0) {
        const double gb = bytes / 1e9;
        hardware->set_memory_bytes(std::round(gb * kGiB));
        Add(row, *hardware, "memory_bytes", bytes, hardware->memory_bytes(),
            absl::StrCat("Epoch's ", absl::StrFormat("%g", gb),
                         " GB (decimal) read as the vendor's ", absl::StrFormat("%g", gb),
                         " GiB (memory chips come in powers of two)"),
            conversions);
      } else {
        const double mb = bytes / 1e6;
        hardware->set_memory_bytes(mb * kMiB);
        Add(row, *hardware, "memory_bytes", bytes, hardware->memory_bytes(),
            absl::StrCat("Epoch's ", absl::StrFormat("%g", mb), " MB (decimal) read as ",
                         absl::StrFormat("%g", mb), " MiB"),
            conversions);
      }
    }
  }
  if (QuotesFp16AccumulatePeaks(*hardware)) {
    HalveAccumulatePeak(row, hardware, /*fp8=*/false, conversions);
    HalveAccumulatePeak(row, hardware, /*fp8=*/true, conversions);
  }
}

bool EpochTensorPeak(const Hardware& hardware, bool fp8, double* value) {
  const auto& peak = hardware.peak();
  const bool has = fp8 ? peak.has_fp8_flops() : peak.has_tensor_fp16_bf16_flops();
  const bool has_quoted =
      fp8 ? peak.has_fp8_fp16_accumulate_flops() : peak.has_tensor_fp16_fp16_accumulate_flops();
  if (!QuotesFp16AccumulatePeaks(hardware)) {
    if (!has) return false;
    *value = fp8 ? peak.fp8_flops() : peak.tensor_fp16_bf16_flops();
    return true;
  }
  if (has_quoted) {
    *value = fp8 ? peak.fp8_fp16_accumulate_flops() : peak.tensor_fp16_fp16_accumulate_flops();
    return true;
  }
  if (!has) return false;
  *value = 2 * (fp8 ? peak.fp8_flops() : peak.tensor_fp16_bf16_flops());
  return true;
}

}  // namespace modelatlas::catalog
