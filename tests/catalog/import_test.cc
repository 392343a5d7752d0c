// Catalog::Import over both stores: matching, idempotence, updates of what
// changed, duplicates, rejections, atomic and dry-run modes, linking,
// configs, and export.
#include <gtest/gtest.h>

#include "catalog-service/import/import_file.h"
#include "google/protobuf/util/json_util.h"
#include "tests/catalog/catalog_on_store.h"

namespace modelatlas::catalog {
namespace {

constexpr char kHeader[] =
    "Model,Organization,Parameters,Training hardware,Publication date,Confidence,Training "
    "dataset\n";

class ImportTest : public CatalogOnStoreTest {
 protected:
  v1::ImportReport Import(const std::string& content, v1::ImportOptions options = {}) {
    absl::StatusOr<ParsedFile> file =
        ParseImportFile(content, options.format(), options.source_name());
    EXPECT_TRUE(file.ok()) << file.status();
    if (!file.ok()) return {};
    absl::StatusOr<v1::ImportReport> report = catalog_->Import(*file, options);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : v1::ImportReport();
  }

  void AddHardware() {
    Hardware hardware;
    hardware.set_display_name("NVIDIA A100 SXM4 40 GB");
    hardware.add_aliases("NVIDIA A100");
    hardware.mutable_provenance()->set_source("test");
    ASSERT_TRUE(catalog_->Create<Hardware>("nvidia-a100", hardware).ok());
  }

