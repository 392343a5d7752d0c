// A catalog started by a newer binary brings its shipped records up to the
// binary's dataset (RefreshShippedRecords): records nobody changed are
// replaced, changed ones kept and named, new ones added, deleted ones not
// created again, and an older binary never writes back over a newer one.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "catalog-service/catalog.h"
#include "catalog-service/dataset.h"
#include "catalog-service/store/sqlite_store.h"

namespace modelatlas::catalog {
namespace {

using common::v1::Hardware;
using common::v1::Model;

Model ShippedModel(const std::string& id, double parameters, int version, int added) {
  Model model;
  model.set_name("models/" + id);
  model.set_display_name("Model " + id);
  model.set_parameters(parameters);
  model.mutable_provenance()->set_source("ModelAtlas curated records");
  model.mutable_provenance()->mutable_shipped()->set_version(version);
  model.mutable_provenance()->mutable_shipped()->set_added_in_version(added);
  return model;
}

Hardware ShippedCard(const std::string& id, double memory_bytes, int version, int added) {
  Hardware card;
  card.set_name("hardware/" + id);
  card.set_display_name("Card " + id);
  card.set_memory_bytes(memory_bytes);
  card.mutable_provenance()->set_source("a datasheet");
  card.mutable_provenance()->mutable_shipped()->set_version(version);
  card.mutable_provenance()->mutable_shipped()->set_added_in_version(added);
  return card;
}

// Version 1: models a, b, c, d and one card.
v1::Dataset VersionOne() {
  v1::Dataset dataset;
  for (const char* id : {"a", "b", "c", "d"}) *dataset.add_models() = ShippedModel(id, 1e9, 1, 1);
  *dataset.add_hardware() = ShippedCard("h", 80e9, 1, 1);
  return dataset;
}

// Version 2 changes a, b and c and the card, keeps d, adds e.
v1::Dataset VersionTwo() {
  v1::Dataset dataset;
  for (const char* id : {"a", "b", "c"}) *dataset.add_models() = ShippedModel(id, 2e9, 2, 1);
  *dataset.add_models() = ShippedModel("d", 1e9, 1, 1);
  *dataset.add_models() = ShippedModel("e", 3e9, 2, 2);
  *dataset.add_hardware() = ShippedCard("h", 96e9, 2, 1);
  return dataset;
}

class ShippedRefreshTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = SqliteStore::Open(":memory:");
    ASSERT_TRUE(store.ok()) << store.status();
    catalog_ = std::make_unique<Catalog>(*std::move(store));
  }

  double Parameters(const std::string& id) {
    auto model = catalog_->Get<Model>("models/" + id);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? model->parameters() : -1;
  }

  int64_t Revision() { return catalog_->Info()->revision(); }

  std::unique_ptr<Catalog> catalog_;
};

TEST_F(ShippedRefreshTest, ReplacesUnchangedRecordsKeepsChangedOnesAndAddsNewOnes) {
  ASSERT_TRUE(LoadShippedDatasetIfEmpty(*catalog_, VersionOne()).ok());
  // Someone edits b and deletes c.
  Model edit;
  edit.set_name("models/b");
  edit.set_parameters(1.5e9);
  ASSERT_TRUE(catalog_->Update(edit, {"parameters"}).ok());
  ASSERT_TRUE(catalog_->Delete<Model>("models/c", "").ok());

  auto refreshed = RefreshShippedRecords(*catalog_, VersionTwo());
  ASSERT_TRUE(refreshed.ok()) << refreshed.status();
  EXPECT_TRUE(refreshed->holds_shipped);
  EXPECT_EQ(refreshed->catalog_version, 1);
  EXPECT_EQ(refreshed->binary_version, 2);
  EXPECT_EQ(refreshed->refreshed, 2);  // a and the card
  EXPECT_EQ(refreshed->added, 1);      // e
  EXPECT_EQ(refreshed->current, 1);    // d
  EXPECT_EQ(refreshed->kept_changed, 1);
  EXPECT_EQ(refreshed->kept_changed_names, std::vector<std::string>{"models/b"});
  EXPECT_EQ(refreshed->not_recreated, 1);  // c

  EXPECT_EQ(Parameters("a"), 2e9);
  EXPECT_EQ(Parameters("b"), 1.5e9) << "an edited record is kept";
  EXPECT_EQ(Parameters("d"), 1e9);
  EXPECT_EQ(Parameters("e"), 3e9);
  EXPECT_TRUE(absl::IsNotFound(catalog_->Get<Model>("models/c").status()));
  auto card = catalog_->Get<Hardware>("hardware/h");
  ASSERT_TRUE(card.ok());
  EXPECT_EQ(card->memory_bytes(), 96e9);
  EXPECT_EQ(card->provenance().shipped().version(), 2);
  EXPECT_EQ(card->provenance().shipped().loaded_fingerprint(), ContentFingerprint(*card));

  // Again: nothing left to write.
  const int64_t revision = Revision();
  auto again = RefreshShippedRecords(*catalog_, VersionTwo());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->catalog_version, 2);
  EXPECT_EQ(again->refreshed + again->added, 0);
  EXPECT_EQ(again->current, 4);  // a, d, e, the card
  EXPECT_EQ(again->kept_changed, 1);
  EXPECT_EQ(again->not_recreated, 1);
  EXPECT_EQ(Revision(), revision);
}

