// Every proto enum the CLI reads or prints has one spelling per value, by
// construction: these tests walk each enum's descriptor, so a value added to
// a .proto without a spelling in cli/enum_spellings.cc fails here.
#include "cli/enum_spellings.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "cli/command.h"
#include "cli/dispatch.h"

namespace modelatlas::cli {
namespace {

using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FileDescriptor;

bool Unspecified(const EnumValueDescriptor& value) {
  return absl::EndsWith(value.name(), "_UNSPECIFIED");
}

// Lower case, '_' as '-': how the tables compare spellings.
std::string Normalized(absl::string_view spelling) {
  std::string out = absl::AsciiStrToLower(spelling);
  for (char& c : out) {
    if (c == '_') c = '-';
  }
  return out;
}

TEST(EnumSpellingsTest, EveryValueHasOneSpellingThatParsesBack) {
  for (const EnumSpellings* table : AllEnumSpellings()) {
    const EnumDescriptor* descriptor = table->descriptor();
    SCOPED_TRACE(descriptor->full_name());
    std::map<std::string, std::string> owner;  // normalized spelling -> value name
    for (int i = 0; i < descriptor->value_count(); ++i) {
      const EnumValueDescriptor& value = *descriptor->value(i);
      if (Unspecified(value)) continue;
      const absl::string_view spelling = table->SpellingOf(value.number());
      EXPECT_FALSE(spelling.empty()) << value.name() << " has no CLI spelling";
      if (spelling.empty()) continue;
      const auto [it, inserted] = owner.emplace(Normalized(spelling), value.name());
      EXPECT_TRUE(inserted) << value.name() << " and " << it->second << " share the spelling \""
                            << spelling << "\"";
      EXPECT_EQ(table->ParseNumber(spelling), value.number()) << spelling;
      // Any case, '-' or '_' alike.
      EXPECT_EQ(table->ParseNumber(absl::AsciiStrToUpper(spelling)), value.number()) << spelling;
      EXPECT_NE(table->Accepted().find(std::string(spelling)), std::string::npos);
    }
  }
}

TEST(EnumSpellingsTest, TablesNameOnlyValuesOfTheirEnum) {
  for (const EnumSpellings* table : AllEnumSpellings()) {
    SCOPED_TRACE(table->descriptor()->full_name());
    std::set<int> seen;
    for (const EnumSpelling& entry : table->entries()) {
      EXPECT_NE(table->descriptor()->FindValueByNumber(entry.value), nullptr) << entry.value;
      EXPECT_TRUE(seen.insert(entry.value).second) << "value " << entry.value << " spelled twice";
      EXPECT_FALSE(entry.description.empty()) << entry.spelling;
    }
  }
}

// Every enum of the estimator's request protos, and the catalog enums the
// CLI prints, has a table.
TEST(EnumSpellingsTest, EveryEnumTheCliUsesHasATable) {
  std::set<std::string> tabled;
  for (const EnumSpellings* table : AllEnumSpellings()) {
    tabled.insert(table->descriptor()->full_name());
  }
  for (const FileDescriptor* file : {estimator::v1::NumberFormat_descriptor()->file(),
                                     estimator::v1::Optimizer_descriptor()->file(),
                                     catalog::v1::FileFormat_descriptor()->file()}) {
    for (int i = 0; i < file->enum_type_count(); ++i) {
      EXPECT_TRUE(tabled.count(file->enum_type(i)->full_name()))
          << file->enum_type(i)->full_name() << " (" << file->name() << ") has no CLI table";
    }
  }
  for (const EnumDescriptor* printed :
       {common::v1::Accessibility_descriptor(), common::v1::Confidence_descriptor(),
        common::v1::CodeAccessibility_descriptor(), common::v1::EstimationMethod_descriptor(),
        catalog::v1::ChangeType_descriptor()}) {
    EXPECT_TRUE(tabled.count(printed->full_name())) << printed->full_name();
  }
}

TEST(EnumSpellingsTest, ErrorAndHelpComeFromTheTable) {
  EXPECT_EQ(NumberFormats().Parse("gguf-q4_k_m"), estimator::v1::NUMBER_FORMAT_GGUF_Q4_K_M);
  EXPECT_EQ(NumberFormats().Parse("GPTQ_INT4"), estimator::v1::NUMBER_FORMAT_GPTQ_INT4);
  EXPECT_EQ(NumberFormats().Parse("q4"), std::nullopt);
  EXPECT_EQ(NumberFormats().Parse(""), std::nullopt);
  const std::string error = NumberFormats().UnknownError("weights", "q4");
  EXPECT_TRUE(absl::StartsWith(error, "--weights: unknown format \"q4\"; accepted: fp32, fp16, "))
      << error;
  EXPECT_TRUE(absl::EndsWith(error, "nvfp4, fp8-block128")) << error;
  EXPECT_EQ(PlanObjectives().Parse("fewest-cards"), estimator::v1::PLAN_OBJECTIVE_FEWEST_CARDS);
  EXPECT_EQ(Optimizers().Parse("sgd"), estimator::v1::OPTIMIZER_SGD_MOMENTUM);
  EXPECT_EQ(FileFormats().Parse(""), catalog::v1::FILE_FORMAT_UNSPECIFIED);
  EXPECT_EQ(FileFormats().Parse("xml"), std::nullopt);
  // The flag's help lists the same values.
  const absl::CommandLineFlag* weights = absl::FindCommandLineFlag("weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_NE(weights->Help().find(NumberFormats().Accepted()), std::string::npos);
  EXPECT_EQ(EnumOfFlag("kv_cache"), &NumberFormats());
  EXPECT_EQ(EnumOfFlag("context"), nullptr);
}

// The command table: each flag a command names exists, each command can be
// found by its words, and a near miss names the closest command.
CommandTable Table() {
  return {RecordCommands(), InferenceCommands(), TrainingCommands(), TransferCommands()};
}

TEST(CommandTableTest, EveryCommandIsReachableAndDocumented) {
  const CommandTable table = Table();
  std::set<std::string> names;
  for (const CommandGroup& group : table) {
    for (const Command& command : group.commands) {
      const std::string name = CommandName(command);
      SCOPED_TRACE(name);
      EXPECT_TRUE(names.insert(name).second) << "two commands named " << name;
      EXPECT_FALSE(command.summary.empty());
      EXPECT_TRUE(absl::StartsWith(command.example, name)) << command.example;
      for (absl::string_view flag : command.flags) {
        EXPECT_NE(absl::FindCommandLineFlag(flag), nullptr) << "--" << flag << " is no flag";
      }
      std::vector<std::string> args(command.words.begin(), command.words.end());
      for (int i = 0; i < MinArguments(command); ++i) args.push_back("x");
      EXPECT_EQ(FindCommand(table, args), &command);
      EXPECT_NE(CommandHelp(command).find("Example:"), std::string::npos);
    }
  }
}

TEST(CommandTableTest, DispatchKeepsTheOldCommandLines) {
  const CommandTable table = Table();
  auto named = [&](std::vector<std::string> args) {
    const Command* command = FindCommand(table, args);
    return command == nullptr ? std::string("none") : CommandName(*command);
  };
  EXPECT_EQ(named({"plan", "training", "Llama"}), "plan training");
  EXPECT_EQ(named({"plan", "training"}), "plan");  // a model named "training"
  EXPECT_EQ(named({"estimate", "compute"}), "estimate compute");
  EXPECT_EQ(named({"audit"}), "audit");
  EXPECT_EQ(named({"count"}), "count");
  EXPECT_EQ(named({"models", "get"}), "none");
  const Command* near = nullptr;
  EXPECT_EQ(FindCommand(table, {"models", "get"}, &near), nullptr);
  ASSERT_NE(near, nullptr);
  EXPECT_EQ(CommandName(*near), "models get");
}

TEST(CommandTableTest, UnknownCommandsNameTheClosest) {
  const CommandTable table = Table();
  EXPECT_EQ(CommandName(*ClosestCommand(table, {"models", "frobnicate"})), "models create");
  EXPECT_EQ(CommandName(*ClosestCommand(table, {"estimat", "memory", "x"})), "estimate memory");
  EXPECT_EQ(CommandName(*ClosestCommand(table, {"hardwre", "lst"})), "hardware list");
  EXPECT_EQ(CommandName(*ClosestCommand(table, {"runable", "T4"})), "runnable");
}

TEST(CommandTableTest, HelpListsEveryCommandByConcern) {
  const CommandTable table = Table();
  const std::string overview = Overview(table);
  for (const CommandGroup& group : table) {
    EXPECT_NE(overview.find(std::string(group.title)), std::string::npos) << group.title;
    for (const Command& command : group.commands) {
      EXPECT_NE(overview.find(CommandName(command)), std::string::npos) << CommandName(command);
    }
  }
  const Command* memory = FindCommand(table, {"estimate", "memory", "m"});
  ASSERT_NE(memory, nullptr);
  const std::string help = CommandHelp(*memory);
  // No default format sent: the service sizes the model as published and
  // says so (FORMULAS.md, "The inference workload and its defaults").
  EXPECT_NE(help.find("--weights=\"\""), std::string::npos) << help;
  EXPECT_NE(help.find("unset: the format of the model's published checkpoint"), std::string::npos)
      << help;
  EXPECT_NE(help.find("gguf-q4_k_m"), std::string::npos) << help;
  EXPECT_NE(help.find("--context=0"), std::string::npos) << help;
}

}  // namespace
}  // namespace modelatlas::cli
