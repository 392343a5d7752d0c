// Keeps a record cache in front of a shared database (PostgreSQL) current
// with the writes other replicas make: one thread reads the store's change
// log every poll interval, from where it last stopped, page after page to
// its end, and makes the cache forget every record a change names.
//
// The guarantee it gives (README, "Configuration"; docs/ARCHITECTURE.md):
// a write through this replica is seen by it at once (CachedStore drops
// what it writes); a write through another replica within about one poll
// interval, plus the time to read the pages of changes. Writes stay correct
// either way: their revision checks run in the database, not in the cache.
// The cache itself reads the log (CachedStore::CatchUp, which this thread
// calls), also before it reports a revision it has not caught up with
// (GetCatalogInfo, a Watch message): a client told revision R by this
// replica reads nothing older than R from it afterwards.
//
// When the change log cannot be read (the database is down), the cache is
// emptied at every failed poll (logged once per outage), and the follower
// keeps its place and tries again at the next interval: no record outlives
// a poll interval past the last poll that could tell whether it changed.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "catalog-service/store/cached_store.h"
#include "catalog-service/store/store.h"

namespace modelatlas::catalog {

class ChangeFollower {
 public:
  // Makes `cache` follow its change log (CachedStore::FollowChangesAfter)
  // from just after `start_revision`: the store's revision when the cache
  // was created, before anything was read into it, so that no write since is
  // missed. `page_changes`: changes read per query. Not started: Start()
  // starts the thread; tests may call PollOnce().
  ChangeFollower(CachedStore* cache, int64_t start_revision, absl::Duration poll_interval,
                 int page_changes = 1000);
  // Stops the thread and waits for it.
  ~ChangeFollower();
  ChangeFollower(const ChangeFollower&) = delete;
  ChangeFollower& operator=(const ChangeFollower&) = delete;

  void Start();

  // Reads every change after the current position and forgets its record
  // (CachedStore::CatchUp); on an error, empties the cache and keeps the
  // position. Called by the thread; for tests without one.
  absl::Status PollOnce();

  // The revision of the last change applied (start_revision before any):
  // every write at or below it is reflected in the cache. The cache also
  // catches up by itself before it reports a later revision.
  int64_t applied_revision() const { return cache_->followed_revision(); }
  // Successful and failed polls so far.
  int64_t polls() const { return polls_.load(std::memory_order_relaxed); }
  int64_t failed_polls() const { return failed_polls_.load(std::memory_order_relaxed); }

 private:
  void Run();

  CachedStore* const cache_;
  const absl::Duration poll_interval_;
  // Only PollOnce touches it (the thread's, or a test's without a thread).
  bool failing_ = false;  // logged the current outage already
  std::atomic<int64_t> polls_{0};
  std::atomic<int64_t> failed_polls_{0};
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace modelatlas::catalog
