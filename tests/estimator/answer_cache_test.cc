#include "estimator-service/cache/answer_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace modelatlas::estimator {
namespace {

std::shared_ptr<const std::string> Answer(std::string bytes) {
  return std::make_shared<const std::string>(std::move(bytes));
}

TEST(AnswerCacheTest, RepliesTheSameRequestAtTheSameRevisionOnly) {
  AnswerCache cache(1 << 20);
  EXPECT_EQ(cache.Find("Estimate", "req", 7), nullptr);
  cache.Put("Estimate", "req", 7, Answer("answer at 7"));
  auto hit = cache.Find("Estimate", "req", 7);
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(*hit, "answer at 7");
  // Another method, other bytes, another revision: not this answer.
  EXPECT_EQ(cache.Find("Plan", "req", 7), nullptr);
  EXPECT_EQ(cache.Find("Estimate", "req2", 7), nullptr);
  EXPECT_EQ(cache.Find("Estimate", "req", 8), nullptr);
  // The stale entry was dropped when met.
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(cache.misses(), 4);
}

TEST(AnswerCacheTest, MethodAndRequestCannotBeConfusedWhateverTheirBytes) {
  AnswerCache cache(1 << 20);
  const std::string with_nul("a\0b", 3);
  cache.Put("M", with_nul, 1, Answer("x"));
  EXPECT_EQ(cache.Find("M", "a", 1), nullptr);
  EXPECT_NE(cache.Find("M", with_nul, 1), nullptr);
  cache.Put("Ma", "b", 1, Answer("y"));
  EXPECT_EQ(*cache.Find("Ma", "b", 1), "y");
  EXPECT_EQ(*cache.Find("M", with_nul, 1), "x");
}

TEST(AnswerCacheTest, StaysWithinItsBytesDroppingTheLeastRecentlyUsed) {
  AnswerCache cache(4096);
  const std::string kilobyte(1000, 'k');
  for (int i = 0; i < 10; ++i) {
    cache.Put("M", std::to_string(i), 1, Answer(kilobyte));
    EXPECT_LE(cache.size_bytes(), 4096u);
    ASSERT_NE(cache.Find("M", "0", 1), nullptr) << i;  // kept in use: never the one dropped
  }
  EXPECT_EQ(cache.entries(), 3u);  // 3 x (1,000 + key + 128) fit in 4,096
  EXPECT_NE(cache.Find("M", "9", 1), nullptr);
  EXPECT_EQ(cache.Find("M", "1", 1), nullptr);
  // An answer larger than the whole cache is not kept, and drops nothing.
  cache.Put("M", "huge", 1, Answer(std::string(5000, 'h')));
  EXPECT_EQ(cache.Find("M", "huge", 1), nullptr);
  EXPECT_EQ(cache.entries(), 3u);
}

TEST(AnswerCacheTest, CapacityZeroKeepsNothing) {
  AnswerCache cache(0);
  cache.Put("M", "r", 1, Answer("a"));
  EXPECT_EQ(cache.Find("M", "r", 1), nullptr);
  EXPECT_EQ(cache.size_bytes(), 0u);
}

TEST(AnswerCacheTest, ConcurrentCallersSeeWholeAnswers) {
  AnswerCache cache(64 << 10);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string request = std::to_string(i % 50);
        if (auto hit = cache.Find("M", request, 1)) {
          ASSERT_EQ(*hit, "answer " + request);
        } else {
          cache.Put("M", request, 1, Answer("answer " + request));
        }
        if (t == 0 && i % 500 == 0) cache.Find("M", request, 2);  // a stale entry dropped
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(cache.size_bytes(), 64u << 10);
  EXPECT_GT(cache.hits(), 0);
}

}  // namespace
}  // namespace modelatlas::estimator
