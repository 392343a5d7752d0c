#include "cli/dispatch.h"

#include <algorithm>
#include <iostream>

#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/enum_spellings.h"
#include "common/server/config.h"
#include "common/status/suggest.h"

namespace modelatlas::cli {
namespace {

// Flags every command reads, shown once in the overview.
constexpr absl::string_view kGlobalFlags[] = {"catalog",     "estimator",     "json",
                                              "jsonl",       "timeout",       "token_file",
                                              "tls_ca_file", "tls_cert_file", "tls_key_file"};

// How many leading words of `args` are the command's words (0 if not all).
size_t MatchedWords(const Command& command, const std::vector<std::string>& args) {
  if (args.size() < command.words.size()) return 0;
  for (size_t i = 0; i < command.words.size(); ++i) {
    if (args[i] != command.words[i]) return 0;
  }
  return command.words.size();
}

// The command whose words lead `args`, the longest such; arguments ignored.
const Command* CommandNamedBy(const CommandTable& table, const std::vector<std::string>& args) {
  const Command* best = nullptr;
  for (const CommandGroup& group : table) {
    for (const Command& command : group.commands) {
      if (MatchedWords(command, args) > (best ? best->words.size() : 0)) best = &command;
    }
  }
  return best;
}

// "  models list      every model record", aligned, for each command.
std::string CommandLines(const std::vector<const Command*>& commands) {
  size_t width = 0;
  for (const Command* command : commands) {
    width = std::max(width, CommandName(*command).size() + 1 + command->arguments.size());
  }
  std::string out;
  for (const Command* command : commands) {
    const std::string name = absl::StrCat(CommandName(*command), " ", command->arguments);
    absl::StrAppend(&out, absl::StrFormat("  %-*s  %s\n", width, name, command->summary));
  }
  return out;
}

// The commands whose words start with `args` but are more than them
// ("models" -> every models command).
std::vector<const Command*> CommandsStartingWith(const CommandTable& table,
                                                 const std::vector<std::string>& args) {
  std::vector<const Command*> out;
  for (const CommandGroup& group : table) {
    for (const Command& command : group.commands) {
      if (!args.empty() && command.words.size() > args.size() &&
          std::equal(args.begin(), args.end(), command.words.begin())) {
        out.push_back(&command);
      }
    }
  }
  return out;
}

std::string Usage(const Command& command) {
  return absl::StrCat("modelatlas ", CommandName(command), command.arguments.empty() ? "" : " ",
                      command.arguments, command.flags.empty() ? "" : " [flags]");
}

// "  --weights=bf16   Weight format:" for each flag, an enum flag's values
// below it, each with what it means (once when flags share a table).
std::string FlagLines(const std::vector<absl::string_view>& names) {
  struct Line {
    std::string flag;  // --weights=bf16
    std::string help;
    const EnumSpellings* values;
  };
  std::vector<Line> lines;
  for (absl::string_view name : names) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;  // tests/cli checks every name is a flag
    std::string value = flag->DefaultValue();
    if (value.empty()) value = flag->IsOfType<std::string>() ? "\"\"" : "(unset)";
    std::string help = flag->Help();
    const EnumSpellings* values = EnumOfFlag(name);
    if (values != nullptr) {
      help = absl::StrCat(absl::StripSuffix(help, absl::StrCat(": ", values->Accepted())), ":");
    }
    lines.push_back({absl::StrCat("--", name, "=", value), std::move(help), values});
  }
  size_t width = 0;
  for (const Line& line : lines) width = std::max(width, line.flag.size());
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::StrAppend(&out, absl::StrFormat("  %-*s  %s\n", width, lines[i].flag, lines[i].help));
    if (lines[i].values != nullptr && (i == 0 || lines[i - 1].values != lines[i].values)) {
      absl::StrAppend(&out, lines[i].values->Described(std::string(width + 6, ' ')));
    }
  }
  return out;
}

}  // namespace

