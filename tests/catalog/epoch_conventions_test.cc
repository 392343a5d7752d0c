// Epoch AI's hardware figures in other conventions (decimal GB, GeForce
// FP16-accumulate tensor peaks) are stored as the record's fields mean them,
// reported as conversions, and no longer collide with curated values; the
// export writes Epoch's convention back so that a round trip is a no-op.
// Real rows of ../shared/data/epoch/ml_hardware.csv (cells as in the file).
#include "catalog-service/import/epoch_conventions.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "catalog-service/catalog.h"
#include "catalog-service/dataset.h"
#include "catalog-service/import/import_file.h"
#include "catalog-service/store/sqlite_store.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::catalog {
namespace {

using common::v1::Hardware;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Five rows of ml_hardware.csv (the columns these conventions touch, cells
// verbatim): a data-center GPU, a GeForce card with a tensor figure, a
// GeForce card sold in MB, a TPU already in binary bytes, a workstation card.
constexpr char kRows[] =
    "Hardware name,Manufacturer,Tensor-FP16/BF16 performance (FLOP/s),FP8 performance "
    "(FLOP/s),Memory (bytes),Memory bandwidth (byte/s),TDP (W)\n"
    "NVIDIA H100 SXM5 80GB,NVIDIA,989400000000000.0,1979000000000000.0,80000000000.0,"
    "3350000000000.0,700.0\n"
    "NVIDIA GeForce RTX 4090,NVIDIA,330000000000000.0,,24000000000.0,1008000000000.0,450.0\n"
    "NVIDIA GeForce GTX 580,NVIDIA,,,1536000000.0,192400000000.0,244.0\n"
    "Google TPU v1,Google,,,8589934592.0,34000000000.0,75.0\n"
    "NVIDIA RTX 6000 Ada Generation,NVIDIA,,729000000000000.0,,,\n";

ParsedFile Parse(const std::string& content) {
  absl::StatusOr<ParsedFile> file =
      ParseImportFile(content, v1::FILE_FORMAT_UNSPECIFIED, "ml_hardware.csv");
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? *std::move(file) : ParsedFile();
}

const Hardware* Row(const ParsedFile& file, const std::string& name) {
  for (const auto& row : file.hardware) {
    if (row.record.display_name() == name) return &row.record;
  }
  ADD_FAILURE() << "no row " << name;
  return nullptr;
}

TEST(EpochConventionsTest, RealRowsAreStoredAsTheFieldsMeanThem) {
  const ParsedFile file = Parse(kRows);
  ASSERT_EQ(file.format, v1::FILE_FORMAT_EPOCH_HARDWARE_CSV);
  ASSERT_EQ(file.hardware.size(), 5u);

  // 80 GB (decimal) is the vendor's 80 GiB; peaks of a data-center card stay.
  const Hardware* h100 = Row(file, "NVIDIA H100 SXM5 80GB");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->memory_bytes(), 80 * kGiB);
  EXPECT_EQ(h100->peak().tensor_fp16_bf16_flops(), 989.4e12);
  EXPECT_EQ(h100->peak().fp8_flops(), 1979e12);
  EXPECT_FALSE(h100->peak().has_tensor_fp16_fp16_accumulate_flops());

  // GeForce: Epoch's 330 TFLOPS is the FP16-accumulate rate (the Ada
  // whitepaper's 330.3); the field holds the FP32-accumulate half.
  const Hardware* rtx4090 = Row(file, "NVIDIA GeForce RTX 4090");
  ASSERT_NE(rtx4090, nullptr);
  EXPECT_EQ(rtx4090->memory_bytes(), 24 * kGiB);
  EXPECT_EQ(rtx4090->peak().tensor_fp16_bf16_flops(), 165e12);
  EXPECT_EQ(rtx4090->peak().tensor_fp16_fp16_accumulate_flops(), 330e12);

  // 1536 MB is 1536 MiB; a figure already in binary bytes is kept.
  EXPECT_EQ(Row(file, "NVIDIA GeForce GTX 580")->memory_bytes(), 1536.0 * 1024 * 1024);
  EXPECT_EQ(Row(file, "Google TPU v1")->memory_bytes(), 8589934592.0);
  // Workstation cards quote FP32 accumulation: nothing to convert.
  const Hardware* ada = Row(file, "NVIDIA RTX 6000 Ada Generation");
  ASSERT_NE(ada, nullptr);
  EXPECT_EQ(ada->peak().fp8_flops(), 729e12);
  EXPECT_FALSE(ada->peak().has_fp8_fp16_accumulate_flops());

  // Every conversion is reported with both figures; nothing else is.
  std::map<std::string, std::set<std::string>> converted;
  for (const v1::ImportConversion& c : file.conversions) {
    converted[c.display_name()].insert(c.field());
    EXPECT_FALSE(c.reason().empty());
    EXPECT_GT(c.row(), 0);
  }
  EXPECT_EQ(converted["NVIDIA H100 SXM5 80GB"], std::set<std::string>{"memory_bytes"});
  EXPECT_EQ(converted["NVIDIA GeForce RTX 4090"],
            (std::set<std::string>{"memory_bytes", "peak.tensor_fp16_bf16_flops"}));
  EXPECT_EQ(converted["NVIDIA GeForce GTX 580"], std::set<std::string>{"memory_bytes"});
  EXPECT_EQ(converted.count("Google TPU v1"), 0u);
  EXPECT_EQ(converted.count("NVIDIA RTX 6000 Ada Generation"), 0u);
  for (const v1::ImportConversion& c : file.conversions) {
    if (c.display_name() == "NVIDIA GeForce RTX 4090" && c.field() != "memory_bytes") {
      EXPECT_EQ(c.file_value(), "330000000000000");
      EXPECT_EQ(c.stored_value(), "165000000000000");
    }
    if (c.display_name() == "NVIDIA H100 SXM5 80GB") {
      EXPECT_EQ(c.file_value(), "80000000000");
      EXPECT_EQ(c.stored_value(), "85899345920");
    }
  }
}

TEST(EpochConventionsTest, ExportWritesEpochsConventionBackSoTheRoundTripIsANoOp) {
  const ParsedFile file = Parse(kRows);
  std::vector<Hardware> records;
  for (const auto& row : file.hardware) records.push_back(row.record);
  // A curated GeForce record without the quoted figure: the export doubles
  // its FP32-accumulate peak, as Epoch's column holds it.
  Hardware curated;
  curated.set_display_name("NVIDIA GeForce RTX 3090");
  curated.mutable_peak()->set_tensor_fp16_bf16_flops(71e12);
  records.push_back(curated);
  const std::string exported = ExportHardwareCsv(records);
  const ParsedFile again = Parse(exported);
  ASSERT_EQ(again.hardware.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const Hardware& before = records[i];
    const Hardware& after = again.hardware[i].record;
    EXPECT_EQ(after.memory_bytes(), before.memory_bytes()) << before.display_name();
    EXPECT_EQ(after.peak().tensor_fp16_bf16_flops(), before.peak().tensor_fp16_bf16_flops())
        << before.display_name();
    EXPECT_EQ(after.peak().fp8_flops(), before.peak().fp8_flops()) << before.display_name();
  }
  double quoted = 0;
  ASSERT_TRUE(EpochTensorPeak(curated, /*fp8=*/false, &quoted));
  EXPECT_EQ(quoted, 142e12);
}

// The whole file into a catalog holding the shipped records: the curated
// H100's 80 GiB and the RTX 4090's 165.2 TFLOPS are never replaced; where
// Epoch's figure means the same after conversion it is no conflict at all.
TEST(EpochConventionsTest, ReimportOfTheRealFileKeepsCuratedValuesAndReportsConversions) {
  REQUIRE_SHARED_DATA(path, "epoch/ml_hardware.csv");
  auto store = SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok()) << store.status();
  Catalog catalog(*std::move(store));
  absl::StatusOr<v1::Dataset> shipped = ShippedDataset();
  ASSERT_TRUE(shipped.ok()) << shipped.status();
  ASSERT_TRUE(catalog.CreateAll(*shipped).ok());

