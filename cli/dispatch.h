// From the command table to a run: finding the command the words name, the
// help generated from the table, and "did you mean" for a wrong command.
#pragma once

#include <string>
#include <vector>

#include "cli/command.h"

namespace modelatlas::cli {

using CommandTable = std::vector<CommandGroup>;

// "estimate memory".
std::string CommandName(const Command& command);

// How many arguments follow the words: "MODEL" 1..1, "[MODEL]" 0..1.
int MinArguments(const Command& command);
int MaxArguments(const Command& command);

// The command `args` run: the one with the most leading words matching whose
// argument count fits. Null when none does; then *near (if not null) is the
// command whose words matched but whose arguments did not, if any.
const Command* FindCommand(const CommandTable& table, const std::vector<std::string>& args,
                           const Command** near = nullptr);

// The command whose name is closest to the words of `args` (edit distance).
const Command* ClosestCommand(const CommandTable& table, const std::vector<std::string>& args);

// `modelatlas help`: every command by concern, the global flags, exit codes.
std::string Overview(const CommandTable& table);

// `modelatlas COMMAND --help`: usage, each flag with its default (and the
// values of an enum flag), an example.
std::string CommandHelp(const Command& command);

// The whole CLI: parses flags (the environment fills in addresses), answers
// --help / help, runs the command; returns the exit code.
int RunCli(const CommandTable& table, int argc, char** argv);

}  // namespace modelatlas::cli
