// An import read from a file a block at a time (issue 22 point 4): the CSV
// reader over blocks gives the rows it gives over the whole text, whatever
// the block size and wherever a quoted cell or a line end falls; the spool
// an upload is written to keeps no name, reads back what was appended, and
// a directory or size limit that refuses it is a clear error; the names an
// import remembers per row are exact and take the memory stated; an atomic
// import's planned writes read back from their spool batch by batch as
// they were appended.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catalog-service/import/csv.h"
#include "catalog-service/import/import_file.h"
#include "catalog-service/import/import_source.h"
#include "catalog-service/import/imported_names.h"
#include "catalog-service/import/write_spool.h"

namespace modelatlas::catalog {
namespace {

std::vector<CsvRow> ReadRows(CsvReader reader, absl::Status* status) {
  std::vector<CsvRow> rows;
  CsvRow row;
  while (reader.Next(&row)) rows.push_back(row);
  *status = reader.status();
  return rows;
}

void ExpectSameRows(const std::vector<CsvRow>& expected, const std::vector<CsvRow>& actual,
                    size_t block_bytes) {
  ASSERT_EQ(expected.size(), actual.size()) << "block of " << block_bytes << " bytes";
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(expected[i].line, actual[i].line) << "row " << i << ", block " << block_bytes;
    EXPECT_EQ(expected[i].cells, actual[i].cells) << "row " << i << ", block " << block_bytes;
  }
}

// A byte-order mark, quoted commas, doubled quotes, line breaks inside
// quotes, CRLF and LF, an empty cell and a quote inside an unquoted cell.
constexpr char kTrickyCsv[] =
    "\xEF\xBB\xBFModel,Notes,Parameters\r\n"
    "\"Alpha, the first\",\"says \"\"hi\"\"\nover two lines\",1e9\r\n"
    "Beta,,2e9\n"
    "5\" drive,\"\"\"\",3\n"
    "\"Gamma\",\"a\r\nb\",4\n";

TEST(BlockCsvReaderTest, RowsAreThoseOfTheWholeTextAtEveryBlockSize) {
  absl::Status whole_status;
  const std::vector<CsvRow> whole = ReadRows(CsvReader(kTrickyCsv), &whole_status);
  ASSERT_TRUE(whole_status.ok()) << whole_status;
  ASSERT_EQ(whole.size(), 5u);
  EXPECT_EQ(whole[0].cells[0], "Model");  // the byte-order mark dropped
  const std::string text = kTrickyCsv;
  const TextSource source(text);
  for (size_t block = 4; block <= text.size() + 1; ++block) {
    absl::Status status;
    const std::vector<CsvRow> rows = ReadRows(CsvReader(source, block), &status);
    EXPECT_TRUE(status.ok()) << status << ", block " << block;
    ExpectSameRows(whole, rows, block);
  }
}

TEST(BlockCsvReaderTest, AQuoteSpanningABlockBoundaryIsOneCell) {
  // The 8-byte blocks cut the quoted cell after its opening quote, between
  // its doubled quotes and before its closing quote.
  const std::string text = "a,b\n1,\"x,\"\"y\"\"\nz\"\n";
  const TextSource source(text);
  absl::Status status;
  const std::vector<CsvRow> rows = ReadRows(CsvReader(source, 8), &status);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].cells, (std::vector<std::string>{"1", "x,\"y\"\nz"}));
}

TEST(BlockCsvReaderTest, AQuoteNeverClosedAtTheVeryEndIsAnErrorAtEveryBlockSize) {
  const std::string text = "a,b\n1,2\n3,\"open";
  const TextSource source(text);
  for (size_t block = 4; block <= text.size() + 1; ++block) {
    absl::Status status;
    ReadRows(CsvReader(source, block), &status);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status << ", block " << block;
    EXPECT_NE(status.message().find("line 3: a quoted cell is never closed"), std::string::npos)
        << status;
  }
}

// Reads fail from `fail_at` on.
class FailingSource : public ImportSource {
 public:
  FailingSource(std::string text, int64_t fail_at) : text_(std::move(text)), fail_at_(fail_at) {}
  int64_t size_bytes() const override { return static_cast<int64_t>(text_.size()); }
  absl::StatusOr<absl::string_view> Read(int64_t offset, size_t max_bytes,
                                         std::string*) const override {
    if (offset >= fail_at_) return absl::InternalError("the disk went away");
    return absl::string_view(text_).substr(offset, max_bytes);
  }

 private:
  std::string text_;
  int64_t fail_at_;
};

