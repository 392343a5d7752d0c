// The inverse questions (issue 21): the largest context, the largest batch
// and the best weight format that fit a model on cards of a hardware record
// (--hardware, --cards) or in a memory budget (--budget_bytes).
#include <algorithm>
#include <iostream>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/command.h"
#include "cli/enum_spellings.h"
#include "cli/model_source.h"
#include "cli/output.h"
#include "cli/workload.h"

// Defined with the inference commands (cli/commands/inference.cc).
ABSL_DECLARE_FLAG(int32_t, cards);
ABSL_DECLARE_FLAG(bool, hypothetical);
ABSL_DECLARE_FLAG(std::string, offload);
ABSL_DECLARE_FLAG(std::string, offload_host);

ABSL_FLAG(int64_t, budget_bytes, 0,
          "max-context, max-batch, best-format: a memory budget for the whole model, bytes, "
          "instead of --hardware");
ABSL_FLAG(int32_t, block_size, 0,
          "max-context, max-batch: KV-cache block size of the runtime, tokens (0 = 16, vLLM's "
          "default; 1 = no rounding)");
ABSL_FLAG(std::string, prefer, "",
          "best-format: weight formats in order of preference, comma-separated (empty = every "
          "format, highest bits per weight first)");

namespace modelatlas::cli {
namespace {

namespace v1 = estimator::v1;

// The model, the target and the workload every question reads.
template <typename Request>
absl::Status FillCommon(const Arguments& args, Request* request) {
  absl::StatusOr<v1::ModelSource> source = ModelSourceFromFlags(args);
  if (!source.ok()) return source.status();
  *request->mutable_source() = *std::move(source);
  const std::string hardware = absl::GetFlag(FLAGS_hardware);
  const int64_t budget = absl::GetFlag(FLAGS_budget_bytes);
  if (hardware.empty() == (budget == 0)) {
    return absl::InvalidArgumentError("give one of --hardware (with --cards) or --budget_bytes");
  }
  if (!hardware.empty()) {
    request->mutable_target()->set_hardware(hardware);
    request->mutable_target()->set_cards(absl::GetFlag(FLAGS_cards));
  } else {
    request->mutable_target()->set_memory_budget_bytes(budget);
  }
  // Offload as `plan` takes it; the service names target.offload when it
  // does not apply (a memory budget).
  const auto offload = OffloadModes().ParseFlag("offload", absl::GetFlag(FLAGS_offload));
  if (!offload.ok()) return offload.status();
  request->mutable_target()->set_offload(*offload);
  request->mutable_target()->set_offload_host(absl::GetFlag(FLAGS_offload_host));
  request->set_hypothetical(absl::GetFlag(FLAGS_hypothetical));
  return FillWorkload(request->mutable_workload());
}

int Print(Session& session, const grpc::Status& status, const v1::InverseAnswer& answer,
          const std::string& value) {
  if (!status.ok()) return session.EstimatorFailed(status);
  if (session.json()) {
    PrintJson(answer);
    return EXIT_SUCCESS;
  }
  std::cout << answer.display_name();
  if (!answer.model().empty()) std::cout << " (" << answer.model() << ")";
  std::cout << "\n";
  if (!answer.source().empty()) std::cout << "source: " << answer.source() << "\n";
  if (answer.memory().hypothetical()) std::cout << "HYPOTHETICAL: weights not published\n";
  std::cout << (answer.fits() ? value : "nothing fits") << "\n";
  std::cout << "binding constraint: " << answer.binding_constraint() << "\n";
  if (answer.plan().fits()) {
    std::cout << "plan: " << answer.plan().cards() << " card(s), "
              << Gib(static_cast<double>(answer.plan().required_bytes_per_card()), 2)
              << " GiB per card of " << Gib(static_cast<double>(answer.available_bytes()), 2)
              << " GiB usable\n";
  }
  if (answer.plan().fits() && answer.plan().has_offload()) {
    const v1::OffloadPlacement& o = answer.plan().offload();
    std::cout << "layout: " << answer.plan().layout() << "; host memory "
              << Gib(static_cast<double>(answer.host_required_bytes()), 2) << " GiB of "
              << Gib(static_cast<double>(answer.host_available_bytes()), 2) << " GiB usable on "
              << o.host_display_name() << "\n";
  }
  for (const std::string& line : answer.arithmetic()) std::cout << "  " << line << "\n";
  std::cout << "workload at the answer: " << answer.memory().workload().statement() << "\n";
  for (const std::string& warning : answer.warnings()) std::cout << "note: " << warning << "\n";
  return EXIT_SUCCESS;
}

int MaxContext(Session& session, const Arguments& args) {
  v1::FindMaxContextRequest request;
  if (absl::Status filled = FillCommon(args, &request); !filled.ok()) {
    return UsageError(filled.message());
  }
  if (request.workload().context_length_tokens() != 0) {
    return UsageError("--context is what max-context answers; leave it out");
  }
  request.set_kv_block_size_tokens(absl::GetFlag(FLAGS_block_size));
  v1::InverseAnswer answer;
  auto context = Session::NewContext();
  const grpc::Status status = session.estimator().FindMaxContext(context.get(), request, &answer);
  return Print(
      session, status, answer,
      absl::StrCat("largest context: ", answer.max_context_length_tokens(), " tokens (",
                   answer.max_context_length_tokens() / std::max(1, answer.kv_block_size_tokens()),
                   " KV blocks of ", answer.kv_block_size_tokens(), " tokens)"));
}

int MaxBatch(Session& session, const Arguments& args) {
  v1::FindMaxBatchRequest request;
  if (absl::Status filled = FillCommon(args, &request); !filled.ok()) {
    return UsageError(filled.message());
  }
  request.mutable_workload()->clear_batch_size();  // the answer (--batch defaults to 1)
  request.set_kv_block_size_tokens(absl::GetFlag(FLAGS_block_size));
  v1::InverseAnswer answer;
  auto context = Session::NewContext();
  const grpc::Status status = session.estimator().FindMaxBatch(context.get(), request, &answer);
  return Print(session, status, answer,
               absl::StrCat("largest batch: ", answer.max_batch_size(), " concurrent sequences"));
}

int BestFormat(Session& session, const Arguments& args) {
  v1::FindBestWeightFormatRequest request;
  if (absl::Status filled = FillCommon(args, &request); !filled.ok()) {
    return UsageError(filled.message());
  }
  request.mutable_workload()->clear_weight_format();  // the answer (--weights defaults to bf16)
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_prefer), ',', absl::SkipWhitespace())) {
    const auto format = NumberFormats().ParseFlag("prefer", absl::StripAsciiWhitespace(name));
    if (!format.ok()) return UsageError(format.status().message());
    request.add_preferred_formats(*format);
  }
  v1::InverseAnswer answer;
  auto context = Session::NewContext();
  const grpc::Status status =
      session.estimator().FindBestWeightFormat(context.get(), request, &answer);
  return Print(
      session, status, answer,
      absl::StrCat("best weight format: ", NumberFormats().Spelling(answer.weight_format())));
}

}  // namespace

