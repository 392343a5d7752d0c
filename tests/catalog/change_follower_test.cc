// The record cache in front of a shared database: the change follower makes
// it forget what other replicas write, page after page of the change log,
// and empties it when the log cannot be read. On PostgreSQL: two stores on
// one database as two replicas.
#include "catalog-service/store/change_follower.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "catalog-service/store/cached_store.h"
#include "catalog-service/store/forwarding_store.h"
#include "catalog-service/store/postgres_store.h"
#include "catalog-service/store/sqlite_store.h"
#include "tests/testing/postgres.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::catalog {
namespace {

RecordWrite Record(const std::string& id, const std::string& payload) {
  return RecordWrite{RecordKind::kModel, id, "Display " + id, {"display " + id}, payload};
}

// Counts the change-log queries that reach the store and can fail them.
class LogCountingStore : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  std::atomic<int> change_queries{0};
  std::atomic<int> revision_queries{0};
  std::atomic<bool> fail_changes{false};
  // Run once, inside the next change-log query.
  std::function<void()> during_changes;

  absl::StatusOr<std::vector<Change>> ChangesAfter(const ChangePosition& after,
                                                   int limit) override {
    ++change_queries;
    if (during_changes) std::exchange(during_changes, nullptr)();
    if (fail_changes) return absl::UnavailableError("database down (test)");
    return ForwardingStore::ChangesAfter(after, limit);
  }
  absl::StatusOr<int64_t> Revision() override {
    ++revision_queries;
    return ForwardingStore::Revision();
  }
};

class ChangeFollowerPagingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto sqlite = SqliteStore::Open(":memory:");
    ASSERT_TRUE(sqlite.ok()) << sqlite.status();
    auto counting = std::make_unique<LogCountingStore>(*std::move(sqlite));
    log_ = counting.get();
    cache_ = std::make_unique<CachedStore>(std::move(counting), 1 << 20);
  }

  std::string PayloadOf(const std::string& id) {
    absl::StatusOr<StoredRecord> record = cache_->Get(RecordKind::kModel, id);
    return record.ok() ? record->payload : record.status().ToString();
  }

  // Reads every id through the cache, so that each is cached.
  void ReadAll(const std::vector<std::string>& ids) {
    for (const std::string& id : ids) ASSERT_TRUE(cache_->Get(RecordKind::kModel, id).ok()) << id;
  }

  LogCountingStore* log_ = nullptr;
  std::unique_ptr<CachedStore> cache_;
};

// 30 changes after the start (25 in one revision, then 5 in their own) in
// pages of 10: all forgotten, the record written before the start kept.
TEST_F(ChangeFollowerPagingTest, PagesThroughMoreChangesThanOnePage) {
  absl::StatusOr<int64_t> start = cache_->Insert({Record("kept", "before the start")});
  ASSERT_TRUE(start.ok()) << start.status();
  std::vector<std::string> ids = {"kept"};
  std::vector<RecordWrite> batch;
  for (int i = 0; i < 25; ++i) {
    ids.push_back("batch-" + std::to_string(i));
    batch.push_back(Record(ids.back(), "one revision"));
  }
  ASSERT_TRUE(cache_->Insert(batch).ok());
  absl::StatusOr<int64_t> last = 0;
  for (int i = 0; i < 5; ++i) {
    ids.push_back("single-" + std::to_string(i));
    last = cache_->Insert({Record(ids.back(), "own revision")});
    ASSERT_TRUE(last.ok()) << last.status();
  }
  ReadAll(ids);
  ASSERT_EQ(cache_->stats().records, 31);

  ChangeFollower follower(cache_.get(), *start, absl::Hours(1), /*page_changes=*/10);
  ASSERT_TRUE(follower.PollOnce().ok());
  // Three full pages, then an empty one that ends the log.
  EXPECT_EQ(log_->change_queries.load(), 4);
  EXPECT_EQ(cache_->stats().records, 1);
  EXPECT_EQ(follower.applied_revision(), *last);
  absl::StatusOr<StoredRecord> kept = cache_->Get(RecordKind::kModel, "kept");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(cache_->stats().hits, 1);  // still cached: its write was not after the start

  // Nothing new: one query, nothing forgotten.
  ReadAll(ids);
  ASSERT_TRUE(follower.PollOnce().ok());
  EXPECT_EQ(log_->change_queries.load(), 5);
  EXPECT_EQ(cache_->stats().records, 31);
  EXPECT_EQ(follower.applied_revision(), *last);
  EXPECT_EQ(follower.polls(), 2);
}

