// Running a model: estimate memory, plan, count, runnable and card.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/card.h"
#include "cli/command.h"
#include "cli/enum_spellings.h"
#include "cli/model_source.h"
#include "cli/output.h"
#include "cli/workload.h"

ABSL_FLAG(std::string, weights, "",
          modelatlas::cli::EnumFlagHelp("Weight format (unset: the format of the model's published "
                                        "checkpoint where the record or config.json names a "
                                        "quantized one, such as gpt-oss's mxfp4 or an AWQ "
                                        "repository's awq-int4; else bf16; the answer says which)",
                                        modelatlas::cli::NumberFormats()));
ABSL_FLAG(std::string, kv_cache, "bf16",
          modelatlas::cli::EnumFlagHelp("KV-cache format", modelatlas::cli::NumberFormats()));
ABSL_FLAG(int64_t, context, 0,
          "Tokens in the KV cache per sequence (0 = 4096, capped at the model's maximum)");
ABSL_FLAG(int32_t, batch, 1, "Sequences served at once");
ABSL_FLAG(std::optional<int64_t>, overhead_bytes, std::nullopt,
          "Runtime overhead, bytes (default: the estimator's, 1 GiB)");
ABSL_FLAG(int32_t, group_size, 0, "GPTQ/AWQ quantization group size (0 = 128)");
ABSL_FLAG(std::optional<int32_t>, images, std::nullopt,
          "Images per sequence in a cross-attention cache (Llama 3.2 Vision), 0 to 1000 "
          "(default: the estimator's, 1); other models take an image as context tokens");
ABSL_FLAG(bool, hypothetical, false,
          "Estimate even when the weights are not published (the answer says so)");
ABSL_FLAG(std::string, objective, "fewest-cards",
          modelatlas::cli::EnumFlagHelp("plan: rank by", modelatlas::cli::PlanObjectives()));
ABSL_FLAG(std::string, order, "best-fit",
          modelatlas::cli::EnumFlagHelp("runnable: rows by", modelatlas::cli::RunnableOrders()));
ABSL_FLAG(std::string, offload, "none",
          modelatlas::cli::EnumFlagHelp(
              "plan, max-context, max-batch, best-format: keep part of the model in host "
              "memory when the cards alone do not hold it (needs --offload_host)",
              modelatlas::cli::OffloadModes()));
ABSL_FLAG(std::string, offload_host, "",
          "plan, max-context, max-batch, best-format: the host whose memory takes what the "
          "cards do not hold, a hardware record "
          "(e.g. hardware/host-2x-amd-epyc-9004-ddr5-4800, \"Desktop, dual-channel DDR5-6000\"); "
          "no host is assumed");
ABSL_FLAG(int64_t, prompt, 1000, "plan: prompt tokens for the time to first token");
ABSL_FLAG(int32_t, max_cards, 64,
          "plan: most cards to consider, 1 to 1024 (tensor parallel within a node, pipeline "
          "stages across)");
ABSL_FLAG(int32_t, cards, 1,
          "runnable: cards of the hardware (a power of two); max-context, max-batch, "
          "best-format: at most this many cards, 1 to 1024");
ABSL_FLAG(std::string, runtime, "",
          modelatlas::cli::EnumFlagHelp(
              "plan: also check the plan under this serving engine's own memory rules and give "
              "its launch command (empty = the plan's own fit only)",
              modelatlas::cli::Runtimes()));
ABSL_FLAG(std::string, split_cards, "",
          "plan: llama.cpp's layer split (-ts) over these cards, comma-separated in device "
          "order, names may repeat (e.g. \"RTX 4090,RTX 3090,RTX 3060 12GB\"); plans only "
          "those kinds unless --hardware names others");
ABSL_FLAG(bool, newer_models, false,
          "plan: also list newer open-weight models of about the same size that fit the same "
          "card at the same workload (card always lists them)");
ABSL_DECLARE_FLAG(std::optional<double>, price);  // commands/training_compute.cc