// A replica still on the older binary (a rolling upgrade on PostgreSQL)
// restarts after a newer one refreshed: it writes nothing back.
TEST_F(ShippedRefreshTest, AnOlderBinaryNeverWritesOverANewerVersion) {
  ASSERT_TRUE(LoadShippedDatasetIfEmpty(*catalog_, VersionOne()).ok());
  ASSERT_TRUE(RefreshShippedRecords(*catalog_, VersionTwo()).ok());
  const int64_t revision = Revision();
  auto older = RefreshShippedRecords(*catalog_, VersionOne());
  ASSERT_TRUE(older.ok()) << older.status();
  EXPECT_EQ(older->catalog_version, 2);
  EXPECT_EQ(older->binary_version, 1);
  EXPECT_EQ(older->refreshed + older->added, 0);
  EXPECT_EQ(older->newer, 4);  // a, b, c and the card are at version 2
  EXPECT_EQ(Revision(), revision);
  EXPECT_EQ(Parameters("a"), 2e9);
}

// The catalog keeps the version it was loaded or refreshed to: a start on
// the same binary (or an older one) reads nothing and writes nothing, a
// newer binary's start walks and raises it, and nothing lowers it.
TEST_F(ShippedRefreshTest, AStartWalksOnlyWhenTheBinaryShipsANewerVersion) {
  EXPECT_EQ(*catalog_->ShippedDatasetVersion(), 0);
  ASSERT_TRUE(LoadShippedDatasetIfEmpty(*catalog_, VersionOne()).ok());
  EXPECT_EQ(catalog_->Info()->shipped_dataset_version(), 1);
  // Changed behind the refresh's back (a record's content the walk would
  // find changed): a start on the same binary does not look.
  Model edit;
  edit.set_name("models/b");
  edit.set_parameters(1.5e9);
  ASSERT_TRUE(catalog_->Update(edit, {"parameters"}).ok());
  const int64_t revision = Revision();

  auto same = RefreshShippedRecordsOnStart(*catalog_, VersionOne());
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->already_current);
  EXPECT_EQ(same->catalog_version, 1);
  EXPECT_EQ(same->binary_version, 1);
  EXPECT_EQ(same->kept_changed, 0) << "the walk ran";
  EXPECT_EQ(Revision(), revision);

  auto newer = RefreshShippedRecordsOnStart(*catalog_, VersionTwo());
  ASSERT_TRUE(newer.ok()) << newer.status();
  EXPECT_FALSE(newer->already_current);
  EXPECT_EQ(newer->refreshed, 3);  // a, c and the card
  EXPECT_EQ(newer->added, 1);      // e
  EXPECT_EQ(newer->kept_changed, 1);
  EXPECT_EQ(catalog_->Info()->shipped_dataset_version(), 2);

  const int64_t refreshed_revision = Revision();
  auto older = RefreshShippedRecordsOnStart(*catalog_, VersionOne());
  ASSERT_TRUE(older.ok()) << older.status();
  EXPECT_TRUE(older->already_current);
  EXPECT_EQ(older->catalog_version, 2);
  EXPECT_EQ(catalog_->Info()->shipped_dataset_version(), 2);
  EXPECT_EQ(Revision(), refreshed_revision);
}

// A catalog loaded by a binary from before versions: its records carry no
// Provenance.shipped. Those nothing wrote since the load (revision 1, the
// shipped source) are refreshed; an edited one is kept; the dataset's
// records it lacks are added (the catalog's version is unknown: 0).
TEST_F(ShippedRefreshTest, RefreshesACatalogLoadedBeforeVersions) {
  v1::Dataset unversioned = VersionOne();
  for (Model& model : *unversioned.mutable_models()) model.mutable_provenance()->clear_shipped();
  for (Hardware& card : *unversioned.mutable_hardware()) card.mutable_provenance()->clear_shipped();
  unversioned.mutable_models()->RemoveLast();  // d came later
  ASSERT_TRUE(catalog_->LoadIfEmpty(unversioned).ok());
  Model edit;
  edit.set_name("models/b");
  edit.set_parameters(1.5e9);
  ASSERT_TRUE(catalog_->Update(edit, {"parameters"}).ok());

  auto refreshed = RefreshShippedRecords(*catalog_, VersionTwo());
  ASSERT_TRUE(refreshed.ok()) << refreshed.status();
  EXPECT_TRUE(refreshed->holds_shipped);
  EXPECT_EQ(refreshed->catalog_version, 0);
  EXPECT_EQ(refreshed->refreshed, 3);  // a, c and the card
  EXPECT_EQ(refreshed->added, 2);      // d and e
  EXPECT_EQ(refreshed->kept_changed, 1);
  EXPECT_EQ(Parameters("a"), 2e9);
  EXPECT_EQ(Parameters("b"), 1.5e9);
  EXPECT_EQ(Parameters("c"), 2e9);
  EXPECT_EQ(Parameters("d"), 1e9);
}

