#include "catalog-service/store/change_follower.h"

#include "common/server/logging.h"

namespace modelatlas::catalog {

ChangeFollower::ChangeFollower(CachedStore* cache, int64_t start_revision,
                               absl::Duration poll_interval, int page_changes)
    : cache_(cache), poll_interval_(poll_interval) {
  cache_->FollowChangesAfter(start_revision, page_changes);
}

ChangeFollower::~ChangeFollower() {
  stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

void ChangeFollower::Start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
}

void ChangeFollower::Run() {
  while (!stop_.WaitForNotificationWithTimeout(poll_interval_)) {
    // The status is handled (logged, cache emptied) inside.
    PollOnce().IgnoreError();
  }
}

absl::Status ChangeFollower::PollOnce() {
  absl::Status caught_up = cache_->CatchUp();
  if (!caught_up.ok()) {
    failed_polls_.fetch_add(1, std::memory_order_relaxed);
    if (!failing_) {
      MA_LOG_WARNING(
          "record cache: cannot read the change log (%s); the cache is emptied at every "
          "poll until it can",
          caught_up.ToString());
      failing_ = true;
    }
    return caught_up;
  }
  if (failing_) {
    MA_LOG_INFO("record cache: the change log is readable again");
    failing_ = false;
  }
  polls_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

}  // namespace modelatlas::catalog
