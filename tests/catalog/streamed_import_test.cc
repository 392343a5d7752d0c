// Catalog::ImportFile, the import the service runs: a file read, planned and
// written in chunks of 2,000 rows. Its outcomes are those of planning the
// whole parsed file before any write (Catalog::Import with dry_run, which
// writes nothing), across chunk boundaries; a file refused as a whole writes
// nothing; an atomic import still writes all or nothing; a cancelled import
// says how much it wrote.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "catalog-service/dataset.h"
#include "catalog-service/import/import_file.h"
#include "catalog-service/metrics.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/message_differencer.h"
#include "prometheus/registry.h"
#include "tests/catalog/catalog_on_store.h"

namespace modelatlas::catalog {
namespace {

constexpr char kHeader[] = "Model,Organization,Parameters,Publication date\n";
// Rows per chunk of Catalog::ImportFile (kWriteBatch in catalog_import.cc).
constexpr int kChunkRows = 2000;

// `rows` generated rows ("Model 1", ...) with the given rows replaced.
std::string GeneratedCsv(int rows, const std::map<int, std::string>& replaced = {}) {
  std::string csv = kHeader;
  for (int row = 1; row <= rows; ++row) {
    auto special = replaced.find(row);
    if (special != replaced.end()) {
      absl::StrAppend(&csv, special->second, "\n");
    } else {
      absl::StrAppend(&csv, "Model ", row, ",Lab ", row % 7, ",", row, "e6,2020-01-01\n");
    }
  }
  return csv;
}

// A report without the fields that say whether it was a dry run.
v1::ImportReport Outcomes(v1::ImportReport report) {
  report.clear_dry_run();
  report.clear_committed();
  report.clear_revision();
  return report;
}

void ExpectSameOutcomes(const v1::ImportReport& planned_whole, const v1::ImportReport& streamed) {
  google::protobuf::util::MessageDifferencer differencer;
  std::string difference;
  differencer.ReportDifferencesToString(&difference);
  EXPECT_TRUE(differencer.Compare(Outcomes(planned_whole), Outcomes(streamed))) << difference;
}

class StreamedImportTest : public CatalogOnStoreTest {
 protected:
  // The whole file planned before any write, writing nothing.
  v1::ImportReport PlannedWhole(const std::string& content, v1::ImportOptions options = {}) {
    absl::StatusOr<ParsedFile> file =
        ParseImportFile(content, options.format(), options.source_name());
    EXPECT_TRUE(file.ok()) << file.status();
    if (!file.ok()) return {};
    options.set_dry_run(true);
    options.set_full_report(true);
    absl::StatusOr<v1::ImportReport> report = catalog_->Import(*file, options);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : v1::ImportReport();
  }
  v1::ImportReport Streamed(const std::string& content, v1::ImportOptions options = {}) {
    options.set_full_report(true);
    absl::StatusOr<v1::ImportReport> report = catalog_->ImportFile(content, options);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : v1::ImportReport();
  }
  int64_t ModelCount() { return catalog_->Info()->model_count(); }
};

TEST_P(StreamedImportTest, OutcomesAcrossChunksAreThoseOfTheWholeFilePlan) {
  Model existing;
  existing.set_display_name("Existing");
  existing.set_parameters(5);
  existing.mutable_provenance()->set_source("a datasheet");
  ASSERT_TRUE(catalog_->Create<Model>("existing", existing).ok());
  // A name repeated in another chunk (a second record), a look-alike name
  // (same slug) in a third, a row for a record the catalog has (a conflict
  // with another source), a bad row in the middle and a bad last row.
  const int rows = 2 * kChunkRows + 501;
  const std::string csv = GeneratedCsv(rows, {{1, "Dup,Lab,1e9,2021-01-01"},
                                              {kChunkRows + 1, "Dup,Lab,2e9,2021-01-01"},
                                              {kChunkRows * 2 + 2, "DUP,Lab,3e9,2021-01-01"},
                                              {kChunkRows * 2 + 7, "Existing,Lab,7,2021-01-01"},
                                              {3000, "Bad,Lab,seven,2021-01-01"},
                                              {rows, "Last,Lab,-1,2021-01-01"}});
  const v1::ImportReport whole = PlannedWhole(csv);
  EXPECT_EQ(ModelCount(), 1);
  const v1::ImportReport streamed = Streamed(csv);
  ExpectSameOutcomes(whole, streamed);
  EXPECT_TRUE(streamed.committed());
  EXPECT_EQ(streamed.rejected(), 2);
  EXPECT_EQ(streamed.created(), rows - 3);  // all but the two bad rows and "Existing"
  EXPECT_EQ(streamed.conflicts_size(), 1);
  ASSERT_EQ(streamed.duplicate_names_size(), 1);
  EXPECT_EQ(streamed.duplicate_names(0).names_size(), 2);
  EXPECT_EQ(ModelCount(), rows - 2);
  EXPECT_EQ(catalog_->Get<Model>("models/dup-2")->parameters(), 2000000000);
  EXPECT_EQ(catalog_->Get<Model>("DUP")->parameters(), 3000000000);
  EXPECT_EQ(catalog_->Get<Model>("Existing")->parameters(), 5);  // kept, reported

  // Again: every row finds the record it wrote, in whichever chunk.
  const v1::ImportReport whole_again = PlannedWhole(csv);
  const v1::ImportReport again = Streamed(csv);
  ExpectSameOutcomes(whole_again, again);
  EXPECT_EQ(again.unchanged(), rows - 2);
  EXPECT_EQ(again.created() + again.updated(), 0);
  EXPECT_EQ(ModelCount(), rows - 2);
}

TEST_P(StreamedImportTest, AFileRefusedAsAWholeWritesNothingEvenAfterManyGoodRows) {
  const int64_t revision = catalog_->Info()->revision();
  // A quote that never closes, on the last line: found before the first chunk is written.
  const std::string csv = GeneratedCsv(3 * kChunkRows, {{3 * kChunkRows, "\"Open,Lab,1,"}});
  absl::StatusOr<v1::ImportReport> report = catalog_->ImportFile(csv, {});
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument) << report.status();
  EXPECT_EQ(ModelCount(), 0);
  EXPECT_EQ(catalog_->Info()->revision(), revision);
}

TEST_P(StreamedImportTest, AtomicImportWithABadLastRowWritesNothingAndOtherwiseEverything) {
  const int rows = 2 * kChunkRows + 1;
  const std::string bad_last = GeneratedCsv(rows, {{rows, "Bad,Lab,-1,2020-01-01"}});
  v1::ImportOptions atomic;
  atomic.set_atomic(true);
  const v1::ImportReport refused = Streamed(bad_last, atomic);
  ExpectSameOutcomes(PlannedWhole(bad_last, atomic), refused);
  EXPECT_FALSE(refused.committed());
  EXPECT_EQ(refused.rejected(), 1);
  EXPECT_EQ(ModelCount(), 0);

  // Not atomic: the bad last row is rejected, every other row written.
  const v1::ImportReport written = Streamed(bad_last);
  EXPECT_TRUE(written.committed());
  EXPECT_EQ(written.created(), rows - 1);
  EXPECT_EQ(ModelCount(), rows - 1);

  const v1::ImportReport whole = Streamed(GeneratedCsv(rows + 10), atomic);
  EXPECT_TRUE(whole.committed());
  EXPECT_EQ(whole.created(), 11);
  EXPECT_EQ(whole.unchanged(), rows - 1);
  EXPECT_EQ(ModelCount(), rows + 10);
}

TEST_P(StreamedImportTest, DryRunWritesNothing) {
  v1::ImportOptions dry;
  dry.set_dry_run(true);
  const std::string csv = GeneratedCsv(kChunkRows + 3);
  const v1::ImportReport report = Streamed(csv, dry);
  ExpectSameOutcomes(PlannedWhole(csv), report);
  EXPECT_EQ(report.created(), kChunkRows + 3);
  EXPECT_FALSE(report.committed());
  EXPECT_EQ(ModelCount(), 0);
}

TEST_P(StreamedImportTest, ACancelledImportStopsBetweenChunksAndSaysWhatItWrote) {
  const std::string csv = GeneratedCsv(2 * kChunkRows + 5);
  int asked = 0;
  absl::StatusOr<v1::ImportReport> report =
      catalog_->ImportFile(csv, {}, [&asked] { return ++asked > 1; });
  EXPECT_EQ(report.status().code(), absl::StatusCode::kCancelled) << report.status();
  EXPECT_NE(report.status().message().find(absl::StrCat("after ", kChunkRows, " records")),
            absl::string_view::npos)
      << report.status();
  EXPECT_EQ(ModelCount(), kChunkRows);
  // Importing again is safe: it writes the rest.
  const v1::ImportReport rest = Streamed(csv);
  EXPECT_EQ(rest.unchanged(), kChunkRows);
  EXPECT_EQ(rest.created(), kChunkRows + 5);
}

// An atomic import's writes are spooled per chunk and written back a chunk
// at a time inside one transaction (CatalogStore::WriteInOneTransaction):
// one revision, every change logged at it, nothing before the commit.
TEST_P(StreamedImportTest, AnAtomicImportOfManyChunksIsOneWriteAtOneRevision) {
  const int rows = 3 * kChunkRows + 5;
  const int64_t before = catalog_->Info()->revision();
  v1::ImportOptions atomic;
  atomic.set_atomic(true);
  const std::string csv = GeneratedCsv(rows);
  const v1::ImportReport whole = PlannedWhole(csv, atomic);
  const v1::ImportReport report = Streamed(csv, atomic);
  ExpectSameOutcomes(whole, report);
  EXPECT_TRUE(report.committed());
  EXPECT_EQ(report.created(), rows);
  EXPECT_EQ(report.revision(), before + 1);
  EXPECT_EQ(catalog_->Info()->revision(), before + 1);
  EXPECT_EQ(ModelCount(), rows);
  absl::StatusOr<std::vector<Change>> changes = store_->ChangesSince(before, 2 * rows);
  ASSERT_TRUE(changes.ok()) << changes.status();
  ASSERT_EQ(changes->size(), static_cast<size_t>(rows));
  for (const Change& change : *changes) {
    ASSERT_EQ(change.revision, before + 1) << change.id;
    ASSERT_EQ(change.operation, "create") << change.id;
  }

  // Updated atomically: a record read before (the cached store keeps it)
  // is read as the import left it.
  EXPECT_EQ(catalog_->Get<Model>("Model 7")->parameters(), 7000000);
  const std::string changed =
      GeneratedCsv(rows, {{7, "Model 7,Lab 0,8e6,2020-01-01"}, {rows, "Model X,Lab,1,2020-01-01"}});
  const v1::ImportReport again = Streamed(changed, atomic);
  EXPECT_TRUE(again.committed());
  EXPECT_EQ(again.updated(), 1);
  EXPECT_EQ(again.created(), 1);
  EXPECT_EQ(again.revision(), before + 2);
  EXPECT_EQ(catalog_->Get<Model>("Model 7")->parameters(), 8000000);
}

TEST_P(StreamedImportTest, AnAtomicImportWithABadRowInItsLastChunkWritesNothing) {
  const int rows = 3 * kChunkRows + 5;
  const int64_t before = catalog_->Info()->revision();
  v1::ImportOptions atomic;
  atomic.set_atomic(true);
  const std::string csv = GeneratedCsv(rows, {{rows - 2, "Bad,Lab,-1,2020-01-01"}});
  const v1::ImportReport refused = Streamed(csv, atomic);
  ExpectSameOutcomes(PlannedWhole(csv, atomic), refused);
  EXPECT_FALSE(refused.committed());
  EXPECT_EQ(refused.rejected(), 1);
  EXPECT_EQ(refused.created(), rows - 1);  // what it would have created
  EXPECT_EQ(ModelCount(), 0);
  EXPECT_EQ(catalog_->Info()->revision(), before);
  EXPECT_TRUE(store_->ChangesSince(before, 10)->empty());
}

// The client goes away while the transaction is open, after two chunks were
// written in it: rolled back, nothing written, the revision unmoved.
TEST_P(StreamedImportTest, AnAtomicImportCancelledInsideItsTransactionWritesNothing) {
  const int chunks = 4;
  const std::string csv = GeneratedCsv(chunks * kChunkRows);
  const int64_t before = catalog_->Info()->revision();
  v1::ImportOptions atomic;
  atomic.set_atomic(true);
  // Asked once per chunk spooled (and once for the parser's last, empty
  // one), then once per chunk pulled into the transaction: cancelled at the
  // third pull, two chunks written inside the transaction before it.
  int asked = 0;
  absl::StatusOr<v1::ImportReport> report =
      catalog_->ImportFile(csv, atomic, [&asked] { return ++asked > chunks + 3; });
  EXPECT_EQ(asked, chunks + 4);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kCancelled) << report.status();
  EXPECT_NE(
      report.status().message().find(absl::StrCat(
          "after ", 2 * kChunkRows, " of ", chunks * kChunkRows, " writes inside its transaction")),
      absl::string_view::npos)
      << report.status();
  EXPECT_NE(report.status().message().find("nothing was written"), absl::string_view::npos);
  EXPECT_EQ(ModelCount(), 0);
  EXPECT_EQ(catalog_->Info()->revision(), before);
  EXPECT_TRUE(store_->ChangesSince(before, 10)->empty());
  // Cancelled before the transaction (while spooling): nothing either.
  asked = 0;
  report = catalog_->ImportFile(csv, atomic, [&asked] { return ++asked > 2; });
  EXPECT_EQ(report.status().code(), absl::StatusCode::kCancelled) << report.status();
  EXPECT_EQ(ModelCount(), 0);
  // Importing again writes everything.
  const v1::ImportReport whole = Streamed(csv, atomic);
  EXPECT_EQ(whole.created(), chunks * kChunkRows);
  EXPECT_EQ(ModelCount(), chunks * kChunkRows);
}