TEST(BlockCsvReaderTest, AReadErrorEndsTheRowsWithIt) {
  const FailingSource source("a,b\n1,2\n3,4\n5,6\n", 8);
  absl::Status status;
  const std::vector<CsvRow> rows = ReadRows(CsvReader(source, 4), &status);
  EXPECT_EQ(status, absl::InternalError("the disk went away"));
  EXPECT_LE(rows.size(), 2u);  // the header and "1,2": no row cut short by the error
}

std::string GeneratedEpochCsv(int rows) {
  std::string csv = "Model,Organization,Parameters,Notes\n";
  for (int row = 1; row <= rows; ++row) {
    absl::StrAppend(&csv, "\"Model ", row, ", v", row % 3, "\",Lab ", row % 7, ",", row,
                    "e6,\"line one\nline \"\"two\"\"\"\n");
  }
  absl::StrAppend(&csv, "Bad,Lab,seven,\n");
  return csv;
}

std::vector<std::string> ParseInChunks(const ImportSource* source, const std::string& text,
                                       size_t block_bytes) {
  std::vector<std::string> seen;
  auto on_chunk = [&](ParsedFile* chunk) -> absl::Status {
    seen.push_back(absl::StrCat("chunk rows_read=", chunk->rows_read));
    for (const auto& row : chunk->models) {
      seen.push_back(absl::StrCat(row.row, " ", row.line, " ", row.record.ShortDebugString()));
    }
    for (const auto& rejection : chunk->rejections) seen.push_back(rejection.ShortDebugString());
    return absl::OkStatus();
  };
  const absl::Status status =
      source == nullptr
          ? ParseImportFileInChunks(text, v1::FILE_FORMAT_UNSPECIFIED, "t.csv", 100, on_chunk)
          : ParseImportFileInChunks(*source, v1::FILE_FORMAT_UNSPECIFIED, "t.csv", 100, on_chunk,
                                    block_bytes);
  seen.push_back(status.ToString());
  return seen;
}

TEST(BlockCsvReaderTest, ChunksFromBlocksAreThoseOfTheTextInMemory) {
  const std::string text = GeneratedEpochCsv(350);
  const std::vector<std::string> in_memory = ParseInChunks(nullptr, text, 0);
  ASSERT_GT(in_memory.size(), 350u);
  const TextSource source(text);
  for (size_t block : {4, 7, 64, 4096, 1 << 20}) {
    EXPECT_EQ(ParseInChunks(&source, text, block), in_memory) << "block " << block;
  }
}

// A fresh directory under the test's temporary directory.
std::string FreshDirectory() {
  std::string path = absl::StrCat(DefaultSpoolDirectory(), "/import-spool-test-XXXXXX");
  EXPECT_NE(mkdtemp(path.data()), nullptr);
  return path;
}

// Names in `directory` besides . and ..
std::vector<std::string> Entries(const std::string& directory) {
  std::vector<std::string> names;
  DIR* dir = opendir(directory.c_str());
  if (dir == nullptr) return {"<cannot open>"};
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  return names;
}

TEST(SpoolFileTest, ReadsBackWhatWasAppendedAndHasNoName) {
  const std::string directory = FreshDirectory();
  absl::StatusOr<std::unique_ptr<SpoolFile>> spool = SpoolFile::Create(directory);
  ASSERT_TRUE(spool.ok()) << spool.status();
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    const std::string piece = absl::StrCat("row ", i, ",\"quoted\"\n");
    ASSERT_TRUE((*spool)->Append(piece).ok());
    expected += piece;
  }
  EXPECT_EQ((*spool)->size_bytes(), static_cast<int64_t>(expected.size()));
  EXPECT_TRUE(Entries(directory).empty()) << Entries(directory).front();
  std::string buffer;
  std::string read;
  for (int64_t offset = 0; offset < (*spool)->size_bytes();) {
    absl::StatusOr<absl::string_view> block = (*spool)->Read(offset, 333, &buffer);
    ASSERT_TRUE(block.ok()) << block.status();
    ASSERT_FALSE(block->empty());
    read.append(block->data(), block->size());
    offset += static_cast<int64_t>(block->size());
  }
  EXPECT_EQ(read, expected);
  spool->reset();
  EXPECT_TRUE(Entries(directory).empty());
  rmdir(directory.c_str());
}

TEST(SpoolFileTest, AMissingDirectoryIsAnInternalErrorNamingIt) {
  absl::StatusOr<std::unique_ptr<SpoolFile>> spool = SpoolFile::Create("/nonexistent/spool-dir");
  ASSERT_FALSE(spool.ok());
  EXPECT_TRUE(absl::IsInternal(spool.status())) << spool.status();
  EXPECT_NE(spool.status().message().find("\"/nonexistent/spool-dir\""), std::string::npos);
  EXPECT_NE(spool.status().message().find("nothing was written"), std::string::npos);
}

