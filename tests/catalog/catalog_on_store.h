// A Catalog on the store a parameterized test names: "sqlite" (in memory),
// "sqlite_cached" (the same behind the record cache, as catalog-service runs
// it) or "postgres" (a throw-away database on the pg_virtualenv server).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "catalog-service/catalog.h"
#include "catalog-service/store/cached_store.h"
#include "catalog-service/store/postgres_store.h"
#include "catalog-service/store/sqlite_store.h"
#include "tests/testing/postgres.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::catalog {

// Small enough that the larger tests evict.
inline constexpr size_t kTestCacheBytes = 64 << 10;

// The store behind a parameter's catalog, as reported by CatalogInfo.store.
inline std::string BackendOf(const std::string& param) {
  return param == "sqlite_cached" ? "sqlite" : param;
}

class CatalogOnStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgres") {
      REQUIRE_POSTGRES();
      database_ = std::make_unique<testing::PostgresTestDatabase>();
      ASSERT_TRUE(database_->ok()) << database_->error();
      auto store = PostgresStore::Open(database_->conninfo(), 4);
      ASSERT_TRUE(store.ok()) << store.status();
      store_ = store->get();
      catalog_ = std::make_unique<Catalog>(*std::move(store));
    } else {
      auto store = SqliteStore::Open(":memory:");
      ASSERT_TRUE(store.ok()) << store.status();
      std::unique_ptr<CatalogStore> opened = *std::move(store);
      if (GetParam() == "sqlite_cached") {
        opened = std::make_unique<CachedStore>(std::move(opened), kTestCacheBytes);
      }
      store_ = opened.get();
      catalog_ = std::make_unique<Catalog>(std::move(opened));
    }
  }
  void TearDown() override {
    store_ = nullptr;
    catalog_.reset();
    database_.reset();
  }

  std::unique_ptr<testing::PostgresTestDatabase> database_;
  std::unique_ptr<Catalog> catalog_;
  // The store under catalog_ (owned by it), for tests that write around the catalog.
  CatalogStore* store_ = nullptr;
};

}  // namespace modelatlas::catalog
