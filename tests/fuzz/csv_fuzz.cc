// libFuzzer target: the RFC 4180 reader and the writer's round trip.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "catalog-service/import/csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  modelatlas::catalog::CsvReader reader(text);
  modelatlas::catalog::CsvRow row;
  while (reader.Next(&row)) {
    // What the writer writes, the reader reads back the same.
    std::string written;
    modelatlas::catalog::AppendCsvRow(row.cells, &written);
    modelatlas::catalog::CsvReader again(written);
    modelatlas::catalog::CsvRow back;
    if (!again.Next(&back) || back.cells != row.cells) {
      std::fprintf(stderr, "row at line %lld does not read back:\n",
                   static_cast<long long>(row.line));
      for (size_t i = 0; i < row.cells.size(); ++i) {
        if (i < back.cells.size() && back.cells[i] == row.cells[i]) continue;
        std::fprintf(stderr, "cell %zu: \"%s\" became \"%s\"\n", i, row.cells[i].c_str(),
                     i < back.cells.size() ? back.cells[i].c_str() : "(missing)");
        break;
      }
      __builtin_trap();
    }
  }
  return 0;
}