namespace modelatlas::cli {
namespace {

// A closed-weights answer says how to ask for the hypothetical one.
std::string HypotheticalHint(absl::string_view reason) {
  if (!absl::StrContains(reason, "weights not published")) return "";
  return "(to see what it would take if they were published, ask again with --hypothetical)\n";
}

namespace v1 = estimator::v1;

// The plan's own flags (the workload's are cli/workload.h's).
absl::Status FillPlan(v1::PlanInferenceRequest* request) {
  const auto objective = PlanObjectives().ParseFlag("objective", absl::GetFlag(FLAGS_objective));
  if (!objective.ok()) return objective.status();
  request->set_objective(*objective);
  request->set_max_cards(absl::GetFlag(FLAGS_max_cards));
  if (const std::string runtime = absl::GetFlag(FLAGS_runtime); !runtime.empty()) {
    const auto parsed = Runtimes().ParseFlag("runtime", runtime);
    if (!parsed.ok()) return parsed.status();
    request->set_runtime(*parsed);
  }
  request->set_newer_models(absl::GetFlag(FLAGS_newer_models));
  const auto offload = OffloadModes().ParseFlag("offload", absl::GetFlag(FLAGS_offload));
  if (!offload.ok()) return offload.status();
  request->set_offload(*offload);
  request->set_offload_host(absl::GetFlag(FLAGS_offload_host));
  if (const std::optional<double> price = absl::GetFlag(FLAGS_price); price.has_value()) {
    request->set_price_usd_per_card_hour(*price);
  }
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_hardware), ',', absl::SkipWhitespace())) {
    request->add_hardware(std::string(absl::StripAsciiWhitespace(name)));
  }
  const bool hardware_named = request->hardware_size() > 0;
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_split_cards), ',', absl::SkipWhitespace())) {
    const std::string card(absl::StripAsciiWhitespace(name));
    request->add_split_cards(card);
    // The split's cards are read as the plan's hardware (each kind once).
    if (!hardware_named && std::find(request->hardware().begin(), request->hardware().end(),
                                     card) == request->hardware().end()) {
      request->add_hardware(card);
    }
  }
  return FillWorkload(request->mutable_workload());
}

// The LoRA adapters and the draft model served with the model.
template <typename Request>
absl::Status FillServing(Request* request) {
  absl::StatusOr<std::optional<v1::LoraAdapter>> lora = LoraFromFlags();
  if (!lora.ok()) return lora.status();
  if (lora->has_value()) *request->mutable_lora() = **lora;
  absl::StatusOr<std::optional<v1::ModelSource>> draft = DraftFromFlags();
  if (!draft.ok()) return draft.status();
  if (draft->has_value()) *request->mutable_draft_model() = **draft;
  return absl::OkStatus();
}

// A bar per component, each against the total (text output only).
void PrintComponentBars(const v1::EstimateInferenceMemoryResponse& memory) {
  if (memory.total_bytes() <= 0) return;
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : memory.lines()) {
    const double share =
        static_cast<double>(line.bytes()) / static_cast<double>(memory.total_bytes());
    rows.push_back({line.component(),
                    MemoryBar({{'#', line.component(), static_cast<double>(line.bytes())}},
                              static_cast<double>(memory.total_bytes()), 40),
                    absl::StrCat(Fixed(100 * share, 1), "%"),
                    absl::StrCat(Gib(static_cast<double>(line.bytes()), 2), " GiB")});
  }
  std::cout << "\nshare of the total:\n";
  PrintTable({"COMPONENT", "SHARE OF TOTAL", "%", "GiB"}, rows);
}

int EstimateMemory(Session& session, const Arguments& args) {
  v1::EstimateInferenceMemoryRequest request;
  absl::StatusOr<v1::ModelSource> source = ModelSourceFromFlags(args);
  if (!source.ok()) return UsageError(source.status().message());
  *request.mutable_source() = *std::move(source);
  if (absl::Status served = FillServing(&request); !served.ok()) {
    return UsageError(served.message());
  }
  request.set_hypothetical(absl::GetFlag(FLAGS_hypothetical));
  if (absl::Status filled = FillWorkload(request.mutable_workload()); !filled.ok()) {
    return UsageError(filled.message());
  }
  v1::EstimateInferenceMemoryResponse response;
  auto context = Session::NewContext();
  grpc::Status status =
      session.estimator().EstimateInferenceMemory(context.get(), request, &response);
  if (!status.ok()) return session.EstimatorFailed(status);
  if (session.json()) {
    PrintJson(response);
    return EXIT_SUCCESS;
  }
  std::cout << response.display_name();
  if (!response.model().empty()) std::cout << " (" << response.model() << ")";
  std::cout << "\n";
  if (!response.workload().statement().empty()) {
    std::cout << "workload: " << response.workload().statement() << "\n";
  }
  if (!response.source().empty()) std::cout << "source: " << response.source() << "\n";
  if (!response.available()) {
    std::cout << response.no_estimate_reason() << "\n"
              << HypotheticalHint(response.no_estimate_reason());
    return EXIT_SUCCESS;
  }
  if (response.hypothetical()) std::cout << "HYPOTHETICAL: weights not published\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : response.lines()) {
    rows.push_back(BytesRow(line.component(), line.bytes(), line.arithmetic()));
  }
  rows.push_back({"total", absl::StrCat(response.total_bytes()), Fixed(response.total_gib(), 2),
                  DecimalGbNote(response.total_gb())});
  PrintTable(kBytesHeader, rows);
  PrintComponentBars(response);
  for (const auto& warning : response.warnings()) std::cout << "note: " << warning << "\n";
  return EXIT_SUCCESS;
}

