#include "estimator-service/core/inverse.h"

#include <algorithm>

namespace modelatlas::estimator {

absl::StatusOr<LargestFit> LargestFitting(
    int64_t limit, const std::function<absl::StatusOr<bool>(int64_t)>& fits) {
  if (limit < 1) return absl::InvalidArgumentError("the search limit must be at least 1");
  LargestFit found;
  auto probe = [&](int64_t x) -> absl::StatusOr<bool> {
    ++found.evaluations;
    return fits(x);
  };
  absl::StatusOr<bool> first = probe(1);
  if (!first.ok()) return first.status();
  if (!*first) return found;
  // Invariant: `good` fits; `bad` does not (or is limit + 1, never probed).
  int64_t good = 1;
  int64_t bad = limit + 1;
  while (good < limit) {
    const int64_t next = good > limit / 2 ? limit : good * 2;
    absl::StatusOr<bool> ok = probe(next);
    if (!ok.ok()) return ok.status();
    if (!*ok) {
      bad = next;
      break;
    }
    good = next;
  }
  while (bad - good > 1) {
    const int64_t mid = good + (bad - good) / 2;
    absl::StatusOr<bool> ok = probe(mid);
    if (!ok.ok()) return ok.status();
    (*ok ? good : bad) = mid;
  }
  found.largest = good;
  return found;
}

int64_t RoundUpToBlocks(int64_t tokens, int64_t block_tokens) {
  if (block_tokens <= 1) return tokens;
  return (tokens + block_tokens - 1) / block_tokens * block_tokens;
}

std::vector<NumberFormat> WeightFormatsByPrecision() {
  // Every value of NumberFormat, ties in the order listed.
  std::vector<NumberFormat> formats = {
      NumberFormat::kFp32,       NumberFormat::kBf16,
      NumberFormat::kFp16,       NumberFormat::kGptqInt8,
      NumberFormat::kGgufQ8_0,   NumberFormat::kFp8Block,
      NumberFormat::kFp8,        NumberFormat::kInt8,
      NumberFormat::kGgufQ6K,    NumberFormat::kGgufQ5KM,
      NumberFormat::kGgufQ5K,    NumberFormat::kGgufQ4KM,
      NumberFormat::kGgufQ4K,    NumberFormat::kGgufQ4_0,
      NumberFormat::kGgufIq4Nl,  NumberFormat::kNf4,
      NumberFormat::kNvfp4,      NumberFormat::kMxfp4,
      NumberFormat::kGgufIq4Xs,  NumberFormat::kGptqInt4,
      NumberFormat::kAwqInt4,    NumberFormat::kNf4DoubleQuant,
      NumberFormat::kInt4,       NumberFormat::kGgufQ3KM,
      NumberFormat::kGgufQ3K,    NumberFormat::kGgufIq3Xxs,
      NumberFormat::kGgufQ2K,    NumberFormat::kGgufIq2Xs,
      NumberFormat::kGgufIq2Xxs,
  };
  auto bits = [](NumberFormat format) {
    absl::StatusOr<Encoding> encoding = EncodingOf(format);
    return encoding.ok() ? encoding->bits_per_element : 0.0;
  };
  std::stable_sort(formats.begin(), formats.end(),
                   [&](NumberFormat a, NumberFormat b) { return bits(a) > bits(b); });
  return formats;
}

}  // namespace modelatlas::estimator