// Another writer changes a record the atomic import updates after the
// import read it and before its transaction: the import's write of it finds
// a stale revision (ABORTED), and the transaction, with the chunks written
// in it before, is rolled back.
TEST_P(StreamedImportTest, AnAtomicImportMeetingAConflictWritesNothing) {
  const int chunks = 3;
  const int rows = chunks * kChunkRows;
  v1::ImportOptions atomic;
  atomic.set_atomic(true);
  ASSERT_EQ(Streamed(GeneratedCsv(rows), atomic).created(), rows);
  const int64_t before = catalog_->Info()->revision();
  // The last row's record is updated by the file: written in the last chunk.
  const std::string changed =
      GeneratedCsv(rows + 1, {{rows, absl::StrCat("Model ", rows, ",Lab,1,2020-01-01")}});
  int asked = 0;
  absl::StatusOr<v1::ImportReport> report = catalog_->ImportFile(changed, atomic, [&] {
    // Asked per chunk spooled (three of 2,000 rows, then the extra row's),
    // the last of them before the transaction, on this thread.
    if (++asked == chunks + 1) {
      absl::StatusOr<Model> model = catalog_->Get<Model>(absl::StrCat("Model ", rows));
      EXPECT_TRUE(model.ok()) << model.status();
      model->set_parameters(2);
      EXPECT_TRUE(catalog_->Update<Model>(*model, {"parameters"}).ok());
    }
    return false;
  });
  EXPECT_EQ(report.status().code(), absl::StatusCode::kAborted) << report.status();
  EXPECT_NE(report.status().message().find("rolled back: nothing was written"),
            absl::string_view::npos)
      << report.status();
  EXPECT_EQ(catalog_->Info()->revision(), before + 1);  // the other writer's update only
  EXPECT_EQ(ModelCount(), rows);                        // the new last row not created
  EXPECT_EQ(catalog_->Get<Model>(absl::StrCat("Model ", rows))->parameters(), 2);
}