int MaxArguments(const Command& command) {
  return static_cast<int>(
      std::vector<absl::string_view>(absl::StrSplit(command.arguments, ' ', absl::SkipEmpty()))
          .size());
}

int MinArguments(const Command& command) {
  int required = 0;
  for (absl::string_view argument : absl::StrSplit(command.arguments, ' ', absl::SkipEmpty())) {
    if (!absl::StartsWith(argument, "[")) ++required;
  }
  return required;
}

std::string CommandName(const Command& command) { return absl::StrJoin(command.words, " "); }

const Command* FindCommand(const CommandTable& table, const std::vector<std::string>& args,
                           const Command** near) {
  const Command* found = nullptr;
  const Command* matched = nullptr;
  for (const CommandGroup& group : table) {
    for (const Command& command : group.commands) {
      const size_t words = MatchedWords(command, args);
      if (words == 0) continue;
      const int count = static_cast<int>(args.size() - words);
      const bool fits = count >= MinArguments(command) && count <= MaxArguments(command);
      if (fits && (found == nullptr || words > found->words.size())) found = &command;
      if (!fits && (matched == nullptr || words > matched->words.size())) matched = &command;
    }
  }
  if (near != nullptr) *near = found == nullptr ? matched : nullptr;
  return found;
}

const Command* ClosestCommand(const CommandTable& table, const std::vector<std::string>& args) {
  // Ranked by the first word's distance, then the other words' (so
  // "models frobnicate" is nearest a models command).
  const Command* closest = nullptr;
  std::pair<size_t, size_t> best;
  for (const CommandGroup& group : table) {
    for (const Command& command : group.commands) {
      std::pair<size_t, size_t> distance = {0, 0};
      for (size_t i = 0; i < command.words.size(); ++i) {
        const size_t d = EditDistance(i < args.size() ? args[i] : "", command.words[i]);
        (i == 0 ? distance.first : distance.second) += d;
      }
      if (closest == nullptr || distance < best) {
        closest = &command;
        best = distance;
      }
    }
  }
  return closest;
}

std::string Overview(const CommandTable& table) {
  std::vector<const Command*> all;
  for (const CommandGroup& group : table) {
    for (const Command& command : group.commands) all.push_back(&command);
  }
  // Every group's lines aligned alike: format all, then split by group.
  const std::vector<std::string> lines = absl::StrSplit(CommandLines(all), '\n');
  std::string out =
      "usage: modelatlas [flags] COMMAND [ARGUMENTS]\n"
      "Tables for people by default, --json for scripts.\n";
  size_t line = 0;
  for (const CommandGroup& group : table) {
    absl::StrAppend(&out, "\n", group.title, ":\n");
    for (size_t i = 0; i < group.commands.size(); ++i) absl::StrAppend(&out, lines[line++], "\n");
  }
  absl::StrAppend(&out, "\nFlags of every command:\n",
                  FlagLines({std::begin(kGlobalFlags), std::end(kGlobalFlags)}),
                  "Environment: MODELATLAS_CATALOG and MODELATLAS_ESTIMATOR set the addresses.\n"
                  "Exit codes: 0 success, 1 the call failed, 2 the command line is wrong.\n"
                  "Run \"modelatlas COMMAND --help\" for a command's flags and an example, "
                  "\"modelatlas --helpfull\" for every flag.");
  return out;
}

std::string CommandHelp(const Command& command) {
  std::string out = absl::StrCat("usage: ", Usage(command), "\n", command.summary, "\n");
  if (!command.flags.empty()) absl::StrAppend(&out, "\nFlags:\n", FlagLines(command.flags));
  absl::StrAppend(&out, "\nExample:\n  modelatlas ", command.example, "\n",
                  "\n(--catalog, --estimator, --json, --timeout and the TLS flags work with every "
                  "command: modelatlas help)");
  return out;
}

