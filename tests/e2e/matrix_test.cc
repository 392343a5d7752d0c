// `modelatlas export matrix` against the real binaries (issue 21, point 7):
// the estimator's StreamFitMatrix written as CSV with units in the header,
// or as JSON lines; every row agrees with PlanInference on the same cell.
#include <fstream>
#include <sstream>

#include "absl/strings/str_split.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"
#include "tests/e2e/end_to_end.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas {
namespace {

using testing::RunCommand;

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST_F(EndToEndTest, CliExportsTheFitMatrixAsCsvAndJsonLines) {
  StartBoth();
  ASSERT_TRUE(testing::WaitUntilServing(Channel(estimator_), "readiness", kStartTimeoutMs));
  const std::string at = "--estimator=" + estimator_.address();
  const std::string file = dir_ + "/matrix.csv";
  auto csv = RunCommand({MODELATLAS_CLI_BIN, at, "export", "matrix",
                         "--filter=display_name = \"Llama 3.1 8B\" OR display_name = \"Llama 3.1 "
                         "70B\"",
                         "--hardware_filter=name = \"hardware/nvidia-h100-sxm5-80gb\" OR name = "
                         "\"hardware/nvidia-l4\"",
                         "--weight_formats=bf16,int8,gguf-q4-k-m", "--output=" + file});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.err.find("12 rows (2 models x 2 accelerators x 3 weight formats)"),
            std::string::npos)
      << csv.err;
  const std::vector<std::string> lines = Lines(testing::ReadFile(file));
  ASSERT_EQ(lines.size(), 13u);
  EXPECT_EQ(lines[0],
            "model,display_name,parameters,context_length_tokens,hardware,hardware_display_name,"
            "weight_format,fits,cards,tensor_parallel,pipeline_parallel,required_bytes_per_card,"
            "usable_bytes_per_card,decode_tokens_per_second_per_sequence,kv_cache_counted");

  // Each row is what PlanInference says for its cell.
  auto stub = estimator::v1::EstimatorService::NewStub(Channel(estimator_));
  int fitting = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
    ASSERT_EQ(cells.size(), 15u) << lines[i];
    SCOPED_TRACE(lines[i]);
    estimator::v1::PlanInferenceRequest request;
    request.set_model(cells[0]);
    request.add_hardware(cells[4]);
    request.mutable_workload()->set_weight_format(
        cells[6] == "bf16"   ? estimator::v1::NUMBER_FORMAT_BF16
        : cells[6] == "int8" ? estimator::v1::NUMBER_FORMAT_INT8
                             : estimator::v1::NUMBER_FORMAT_GGUF_Q4_K_M);
    estimator::v1::PlanInferenceResponse plan;
    grpc::ClientContext context;
    ASSERT_TRUE(stub->PlanInference(&context, request, &plan).ok());
    ASSERT_EQ(plan.plans_size(), 1);
    EXPECT_EQ(cells[7], plan.plans(0).fits() ? "true" : "false");
    EXPECT_EQ(cells[8], std::to_string(plan.plans(0).cards()));
    EXPECT_EQ(cells[11], std::to_string(plan.plans(0).required_bytes_per_card()));
    EXPECT_EQ(cells[12], std::to_string(plan.plans(0).usable_bytes_per_card()));
    EXPECT_EQ(cells[13].empty(), !plan.plans(0).fits());
    EXPECT_EQ(cells[14], "true");  // both records have an architecture
    fitting += plan.plans(0).fits();
  }
  EXPECT_GE(fitting, 6);
  // Llama 3.1 8B in bf16 on one H100 (16 GB of weights in 71 GiB usable).
  EXPECT_NE(testing::ReadFile(file).find("models/llama-3-1-8b,Llama 3.1 8B,8030261248,4096,"
                                         "hardware/nvidia-h100-sxm5-80gb"),
            std::string::npos);

  auto jsonl = RunCommand({MODELATLAS_CLI_BIN, at, "export", "matrix", "--format=jsonl",
                           "--filter=display_name = \"Llama 3.1 8B\"", "--max_cards=1"});
  ASSERT_EQ(jsonl.exit_code, 0) << jsonl.err;
  const std::vector<std::string> objects = Lines(jsonl.out);
  ASSERT_GT(objects.size(), 400u);  // every accelerator x the default four formats
  EXPECT_EQ(objects.size() % 4, 0u);
  EXPECT_EQ(objects[0].rfind("{\"model\":\"models/llama-3-1-8b\",\"display_name\":\"Llama 3.1 "
                             "8B\",\"parameters\":8030261248,",
                             0),
            0u)
      << objects[0];
  EXPECT_NE(jsonl.out.find("\"weight_format\":\"gguf-q4_k_m\""), std::string::npos);
  EXPECT_EQ(jsonl.out.find("\"cards\":2"), std::string::npos);  // --max_cards=1

  auto unknown = RunCommand({MODELATLAS_CLI_BIN, at, "export", "matrix", "--weight_formats=q9"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("weight_formats"), std::string::npos) << unknown.err;
  auto bad_filter = RunCommand(
      {MODELATLAS_CLI_BIN, at, "export", "matrix", "--hardware_filter=no_such_field = 1"});
  EXPECT_EQ(bad_filter.exit_code, 1);
  EXPECT_NE(bad_filter.err.find("hardware_filter"), std::string::npos) << bad_filter.err;
  auto bad_format = RunCommand({MODELATLAS_CLI_BIN, at, "export", "matrix", "--format=xml"});
  EXPECT_EQ(bad_format.exit_code, 2);
}

}  // namespace
}  // namespace modelatlas
