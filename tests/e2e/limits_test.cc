// End to end through the CLI: the inverse questions (issue 21, point 1)
// against the real binaries, each answer checked with the CLI's own forward
// command (`plan`) at the answer and one step beyond.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "google/protobuf/util/json_util.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"
#include "tests/e2e/end_to_end.h"
#include "tests/testing/grpc_testing.h"
#include "tests/testing/process.h"

namespace modelatlas {
namespace {

using testing::RunCommand;

template <typename Message>
Message FromJson(const std::string& json) {
  Message message;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &message, options).ok()) << json;
  return message;
}

TEST_F(EndToEndTest, CliInverseQuestionsAreInversesOfThePlan) {
  StartBoth();
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", kStartTimeoutMs));
  const std::string both[] = {"--catalog=" + catalog_.address(),
                              "--estimator=" + estimator_.address()};
  auto plan_fits = [&](const std::vector<std::string>& workload) {
    std::vector<std::string> command = {
        MODELATLAS_CLI_BIN,       both[0],        both[1], "--json", "plan", "Llama 3.1 70B",
        "--hardware=NVIDIA H100", "--max_cards=2"};
    command.insert(command.end(), workload.begin(), workload.end());
    const auto plan = RunCommand(command);
    EXPECT_EQ(plan.exit_code, 0) << plan.err;
    const auto response = FromJson<estimator::v1::PlanInferenceResponse>(plan.out);
    EXPECT_EQ(response.plans_size(), 1);
    return response.plans_size() == 1 && response.plans(0).fits();
  };

  const auto context = RunCommand({MODELATLAS_CLI_BIN, both[0], both[1], "--json", "max-context",
                                   "Llama 3.1 70B", "--hardware=NVIDIA H100", "--cards=2"});
  ASSERT_EQ(context.exit_code, 0) << context.err;
  const auto answer = FromJson<estimator::v1::InverseAnswer>(context.out);
  const int64_t tokens = answer.max_context_length_tokens();
  ASSERT_GT(tokens, 0);
  EXPECT_EQ(tokens % 16, 0);
  EXPECT_TRUE(plan_fits({"--context=" + std::to_string(tokens)}));
  EXPECT_FALSE(plan_fits({"--context=" + std::to_string(tokens + 16)}));

  const auto batch =
      RunCommand({MODELATLAS_CLI_BIN, both[0], both[1], "--json", "max-batch", "Llama 3.1 70B",
                  "--hardware=NVIDIA H100", "--cards=2", "--context=4096"});
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  const int sequences = FromJson<estimator::v1::InverseAnswer>(batch.out).max_batch_size();
  ASSERT_GT(sequences, 1);
  EXPECT_TRUE(plan_fits({"--context=4096", "--batch=" + std::to_string(sequences)}));
  EXPECT_FALSE(plan_fits({"--context=4096", "--batch=" + std::to_string(sequences + 1)}));

  // The table for people names the answer and what binds it.
  const auto format =
      RunCommand({MODELATLAS_CLI_BIN, both[0], both[1], "best-format", "Llama 3.1 70B",
                  "--hardware=NVIDIA H100", "--cards=2", "--prefer=fp32,bf16,awq-int4"});
  ASSERT_EQ(format.exit_code, 0) << format.err;
  EXPECT_NE(format.out.find("best weight format: bf16"), std::string::npos) << format.out;
  EXPECT_NE(format.out.find("the next better format, fp32, does not fit"), std::string::npos)
      << format.out;
  EXPECT_TRUE(plan_fits({"--weights=bf16"}));
  EXPECT_FALSE(plan_fits({"--weights=fp32"}));

  // Bad input: a usage error, or the estimator's INVALID_ARGUMENT naming the field.
  const auto no_target =
      RunCommand({MODELATLAS_CLI_BIN, both[0], both[1], "max-context", "Llama 3.1 70B"});
  EXPECT_EQ(no_target.exit_code, 2);
  EXPECT_NE(no_target.err.find("--budget_bytes"), std::string::npos) << no_target.err;
  const auto too_many = RunCommand({MODELATLAS_CLI_BIN, both[0], both[1], "max-context",
                                    "Llama 3.1 70B", "--hardware=NVIDIA H100", "--cards=5000"});
  EXPECT_EQ(too_many.exit_code, 1);
  EXPECT_NE(too_many.err.find("INVALID_ARGUMENT"), std::string::npos) << too_many.err;
  EXPECT_NE(too_many.err.find("target.cards"), std::string::npos) << too_many.err;
}