CommandGroup LimitCommands() {
  std::vector<absl::string_view> flags = {"hardware",     "cards",          "budget_bytes",
                                          "kv_cache",     "overhead_bytes", "group_size",
                                          "hypothetical", "offload",        "offload_host"};
  flags.insert(flags.end(), ModelSourceFlags().begin(), ModelSourceFlags().end());
  auto with = [&](std::vector<absl::string_view> more) {
    std::vector<absl::string_view> all = flags;
    all.insert(all.end(), more.begin(), more.end());
    return all;
  };
  return {
      "Limits (the inverse questions: what fits on these cards or in this memory)",
      {
          {{"max-context"},
           "[MODEL]",
           "the largest context that fits, in whole KV blocks, and what binds it",
           with({"weights", "batch", "block_size"}),
           "max-context \"Llama 3.1 70B\" --hardware=\"RTX 4090\" --weights=gguf-q4_k_m "
           "--offload=auto --offload_host=\"desktop DDR5-6000\"",
           MaxContext},
          {{"max-batch"},
           "[MODEL]",
           "the most concurrent sequences that fit at --context, and what binds it",
           with({"weights", "context", "block_size"}),
           "max-batch \"Llama 3.1 8B\" --hardware=\"NVIDIA L4\" --context=32768",
           MaxBatch},
          {{"best-format"},
           "[MODEL]",
           "the highest-precision weight format that fits (or the first of --prefer)",
           with({"context", "batch", "prefer"}),
           "best-format \"Llama 3.1 70B\" --hardware=\"NVIDIA H100\" --prefer=bf16,fp8,awq-int4",
           BestFormat},
      }};
}

}  // namespace modelatlas::cli
