#include "common/server/allocator.h"

#include <malloc.h>

namespace modelatlas {

void KeepHeapForLargeReplies() {
  // Setting either disables glibc's dynamic adjustment of both.
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapServedBelowBytes));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(kFreedHeapKeptBytes));
}

}  // namespace modelatlas
