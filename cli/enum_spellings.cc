#include "cli/enum_spellings.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace modelatlas::cli {
namespace {

namespace catalog_v1 = catalog::v1;
namespace common_v1 = common::v1;
namespace estimator_v1 = estimator::v1;

// Lower case, '_' as '-': the form spellings are compared in.
std::string Normalized(absl::string_view text) {
  std::string out = absl::AsciiStrToLower(text);
  for (char& c : out) {
    if (c == '_') c = '-';
  }
  return out;
}

}  // namespace

EnumSpellings::EnumSpellings(const google::protobuf::EnumDescriptor* descriptor,
                             absl::string_view noun, std::vector<EnumSpelling> entries)
    : descriptor_(descriptor), noun_(noun), entries_(std::move(entries)) {}

std::optional<int> EnumSpellings::ParseNumber(absl::string_view text) const {
  const std::string wanted = Normalized(text);
  for (const EnumSpelling& entry : entries_) {
    if (Normalized(entry.spelling) == wanted) return entry.value;
  }
  return std::nullopt;
}

absl::string_view EnumSpellings::SpellingOf(int value) const {
  for (const EnumSpelling& entry : entries_) {
    if (entry.value == value) return entry.spelling;
  }
  return "";
}

std::string EnumSpellings::Accepted() const {
  std::vector<absl::string_view> spellings;
  for (const EnumSpelling& entry : entries_) {
    if (!entry.spelling.empty()) spellings.push_back(entry.spelling);
  }
  return absl::StrJoin(spellings, ", ");
}

std::string EnumSpellings::UnknownError(absl::string_view flag, absl::string_view text) const {
  return absl::StrCat("--", flag, ": unknown ", noun_, " \"", text, "\"; accepted: ", Accepted());
}

std::string EnumSpellings::Described(absl::string_view indent) const {
  size_t width = 0;
  for (const EnumSpelling& entry : entries_) width = std::max(width, entry.spelling.size());
  std::string out;
  for (const EnumSpelling& entry : entries_) {
    const absl::string_view shown = entry.spelling.empty() ? "(empty)" : entry.spelling;
    absl::StrAppend(&out, indent, absl::StrFormat("%-*s  ", std::max(width, size_t{7}), shown),
                    entry.description, "\n");
  }
  return out;
}

