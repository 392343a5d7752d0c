// Lists ordered by one field the store indexes (parameters,
// training_compute_flop, publication_date, display_name) are read from the
// store in that order (migration 3's columns) instead of sorted in the
// catalog process: the same pages as the in-process sort, on every store,
// and on a database file written before the columns existed.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "catalog-service/store/migrations.h"
#include "tests/catalog/catalog_on_store.h"
#include "tests/catalog/old_schema.h"

namespace modelatlas::catalog {
namespace {

// Models with ties, unset values and text that sorts differently by bytes
// and by case, so every rule of the order shows: unset last in either
// direction, ties by id, text by bytes.
v1::Dataset Models(int count) {
  static const char* kNames[] = {"zeta",
                                 "Alpha",
                                 "alpha",
                                 "\xc3\x89"
                                 "clair",
                                 "model 10",
                                 "model 9",
                                 "Model 9",
                                 "b",
                                 "B",
                                 "_under"};
  static const char* kDomains[] = {"Language", "Vision", "Speech"};
  v1::Dataset dataset;
  for (int i = 0; i < count; ++i) {
    // Ids not in insertion order: id order must come from the store.
    const int n = (i * 37) % count;
    char id[16];
    std::snprintf(id, sizeof(id), "m-%03d", n);
    common::v1::Model* m = dataset.add_models();
    m->set_name(absl::StrCat("models/", id));
    m->set_display_name(absl::StrCat(kNames[n % 10], " ", n % 4 == 0 ? 0 : n));
    m->mutable_provenance()->set_source("test");
    m->add_domains(kDomains[n % 3]);
    if (n % 7 != 0) m->set_parameters(((n * 13) % 11) * 1e9);  // 0 included, ties
    if (n % 3 != 0) m->set_training_compute_flop((n % 5) * 1.5e22);
    if (n % 4 != 0) {
      m->mutable_publication_date()->set_year(2020 + n % 3);
      m->mutable_publication_date()->set_month(1 + n % 2);
      m->mutable_publication_date()->set_day(1 + n % 5);
    }
  }
  return dataset;
}

// Every name of a listing, page after page.
std::vector<std::string> AllPages(Catalog& catalog, const std::string& filter,
                                  const std::string& order_by, int page_size) {
  std::vector<std::string> names;
  ListQuery query;
  query.filter = filter;
  query.order_by = order_by;
  query.page_size = page_size;
  for (int pages = 0; pages < 1000; ++pages) {
    absl::StatusOr<Page<common::v1::Model>> page = catalog.List<common::v1::Model>(query);
    EXPECT_TRUE(page.ok()) << page.status() << " for " << order_by;
    if (!page.ok()) break;
    for (const auto& model : page->records) names.push_back(model.name());
    if (page->next_page_token.empty()) break;
    query.page_token = page->next_page_token;
  }
  return names;
}

const char* kOrders[] = {"parameters",
                         "parameters desc",
                         "training_compute_flop",
                         "training_compute_flop desc",
                         "publication_date",
                         "publication_date desc",
                         "display_name",
                         "display_name desc"};

// "F, name" is sorted in the process (two keys); "F" alone is read through
// the store's index. Ties keep id order, and names are "models/" + id, so
// both must give the same records in the same order, page by page.
void ExpectSameAsSortedInProcess(Catalog& catalog) {
  for (const char* order : kOrders) {
    for (const std::string filter :
         {"", "parameters > 2e9", "domains:\"Vision\"", "display_name:\"alpha\""}) {
      const std::vector<std::string> sorted =
          AllPages(catalog, filter, absl::StrCat(order, ", name"), 1000);
      ASSERT_FALSE(sorted.empty()) << order << " " << filter;
      for (int page_size : {1, 7, 50, 1000}) {
        EXPECT_EQ(AllPages(catalog, filter, order, page_size), sorted)
            << "order_by " << order << ", filter " << filter << ", page_size " << page_size;
      }
    }
  }
}

class OrderedListTest : public CatalogOnStoreTest {};

TEST_P(OrderedListTest, IndexedOrderGivesTheSamePagesAsTheSortInTheProcess) {
  ASSERT_TRUE(catalog_->CreateAll(Models(120)).ok());
  ExpectSameAsSortedInProcess(*catalog_);
}

TEST_P(OrderedListTest, UpdatesMoveARecordInTheIndexedOrder) {
  ASSERT_TRUE(catalog_->CreateAll(Models(60)).ok());
  absl::StatusOr<common::v1::Model> model = catalog_->Get<common::v1::Model>("models/m-007");
  ASSERT_TRUE(model.ok());
  ASSERT_FALSE(model->has_parameters());  // 7 % 7 == 0
  model->set_parameters(1e15);
  ASSERT_TRUE(catalog_->Update(*model, {"parameters"}).ok());
  std::vector<std::string> first = AllPages(*catalog_, "", "parameters desc", 1);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first[0], "models/m-007");
  ExpectSameAsSortedInProcess(*catalog_);
}

// A page token of an indexed order is a position (value, id), not a count:
// a record added before it does not repeat the previous page's last record.
TEST_P(OrderedListTest, RecordAddedBeforeTheCursorDoesNotRepeatARecord) {
  ASSERT_TRUE(catalog_->CreateAll(Models(40)).ok());
  ListQuery query;
  query.order_by = "parameters";
  query.page_size = 10;
  absl::StatusOr<Page<common::v1::Model>> first = catalog_->List<common::v1::Model>(query);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_FALSE(first->next_page_token.empty());
  common::v1::Model smallest;
  smallest.set_name("models/a-smallest");
  smallest.set_display_name("Smallest");
  smallest.set_parameters(-0.0);
  smallest.mutable_provenance()->set_source("test");
  ASSERT_TRUE(catalog_->Create("a-smallest", smallest).ok());
  query.page_token = first->next_page_token;
  absl::StatusOr<Page<common::v1::Model>> second = catalog_->List<common::v1::Model>(query);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_FALSE(second->records.empty());
  for (const auto& record : second->records) {
    for (const auto& seen : first->records) EXPECT_NE(record.name(), seen.name());
  }
}

TEST_P(OrderedListTest, ForeignTokenIsInvalidArgument) {
  ASSERT_TRUE(catalog_->CreateAll(Models(10)).ok());
  ListQuery query;
  query.order_by = "parameters";
  query.page_token = EncodePageToken({"7", "models\x1f\x1fparameters"});  // an offset
  EXPECT_EQ(catalog_->List<common::v1::Model>(query).status().code(),
            absl::StatusCode::kInvalidArgument);
  query.page_token =
      EncodePageToken({"odm-001\x1f"
                       "zz",
                       "models\x1f\x1fparameters"});
  EXPECT_EQ(catalog_->List<common::v1::Model>(query).status().code(),
            absl::StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Stores, OrderedListTest,
                         ::testing::Values("sqlite", "sqlite_cached", "postgres"));

// --- A database written by the previous binary (schema 2, no order columns).

std::string Payload(const common::v1::Model& model) {
  common::v1::Model stored = model;
  stored.clear_etag();
  stored.clear_revision();
  return stored.SerializeAsString();
}

std::string TempPath() {
  return ::testing::TempDir() + "/ordered_list_test_" + std::to_string(getpid()) + ".db";
}

void RemoveSqlite(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

TEST(OrderedListMigrationTest, SqliteFileOfSchema2IsUpgradedAndOrdersItsRecords) {
  const std::string path = TempPath();
  RemoveSqlite(path);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const std::string setup = OldSchemaSql(2);
    ASSERT_EQ(sqlite3_exec(db, setup.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_stmt* insert = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO records VALUES ('model', ?, ?, ?, 1)", -1,
                                 &insert, nullptr),
              SQLITE_OK);
    v1::Dataset dataset = Models(80);
    common::v1::Model* corrupt = dataset.add_models();
    corrupt->set_name("models/zz-corrupt");
    for (const auto& model : dataset.models()) {
      const std::string id = model.name().substr(7);
      const std::string payload = id == "zz-corrupt" ? std::string("\xff\xff") : Payload(model);
      sqlite3_bind_text(insert, 1, id.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert, 2, model.display_name().c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_blob(insert, 3, payload.data(), static_cast<int>(payload.size()),
                        SQLITE_TRANSIENT);
      ASSERT_EQ(sqlite3_step(insert), SQLITE_DONE) << sqlite3_errmsg(db);
      sqlite3_reset(insert);
    }
    sqlite3_finalize(insert);
    sqlite3_close(db);
  }
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ((*store)->schema_version(), SqliteMigrations().back().version);
    Catalog catalog(*std::move(store));
    ExpectSameAsSortedInProcess(catalog);
    EXPECT_EQ(AllPages(catalog, "", "parameters", 1000).size(), 80u);
    EXPECT_GT(catalog.unreadable_records(), 0);
  }
  {
    // Filled once: the next open finds nothing left to fill.
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_TRUE((*store)->RecordsWithoutOrderValues(RecordKind::kModel, 10)->empty());
    Catalog catalog(*std::move(store));
    ExpectSameAsSortedInProcess(catalog);
  }
  RemoveSqlite(path);
}

TEST(OrderedListMigrationTest, PostgresDatabaseOfSchema2IsUpgradedAndOrdersItsRecords) {
  REQUIRE_POSTGRES();
  testing::PostgresTestDatabase database;
  ASSERT_TRUE(database.ok()) << database.error();
  {
    pqxx::connection c(database.conninfo());
    pqxx::work tx(c);
    tx.exec(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT "
        "NULL)");
    for (int i = 0; i < 2; ++i) {
      const Migration& m = PostgresMigrations()[i];
      tx.exec(m.sql);
      tx.exec_params("INSERT INTO schema_migrations VALUES ($1, $2)", m.version, m.description);
    }
    tx.exec("UPDATE catalog_state SET revision = 1");
    const v1::Dataset dataset = Models(80);
    for (const auto& model : dataset.models()) {
      tx.exec_params("INSERT INTO records VALUES ('model', $1, $2, $3, 1)", model.name().substr(7),
                     model.display_name(),
                     absl::StrCat("\\x", absl::BytesToHexString(Payload(model))));
    }
    tx.commit();
  }
  auto store = PostgresStore::Open(database.conninfo(), 2);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->schema_version(), PostgresMigrations().back().version);
  Catalog catalog(*std::move(store));
  ExpectSameAsSortedInProcess(catalog);
  EXPECT_EQ(AllPages(catalog, "", "display_name desc", 1000).size(), 80u);
}

}  // namespace
}  // namespace modelatlas::catalog
