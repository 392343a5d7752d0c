// KeepHeapForLargeReplies: a plan-sized block comes from the heap, not from
// a fresh mmap, and freeing it does not hand the memory back to the kernel.
#include "common/server/allocator.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstring>

namespace modelatlas {
namespace {

// The size of a plan over every accelerator (~0.3 MB, docs/BENCHMARKS.md):
// above glibc's default mmap threshold (128 KiB).
constexpr size_t kReplyBytes = 297040;

TEST(AllocatorTest, AReplySizedBlockComesFromTheHeapAndStaysThereWhenFreed) {
  KeepHeapForLargeReplies();
  const struct mallinfo2 before = mallinfo2();
  char* block = static_cast<char*>(malloc(kReplyBytes));
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kReplyBytes);
  const struct mallinfo2 holding = mallinfo2();
  // With glibc's defaults this block would be one more mmapped region.
  EXPECT_EQ(holding.hblks, before.hblks);
  EXPECT_EQ(holding.hblkhd, before.hblkhd);
  free(block);
  const struct mallinfo2 after = mallinfo2();
  // The freed block stays in the arena (kept, not trimmed): the arena did
  // not shrink below what it held with the block in use.
  EXPECT_GE(after.arena, holding.arena);
  EXPECT_GE(after.fordblks, kReplyBytes);
}

}  // namespace
}  // namespace modelatlas