// A model published quantized is planned as published when the request
// names no format: openai/gpt-oss-120b ships its experts in MXFP4 and OpenAI
// says it runs "on a single 80 GB GPU" (openai.com/index/introducing-gpt-oss,
// 2025-08-05). The CLI sends no --weights by default; the answer says the
// format was the checkpoint's. Named bf16, the same model needs more cards.
TEST_F(EndToEndTest, CliPlansAQuantizedCheckpointInItsPublishedFormatAndSaysSo) {
  StartBoth();
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", kStartTimeoutMs));
  const std::string both[] = {"--catalog=" + catalog_.address(),
                              "--estimator=" + estimator_.address()};
  auto plan = [&](const std::vector<std::string>& flags) {
    std::vector<std::string> command = {
        MODELATLAS_CLI_BIN,       both[0],        both[1], "--json", "plan", "gpt-oss-120b",
        "--hardware=NVIDIA H100", "--max_cards=1"};
    command.insert(command.end(), flags.begin(), flags.end());
    const auto run = RunCommand(command);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return FromJson<estimator::v1::PlanInferenceResponse>(run.out);
  };
  const auto published = plan({});
  const auto& workload = published.memory().workload();
  EXPECT_EQ(workload.workload().weight_format(), estimator::v1::NUMBER_FORMAT_MXFP4);
  EXPECT_TRUE(workload.weight_format_from_checkpoint());
  EXPECT_NE(workload.statement().find(
                "weights mxfp4 (the published checkpoint's format; the default is bf16)"),
            std::string::npos)
      << workload.statement();
  ASSERT_EQ(published.plans_size(), 1);
  EXPECT_TRUE(published.plans(0).fits());
  // The checkpoint's own bytes (WeightFilesTest.Mxfp4CheckpointsOfGptOssMatchToTheByte).
  EXPECT_EQ(published.plans(0).weight_bytes_per_card(), 65248815744);

  const auto bf16 = plan({"--weights=bf16"});
  EXPECT_EQ(bf16.memory().workload().workload().weight_format(), estimator::v1::NUMBER_FORMAT_BF16);
  EXPECT_FALSE(bf16.memory().workload().weight_format_from_checkpoint());
  ASSERT_EQ(bf16.plans_size(), 1);
  EXPECT_FALSE(bf16.plans(0).fits());

  // The table for people states it too.
  const auto table =
      RunCommand({MODELATLAS_CLI_BIN, both[0], both[1], "estimate", "memory", "DeepSeek-V3"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("weights fp8-block128 (the published checkpoint's format"),
            std::string::npos)
      << table.out;
}

// A plan on a model with no architecture on record fits the weights,
// activations and overhead only: the CLI's table says so above the fits, and
// each card's arithmetic says the KV cache was not counted (Jamba 1.5 Mini
// at a 131,072-token context, where the cache is not small).
TEST_F(EndToEndTest, CliPlanOnAModelWithoutArchitectureSaysItsKvCacheIsNotCounted) {
  StartBoth();
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", kStartTimeoutMs));
  const std::vector<std::string> command = {MODELATLAS_CLI_BIN,
                                            "--catalog=" + catalog_.address(),
                                            "--estimator=" + estimator_.address(),
                                            "plan",
                                            "Jamba 1.5 Mini",
                                            "--hardware=NVIDIA H100",
                                            "--context=131072"};
  const auto table = RunCommand(command);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const size_t note = table.out.find("note: no architecture on record: KV cache not counted");
  ASSERT_NE(note, std::string::npos) << table.out;
  EXPECT_LT(note, table.out.find("HARDWARE")) << table.out;

  std::vector<std::string> as_json = command;
  as_json.insert(as_json.begin() + 3, "--json");
  const auto run = RunCommand(as_json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto response = FromJson<estimator::v1::PlanInferenceResponse>(run.out);
  ASSERT_GE(response.plans_size(), 1);
  EXPECT_TRUE(absl::c_any_of(response.plans(0).arithmetic(), [](const std::string& line) {
    return absl::StrContains(line, "KV cache 0.00 GiB (not counted");
  })) << run.out;
}

// "The largest context on my one RTX 4090 with 64 GB of host RAM", through
// the CLI with --offload: the answer names the layout and the binding
// constraint, and the CLI's own `plan` with the same offload fits at it and
// not one block beyond.
TEST_F(EndToEndTest, CliMaxContextWithOffloadIsTheInverseOfThePlanWithOffload) {
  StartBoth();
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", kStartTimeoutMs));
  const std::string both[] = {"--catalog=" + catalog_.address(),
                              "--estimator=" + estimator_.address()};
  const std::vector<std::string> offload = {"--weights=gguf-q6_k", "--offload=auto",
                                            "--offload_host=desktop DDR5-6000"};
  auto plan_fits = [&](int64_t context) {
    std::vector<std::string> command = {MODELATLAS_CLI_BIN,
                                        both[0],
                                        both[1],
                                        "--json",
                                        "plan",
                                        "Llama 3.1 70B",
                                        "--hardware=RTX 4090",
                                        "--max_cards=1",
                                        "--context=" + std::to_string(context)};
    command.insert(command.end(), offload.begin(), offload.end());
    const auto plan = RunCommand(command);
    EXPECT_EQ(plan.exit_code, 0) << plan.err;
    const auto response = FromJson<estimator::v1::PlanInferenceResponse>(plan.out);
    EXPECT_EQ(response.plans_size(), 1);
    return response.plans_size() == 1 && response.plans(0).fits();
  };
  std::vector<std::string> ask = {
      MODELATLAS_CLI_BIN,   both[0], both[1], "--json", "max-context", "Llama 3.1 70B",
      "--hardware=RTX 4090"};
  ask.insert(ask.end(), offload.begin(), offload.end());
  const auto context = RunCommand(ask);
  ASSERT_EQ(context.exit_code, 0) << context.err;
  const auto answer = FromJson<estimator::v1::InverseAnswer>(context.out);
  ASSERT_TRUE(answer.fits()) << context.out;
  const int64_t tokens = answer.max_context_length_tokens();
  ASSERT_GT(tokens, 0);
  EXPECT_TRUE(answer.plan().has_offload());
  EXPECT_NE(answer.plan().layout().find("-ngl "), std::string::npos) << answer.plan().layout();
  EXPECT_TRUE(plan_fits(tokens));
  EXPECT_FALSE(plan_fits(tokens + 16));

  // The table names the layout and what binds.
  ask.erase(ask.begin() + 3);  // --json
  const auto text = RunCommand(ask);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("layout: one card + host memory (llama.cpp -ngl "), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("binding constraint: host memory (Desktop"), std::string::npos)
      << text.out;

  // Offload with a memory budget names the field.
  const auto budget = RunCommand({MODELATLAS_CLI_BIN, both[0], both[1], "max-context",
                                  "Llama 3.1 70B", "--budget_bytes=30000000000", "--offload=auto",
                                  "--offload_host=desktop DDR5-6000"});
  EXPECT_EQ(budget.exit_code, 1);
  EXPECT_NE(budget.err.find("target.offload"), std::string::npos) << budget.err;
}

}  // namespace
}  // namespace modelatlas
