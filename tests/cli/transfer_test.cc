// What `modelatlas import` reads from: a path, an http(s) URL or a named
// source, and the report it prints (conflicts, changes).
#include "cli/transfer.h"

#include <gtest/gtest.h>

#include <sstream>

namespace modelatlas::cli {
namespace {

namespace v1 = catalog::v1;

TEST(ImportSourceTest, ADashIsStandardInput) {
  absl::StatusOr<ImportSource> stdin_source = ResolveImportSource("-", "https://x");
  ASSERT_TRUE(stdin_source.ok()) << stdin_source.status();
  EXPECT_EQ(stdin_source->path, "-");
  EXPECT_EQ(stdin_source->url, "");
  EXPECT_EQ(stdin_source->source_name, "stdin");
}

TEST(ImportSourceTest, PathsUrlsAndNamedSources) {
  absl::StatusOr<ImportSource> path = ResolveImportSource("../data/ml_hardware.csv", "https://x");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(path->path, "../data/ml_hardware.csv");
  EXPECT_EQ(path->url, "");
  EXPECT_EQ(path->source_name, "ml_hardware.csv");

  absl::StatusOr<ImportSource> url =
      ResolveImportSource("HTTPS://example.org/a/b/models.csv?download=1#top", "https://x");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->path, "");
  EXPECT_EQ(url->url, "HTTPS://example.org/a/b/models.csv?download=1#top");
  EXPECT_EQ(url->source_name, "models.csv");

  absl::StatusOr<ImportSource> named =
      ResolveImportSource("epoch:large-scale", "http://127.0.0.1:8080/data/");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->url, "http://127.0.0.1:8080/data/large_scale_ai_models.csv");
  EXPECT_EQ(named->source_name, "large_scale_ai_models.csv");
  EXPECT_EQ(ResolveImportSource("epoch:hardware", "https://epoch.ai/data")->url,
            "https://epoch.ai/data/ml_hardware.csv");
}

TEST(ImportSourceTest, UnknownNamesAndOtherSchemesAreRefused) {
  absl::StatusOr<ImportSource> unknown = ResolveImportSource("epoch:everything", "https://x");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("epoch:models, epoch:notable"), std::string::npos)
      << unknown.status();
  for (const char* address : {"file:///etc/passwd", "ftp://example.org/x.csv", "gopher://h/"}) {
    EXPECT_EQ(ResolveImportSource(address, "https://x").status().code(),
              absl::StatusCode::kInvalidArgument)
        << address;
  }
}

TEST(ImportReportTest, ConflictsAreAllShownAndUnchangedRowsAreNotListedAsChanges) {
  v1::ImportReport report;
  report.set_format(v1::FILE_FORMAT_EPOCH_HARDWARE_CSV);
  report.set_rows_read(2);
  report.set_updated(1);
  report.set_unchanged(1);
  report.set_committed(true);
  v1::ImportConflict* conflict = report.add_conflicts();
  conflict->set_row(1);
  conflict->set_name("hardware/h100");
  conflict->set_field("memory_bytes");
  conflict->set_existing_value("85899345920");
  conflict->set_existing_source("datasheet");
  conflict->set_imported_value("80000000000");
  conflict->set_imported_source("Epoch AI, ml_hardware.csv");
  v1::ImportedRecord* updated = report.add_changes();
  updated->set_row(1);
  updated->set_name("hardware/h100");
  updated->set_outcome(v1::IMPORT_OUTCOME_UPDATED);
  updated->add_changed_fields("tdp_watts");
  v1::ImportedRecord* unchanged = report.add_changes();
  unchanged->set_row(2);
  unchanged->set_name("hardware/other");
  unchanged->set_outcome(v1::IMPORT_OUTCOME_UNCHANGED);
  std::ostringstream out;
  PrintImportReport(report, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("1 conflicts"), std::string::npos) << text;
  EXPECT_NE(text.find("conflict row 1 hardware/h100 memory_bytes: kept 85899345920 (datasheet), "
                      "file 80000000000 (Epoch AI, ml_hardware.csv)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("row 1 hardware/h100 updated: tdp_watts"), std::string::npos) << text;
  EXPECT_EQ(text.find("hardware/other"), std::string::npos) << text;
  EXPECT_EQ(text.find("more changes"), std::string::npos) << text;
}

}  // namespace
}  // namespace modelatlas::cli
