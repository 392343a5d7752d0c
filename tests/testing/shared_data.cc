#include "tests/testing/shared_data.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace modelatlas::testing {

std::string SharedDataPath(const std::string& relative) {
  const char* override_dir = std::getenv("MODELATLAS_SHARED_DATA");
  const std::string root = override_dir != nullptr ? override_dir : MODELATLAS_SHARED_DATA_DIR;
  return root + "/" + relative;
}

bool RunningUnderCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace modelatlas::testing
