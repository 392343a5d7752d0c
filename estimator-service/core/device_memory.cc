#include "estimator-service/core/device_memory.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/text/decimal.h"

namespace modelatlas::estimator {
namespace {

constexpr double kGiB = 1073741824.0;

std::string GiB(double bytes) { return absl::StrCat(FixedDecimals(bytes / kGiB, 2), " GiB"); }

// The rule for a record without a usable driver figure: its share of the
// marketed capacity and the sentence that says which rule and why.
struct Rule {
  double share;
  std::string words;
};

Rule RuleFor(const DeviceMemoryRecord& record) {
  if (record.unified_memory) {
    const bool small = record.memory_bytes <= kUnifiedSmallLimitBytes;
    return {small ? kUnifiedShareSmall : kUnifiedShareLarge,
            small ? "unified memory up to 36 GiB: 2/3, the share macOS lets the GPU wire "
                    "(Metal recommendedMaxWorkingSetSize)"
                  : "unified memory above 36 GiB: 3/4, the share macOS lets the GPU wire "
                    "(Metal recommendedMaxWorkingSetSize)"};
  }
  if (record.tpu) {
    return {kTpuShare,
            "TPU: 30.75/32, the lowest XLA:TPU HBM limit over the chip's capacity of the TPUs "
            "with a runtime figure (TPU v4; v5e 15.75/16, v5p 95/96)"};
  }
  const std::string type = absl::AsciiStrToUpper(record.memory_type);
  if (absl::StartsWith(type, "HBM")) {
    return {kHbmShare,
            "HBM: 16,128/16,384, the lowest ratio of CUDA's total to the capacity of the HBM "
            "cards with a published figure (V100 16 GB, CUDA 11.0)"};
  }
  if (absl::StartsWith(type, "GDDR") && absl::StrContains(type, "ECC")) {
    return {kGddrEccShare,
            "GDDR with ECC: 14.555/16, inline ECC keeps about 1/16 back (T4's CUDA total, the "
            "lowest of A10, L4, L40S, T4)"};
  }
  if (absl::StartsWith(type, "GDDR")) {
    return {kGddrShare,
            "GDDR without ECC: 32,101/32,768, the driver's reservation (RTX 5090's CUDA total on "
            "Linux, the lowest of the GeForce cards on record)"};
  }
  return {kOtherShare, absl::StrCat(type.empty() ? "memory type not on record"
                                                 : absl::StrCat("memory type ", record.memory_type),
                                    ": 14.555/16, the lowest of the rules (ECC on or a driver "
                                    "reservation cannot be ruled out)")};
}

}  // namespace

AllocatableMemory AllocatableMemoryOf(const DeviceMemoryRecord& record) {
  AllocatableMemory out;
  out.marketed_bytes = record.memory_bytes;
  if (!(record.memory_bytes > 0)) {
    out.source = "memory size not on record";
    return out;
  }
  std::string why_not_recorded = "the record has no driver-reported figure";
  if (record.allocatable_bytes.has_value() && *record.allocatable_bytes > 0) {
    if (*record.allocatable_bytes <= record.memory_bytes) {
      out.allocatable_bytes = *record.allocatable_bytes;
      out.source = record.allocatable_source.empty() ? "the record's allocatable_memory_bytes"
                                                     : record.allocatable_source;
      return out;
    }
    // Not clamped to the capacity: a figure above it is in another unit or
    // for another variant, and nothing says by how much.
    why_not_recorded = absl::StrCat("the record's allocatable figure ",
                                    GiB(*record.allocatable_bytes), " exceeds its capacity ",
                                    GiB(record.memory_bytes), " (units mixed?) and is not used");
  }
  const Rule rule = RuleFor(record);
  out.allocatable_bytes = record.memory_bytes * rule.share;
  out.assumed = true;
  out.source = absl::StrCat("assumed: ", why_not_recorded, "; ", GiB(record.memory_bytes), " x ",
                            FixedDecimals(rule.share, 4), " (", rule.words,
                            ") = ", GiB(out.allocatable_bytes));
  return out;
}

}  // namespace modelatlas::estimator