// A bar per card: the model's parts on one card against its usable memory
// (text output only), for the best kMaxPlanBars plans.
constexpr int kMaxPlanBars = 10;
void PrintPlanBars(const v1::PlanInferenceResponse& response) {
  std::vector<std::vector<std::string>> rows;
  std::vector<BarPart> legend;
  int shown = 0;
  for (const auto& plan : response.plans()) {
    if (plan.usable_bytes_per_card() <= 0) continue;
    if (++shown > kMaxPlanBars) break;
    std::vector<BarPart> parts = {
        {'W', "weights", static_cast<double>(plan.weight_bytes_per_card())},
        {'K', "KV cache", static_cast<double>(plan.kv_cache_bytes_per_card())},
        {'A', "activations", static_cast<double>(plan.activation_bytes_per_card())},
        {'O', "overhead", static_cast<double>(plan.overhead_bytes_per_card())}};
    if (legend.empty()) legend = parts;
    rows.push_back(
        {plan.hardware(), plan.fits() ? absl::StrCat("x", plan.cards()) : "x1, no fit",
         MemoryBar(parts, static_cast<double>(plan.usable_bytes_per_card()), 40),
         absl::StrCat(Gib(static_cast<double>(plan.required_bytes_per_card()), 1), " of ",
                      Gib(static_cast<double>(plan.usable_bytes_per_card()), 1), " GiB")});
  }
  if (rows.empty()) return;
  std::cout << "\nmemory per card against its usable memory (" << MemoryBarLegend(legend)
            << "; '>' = over";
  if (shown > kMaxPlanBars) std::cout << "; the first " << kMaxPlanBars << " plans";
  std::cout << "):\n";
  PrintTable({"HARDWARE", "CARDS", "PER CARD", "USED OF USABLE"}, rows);
}

// The best fitting plans under the request's runtime (text output only):
// what it reserves per card, the KV cache it leaves, the launch command.
constexpr int kMaxRuntimePlans = 3;
void PrintRuntimeFits(const v1::PlanInferenceResponse& response) {
  int shown = 0;
  for (const auto& plan : response.plans()) {
    if (!plan.has_runtime_fit() || !plan.fits()) continue;
    if (++shown > kMaxRuntimePlans) break;
    const v1::RuntimeFit& fit = plan.runtime_fit();
    std::cout << "\n"
              << fit.runtime_version() << " on " << plan.cards() << " x " << plan.hardware() << ": "
              << (fit.fits() ? "fits" : "does NOT fit") << " (" << fit.reason() << ")\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : fit.reserved()) {
      rows.push_back({r.component(), Gib(static_cast<double>(r.bytes()), 2), r.arithmetic()});
    }
    PrintTable({"PER CARD", "GiB", "ARITHMETIC"}, rows);
    if (fit.has_kv_cache_blocks()) {
      std::cout << "KV cache: " << fit.kv_cache_blocks() << " blocks of " << fit.block_size_tokens()
                << " tokens";
      if (fit.kv_cache_groups() > 1) {
        std::cout << " over " << fit.kv_cache_groups() << " layer groups";
      }
      std::cout << " = " << fit.kv_cache_tokens() << " tokens; maximum concurrency for "
                << fit.max_model_len_tokens()
                << " tokens per request: " << Fixed(fit.max_concurrency(), 2) << "x\n";
    } else {
      std::cout << "KV cache: " << fit.kv_cache_tokens() << " tokens";
      if (fit.has_max_concurrency()) {
        std::cout << " (" << Fixed(fit.max_concurrency(), 2) << " sequences of "
                  << fit.max_model_len_tokens() << " tokens)";
      }
      std::cout << "\n";
    }
    if (!fit.launch_command().empty()) {
      std::cout << "launch: " << fit.launch_command() << "\n";
      for (const auto& node : fit.node_commands()) std::cout << "  on " << node << "\n";
    }
    for (const auto& note : fit.notes()) std::cout << "note: " << note << "\n";
  }
  if (shown > 0) {
    std::cout << "(the defaults are those of the version named; --json gives the source file of "
                 "each)\n";
  }
}