// Readers while an atomic import's transaction is open see the catalog as
// it was before it or after it, never part of it (SQLite: they wait for the
// commit, the store's one connection being the transaction's; PostgreSQL:
// they read the snapshot before it). A writer meanwhile waits for the
// commit and writes after it (its revision is the next one).
TEST_P(StreamedImportTest, ReadersAndAWriterDuringAnAtomicImportSeeNoPartOfIt) {
  const int chunks = 4;
  const std::string csv = GeneratedCsv(chunks * kChunkRows);
  const int64_t before = catalog_->Info()->revision();
  v1::ImportOptions atomic;
  atomic.set_atomic(true);
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::mutex seen_mutex;
  std::set<int64_t> counts_seen, revisions_seen;
  std::thread reader([&] {
    while (!done.load()) {
      absl::StatusOr<v1::CatalogInfo> info = catalog_->Info();
      ASSERT_TRUE(info.ok()) << info.status();
      std::lock_guard<std::mutex> lock(seen_mutex);
      counts_seen.insert(info->model_count());
      revisions_seen.insert(info->revision());
      ++reads;
    }
  });
  std::thread writer;
  absl::StatusOr<Model> outsider;
  int asked = 0;
  auto inside_transaction = [&] {
    // The second pull: one chunk written inside the open transaction
    // (asked before: once per chunk spooled and for the parser's empty last).
    if (++asked == chunks + 3) {
      writer = std::thread([&] {
        Model model;
        model.set_display_name("Outsider");
        model.mutable_provenance()->set_source("by hand");
        outsider = catalog_->Create<Model>("outsider", model);
      });
      // Time for the reader and the writer to reach the store meanwhile
      // (what they see does not depend on whether they did).
      absl::SleepFor(absl::Milliseconds(300));
    }
    return false;
  };
  absl::StatusOr<v1::ImportReport> report = catalog_->ImportFile(csv, atomic, inside_transaction);
  ASSERT_TRUE(report.ok()) << report.status();
  writer.join();
  absl::SleepFor(absl::Milliseconds(50));  // a read after the commit
  done = true;
  reader.join();
  ASSERT_TRUE(outsider.ok()) << outsider.status();
  EXPECT_EQ(outsider->revision(), before + 2);  // committed after the import
  absl::StatusOr<std::vector<Change>> changes =
      store_->ChangesSince(before, 3 * kChunkRows * chunks);
  ASSERT_TRUE(changes.ok()) << changes.status();
  ASSERT_EQ(changes->size(), static_cast<size_t>(chunks * kChunkRows + 1));
  EXPECT_EQ(changes->front().revision, before + 1);
  EXPECT_EQ(changes->at(changes->size() - 2).revision, before + 1);  // the import: one revision
  EXPECT_EQ(changes->back().revision, before + 2);
  EXPECT_EQ(changes->back().id, "outsider");
  EXPECT_EQ(ModelCount(), chunks * kChunkRows + 1);
  EXPECT_GT(reads.load(), 0);
  for (int64_t count : counts_seen) {
    EXPECT_TRUE(count == 0 || count == chunks * kChunkRows || count == chunks * kChunkRows + 1)
        << count;
  }
  for (int64_t revision : revisions_seen) {
    EXPECT_TRUE(revision >= before && revision <= before + 2) << revision;
  }
}

