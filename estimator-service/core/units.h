// Unit constants. 1 GB = 1e9 bytes (vendors, Epoch AI); 1 GiB = 2^30 bytes
// (memory allocators, nvidia-smi's "MiB"). The two are never mixed: every
// byte figure in the estimator is in bytes and converted only for display.
#pragma once

#include <cstdint>

namespace modelatlas::estimator {

inline constexpr double kBytesPerGB = 1e9;
inline constexpr double kBytesPerGiB = 1073741824.0;  // 2^30
inline constexpr int64_t kBytesPerGiBInt = int64_t{1} << 30;

inline double BytesToGiB(double bytes) { return bytes / kBytesPerGiB; }
inline double BytesToGB(double bytes) { return bytes / kBytesPerGB; }

}  // namespace modelatlas::estimator