// A catalog started without the shipped dataset whose own records share
// ids with it is not written: none of its records is a shipped one.
TEST_F(ShippedRefreshTest, LeavesACatalogWithoutShippedRecordsAlone) {
  v1::Dataset own;
  Model mine = ShippedModel("a", 7e9, 0, 0);
  mine.mutable_provenance()->clear_shipped();
  mine.mutable_provenance()->set_source("my own notes");
  *own.add_models() = mine;
  ASSERT_TRUE(catalog_->CreateAll(own).ok());
  const int64_t revision = Revision();
  auto refreshed = RefreshShippedRecords(*catalog_, VersionTwo());
  ASSERT_TRUE(refreshed.ok()) << refreshed.status();
  EXPECT_FALSE(refreshed->holds_shipped);
  EXPECT_EQ(Revision(), revision);
  EXPECT_EQ(Parameters("a"), 7e9);
  EXPECT_TRUE(absl::IsNotFound(catalog_->Get<Model>("models/e").status()));
}

// ReplaceOrCreateAll writes all or none: a replacement whose record changed
// since it was read fails the whole batch with ABORTED.
TEST_F(ShippedRefreshTest, AStaleReplacementWritesNothing) {
  ASSERT_TRUE(LoadShippedDatasetIfEmpty(*catalog_, VersionOne()).ok());
  v1::Dataset writes;
  Model stale = ShippedModel("a", 5e9, 2, 1);
  stale.set_revision(Revision() + 1);
  *writes.add_models() = stale;
  *writes.add_models() = ShippedModel("e", 3e9, 2, 2);
  const absl::Status status = catalog_->ReplaceOrCreateAll(writes).status();
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_EQ(Parameters("a"), 1e9);
  EXPECT_TRUE(absl::IsNotFound(catalog_->Get<Model>("models/e").status()));
}

TEST_F(ShippedRefreshTest, TheFingerprintCoversContentOnly) {
  Model model = ShippedModel("a", 1e9, 1, 1);
  const std::string fingerprint = ContentFingerprint(model);
  EXPECT_EQ(fingerprint.size(), 16u);
  Model bookkeeping = model;
  bookkeeping.set_name("models/z");
  bookkeeping.set_etag("7");
  bookkeeping.set_revision(7);
  bookkeeping.mutable_provenance()->mutable_shipped()->set_version(9);
  bookkeeping.mutable_provenance()->mutable_shipped()->set_loaded_fingerprint("x");
  EXPECT_EQ(ContentFingerprint(bookkeeping), fingerprint);
  Model changed = model;
  changed.set_parameters(1e9 + 1);
  EXPECT_NE(ContentFingerprint(changed), fingerprint);
  Model noted = model;
  noted.mutable_provenance()->set_notes("checked");
  EXPECT_NE(ContentFingerprint(noted), fingerprint);
}

// Every record of the real shipped dataset reads back with the fingerprint
// it was loaded with (the store, the cache and the proto round trip leave
// the content as it was), so a restart of the same binary writes nothing.
TEST_F(ShippedRefreshTest, TheShippedDatasetReadsBackUnchanged) {
  auto loaded = LoadShippedDatasetIfEmpty(*catalog_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->loaded);
  const int64_t revision = Revision();
  absl::StatusOr<v1::Dataset> shipped = ShippedDataset();
  ASSERT_TRUE(shipped.ok()) << shipped.status();
  auto refreshed = RefreshShippedRecords(*catalog_, *shipped);
  ASSERT_TRUE(refreshed.ok()) << refreshed.status();
  EXPECT_TRUE(refreshed->holds_shipped);
  EXPECT_GE(refreshed->binary_version, 1);
  EXPECT_EQ(refreshed->catalog_version, refreshed->binary_version);
  EXPECT_EQ(refreshed->current, loaded->models + loaded->hardware);
  EXPECT_EQ(refreshed->refreshed + refreshed->added + refreshed->kept_changed, 0);
  EXPECT_EQ(Revision(), revision);
  // And each would count as unchanged if a newer binary came.
  auto page = catalog_->List<Model>({.page_size = 1000});
  ASSERT_TRUE(page.ok()) << page.status();
  for (const Model& model : page->records) {
    ASSERT_EQ(ContentFingerprint(model), model.provenance().shipped().loaded_fingerprint())
        << model.name();
  }
}

}  // namespace
}  // namespace modelatlas::catalog