  int64_t ModelCount() { return catalog_->Info()->model_count(); }
};

TEST_P(ImportTest, CreatesThenReimportChangesNothing) {
  AddHardware();
  const std::string file = absl::StrCat(
      kHeader,
      "GPT-2 (1.5B),OpenAI,1500000000.0,NVIDIA A100,2019-02-14,Confident,WebText\n"
      "\"Model, with comma\",\"A,B\",2e9,\"NVIDIA A100,Mystery Chip\",2020-01-01,Likely,\n");
  v1::ImportReport first = Import(file);
  EXPECT_EQ(first.format(), v1::FILE_FORMAT_EPOCH_MODELS_CSV);
  EXPECT_EQ(first.rows_read(), 2);
  EXPECT_EQ(first.created(), 2);
  EXPECT_EQ(first.rejected(), 0);
  EXPECT_TRUE(first.committed());
  EXPECT_EQ(first.hardware_linking().mentions(), 3);
  EXPECT_EQ(first.hardware_linking().resolved(), 2);
  ASSERT_EQ(first.hardware_linking().unresolved_size(), 1);
  EXPECT_EQ(first.hardware_linking().unresolved(0).name(), "Mystery Chip");
  EXPECT_EQ(first.unmapped_columns_size(), 1);

  absl::StatusOr<Model> gpt2 = catalog_->Get<Model>("models/gpt-2-1-5b");
  ASSERT_TRUE(gpt2.ok()) << gpt2.status();
  EXPECT_EQ(gpt2->parameters(), 1.5e9);
  EXPECT_EQ(gpt2->training_hardware_refs(0), "hardware/nvidia-a100");
  EXPECT_EQ(gpt2->other_source_columns().at("Training dataset"), "WebText");
  EXPECT_EQ(gpt2->provenance().source(), "Epoch AI, models CSV");
  absl::StatusOr<Model> comma = catalog_->Get<Model>("Model, with comma");
  ASSERT_TRUE(comma.ok()) << comma.status();
  EXPECT_EQ(comma->organizations_size(), 2);

  const int64_t revision = catalog_->Info()->revision();
  v1::ImportReport second = Import(file);
  EXPECT_EQ(second.unchanged(), 2);
  EXPECT_EQ(second.created() + second.updated(), 0);
  EXPECT_EQ(catalog_->Info()->revision(), revision) << "a no-op import wrote";
}

TEST_P(ImportTest, ChangedRowUpdatesOnlyWhatChangedAndKeepsOtherFields) {
  Import(absl::StrCat(kHeader, "Model A,Org,1e9,,2020-01-01,Likely,\n"));
  Model edit;
  edit.set_name("models/model-a");
  edit.set_abstract("written by hand");
  ASSERT_TRUE(catalog_->Update<Model>(edit, {"abstract"}).ok());

  v1::ImportReport report = Import(absl::StrCat(kHeader, "Model A,Org,2e9,,2020-01-01,Likely,\n"));
  EXPECT_EQ(report.updated(), 1);
  ASSERT_EQ(report.changes_size(), 1);
  EXPECT_EQ(std::vector<std::string>(report.changes(0).changed_fields().begin(),
                                     report.changes(0).changed_fields().end()),
            std::vector<std::string>{"parameters"});
  absl::StatusOr<Model> model = catalog_->Get<Model>("models/model-a");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->parameters(), 2e9);
  EXPECT_EQ(model->abstract(), "written by hand") << "an import erased a field it does not carry";
}

TEST_P(ImportTest, DuplicateAndLookAlikeNamesStaySeparateAndAreReported) {
  const std::string file = absl::StrCat(kHeader,
                                        "Twin,First,1,,,,\n"
                                        "Twin,Second,2,,,,\n"
                                        "Nova-2,X,3,,,,\n"
                                        "Nova 2,Y,4,,,,\n"
                                        "Nova 2 ,Z,5,,,,\n");
  v1::ImportReport report = Import(file);
  EXPECT_EQ(report.created(), 5);
  // "Nova 2 " is "Nova 2" once its name is cleaned: a duplicate, kept apart.
  ASSERT_EQ(report.duplicate_names_size(), 2);
  EXPECT_EQ(report.duplicate_names(0).display_name(), "Nova 2");
  EXPECT_EQ(report.duplicate_names(0).names(1), "models/nova-2-2");
  EXPECT_EQ(report.duplicate_names(1).display_name(), "Twin");
  EXPECT_EQ(report.duplicate_names(1).names(1), "models/twin-2");
  EXPECT_EQ(catalog_->Get<Model>("models/twin-2")->organizations(0), "Second");
  // Names that share a slug get the hash of the exact name; the second row
  // of a name is numbered.
  EXPECT_EQ(catalog_->Get<Model>("models/nova-2")->organizations(0), "X");
  EXPECT_EQ(catalog_->Get<Model>("models/nova-2-0ada2a2d")->organizations(0), "Y");
  EXPECT_EQ(catalog_->Get<Model>("models/nova-2-2")->organizations(0), "Z");

  v1::ImportReport again = Import(file);
  EXPECT_EQ(again.unchanged(), 5) << again.DebugString();
}

TEST_P(ImportTest, BadRowIsRejectedWithRowAndColumnOthersImported) {
  v1::ImportReport report = Import(absl::StrCat(kHeader,
                                                "Good,Org,1e9,,,,\n"
                                                "Bad,Org,seven billion,,,,\n"
                                                ",Org,1,,,,\n"
                                                "Worse,Org,1,,2024-99-01,Sure,\n"));
  EXPECT_EQ(report.created(), 1);
  EXPECT_EQ(report.rejected(), 3);
  ASSERT_GE(report.rejections_size(), 4);
  EXPECT_EQ(report.rejections(0).row(), 2);
  EXPECT_EQ(report.rejections(0).line(), 3);
  EXPECT_EQ(report.rejections(0).column(), "Parameters");
  EXPECT_EQ(report.rejections(0).record(), "Bad");
  EXPECT_EQ(report.rejections(1).column(), "Model");
  EXPECT_EQ(ModelCount(), 1);
  EXPECT_FALSE(catalog_->Get<Model>("Bad").ok());
}

TEST_P(ImportTest, AtomicImportWithABadRowWritesNothing) {
  v1::ImportOptions options;
  options.set_atomic(true);
  v1::ImportReport report =
      Import(absl::StrCat(kHeader, "Good,Org,1e9,,,,\nBad,Org,-1,,,,\n"), options);
  EXPECT_FALSE(report.committed());
  EXPECT_EQ(report.rejected(), 1);
  EXPECT_EQ(ModelCount(), 0);

  report = Import(absl::StrCat(kHeader, "Good,Org,1e9,,,,\nAlso good,Org,2,,,,\n"), options);
  EXPECT_TRUE(report.committed());
  EXPECT_EQ(ModelCount(), 2);
}

TEST_P(ImportTest, DryRunReportsAndWritesNothing) {
  v1::ImportOptions options;
  options.set_dry_run(true);
  v1::ImportReport report = Import(absl::StrCat(kHeader, "A,Org,1,,,,\nB,Org,2,,,,\n"), options);
  EXPECT_EQ(report.created(), 2);
  EXPECT_TRUE(report.dry_run());
  EXPECT_FALSE(report.committed());
  EXPECT_EQ(report.changes_size(), 2);
  EXPECT_EQ(ModelCount(), 0);
}

TEST_P(ImportTest, HardwareRowsMatchByAliasAndKeepTheRecordsName) {
  AddHardware();
  v1::ImportReport report = Import(
      "Hardware name,Manufacturer,Type,Memory (bytes),TDP (W),Foundry\n"
      "NVIDIA A100,NVIDIA,GPU,40000000000,400,TSMC\n"
      "Brand New Chip,Acme,NPU,1e9,75,\n");
  EXPECT_EQ(report.format(), v1::FILE_FORMAT_EPOCH_HARDWARE_CSV);
  EXPECT_EQ(report.updated(), 1);
  EXPECT_EQ(report.created(), 1);
  absl::StatusOr<Hardware> a100 = catalog_->Get<Hardware>("hardware/nvidia-a100");
  ASSERT_TRUE(a100.ok());
  EXPECT_EQ(a100->display_name(), "NVIDIA A100 SXM4 40 GB");
  EXPECT_EQ(a100->tdp_watts(), 400);
  EXPECT_EQ(a100->other_source_columns().at("Foundry"), "TSMC");
  absl::StatusOr<Hardware> chip = catalog_->Get<Hardware>("Brand New Chip");
  ASSERT_TRUE(chip.ok());
  EXPECT_EQ(chip->type(), common::v1::HARDWARE_TYPE_ACCELERATOR);
  // The exact label is kept and written back on export.
  EXPECT_NE(ExportHardwareCsv({*chip}).find("Brand New Chip,Acme,NPU,"), std::string::npos);
}

TEST_P(ImportTest, HfConfigSetsTheArchitectureOfTheNamedModel) {
  Import(absl::StrCat(kHeader, "Tiny LM,Org,1,,,,\n"));
  const std::string config = R"({"model_type": "llama", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
      "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 256})";
  v1::ImportOptions options;
  absl::StatusOr<ParsedFile> file = ParseImportFile(config, v1::FILE_FORMAT_UNSPECIFIED, "c.json");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->format, v1::FILE_FORMAT_HF_CONFIG_JSON);
  EXPECT_EQ(catalog_->Import(*file, options).status().code(), absl::StatusCode::kInvalidArgument);
  options.set_model("Missing model");
  EXPECT_EQ(catalog_->Import(*file, options).status().code(), absl::StatusCode::kNotFound);
  options.set_model("tiny lm");
  absl::StatusOr<v1::ImportReport> report = catalog_->Import(*file, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->updated(), 1);
  absl::StatusOr<Model> model = catalog_->Get<Model>("models/tiny-lm");
  EXPECT_EQ(model->architecture().num_layers(), 2);
  EXPECT_EQ(model->architecture().num_key_value_heads(), 2);
  EXPECT_EQ(model->parameters(), 1) << "the config replaced fields it does not carry";
  EXPECT_EQ(catalog_->Import(*file, options)->unchanged(), 1);
}