TEST_P(StreamedImportTest, TwoRowsNamingOneRecordAreRefusedAsInTheWholeFilePlan) {
  const std::string json = R"({"models": [
    {"name": "models/twice", "display_name": "Twice", "provenance": {"source": "test"}},
    {"name": "models/twice", "display_name": "Twice", "provenance": {"source": "test"}}]})";
  const v1::ImportReport report = Streamed(json);
  EXPECT_EQ(report.created(), 1);
  EXPECT_EQ(report.rejected(), 1);
  ASSERT_EQ(report.rejections_size(), 1);
  EXPECT_EQ(report.rejections(0).row(), 2);
  EXPECT_EQ(ModelCount(), 1);
}

TEST_P(StreamedImportTest, ConflictsPastTheReportsListAreCountedAsOmitted) {
  // 5,001 records from a datasheet (the catalog's JSON), then Epoch's CSV
  // with two figures changed: 10,002 conflicts, of which the report lists
  // the first 10,000 (kMaxReportedConflicts) in the order found.
  const int rows = 5001;
  std::string json = "{\"models\": [";
  std::string csv = "Model,Parameters,Epochs\n";
  for (int row = 1; row <= rows; ++row) {
    absl::StrAppend(&json, row > 1 ? "," : "", "{\"name\": \"models/model-", row,
                    "\", \"display_name\": \"Model ", row, "\", \"parameters\": ", row,
                    ", \"epochs\": 1, \"provenance\": {\"source\": \"a datasheet\"}}");
    absl::StrAppend(&csv, "Model ", row, ",", row + 1, ",2\n");
  }
  absl::StrAppend(&json, "]}");
  absl::StatusOr<v1::ImportReport> created = catalog_->ImportFile(json, {});
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->created(), rows);
  absl::StatusOr<v1::ImportReport> report = catalog_->ImportFile(csv, {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->conflicts_size(), 10000);
  EXPECT_EQ(report->conflicts_omitted(), 2);
  EXPECT_EQ(report->conflicts(0).field(), "parameters");
  EXPECT_EQ(report->conflicts(9999).field(), "epochs");
  EXPECT_EQ(report->conflicts(9999).row(), 5000);
  EXPECT_EQ(catalog_->Get<Model>("Model 5001")->parameters(), 5001);  // kept, reported
}