  const ParsedFile file = Parse(testing::ReadFile(path));
  absl::StatusOr<v1::ImportReport> report = catalog.Import(file, {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->rejected(), 0);
  // Every converted figure is in the report, memory sizes and GeForce peaks.
  int memory = 0, geforce = 0;
  for (const v1::ImportConversion& c : report->conversions()) {
    if (c.field() == "memory_bytes") ++memory;
    if (c.field() == "peak.tensor_fp16_bf16_flops") {
      ++geforce;
      EXPECT_NE(c.display_name().find("GeForce"), std::string::npos) << c.display_name();
    }
  }
  EXPECT_EQ(report->conversions_size() + report->conversions_omitted(),
            static_cast<int64_t>(file.conversions.size()));
  EXPECT_GE(memory, 100) << "decimal memory figures not converted";
  EXPECT_EQ(geforce, 3) << "RTX 4090, RTX 3090 Ti, RTX 2080 Ti carry a tensor figure";
  RecordProperty("memory_conversions", memory);
  std::map<std::string, int> conflicts_by_field;
  for (const v1::ImportConflict& conflict : report->conflicts()) {
    ++conflicts_by_field[conflict.field().substr(0, conflict.field().find('.'))];
  }
  for (const auto& [field, n] : conflicts_by_field) RecordProperty("conflicts_" + field, n);
  RecordProperty("conflicts", report->conflicts_size());
  RecordProperty("created", report->created());
  RecordProperty("updated", report->updated());
  RecordProperty("unchanged", report->unchanged());

  // No memory conflict for a curated figure that is the same size: before
  // the conversion the H100's 80 GiB against Epoch's 80e9 was one.
  for (const v1::ImportConflict& conflict : report->conflicts()) {
    EXPECT_FALSE(conflict.name() == "hardware/nvidia-h100-sxm5-80gb" &&
                 conflict.field() == "memory_bytes")
        << conflict.DebugString();
  }
  absl::StatusOr<Hardware> h100 = catalog.Get<Hardware>("hardware/nvidia-h100-sxm5-80gb");
  ASSERT_TRUE(h100.ok());
  EXPECT_EQ(h100->memory_bytes(), 80 * kGiB);
  absl::StatusOr<Hardware> rtx4090 = catalog.Get<Hardware>("hardware/nvidia-geforce-rtx-4090");
  ASSERT_TRUE(rtx4090.ok());
  EXPECT_EQ(rtx4090->peak().tensor_fp16_bf16_flops(), 165.2e12) << "a curated value was replaced";
  // Epoch's 165e12 (its 330e12, halved) against the datasheet's 165.2e12 is
  // a real (rounding) difference: reported, the curated value kept.
  bool reported = false;
  for (const v1::ImportConflict& conflict : report->conflicts()) {
    if (conflict.name() == "hardware/nvidia-geforce-rtx-4090" &&
        conflict.field() == "peak.tensor_fp16_bf16_flops") {
      reported = !conflict.overwritten() && conflict.existing_value() == "165200000000000" &&
                 conflict.imported_value() == "165000000000000";
    }
  }
  EXPECT_TRUE(reported);

  // Importing the same file again writes nothing and reports the same.
  const int64_t revision = catalog.Info()->revision();
  absl::StatusOr<v1::ImportReport> again = catalog.Import(file, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->created() + again->updated(), 0);
  EXPECT_EQ(again->conversions_size(), report->conversions_size());
  EXPECT_EQ(catalog.Info()->revision(), revision);

  // Even --overwrite=all writes the converted figures, never Epoch's decimal
  // bytes or its FP16-accumulate rate into tensor_fp16_bf16_flops.
  v1::ImportOptions all;
  all.add_overwrite("all");
  ASSERT_TRUE(catalog.Import(file, all).ok());
  h100 = catalog.Get<Hardware>("hardware/nvidia-h100-sxm5-80gb");
  EXPECT_EQ(h100->memory_bytes(), 80 * kGiB);
  rtx4090 = catalog.Get<Hardware>("hardware/nvidia-geforce-rtx-4090");
  EXPECT_EQ(rtx4090->peak().tensor_fp16_bf16_flops(), 165e12);
  EXPECT_EQ(rtx4090->peak().tensor_fp16_fp16_accumulate_flops(), 330e12);
}

// ---- The utilization a model's compute notes assumed (issue 17, 6/7) ----

// Training compute notes of all_ai_models.csv by record name, read in place.
[[maybe_unused]] std::map<std::string, std::string> NotesByName(const std::string& path) {
  std::map<std::string, std::string> notes;
  absl::StatusOr<ParsedFile> file =
      ParseImportFile(testing::ReadFile(path), v1::FILE_FORMAT_UNSPECIFIED, "all_ai_models.csv");
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return notes;
  for (const auto& row : file->models) {
    notes[row.record.display_name()] = row.record.training_compute_notes();
  }
  return notes;
}

// The shapes a rate is read from, and what is not a rate (the project's own
// wording; the real notes are below).
TEST(AssumedUtilizationTest, ReadsOneRateTiedToTheWord) {
  auto fraction = [](const std::string& notes) {
    std::optional<StatedUtilization> stated = AssumedUtilizationInNotes(notes);
    return stated ? stated->fraction : -1;
  };
  EXPECT_EQ(fraction("8 chips * 100 hours * 3600 * 0.3 [assumed utilization] = 1e20"), 0.3);
  EXPECT_EQ(fraction("assume 33% utilization"), 0.33);
  EXPECT_EQ(fraction("at 40% MFU"), 0.4);
  EXPECT_EQ(fraction("utilization rate of 0.3"), 0.3);
  EXPECT_EQ(fraction("Utilization rate: 40%"), 0.4);
  EXPECT_EQ(fraction("0.4 (utilization assumption)"), 0.4);
  EXPECT_EQ(fraction("hardware utilisation of 25 %"), 0.25);
  // The template line under its product: the product's last factor.
  EXPECT_EQ(fraction("flops = (4) * (1e14) * (10 * 3600) * (0.35)\n"
                     "(num gpu) * (peak flops) * (time in seconds) * (assumed utilization rate)"),
            0.35);
  EXPECT_EQ(fraction("(num gpu) * (peak flops) * (time in seconds) * (assumed utilization rate) = "
                     "(2) * (1e14) * (3600) * (0.45) = 3.2e17"),
            0.45);
  // The same rate twice is one rate.
  EXPECT_EQ(fraction("0.3 utilization ... we keep 30% utilization"), 0.3);
  // Not a rate: none stated, two rates, ranges, counts, exponents, ratios,
  // a factor that is arithmetic, a rate over 100%, a rate far from the word.
  EXPECT_EQ(fraction(""), -1);
  EXPECT_EQ(fraction("6 * 7e9 * 1e12 = 4.2e22"), -1);
  EXPECT_EQ(fraction("0.3 utilization for the first run, 0.4 utilization for the second"), -1);
  EXPECT_EQ(fraction("MFU of between 38-43%"), -1);
  EXPECT_EQ(fraction("utilization between 0.3 and 0.5"), -1);
  EXPECT_EQ(fraction("utilization of 2048 chips"), -1);
  EXPECT_EQ(fraction("MFU = 7.8e22/1.5e23 = 0.52"), -1);
  EXPECT_EQ(fraction("constant expert utilization ratio 0.5"), -1);
  EXPECT_EQ(fraction("utilization of 150%"), -1);
  EXPECT_EQ(fraction("the MFU reported for this run was approximately 52%"), -1);
  EXPECT_EQ(fraction("flops = (8) * (1e13) * (3600) * 3 // 10\n"
                     "(num gpu) * (peak flops) * (time in seconds) * (assumed utilization rate)"),
            -1);
}

// Real training compute notes of all_ai_models.csv, by record, read in
// place: the rates each estimate assumed, and notes that must state none.
TEST(AssumedUtilizationTest, RealNotesOfAllAiModels) {
  REQUIRE_SHARED_DATA(path, "epoch/all_ai_models.csv");
  const std::map<std::string, std::string> notes = NotesByName(path);
  ASSERT_GT(notes.size(), 3000u);
  const std::pair<const char*, double> stated[] = {
      {"CTR-BERT", 0.3},  // the template line under "(8) * ... * (0.3)"
      {"TinyLlama-1.1B (1T token checkpoint)", 0.56},  // the template, same line
      {"IDEFICS-80B", 0.3},       // the template under a product without parentheses
      {"Phi-4", 0.3},             // "0.3 [assumed utilization]"
      {"Protst", 0.4},            // "Utilization rate: 40%"
      {"RCTM", 0.3},              // "utilization of 0.3"
      {"Nemotron-4 340B", 0.41},  // "41% MFU"
      {"PaLM (540B)", 0.462},     // "46.2% model FLOPs utilization"
      {"Trillion-7B", 0.425},     // "0.4250 [reported utilization]"
  };
  for (const auto& [name, fraction] : stated) {
    ASSERT_EQ(notes.count(name), 1u) << name;
    std::optional<StatedUtilization> read = AssumedUtilizationInNotes(notes.at(name));
    ASSERT_TRUE(read.has_value()) << name;
    EXPECT_DOUBLE_EQ(read->fraction, fraction) << name << ": " << read->said;
    EXPECT_FALSE(read->said.empty());
  }
  const char* none[] = {
      "Nemotron-4 15B",  // three reported rates for three phases
      "Llama 3.1-70B",   // a range, 38-43%, of another model
      "LLaMA-13B",       // an MFU derived as a ratio of two figures
      "DensePhrases",    // the template over "3 // 10"
      "SaulLM-large",    // "expert utilization ratio"
      "GLaM",            // utilization named, no rate
  };
  for (const char* name : none) {
    ASSERT_EQ(notes.count(name), 1u) << name;
    std::optional<StatedUtilization> read = AssumedUtilizationInNotes(notes.at(name));
    EXPECT_FALSE(read.has_value()) << name << ": " << (read ? read->said : "");
  }
}

// The import sets the field from the notes and reports it as a conversion;
// the export writes the notes back, so a round trip derives the same value.
TEST(AssumedUtilizationTest, ImportSetsTheFieldAndReportsIt) {
  REQUIRE_SHARED_DATA(path, "epoch/all_ai_models.csv");
  absl::StatusOr<ParsedFile> file =
      ParseImportFile(testing::ReadFile(path), v1::FILE_FORMAT_UNSPECIFIED, "all_ai_models.csv");
  ASSERT_TRUE(file.ok()) << file.status();
  int with_rate = 0;
  const common::v1::Model* ctr_bert = nullptr;
  for (const auto& row : file->models) {
    if (row.record.has_hardware_utilization_assumed()) ++with_rate;
    if (row.record.display_name() == "CTR-BERT") ctr_bert = &row.record;
  }
  ASSERT_NE(ctr_bert, nullptr);
  EXPECT_EQ(ctr_bert->hardware_utilization_assumed(), 0.3);
  int reported = 0;
  for (const v1::ImportConversion& c : file->conversions) {
    if (c.field() != "hardware_utilization_assumed") continue;
    ++reported;
    if (c.display_name() == "CTR-BERT") {
      EXPECT_EQ(c.stored_value(), "0.3");
    }
  }
  EXPECT_EQ(reported, with_rate);
  // 372 of the 3,237 rows on 2026-12-01 (412 notes name utilization).
  EXPECT_GT(with_rate, 300);
  RecordProperty("records_with_assumed_utilization", with_rate);
  std::vector<common::v1::Model> models;
  for (const auto& row : file->models) models.push_back(row.record);
  absl::StatusOr<ParsedFile> again =
      ParseImportFile(ExportModelsCsv(models), v1::FILE_FORMAT_EPOCH_MODELS_CSV, "export.csv");
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->models.size(), models.size());
  for (size_t i = 0; i < models.size(); ++i) {
    EXPECT_EQ(again->models[i].record.hardware_utilization_assumed(),
              models[i].hardware_utilization_assumed())
        << models[i].display_name();
  }
}

}  // namespace
}  // namespace modelatlas::catalog
