#include "catalog-service/store/change_follower.h"

#include <utility>
#include <vector>

#include "common/server/logging.h"

namespace modelatlas::catalog {

ChangeFollower::ChangeFollower(CachedStore* cache, int64_t start_revision,
                               absl::Duration poll_interval, int page_changes)
    : cache_(cache),
      poll_interval_(poll_interval),
      page_changes_(page_changes),
      position_{start_revision},
      applied_revision_(start_revision) {}

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
  // Pages until one comes back short: the log's end as of that query. The
  // applied revision moves only then: a revision's changes (an import's
  // thousands) may span pages.
  int64_t last_revision = applied_revision_.load(std::memory_order_relaxed);
  while (true) {
    absl::StatusOr<std::vector<Change>> page = cache_->ChangesAfter(position_, page_changes_);
    if (!page.ok()) {
      cache_->Clear();
      failed_polls_.fetch_add(1, std::memory_order_relaxed);
      if (!failing_) {
        MA_LOG_WARNING(
            "record cache: cannot read the change log (%s); the cache is emptied at every "
            "poll until it can",
            page.status().ToString());
        failing_ = true;
      }
      return page.status();
    }
    if (!page->empty()) {
      cache_->ForgetChanged(*page);
      position_ = PositionAfter(page->back());
      last_revision = page->back().revision;
    }
    if (static_cast<int>(page->size()) < page_changes_) break;
  }
  applied_revision_.store(last_revision, std::memory_order_release);
  if (failing_) {
    MA_LOG_INFO("record cache: the change log is readable again");
    failing_ = false;
  }
  polls_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

}  // namespace modelatlas::catalog