// llama.cpp's layer split over the cards named (text output only).
void PrintLayerSplit(const v1::PlanInferenceResponse& response) {
  if (!response.has_layer_split()) return;
  const v1::LayerSplitPlan& split = response.layer_split();
  std::cout << "\nllama.cpp layer split: " << (split.fits() ? "fits" : split.reason()) << "\n";
  for (const v1::LayerSplitCard& card : split.cards()) {
    std::cout << "  " << card.display_name() << ": " << card.layers() << " layers"
              << (card.output_layer() ? " + output" : "") << ", "
              << Fixed(static_cast<double>(card.required_bytes()) / 1073741824.0, 2) << " of "
              << Fixed(static_cast<double>(card.usable_bytes()) / 1073741824.0, 2)
              << " GiB usable (-ts " << Fixed(card.tensor_split_share(), 1) << ")\n";
    if (!card.decode_bound_doubtful().empty()) {
      std::cout << "    note: " << card.decode_bound_doubtful() << "\n";
    }
  }
  if (split.has_decode_tokens_per_second()) {
    std::cout << "  decode bound: " << Fixed(split.decode_tokens_per_second(), 1)
              << " tokens/s per sequence\n";
  }
  if (!split.launch_command().empty()) std::cout << "  launch: " << split.launch_command() << "\n";
  for (const std::string& line : split.arithmetic()) std::cout << "  " << line << "\n";
}

// The plan's newer models of the same size (text output only).
void PrintNewerModels(const v1::PlanInferenceResponse& response) {
  if (!response.has_newer_models()) return;
  const v1::NewerModels& newer = response.newer_models();
  std::cout << "\nnewer models of the same size: ";
  if (!newer.not_selected_reason().empty()) {
    std::cout << "none selected (" << newer.not_selected_reason() << ")\n";
    return;
  }
  std::cout << newer.selection() << "\n";
  if (newer.models().empty()) {
    std::cout << "none on record\n";
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : newer.models()) {
    // A row without an architecture on record counts no KV cache: say so.
    rows.push_back({m.model(), HumanCount(m.parameters()), absl::StrCat(m.cards()),
                    Gib(static_cast<double>(m.required_bytes_per_card()), 1),
                    m.kv_cache_not_counted() ? "not counted" : "counted"});
  }
  PrintTable({"MODEL", "PARAMETERS", "CARDS", "GiB/CARD", "KV CACHE"}, rows);
}

// Where the plans that offload keep the model: cards and host memory, for
// the best kMaxPlanBars of them.
void PrintOffload(const v1::PlanInferenceResponse& response) {
  int shown = 0;
  for (const auto& plan : response.plans()) {
    if (!plan.has_offload() || !plan.fits()) continue;
    if (++shown > kMaxPlanBars) break;
    const v1::OffloadPlacement& o = plan.offload();
    std::cout << "offload on " << plan.hardware() << ": ";
    if (o.mode() == v1::OFFLOAD_MODE_EXPERTS) {
      std::cout << "the experts of " << o.expert_layers_in_host() << " of " << o.moe_layers()
                << " MoE layers in host memory (llama.cpp --n-cpu-moe " << o.expert_layers_in_host()
                << ")";
    } else {
      std::cout << o.layers_on_cards() << " layers on the cards, " << o.layers_in_host()
                << " in host memory (llama.cpp -ngl " << o.layers_on_cards() << ")";
    }
    std::cout << "; host " << o.host_display_name() << ": "
              << Gib(static_cast<double>(o.host_required_bytes()), 1) << " of "
              << Gib(static_cast<double>(o.host_usable_bytes()), 1) << " GiB, "
              << Fixed(o.host_bandwidth_bytes_per_second() / 1e9, 1) << " GB/s\n";
  }
}