TEST_P(ImportTest, GpuSpecTablesBecomeHardwareInBytesAndFlops) {
  v1::ImportReport report = Import(R"({"name": "h100-sxm-80gb", "mem_per_GPU_in_GB": 80,
      "hbm_bandwidth_in_GB_per_sec": 3350, "intra_node_bandwidth_in_GB_per_sec": 450,
      "intra_node_min_message_latency": 8e-06, "peak_fp16_TFLOPS": 989, "peak_i8_TFLOPS": 1979,
      "peak_i4_TFLOPS": 3958, "inter_node_bandwidth_in_GB_per_sec": 400})");
  EXPECT_EQ(report.format(), v1::FILE_FORMAT_LLM_ANALYSIS_GPU_JSON);
  absl::StatusOr<Hardware> h100 = catalog_->Get<Hardware>("hardware/h100-sxm-80gb");
  ASSERT_TRUE(h100.ok()) << h100.status();
  EXPECT_EQ(h100->memory_bytes(), 80e9);
  EXPECT_EQ(h100->peak().tensor_fp16_bf16_flops(), 989e12);

  report = Import(R"({"rtx-3090": {"bandwidth": 936, "compute": 16.3, "memory": 24},
                      "broken": {"bandwidth": "fast", "compute": 1, "memory": 1}})");
  EXPECT_EQ(report.format(), v1::FILE_FORMAT_GPU_POOR_JSON);
  EXPECT_EQ(report.created(), 1);
  EXPECT_EQ(report.rejected(), 1);
  EXPECT_EQ(catalog_->Get<Hardware>("rtx-3090")->peak().fp32_flops(), 16.3e12);
}

