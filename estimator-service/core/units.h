// Unit constants. 1 GB = 1e9 bytes (vendors, Epoch AI); 1 GiB = 2^30 bytes
// (memory allocators, nvidia-smi's "MiB"). The two are never mixed: every
// byte figure in the estimator is in bytes and converted only for display.
#pragma once

#include <cstdint>

#include "common/records/bounds.h"

namespace modelatlas::estimator {

inline constexpr double kBytesPerGB = 1e9;
inline constexpr double kBytesPerGiB = 1073741824.0;  // 2^30
inline constexpr int64_t kBytesPerGiBInt = int64_t{1} << 30;

// The most bytes any answer carries, one figure or a sum of them: far above
// any device or cluster, and below INT64_MAX (9.2e18) with room for a sum of
// lines, so that no byte count an answer holds can leave int64. Beyond it an
// answer is an error naming what made it so large, never a wrapped figure.
inline constexpr double kMaxBytes = 4.0e18;

// Hardware figures beyond any real device: a record past one of them is not
// planned. The bounds are the catalog's (one table, common/records/bounds.h).
inline constexpr double kMaxDeviceMemoryBytes = records::kMaxDeviceMemoryBytes;  // 10 PB
inline constexpr double kMaxDeviceBandwidthBytesPerSecond =
    records::kMaxDeviceBandwidthBytesPerSecond;                      // 1 EB/s
inline constexpr double kMaxDeviceFlops = records::kMaxDeviceFlops;  // FLOP/s
// Parameters of one model, the catalog's bound too.
inline constexpr double kMaxParameters = records::kMaxParameters;
static_assert(kMaxDeviceMemoryBytes < kMaxBytes,
              "a device's memory is a byte count an answer holds");

inline double BytesToGiB(double bytes) { return bytes / kBytesPerGiB; }
inline double BytesToGB(double bytes) { return bytes / kBytesPerGB; }

}  // namespace modelatlas::estimator
