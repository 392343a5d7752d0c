#ifndef MODELATLAS_COMMON_SERVER_ALLOCATOR_H_
#define MODELATLAS_COMMON_SERVER_ALLOCATOR_H_

#include <cstddef>

namespace modelatlas {

// Blocks below this size come from the heap, not from a fresh mmap.
inline constexpr size_t kHeapServedBelowBytes = size_t{8} << 20;  // 8 MiB
// Freed memory at the top of the heap is kept up to this size.
inline constexpr size_t kFreedHeapKeptBytes = size_t{16} << 20;  // 16 MiB

// Sets glibc's allocator for a server whose replies run to hundreds of KB
// (a plan over every accelerator is ~0.3 MB, built and freed per call).
// With glibc's defaults, blocks of 128 KiB and more are mmapped and the
// freed top of the heap is returned to the kernel, so every such call pays
// page faults and zeroing again, by an amount that depends on the
// allocator's history (its mmap threshold moves): echo's CPU per 297 KB
// reply measured 142-188 us with 24-54 page faults per call across fresh
// processes, and 109-117 us with none under these settings
// (docs/BENCHMARKS.md, session 17, branch s17-plan). Costs up to
// kFreedHeapKeptBytes of resident memory held for reuse. The estimator and
// the echo server it is measured against both call it, so that the
// comparison is between the same allocator.
void KeepHeapForLargeReplies();

}  // namespace modelatlas

#endif  // MODELATLAS_COMMON_SERVER_ALLOCATOR_H_
