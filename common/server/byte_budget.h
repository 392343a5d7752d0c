// A budget of bytes that several callers' buffers share (the catalog's
// import uploads and unread exports): each reserves what it holds and gives
// it back when done, and a reservation past the budget is refused, so the
// memory those buffers take stays bounded whatever the callers do.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status/errors.h"

namespace modelatlas {

class ByteBudget {
 public:
  // `limit_bytes` <= 0: no limit. `flag` names the setting in errors.
  ByteBudget(int64_t limit_bytes, std::string flag)
      : limit_bytes_(limit_bytes), flag_(std::move(flag)) {}

  // Takes `bytes` more; RESOURCE_EXHAUSTED (reason MEMORY_BUDGET, nothing
  // taken) when that would pass the limit. `what` names the buffer.
  absl::Status Reserve(int64_t bytes, const std::string& what) {
    int64_t held = held_.load(std::memory_order_relaxed);
    do {
      if (limit_bytes_ > 0 && held + bytes > limit_bytes_) {
        return WithReason(absl::ResourceExhaustedError(
                              absl::StrCat(what, ": transfers in progress hold ", held, " bytes; ",
                                           bytes, " more would pass the limit of ", limit_bytes_,
                                           " bytes (", flag_, "); retry when they finish")),
                          "MEMORY_BUDGET");
      }
    } while (!held_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
    return absl::OkStatus();
  }
  void Release(int64_t bytes) { held_.fetch_sub(bytes, std::memory_order_relaxed); }

  int64_t held_bytes() const { return held_.load(std::memory_order_relaxed); }
  int64_t limit_bytes() const { return limit_bytes_; }

 private:
  const int64_t limit_bytes_;
  const std::string flag_;
  std::atomic<int64_t> held_{0};
};

}  // namespace modelatlas
