// A Catalog on the store a parameterized test names: "sqlite" (in memory)
// or "postgres" (a throw-away database on the pg_virtualenv server).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "catalog-service/catalog.h"
#include "catalog-service/store/postgres_store.h"
#include "catalog-service/store/sqlite_store.h"
#include "tests/testing/postgres.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::catalog {

class CatalogOnStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgres") {
      REQUIRE_POSTGRES();
      database_ = std::make_unique<testing::PostgresTestDatabase>();
      ASSERT_TRUE(database_->ok()) << database_->error();
      auto store = PostgresStore::Open(database_->conninfo(), 4);
      ASSERT_TRUE(store.ok()) << store.status();
      catalog_ = std::make_unique<Catalog>(*std::move(store));
    } else {
      auto store = SqliteStore::Open(":memory:");
      ASSERT_TRUE(store.ok()) << store.status();
      catalog_ = std::make_unique<Catalog>(*std::move(store));
    }
  }
  void TearDown() override {
    catalog_.reset();
    database_.reset();
  }

  std::unique_ptr<testing::PostgresTestDatabase> database_;
  std::unique_ptr<Catalog> catalog_;
};

}  // namespace modelatlas::catalog
