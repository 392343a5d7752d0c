// The inverse questions (docs/FORMULAS.md, "The inverse questions"): the
// largest value that fits, found by evaluating the forward answer itself, so
// that the answer is its exact inverse. Plain C++: the forward function is
// the caller's.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator-service/core/number_format.h"

namespace modelatlas::estimator {

// What a search found.
struct LargestFit {
  // The largest x in [1, limit] with fits(x); 0 when fits(1) is false.
  int64_t largest = 0;
  // How many times the forward function was evaluated.
  int evaluations = 0;
};

// The largest x in [1, limit] for which `fits` holds, when `fits` is
// monotone (true up to some x, false after it): gallops 1, 2, 4, ... to the
// first x that does not fit (or the limit), then bisects; about
// 2 x log2(answer) evaluations. An error from `fits` ends the search.
// INVALID_ARGUMENT when limit < 1.
absl::StatusOr<LargestFit> LargestFitting(int64_t limit,
                                          const std::function<absl::StatusOr<bool>(int64_t)>& fits);

// Tokens a sequence of `tokens` occupies in whole KV blocks of
// `block_tokens` tokens: ceil(tokens / block) x block (block_tokens >= 1).
int64_t RoundUpToBlocks(int64_t tokens, int64_t block_tokens);

// Every weight format, highest bits per weight first (their encodings at
// the default GPTQ/AWQ group size); formats with the same bits keep the
// order bf16 before fp16, fp8 before int8. The default preference of
// "the best weight format that fits".
std::vector<NumberFormat> WeightFormatsByPrecision();

}  // namespace modelatlas::estimator
