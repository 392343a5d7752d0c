// One suite for every CatalogStore implementation: SQLite (a temporary
// file) and PostgreSQL (a throw-away database), plus each one's own checks.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "catalog-service/store/cached_store.h"
#include "catalog-service/store/migrations.h"
#include "catalog-service/store/postgres_store.h"
#include "catalog-service/store/sqlite_store.h"
#include "tests/testing/postgres.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::catalog {
namespace {

RecordWrite Model(const std::string& id, const std::string& key = "") {
  return RecordWrite{RecordKind::kModel,
                     id,
                     "Display " + id,
                     {key.empty() ? id : key},
                     "{\"name\":\"models/" + id + "\"}"};
}

std::string TempPath(const std::string& tag) {
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (char& c : test) {
    if (c == '/') c = '_';  // parameterized names: "Test/sqlite"
  }
  return ::testing::TempDir() + "/store_test_" + std::to_string(getpid()) + "_" + tag + "_" + test +
         ".db";
}

void RemoveSqlite(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgres") {
      REQUIRE_POSTGRES();
      database_ = std::make_unique<testing::PostgresTestDatabase>();
      ASSERT_TRUE(database_->ok()) << database_->error();
    } else {
      path_ = TempPath("generic");
      RemoveSqlite(path_);
    }
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override {
    store_.reset();
    database_.reset();
    if (!path_.empty()) RemoveSqlite(path_);
  }

  std::unique_ptr<CatalogStore> Open() {
    if (GetParam() == "postgres") {
      auto store = PostgresStore::Open(database_->conninfo(), 4);
      EXPECT_TRUE(store.ok()) << store.status();
      return store.ok() ? std::unique_ptr<CatalogStore>(*std::move(store)) : nullptr;
    }
    // "sqlite" copies every page with read() (the default), "sqlite_mapped"
    // reads through the memory map (--sqlite_mmap_bytes).
    auto store = GetParam() == "sqlite_mapped"
                     ? SqliteStore::Open(path_, 0, SqliteStore::kLargestMmapBytes)
                     : SqliteStore::Open(path_);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return nullptr;
    if (GetParam() == "sqlite_cached") {
      return std::make_unique<CachedStore>(*std::move(store), 1 << 20);
    }
    return std::unique_ptr<CatalogStore>(*std::move(store));
  }

  std::unique_ptr<testing::PostgresTestDatabase> database_;
  std::string path_;
  std::unique_ptr<CatalogStore> store_;
};

TEST_P(StoreTest, NewStoreIsMigratedAndEmpty) {
  EXPECT_EQ(store_->schema_version(), GetParam() == "postgres" ? PostgresMigrations().back().version
                                                               : SqliteMigrations().back().version);
  EXPECT_EQ(store_->backend(), GetParam() == "postgres" ? "postgres" : "sqlite");
  EXPECT_EQ(*store_->Revision(), 0);
  EXPECT_EQ(*store_->Count(RecordKind::kModel), 0);
}

// The shipped dataset's version beside the revision: only raised, not a
// write (the revision stays), kept across a reopen.
TEST_P(StoreTest, TheShippedDatasetVersionOnlyRises) {
  EXPECT_EQ(*store_->ShippedDatasetVersion(), 0);
  ASSERT_TRUE(store_->RaiseShippedDatasetVersion(2).ok());
  EXPECT_EQ(*store_->ShippedDatasetVersion(), 2);
  ASSERT_TRUE(store_->RaiseShippedDatasetVersion(1).ok());
  EXPECT_EQ(*store_->ShippedDatasetVersion(), 2);
  EXPECT_EQ(*store_->Revision(), 0);
  store_.reset();
  store_ = Open();
  EXPECT_EQ(*store_->ShippedDatasetVersion(), 2);
}

