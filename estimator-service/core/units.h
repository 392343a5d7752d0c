// Unit constants. 1 GB = 1e9 bytes (vendors, Epoch AI); 1 GiB = 2^30 bytes
// (memory allocators, nvidia-smi's "MiB"). The two are never mixed: every
// byte figure in the estimator is in bytes and converted only for display.
#pragma once

#include <cstdint>

namespace modelatlas::estimator {

inline constexpr double kBytesPerGB = 1e9;
inline constexpr double kBytesPerGiB = 1073741824.0;  // 2^30
inline constexpr int64_t kBytesPerGiBInt = int64_t{1} << 30;

// The most bytes any answer carries, one figure or a sum of them: far above
// any device or cluster, and below INT64_MAX (9.2e18) with room for a sum of
// lines, so that no byte count an answer holds can leave int64. Beyond it an
// answer is an error naming what made it so large, never a wrapped figure.
inline constexpr double kMaxBytes = 4.0e18;

// Hardware figures beyond any real device (the largest wafer-scale systems
// are 1e3 to 1e4 times smaller): a record past one of them is not planned.
inline constexpr double kMaxDeviceMemoryBytes = 1e16;              // 10 PB
inline constexpr double kMaxDeviceBandwidthBytesPerSecond = 1e18;  // 1 EB/s
inline constexpr double kMaxDeviceFlops = 1e20;                    // FLOP/s

inline double BytesToGiB(double bytes) { return bytes / kBytesPerGiB; }
inline double BytesToGB(double bytes) { return bytes / kBytesPerGB; }

}  // namespace modelatlas::estimator
