#include "common/server/config.h"

#include <cstdlib>

#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace modelatlas {

std::string EnvVarName(absl::string_view env_prefix, absl::string_view flag_name) {
  return absl::StrCat(env_prefix, absl::AsciiStrToUpper(flag_name));
}

std::vector<std::string> ArgsWithEnvironment(int argc, char** argv, absl::string_view env_prefix,
                                             const std::vector<std::string>& flag_names) {
  std::vector<std::string> args;
  if (argc > 0) args.emplace_back(argv[0]);
  for (const std::string& flag : flag_names) {
    const char* value = std::getenv(EnvVarName(env_prefix, flag).c_str());
    if (value != nullptr) args.push_back(absl::StrCat("--", flag, "=", value));
  }
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return args;
}

std::vector<std::string> ParseFlagsWithEnvironment(int argc, char** argv,
                                                   absl::string_view env_prefix,
                                                   const std::vector<std::string>& flag_names) {
  std::vector<std::string> args = ArgsWithEnvironment(argc, argv, env_prefix, flag_names);
  std::vector<char*> pointers;
  for (std::string& arg : args) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(args.size()), pointers.data());
  return std::vector<std::string>(positional.begin(), positional.end());
}

}  // namespace modelatlas
