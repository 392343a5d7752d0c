// libFuzzer target: the model file header readers (GGUF, safetensors header
// and index). Every input goes to each reader; a GGUF prefix that asks for
// more bytes is retried with the bytes it asked for when the input has them,
// and a whole GGUF header is read as the architecture it describes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/formats/gguf.h"
#include "common/formats/gguf_architecture.h"
#include "common/formats/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  absl::string_view prefix(bytes.data(), bytes.size() / 2);
  for (int round = 0; round < 64; ++round) {
    absl::StatusOr<modelatlas::GgufParseResult> r = modelatlas::ParseGgufHeader(prefix);
    if (r.ok() && r->complete) (void)modelatlas::ArchitectureFromGguf(r->header, "fuzz.");
    if (!r.ok() || r->complete || r->bytes_needed > bytes.size()) break;
    prefix = absl::string_view(bytes.data(), r->bytes_needed);
  }
  (void)modelatlas::ParseSafetensorsFileStart(bytes);
  (void)modelatlas::ParseSafetensorsHeader(bytes);
  (void)modelatlas::ParseSafetensorsIndex(bytes);
  return 0;
}