TEST_P(StoreTest, WritesSurviveReopeningAndRevisionGrowsPerWrite) {
  EXPECT_EQ(*store_->Insert({Model("a"), Model("b")}), 1);
  EXPECT_EQ(*store_->Insert({Model("c")}), 2);
  store_.reset();  // an open SQLite store holds its file exclusively
  store_ = Open();
  EXPECT_EQ(store_->schema_version(), GetParam() == "postgres" ? PostgresMigrations().back().version
                                                               : SqliteMigrations().back().version);
  EXPECT_EQ(*store_->Revision(), 2);
  EXPECT_EQ(*store_->Count(RecordKind::kModel), 3);
  EXPECT_EQ(*store_->Count(RecordKind::kHardware), 0);
  auto c = store_->Get(RecordKind::kModel, "c");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->revision, 2);
  EXPECT_EQ(c->display_name, "Display c");
  EXPECT_EQ(c->payload, "{\"name\":\"models/c\"}");
  EXPECT_EQ(store_->Get(RecordKind::kModel, "zz").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreTest, DuplicateIdWritesNothing) {
  ASSERT_TRUE(store_->Insert({Model("a")}).ok());
  auto duplicate = store_->Insert({Model("b"), Model("a")});
  EXPECT_EQ(duplicate.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(duplicate.status().message().find("\"a\""), absl::string_view::npos);
  EXPECT_EQ(store_->Get(RecordKind::kModel, "b").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*store_->Revision(), 1);
  EXPECT_EQ(*store_->Count(RecordKind::kModel), 1);
  EXPECT_EQ(store_->ChangesSince(0, 10)->size(), 1u);
}

// A batch of creates of which two ids are taken names the first of them in
// the batch's order and writes nothing: no record, lookup key or change.
TEST_P(StoreTest, TakenIdsAmongManyCreatesNameTheFirstAndWriteNothing) {
  ASSERT_TRUE(store_->Insert({Model("a"), Model("c")}).ok());
  std::vector<RecordWrite> batch;
  for (const char* id : {"b", "d", "c", "e", "a"})
    batch.push_back(Model(id, absl::StrCat("k-", id)));
  auto taken = store_->Insert(batch);
  EXPECT_EQ(taken.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(taken.status().message().find("\"c\""), absl::string_view::npos) << taken.status();
  for (const char* id : {"b", "d", "e"}) {
    EXPECT_EQ(store_->Get(RecordKind::kModel, id).status().code(), absl::StatusCode::kNotFound)
        << id;
    EXPECT_TRUE(store_->FindIdsByLookupKey(RecordKind::kModel, absl::StrCat("k-", id))->empty())
        << id;
  }
  EXPECT_TRUE(store_->FindIdsByLookupKey(RecordKind::kModel, "k-a")->empty());
  EXPECT_EQ(*store_->Revision(), 1);
  EXPECT_EQ(*store_->Count(RecordKind::kModel), 2);
  EXPECT_EQ(store_->ChangesSince(0, 10)->size(), 2u);
  // The same batch without the taken ids is written whole.
  batch.erase(batch.begin() + 4);
  batch.erase(batch.begin() + 2);
  EXPECT_EQ(*store_->Insert(batch), 2);
  EXPECT_EQ(*store_->Count(RecordKind::kModel), 5);
}

// The batched lookups an import makes (GetMany, FindIdsByLookupKeys) give
// what the single reads give: the records that exist among the wanted ids
// (missing and repeated ones too), and every (key, id) pair stored under the
// wanted keys.
TEST_P(StoreTest, BatchedLookupsGiveWhatTheSingleReadsGive) {
  ASSERT_TRUE(
      store_->Insert({Model("a", "shared"), Model("b", "shared"), Model("c", "own-c")}).ok());
  RecordWrite hardware = Model("a", "shared");
  hardware.kind = RecordKind::kHardware;
  ASSERT_TRUE(store_->Insert({hardware}).ok());
  const std::vector<std::string> ids = {"c", "missing", "a", "c", "o'quote"};
  absl::StatusOr<std::vector<StoredRecord>> many = store_->GetMany(RecordKind::kModel, ids);
  ASSERT_TRUE(many.ok()) << many.status();
  std::map<std::string, int64_t> found;
  for (const StoredRecord& record : *many) {
    EXPECT_EQ(record.payload, store_->Get(RecordKind::kModel, record.id)->payload);
    found[record.id] = record.revision;
  }
  EXPECT_EQ(found, (std::map<std::string, int64_t>{{"a", 1}, {"c", 1}}));
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> pairs =
      store_->FindIdsByLookupKeys(RecordKind::kModel, {"own-c", "shared", "none"});
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  std::sort(pairs->begin(), pairs->end());
  EXPECT_EQ(*pairs, (std::vector<std::pair<std::string, std::string>>{
                        {"own-c", "c"}, {"shared", "a"}, {"shared", "b"}}));
  EXPECT_TRUE(store_->GetMany(RecordKind::kHardware, {"b", "c"})->empty());
}

// Revision() is what the last committed write gave (SQLite keeps it in
// memory instead of reading it under the store's lock): a batch refused
// halfway, a stale update and a delete of a missing record leave it, and the
// next write that commits takes the next number, none skipped.
TEST_P(StoreTest, RevisionIsTheLastCommittedWritesAfterRefusedOnes) {
  ASSERT_EQ(*store_->Insert({Model("a")}), 1);
  EXPECT_FALSE(store_->Insert({Model("b"), Model("a")}).ok());
  EXPECT_EQ(*store_->Revision(), 1);
  EXPECT_EQ(store_->Update(Model("a"), 7).status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(*store_->Revision(), 1);
  EXPECT_EQ(store_->Delete(RecordKind::kModel, "missing", 0).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(*store_->Revision(), 1);
  EXPECT_EQ(*store_->Update(Model("a"), 1), 2);
  EXPECT_EQ(*store_->Revision(), 2);
  EXPECT_EQ(*store_->Delete(RecordKind::kModel, "a", 2), 3);
  EXPECT_EQ(*store_->Revision(), 3);
  store_.reset();
  store_ = Open();
  EXPECT_EQ(*store_->Revision(), 3);
}

TEST_P(StoreTest, KindsAreSeparateNamespaces) {
  RecordWrite hardware = Model("x");
  hardware.kind = RecordKind::kHardware;
  ASSERT_TRUE(store_->Insert({Model("x"), hardware}).ok());
  EXPECT_EQ(*store_->Count(RecordKind::kHardware), 1);
  EXPECT_EQ(*store_->Count(RecordKind::kModel), 1);
}

TEST_P(StoreTest, ListPagesInIdOrder) {
  ASSERT_TRUE(store_->Insert({Model("c"), Model("a-1"), Model("a1"), Model("b"), Model("d")}).ok());
  auto first = store_->List(RecordKind::kModel, "", 3);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 3u);
  // Bytewise order on both stores: '-' (0x2d) before '1' (0x31).
  EXPECT_EQ((*first)[0].id, "a-1");
  EXPECT_EQ((*first)[1].id, "a1");
  EXPECT_EQ((*first)[2].id, "b");
  auto rest = store_->List(RecordKind::kModel, "b", 3);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 2u);
  EXPECT_EQ((*rest)[1].id, "d");
}

TEST_P(StoreTest, LookupKeysFindIdsAndFollowUpdates) {
  ASSERT_TRUE(store_->Insert({Model("a", "shared"), Model("b", "shared"), Model("c")}).ok());
  EXPECT_EQ(*store_->FindIdsByLookupKey(RecordKind::kModel, "shared"),
            (std::vector<std::string>{"a", "b"}));
  RecordWrite renamed = Model("b", "other");
  ASSERT_TRUE(store_->Update(renamed, 0).ok());
  EXPECT_EQ(*store_->FindIdsByLookupKey(RecordKind::kModel, "shared"),
            (std::vector<std::string>{"a"}));
  EXPECT_EQ(*store_->FindIdsByLookupKey(RecordKind::kModel, "other"),
            (std::vector<std::string>{"b"}));
  EXPECT_TRUE(store_->FindIdsByLookupKey(RecordKind::kModel, "none")->empty());
}

TEST_P(StoreTest, UpdateChecksTheRevisionInsideTheTransaction) {
  ASSERT_EQ(*store_->Insert({Model("a")}), 1);
  RecordWrite changed = Model("a");
  changed.payload = "{\"changed\":true}";
  EXPECT_EQ(*store_->Update(changed, 1), 2);
  auto stale = store_->Update(changed, 1);
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(*store_->Revision(), 2);  // the refused write took no revision
  EXPECT_EQ(store_->Get(RecordKind::kModel, "a")->payload, "{\"changed\":true}");
  EXPECT_EQ(store_->Update(Model("missing"), 0).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreTest, DeleteWithAndWithoutRevision) {
  ASSERT_TRUE(store_->Insert({Model("a"), Model("b")}).ok());
  EXPECT_EQ(store_->Delete(RecordKind::kModel, "a", 7).status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(*store_->Delete(RecordKind::kModel, "a", 1), 2);
  EXPECT_EQ(*store_->Delete(RecordKind::kModel, "b", 0), 3);
  EXPECT_EQ(store_->Delete(RecordKind::kModel, "b", 0).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(*store_->Count(RecordKind::kModel), 0);
  EXPECT_TRUE(store_->FindIdsByLookupKey(RecordKind::kModel, "a")->empty());
}

TEST_P(StoreTest, ChangeLogListsEveryWriteInRevisionOrder) {
  ASSERT_TRUE(store_->Insert({Model("a"), Model("b")}).ok());
  ASSERT_TRUE(store_->Update(Model("a"), 0).ok());
  ASSERT_TRUE(store_->Delete(RecordKind::kModel, "b", 0).ok());
  auto changes = store_->ChangesSince(0, 100);
  ASSERT_TRUE(changes.ok());
  ASSERT_EQ(changes->size(), 4u);
  EXPECT_EQ((*changes)[0].operation, "create");
  EXPECT_EQ((*changes)[1].id, "b");
  EXPECT_EQ((*changes)[2].operation, "update");
  EXPECT_EQ((*changes)[2].revision, 2);
  EXPECT_EQ((*changes)[3].operation, "delete");
  EXPECT_EQ(store_->ChangesSince(2, 100)->size(), 1u);
  EXPECT_EQ(store_->ChangesSince(0, 2)->size(), 2u);
}

// Pages of the change log resume at a position inside a revision: one
// revision of 600 changes, a straddle (one change, then 500 at the next
// revision), read 500 at a time, gives every change exactly once.
TEST_P(StoreTest, ChangePagesResumeInsideARevision) {
  ASSERT_TRUE(store_->Insert({Model("first")}).ok());
  std::vector<RecordWrite> batch;
  for (int i = 0; i < 500; ++i) batch.push_back(Model("batch-" + std::to_string(i)));
  ASSERT_TRUE(store_->Insert(batch).ok());
  batch.clear();
  for (int i = 0; i < 600; ++i) batch.push_back(Model("atomic-" + std::to_string(i)));
  ASSERT_TRUE(store_->Insert(batch).ok());
  for (int limit : {500, 499, 1, 7}) {
    std::map<std::string, int> seen;
    ChangePosition position;
    int64_t last_revision = 0;
    int pages = 0;
    while (true) {
      absl::StatusOr<std::vector<Change>> page = store_->ChangesAfter(position, limit);
      ASSERT_TRUE(page.ok()) << page.status();
      if (page->empty()) break;
      ASSERT_LE(static_cast<int>(page->size()), limit);
      ++pages;
      for (const Change& change : *page) {
        ++seen[change.id];
        EXPECT_GE(change.revision, last_revision);
        last_revision = change.revision;
      }
      position = PositionAfter(page->back());
    }
    EXPECT_EQ(seen.size(), 1101u) << "limit " << limit;
    for (const auto& [id, count] : seen) EXPECT_EQ(count, 1) << id << ", limit " << limit;
    EXPECT_EQ(pages, (1101 + limit - 1) / limit);
  }
  // A position after a whole revision starts at the next one.
  EXPECT_EQ(store_->ChangesAfter(ChangePosition{2}, 1000)->size(), 600u);
  EXPECT_EQ(store_->ChangesAfter(ChangePosition{1}, 1000)->front().id, "batch-0");
}

TEST_P(StoreTest, ConcurrentUpdatesWithTheSameRevisionOnlyOneWins) {
  ASSERT_TRUE(store_->Insert({Model("hot")}).ok());
  std::atomic<int> won{0}, aborted{0};
  std::vector<std::thread> writers;
  for (int i = 0; i < 8; ++i) {
    writers.emplace_back([&, i] {
      RecordWrite write = Model("hot");
      write.payload = "{\"writer\":" + std::to_string(i) + "}";
      auto result = store_->Update(write, 1);
      if (result.ok()) ++won;
      if (absl::IsAborted(result.status())) ++aborted;
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(aborted.load(), 7);
  EXPECT_EQ(*store_->Revision(), 2);
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest,
                         ::testing::Values("sqlite", "sqlite_mapped", "sqlite_cached", "postgres"),
                         [](const auto& test_info) { return test_info.param; });

// --- SQLite only.

TEST(SqliteStoreTest, UsesWalAndFullSync) {
  const std::string path = TempPath("wal");
  RemoveSqlite(path);
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  RemoveSqlite(path);
}

// Whether `path` is mapped into this process (a line of /proc/self/maps
// ends with its file name: the kernel prints the path without TempDir's
// doubled slashes).
bool MappedIntoThisProcess(const std::string& path) {
  const std::string name = "/" + std::filesystem::path(path).filename().string();
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (absl::EndsWith(line, name)) return true;
  }
  return false;
}

TEST(SqliteStoreTest, CopiesByDefaultAndReadsThroughAMemoryMapWhenAskedTo) {
  const std::string mapped_path = TempPath("mapped");
  const std::string copied_path = TempPath("copied");
  for (const std::string& path : {mapped_path, copied_path}) {
    RemoveSqlite(path);
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Insert({Model("a")}).ok());
  }  // closed: the WAL checkpointed into the file, where the map reads it
  {
    auto mapped = SqliteStore::Open(mapped_path, 0, SqliteStore::kLargestMmapBytes);
    auto copied = SqliteStore::Open(copied_path);
    ASSERT_TRUE(mapped.ok() && copied.ok());
    for (auto* store : {mapped->get(), copied->get()}) {
      absl::StatusOr<SharedRecord> read = store->GetShared(RecordKind::kModel, "a");
      ASSERT_TRUE(read.ok()) << read.status();
      EXPECT_EQ(read->payload(), "{\"name\":\"models/a\"}");
    }
    EXPECT_TRUE(MappedIntoThisProcess(mapped_path));
    EXPECT_FALSE(MappedIntoThisProcess(copied_path));
  }
  EXPECT_FALSE(MappedIntoThisProcess(mapped_path));  // unmapped when closed
  RemoveSqlite(mapped_path);
  RemoveSqlite(copied_path);
}

// A mapped page is the file's: a write goes to the WAL first, and a read
// must take a page from there while it is newer than the file's, then from
// the file again once a checkpoint (here the close's) copied it back.
TEST(SqliteStoreTest, MappedReadsSeeEveryWriteBeforeAndAfterACheckpoint) {
  const std::string path = TempPath("mapped_writes");
  RemoveSqlite(path);
  auto model = [](int i, const std::string& version) {
    RecordWrite write = Model(absl::StrCat("m", i));
    write.payload = absl::StrCat(version, std::string(300, 'x'), i);  // several records a page
    return write;
  };
  constexpr int kRecords = 400;
  std::unique_ptr<SqliteStore> store;
  auto reopen = [&] {
    store.reset();  // closing checkpoints the WAL into the file
    auto opened = SqliteStore::Open(path, 0, SqliteStore::kLargestMmapBytes);
    ASSERT_TRUE(opened.ok()) << opened.status();
    store = *std::move(opened);
  };
  reopen();
  std::vector<RecordWrite> writes;
  for (int i = 0; i < kRecords; ++i) writes.push_back(model(i, "v1"));
  ASSERT_TRUE(store->Insert(writes).ok());
  reopen();
  ASSERT_TRUE(store->Get(RecordKind::kModel, "m0").ok());
  ASSERT_TRUE(MappedIntoThisProcess(path));
  for (int i = 0; i < kRecords; i += 2) ASSERT_TRUE(store->Update(model(i, "v2"), 0).ok());
  for (int i = 1; i < kRecords; i += 4) {
    ASSERT_TRUE(store->Delete(RecordKind::kModel, absl::StrCat("m", i), 0).ok());
  }
  auto check = [&] {
    for (int i = 0; i < kRecords; ++i) {
      absl::StatusOr<SharedRecord> read =
          store->GetShared(RecordKind::kModel, absl::StrCat("m", i));
      if (i % 4 == 1) {
        EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound) << i;
      } else {
        ASSERT_TRUE(read.ok()) << i << ": " << read.status();
        EXPECT_EQ(read->payload(), model(i, i % 2 == 0 ? "v2" : "v1").payload) << i;
      }
    }
  };
  check();  // the rewritten pages from the WAL, the others from the map
  reopen();
  check();  // all from the file, through the map
  store.reset();
  RemoveSqlite(path);
}

TEST(SqliteStoreTest, SecondOpenOfAnOpenFileIsUnavailableNamingIt) {
  const std::string path = TempPath("owned");
  RemoveSqlite(path);
  auto owner = SqliteStore::Open(path);
  ASSERT_TRUE(owner.ok()) << owner.status();
  ASSERT_TRUE((*owner)->Insert({Model("a")}).ok());
  auto second = SqliteStore::Open(path);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find(path), absl::string_view::npos);
  EXPECT_NE(second.status().message().find("in use by another process"), absl::string_view::npos);
  // Not even another process's reader gets in while the store is open ...
  sqlite3* reader = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &reader), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(reader, "SELECT COUNT(*) FROM records", nullptr, nullptr, nullptr),
            SQLITE_BUSY);
  sqlite3_close(reader);
  // ... and the owner is unharmed; once it closes, the file opens again.
  EXPECT_EQ(*(*owner)->Count(RecordKind::kModel), 1);
  owner->reset();
  auto reopened = SqliteStore::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(*(*reopened)->Count(RecordKind::kModel), 1);
  reopened->reset();
  RemoveSqlite(path);
}

TEST(SqliteStoreTest, UnopenablePathIsUnavailable) {
  auto store = SqliteStore::Open("/nonexistent-dir/x/catalog.db");
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find("/nonexistent-dir/x/catalog.db"),
            absl::string_view::npos);
}

TEST(SqliteStoreTest, NewerSchemaThanTheBinaryKnowsIsRefused) {
  const std::string path = TempPath("newer");
  RemoveSqlite(path);
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO schema_migrations VALUES (99, 'future')", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(SqliteStore::Open(path).status().code(), absl::StatusCode::kFailedPrecondition);
  RemoveSqlite(path);
}

TEST(SqliteStoreTest, OlderSchemaIsMigratedForwardKeepingData) {
  const std::string path = TempPath("older");
  RemoveSqlite(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const Migration& first = SqliteMigrations().front();
  const std::string setup =
      "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL);" +
      first.sql +
      "INSERT INTO schema_migrations VALUES (1, 'v1');"
      "INSERT INTO records VALUES ('model', 'kept', 'Kept', x'0a00', 1);"
      "UPDATE catalog_state SET revision = 1;";
  ASSERT_EQ(sqlite3_exec(db, setup.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->schema_version(), static_cast<int>(SqliteMigrations().size()));
  EXPECT_TRUE((*store)->Get(RecordKind::kModel, "kept").ok());
  EXPECT_EQ(*(*store)->Revision(), 1);
  // Added by migration 6: 0 for a catalog from before it, which the next
  // start's refresh walks and raises.
  EXPECT_EQ(*(*store)->ShippedDatasetVersion(), 0);
  RemoveSqlite(path);
}

// --- PostgreSQL only.

TEST(PostgresStoreTest, UnreachableServerIsUnavailable) {
  auto store = PostgresStore::Open("host=127.0.0.1 port=1 connect_timeout=2", 1);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
}

TEST(PostgresStoreTest, TwoStoresOnOneDatabaseSeeEachOthersWrites) {
  REQUIRE_POSTGRES();
  testing::PostgresTestDatabase database;
  ASSERT_TRUE(database.ok()) << database.error();
  auto first = PostgresStore::Open(database.conninfo(), 2);
  auto second = PostgresStore::Open(database.conninfo(), 2);  // migrations already applied
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE((*first)->Insert({Model("from-first")}).ok());
  EXPECT_TRUE((*second)->Get(RecordKind::kModel, "from-first").ok());
  EXPECT_EQ((*second)->ChangesSince(0, 10)->size(), 1u);
  EXPECT_EQ((*second)->Update(Model("from-first"), 1).status().code(), absl::StatusCode::kOk);
  EXPECT_EQ((*first)->Update(Model("from-first"), 1).status().code(), absl::StatusCode::kAborted);
}

// A bulk load drops the four order indexes until the last one begun in
// the process ends; a store dropped in between (a crash) leaves them to the
// next Open, which creates them again.
TEST(PostgresStoreTest, BulkLoadDropsTheOrderIndexesUntilTheLastEndsOrTheNextOpen) {
  REQUIRE_POSTGRES();
  testing::PostgresTestDatabase database;
  ASSERT_TRUE(database.ok()) << database.error();
  const std::vector<std::string> all = {"records_by_parameters", "records_by_training_compute_flop",
                                        "records_by_publication_date", "records_by_display_name"};
  {
    auto store = PostgresStore::Open(database.conninfo(), 2);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_TRUE((*store)->MissingOrderIndexes()->empty());
    ASSERT_TRUE(*(*store)->BeginBulkLoad());
    ASSERT_TRUE(*(*store)->BeginBulkLoad());
    EXPECT_EQ(*(*store)->MissingOrderIndexes(), all);
    ASSERT_TRUE((*store)->Insert({Model("a")}).ok());
    int steps = 0;
    ASSERT_TRUE((*store)->EndBulkLoad([&](absl::Duration) { ++steps; }).ok());
    EXPECT_EQ(steps, 0);  // the other bulk load still runs
    EXPECT_EQ(*(*store)->MissingOrderIndexes(), all);
    ASSERT_TRUE((*store)->EndBulkLoad([&](absl::Duration) { ++steps; }).ok());
    EXPECT_EQ(steps, 4);
    EXPECT_TRUE((*store)->MissingOrderIndexes()->empty());
    // Begun and never ended: the process "dies".
    ASSERT_TRUE(*(*store)->BeginBulkLoad());
    EXPECT_EQ(*(*store)->MissingOrderIndexes(), all);
  }
  auto reopened = PostgresStore::Open(database.conninfo(), 2);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_TRUE((*reopened)->MissingOrderIndexes()->empty());
  EXPECT_EQ((*reopened)->Get(RecordKind::kModel, "a")->display_name, "Display a");
}

// Replicas that open the database at once after a crash left the order
// indexes dropped each find them missing: they create them in turn, and
// every open succeeds.
TEST(PostgresStoreTest, ReplicasOpeningAtOnceCreateTheDroppedIndexesInTurn) {
  REQUIRE_POSTGRES();
  testing::PostgresTestDatabase database;
  ASSERT_TRUE(database.ok()) << database.error();
  {
    auto store = PostgresStore::Open(database.conninfo(), 1);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Insert({Model("a"), Model("b")}).ok());
    ASSERT_TRUE(*(*store)->BeginBulkLoad());
    ASSERT_EQ((*store)->MissingOrderIndexes()->size(), 4u);
  }
  constexpr int kReplicas = 4;
  std::vector<absl::Status> opened(kReplicas);
  std::vector<std::thread> threads;
  for (int i = 0; i < kReplicas; ++i) {
    threads.emplace_back(
        [&, i] { opened[i] = PostgresStore::Open(database.conninfo(), 1).status(); });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kReplicas; ++i) EXPECT_TRUE(opened[i].ok()) << i << ": " << opened[i];
  auto store = PostgresStore::Open(database.conninfo(), 1);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->MissingOrderIndexes()->empty());
}

}  // namespace
}  // namespace modelatlas::catalog
