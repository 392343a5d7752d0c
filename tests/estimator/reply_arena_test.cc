// CpuPool (estimator-service/reply_arena.h): the objects kept from reply to
// reply, given back to the CPU that last used them and taken from the CPU
// that takes them when it has one.
#include "estimator-service/reply_arena.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <memory>
#include <optional>
#include <vector>

namespace modelatlas::estimator {
namespace {

// Runs the test's thread on one CPU while in scope; the thread's CPUs are
// restored when it ends.
class OnCpu {
 public:
  explicit OnCpu(int cpu) {
    ok_ = sched_getaffinity(0, sizeof(saved_), &saved_) == 0;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ok_ = ok_ && sched_setaffinity(0, sizeof(one), &one) == 0 && sched_getcpu() == cpu;
  }
  OnCpu(const OnCpu&) = delete;
  OnCpu& operator=(const OnCpu&) = delete;
  ~OnCpu() { sched_setaffinity(0, sizeof(saved_), &saved_); }
  bool ok() const { return ok_; }

 private:
  cpu_set_t saved_;
  bool ok_ = false;
};

// The CPUs this thread may run on.
std::vector<int> AllowedCpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

TEST(CpuPoolTest, AnEmptyPoolHasNothingToGive) {
  CpuPool<int> pool;
  EXPECT_EQ(pool.Take(), nullptr);
}

TEST(CpuPoolTest, TheLastObjectGivenOnACpuIsTheFirstTakenThere) {
  const std::vector<int> cpus = AllowedCpus();
  ASSERT_FALSE(cpus.empty());
  const OnCpu on(cpus[0]);
  ASSERT_TRUE(on.ok());
  CpuPool<int> pool;
  auto first = std::make_unique<int>(1);
  auto second = std::make_unique<int>(2);
  int* const first_at = first.get();
  int* const second_at = second.get();
  pool.Give(std::move(first));
  pool.Give(std::move(second));
  EXPECT_EQ(pool.Take().get(), second_at);
  EXPECT_EQ(pool.Take().get(), first_at);
  EXPECT_EQ(pool.Take(), nullptr);
}

// Each CPU takes what it gave first; a CPU with nothing of its own takes
// another's rather than leaving the caller to make a new one.
TEST(CpuPoolTest, EachCpuTakesItsOwnFirstThenAnothers) {
  CpuPool<int> pool;
  // Two CPUs this thread may run on whose lists differ.
  std::vector<int> cpus;
  for (int cpu : AllowedCpus()) {
    if (cpus.empty() || cpu % pool.shards() != cpus[0] % pool.shards()) cpus.push_back(cpu);
    if (cpus.size() == 2) break;
  }
  if (cpus.size() < 2) GTEST_SKIP() << "no two CPUs with lists of their own";
  int* given_on[2] = {nullptr, nullptr};
  // The second CPU's given first: one list for all (last in, first out)
  // would hand the first CPU's out first.
  for (int i : {1, 0}) {
    const OnCpu on(cpus[i]);
    ASSERT_TRUE(on.ok());
    auto object = std::make_unique<int>(i);
    given_on[i] = object.get();
    pool.Give(std::move(object));
  }
  {
    const OnCpu on(cpus[1]);
    ASSERT_TRUE(on.ok());
    EXPECT_EQ(pool.Take().get(), given_on[1]);
    // Its own list is empty now: the other CPU's object.
    EXPECT_EQ(pool.Take().get(), given_on[0]);
    EXPECT_EQ(pool.Take(), nullptr);
  }
}

TEST(CpuPoolTest, KeepsAtMostItsLimitInAll) {
  CpuPool<int> pool;
  constexpr size_t kGiven = CpuPool<int>::kMaxKept + 5;
  for (size_t i = 0; i < kGiven; ++i) pool.Give(std::make_unique<int>(static_cast<int>(i)));
  size_t taken = 0;
  while (pool.Take() != nullptr) ++taken;
  EXPECT_EQ(taken, CpuPool<int>::kMaxKept);
  // What was taken is counted out: the pool keeps as many again.
  for (size_t i = 0; i < kGiven; ++i) pool.Give(std::make_unique<int>(static_cast<int>(i)));
  taken = 0;
  while (pool.Take() != nullptr) ++taken;
  EXPECT_EQ(taken, CpuPool<int>::kMaxKept);
}

// A reply's arena block goes back to the pool when the arena ends and is
// the next arena's first block on the same CPU: no block is allocated again.
TEST(CpuPoolTest, ReplyArenaReusesItsBlockOnTheSameCpu) {
  const std::vector<int> cpus = AllowedCpus();
  ASSERT_FALSE(cpus.empty());
  const OnCpu on(cpus[0]);
  ASSERT_TRUE(on.ok());
  std::optional<ReplyArena> first;
  first.emplace();
  void* const first_block = first->arena()->AllocateAligned(8);
  first.reset();
  ReplyArena second;
  EXPECT_EQ(second.arena()->AllocateAligned(8), first_block);
}

}  // namespace
}  // namespace modelatlas::estimator