INSTANTIATE_TEST_SUITE_P(Stores, StreamedImportTest,
                         ::testing::Values("sqlite", "sqlite_cached", "postgres"));

// ImportFile's three stages (parse, plan, write on their own threads) against
// the same import in turn on one thread: the same report, byte for byte
// (revision included: one write per chunk either way), and the same records.
class ImportStagesTest : public ::testing::Test {
 protected:
  static std::unique_ptr<Catalog> NewCatalog(bool in_stages) {
    auto store = SqliteStore::Open(":memory:");
    EXPECT_TRUE(store.ok()) << store.status();
    auto catalog = std::make_unique<Catalog>(*std::move(store));
    catalog->SetImportStagesForTesting(in_stages);
    Model existing;
    existing.set_display_name("Existing");
    existing.set_parameters(5);
    existing.mutable_provenance()->set_source("a datasheet");
    EXPECT_TRUE(catalog->Create<Model>("existing", existing).ok());
    return catalog;
  }
  // Serialized with maps in key order (field_sources: their order is
  // otherwise the hash table's).
  static std::string Bytes(const google::protobuf::Message& message) {
    std::string bytes;
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&out);
    out.Trim();
    return bytes;
  }
  static void ExpectSameRecords(Catalog& a, Catalog& b) {
    absl::StatusOr<std::vector<Model>> left = a.ListAll<Model>("");
    absl::StatusOr<std::vector<Model>> right = b.ListAll<Model>("");
    ASSERT_TRUE(left.ok() && right.ok());
    ASSERT_EQ(left->size(), right->size());
    for (size_t i = 0; i < left->size(); ++i) {
      EXPECT_EQ(Bytes((*left)[i]), Bytes((*right)[i])) << (*left)[i].ShortDebugString() << "\n"
                                                       << (*right)[i].ShortDebugString();
    }
  }
  std::unique_ptr<Catalog> staged_ = NewCatalog(true);
  std::unique_ptr<Catalog> in_turn_ = NewCatalog(false);
};

