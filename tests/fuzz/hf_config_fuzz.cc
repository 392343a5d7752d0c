// libFuzzer target: the Hugging Face config.json reader.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/formats/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  (void)modelatlas::ArchitectureFromHfConfig(json);
  return 0;
}