// In a child process (RLIMIT_FSIZE is the process's): a spool under a
// 10,000-byte file-size limit takes 6,000 bytes and refuses 6,000 more.
// Returns 0 when it does so as it should, else the step that failed.
int SpoolUnderFileSizeLimit(const std::string& directory) {
  // A write past the limit raises SIGXFSZ; ignored, it fails with EFBIG.
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit limit{};
  limit.rlim_cur = limit.rlim_max = 10000;
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 3;
  absl::StatusOr<std::unique_ptr<SpoolFile>> spool = SpoolFile::Create(directory);
  if (!spool.ok()) return 4;
  if (!(*spool)->Append(std::string(6000, 'a')).ok()) return 5;
  const absl::Status full = (*spool)->Append(std::string(6000, 'b'));
  if (!absl::IsResourceExhausted(full)) return 6;
  if (full.message().find("after 6000 bytes") == absl::string_view::npos) return 7;
  if ((*spool)->size_bytes() != 6000) return 8;
  std::string buffer;
  absl::StatusOr<absl::string_view> back = (*spool)->Read(0, 1 << 20, &buffer);
  return back.ok() && *back == std::string(6000, 'a') ? 0 : 9;
}

TEST(SpoolFileTest, AFileSizeLimitIsResourceExhaustedAndKeepsWhatItHeld) {
  const std::string directory = FreshDirectory();
  EXPECT_EXIT(std::_Exit(SpoolUnderFileSizeLimit(directory)), ::testing::ExitedWithCode(0), "");
  rmdir(directory.c_str());
}

TEST(ImportedNamesTest, CountsNamesAndClaimsIdsExactly) {
  ImportedNames names;
  EXPECT_EQ(names.Occurrences("Dup"), 0);
  EXPECT_FALSE(names.Claimed("dup"));
  names.Add("Dup", 1, "dup");
  names.Add("Other", 2, "other");
  names.Add("Dup", 5, "dup-2");
  names.Add("A dup", 6, "a-dup");
  names.Add("A dup", 9, "a-dup-2");
  names.Add("Dup", 7, "dup-3");
  EXPECT_EQ(names.Occurrences("Dup"), 3);
  EXPECT_EQ(names.Occurrences("Other"), 1);
  EXPECT_EQ(names.Occurrences("dup"), 0);  // exact names
  EXPECT_TRUE(names.Claimed("dup-2"));
  EXPECT_FALSE(names.Claimed("dup-4"));
  const std::vector<ImportedNames::Duplicate> duplicates = names.Duplicates();
  ASSERT_EQ(duplicates.size(), 2u);
  EXPECT_EQ(duplicates[0].display_name, "A dup");  // in name order
  EXPECT_EQ(duplicates[1].display_name, "Dup");
  using Rows = std::vector<std::pair<int64_t, std::string>>;
  EXPECT_EQ(duplicates[0].rows, (Rows{{6, "a-dup"}, {9, "a-dup-2"}}));
  EXPECT_EQ(duplicates[1].rows, (Rows{{1, "dup"}, {5, "dup-2"}, {7, "dup-3"}}));
}

TEST(ImportedNamesTest, MemoryIsWithinTheStatedBound) {
  // The benchmark file's names ("Generated Model 123456", 22 bytes) and ids
  // ("generated-model-123456"): the bound ImportedNames states, 104 bytes per
  // row and a block of 2 MiB, at sizes where the tables are as full as they
  // get (114,687 of 131,071 places) and just grew (114,688).
  for (int rows : {100'000, 114'687, 114'688, 131'073}) {
    ImportedNames names;
    for (int row = 1; row <= rows; ++row) {
      names.Add(absl::StrCat("Generated Model ", 100000 + row), row,
                absl::StrCat("generated-model-", 100000 + row));
    }
    EXPECT_LE(names.MemoryBytes(), 104u * rows + StringArena::kBlockBytes) << rows << " rows";
    EXPECT_GE(names.MemoryBytes(), 2u * 26 * rows) << rows << " rows";  // both strings held
  }
}