TEST_F(ImportStagesTest, TheStagesGiveTheReportAndRecordsOfTheImportInTurn) {
  // Later rows refer to earlier ones: a name repeated in each later chunk
  // (its second and third records, numbered by the rows before), a
  // look-alike name (the same slug), a row for a record the catalog has (a
  // conflict), bad rows in the first and last chunks.
  const int rows = 3 * kChunkRows + 17;
  const std::string csv = GeneratedCsv(rows, {{1, "Dup,Lab,1e9,2021-01-01"},
                                              {kChunkRows + 1, "Dup,Lab,2e9,2021-01-01"},
                                              {kChunkRows * 2 + 2, "DUP,Lab,3e9,2021-01-01"},
                                              {kChunkRows * 3 + 1, "Dup,Lab,4e9,2021-01-01"},
                                              {kChunkRows * 2 + 7, "Existing,Lab,7,2021-01-01"},
                                              {30, "Bad,Lab,seven,2021-01-01"},
                                              {rows, "Last,Lab,-1,2021-01-01"}});
  for (bool bulk : {false, true}) {
    SCOPED_TRACE(bulk ? "loaded in bulk" : "indexes kept");
    staged_ = NewCatalog(true);
    in_turn_ = NewCatalog(false);
    if (bulk) {
      staged_->SetBulkLoadForTesting(1000);
      in_turn_->SetBulkLoadForTesting(1000);
    }
    v1::ImportOptions options;
    options.set_full_report(true);
    for (int pass = 1; pass <= 2; ++pass) {  // the second finds every record the first wrote
      absl::StatusOr<v1::ImportReport> staged = staged_->ImportFile(csv, options);
      absl::StatusOr<v1::ImportReport> in_turn = in_turn_->ImportFile(csv, options);
      ASSERT_TRUE(staged.ok()) << staged.status();
      ASSERT_TRUE(in_turn.ok()) << in_turn.status();
      EXPECT_EQ(Bytes(*staged), Bytes(*in_turn));
      EXPECT_EQ(staged->rejected(), 2);
      EXPECT_EQ(staged->created(), pass == 1 ? rows - 3 : 0);
      EXPECT_EQ(staged->unchanged(), pass == 1 ? 0 : rows - 2);
      EXPECT_EQ(staged->changes_size(), rows - 2);
      ExpectSameRecords(*staged_, *in_turn_);
    }
    EXPECT_EQ(staged_->Get<Model>("models/dup-3")->parameters(), 4000000000);
  }
}

