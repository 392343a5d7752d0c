// What one process can allocate on a device (docs/FORMULAS.md, "Memory a
// runtime can use"). Every fit decision (plans, the runnable list, the
// inverse questions, training plans) rests on this figure, never on the
// marketed capacity: "80 GB" cards expose 79.6 GiB to CUDA (nvidia-smi
// memory.total 81,559 MiB on H100 SXM), GDDR6 cards with ECC on by default
// lose about 1/16 (A10: 23,028 MiB of 24,576), and a Mac's GPU may wire only
// a share of unified memory.
#pragma once

#include <optional>
#include <string>

namespace modelatlas::estimator {

// The memory figures of a hardware record.
struct DeviceMemoryRecord {
  // Marketed capacity, bytes (the record's memory_bytes).
  double memory_bytes = 0;
  // What the driver reports to one process, bytes, when the record has it.
  std::optional<double> allocatable_bytes;
  // Where the record's allocatable figure comes from.
  std::string allocatable_source;
  // Memory technology, e.g. "HBM3", "GDDR6 (ECC)", "LPDDR5"; may be empty.
  std::string memory_type;
  // One pool shared with the host CPU (Apple silicon).
  bool unified_memory = false;
  // A TPU: its runtime (XLA:TPU) keeps more of the HBM back than a GPU
  // driver does, so it has a rule of its own.
  bool tpu = false;
};

// The capacity fits are decided on.
struct AllocatableMemory {
  // Marketed capacity, bytes.
  double marketed_bytes = 0;
  // What one process can allocate, bytes (<= marketed_bytes).
  double allocatable_bytes = 0;
  // True when derived by a rule (the record has no driver figure, or its
  // figure is unusable); the answer says so.
  bool assumed = false;
  // Where allocatable_bytes comes from, in words: the record's source, or
  // the rule and its evidence.
  std::string source;
};

// The rules, one per kind of memory, for records without a driver figure.
// Each share is the lowest allocatable/marketed ratio observed on a card of
// that kind with a published figure, so the derived capacity errs low (an
// answer that says "fits" when the model does not is the worst error). On
// NVIDIA cards the allocatable figure is CUDA's total (cudaMemGetInfo, as
// vLLM and PyTorch print it), which is 0.5-1 GiB below nvidia-smi's
// memory.total: the driver keeps that memory from every process.
//   unified memory: macOS lets the GPU wire 2/3 of memory up to 36 GiB,
//     3/4 above (Metal's recommendedMaxWorkingSetSize, as llama.cpp logs it:
//     11,453.25 MB on a 16 GiB Mac = 2/3 x 2^34 bytes).
inline constexpr double kUnifiedShareSmall = 2.0 / 3.0;
inline constexpr double kUnifiedShareLarge = 3.0 / 4.0;
inline constexpr double kUnifiedSmallLimitBytes = 36.0 * 1073741824.0;
//   HBM: V100 16 GB, CUDA's total 16,128 MiB of 16,384 with CUDA 11.0 (the
//     lowest of H100 81,079/81,920, H200 143,069/144,384, B200
//     182,631/184,320, A100 80 GB 81,034/81,920, V100 32 GB 32,480/32,768).
inline constexpr double kHbmShare = 16128.0 / 16384.0;
//   TPU (any memory type): XLA:TPU's HBM limit on TPU v4, "of 30.75G hbm"
//     per chip of 32 GiB in its out-of-memory report (EasyDeL issue 166); the
//     lowest of v4 30.75/32, v5e 15.75/16, v5p 95/96. The HBM rule (0.9844)
//     would be 2.4% above what a program may use on a v4.
inline constexpr double kTpuShare = 30.75 / 32.0;
//   GDDR with ECC on (memory type names ECC): T4, CUDA's total 14.555 GiB of
//     16 (PyTorch's 14.56 GiB, Zheng-Chong/CatVTON issue #133; A10 22,516 of
//     24,576 MiB, L4 22.025 of 24 GiB, L40S 45,373 of 49,152 MiB: inline ECC
//     keeps 1/16 back, plus the driver's reservation).
inline constexpr double kGddrEccShare = 14.555 / 16.0;
//   GDDR without ECC: RTX 5090, CUDA's total 32,101 MiB of 32,768 on Linux
//     (RTX 4090 24,081/24,576, RTX 3090 24,238/24,576; Windows' WDDM keeps
//     about a GiB more back, which the rule does not assume).
inline constexpr double kGddrShare = 32101.0 / 32768.0;
//   anything else (no memory type on record, host DDR, on-chip SRAM): the
//     ECC share, the lowest of the rules: the record cannot tell whether ECC
//     or a reservation applies.
inline constexpr double kOtherShare = kGddrEccShare;

// The record's allocatable figure when it has a usable one (positive, at
// most the marketed capacity), else the rule for its kind of memory. A
// figure above the marketed capacity mixes units (GiB against GB): it is
// not used, and the answer says so. memory_bytes <= 0 gives zeros.
AllocatableMemory AllocatableMemoryOf(const DeviceMemoryRecord& record);

}  // namespace modelatlas::estimator
