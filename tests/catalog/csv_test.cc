#include "catalog-service/import/csv.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace modelatlas::catalog {
namespace {

std::vector<CsvRow> ReadAll(const std::string& text, absl::Status* status = nullptr) {
  CsvReader reader(text);
  std::vector<CsvRow> rows;
  CsvRow row;
  while (reader.Next(&row)) rows.push_back(row);
  if (status != nullptr) *status = reader.status();
  return rows;
}

TEST(CsvReaderTest, QuotedCellsHoldCommasQuotesAndLineBreaks) {
  absl::Status status;
  auto rows = ReadAll("a,b,c\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\nlast,,\n", &status);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].cells, (std::vector<std::string>{"x, y", "say \"hi\"", "two\nlines"}));
  EXPECT_EQ(rows[1].line, 2);
  // The quoted line break moved the next row to line 4.
  EXPECT_EQ(rows[2].line, 4);
  EXPECT_EQ(rows[2].cells, (std::vector<std::string>{"last", "", ""}));
}

TEST(CsvReaderTest, CrLfEndsRowsAndByteOrderMarkIsDropped) {
  auto rows = ReadAll("\xEF\xBB\xBFname,value\r\nx,1\r\ny,2");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].cells[0], "name");
  EXPECT_EQ(rows[2].cells, (std::vector<std::string>{"y", "2"}));
}

TEST(CsvReaderTest, UnclosedQuoteIsAnErrorNamingTheLine) {
  absl::Status status;
  ReadAll("a,b\n1,\"open\nstill open", &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("line 2"), std::string::npos) << status;
}

TEST(CsvReaderTest, TextAfterClosingQuoteIsAnError) {
  absl::Status status;
  ReadAll("a\n\"x\"y\n", &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
}

TEST(CsvReaderTest, QuoteInsideUnquotedCellIsLiteral) {
  auto rows = ReadAll("a,b\n5\" disk,x\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].cells[0], "5\" disk");
}

TEST(CsvWriterTest, QuotesOnlyWhereNeededAndReadsBack) {
  const std::vector<std::string> cells = {"plain",      "a,b",      "say \"hi\"",
                                          "two\nlines", " padded ", ""};
  std::string out;
  AppendCsvRow(cells, &out);
  EXPECT_EQ(out, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\" padded \",\r\n");
  auto rows = ReadAll(out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].cells, cells);
}

}  // namespace
}  // namespace modelatlas::catalog