TEST_F(ImportStagesTest, AFailureOfTheParseStageMidFileEndsTheImportAsInTurn) {
  const std::string csv = GeneratedCsv(4 * kChunkRows + 3);
  auto fail_third = [](int chunk) {
    return chunk == 3 ? absl::DataLossError("chunk 3 unreadable") : absl::OkStatus();
  };
  staged_->SetImportStagesForTesting(true, fail_third);
  in_turn_->SetImportStagesForTesting(false, fail_third);
  staged_->SetBulkLoadForTesting(1000);
  absl::StatusOr<v1::ImportReport> staged = staged_->ImportFile(csv, {});
  absl::StatusOr<v1::ImportReport> in_turn = in_turn_->ImportFile(csv, {});
  EXPECT_EQ(staged.status(), absl::DataLossError("chunk 3 unreadable"));
  EXPECT_EQ(in_turn.status(), staged.status());
  // The two chunks before it are written, none after; the bulk load's
  // indexes are back (an ordered list walks them).
  EXPECT_EQ(staged_->Info()->model_count(), 1 + 2 * kChunkRows);
  ExpectSameRecords(*staged_, *in_turn_);
  ListQuery ordered{10, "", "", "parameters desc"};
  absl::StatusOr<Page<Model>> page = staged_->List<Model>(ordered);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->records.size(), 10u);
  EXPECT_EQ(page->records[0].display_name(), absl::StrCat("Model ", 2 * kChunkRows));
  // Importing again is safe: it writes the rest.
  staged_->SetImportStagesForTesting(true);
  absl::StatusOr<v1::ImportReport> rest = staged_->ImportFile(csv, {});
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(rest->unchanged(), 2 * kChunkRows);
  EXPECT_EQ(rest->created(), 2 * kChunkRows + 3);
}

// A store whose Write fails from its n-th call on (the disk full).
class FailingWrites : public CachedStore {
 public:
  FailingWrites(std::unique_ptr<CatalogStore> store, int failing_call)
      : CachedStore(std::move(store), 1 << 20), failing_call_(failing_call) {}
  absl::StatusOr<int64_t> Write(const std::vector<BatchWrite>& writes) override {
    if (++calls_ >= failing_call_) return absl::ResourceExhaustedError("the disk is full");
    return CachedStore::Write(writes);
  }

 private:
  int failing_call_;
  int calls_ = 0;
};

// A store that records the batches an atomic import's transaction pulls.
class RecordedTransactions : public CachedStore {
 public:
  explicit RecordedTransactions(std::unique_ptr<CatalogStore> store)
      : CachedStore(std::move(store), 1 << 20) {}
  absl::StatusOr<int64_t> WriteInOneTransaction(const BatchSource& next_batch) override {
    ++transactions;
    return CachedStore::WriteInOneTransaction([&](std::vector<BatchWrite>* batch) {
      absl::Status status = next_batch(batch);
      if (!batch->empty()) batch_sizes.push_back(batch->size());
      return status;
    });
  }
  absl::StatusOr<int64_t> Write(const std::vector<BatchWrite>& writes) override {
    ++writes_called;
    return CachedStore::Write(writes);
  }
  int transactions = 0;
  int writes_called = 0;
  std::vector<size_t> batch_sizes;
};

TEST_F(ImportStagesTest, AnAtomicImportIsWrittenAChunkAtATimeInOneTransaction) {
  const int rows = 4 * kChunkRows + 3;
  for (bool in_stages : {true, false}) {
    SCOPED_TRACE(in_stages ? "in stages" : "in turn");
    auto sqlite = SqliteStore::Open(":memory:");
    ASSERT_TRUE(sqlite.ok());
    auto recorded = std::make_unique<RecordedTransactions>(*std::move(sqlite));
    RecordedTransactions* store = recorded.get();
    Catalog catalog(std::move(recorded));
    catalog.SetImportStagesForTesting(in_stages);
    v1::ImportOptions atomic;
    atomic.set_atomic(true);
    absl::StatusOr<v1::ImportReport> report = catalog.ImportFile(GeneratedCsv(rows), atomic);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->created(), rows);
    EXPECT_EQ(store->transactions, 1);
    EXPECT_EQ(store->writes_called, 0);  // nothing collected into one Write
    EXPECT_EQ(store->batch_sizes,
              std::vector<size_t>({kChunkRows, kChunkRows, kChunkRows, kChunkRows, 3}));
    EXPECT_EQ(catalog.Info()->model_count(), rows);
  }
}