TEST_P(ImportTest, JsonExportImportsBackUnchanged) {
  AddHardware();
  Import(absl::StrCat(kHeader, "A,Org,1,NVIDIA A100,2020-01-01,Likely,x\n"));
  v1::Dataset dataset;
  absl::StatusOr<std::vector<Model>> models = catalog_->ListAll<Model>("");
  absl::StatusOr<std::vector<Hardware>> hardware = catalog_->ListAll<Hardware>("");
  ASSERT_TRUE(models.ok() && hardware.ok());
  for (const Model& m : *models) *dataset.add_models() = m;
  for (const Hardware& h : *hardware) *dataset.add_hardware() = h;
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(dataset, &json).ok());
  v1::ImportReport report = Import(json);
  EXPECT_EQ(report.format(), v1::FILE_FORMAT_CATALOG_JSON);
  EXPECT_EQ(report.unchanged(), 2);
  EXPECT_EQ(report.created() + report.updated(), 0);
}

TEST_P(ImportTest, UnknownFilesAreRefusedWithWhatWasSeen) {
  absl::StatusOr<ParsedFile> file = ParseImportFile(
      "observation_date,PCU518210518210\n2001-01-01,100\n", v1::FILE_FORMAT_UNSPECIFIED, "");
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(file.status().message().find("observation_date"), std::string::npos);
  EXPECT_EQ(ParseImportFile("Model,Parameters\n\"never closed,1\n", v1::FILE_FORMAT_UNSPECIFIED, "")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseImportFile("", v1::FILE_FORMAT_UNSPECIFIED, "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(ImportTest, ReportsStayBoundedForLargeFiles) {
  std::string file = kHeader;
  for (int i = 0; i < 1200; ++i) absl::StrAppend(&file, "Bulk ", i, ",Org,", i + 1, ",,,,\n");
  v1::ImportReport report = Import(file);
  EXPECT_EQ(report.created(), 1200);
  EXPECT_EQ(report.changes_size(), 1000);
  EXPECT_EQ(report.changes_omitted(), 200);
}

// A curated record: memory and bandwidth as the datasheet gives them
// (80 GiB, 3.35 TB/s), no TDP.
Hardware CuratedH100() {
  Hardware hardware;
  hardware.set_display_name("NVIDIA H100 SXM");
  hardware.set_memory_bytes(80.0 * (1ull << 30));  // 80 GiB, bytes
  hardware.set_memory_bandwidth_bytes_per_second(3.35e12);
  hardware.mutable_provenance()->set_source("NVIDIA H100 datasheet");
  return hardware;
}

// Epoch's memory is 80 GB (decimal), the same 80 GiB once converted; the
// bandwidth is another figure (a conflict).
constexpr char kEpochH100[] =
    "Hardware name,Memory (bytes),Memory bandwidth (byte/s),TDP (W)\n"
    "NVIDIA H100 SXM,80000000000,3352000000000,700\n";

TEST_P(ImportTest, ValuesFromAnotherSourceAreKeptAndReportedUnlessOverwritten) {
  ASSERT_TRUE(catalog_->Create<Hardware>("nvidia-h100-sxm", CuratedH100()).ok());
  v1::ImportOptions options;
  options.set_source_name("ml_hardware.csv");
  v1::ImportReport report = Import(kEpochH100, options);
  EXPECT_EQ(report.updated(), 1) << "the TDP the record lacked is taken";
  ASSERT_EQ(report.conflicts_size(), 1);
  const v1::ImportConflict& conflict = report.conflicts(0);
  EXPECT_EQ(conflict.row(), 1);
  EXPECT_EQ(conflict.name(), "hardware/nvidia-h100-sxm");
  EXPECT_EQ(conflict.field(), "memory_bandwidth_bytes_per_second");
  EXPECT_EQ(conflict.existing_value(), "3350000000000");
  EXPECT_EQ(conflict.existing_source(), "NVIDIA H100 datasheet");
  EXPECT_EQ(conflict.imported_value(), "3352000000000");
  EXPECT_EQ(conflict.imported_source(), "Epoch AI, ml_hardware.csv");
  EXPECT_FALSE(conflict.overwritten());
  absl::StatusOr<Hardware> h100 = catalog_->Get<Hardware>("hardware/nvidia-h100-sxm");
  ASSERT_TRUE(h100.ok());
  EXPECT_EQ(h100->memory_bandwidth_bytes_per_second(), 3.35e12) << "a curated value was replaced";
  EXPECT_EQ(h100->memory_bytes(), 80.0 * (1ull << 30));
  EXPECT_EQ(h100->tdp_watts(), 700);
  EXPECT_EQ(h100->provenance().source(), "NVIDIA H100 datasheet");
  EXPECT_EQ(h100->provenance().field_sources().at("tdp_watts"), "Epoch AI, ml_hardware.csv");
  EXPECT_FALSE(h100->provenance().field_sources().contains("memory_bandwidth_bytes_per_second"));
  EXPECT_EQ(h100->provenance().urls(0), "https://epoch.ai/data/machine-learning-hardware");

  // Importing again changes nothing and reports the same conflict.
  int64_t revision = catalog_->Info()->revision();
  report = Import(kEpochH100, options);
  EXPECT_EQ(report.unchanged(), 1);
  EXPECT_EQ(report.conflicts_size(), 1);
  EXPECT_EQ(catalog_->Info()->revision(), revision) << "a no-op import wrote";

  // Asked to, the import takes the file's value and says so.
  v1::ImportOptions overwrite = options;
  overwrite.add_overwrite("memory_bandwidth_bytes_per_second");
  report = Import(kEpochH100, overwrite);
  EXPECT_EQ(report.updated(), 1);
  ASSERT_EQ(report.conflicts_size(), 1);
  EXPECT_TRUE(report.conflicts(0).overwritten());
  h100 = catalog_->Get<Hardware>("hardware/nvidia-h100-sxm");
  ASSERT_TRUE(h100.ok());
  EXPECT_EQ(h100->memory_bandwidth_bytes_per_second(), 3.352e12);
  EXPECT_EQ(h100->provenance().field_sources().at("memory_bandwidth_bytes_per_second"),
            "Epoch AI, ml_hardware.csv");

  // Now the value is Epoch's: the next import of the same file is a no-op.
  revision = catalog_->Info()->revision();
  report = Import(kEpochH100, options);
  EXPECT_EQ(report.unchanged(), 1);
  EXPECT_EQ(report.conflicts_size(), 0);
  EXPECT_EQ(catalog_->Info()->revision(), revision);
}

TEST_P(ImportTest, OverwriteAllTakesEveryValueAndUnknownFieldsAreRefused) {
  ASSERT_TRUE(catalog_->Create<Hardware>("nvidia-h100-sxm", CuratedH100()).ok());
  v1::ImportOptions options;
  options.add_overwrite("all");
  v1::ImportReport report = Import(kEpochH100, options);
  ASSERT_EQ(report.conflicts_size(), 1);
  EXPECT_TRUE(report.conflicts(0).overwritten());
  EXPECT_EQ(
      catalog_->Get<Hardware>("hardware/nvidia-h100-sxm")->memory_bandwidth_bytes_per_second(),
      3.352e12);
  EXPECT_EQ(catalog_->Get<Hardware>("hardware/nvidia-h100-sxm")->memory_bytes(),
            80.0 * (1ull << 30))
      << "overwrite=all wrote Epoch's decimal figure, not its conversion";

  v1::ImportOptions bad;
  bad.add_overwrite("memory_bytes");
  bad.add_overwrite("memory");
  absl::StatusOr<ParsedFile> file = ParseImportFile(kEpochH100, bad.format(), "");
  ASSERT_TRUE(file.ok());
  absl::StatusOr<v1::ImportReport> refused = catalog_->Import(*file, bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().ToString().find("options.overwrite[1]"), std::string::npos)
      << refused.status();
}

TEST_P(ImportTest, DisplayNamesAreCleanedAndTheFilesTextKept) {
  const std::string file =
      absl::StrCat(kHeader, "\"  Spaced\nModel \",Org,1e9,,,,\n", "Plain,Org,2e9,,,,\n");
  v1::ImportReport report = Import(file);
  EXPECT_EQ(report.created(), 2);
  absl::StatusOr<Model> model = catalog_->Get<Model>("Spaced Model");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->display_name(), "Spaced Model");
  EXPECT_EQ(model->other_source_columns().at("Model"), "  Spaced\nModel ");
  EXPECT_FALSE(catalog_->Get<Model>("Plain")->other_source_columns().contains("Model"));
  // Export writes the file's own text back, and a re-import changes nothing.
  EXPECT_NE(ExportModelsCsv({*model}).find("\"  Spaced\nModel \""), std::string::npos);
  EXPECT_EQ(Import(file).unchanged(), 2);
}

TEST_P(ImportTest, FullReportListsEveryRowUnchangedOnesToo) {
  std::string file = kHeader;
  for (int i = 0; i < 1200; ++i) absl::StrAppend(&file, "Bulk ", i, ",Org,", i + 1, ",,,,\n");
  absl::StrAppend(&file, "Bad,Org,many,,,,\n");
  v1::ImportOptions options;
  options.set_full_report(true);
  v1::ImportReport report = Import(file, options);
  EXPECT_EQ(report.changes_size(), 1200);
  EXPECT_EQ(report.changes_omitted(), 0);
  ASSERT_EQ(report.rejections_size(), 1);
  EXPECT_EQ(report.rejections(0).row(), 1201);
  report = Import(file, options);
  EXPECT_EQ(report.unchanged(), 1200);
  ASSERT_EQ(report.changes_size(), 1200);
  EXPECT_EQ(report.changes(1199).row(), 1200);
  EXPECT_EQ(report.changes(1199).outcome(), v1::IMPORT_OUTCOME_UNCHANGED);
}

INSTANTIATE_TEST_SUITE_P(Stores, ImportTest,
                         ::testing::Values("sqlite", "sqlite_cached", "postgres"));

}  // namespace
}  // namespace modelatlas::catalog
