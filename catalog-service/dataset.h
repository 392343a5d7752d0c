// The dataset ModelAtlas ships (catalog-service/data/dataset.json, generated
// by tools/dataset/build_dataset.cc from data/curated/ and Epoch AI's data,
// embedded in the binary at build time) and the JSON document format it uses, which
// is also the catalog's JSON export format.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "modelatlas/catalog/v1/dataset.pb.h"

namespace modelatlas::catalog {

class Catalog;

// Parses a Dataset from its protobuf JSON mapping; unknown fields are an
// error, so that a typo in a field name cannot silently drop data.
absl::StatusOr<v1::Dataset> ParseDatasetJson(absl::string_view json);

// The text of the dataset embedded in this binary (data/dataset.json).
absl::string_view ShippedDatasetJson();

// The same dataset in protobuf's binary form (converted at build time).
absl::string_view ShippedDatasetBinary();

// The dataset embedded in this binary (its binary form), parsed on first use.
absl::StatusOr<v1::Dataset> ShippedDataset();

struct ShippedDatasetLoad {
  // False when the catalog already held records (nothing parsed or written).
  bool loaded = false;
  int models = 0;
  int hardware = 0;
};

// Loads the shipped dataset into `catalog` when it holds no record, each
// record stamped with the fingerprint of its content
// (Provenance.shipped.loaded_fingerprint). The dataset is parsed only then.
absl::StatusOr<ShippedDatasetLoad> LoadShippedDatasetIfEmpty(Catalog& catalog);
// The same with another dataset (tests: an older or newer binary's).
absl::StatusOr<ShippedDatasetLoad> LoadShippedDatasetIfEmpty(Catalog& catalog, v1::Dataset dataset);

// The fingerprint ShippedRecord.loaded_fingerprint holds: 64-bit FNV-1a of
// the record's deterministic serialization without its name, etag,
// revision and Provenance.shipped, as 16 hex digits.
std::string ContentFingerprint(const common::v1::Model& model);
std::string ContentFingerprint(const common::v1::Hardware& hardware);

// What a start on a catalog that already holds records did with the
// records of this binary's shipped dataset (RefreshShippedRecords).
struct ShippedDatasetRefresh {
  // True when the catalog was already loaded or refreshed to this binary's
  // version or a newer one (CatalogStore::ShippedDatasetVersion): nothing
  // was read or written, and the counts below are zero.
  bool already_current = false;
  // False when the catalog holds no shipped record (it was started without
  // the shipped dataset, or every shipped record was deleted): left alone.
  bool holds_shipped = false;
  // The newest dataset version among the catalog's shipped records (0 when
  // they were loaded by a binary from before versions) and this binary's.
  int catalog_version = 0;
  int binary_version = 0;
  // Records replaced by this binary's version (nobody had changed them).
  int refreshed = 0;
  // Records this binary's dataset added since the catalog's version.
  int added = 0;
  // Records already at this binary's version, or at a newer one (written
  // by a newer binary sharing the database): `newer` of them.
  int current = 0;
  int newer = 0;
  // Records changed in this catalog since they were loaded (edited,
  // imported over), kept as they are although this binary ships another
  // version; the first few of their names.
  int kept_changed = 0;
  std::vector<std::string> kept_changed_names;
  // Shipped records at or before the catalog's version that are not in
  // the catalog (deleted here): not created again.
  int not_recreated = 0;
};

// Brings the catalog's shipped records up to `dataset` (by default this
// binary's): a record whose content still has its loaded fingerprint and
// whose version is older is replaced; a record someone changed is kept and
// named; a record the dataset added since the catalog's version is created.
// A record loaded by a binary from before versions (no
// Provenance.shipped) counts as unchanged when nothing has written it since
// the load (its revision is 1, the load's) and its source is the shipped
// record's. All writes are one transaction; when another writer (a replica
// refreshing too, a user) changes a record meanwhile, it plans again. Then
// the catalog's shipped dataset version (CatalogStore::ShippedDatasetVersion)
// is raised to the dataset's.
absl::StatusOr<ShippedDatasetRefresh> RefreshShippedRecords(Catalog& catalog,
                                                            const v1::Dataset& dataset);
// What a start does (by default with this binary's dataset): the same,
// unless the catalog was loaded or refreshed to the dataset's version or a
// newer one before (`already_current`: nothing read, nothing written), so
// a restart on the same binary does not walk every shipped record.
absl::StatusOr<ShippedDatasetRefresh> RefreshShippedRecordsOnStart(Catalog& catalog);
absl::StatusOr<ShippedDatasetRefresh> RefreshShippedRecordsOnStart(Catalog& catalog,
                                                                   const v1::Dataset& dataset);

}  // namespace modelatlas::catalog