TEST_F(ChangeFollowerPagingTest, UnreadableLogEmptiesTheCacheAndKeepsItsPlace) {
  absl::StatusOr<int64_t> start = cache_->Insert({Record("a", "a1")});
  ASSERT_TRUE(start.ok());
  ChangeFollower follower(cache_.get(), *start, absl::Hours(1), /*page_changes=*/10);
  absl::StatusOr<int64_t> written = cache_->Insert({Record("b", "b1")});
  ASSERT_TRUE(written.ok());
  ReadAll({"a", "b"});
  ASSERT_EQ(cache_->stats().records, 2);

  log_->fail_changes = true;
  absl::Status failed = follower.PollOnce();
  EXPECT_TRUE(absl::IsUnavailable(failed)) << failed;
  EXPECT_EQ(cache_->stats().records, 0);
  EXPECT_EQ(cache_->stats().bytes, cache_->stats().index_bytes);  // only the empty tables
  EXPECT_EQ(follower.failed_polls(), 1);
  EXPECT_EQ(follower.applied_revision(), *start);

  // Readable again: the change it had not read is applied from where it was.
  log_->fail_changes = false;
  ReadAll({"a", "b"});
  ASSERT_TRUE(follower.PollOnce().ok());
  EXPECT_EQ(follower.applied_revision(), *written);
  EXPECT_EQ(cache_->stats().records, 1);  // "b" forgotten, "a" kept
}

// The other replica's write (straight to the store behind the cache) and no
// poll yet: the cache reports the write's revision only once it has read
// the log up to it and forgotten the record, so that a client told that
// revision (GetCatalogInfo, a List page, a Watch message) never reads the
// record from before it. Before, it reported the store's revision at once
// and went on answering "v1" until the next poll.
TEST_F(ChangeFollowerPagingTest, ARevisionIsReportedOnlyOnceTheCacheHasCaughtUpWithIt) {
  absl::StatusOr<int64_t> start = cache_->Insert({Record("m", "v1")});
  ASSERT_TRUE(start.ok());
  ChangeFollower follower(cache_.get(), *start, absl::Hours(1), /*page_changes=*/10);
  ReadAll({"m"});
  absl::StatusOr<int64_t> written = log_->Update(Record("m", "v2"), *start);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(PayloadOf("m"), "v1");  // cached, and nothing says otherwise yet

  absl::StatusOr<int64_t> reported = cache_->Revision();
  ASSERT_TRUE(reported.ok());
  EXPECT_EQ(*reported, *written);
  EXPECT_EQ(follower.applied_revision(), *written);
  EXPECT_EQ(PayloadOf("m"), "v2");
  // Caught up: the next revision asked for reads no more of the log.
  const int queries = log_->change_queries.load();
  ASSERT_TRUE(cache_->Revision().ok());
  EXPECT_EQ(log_->change_queries.load(), queries);
}

