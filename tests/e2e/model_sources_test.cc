// A model from anywhere with the real binaries: the estimator started on a
// local stand-in of the Hugging Face Hub (--hf_endpoint), the CLI asking
// with --hf, --gguf and --hf_config, and `models save` writing the catalog
// once per revision. No test reaches the internet.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/e2e/end_to_end.h"
#include "tests/estimator/model_files.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas {
namespace {

using estimator::testing::HubFixture;
using estimator::testing::kTinyLlamaSha;
using testing::RunCommand;

class ModelSourcesEndToEndTest : public EndToEndTest {
 protected:
  void SetUp() override {
    EndToEndTest::SetUp();
    hub_ = std::make_unique<HubFixture>(std::filesystem::path(dir_) / "hub");
    ASSERT_NE(hub_->port(), 0);
    catalog_ = Start({CATALOG_SERVICE_BIN, "--sqlite_path=" + dir_ + "/catalog.db"}, "catalog");
    estimator_ = Start({ESTIMATOR_SERVICE_BIN, "--catalog_address=" + catalog_.address(),
                        "--readiness_interval=200ms", "--hf_endpoint=" + hub_->endpoint(),
                        "--hf_cache_dir=" + dir_ + "/hf-cache"},
                       "estimator");
    ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", kStartTimeoutMs));
  }
  void TearDown() override {
    EndToEndTest::TearDown();
    hub_.reset();
  }

  testing::CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {MODELATLAS_CLI_BIN, "--estimator=" + estimator_.address(),
                               "--catalog=" + catalog_.address()});
    return RunCommand(args);
  }

  std::unique_ptr<HubFixture> hub_;
};