// As catalog-service stacks its store (main.cc: the record cache over the
// metrics over SQLite): each layer passes the transaction down, none falls
// back to the default that collects every batch into one Write (which took
// a 1,000,000-row atomic import to 982 MiB before the metrics layer passed
// it on; docs/BENCHMARKS.md, session 16, branch s16-atomic).
TEST_F(ImportStagesTest, TheServicesStoreLayersPassAnAtomicImportsTransactionDown) {
  prometheus::Registry registry;
  auto sqlite = SqliteStore::Open(":memory:");
  ASSERT_TRUE(sqlite.ok());
  auto recorded = std::make_unique<RecordedTransactions>(*std::move(sqlite));
  RecordedTransactions* store = recorded.get();
  auto metrics = std::make_shared<StoreMetrics>(registry, "sqlite");
  Catalog catalog(
      std::make_unique<CachedStore>(InstrumentStore(std::move(recorded), metrics), 1 << 20));
  v1::ImportOptions atomic;
  atomic.set_atomic(true);
  absl::StatusOr<v1::ImportReport> report =
      catalog.ImportFile(GeneratedCsv(2 * kChunkRows + 1), atomic);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(store->transactions, 1);
  EXPECT_EQ(store->writes_called, 0);
  EXPECT_EQ(store->batch_sizes, std::vector<size_t>({kChunkRows, kChunkRows, 1}));
}

TEST_F(ImportStagesTest, AFailedWriteMidFileStopsTheOtherStagesAsInTurn) {
  const std::string csv = GeneratedCsv(5 * kChunkRows);
  for (bool in_stages : {true, false}) {
    SCOPED_TRACE(in_stages ? "in stages" : "in turn");
    auto store = SqliteStore::Open(":memory:");
    ASSERT_TRUE(store.ok());
    Catalog catalog(std::make_unique<FailingWrites>(*std::move(store), 3));
    catalog.SetImportStagesForTesting(in_stages);
    absl::StatusOr<v1::ImportReport> report = catalog.ImportFile(csv, {});
    EXPECT_EQ(report.status().code(), absl::StatusCode::kResourceExhausted) << report.status();
    EXPECT_NE(report.status().message().find(absl::StrCat("after ", 2 * kChunkRows, " records")),
              absl::string_view::npos)
        << report.status();
    EXPECT_EQ(catalog.Info()->model_count(), 2 * kChunkRows);
  }
}

// On real files: the shipped dataset's export and Epoch AI's all_ai_models.csv.
class StreamedRealFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = SqliteStore::Open(":memory:");
    ASSERT_TRUE(store.ok()) << store.status();
    catalog_ = std::make_unique<Catalog>(*std::move(store));
    absl::StatusOr<v1::Dataset> shipped = ShippedDataset();
    ASSERT_TRUE(shipped.ok()) << shipped.status();
    ASSERT_TRUE(catalog_->CreateAll(*shipped).ok());
  }
  void ExpectStreamedAsPlannedWhole(const std::string& content, const std::string& name) {
    v1::ImportOptions options;
    options.set_source_name(name);
    options.set_full_report(true);
    absl::StatusOr<ParsedFile> file = ParseImportFile(content, options.format(), name);
    ASSERT_TRUE(file.ok()) << file.status();
    v1::ImportOptions dry = options;
    dry.set_dry_run(true);
    absl::StatusOr<v1::ImportReport> whole = catalog_->Import(*file, dry);
    ASSERT_TRUE(whole.ok()) << whole.status();
    absl::StatusOr<v1::ImportReport> streamed = catalog_->ImportFile(content, options);
    ASSERT_TRUE(streamed.ok()) << streamed.status();
    ExpectSameOutcomes(*whole, *streamed);
    EXPECT_TRUE(streamed->committed());
    RecordProperty(absl::StrCat(name, "_rows"), std::to_string(streamed->rows_read()));
  }
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(StreamedRealFilesTest, ShippedDatasetExportIntoAnEmptyAndAFullCatalog) {
  absl::StatusOr<std::vector<Model>> models = catalog_->ListAll<Model>("");
  ASSERT_TRUE(models.ok());
  const std::string csv = ExportModelsCsv(*models);
  ExpectStreamedAsPlannedWhole(csv, "export.csv");  // every record there
  auto store = SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  catalog_ = std::make_unique<Catalog>(*std::move(store));
  ExpectStreamedAsPlannedWhole(csv, "export.csv");  // none there
  EXPECT_EQ(catalog_->Info()->model_count(), static_cast<int64_t>(models->size()));
}

TEST_F(StreamedRealFilesTest, EpochAllAiModels) {
  REQUIRE_SHARED_DATA(hardware_path, "epoch/ml_hardware.csv");
  REQUIRE_SHARED_DATA(models_path, "epoch/all_ai_models.csv");
  ExpectStreamedAsPlannedWhole(testing::ReadFile(hardware_path), "ml_hardware.csv");
  ExpectStreamedAsPlannedWhole(testing::ReadFile(models_path), "all_ai_models.csv");
}

}  // namespace
}  // namespace modelatlas::catalog