int Plan(Session& session, const Arguments& args) {
  if (args.size() == 1 && args[0] == "training" && AnyModelSourceFlag()) {
    return PlanTrainingFromSourceFlags(session);
  }
  v1::PlanInferenceRequest request;
  absl::StatusOr<v1::ModelSource> source = ModelSourceFromFlags(args);
  if (!source.ok()) return UsageError(source.status().message());
  *request.mutable_source() = *std::move(source);
  if (absl::Status served = FillServing(&request); !served.ok()) {
    return UsageError(served.message());
  }
  request.set_hypothetical(absl::GetFlag(FLAGS_hypothetical));
  if (absl::Status filled = FillPlan(&request); !filled.ok()) {
    return UsageError(filled.message());
  }
  v1::PlanInferenceResponse response;
  auto context = Session::NewContext();
  grpc::Status status = session.estimator().PlanInference(context.get(), request, &response);
  if (!status.ok()) return session.EstimatorFailed(status);
  if (session.json()) {
    PrintJson(response);
    return EXIT_SUCCESS;
  }
  const auto& memory = response.memory();
  std::cout << memory.display_name() << ": " << Fixed(memory.total_gib(), 2) << " GiB to run ("
            << memory.total_bytes() << " bytes)\n";
  if (!memory.workload().statement().empty()) {
    std::cout << "workload: " << memory.workload().statement() << "\n";
  }
  if (!memory.source().empty()) std::cout << "source: " << memory.source() << "\n";
  if (!memory.available()) {
    std::cout << memory.no_estimate_reason() << "\n"
              << HypotheticalHint(memory.no_estimate_reason());
    return EXIT_SUCCESS;
  }
  // Above the table: a fit that leaves something out (the KV cache of a
  // model with no architecture on record) is read with its caveat.
  for (const auto& warning : memory.warnings()) std::cout << "note: " << warning << "\n";
  const int32_t batch = memory.workload().workload().batch_size();
  const bool price_given = absl::GetFlag(FLAGS_price).has_value();
  int without_price = 0;
  std::vector<std::vector<std::string>> rows;
  int doubtful = 0;
  for (const auto& plan : response.plans()) {
    // A figure resting on a doubtful bandwidth says so where it is read.
    const bool plan_doubtful = !plan.decode_bound_doubtful().empty();
    if (plan_doubtful && plan.fits()) ++doubtful;
    const auto resting = [plan_doubtful](std::string figure) {
      return plan_doubtful && figure != "-" ? figure + " (doubtful)" : figure;
    };
    std::string price = "no price on record";
    switch (plan.price_source()) {
      case v1::PRICE_SOURCE_RECORD:
        price = absl::StrCat(Fixed(plan.price_usd_per_card_hour(), 2), " (",
                             PriceSources().Spelling(plan.price_source()), ")");
        break;
      case v1::PRICE_SOURCE_REQUEST:
        price = absl::StrCat(Fixed(plan.price_usd_per_card_hour(), 2), " (--price)");
        break;
      default:
        ++without_price;
        break;
    }
    rows.push_back(
        {plan.hardware(),
         plan.fits() ? absl::StrCat(plan.cards(), plan.has_offload() ? " + host" : "") : "no fit",
         Gib(static_cast<double>(plan.required_bytes_per_card()), 1),
         Gib(static_cast<double>(plan.headroom_bytes_per_card()), 1),
         plan.speed_not_modelled().empty()
             ? resting(OptionalFixed(plan.has_decode_tokens_per_second(),
                                     plan.decode_tokens_per_second(), 0))
             : "not modelled (on-chip SRAM)",
         resting(OptionalFixed(plan.has_decode_tokens_per_second_batch(),
                               plan.decode_tokens_per_second_batch(), 0)),
         OptionalFixed(plan.has_prefill_tokens_per_second(), plan.prefill_tokens_per_second(), 0),
         OptionalFixed(plan.has_time_to_first_token_seconds(), plan.time_to_first_token_seconds(),
                       3),
         price,
         resting(OptionalFixed(plan.has_cost_usd_per_million_tokens(),
                               plan.cost_usd_per_million_tokens(), 2)),
         plan.fits() ? plan.layout() : ""});
  }
  PrintTable({"HARDWARE", "CARDS", "GiB/CARD", "HEADROOM GiB", "DECODE tok/s PER SEQUENCE",
              absl::StrCat("DECODE tok/s BATCH OF ", batch), "PREFILL tok/s", "TTFT s",
              "PRICE $/CARD-h", "$/M tokens", "LAYOUT"},
             rows);
  std::cout << "(bounds: decode from memory bandwidth plus the interconnect (all-reduces, "
               "pipeline hops), per sequence and for the batch of "
            << batch
            << " sequences, at most the compute roof; prefill from peak compute x the prefill "
               "efficiency; --json shows the arithmetic)\n";
  if (doubtful > 0) {
    std::cout << "doubtful: " << doubtful << " of the fitting plans rest on a bandwidth on record "
              << "that reads the whole memory more often than any DRAM device on record (a "
                 "figure probably wrong on its record): their decode and cost figures are marked "
                 "and ranked after the credible ones (--json: decode_bound_doubtful)\n";
  }
  // Fits are decided on what a process can allocate, not the marketed
  // capacity; say so, and name the cards whose figure is a rule's.
  int assumed = 0;
  for (const auto& plan : response.plans()) {
    if (plan.device_memory().allocatable_assumed()) ++assumed;
  }
  std::cout << "memory: fits use what one process can allocate (the driver's figure) x the memory "
               "utilization, not the marketed capacity";
  if (assumed > 0) {
    std::cout << "; " << assumed << " of " << response.plans_size()
              << " records have no driver figure, so it is derived by the rule for their kind of "
                 "memory, or of device for a TPU (--json: device_memory.allocatable_source)";
  }
  std::cout << "\n";
  if (price_given) {
    std::cout << "prices: $" << Fixed(*absl::GetFlag(FLAGS_price), 2)
              << " per card-hour from the command line (--price) for every card; cost per "
                 "million generated tokens = cards x price / (batch tok/s x 3600) x 1e6\n";
  } else {
    std::cout << "prices: each hardware record's cloud price per card-hour (record)";
    if (without_price > 0) {
      std::cout << "; " << without_price << " of " << response.plans_size()
                << " have no price on record, so no cost (give --price=USD per card-hour)";
    }
    std::cout << "\n";
  }
  PrintOffload(response);
  PrintPlanBars(response);
  PrintRuntimeFits(response);
  PrintLayerSplit(response);
  PrintNewerModels(response);
  return EXIT_SUCCESS;
}