TEST(ImportedNamesTest, ReserveSizesTheTablesOnceAndClearFreesEverything) {
  constexpr int kRows = 150'000;
  ImportedNames names;
  names.Reserve(kRows);
  const size_t tables = names.MemoryBytes();  // no block yet: the tables alone
  EXPECT_GE(tables, kRows * (4u + 16u));
  for (int row = 1; row <= kRows; ++row) {
    names.Add(absl::StrCat("Generated Model ", 100000 + row), row,
              absl::StrCat("generated-model-", 100000 + row));
  }
  // Only the strings' blocks were added: the tables never grew.
  const size_t strings = names.MemoryBytes() - tables;
  EXPECT_GE(strings, 2u * 26 * kRows);
  EXPECT_LE(strings, 2u * 26 * kRows + StringArena::kBlockBytes);
  names.Add("Generated Model 100001", kRows + 1, "generated-model-100001-2");
  ASSERT_EQ(names.Duplicates().size(), 1u);

  names.Clear();
  EXPECT_EQ(names.MemoryBytes(), 0u);
  EXPECT_EQ(names.Occurrences("Generated Model 100001"), 0);
  EXPECT_FALSE(names.Claimed("generated-model-100001"));
  EXPECT_TRUE(names.Duplicates().empty());
  names.Add("Again", 1, "again");  // usable after
  EXPECT_TRUE(names.Claimed("again"));
}

BatchWrite SpooledWrite(int i) {
  BatchWrite write;
  write.operation = i % 2 == 0 ? BatchWrite::Operation::kCreate : BatchWrite::Operation::kUpdate;
  write.expected_revision = i * 3;
  write.defer_derived_rows = i % 3 == 0;
  write.record.kind = i % 5 == 0 ? RecordKind::kHardware : RecordKind::kModel;
  write.record.id = absl::StrCat("model-", i);
  write.record.display_name = absl::StrCat("Model ", i);
  for (int k = 0; k < i % 3; ++k) write.record.lookup_keys.push_back(absl::StrCat("key ", k));
  write.record.payload = std::string(static_cast<size_t>(i % 7) * 100, static_cast<char>(i));
  write.record.payload.push_back('\0');  // bytes, not text
  write.record.order_values[0] = 1e6 * i;
  write.record.order_values[3] = absl::StrCat("model ", i);
  if (i % 4 == 0) write.record.order_values[kDomainsValue] = std::string("\nvision");
  return write;
}

void ExpectSameWrite(const BatchWrite& expected, const BatchWrite& actual) {
  EXPECT_EQ(expected.operation, actual.operation);
  EXPECT_EQ(expected.expected_revision, actual.expected_revision);
  EXPECT_EQ(expected.defer_derived_rows, actual.defer_derived_rows);
  EXPECT_EQ(expected.record.kind, actual.record.kind);
  EXPECT_EQ(expected.record.id, actual.record.id);
  EXPECT_EQ(expected.record.display_name, actual.record.display_name);
  EXPECT_EQ(expected.record.lookup_keys, actual.record.lookup_keys);
  EXPECT_EQ(expected.record.payload, actual.record.payload);
  EXPECT_EQ(expected.record.order_values, actual.record.order_values);
}

TEST(WriteSpoolTest, BatchesComeBackAsAppendedAndAgainAfterRewind) {
  absl::StatusOr<std::unique_ptr<WriteSpool>> spool = WriteSpool::Create(DefaultSpoolDirectory());
  ASSERT_TRUE(spool.ok()) << spool.status();
  const std::vector<int> sizes = {3, 1, 2000, 7};
  int next = 0;
  for (int size : sizes) {
    std::vector<BatchWrite> batch;
    for (int i = 0; i < size; ++i) batch.push_back(SpooledWrite(next++));
    ASSERT_TRUE((*spool)->Append(batch).ok());
  }
  EXPECT_EQ((*spool)->writes(), next);
  for (int pass = 0; pass < 2; ++pass) {
    (*spool)->Rewind();
    int read = 0;
    std::vector<BatchWrite> batch;
    for (int size : sizes) {
      ASSERT_TRUE((*spool)->Next(&batch).ok());
      ASSERT_EQ(batch.size(), static_cast<size_t>(size));
      for (const BatchWrite& write : batch) ExpectSameWrite(SpooledWrite(read++), write);
    }
    ASSERT_TRUE((*spool)->Next(&batch).ok());
    EXPECT_TRUE(batch.empty());  // the end
  }
}

TEST(WriteSpoolTest, AMissingDirectoryIsAnErrorBeforeAnythingIsSpooled) {
  absl::StatusOr<std::unique_ptr<WriteSpool>> spool = WriteSpool::Create("/nonexistent/spool");
  EXPECT_EQ(spool.status().code(), absl::StatusCode::kInternal) << spool.status();
  EXPECT_NE(spool.status().message().find("/nonexistent/spool"), absl::string_view::npos);
}

}  // namespace
}  // namespace modelatlas::catalog
