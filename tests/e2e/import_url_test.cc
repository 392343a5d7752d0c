// `modelatlas import` from where the data lives: an http(s) URL or a named
// source (epoch:NAME), fetched by the CLI from a local HTTP server the test
// starts (no test reaches the internet), and the full report in a file.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/e2e/end_to_end.h"
#include "tests/estimator/model_files.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas {
namespace {

namespace fs = std::filesystem;
using estimator::testing::HubFixture;
using testing::RunCommand;

constexpr char kHardwareCsv[] =
    "Hardware name,Manufacturer,Type,Memory (bytes),TDP (W)\n"
    "URL Test Chip,Acme,GPU,24000000000,300\n";
constexpr char kModelsCsv[] =
    "Model,Organization,Parameters,Training hardware\n"
    "URL Model One,Acme,7000000000,URL Test Chip\n"
    "\"URL Model\nTwo \",Acme,1000000000,\n"
    "URL Model Bad,Acme,many,\n";

class ImportUrlTest : public EndToEndTest {
 protected:
  void SetUp() override {
    EndToEndTest::SetUp();
    hub_ = std::make_unique<HubFixture>(fs::path(dir_) / "web");
    ASSERT_NE(hub_->port(), 0);
    const fs::path root = fs::path(dir_) / "web" / "root";
    estimator::testing::WriteModelFile(root / "data/ml_hardware.csv", kHardwareCsv);
    estimator::testing::WriteModelFile(root / "data/all_ai_models.csv", kModelsCsv);
    // /moved/FILE answers 302 to /data/FILE (the server re-reads its rules per request).
    const std::string rules = testing::ReadFile((root / "_rules.json").string());
    estimator::testing::WriteModelFile(
        root / "_rules.json",
        absl::StrCat(rules.substr(0, rules.rfind(']')),
                     ",\n{\"match\": \"/moved/(.*)\", \"redirect\": \"/data/\\\\1\"}\n]\n"));
    catalog_ = Start({CATALOG_SERVICE_BIN, "--sqlite_path=" + dir_ + "/catalog.db"}, "catalog");
    ASSERT_TRUE(testing::WaitUntilServing(Channel(catalog_), "readiness", kStartTimeoutMs));
  }
  void TearDown() override {
    EndToEndTest::TearDown();
    hub_.reset();
  }

  testing::CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {MODELATLAS_CLI_BIN, "--catalog=" + catalog_.address()});
    return RunCommand(args);
  }

  std::unique_ptr<HubFixture> hub_;
};

TEST_F(ImportUrlTest, ImportsFromAUrlAndANamedSourceWithAFullReportFile) {
  // A URL that redirects: the CLI follows it and names the file in provenance.
  const auto hardware = Cli({"import", hub_->endpoint() + "/moved/ml_hardware.csv"});
  EXPECT_EQ(hardware.exit_code, 0) << hardware.err << hardware.out;
  EXPECT_TRUE(absl::StrContains(hardware.out, "1 rows read; 1 created")) << hardware.out;
  const auto chip = Cli({"--json", "hardware", "get", "URL Test Chip"});
  EXPECT_EQ(chip.exit_code, 0) << chip.err;
  EXPECT_TRUE(absl::StrContains(chip.out, "Epoch AI, ml_hardware.csv")) << chip.out;

  // epoch:models is all_ai_models.csv under --epoch_data_url.
  const std::string report = dir_ + "/report.json";
  const auto models = Cli({"import", "epoch:models",
                           "--epoch_data_url=" + hub_->endpoint() + "/data", "--report=" + report});
  EXPECT_EQ(models.exit_code, 0) << models.err << models.out;
  EXPECT_TRUE(
      absl::StrContains(models.out, "3 rows read; 2 created, 0 updated, 0 unchanged, 1 rejected"))
      << models.out;
  EXPECT_TRUE(absl::StrContains(models.out, "rejected row 3 (line 5) \"URL Model Bad\""))
      << models.out;
  EXPECT_TRUE(absl::StrContains(models.out, "full report (every row): " + report)) << models.out;
  const std::string json = testing::ReadFile(report);
  EXPECT_TRUE(absl::StrContains(json, "\"display_name\": \"URL Model Two\"")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"row\": \"3\"")) << json;

  // The same source again: every row unchanged, and the report file says so row by row.
  const auto again = Cli({"import", "epoch:models",
                          "--epoch_data_url=" + hub_->endpoint() + "/data", "--report=" + report});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(absl::StrContains(again.out, "0 created, 0 updated, 2 unchanged")) << again.out;
  const std::string unchanged = testing::ReadFile(report);
  size_t rows = 0;
  for (size_t at = 0; (at = unchanged.find("IMPORT_OUTCOME_UNCHANGED", at)) != std::string::npos;
       ++at) {
    ++rows;
  }
  EXPECT_EQ(rows, 2u) << unchanged;
}

TEST_F(ImportUrlTest, BadAddressesAreRefusedAndTheCatalogNeverFetches) {
  const auto missing = Cli({"import", hub_->endpoint() + "/data/missing.csv"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(missing.err, "HTTP 404")) << missing.err;
  const auto unknown = Cli({"import", "epoch:everything"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(unknown.err, "epoch:models")) << unknown.err;
  const auto scheme = Cli({"import", "file:///etc/passwd"});
  EXPECT_EQ(scheme.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(scheme.err, "only http:// and https://")) << scheme.err;

  // A file that holds nothing but an address: the catalog reads bytes, it
  // does not fetch what they name (no server-side request forgery).
  const std::string before = hub_->log();
  const std::string file = dir_ + "/address.csv";
  estimator::testing::WriteModelFile(file, hub_->endpoint() + "/data/ml_hardware.csv\n");
  const auto refused = Cli({"import", file});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(refused.err, "INVALID_ARGUMENT")) << refused.err;
  EXPECT_EQ(hub_->log(), before) << "the catalog made a request";
}

}  // namespace
}  // namespace modelatlas