// Many callers asking for one revision the cache has not caught up with
// (every Watch stream polling after a write): the first reads the log, the
// others wait for it and read nothing. The second caller is let in while the
// first is inside its query; had it read the log again, the count would be 2.
TEST_F(ChangeFollowerPagingTest, CallersWaitingForOneCatchUpDoNotReadTheLogAgain) {
  absl::StatusOr<int64_t> start = cache_->Insert({Record("m", "v1")});
  ASSERT_TRUE(start.ok());
  ChangeFollower follower(cache_.get(), *start, absl::Hours(1), /*page_changes=*/10);
  absl::StatusOr<int64_t> written = log_->Update(Record("m", "v2"), *start);
  ASSERT_TRUE(written.ok()) << written.status();

  std::thread second;
  absl::StatusOr<int64_t> second_revision = 0;
  log_->during_changes = [&] {
    const int before = log_->revision_queries.load();
    second = std::thread([&] { second_revision = cache_->Revision(); });
    // It has read the store's revision and now waits for this catch-up
    // (give it a moment to reach the lock; earlier or later, it must not
    // query the log).
    while (log_->revision_queries.load() == before) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  };
  absl::StatusOr<int64_t> first_revision = cache_->Revision();
  second.join();
  ASSERT_TRUE(first_revision.ok());
  ASSERT_TRUE(second_revision.ok());
  EXPECT_EQ(*first_revision, *written);
  EXPECT_EQ(*second_revision, *written);
  EXPECT_EQ(log_->change_queries.load(), 1);
  EXPECT_EQ(follower.applied_revision(), *written);
}

// A change read through the cache (a Watch stream's) is forgotten before it
// is returned: the record the watcher is sent for it is the one written, not
// the cached one (which an estimator following this replica kept).
TEST_F(ChangeFollowerPagingTest, ChangesReadThroughTheCacheAreForgottenBeforeTheyAreReturned) {
  absl::StatusOr<int64_t> start = cache_->Insert({Record("m", "v1")});
  ASSERT_TRUE(start.ok());
  ChangeFollower follower(cache_.get(), *start, absl::Hours(1), /*page_changes=*/10);
  ReadAll({"m"});
  absl::StatusOr<int64_t> written = log_->Update(Record("m", "v2"), *start);
  ASSERT_TRUE(written.ok()) << written.status();

  absl::StatusOr<std::vector<Change>> changes = cache_->ChangesAfter(ChangePosition{*start}, 10);
  ASSERT_TRUE(changes.ok()) << changes.status();
  ASSERT_EQ(changes->size(), 1u);
  EXPECT_EQ(changes->front().id, "m");
  EXPECT_EQ(PayloadOf("m"), "v2");
  EXPECT_EQ(follower.applied_revision(), *written);
}

// Without a follower (the SQLite store, which no one else writes) the cache
// reports the store's revision without reading the change log.
TEST_F(ChangeFollowerPagingTest, ACacheNotFollowingNeverReadsTheLogForARevision) {
  ASSERT_TRUE(cache_->Insert({Record("m", "v1")}).ok());
  ASSERT_TRUE(cache_->Revision().ok());
  ASSERT_TRUE(cache_->ChangesAfter(ChangePosition{0}, 10).ok());
  EXPECT_EQ(log_->change_queries.load(), 1);  // the one asked for, nothing more
}

// A follower waiting out a long interval stops at once when destroyed (a
// hang here would time the test out).
TEST_F(ChangeFollowerPagingTest, StopsOnDestructionWithoutWaitingForItsInterval) {
  auto follower = std::make_unique<ChangeFollower>(cache_.get(), 0, absl::Hours(1));
  follower->Start();
  follower.reset();
  EXPECT_EQ(log_->change_queries.load(), 0);  // its first poll was an hour away
}