const Spellings<estimator_v1::NumberFormat>& NumberFormats() {
  static const auto* table = new Spellings<estimator_v1::NumberFormat>(
      "format",
      {
          {estimator_v1::NUMBER_FORMAT_FP32, "fp32", "32-bit float, 4 bytes per element"},
          {estimator_v1::NUMBER_FORMAT_FP16, "fp16", "16-bit float, 2 bytes per element"},
          {estimator_v1::NUMBER_FORMAT_BF16, "bf16", "bfloat16, 2 bytes per element"},
          {estimator_v1::NUMBER_FORMAT_FP8, "fp8", "8-bit float (E4M3/E5M2), 1 byte per element"},
          {estimator_v1::NUMBER_FORMAT_INT8, "int8", "8-bit integer, 1 byte per element"},
          {estimator_v1::NUMBER_FORMAT_INT4, "int4",
           "4-bit integer (W4A16): 4 + 16/group bits; 4 bits without an architecture"},
          {estimator_v1::NUMBER_FORMAT_GPTQ_INT4, "gptq-int4",
           "GPTQ 4-bit, fp16 scale + 4-bit zero per group: 4 + 20/group bits"},
          {estimator_v1::NUMBER_FORMAT_AWQ_INT4, "awq-int4", "AWQ 4-bit, stored like GPTQ"},
          {estimator_v1::NUMBER_FORMAT_GPTQ_INT8, "gptq-int8", "GPTQ 8-bit: 8 + 24/group bits"},
          {estimator_v1::NUMBER_FORMAT_NF4, "nf4", "bitsandbytes NF4: 4.5 bits per weight"},
          {estimator_v1::NUMBER_FORMAT_NF4_DOUBLE_QUANT, "nf4-double-quant",
           "NF4 with double quantization: about 4.127 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_Q2_K, "gguf-q2_k", "GGUF Q2_K: 2.625 bits per weight"},
          {estimator_v1::NUMBER_FORMAT_GGUF_Q3_K, "gguf-q3_k", "GGUF Q3_K: 3.4375 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_Q4_0, "gguf-q4_0", "GGUF Q4_0: 4.5 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_Q4_K, "gguf-q4_k", "GGUF Q4_K: 4.5 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_Q5_K, "gguf-q5_k", "GGUF Q5_K: 5.5 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_Q6_K, "gguf-q6_k", "GGUF Q6_K: 6.5625 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_Q8_0, "gguf-q8_0", "GGUF Q8_0: 8.5 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_Q3_K_M, "gguf-q3_k_m", "GGUF Q3_K_M mix: ~4.00 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_Q4_K_M, "gguf-q4_k_m", "GGUF Q4_K_M mix: ~4.89 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_Q5_K_M, "gguf-q5_k_m", "GGUF Q5_K_M mix: ~5.70 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_IQ2_XXS, "gguf-iq2_xxs",
           "GGUF IQ2_XXS: 2.0625 bits per weight"},
          {estimator_v1::NUMBER_FORMAT_GGUF_IQ2_XS, "gguf-iq2_xs", "GGUF IQ2_XS: 2.3125 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_IQ3_XXS, "gguf-iq3_xxs", "GGUF IQ3_XXS: 3.0625 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_IQ4_XS, "gguf-iq4_xs", "GGUF IQ4_XS: 4.25 bits"},
          {estimator_v1::NUMBER_FORMAT_GGUF_IQ4_NL, "gguf-iq4_nl", "GGUF IQ4_NL: 4.5 bits"},
          {estimator_v1::NUMBER_FORMAT_MXFP4, "mxfp4",
           "MXFP4: 4 bits + 8-bit scale / 32 = 4.25 bits"},
          {estimator_v1::NUMBER_FORMAT_NVFP4, "nvfp4", "NVFP4: 4 bits + fp8 scale / 16 = 4.5 bits"},
          {estimator_v1::NUMBER_FORMAT_FP8_BLOCK128, "fp8-block128",
           "FP8 with an fp32 scale per 128x128 block"},
      });
  return *table;
}

const Spellings<estimator_v1::PlanObjective>& PlanObjectives() {
  static const auto* table = new Spellings<estimator_v1::PlanObjective>(
      "objective",
      {
          {estimator_v1::PLAN_OBJECTIVE_FEWEST_CARDS, "fewest-cards",
           "fewest cards, then fastest (a speed on a doubtful bandwidth after the credible ones)"},
          {estimator_v1::PLAN_OBJECTIVE_CHEAPEST, "cheapest",
           "lowest cost per million tokens (a cost on a doubtful bandwidth after the credible "
           "ones)"},
          {estimator_v1::PLAN_OBJECTIVE_FASTEST, "fastest",
           "highest decode throughput (a speed on a doubtful bandwidth after the credible ones)"},
      });
  return *table;
}

const Spellings<estimator_v1::RunnableOrder>& RunnableOrders() {
  static const auto* table = new Spellings<estimator_v1::RunnableOrder>(
      "order", {
                   {estimator_v1::RUNNABLE_ORDER_BEST_FIT, "best-fit",
                    "fewest cards, then most headroom per card"},
                   {estimator_v1::RUNNABLE_ORDER_MOST_PARAMETERS, "most-parameters",
                    "the largest models first"},
                   {estimator_v1::RUNNABLE_ORDER_FASTEST, "fastest",
                    "highest decode bound per sequence first"},
               });
  return *table;
}

const Spellings<estimator_v1::Runtime>& Runtimes() {
  static const auto* table = new Spellings<estimator_v1::Runtime>(
      "runtime",
      {
          {estimator_v1::RUNTIME_VLLM, "vllm", "vLLM 0.11.x: vllm serve"},
          {estimator_v1::RUNTIME_SGLANG, "sglang", "SGLang 0.5.x: python -m sglang.launch_server"},
          {estimator_v1::RUNTIME_LLAMA_CPP, "llama.cpp", "llama.cpp: llama-server"},
      });
  return *table;
}

const Spellings<estimator_v1::OffloadMode>& OffloadModes() {
  static const auto* table = new Spellings<estimator_v1::OffloadMode>(
      "offload mode",
      {
          {estimator_v1::OFFLOAD_MODE_UNSPECIFIED, "none",
           "no offload: the model must fit on the cards"},
          {estimator_v1::OFFLOAD_MODE_AUTO, "auto",
           "experts for a mixture-of-experts model, layers otherwise"},
          {estimator_v1::OFFLOAD_MODE_LAYERS, "layers",
           "whole layers in host memory (llama.cpp -ngl N: N layers on the cards)"},
          {estimator_v1::OFFLOAD_MODE_EXPERTS, "experts",
           "the routed experts of the first N layers in host memory (llama.cpp --n-cpu-moe N)"},
      });
  return *table;
}

const Spellings<estimator_v1::PriceSource>& PriceSources() {
  static const auto* table = new Spellings<estimator_v1::PriceSource>(
      "price_source", {
                          {estimator_v1::PRICE_SOURCE_RECORD, "record",
                           "the hardware record's cloud price per chip-hour"},
                          {estimator_v1::PRICE_SOURCE_REQUEST, "request",
                           "the price the request gave (plan --price), for every card"},
                      });
  return *table;
}

const Spellings<estimator_v1::Optimizer>& Optimizers() {
  static const auto* table = new Spellings<estimator_v1::Optimizer>(
      "optimizer",
      {
          {estimator_v1::OPTIMIZER_ADAMW, "adamw", "AdamW, mixed precision: 12 bytes/parameter"},
          {estimator_v1::OPTIMIZER_SGD_MOMENTUM, "sgd", "SGD with momentum: 8 bytes/parameter"},
          {estimator_v1::OPTIMIZER_ADAFACTOR, "adafactor", "Adafactor: about 4 bytes/parameter"},
          {estimator_v1::OPTIMIZER_ADAMW_8BIT, "adamw8bit", "8-bit AdamW: 6 bytes/parameter"},
      });
  return *table;
}

const Spellings<estimator_v1::Recompute>& Recomputes() {
  static const auto* table = new Spellings<estimator_v1::Recompute>(
      "recompute", {
                       {estimator_v1::RECOMPUTE_NONE, "none", "keep every activation"},
                       {estimator_v1::RECOMPUTE_SELECTIVE, "selective",
                        "recompute attention's softmax and dropout"},
                       {estimator_v1::RECOMPUTE_FULL, "full", "keep only each layer's input"},
                   });
  return *table;
}

const Spellings<estimator_v1::TrainingFramework>& TrainingFrameworks() {
  static const auto* table = new Spellings<estimator_v1::TrainingFramework>(
      "training framework",
      {
          {estimator_v1::TRAINING_FRAMEWORK_UNSPECIFIED, "",
           "the framework whose default the settings match (Megatron-LM for ZeRO 0/1, DeepSpeed "
           "for ZeRO 2/3)"},
          {estimator_v1::TRAINING_FRAMEWORK_IDEALIZED, "idealized",
           "the ZeRO paper's 16 bytes per parameter, Korthikanti et al.'s activations"},
          {estimator_v1::TRAINING_FRAMEWORK_DEEPSPEED, "deepspeed",
           "DeepSpeed's ZeRO-2/3 estimators, transformers activations"},
          {estimator_v1::TRAINING_FRAMEWORK_FSDP, "fsdp",
           "PyTorch FSDP, bf16 mixed precision (--zero 0/2/3 = NO_SHARD/SHARD_GRAD_OP/FULL_SHARD)"},
          {estimator_v1::TRAINING_FRAMEWORK_MEGATRON, "megatron",
           "Megatron-LM: 18 bytes per parameter, 6 + 12/d with --zero=1 (distributed optimizer)"},
      });
  return *table;
}

const Spellings<estimator_v1::TrainingLoss>& TrainingLosses() {
  static const auto* table = new Spellings<estimator_v1::TrainingLoss>(
      "training loss",
      {
          {estimator_v1::TRAINING_LOSS_UNSPECIFIED, "",
           "transformers' stock loss (DeepSpeed, FSDP): 12 bytes per token and vocabulary entry"},
          {estimator_v1::TRAINING_LOSS_TRANSFORMERS, "transformers",
           "transformers' ForCausalLMLoss, named"},
          {estimator_v1::TRAINING_LOSS_CHUNKED, "chunked",
           "torchtune's CEWithChunkedOutputLoss, 8 chunks, eager: 6.5 bytes per token and "
           "vocabulary entry"},
          {estimator_v1::TRAINING_LOSS_LIGER, "liger",
           "Liger-Kernel's fused linear cross entropy: one token chunk's logits at a time"},
      });
  return *table;
}

const Spellings<estimator_v1::FineTuning>& FineTunings() {
  static const auto* table = new Spellings<estimator_v1::FineTuning>(
      "fine-tuning", {
                         {estimator_v1::FINE_TUNING_FULL, "full", "train every parameter"},
                         {estimator_v1::FINE_TUNING_LORA, "lora", "LoRA on frozen bf16 weights"},
                         {estimator_v1::FINE_TUNING_QLORA, "qlora", "LoRA on frozen NF4 weights"},
                     });
  return *table;
}

const Spellings<estimator_v1::AuditVerdict>& AuditVerdicts() {
  static const auto* table = new Spellings<estimator_v1::AuditVerdict>(
      "audit verdict",
      {
          {estimator_v1::AUDIT_VERDICT_AGREES, "agrees", "within the tolerance"},
          {estimator_v1::AUDIT_VERDICT_INPUTS_DISAGREE, "DISAGREES",
           "the record's own inputs give another figure and no convention explains it"},
          {estimator_v1::AUDIT_VERDICT_RECORD_SEMANTICS, "convention",
           "beyond the tolerance, explained by a convention the record follows"},
          {estimator_v1::AUDIT_VERDICT_CANNOT_CHECK, "partly-checked",
           "part of the figure cannot be recomputed (another method, a base model)"},
      });
  return *table;
}

const Spellings<common_v1::Accessibility>& Accessibilities() {
  static const auto* table = new Spellings<common_v1::Accessibility>(
      "accessibility",
      {
          {common_v1::ACCESSIBILITY_OPEN_WEIGHTS_UNRESTRICTED, "open_weights_unrestricted",
           "weights published, any use"},
          {common_v1::ACCESSIBILITY_OPEN_WEIGHTS_RESTRICTED_USE, "open_weights_restricted_use",
           "weights published, use restricted"},
          {common_v1::ACCESSIBILITY_OPEN_WEIGHTS_NON_COMMERCIAL, "open_weights_non_commercial",
           "weights published, non-commercial use"},
          {common_v1::ACCESSIBILITY_API_ACCESS, "api_access", "reachable through an API"},
          {common_v1::ACCESSIBILITY_HOSTED_ACCESS_NO_API, "hosted_access_no_api",
           "hosted product, no API"},
          {common_v1::ACCESSIBILITY_UNRELEASED, "unreleased", "not released"},
      });
  return *table;
}

const Spellings<common_v1::CodeAccessibility>& CodeAccessibilities() {
  static const auto* table = new Spellings<common_v1::CodeAccessibility>(
      "code accessibility",
      {
          {common_v1::CODE_ACCESSIBILITY_OPEN_SOURCE, "open_source", "training code open"},
          {common_v1::CODE_ACCESSIBILITY_OPEN_RESTRICTED_USE, "open_restricted_use",
           "training code open, use restricted"},
          {common_v1::CODE_ACCESSIBILITY_OPEN_NON_COMMERCIAL, "open_non_commercial",
           "training code open, non-commercial use"},
          {common_v1::CODE_ACCESSIBILITY_UNRELEASED, "unreleased", "training code not released"},
      });
  return *table;
}

const Spellings<common_v1::Confidence>& Confidences() {
  static const auto* table = new Spellings<common_v1::Confidence>(
      "confidence",
      {
          {common_v1::CONFIDENCE_CONFIDENT, "confident", "Epoch: \"Confident\""},
          {common_v1::CONFIDENCE_LIKELY, "likely", "Epoch: \"Likely\""},
          {common_v1::CONFIDENCE_SPECULATIVE, "speculative", "Epoch: \"Speculative\""},
          {common_v1::CONFIDENCE_UNKNOWN, "unknown", "Epoch: \"Unknown\""},
          {common_v1::CONFIDENCE_UNVERIFIED, "unverified", "Epoch: \"Unverified\""},
      });
  return *table;
}

const Spellings<common_v1::EstimationMethod>& EstimationMethods() {
  static const auto* table = new Spellings<common_v1::EstimationMethod>(
      "estimation method",
      {
          {common_v1::ESTIMATION_METHOD_OPERATION_COUNTING, "operation_counting",
           "6 x parameters x tokens, or counted operations"},
          {common_v1::ESTIMATION_METHOD_HARDWARE, "hardware", "chip-hours x peak x utilization"},
          {common_v1::ESTIMATION_METHOD_REPORTED, "reported", "reported by the authors"},
          {common_v1::ESTIMATION_METHOD_THIRD_PARTY_ESTIMATION, "third_party_estimation",
           "estimated by someone else"},
          {common_v1::ESTIMATION_METHOD_COMPARISON_WITH_OTHER_MODELS,
           "comparison_with_other_models", "compared with similar models"},
          {common_v1::ESTIMATION_METHOD_BENCHMARKS, "benchmarks", "inferred from benchmarks"},
          {common_v1::ESTIMATION_METHOD_COST, "cost", "inferred from the cost"},
          {common_v1::ESTIMATION_METHOD_OTHER, "other", "another method"},
      });
  return *table;
}

const Spellings<catalog_v1::ChangeType>& ChangeTypes() {
  static const auto* table = new Spellings<catalog_v1::ChangeType>(
      "change", {
                    {catalog_v1::CHANGE_TYPE_CREATED, "created", "a record was created"},
                    {catalog_v1::CHANGE_TYPE_UPDATED, "updated", "a record was updated"},
                    {catalog_v1::CHANGE_TYPE_DELETED, "deleted", "a record was deleted"},
                });
  return *table;
}

const Spellings<catalog_v1::FileFormat>& FileFormats() {
  static const auto* table = new Spellings<catalog_v1::FileFormat>(
      "format",
      {
          {catalog_v1::FILE_FORMAT_UNSPECIFIED, "", "import: detect; export: json"},
          {catalog_v1::FILE_FORMAT_EPOCH_MODELS_CSV, "epoch-models-csv", "Epoch AI's models CSV"},
          {catalog_v1::FILE_FORMAT_EPOCH_HARDWARE_CSV, "epoch-hardware-csv",
           "Epoch AI's hardware CSV"},
          {catalog_v1::FILE_FORMAT_HF_CONFIG_JSON, "hf-config",
           "a Hugging Face config.json (--model names the record)"},
          {catalog_v1::FILE_FORMAT_LLM_ANALYSIS_GPU_JSON, "llm-analysis-gpu",
           "llm-analysis GPU spec JSON"},
          {catalog_v1::FILE_FORMAT_GPU_POOR_JSON, "gpu-poor", "gpu_poor GPU spec JSON"},
          {catalog_v1::FILE_FORMAT_CATALOG_JSON, "json", "the catalog's own export"},
      });
  return *table;
}

const Spellings<catalog_v1::ImportOutcome>& ImportOutcomes() {
  static const auto* table = new Spellings<catalog_v1::ImportOutcome>(
      "outcome",
      {
          {catalog_v1::IMPORT_OUTCOME_CREATED, "created", "the row created a record"},
          {catalog_v1::IMPORT_OUTCOME_UPDATED, "updated", "the row changed a record"},
          {catalog_v1::IMPORT_OUTCOME_UNCHANGED, "unchanged", "the record already said so"},
          {catalog_v1::IMPORT_OUTCOME_REJECTED, "rejected", "the row was refused"},
      });
  return *table;
}

std::vector<const EnumSpellings*> AllEnumSpellings() {
  return {&NumberFormats(), &PlanObjectives(),      &RunnableOrders(),    &Runtimes(),
          &OffloadModes(),  &PriceSources(),        &Optimizers(),        &Recomputes(),
          &FineTunings(),   &TrainingFrameworks(),  &TrainingLosses(),    &Accessibilities(),
          &Confidences(),   &CodeAccessibilities(), &EstimationMethods(), &ChangeTypes(),
          &FileFormats(),   &ImportOutcomes(),      &AuditVerdicts()};
}

std::string EnumValuesMarkdown() {
  // The flags that take each table (EnumOfFlag's other direction).
  const std::vector<std::pair<const EnumSpellings*, std::string>> used_by = {
      {&NumberFormats(), "`--weights`, `--kv_cache`"},
      {&PlanObjectives(), "`plan --objective`"},
      {&RunnableOrders(), "`runnable --order`"},
      {&Runtimes(), "`plan --runtime`"},
      {&OffloadModes(), "`plan --offload`, `max-context`, `max-batch`, `best-format --offload`"},
      {&PriceSources(), "`plan`: where a price came from; `--price` gives one"},
      {&Optimizers(), "`--optimizer`"},
      {&Recomputes(), "`--recompute`"},
      {&FineTunings(), "`--finetune`"},
      {&TrainingFrameworks(), "`--framework`"},
      {&TrainingLosses(), "`--loss`"},
      {&FileFormats(), "`import --format`, `export --format`"}};
  std::string text =
      "# Accepted values\n\nWritten by `modelatlas values` (tests/cli checks that this file is "
      "current). Spellings are matched ignoring case, and `-` and `_` are the same.\n";
  for (const EnumSpellings* table : AllEnumSpellings()) {
    std::string flags = "printed in tables and cards";
    for (const auto& [spellings, names] : used_by) {
      if (spellings == table) flags = names;
    }
    absl::StrAppend(&text, "\n## ", table->descriptor()->name(), " (", flags, ")\n\n",
                    "| spelling | proto value | meaning |\n|---|---|---|\n");
    for (const EnumSpelling& entry : table->entries()) {
      const google::protobuf::EnumValueDescriptor* value =
          table->descriptor()->FindValueByNumber(entry.value);
      absl::StrAppend(&text, "| `", entry.spelling.empty() ? "(empty)" : entry.spelling, "` | `",
                      value == nullptr ? "?" : value->name(), "` | ", entry.description, " |\n");
    }
  }
  return text;
}

std::string EnumFlagHelp(absl::string_view what, const EnumSpellings& spellings) {
  return absl::StrCat(what, ": ", spellings.Accepted());
}

const EnumSpellings* EnumOfFlag(absl::string_view flag) {
  if (flag == "weights" || flag == "kv_cache") return &NumberFormats();
  if (flag == "objective") return &PlanObjectives();
  if (flag == "order") return &RunnableOrders();
  if (flag == "runtime") return &Runtimes();
  if (flag == "offload") return &OffloadModes();
  if (flag == "optimizer") return &Optimizers();
  if (flag == "recompute") return &Recomputes();
  if (flag == "finetune") return &FineTunings();
  if (flag == "framework") return &TrainingFrameworks();
  if (flag == "loss") return &TrainingLosses();
  if (flag == "format") return &FileFormats();
  return nullptr;
}

}  // namespace modelatlas::cli