int RunCli(const CommandTable& table, int argc, char** argv) {
  // --help is answered from the table, so it is taken out before absl sees it.
  std::vector<char*> rest;
  bool help = false;
  for (int i = 0; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") {
      rest.insert(rest.end(), argv + i, argv + argc);
      break;
    }
    if (i > 0 && (arg == "--help" || arg == "-help" || arg == "-h")) {
      help = true;
      continue;
    }
    rest.push_back(argv[i]);
  }
  // An unknown flag is a usage error naming the closest flags (absl would
  // only say it is unknown).
  for (size_t i = 1; i < rest.size(); ++i) {
    absl::string_view arg = rest[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    absl::ConsumePrefix(&arg, "-");
    absl::ConsumePrefix(&arg, "-");
    const absl::string_view name = arg.substr(0, arg.find('='));
    if (name.empty() || absl::FindCommandLineFlag(name) != nullptr) continue;
    if (absl::StartsWith(name, "no") && absl::FindCommandLineFlag(name.substr(2)) != nullptr) {
      continue;  // --nohypothetical
    }
    std::vector<std::string> known;
    for (const auto& [flag_name, flag] : absl::GetAllFlags()) {
      known.push_back(std::string(flag_name));
    }
    std::sort(known.begin(), known.end());
    std::vector<std::string> closest = ClosestNames(name, known);
    for (std::string& flag : closest) flag = absl::StrCat("--", flag);
    return UsageError(absl::StrCat(
        "unknown flag --", name,
        closest.empty() ? "" : absl::StrCat("; did you mean ", absl::StrJoin(closest, " or "), "?"),
        " (modelatlas COMMAND --help lists a command's flags)"));
  }
  static const std::string* overview = new std::string(Overview(table));
  absl::SetProgramUsageMessage(*overview);
  // MODELATLAS_CATALOG / MODELATLAS_ESTIMATOR give the addresses; flags win.
  std::vector<std::string> args = ParseFlagsWithEnvironment(
      static_cast<int>(rest.size()), rest.data(), "MODELATLAS_", {"catalog", "estimator"});
  args.erase(args.begin());  // program name
  if (!args.empty() && args[0] == "help") {
    help = true;
    args.erase(args.begin());
  }
  if (help) {
    if (args.empty()) {
      std::cout << *overview << "\n";
      return EXIT_SUCCESS;
    }
    if (const Command* command = CommandNamedBy(table, args); command != nullptr) {
      std::cout << CommandHelp(*command) << "\n";
      return EXIT_SUCCESS;
    }
    if (auto more = CommandsStartingWith(table, args); !more.empty()) {
      std::cout << CommandLines(more);
      return EXIT_SUCCESS;
    }
  }
  if (args.empty()) {
    std::cerr << "modelatlas: no command given\n\n" << *overview << "\n";
    return kExitUsage;
  }
  const Command* near = nullptr;
  if (const Command* command = FindCommand(table, args, &near); command != nullptr) {
    Session session;
    const std::vector<std::string> arguments(
        args.begin() + static_cast<std::ptrdiff_t>(command->words.size()), args.end());
    return command->run(session, arguments);
  }
  if (near != nullptr) {
    return UsageError(absl::StrCat("wrong arguments for ", CommandName(*near), "; usage: ",
                                   Usage(*near), " (modelatlas ", CommandName(*near), " --help)"));
  }
  if (auto more = CommandsStartingWith(table, args); !more.empty()) {
    std::cerr << "modelatlas: \"" << absl::StrJoin(args, " ") << "\" needs more words:\n"
              << CommandLines(more);
    return kExitUsage;
  }
  const Command* closest = ClosestCommand(table, args);
  return UsageError(absl::StrCat("unknown command \"", absl::StrJoin(args, " "),
                                 "\"; did you mean \"", CommandName(*closest),
                                 "\"? (modelatlas help lists every command)"));
}

}  // namespace modelatlas::cli
