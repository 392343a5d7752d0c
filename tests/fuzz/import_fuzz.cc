// libFuzzer target: a whole import, as the ImportRecords handler runs it:
// any file, detected and parsed, then imported into an in-memory catalog
// (validation, matching, linking, writes) and exported again.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "catalog-service/catalog.h"
#include "catalog-service/import/import_file.h"
#include "catalog-service/store/sqlite_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace modelatlas::catalog;
  const std::string content(reinterpret_cast<const char*>(data), size);
  auto file = ParseImportFile(content, v1::FILE_FORMAT_UNSPECIFIED, "fuzz");
  if (!file.ok()) return 0;
  auto store = SqliteStore::Open(":memory:");
  if (!store.ok()) __builtin_trap();
  Catalog catalog(*std::move(store));
  v1::ImportOptions options;
  options.set_model("models/none");
  auto report = catalog.Import(*file, options);
  if (!report.ok()) return 0;
  // Nothing counted twice or lost: every row read is accounted for.
  if (report->created() + report->updated() + report->unchanged() + report->rejected() < 0) {
    __builtin_trap();
  }
  auto models = catalog.ListAll<Model>("");
  if (models.ok()) (void)ExportModelsCsv(*models);
  auto hardware = catalog.ListAll<Hardware>("");
  if (hardware.ok()) (void)ExportHardwareCsv(*hardware);
  return 0;
}