TEST_F(ModelSourcesEndToEndTest, HubIdGgufFileAndConfigJson) {
  const auto hf = Cli({"estimate", "memory", "--hf=org/tiny-llama"});
  EXPECT_EQ(hf.exit_code, 0) << hf.err;
  EXPECT_TRUE(absl::StrContains(
      hf.out, absl::StrCat("source: Hugging Face org/tiny-llama at ", kTinyLlamaSha)))
      << hf.out;
  EXPECT_TRUE(absl::StrContains(hf.out, "exact bytes from the file")) << hf.out;

  const std::string gguf = dir_ + "/tiny.Q4_K_M.gguf";
  estimator::testing::WriteModelFile(gguf, estimator::testing::GgufBytes());
  const auto local = Cli({"estimate", "memory", "--gguf=" + gguf, "--context=1024"});
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_TRUE(
      absl::StrContains(local.out, "source: GGUF header of tiny.Q4_K_M.gguf: Q4_K_M, 3 tensors"))
      << local.out;
  EXPECT_TRUE(absl::StrContains(local.out, absl::StrCat(estimator::testing::kGgufTensorBytes)))
      << local.out;

  const std::string config = dir_ + "/config.json";
  estimator::testing::WriteModelFile(config, estimator::testing::kTinyLlamaConfig);
  const auto counted = Cli({"count", "--hf_config=" + config});
  EXPECT_EQ(counted.exit_code, 0) << counted.err;
  EXPECT_TRUE(absl::StrContains(counted.out, "source: config.json (inline)")) << counted.out;

  const auto training = Cli({"estimate", "training-memory", "--hf=org/tiny-llama@main"});
  EXPECT_EQ(training.exit_code, 0) << training.err;
  EXPECT_TRUE(absl::StrContains(training.out, "source: Hugging Face org/tiny-llama"))
      << training.out;

  // A sharded local checkpoint: the index, each shard's header, config.json beside them.
  const std::string shards = dir_ + "/sharded";
  std::vector<estimator::testing::Tensor> all = estimator::testing::TinyLlamaTensors();
  std::vector<estimator::testing::Tensor> first(all.begin(), all.begin() + 3);
  std::vector<estimator::testing::Tensor> second(all.begin() + 3, all.end());
  estimator::testing::WriteModelFile(shards + "/model-00001-of-00002.safetensors",
                                     estimator::testing::SafetensorsBytes(first));
  estimator::testing::WriteModelFile(shards + "/model-00002-of-00002.safetensors",
                                     estimator::testing::SafetensorsBytes(second));
  std::string weight_map;
  for (size_t i = 0; i < all.size(); ++i) {
    absl::StrAppend(&weight_map, i == 0 ? "" : ", ", "\"", all[i].name, "\": \"model-0000",
                    i < 3 ? 1 : 2, "-of-00002.safetensors\"");
  }
  estimator::testing::WriteModelFile(
      shards + "/model.safetensors.index.json",
      absl::StrCat(R"({"metadata": {}, "weight_map": {)", weight_map, "}}"));
  estimator::testing::WriteModelFile(shards + "/config.json", estimator::testing::kTinyLlamaConfig);
  const auto sharded =
      Cli({"estimate", "memory", "--safetensors=" + shards + "/model.safetensors.index.json"});
  EXPECT_EQ(sharded.exit_code, 0) << sharded.err;
  EXPECT_TRUE(absl::StrContains(sharded.out, "tensors in 2 shards, config.json (inline)"))
      << sharded.out;
  EXPECT_TRUE(absl::StrContains(sharded.out, "= 214272 bytes for 106816 parameters"))
      << sharded.out;

  const auto missing = Cli({"estimate", "memory", "--hf=org/missing"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(missing.err, "org/missing")) << missing.err;
  EXPECT_TRUE(absl::StrContains(missing.err, "NOT_FOUND")) << missing.err;

  const auto two = Cli({"estimate", "memory", "Llama 3.1 8B", "--hf=org/tiny-llama"});
  EXPECT_EQ(two.exit_code, 2) << two.err;
}

TEST_F(ModelSourcesEndToEndTest, SaveRecordsOncePerRevision) {
  const auto saved = Cli({"models", "save", "--hf=org/tiny-llama"});
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  EXPECT_TRUE(absl::StartsWith(saved.out, "saved models/org-tiny-llama")) << saved.out;

  const auto again = Cli({"models", "save", "--hf=org/tiny-llama"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(absl::StartsWith(again.out, "unchanged models/org-tiny-llama")) << again.out;

  // The same commit by its sha: unchanged; a later commit (tag v2): updated, once.
  const auto by_sha = Cli({"models", "save", absl::StrCat("--hf=org/tiny-llama@", kTinyLlamaSha)});
  ASSERT_EQ(by_sha.exit_code, 0) << by_sha.err;
  EXPECT_TRUE(absl::StartsWith(by_sha.out, "unchanged models/org-tiny-llama")) << by_sha.out;
  const auto v2 = Cli({"models", "save", "--hf=org/tiny-llama@v2"});
  ASSERT_EQ(v2.exit_code, 0) << v2.err;
  EXPECT_TRUE(absl::StartsWith(v2.out, "updated models/org-tiny-llama")) << v2.out;
  EXPECT_TRUE(absl::StrContains(v2.out, estimator::testing::kTinyLlamaV2Sha)) << v2.out;
  const auto v2_again = Cli({"models", "save", "--hf=org/tiny-llama@v2"});
  EXPECT_TRUE(absl::StartsWith(v2_again.out, "unchanged models/org-tiny-llama")) << v2_again.out;

  const auto record = Cli({"--json", "models", "get", "models/org-tiny-llama"});
  ASSERT_EQ(record.exit_code, 0) << record.err;
  EXPECT_TRUE(absl::StrContains(record.out, estimator::testing::kTinyLlamaV2Sha)) << record.out;
  EXPECT_TRUE(absl::StrContains(record.out, "\"num_layers\": 2")) << record.out;

  // The saved record answers like any catalog model (the estimator's
  // snapshot sees the write through Watch).
  testing::CommandResult estimated;
  for (int i = 0; i < 50; ++i) {
    estimated = Cli({"estimate", "memory", "models/org-tiny-llama"});
    if (estimated.exit_code == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(estimated.exit_code, 0) << estimated.err;
  EXPECT_TRUE(absl::StrContains(estimated.out, "source: catalog record models/org-tiny-llama"))
      << estimated.out;
}

TEST_F(ModelSourcesEndToEndTest, AGgufWithItsMmprojAndTheCardOfAnyModel) {
  const std::string gguf = dir_ + "/tiny.Q4_K_M.gguf";
  const std::string mmproj = dir_ + "/mmproj-tiny-f16.gguf";
  estimator::testing::WriteModelFile(gguf, estimator::testing::GgufBytes());
  estimator::testing::WriteModelFile(mmproj, estimator::testing::MmprojBytes());
  const auto memory = Cli({"estimate", "memory", "--gguf=" + gguf, "--mmproj=" + mmproj});
  EXPECT_EQ(memory.exit_code, 0) << memory.err;
  EXPECT_TRUE(absl::StrContains(memory.out, "mmproj mmproj-tiny-f16.gguf: mlp projector"))
      << memory.out;
  EXPECT_TRUE(absl::StrContains(
      memory.out, absl::StrCat("vision_encoder  ", estimator::testing::kMmprojVisionBytes)))
      << memory.out;
  EXPECT_TRUE(absl::StrContains(
      memory.out, absl::StrCat("projector       ", estimator::testing::kMmprojProjectorBytes)))
      << memory.out;

  // --mmproj alone is a usage error; a projector of another model is refused.
  const auto alone = Cli({"estimate", "memory", "--mmproj=" + mmproj, "--hf=org/tiny-llama"});
  EXPECT_NE(alone.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(alone.err, "--mmproj goes with --gguf")) << alone.err;
  estimator::testing::WriteModelFile(mmproj, estimator::testing::MmprojBytes(4096));
  const auto other = Cli({"estimate", "memory", "--gguf=" + gguf, "--mmproj=" + mmproj});
  EXPECT_NE(other.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(other.err, "belongs to another model")) << other.err;

  // The card of a model that is not in the catalog.
  const auto card = Cli({"card", "--hf=org/tiny-llama"});
  EXPECT_EQ(card.exit_code, 0) << card.err;
  EXPECT_TRUE(absl::StrContains(card.out, "org/tiny-llama")) << card.out;
  EXPECT_TRUE(absl::StrContains(card.out, "Hardware requirements")) << card.out;
  EXPECT_TRUE(absl::StrContains(card.out, "source: Hugging Face org/tiny-llama")) << card.out;
}

}  // namespace
}  // namespace modelatlas