// Two replicas on one PostgreSQL database: `cached_` with the record cache
// and its follower, `other_` without.
class TwoReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_POSTGRES();
    database_ = std::make_unique<testing::PostgresTestDatabase>();
    ASSERT_TRUE(database_->ok()) << database_->error();
    auto first = PostgresStore::Open(database_->conninfo(), 2);
    ASSERT_TRUE(first.ok()) << first.status();
    auto second = PostgresStore::Open(database_->conninfo(), 2);
    ASSERT_TRUE(second.ok()) << second.status();
    other_ = *std::move(second);
    cached_ = std::make_unique<CachedStore>(*std::move(first), 1 << 20);
    absl::StatusOr<int64_t> start = cached_->Revision();
    ASSERT_TRUE(start.ok()) << start.status();
    follower_ = std::make_unique<ChangeFollower>(cached_.get(), *start, absl::Milliseconds(20));
    follower_->Start();
  }
  void TearDown() override {
    follower_.reset();
    cached_.reset();
    other_.reset();
    database_.reset();
  }

  // Waits until the follower has applied `revision` (by its own count, not
  // a fixed sleep); false after 30 s.
  bool WaitApplied(int64_t revision) {
    for (int i = 0; i < 3000 && follower_->applied_revision() < revision; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return follower_->applied_revision() >= revision;
  }

  std::string PayloadOf(const std::string& id) {
    absl::StatusOr<StoredRecord> record = cached_->Get(RecordKind::kModel, id);
    return record.ok() ? record->payload : record.status().ToString();
  }

  std::unique_ptr<testing::PostgresTestDatabase> database_;
  std::unique_ptr<CatalogStore> other_;
  std::unique_ptr<CachedStore> cached_;
  std::unique_ptr<ChangeFollower> follower_;
};

TEST_F(TwoReplicasTest, WritesThroughTheOtherReplicaAreSeenAfterThePoll) {
  absl::StatusOr<int64_t> created = other_->Insert({Record("m", "v1")});
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_TRUE(WaitApplied(*created));
  EXPECT_EQ(PayloadOf("m"), "v1");
  EXPECT_EQ(PayloadOf("m"), "v1");
  EXPECT_EQ(cached_->stats().hits, 1);  // the second read came from the cache

  absl::StatusOr<int64_t> updated = other_->Update(Record("m", "v2"), *created);
  ASSERT_TRUE(updated.ok()) << updated.status();
  ASSERT_TRUE(WaitApplied(*updated));
  EXPECT_EQ(PayloadOf("m"), "v2");

  absl::StatusOr<int64_t> deleted = other_->Delete(RecordKind::kModel, "m", *updated);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  ASSERT_TRUE(WaitApplied(*deleted));
  absl::StatusOr<StoredRecord> gone = cached_->Get(RecordKind::kModel, "m");
  EXPECT_TRUE(absl::IsNotFound(gone.status())) << gone.status();
}

TEST_F(TwoReplicasTest, WritesThroughTheCachedReplicaAreSeenAtOnce) {
  absl::StatusOr<int64_t> created = cached_->Insert({Record("n", "v1")});
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(PayloadOf("n"), "v1");
  EXPECT_EQ(PayloadOf("n"), "v1");  // cached
  absl::StatusOr<int64_t> updated = cached_->Update(Record("n", "v2"), *created);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(PayloadOf("n"), "v2");  // no wait for the follower
  ASSERT_TRUE(cached_->Delete(RecordKind::kModel, "n", *updated).ok());
  EXPECT_TRUE(absl::IsNotFound(cached_->Get(RecordKind::kModel, "n").status()));
}

// The database checks a stale etag even when the cached replica read the
// record before the other replica's write reached its cache.
TEST_F(TwoReplicasTest, StaleWritesAreRefusedByTheDatabase) {
  absl::StatusOr<int64_t> created = other_->Insert({Record("s", "v1")});
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_TRUE(WaitApplied(*created));
  EXPECT_EQ(PayloadOf("s"), "v1");
  ASSERT_TRUE(other_->Update(Record("s", "v2"), *created).ok());
  absl::StatusOr<int64_t> stale = cached_->Update(Record("s", "v3"), *created);
  EXPECT_TRUE(absl::IsAborted(stale.status())) << stale.status();
}

}  // namespace
}  // namespace modelatlas::catalog