int Runnable(Session& session, const Arguments& args) {
  v1::ListRunnableModelsRequest request;
  request.set_hardware(args[0]);
  request.set_cards(absl::GetFlag(FLAGS_cards));
  request.set_filter(absl::GetFlag(FLAGS_filter));
  request.set_hypothetical(absl::GetFlag(FLAGS_hypothetical));
  const auto order = RunnableOrders().ParseFlag("order", absl::GetFlag(FLAGS_order));
  if (!order.ok()) return UsageError(order.status().message());
  request.set_order(*order);
  if (absl::Status filled = FillWorkload(request.mutable_workload()); !filled.ok()) {
    return UsageError(filled.message());
  }
  auto context = Session::NewContext();
  auto reader = session.estimator().ListRunnableModels(context.get(), request);
  v1::ListRunnableModelsResponse message;
  std::vector<std::vector<std::string>> rows;
  int kv_not_counted = 0;
  int as_published = 0;
  std::string decode_bound_doubtful;
  std::optional<JsonListPrinter> json;
  if (session.json()) json.emplace(session.jsonl(), std::cout);
  while (reader->Read(&message)) {
    if (!message.decode_bound_doubtful().empty()) {
      decode_bound_doubtful = message.decode_bound_doubtful();
    }
    for (const v1::RunnableModel& model : message.models()) {
      if (json) {
        json->Add(model);
        continue;
      }
      const double required = static_cast<double>(model.required_bytes_per_card());
      const double usable = required + static_cast<double>(model.headroom_bytes_per_card());
      if (model.kv_cache_not_counted()) ++kv_not_counted;
      if (model.weight_format_from_checkpoint()) ++as_published;
      rows.push_back(
          {model.model(), HumanCount(model.parameters()), absl::StrCat(model.cards()),
           MemoryBar({{'#', "used", required}}, usable, 10),
           Gib(static_cast<double>(model.headroom_bytes_per_card()), 1),
           OptionalFixed(model.has_decode_tokens_per_second(), model.decode_tokens_per_second(), 0),
           absl::StrCat(NumberFormats().Spelling(model.weight_format()),
                        model.weight_format_from_checkpoint() ? " (as published)" : ""),
           model.kv_cache_not_counted() ? "not counted" : "counted"});
    }
  }
  grpc::Status status = reader->Finish();
  if (json) json->Finish();
  if (!status.ok()) return session.EstimatorFailed(status);
  if (!session.json()) {
    PrintTable({"MODEL", "PARAMETERS", "CARDS", "CARD USE", "HEADROOM GiB",
                "DECODE tok/s PER SEQUENCE", "WEIGHTS", "KV CACHE"},
               rows);
    std::cout << rows.size() << " models run on " << args[0] << "\n";
    if (as_published > 0) {
      std::cout << as_published
                << " of them are sized in their published checkpoint's quantized format (no "
                   "--weights given): \"as published\"\n";
    }
    if (kv_not_counted > 0) {
      std::cout << kv_not_counted
                << " of them have no architecture on record: KV cache not counted (weights and "
                   "overhead only), so they may not fit at this context\n";
    }
    if (!decode_bound_doubtful.empty()) std::cout << "note: " << decode_bound_doubtful << "\n";
  }
  return EXIT_SUCCESS;
}

