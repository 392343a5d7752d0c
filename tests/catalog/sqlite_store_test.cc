#include "catalog-service/store/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>

namespace modelatlas::catalog {
namespace {

RecordWrite Model(const std::string& id, const std::string& key = "") {
  return RecordWrite{RecordKind::kModel,
                     id,
                     "Display " + id,
                     {key.empty() ? id : key},
                     "{\"name\":\"models/" + id + "\"}"};
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/store_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    Remove();
  }
  void TearDown() override { Remove(); }
  void Remove() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }
  std::string path_;
};

TEST_F(SqliteStoreTest, NewDatabaseIsMigratedAndEmpty) {
  auto store = SqliteStore::Open(path_);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->schema_version(), 1);
  EXPECT_EQ((*store)->backend(), "sqlite");
  EXPECT_EQ(*(*store)->Revision(), 0);
  EXPECT_EQ(*(*store)->Count(RecordKind::kModel), 0);
}

TEST_F(SqliteStoreTest, WritesSurviveReopeningAndRevisionGrowsPerWrite) {
  {
    auto store = SqliteStore::Open(path_);
    ASSERT_TRUE(store.ok());
    EXPECT_EQ(*(*store)->Insert({Model("a"), Model("b")}), 1);
    EXPECT_EQ(*(*store)->Insert({Model("c")}), 2);
  }
  auto store = SqliteStore::Open(path_);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->schema_version(), 1);
  EXPECT_EQ(*(*store)->Revision(), 2);
  EXPECT_EQ(*(*store)->Count(RecordKind::kModel), 3);
  EXPECT_EQ(*(*store)->Count(RecordKind::kHardware), 0);
  auto c = (*store)->Get(RecordKind::kModel, "c");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->revision, 2);
  EXPECT_EQ(c->display_name, "Display c");
  EXPECT_EQ(c->payload_json, "{\"name\":\"models/c\"}");
}

TEST_F(SqliteStoreTest, DuplicateIdWritesNothing) {
  auto store = SqliteStore::Open(path_);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Insert({Model("a")}).ok());
  auto duplicate = (*store)->Insert({Model("b"), Model("a")});
  EXPECT_EQ(duplicate.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(duplicate.status().message().find("\"a\""), absl::string_view::npos);
  // Neither "b" nor a new revision: the batch was rolled back whole.
  EXPECT_EQ((*store)->Get(RecordKind::kModel, "b").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*(*store)->Revision(), 1);
  EXPECT_EQ(*(*store)->Count(RecordKind::kModel), 1);
}

TEST_F(SqliteStoreTest, KindsAreSeparateNamespaces) {
  auto store = SqliteStore::Open(path_);
  ASSERT_TRUE(store.ok());
  RecordWrite hardware = Model("x");
  hardware.kind = RecordKind::kHardware;
  ASSERT_TRUE((*store)->Insert({Model("x"), hardware}).ok());
  EXPECT_EQ(*(*store)->Count(RecordKind::kHardware), 1);
  EXPECT_EQ(*(*store)->Count(RecordKind::kModel), 1);
}

TEST_F(SqliteStoreTest, ListPagesInIdOrder) {
  auto store = SqliteStore::Open(path_);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Insert({Model("c"), Model("a"), Model("b"), Model("d")}).ok());
  auto first = (*store)->List(RecordKind::kModel, "", 3);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 3u);
  EXPECT_EQ((*first)[0].id, "a");
  EXPECT_EQ((*first)[2].id, "c");
  auto rest = (*store)->List(RecordKind::kModel, "c", 3);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].id, "d");
}

TEST_F(SqliteStoreTest, LookupKeysFindIds) {
  auto store = SqliteStore::Open(path_);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Insert({Model("a", "shared"), Model("b", "shared"), Model("c")}).ok());
  EXPECT_EQ(*(*store)->FindIdsByLookupKey(RecordKind::kModel, "shared"),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE((*store)->FindIdsByLookupKey(RecordKind::kModel, "none")->empty());
}

TEST_F(SqliteStoreTest, UsesWalAndFullSync) {
  ASSERT_TRUE(SqliteStore::Open(path_).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST_F(SqliteStoreTest, UnopenablePathIsUnavailable) {
  auto store = SqliteStore::Open("/nonexistent-dir/x/catalog.db");
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find("/nonexistent-dir/x/catalog.db"),
            absl::string_view::npos);
}

TEST_F(SqliteStoreTest, NewerSchemaThanTheBinaryKnowsIsRefused) {
  ASSERT_TRUE(SqliteStore::Open(path_).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO schema_migrations VALUES (99, 'future')", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = SqliteStore::Open(path_);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace modelatlas::catalog
