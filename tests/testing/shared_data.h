// Third-party data in ../shared/data, read in place (never copied). A test
// that needs a file calls RequireSharedData(): elsewhere a missing file
// skips the test with a message naming the path; under CI (CI=true) it fails,
// so that a wrong path can never pass silently.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace modelatlas::testing {

// Absolute path of `relative` under the shared data directory.
std::string SharedDataPath(const std::string& relative);

// True under CI (environment CI=true).
bool RunningUnderCi();

// Reads a whole file; empty on failure.
std::string ReadFile(const std::string& path);

}  // namespace modelatlas::testing

// Puts the path of ../shared/data/RELATIVE in `variable`, or skips (fails
// under CI) when the file is missing.
#define REQUIRE_SHARED_DATA(variable, relative)                                 \
  const std::string variable = ::modelatlas::testing::SharedDataPath(relative); \
  if (!std::ifstream(variable).good()) {                                        \
    if (::modelatlas::testing::RunningUnderCi()) {                              \
      FAIL() << "shared data file missing under CI: " << variable;              \
    }                                                                           \
    GTEST_SKIP() << "shared data file not found, skipping: " << variable;       \
  }