// The card of a model from a Hub id, a file or a config.json: what the
// estimator read (name, parameters, where they came from) and the hardware
// it needs; the catalog's other fields do not exist for it.
int CardFromSource(Session& session, const Arguments& args) {
  absl::StatusOr<v1::ModelSource> source = ModelSourceFromFlags(args);
  if (!source.ok()) return UsageError(source.status().message());
  v1::PlanInferenceRequest request;
  *request.mutable_source() = *std::move(source);
  request.set_hypothetical(absl::GetFlag(FLAGS_hypothetical));
  if (absl::Status filled = FillWorkload(request.mutable_workload()); !filled.ok()) {
    return UsageError(filled.message());
  }
  v1::PlanInferenceResponse plan;
  auto context = Session::NewContext();
  grpc::Status status = session.estimator().PlanInference(context.get(), request, &plan);
  if (!status.ok()) return session.EstimatorFailed(status);
  common::v1::Model model;
  model.set_display_name(plan.memory().display_name());
  if (plan.memory().parameters() > 0) model.set_parameters(plan.memory().parameters());
  model.set_parameters_notes(absl::StrCat("source: ", plan.memory().source()));
  PrintCard(model, &plan, std::cout);
  return EXIT_SUCCESS;
}

int Card(Session& session, const Arguments& args) {
  if (args.empty() || AnyModelSourceFlag()) return CardFromSource(session, args);
  catalog::v1::GetModelRequest get;
  get.set_name(args[0]);
  common::v1::Model model;
  {
    auto context = Session::NewContext();
    grpc::Status status = session.catalog().GetModel(context.get(), get, &model);
    if (!status.ok()) return session.CatalogFailed(status);
  }
  v1::PlanInferenceRequest request;  // the workload flags only, every hardware record
  request.set_model(model.name());
  // The card lists the newer models of the same size (the web's model page
  // shows the same selection).
  request.set_newer_models(true);
  request.set_hypothetical(absl::GetFlag(FLAGS_hypothetical));
  if (absl::Status filled = FillWorkload(request.mutable_workload()); !filled.ok()) {
    return UsageError(filled.message());
  }
  v1::PlanInferenceResponse plan;
  auto context = Session::NewContext();
  grpc::Status status = session.estimator().PlanInference(context.get(), request, &plan);
  const bool planned = status.ok();
  if (!planned && status.error_code() != grpc::StatusCode::FAILED_PRECONDITION) {
    return session.EstimatorFailed(status);
  }
  PrintCard(model, planned ? &plan : nullptr, std::cout);
  if (planned && !session.json()) PrintNewerModels(plan);
  return EXIT_SUCCESS;
}

