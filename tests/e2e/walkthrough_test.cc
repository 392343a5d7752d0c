// Issue 20's acceptance walk-through: a new user's questions, asked through
// the real CLI against the real catalog and estimator on free ports, one
// step per point of the issue. Figures are compared across paths (the same
// question asked twice, a summary against the list it summarizes), never
// against numbers written here.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "modelatlas/catalog/v1/catalog_service.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"
#include "tests/e2e/end_to_end.h"
#include "tests/testing/grpc_testing.h"
#include "tests/testing/process.h"

namespace modelatlas {
namespace {

using testing::CommandResult;

class WalkthroughTest : public EndToEndTest {
 protected:
  void SetUp() override {
    EndToEndTest::SetUp();
    StartBoth();
    ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", kStartTimeoutMs));
  }

  // `modelatlas` with both addresses and `args`.
  CommandResult Cli(std::vector<std::string> args) {
    std::vector<std::string> argv = {MODELATLAS_CLI_BIN, "--catalog=" + catalog_.address(),
                                     "--estimator=" + estimator_.address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::RunCommand(argv);
  }

  // Runs the CLI, expects success and parses its stdout into `message`.
  template <typename Message>
  Message JsonAnswer(std::vector<std::string> args) {
    const CommandResult result = Cli(args);
    Message message;
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const auto parsed = google::protobuf::util::JsonStringToMessage(result.out, &message);
    EXPECT_TRUE(parsed.ok()) << parsed << "\n" << result.out.substr(0, 2000);
    return message;
  }
};

bool Has(const std::string& text, absl::string_view part) { return absl::StrContains(text, part); }

constexpr char kLlama[] = "Llama 3.1 8B";
constexpr char kRtx4090[] = "NVIDIA GeForce RTX 4090";

TEST_F(WalkthroughTest, Point1TheSameQuestionGetsTheSameAnswerOnEveryPath) {
  // "Does Llama 3.1 8B run on an RTX 4090?", asked of plan and of runnable.
  const auto plan = JsonAnswer<estimator::v1::PlanInferenceResponse>(
      {"--json", "plan", kLlama, std::string("--hardware=") + kRtx4090});
  ASSERT_EQ(plan.plans_size(), 1);
  const auto runnable = JsonAnswer<google::protobuf::ListValue>(
      {"--json", "runnable", kRtx4090, "--filter=display_name = \"Llama 3.1 8B\""});
  ASSERT_EQ(runnable.values_size(), 1) << runnable.DebugString();
  const auto& row = runnable.values(0).struct_value().fields();
  EXPECT_EQ(row.at("cards").number_value(), plan.plans(0).cards());
  EXPECT_EQ(row.at("required_bytes_per_card").string_value(),
            std::to_string(plan.plans(0).required_bytes_per_card()));
  // The memory answer agrees with the plan's memory.
  const auto memory = JsonAnswer<estimator::v1::EstimateInferenceMemoryResponse>(
      {"--json", "estimate", "memory", kLlama});
  EXPECT_EQ(memory.total_bytes(), plan.memory().total_bytes());
  // Every text answer states the workload it assumed in its headline.
  for (const std::vector<std::string>& question :
       {std::vector<std::string>{"plan", kLlama, std::string("--hardware=") + kRtx4090},
        std::vector<std::string>{"estimate", "memory", kLlama}}) {
    const CommandResult text = Cli(question);
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_TRUE(Has(text.out, "workload: " + memory.workload().statement())) << text.out;
  }
}

TEST_F(WalkthroughTest, Point2NamesResolveOrSayWhatWasMeant) {
  const CommandResult exact = Cli({"models", "get", "llama 3.1 8b"});
  EXPECT_EQ(exact.exit_code, 0) << exact.err;
  // A misspelt model and a misspelt hardware id: NOT_FOUND with the closest names.
  const CommandResult model = Cli({"models", "get", "Lama 3.1 8B"});
  EXPECT_EQ(model.exit_code, 1);
  EXPECT_TRUE(Has(model.err, "NOT_FOUND")) << model.err;
  EXPECT_TRUE(Has(model.err, "did you mean \"Llama 3.1 8B\"")) << model.err;
  const CommandResult hardware = Cli({"hardware", "get", "hardware/nvidia-gefroce-rtx-4090"});
  EXPECT_EQ(hardware.exit_code, 1);
  EXPECT_TRUE(Has(hardware.err, "did you mean")) << hardware.err;
  EXPECT_TRUE(Has(hardware.err, "nvidia-geforce-rtx-4090")) << hardware.err;
  // A name that fits several records lists them instead of choosing.
  const CommandResult several = Cli({"hardware", "get", "H100"});
  EXPECT_EQ(several.exit_code, 1);
  EXPECT_TRUE(Has(several.err, "hardware/nvidia-h100-sxm5-80gb")) << several.err;
  EXPECT_TRUE(Has(several.err, "hardware/nvidia-h100-pcie-80gb")) << several.err;
  // Filter fields and flags.
  const CommandResult field = Cli({"models", "list", "--filter=organization:\"Meta\""});
  EXPECT_EQ(field.exit_code, 1);
  EXPECT_TRUE(Has(field.err, "organizations")) << field.err;
  const CommandResult flag = Cli({"plan", kLlama, "--prise=2"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_TRUE(Has(flag.err, "--price")) << flag.err;
}

TEST_F(WalkthroughTest, Point3CostUsesTheGivenPriceAndSaysWhereItCameFrom) {
  const std::string hardware = "--hardware=NVIDIA H100 SXM5 80 GB,NVIDIA H20";
  const auto recorded =
      JsonAnswer<estimator::v1::PlanInferenceResponse>({"--json", "plan", kLlama, hardware});
  const auto priced = JsonAnswer<estimator::v1::PlanInferenceResponse>(
      {"--json", "plan", kLlama, hardware, "--price=4"});
  const auto doubled = JsonAnswer<estimator::v1::PlanInferenceResponse>(
      {"--json", "plan", kLlama, hardware, "--price=8"});
  ASSERT_EQ(priced.plans_size(), 2);
  ASSERT_EQ(doubled.plans_size(), 2);
  bool some_without_price = false;
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(priced.plans(i).hardware());
    EXPECT_EQ(priced.plans(i).price_source(), estimator::v1::PRICE_SOURCE_REQUEST);
    EXPECT_EQ(priced.plans(i).price_usd_per_card_hour(), 4);
    ASSERT_TRUE(priced.plans(i).has_cost_usd_per_million_tokens());
    // Cost is proportional to the price: twice the price, twice the cost.
    EXPECT_NEAR(doubled.plans(i).cost_usd_per_million_tokens(),
                2 * priced.plans(i).cost_usd_per_million_tokens(),
                1e-9 * doubled.plans(i).cost_usd_per_million_tokens());
  }
  for (const auto& plan : recorded.plans()) {
    if (plan.price_source() == estimator::v1::PRICE_SOURCE_UNSPECIFIED) {
      some_without_price = true;
      EXPECT_FALSE(plan.has_cost_usd_per_million_tokens()) << plan.hardware();
    } else {
      EXPECT_EQ(plan.price_source(), estimator::v1::PRICE_SOURCE_RECORD);
    }
  }
  EXPECT_TRUE(some_without_price) << "the H20 has no cloud price on record";

  // The text says where each price came from and labels both decode speeds.
  const CommandResult text = Cli({"plan", kLlama, hardware, "--batch=8"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(Has(text.out, "(record)")) << text.out;
  EXPECT_TRUE(Has(text.out, "no price on record")) << text.out;
  EXPECT_TRUE(Has(text.out, "DECODE tok/s PER SEQUENCE")) << text.out;
  EXPECT_TRUE(Has(text.out, "DECODE tok/s BATCH OF 8")) << text.out;
  const CommandResult given = Cli({"plan", kLlama, hardware, "--price=4"});
  EXPECT_TRUE(Has(given.out, "4.00 (--price)")) << given.out;
  EXPECT_TRUE(Has(given.out, "from the command line (--price)")) << given.out;
  const CommandResult bad = Cli({"plan", kLlama, hardware, "--price=-1"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(Has(bad.err, "INVALID_ARGUMENT")) << bad.err;
  EXPECT_TRUE(Has(bad.err, "price_usd_per_card_hour")) << bad.err;

  // Sorting by a column shows that column.
  const CommandResult sorted =
      Cli({"models", "list", "--order_by=training_compute_flop desc", "--page_size=1000"});
  EXPECT_EQ(sorted.exit_code, 0) << sorted.err;
  EXPECT_TRUE(Has(sorted.out.substr(0, sorted.out.find('\n')), "TRAINING_COMPUTE_FLOP"))
      << sorted.out.substr(0, 500);
}

TEST_F(WalkthroughTest, Point4PagesUseHumanUnits) {
  const CommandResult card = Cli({"card", "Megatron-BERT"});
  EXPECT_EQ(card.exit_code, 0) << card.err;
  EXPECT_TRUE(Has(card.out, "262.6 kW")) << card.out;
  EXPECT_TRUE(Has(card.out, "--hypothetical")) << card.out;
  EXPECT_FALSE(Has(card.out, "262640.3021")) << card.out;
}

TEST_F(WalkthroughTest, Point5PicturesOnTheTerminalAndOneJsonDocument) {
  // Bars: a component per line for a memory answer, a bar per card for a plan.
  const CommandResult memory = Cli({"estimate", "memory", kLlama});
  EXPECT_EQ(memory.exit_code, 0) << memory.err;
  EXPECT_TRUE(Has(memory.out, "share of the total")) << memory.out;
  EXPECT_TRUE(Has(memory.out, "[###")) << memory.out;
  const CommandResult plan = Cli({"plan", kLlama, std::string("--hardware=") + kRtx4090});
  EXPECT_TRUE(Has(plan.out, "memory per card against its usable memory")) << plan.out;
  EXPECT_TRUE(Has(plan.out, "[WWW")) << plan.out;
  // --json is one document: a whole array for a streamed list.
  const auto array = JsonAnswer<google::protobuf::ListValue>(
      {"--json", "runnable", "NVIDIA T4", "--filter=parameters < 2e9"});
  EXPECT_GT(array.values_size(), 1);
  // --jsonl: one object per line, as many as the array has.
  const CommandResult lines =
      Cli({"--jsonl", "runnable", "NVIDIA T4", "--filter=parameters < 2e9"});
  EXPECT_EQ(lines.exit_code, 0) << lines.err;
  int count = 0;
  for (absl::string_view line : absl::StrSplit(lines.out, '\n', absl::SkipEmpty())) {
    google::protobuf::Struct object;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(std::string(line), &object).ok())
        << line;
    ++count;
  }
  EXPECT_EQ(count, array.values_size());
  // An empty list is still a document.
  const CommandResult none = Cli({"--json", "runnable", "NVIDIA T4", "--filter=parameters < 0"});
  EXPECT_EQ(none.out, "[]\n");
  // Piped, an import prints its report and no progress bar.
  const std::string file = dir_ + "/models.csv";
  const CommandResult exported = Cli({"export", "--format=epoch-models-csv", "--output=" + file,
                                      "--filter=display_name = \"Llama 3.1 8B\""});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_FALSE(Has(exported.err, "MB received")) << exported.err;
  const CommandResult imported = Cli({"import", file, "--dry_run"});
  EXPECT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_TRUE(Has(imported.out, "1 rows read")) << imported.out;
  EXPECT_FALSE(Has(imported.err, "[#")) << imported.err;
  EXPECT_FALSE(Has(imported.err, "\r")) << imported.err;
}

TEST_F(WalkthroughTest, Point6HelpListsFlagsFieldsAndValues) {
  const CommandResult help = Cli({"--help"});
  EXPECT_FALSE(Has(help.out + help.err, "No flags matched")) << help.out;
  const CommandResult plan_help = Cli({"plan", "--help"});
  EXPECT_TRUE(Has(plan_help.out + plan_help.err, "--price")) << plan_help.out;
  const CommandResult summarize_help = Cli({"models", "summarize", "--help"});
  EXPECT_TRUE(Has(summarize_help.out + summarize_help.err, "--group_by"));
  const CommandResult fields = Cli({"fields", "models"});
  EXPECT_EQ(fields.exit_code, 0) << fields.err;
  EXPECT_TRUE(Has(fields.out, "organizations")) << fields.out;
  EXPECT_TRUE(Has(fields.out, "training_hardware")) << fields.out;
}

TEST_F(WalkthroughTest, Point7ModelsTrainedOnA100ByOrganizationInOneCommand) {
  const std::string filter = "--filter=training_hardware:\"A100\"";
  const auto summary = JsonAnswer<catalog::v1::Summary>({"--json", "models", "summarize", filter,
                                                         "--group_by=organizations",
                                                         "--value_field=training_compute_flop"});
  // The same count from the list the summary stands for.
  const auto listed = JsonAnswer<catalog::v1::ListModelsResponse>(
      {"--json", "models", "list", filter, "--page_size=1000"});
  ASSERT_GT(listed.models_size(), 0);
  EXPECT_EQ(summary.record_count(), listed.models_size());
  std::map<std::string, int64_t> expected;
  std::map<std::string, double> expected_max;
  for (const auto& model : listed.models()) {
    std::set<std::string> organizations(model.organizations().begin(), model.organizations().end());
    if (organizations.empty()) organizations.insert("");
    for (const std::string& organization : organizations) {
      ++expected[organization];
      if (model.has_training_compute_flop()) {
        expected_max[organization] =
            std::max(expected_max[organization], model.training_compute_flop());
      }
    }
  }
  ASSERT_EQ(summary.groups_size(), static_cast<int>(expected.size()));
  for (const auto& group : summary.groups()) {
    SCOPED_TRACE(group.value());
    EXPECT_EQ(group.record_count(), expected[group.value()]);
    if (group.has_value_max()) {
      EXPECT_EQ(group.value_max(), expected_max[group.value()]);
    }
  }
  // Largest first.
  for (int i = 1; i < summary.groups_size(); ++i) {
    EXPECT_GE(summary.groups(i - 1).record_count(), summary.groups(i).record_count());
  }
  // In the terminal: a table headed by the field, and the total.
  const CommandResult text = Cli({"models", "summarize", filter, "--group_by=organizations"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(Has(text.out, "ORGANIZATIONS")) << text.out;
  EXPECT_TRUE(Has(text.out, std::to_string(listed.models_size()) + " models matched")) << text.out;
  // A wrong field names itself and what was meant.
  const CommandResult wrong = Cli({"models", "summarize", "--group_by=organization"});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_TRUE(Has(wrong.err, "INVALID_ARGUMENT")) << wrong.err;
  EXPECT_TRUE(Has(wrong.err, "group_by")) << wrong.err;
  EXPECT_TRUE(Has(wrong.err, "did you mean \"organizations\"")) << wrong.err;
}

}  // namespace
}  // namespace modelatlas
