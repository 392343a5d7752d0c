#include "common/server/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace modelatlas {
namespace {

TEST(ConfigTest, EnvVarNameIsPrefixedUpperCase) {
  EXPECT_EQ(EnvVarName("MODELATLAS_CATALOG_", "grpc_address"), "MODELATLAS_CATALOG_GRPC_ADDRESS");
}

TEST(ConfigTest, EnvironmentComesBeforeCommandLineSoFlagsWin) {
  setenv("MODELATLAS_TEST_GRPC_ADDRESS", "0.0.0.0:1", 1);
  unsetenv("MODELATLAS_TEST_LOG_LEVEL");
  char program[] = "prog";
  char flag[] = "--grpc_address=127.0.0.1:2";
  char positional[] = "rest";
  char* argv[] = {program, flag, positional};
  const std::vector<std::string> args =
      ArgsWithEnvironment(3, argv, "MODELATLAS_TEST_", {"grpc_address", "log_level"});
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[0], "prog");
  EXPECT_EQ(args[1], "--grpc_address=0.0.0.0:1");
  EXPECT_EQ(args[2], "--grpc_address=127.0.0.1:2");
  EXPECT_EQ(args[3], "rest");
  unsetenv("MODELATLAS_TEST_GRPC_ADDRESS");
}

}  // namespace
}  // namespace modelatlas