int Count(Session& session, const Arguments& args) {
  v1::CountParametersRequest request;
  absl::StatusOr<v1::ModelSource> source = ModelSourceFromFlags(args);
  if (!source.ok()) return UsageError(source.status().message());
  *request.mutable_model_source() = *std::move(source);
  v1::CountParametersResponse response;
  auto context = Session::NewContext();
  grpc::Status status = session.estimator().CountParameters(context.get(), request, &response);
  if (!status.ok()) return session.EstimatorFailed(status);
  if (session.json()) {
    PrintJson(response);
    return EXIT_SUCCESS;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& part : response.components()) {
    rows.push_back({part.name(), Fixed(part.parameters(), 0), part.arithmetic()});
  }
  rows.push_back({"total", Fixed(response.total_parameters(), 0), ""});
  rows.push_back({"active per token", Fixed(response.active_parameters(), 0), ""});
  if (response.has_multi_token_prediction_parameters()) {
    const double mtp = response.multi_token_prediction_parameters();
    const std::string layers = absl::StrCat(response.architecture().num_mtp_layers());
    rows.push_back({"multi-token prediction", Fixed(mtp, 0),
                    absl::StrCat(layers,
                                 " layer(s) the checkpoint stores beside the model; not in "
                                 "the total")});
    rows.push_back({"checkpoint", Fixed(response.total_parameters() + mtp, 0),
                    "total + multi-token prediction (before any quantization scales)"});
  }
  if (response.has_tensor_parameters()) {
    rows.push_back({"in the file's tensors", Fixed(response.tensor_parameters(), 0), ""});
  }
  if (!response.source().empty()) std::cout << "source: " << response.source() << "\n";
  PrintTable({"COMPONENT", "PARAMETERS", "ARITHMETIC"}, rows);
  return EXIT_SUCCESS;
}

}  // namespace

CommandGroup InferenceCommands() {
  const std::vector<absl::string_view> workload = {
      "weights", "kv_cache", "context", "batch", "group_size", "overhead_bytes", "hypothetical"};
  std::vector<absl::string_view> sourced = workload;
  sourced.insert(sourced.end(), ModelSourceFlags().begin(), ModelSourceFlags().end());
  std::vector<absl::string_view> card = sourced;  // a card has no serving extras
  sourced.insert(sourced.end(), ServingFlags().begin(), ServingFlags().end());
  auto with = [&](std::vector<absl::string_view> more, std::vector<absl::string_view> also = {}) {
    std::vector<absl::string_view> flags = workload;
    flags.insert(flags.end(), more.begin(), more.end());
    flags.insert(flags.end(), also.begin(), also.end());
    return flags;
  };
  return {
      "Inference (running a model)",
      {
          {{"estimate", "memory"},
           "[MODEL]",
           "memory to run MODEL (or --hf, --gguf, --safetensors, --hf_config), line by line",
           sourced,
           "estimate memory \"Llama 3.1 8B\" --context=8192 --weights=gptq-int4",
           EstimateMemory},
          {{"plan"},
           "[MODEL]",
           "which hardware runs MODEL (or --hf, --gguf, ...): cards, speed, cost",
           with({"hardware", "objective", "prompt", "max_cards", "price", "runtime", "newer_models",
                 "offload", "hf", "gguf", "mmproj", "safetensors", "hf_config", "lora_config",
                 "lora_adapters", "draft"},
                {"offload_host"}),
           "plan \"Mistral 7B\" --hardware=\"NVIDIA H100,NVIDIA T4\" --objective=cheapest "
           "--price=2.50; plan \"Llama 3.1 8B\" --hardware=\"NVIDIA L4\" --context=32768 "
           "--runtime=vllm",
           Plan},
          {{"count"},
           "[MODEL]",
           "parameter count with its breakdown (MODEL or --hf, --gguf, ...)",
           {"hf", "gguf", "mmproj", "safetensors", "hf_config"},
           "count \"GPT-2 (124M)\"",
           Count},
          {{"runnable"},
           "HARDWARE",
           "every catalog model that runs on HARDWARE",
           {"cards", "weights", "kv_cache", "context", "batch", "hypothetical", "filter", "order"},
           "runnable \"NVIDIA T4\" --context=4096 --filter='parameters < 2e9' "
           "--order=most-parameters",
           Runnable},
          {{"card"},
           "[MODEL]",
           "the model's page: every field with its notes, the hardware it needs (MODEL or "
           "--hf, --gguf, ...)",
           card,
           "card \"Mistral 7B\"",
           Card},
      }};
}

}  // namespace modelatlas::cli
