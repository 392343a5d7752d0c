// vLLM's, SGLang's and llama.cpp's own memory rules, each with the defaults it
// cites. About 620 lines: one section per runtime, sharing the reservation
// and launch-command helpers at the top.

#include "estimator-service/core/runtime_fit.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/text/decimal.h"
#include "estimator-service/core/fit_matrix.h"
#include "estimator-service/core/number_format.h"
#include "estimator-service/core/runtime_support.h"

namespace modelatlas::estimator {
namespace {

constexpr double kGiB = 1073741824.0;
constexpr double kMiB = 1048576.0;

std::string GiB(double bytes) { return absl::StrCat(FixedDecimals(bytes / kGiB, 2), " GiB"); }
std::string Num(double value) { return SignificantDigits(value, 4); }
// Whole bytes, as vLLM's page sizes are ("548864").
std::string Whole(double bytes) { return absl::StrCat(static_cast<int64_t>(std::llround(bytes))); }

// The versions the defaults below were read from.
constexpr char kVllmVersion[] = "vLLM 0.11.x";
// The card-size rule for --mem-fraction-static; sgl-project/sglang PR
// #10975 later replaced it with a sum of reserves (about 0.836 on an H100).
constexpr char kSglangVersion[] = "SGLang 0.5.x (the card-size rule, before PR #10975)";
// Upstream master b10076: the defaults below (common/common.h) were read
// at 001d906a, a later commit of a fork the stored index files under
// ggml-org/llama.cpp, and are the same at b10076 (docs/FORMULAS.md).
constexpr char kLlamaCppVersion[] =
    "llama.cpp b10076 (master at 305ba519, 2026-07-21, with --fit on by default)";

// vLLM's KV block, tokens: CacheConfig.block_size has no static default in
// 0.11; vllm/platforms/cuda.py check_and_update_config sets 16 on CUDA.
constexpr int kVllmBlockSize = 16;
// vLLM 0.11's default --gpu-memory-utilization (vllm/config/cache.py line 48
// at commit c1d86421: Field(default=0.9)).
constexpr double kVllmDefaultUtilization = 0.9;
// The highest --gpu-memory-utilization a command here sets: vLLM 0.11
// captures CUDA graphs after sizing the KV cache, out of the memory outside
// the budget, which also holds the CUDA context.
constexpr double kVllmHighestUtilization = 0.95;
// vLLM 0.21.0 and later: vllm-project/vllm PR #38284 (merged 2026-04-21)
// raised the default --gpu-memory-utilization to 0.92 and made the CUDA
// graph estimate (PR #30515, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, off
// by default in 0.18-0.20) come out of the KV budget
// (vllm/v1/worker/gpu_worker.py determine_available_memory).
constexpr double kVllmLaterDefaultUtilization = 0.92;
// llama.cpp's physical batch (common/common.h: n_ubatch = 512), the rows of
// its compute graph.
constexpr int kLlamaCppUbatch = 512;

int64_t CeilDiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

// llama.cpp's KV cells are allocated in multiples of this many (the
// context's padding; 256 is the largest any version used).
constexpr int64_t kLlamaCppCellPadding = 256;

// A file name as one word of a POSIX shell command: as it is when it holds
// only characters no shell treats specially, else in single quotes (each
// quote inside written '\'').
std::string ShellWord(absl::string_view word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char ch) {
    return absl::ascii_isalnum(static_cast<unsigned char>(ch)) ||
           absl::string_view("._-+/=:,@%").find(ch) != absl::string_view::npos;
  });
  if (plain) return std::string(word);
  return absl::StrCat("'", absl::StrReplaceAll(word, {{"'", "'\\''"}}), "'");
}

// The families llama.cpp gives a sliding-window cache (src/llama-model.cpp
// load_hparams: set_swa_pattern, or LLAMA_SWA_TYPE_CHUNKED for Llama 4),
// by config.json model_type. Another whose config names a window keeps
// every position in every layer: Mistral 7B v0.1's sliding_window 4096 is
// not in its GGUF file (convert_hf_to_gguf.py writes it as arch "llama",
// which has no window), and a published llama.cpp log of
// OpenHermes-2.5-Mistral-7B at -c 8192 holds 1024.00 MiB, 8192 cells in
// each of its 32 layers (docs/ACCURACY.md).
bool LlamaCppSlidesWindows(absl::string_view model_type) {
  static constexpr absl::string_view kFamilies[] = {
      "gemma2", "gemma3", "gemma3_text", "cohere2", "gpt_oss", "olmo2", "olmo3", "exaone4",
      "llama4", "llama4_text",
      // LLM_ARCH_GEMMA4 (PR #21309): llama-kv-cache-iswa's sliding cache.
      "gemma4", "gemma4_text",
      // LLM_ARCH_STEP35 (PR #19283): the same iSWA cache for its 512-token
      // sliding layers.
      "step3p5",
      // LLM_ARCH_MIMO2 (PR #18328): llm_build_mimo2_iswa's iSWA cache for
      // MiMo-V2-Flash's 128-token sliding layers.
      "mimo_v2_flash",
      // LLM_ARCH_AFMOE (src/models/afmoe.cpp: set_swa_pattern(4) with a
      // window, build_attn_inp_kv_iswa).
      "afmoe",
      // LLM_ARCH_EXAONE_MOE (src/models/exaone-moe.cpp: set_swa_pattern(4),
      // build_attn_inp_kv_iswa).
      "exaone_moe"};
  for (absl::string_view family : kFamilies) {
    if (model_type == family) return true;
  }
  return false;
}

// Whether the model has sliding-window layers whose window is shorter than
// the context asked for, and a sizing that gives their bytes.
bool HasWindowBelowContext(const RuntimeModel& model, const InferenceSizing& sizing,
                           int64_t context) {
  return model.sliding_window > 0 && model.sliding_window_layers > 0 &&
         model.sliding_window < context && sizing.kv_cache_bytes_largest_layer > 0;
}

// The KV bytes one token takes in the largest layer (the sizing holds
// context x batch tokens in it), in the sizing's KV format.
double LayerTokenBytes(const InferenceSizing& sizing, int64_t context, int64_t batch) {
  return sizing.kv_cache_bytes_largest_layer / static_cast<double>(context * batch);
}

LlamaCppSwa LlamaCppSwaImpl(const RuntimeModel& model, const InferenceSizing& sizing,
                            int64_t context, int64_t batch) {
  LlamaCppSwa out;
  if (!HasWindowBelowContext(model, sizing, context)) return out;
  const int64_t all_cells = context * batch;
  out.window_cells = model.sliding_window * batch;
  out.whole = !LlamaCppSlidesWindows(model.model_type);
  const int64_t wanted = model.sliding_window * batch + kLlamaCppUbatch;
  out.cells =
      out.whole ? all_cells
                : std::min(all_cells, CeilDiv(wanted, kLlamaCppCellPadding) * kLlamaCppCellPadding);
  // Each sliding layer's cells at its own bytes per token (Gemma 4 E2B's
  // are half a full layer's).
  out.bytes = static_cast<double>(std::max<int64_t>(0, out.cells - out.window_cells)) *
              LayerTokenBytes(sizing, context, batch) * sizing.kv_cache_sliding_layer_share *
              model.sliding_window_layers;
  return out;
}

// What the KV-cache reservation says of the sliding layers, if anything.
std::string SwaText(const RuntimeModel& model, const LlamaCppSwa& swa) {
  if (swa.bytes <= 0) return "";
  if (swa.whole) {
    return absl::StrCat(" (with the ", model.sliding_window_layers,
                        " layers the model's config gives a window kept whole: llama.cpp runs ",
                        model.model_type.empty() ? std::string("this family") : model.model_type,
                        " without one, ", swa.cells, " cells each, not the window's ",
                        swa.window_cells, ", +", GiB(swa.bytes), ")");
  }
  return absl::StrCat(
      " (with ", model.sliding_window_layers, " sliding-window layers at llama.cpp's ", swa.cells,
      " cells each, not the window's ", swa.window_cells, ": n_swa x sequences + n_ubatch ",
      kLlamaCppUbatch, ", padded to ", kLlamaCppCellPadding, ", +", GiB(swa.bytes), ")");
}

// The card's bytes of one token in a layer that keeps the whole context:
// the plan's bytes per token (all the card's layers) x the largest layer's
// share of the sizing's cache. 0 when the sizing does not say.
double CardLayerTokenBytes(double kv_bytes_per_token, const InferenceSizing& sizing) {
  if (sizing.kv_cache_bytes <= 0 || sizing.kv_cache_bytes_largest_layer <= 0) return 0;
  return kv_bytes_per_token * sizing.kv_cache_bytes_largest_layer / sizing.kv_cache_bytes;
}

bool IsLlama4(absl::string_view model_type) {
  return model_type == "llama4" || model_type == "llama4_text";
}

std::string ModelId(const RuntimeModel& model, RuntimeFit* fit) {
  if (!model.repo_id.empty()) return model.repo_id;
  fit->model_id_placeholder = true;
  return "<hugging-face-repo>";
}

void Reserve(RuntimeFit* fit, std::string component, double bytes, std::string arithmetic,
             std::string source) {
  fit->reserved.push_back({.component = std::move(component),
                           .bytes = bytes,
                           .arithmetic = std::move(arithmetic),
                           .source = std::move(source)});
}

// Everything each runtime reads the same way.
struct Common {
  double total_bytes = 0;  // what the driver reports (the record's allocatable figure)
  int64_t context = 0;     // tokens per sequence
  int batch = 1;
  double kv_bytes_per_token = 0;  // per card, all layers the card holds
  // Data-parallel engines of an expert-parallel plan (1 otherwise); `batch`
  // is then the fullest engine's share of the workload's sequences.
  int engines = 1;
  int workload_batch = 1;
};

// "4", or "2 (the fullest of 3 data-parallel engines; batch 4)".
std::string BatchText(const Common& c) {
  if (c.engines <= 1) return absl::StrCat(c.batch);
  return absl::StrCat(c.batch, " (the fullest of ", c.engines, " data-parallel engines; batch ",
                      c.workload_batch, ")");
}

// "1 sequence", "4 sequences", or the fullest engine's share.
std::string SequencesText(const Common& c) {
  return absl::StrCat(BatchText(c), c.batch == 1 && c.engines <= 1 ? " sequence" : " sequences");
}

Common CommonOf(const ResolvedWorkload& workload, const DeviceSpec& device,
                const DevicePlan& plan) {
  Common c;
  c.total_bytes = device.allocatable_memory_bytes.value_or(device.memory_bytes);
  c.context = workload.context_length_tokens;
  c.batch = c.workload_batch = std::max(1, workload.batch_size);
  // An expert-parallel plan runs expert_parallel / tensor_parallel engines,
  // each with its own KV cache and its share of the sequences (the plan's
  // kv_cache_bytes_per_card holds the fullest engine's): blocks, concurrency
  // and --max-num-seqs are per engine.
  if (plan.expert_parallel > 0 && plan.tensor_parallel > 0) {
    c.engines = std::max(1, plan.expert_parallel / plan.tensor_parallel);
    c.batch = (c.workload_batch + c.engines - 1) / c.engines;
  }
  const double tokens = static_cast<double>(c.context) * c.batch;
  c.kv_bytes_per_token = tokens > 0 ? plan.kv_cache_bytes_per_card / tokens : 0;
  return c;
}

// The KV reservation's block arithmetic, as vLLM logs its figures.
std::string VllmBlocksText(const VllmKvLayout& layout, const Common& c, double kv_memory,
                           const VllmBlocks& cache) {
  const std::string concurrency =
      absl::StrCat(" = ", Num(cache.max_concurrency), " (\"Maximum concurrency for ", c.context,
                   " tokens per request\")");
  if (layout.recurrent_groups > 0) {
    const double page = layout.block_bytes / layout.group_size;
    return absl::StrCat(
        "blocks of ", layout.block_tokens, " tokens (16 x ceil(one recurrent layer's state ",
        Whole(layout.state_page_bytes), " bytes / (16 x ", Whole(page / layout.block_tokens),
        " bytes per token of one attention layer))) x ", layout.group_size,
        " layers (a block id spans one layer of each of the group's) = ", Whole(layout.block_bytes),
        " bytes per card; floor(", GiB(kv_memory), " / ", Whole(layout.block_bytes),
        ") = ", cache.blocks, " blocks; ", cache.blocks, " / ", layout.Groups(), " groups x ",
        layout.block_tokens, " = ", cache.tokens,
        " tokens (\"GPU KV cache size\"); one request counts ", layout.full_groups, " x ceil(",
        c.context, " / ", layout.block_tokens, ") + ", layout.recurrent_groups,
        " state pages = ", layout.blocks_per_request, " blocks; ", cache.blocks, " / ",
        layout.blocks_per_request, concurrency);
  }
  if (layout.window_groups == 0) {
    return absl::StrCat(
        "blocks of ", kVllmBlockSize, " tokens x ", Num(layout.block_bytes / kVllmBlockSize),
        " bytes per token per card = ", Num(layout.block_bytes), " bytes; floor(", GiB(kv_memory),
        " / ", Num(layout.block_bytes), ") = ", cache.blocks, " blocks = ", cache.tokens,
        " tokens (\"GPU KV cache size\"); ", cache.blocks, " / ceil(", c.context, " / ",
        kVllmBlockSize, ")", concurrency);
  }
  const double layer_token = layout.block_bytes / (kVllmBlockSize * layout.group_size);
  std::string per_request;
  if (layout.full_groups > 0) {
    per_request =
        absl::StrCat(layout.full_groups, " x ceil(", c.context, " / ", kVllmBlockSize, ") + ");
  }
  absl::StrAppend(&per_request, layout.window_groups, " x ", layout.window_blocks);
  return absl::StrCat(
      "blocks of ", kVllmBlockSize, " tokens x ", layout.group_size,
      " layers (a block id spans one layer of each of the group's) x ", Num(layer_token),
      " bytes per token and layer per card = ", Num(layout.block_bytes), " bytes; floor(",
      GiB(kv_memory), " / ", Num(layout.block_bytes), ") = ", cache.blocks, " blocks; ",
      cache.blocks, " / ", layout.Groups(), " groups x ", kVllmBlockSize, " = ", cache.tokens,
      " tokens (\"GPU KV cache size\"); one request counts ", per_request, " = ",
      layout.blocks_per_request, " blocks; ", cache.blocks, " / ", layout.blocks_per_request,
      concurrency);
}

// How vLLM lays out a hybrid's attention and recurrent layers.
std::string VllmHybridNote(const VllmKvLayout& layout) {
  const double page = layout.block_bytes / layout.group_size;
  return absl::StrCat(
      "vLLM sets the attention block to ", layout.block_tokens,
      " tokens so that one attention layer's page holds one recurrent layer's state of a "
      "sequence (",
      Whole(layout.state_page_bytes), " bytes per card, padded by ",
      FixedDecimals(100 * (page - layout.state_page_bytes) / layout.state_page_bytes, 2), "% to ",
      Whole(page),
      ") (vllm/model_executor/models/config.py HybridAttentionMambaModelConfig; the log's "
      "\"Setting attention block size\"), and groups the ",
      layout.full_layers, " attention and ", layout.recurrent_layers, " recurrent layers into ",
      layout.Groups(), " groups of ", layout.group_size, " layers",
      layout.padding_layers > 0
          ? absl::StrCat(" (", layout.padding_layers, " of them padding, whose memory is lost)")
          : "",
      "; every request holds one state page in each of the ", layout.recurrent_groups,
      " recurrent groups whatever its length, and vLLM 0.11 serves hybrids without prefix "
      "caching; its start-up check asks ",
      GiB(layout.one_request_bytes), " per card for one request of max_model_len tokens");
}

// How vLLM groups a model's layers when some keep a window.
// What the same command keeps under vLLM 0.21.0 and later, which take the
// CUDA graph estimate out of the budget and default to a utilization of
// 0.92: the KV cache left after the same reserves and the graphs, against
// what the batch needs (by 0.11's blocks). Only the two changes are
// applied; the others since 0.11 (the sampler, the memory accounting, the
// window charge) are named, not modeled.
std::string VllmLaterReleaseNote(double total_bytes, double utilization, bool utilization_set,
                                 double reserved_bytes, double graph_bytes, double needed_bytes,
                                 double outside_bytes) {
  const double later_utilization = utilization_set ? utilization : kVllmLaterDefaultUtilization;
  const double kv = total_bytes * later_utilization - reserved_bytes - graph_bytes;
  const double needed_utilization =
      std::ceil((reserved_bytes + graph_bytes + needed_bytes) / total_bytes * 100) / 100;
  // The CUDA context and NCCL's start-up buffers stay outside the budget.
  const double highest = std::floor((1 - outside_bytes / total_bytes) * 100) / 100;
  std::string verdict;
  if (kv >= needed_bytes) {
    verdict = absl::StrCat(", enough for the batch's ", GiB(needed_bytes));
  } else if (needed_utilization <= highest) {
    verdict = absl::StrCat(", short of the batch's ", GiB(needed_bytes),
                           ": pass --gpu-memory-utilization ", Num(needed_utilization), " there");
  } else {
    verdict = absl::StrCat(", short of the batch's ", GiB(needed_bytes), ", and ",
                           Num(needed_utilization),
                           " would leave too little outside the budget for the CUDA context (at "
                           "most ",
                           Num(highest), "): the plan does not fit there");
  }
  return absl::StrCat(
      "vLLM 0.21.0 and later (vllm-project/vllm PR #38284) take their estimate of the CUDA graphs' "
      "memory out of the KV budget and default --gpu-memory-utilization to 0.92: this command "
      "there, at ",
      Num(later_utilization), utilization_set ? "" : " (their default)", ", keeps about ",
      GiB(std::max(0.0, kv)), " of KV cache per card (total x ", Num(later_utilization),
      " - the same reserves - graphs ", GiB(graph_bytes), ")", verdict,
      "; their other changes (the sampler, the memory accounting, the window charge) are not "
      "modeled");
}

std::string VllmLayoutNote(const RuntimeModel& model, const VllmKvLayout& layout,
                           int max_num_batched_tokens) {
  if (layout.recurrent_groups > 0) return VllmHybridNote(layout);
  if (layout.chunked_layers_kept_whole > 0) {
    return absl::StrCat(
        "vLLM 0.11 keeps the whole context in each of the ", layout.chunked_layers_kept_whole,
        " chunked-attention layers (chunks of ", model.sliding_window,
        " tokens): its hybrid KV cache manager is off for chunked attention unless "
        "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1 (default 0 since vllm-project/vllm "
        "PR #21761, for latency; 1 from PR #29627, vLLM 0.13), and the chunked layers become "
        "full attention (vllm/v1/core/kv_cache_utils.py unify_hybrid_kv_cache_specs); the plan's "
        "own sizing keeps the chunks alone");
  }
  const std::string groups =
      layout.full_groups > 0
          ? absl::StrCat("groups the ", layout.full_layers, " full-attention and ",
                         layout.window_layers, " sliding-window layers into ", layout.Groups(),
                         " groups of ", layout.group_size, " layers",
                         layout.padding_layers > 0
                             ? absl::StrCat(" (", layout.padding_layers,
                                            " of them padding, whose memory is lost)")
                             : "")
          : absl::StrCat("keeps its ", layout.window_layers, " sliding-window layers in one group");
  return absl::StrCat(
      "vLLM ", groups,
      " (vllm/v1/core/kv_cache_utils.py get_kv_cache_groups); it counts a window layer of one "
      "request for min(window ",
      model.sliding_window, " - 1 + max_num_batched_tokens ", max_num_batched_tokens,
      ", max_model_len) = ", layout.window_tokens, " tokens, ", layout.window_blocks,
      " blocks with the one a window not starting on a block needs, not the window alone "
      "(vllm/v1/kv_cache_interface.py SlidingWindowSpec.max_memory_usage_bytes); its start-up "
      "check asks ",
      GiB(layout.one_request_bytes), " per card for one request of max_model_len tokens");
}

std::string TotalArithmetic(const Common& c, const DeviceSpec& device) {
  return absl::StrCat("total per card ", GiB(c.total_bytes), " (what the driver reports",
                      device.allocatable_memory_source.empty()
                          ? ""
                          : absl::StrCat(": ", device.allocatable_memory_source),
                      ")");
}

// --- vLLM ---------------------------------------------------------------

}  // namespace

double VllmActivationPeak(const RuntimeModel& m, int tp, const VllmDefaults& d,
                          std::string* arithmetic) {
  tp = std::max(1, tp);
  const double per_token_bytes =
      (static_cast<double>(m.hidden_size) + 3.0 * static_cast<double>(m.intermediate_size) / tp) *
      2;
  const double forward = d.max_num_batched_tokens * per_token_bytes;
  const double sampler = static_cast<double>(d.max_num_seqs) * static_cast<double>(m.vocab_size) *
                         kVllmSamplerBytesPerLogit;
  const double peak = std::max(forward, sampler);
  if (arithmetic != nullptr) {
    *arithmetic = absl::StrCat(
        "the larger of the dummy forward, ", d.max_num_batched_tokens,
        " tokens (max_num_batched_tokens) x (hidden ", m.hidden_size, " + 3 x FFN ",
        m.intermediate_size, tp > 1 ? absl::StrCat(" / TP ", tp) : "",
        ") x 2 bytes = ", GiB(forward), ", and the dummy sampler run, ", d.max_num_seqs,
        " sequences (max_num_seqs) x vocabulary ", m.vocab_size, " x ",
        Num(kVllmSamplerBytesPerLogit),
        " bytes (fp32 logits, their sort with int64 indices, softmax and cumulative sum in "
        "PyTorch's top-k/top-p sampler; the peak vLLM 0.10.2-0.11 logs for seven models, "
        "docs/ACCURACY.md) = ",
        GiB(sampler), ": ", GiB(peak), " (an estimate of what vLLM measures, not its measurement)");
  }
  return peak;
}

double VllmCudaGraphBytes(const RuntimeModel& model, int pipeline_stages, std::string* arithmetic) {
  const int stages = std::max(1, pipeline_stages);
  if (model.num_layers <= 0) {
    const double bytes = kGiB;
    if (arithmetic != nullptr) {
      *arithmetic = absl::StrCat("CUDA graphs ", GiB(bytes),
                                 " (no layer count on record to estimate them from)");
    }
    return bytes;
  }
  const int64_t layers = CeilDiv(model.num_layers, stages);
  const bool sparse = model.mixture_of_experts || model.recurrent_layers > 0;
  const double per_layer = sparse ? kVllmGraphBytesPerMoeOrHybridLayer : kVllmGraphBytesPerLayer;
  const double bytes = kVllmGraphBaseBytes + static_cast<double>(layers) * per_layer;
  if (arithmetic != nullptr) {
    *arithmetic = absl::StrCat(
        "CUDA graphs at most ", GiB(kVllmGraphBaseBytes), " + ", layers, " layers",
        stages > 1 ? " per stage" : "", " x ", FixedDecimals(per_layer / kMiB, 0), " MiB",
        sparse ? (model.mixture_of_experts ? " (mixture-of-experts layers)" : " (hybrid layers)")
               : "",
        " = ", GiB(bytes), " (an upper bound on the graph memory vLLM logs, docs/ACCURACY.md)");
  }
  return bytes;
}

namespace {

// Cards that exchange activations every layer over a scale-up link.
bool LinkedGroup(int communicating_cards, const DeviceLinks& links) {
  return communicating_cards > 1 && links.scale_up_bytes_per_second > 0 &&
         links.scale_up_domain_size > 1;
}

}  // namespace

double VllmNcclStartupBytes(int cards) { return cards > 1 ? kVllmMultiCardStartupBytes : 0; }

double VllmNonTorchBytes(double workload_overhead_bytes, int communicating_cards,
                         const DeviceLinks& links, std::string* arithmetic) {
  const bool linked = LinkedGroup(communicating_cards, links);
  const double bytes = linked ? std::max(workload_overhead_bytes, kVllmLinkedNonTorchBytes)
                              : workload_overhead_bytes;
  if (arithmetic != nullptr) {
    if (linked) {
      *arithmetic = absl::StrCat(
          "NCCL's buffers, the custom and symmetric-memory all-reduce buffers and the "
          "workspaces of ",
          communicating_cards,
          " cards over the scale-up link: the larger of the workload's "
          "overhead ",
          GiB(workload_overhead_bytes), " and ", GiB(kVllmLinkedNonTorchBytes),
          " (the most vLLM logs as non-torch memory with 2 to 8 linked cards: 2.21 GiB, H100s "
          "at TP 4, vLLM 0.19.0) = ",
          GiB(bytes), ", counted inside the budget");
    } else {
      *arithmetic = absl::StrCat(
          communicating_cards > 1
              ? "CUDA context, cuBLAS workspaces and NCCL's buffers over PCIe (vLLM logs 0.21 GiB "
                "at TP 8 on L40S)"
              : "CUDA context and cuBLAS workspaces",
          ": the workload's overhead ", GiB(bytes),
          ", counted inside the budget (vLLM counts the non-torch memory that grows after "
          "start-up inside it, 0.07-0.46 GiB on one card, the CUDA context outside: "
          "conservative)");
    }
  }
  return bytes;
}

double SglangBeforePoolBytes(double workload_overhead_bytes, int communicating_cards,
                             const DeviceLinks& links, std::string* arithmetic) {
  const bool linked = LinkedGroup(communicating_cards, links);
  const double bytes = linked ? std::max(workload_overhead_bytes, kSglangLinkedBeforePoolBytes)
                              : workload_overhead_bytes;
  if (arithmetic != nullptr) {
    *arithmetic =
        linked ? absl::StrCat(
                     "CUDA context, NCCL's and the custom all-reduce's buffers of ",
                     communicating_cards,
                     " cards over the scale-up link: the larger of the workload's overhead ",
                     GiB(workload_overhead_bytes), " and ", GiB(kSglangLinkedBeforePoolBytes),
                     " (0.5 GiB of context and the 1.77-2.50 GiB SGLang logs for \"Init torch "
                     "distributed\" on eight linked cards) = ",
                     GiB(bytes), ", used before the pool is sized, so it counts against it")
               : absl::StrCat("CUDA context and torch: the workload's overhead ", GiB(bytes),
                              ", used before the pool is sized, so it counts against it");
  }
  return bytes;
}

namespace {

// vLLM and SGLang keep the KV cache in the model's 16-bit dtype ("auto") or
// in fp8; any other format is refused with the runtime's own flag values.
bool KvCacheInModelDtypeOrFp8(NumberFormat kv) {
  return kv == NumberFormat::kBf16 || kv == NumberFormat::kFp16 || kv == NumberFormat::kFp8;
}

// vLLM 0.11 over several nodes, per node. Expert parallel (data-parallel
// engines): every node runs `vllm serve` with its local engines, node 0 with
// the API and the others --headless from their first rank
// (docs.vllm.ai serving/data_parallel_deployment: --data-parallel-size-local,
// --data-parallel-start-rank, --data-parallel-address,
// --data-parallel-rpc-port). TP x PP: one Ray cluster, then `vllm serve` on
// its head (docs.vllm.ai serving/parallelism_scaling, "multi-node").
void VllmNodeCommands(const DevicePlan& plan, int tp, int dp, RuntimeFit* fit) {
  const std::string& command = fit->launch_command;
  if (plan.expert_parallel > 1) {
    const int per_node = (dp + plan.nodes - 1) / plan.nodes;  // engines per node
    int start = 0;
    for (int node = 0; node < plan.nodes && start < dp; ++node) {
      const int local = std::min(per_node, dp - start);
      fit->node_commands.push_back(absl::StrCat(
          "node ", node, ": ", command, " --data-parallel-size-local ", local,
          node > 0 ? absl::StrCat(" --data-parallel-start-rank ", start, " --headless") : "",
          " --data-parallel-address <node-0-address> --data-parallel-rpc-port 13345",
          node == 0 ? " (serves the API)" : "", " (", local * tp, " cards)"));
      start += local;
    }
    return;
  }
  fit->node_commands.push_back("node 0 (head): ray start --head --port 6379");
  for (int node = 1; node < plan.nodes; ++node) {
    fit->node_commands.push_back(
        absl::StrCat("node ", node, ": ray start --address <node-0-address>:6379"));
  }
  fit->node_commands.push_back(absl::StrCat("node 0, once every node joined: ", command,
                                            " --distributed-executor-backend ray"));
}

// The --gpu-memory-utilization a vLLM command sets.
struct VllmUtilization {
  double value = 0;
  bool raised = false;   // above the one asked for
  bool lowered = false;  // below it
  // The hundredth the KV cache needs (0 when the asked one holds it).
  double needed = 0;
};

// The one asked for, lowered to `highest` (what leaves room outside the
// budget) when above it, raised to the smallest hundredth whose budget
// holds `fixed_bytes` + `kv_bytes` of a `total_bytes` card when it falls
// short and that is not above `highest`.
VllmUtilization ChooseVllmUtilization(double asked, double highest, double fixed_bytes,
                                      double kv_bytes, double total_bytes) {
  VllmUtilization u{.value = std::min(asked, highest)};
  u.lowered = asked > highest;
  if (total_bytes * u.value - fixed_bytes < kv_bytes) {
    u.needed = std::ceil((fixed_bytes + kv_bytes) / total_bytes * 100) / 100;
    if (u.needed <= highest) {
      u.value = u.needed;
      u.raised = u.needed > asked;
      u.lowered = u.needed < asked;
    }
  }
  return u;
}

// The card's KV cache as vLLM lays it out.
VllmKvLayout VllmCardLayout(const RuntimeModel& model, const InferenceSizing& sizing,
                            const Common& c, int tp, int pp, const VllmDefaults& defaults) {
  if (std::optional<VllmKvLayout> hybrid = VllmHybridKvLayout(model, sizing, tp, pp)) {
    return *hybrid;
  }
  return VllmKvLayoutOf(model, c.kv_bytes_per_token,
                        CardLayerTokenBytes(c.kv_bytes_per_token, sizing), c.context,
                        defaults.max_num_batched_tokens);
}

RuntimeFit FitVllm(const RuntimeModel& model, const InferenceSizing& sizing,
                   const ResolvedWorkload& w, const DeviceSpec& device, const DevicePlan& plan) {
  RuntimeFit fit;
  fit.runtime = Runtime::kVllm;
  fit.version = kVllmVersion;
  fit.block_size_tokens = kVllmBlockSize;
  const Common c = CommonOf(w, device, plan);
  const int tp = std::max(1, plan.tensor_parallel);
  const int pp = std::max(1, plan.pipeline_parallel);
  fit.max_model_len_tokens = c.context;

  // KV cache formats vLLM 0.11 stores: the model's dtype ("auto") or fp8.
  const NumberFormat kv = w.kv_cache_format;
  const bool kv_fp8 = kv == NumberFormat::kFp8;
  if (!KvCacheInModelDtypeOrFp8(kv)) {
    fit.reason = absl::StrCat(
        "vLLM 0.11 stores the KV cache in the model's dtype or fp8 "
        "(--kv-cache-dtype auto|fp8|fp8_e4m3|fp8_e5m2, vllm/config/cache.py "
        "CacheDType), not ",
        NumberFormatName(kv));
    return fit;
  }
  if (model.max_context_length > 0 && c.context > model.max_context_length) {
    fit.reason = absl::StrCat(
        "the context ", c.context, " tokens is beyond the model's maximum ",
        model.max_context_length,
        ": vLLM refuses --max-model-len above it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1");
    return fit;
  }

  const VllmDefaults defaults = VllmServeDefaults(c.total_bytes, device.display_name);
  const double weights = plan.weight_bytes_per_card;
  // The cards that exchange activations every layer: the tensor-parallel
  // group, or the expert-parallel one (pipeline stages only pass one
  // activation at a stage's end: vLLM logs 0.07 GiB at PP 2 and 4).
  const int communicating_cards = std::max(tp, plan.expert_parallel);
  std::string non_torch_arithmetic;
  const double non_torch = VllmNonTorchBytes(plan.overhead_bytes_per_card, communicating_cards,
                                             device.links, &non_torch_arithmetic);
  std::string activation_arithmetic;
  double activations = 0;
  if (model.hidden_size > 0 && model.intermediate_size > 0 && model.vocab_size > 0) {
    activations = VllmActivationPeak(model, tp, defaults, &activation_arithmetic);
  } else {
    activations = plan.activation_bytes_per_card;
    activation_arithmetic = absl::StrCat(
        "hidden size, FFN or vocabulary not on record: the plan's activation workspace ",
        GiB(activations), " stands in for vLLM's profiled peak (which is larger)");
  }
  // The card's KV cache as vLLM lays it out: one group of every layer, or
  // groups of full-attention and sliding-window layers, or of a hybrid's
  // attention and recurrent layers.
  const VllmKvLayout layout = VllmCardLayout(model, sizing, c, tp, pp, defaults);
  fit.block_size_tokens = static_cast<int>(layout.block_tokens);
  const double block_bytes = layout.block_bytes;
  const int64_t blocks_per_sequence = layout.blocks_per_request;
  const int64_t blocks_needed =
      layout.BlocksFor(c.batch, c.context, defaults.max_num_batched_tokens);
  const double one_request_bytes = layout.one_request_bytes;
  const double needed_bytes = static_cast<double>(blocks_needed) * block_bytes;
  fit.kv_cache_bytes_needed_per_card = needed_bytes;

  // The utilization the command sets: the workload's (vLLM's default 0.9
  // unless the request asked otherwise), lowered when the memory outside the
  // budget would not hold the CUDA context, NCCL's start-up buffers and the
  // CUDA graphs, raised when the workload needs it and that memory still
  // holds them.
  std::string graph_arithmetic;
  const double graphs = VllmCudaGraphBytes(model, pp, &graph_arithmetic);
  const int cards = std::max(1, plan.cards);
  const double nccl_startup = VllmNcclStartupBytes(cards);
  const double outside_needed = kVllmCudaContextBytes + nccl_startup + graphs;
  const double highest = std::min(kVllmHighestUtilization,
                                  std::floor((1 - outside_needed / c.total_bytes) * 100) / 100);
  const std::string outside_text = absl::StrCat(
      "the memory outside the budget must hold the CUDA context ", GiB(kVllmCudaContextBytes),
      nccl_startup > 0
          ? absl::StrCat(", NCCL's start-up buffers ", GiB(nccl_startup), " (on each of ", cards,
                         " cards, allocated before vLLM's start-up snapshot since "
                         "vllm-project/vllm PR #25359)")
          : "",
      " and the ", graph_arithmetic, ": ", GiB(outside_needed),
      ", so --gpu-memory-utilization at most ", Num(highest));
  if (highest <= 0) {
    fit.reason = absl::StrCat("vLLM runs out of memory at start-up: ", outside_text,
                              " of the card is left for the budget");
    return fit;
  }
  const VllmUtilization chosen =
      ChooseVllmUtilization(w.memory_utilization, highest, weights + activations + non_torch,
                            block_bytes > 0 ? needed_bytes : 0, c.total_bytes);
  const double utilization = chosen.value;
  const bool raised = chosen.raised;
  const bool lowered = chosen.lowered;
  if (chosen.needed > highest) {
    fit.notes.push_back(absl::StrCat("the workload needs --gpu-memory-utilization ",
                                     Num(chosen.needed), ", and ", outside_text));
  }
  if (lowered) {
    fit.notes.push_back(
        absl::StrCat("--gpu-memory-utilization ", Num(w.memory_utilization), " would leave ",
                     GiB(c.total_bytes * (1 - w.memory_utilization)), " outside the budget, and ",
                     outside_text, ": the command sets ", Num(utilization)));
  }
  const double budget = c.total_bytes * utilization;
  const double kv_memory = budget - weights - activations - non_torch;
  fit.kv_cache_bytes_per_card = std::max(0.0, kv_memory);
  const VllmBlocks cache = VllmKvBlocks(kv_memory, layout);
  const int64_t blocks = cache.blocks;
  fit.kv_cache_blocks = blocks;
  fit.kv_cache_groups = layout.Groups();
  fit.kv_cache_tokens = cache.tokens;
  if (blocks_per_sequence > 0) fit.max_concurrency = cache.max_concurrency;

  Reserve(&fit, "budget", budget,
          absl::StrCat(TotalArithmetic(c, device), " x ", Num(utilization),
                       " (--gpu-memory-utilization",
                       raised ? ", raised from " : (lowered ? ", lowered from " : ""),
                       raised || lowered ? Num(w.memory_utilization) : "", ") = ", GiB(budget),
                       "; vLLM fails at start-up when less than this is free"),
          "vllm/config/cache.py CacheConfig.gpu_memory_utilization (default 0.9, line 48 at "
          "c1d86421); vllm/v1/worker/gpu_worker.py init_device: requested_memory = total x "
          "utilization");
  Reserve(&fit, "weights", weights,
          absl::StrCat("weights per card ", GiB(weights), " (the plan's split: TP ", tp,
                       pp > 1 ? absl::StrCat(" x PP ", pp) : "",
                       plan.expert_parallel > 1 ? absl::StrCat(" x EP ", plan.expert_parallel,
                                                               ", the routed experts over ",
                                                               plan.expert_parallel, " cards")
                                                : "",
                       ")"),
          "vllm/v1/worker/gpu_worker.py load_model, before profiling");
  Reserve(&fit, "activation_peak", activations, activation_arithmetic,
          absl::StrCat("vllm/v1/worker/gpu_model_runner.py profile_run; max_num_batched_tokens ",
                       defaults.max_num_batched_tokens, " and max_num_seqs ", defaults.max_num_seqs,
                       " are vllm serve's defaults for this card (vllm/engine/arg_utils.py "
                       "_set_default_args: 8192 and 1024 on cards of 70 GiB or more that are not "
                       "A100s, else 2048 and 256)"));
  Reserve(&fit, "non_torch", non_torch, non_torch_arithmetic,
          "vllm/v1/worker/gpu_worker.py determine_available_memory (non_kv_cache_memory)");
  Reserve(&fit, "kv_cache", std::max(0.0, kv_memory),
          absl::StrCat("budget ", GiB(budget), " - weights ", GiB(weights), " - activation peak ",
                       GiB(activations), " - non-torch ", GiB(non_torch), " = ", GiB(kv_memory),
                       "; ", VllmBlocksText(layout, c, std::max(0.0, kv_memory), cache)),
          "vllm/v1/core/kv_cache_utils.py get_num_blocks (available_memory // page_size // "
          "num_layers) and get_max_concurrency_for_kv_cache_config; block size 16 from "
          "vllm/platforms/cuda.py check_and_update_config (a hybrid's from "
          "vllm/model_executor/models/config.py HybridAttentionMambaModelConfig)");

  if (layout.window_groups > 0 || layout.chunked_layers_kept_whole > 0 ||
      layout.recurrent_groups > 0) {
    fit.notes.push_back(VllmLayoutNote(model, layout, defaults.max_num_batched_tokens));
  }
  const bool grouped = layout.window_groups > 0;
  if (kv_memory < one_request_bytes) {
    fit.reason = absl::StrCat(
        "vLLM refuses to start: one request of ", c.context, " tokens needs ",
        GiB(one_request_bytes),
        grouped ? " (its window layers as vLLM's check counts them)"
                : absl::StrCat(" (", blocks_per_sequence, " blocks)"),
        " and the KV cache holds ", GiB(std::max(0.0, kv_memory)), " (", blocks,
        " blocks) even at --gpu-memory-utilization ", Num(utilization),
        " (its ValueError: the KV cache needed for max_model_len is larger than the available "
        "KV cache memory)");
    return fit;
  }
  if (blocks < blocks_needed) {
    fit.reason = absl::StrCat(
        "vLLM starts but its ", blocks, " blocks hold fewer than the batch of ", SequencesText(c),
        " of ", c.context, " tokens at once (", blocks_needed,
        " needed; it logs a maximum concurrency of ", Num(*fit.max_concurrency), "); ",
        grouped ? "it keeps each window layer's batched tokens and groups the layers (the note), "
                  "and its activation peak is "
                : "the activation peak it profiles is ",
        GiB(activations), " against the plan's workspace of ", GiB(plan.activation_bytes_per_card));
    return fit;
  }
  fit.fits = true;
  const std::string utilization_text =
      raised ? absl::StrCat(" (with --gpu-memory-utilization ", Num(utilization), "; at ",
                            Num(w.memory_utilization), " it does not)")
      : lowered
          ? absl::StrCat(" (with --gpu-memory-utilization ", Num(utilization), ", lowered from ",
                         Num(w.memory_utilization), " to leave room for the CUDA graphs)")
          : "";
  fit.reason =
      grouped
          ? absl::StrCat(blocks, " blocks hold the batch of ", SequencesText(c), " of ", c.context,
                         " tokens with their windows (", blocks_needed, " blocks)",
                         utilization_text, "; vLLM logs a maximum concurrency of ",
                         Num(*fit.max_concurrency),
                         ", counting each request's window layers with max_num_batched_tokens")
          : absl::StrCat(blocks, " blocks hold ", Num(*fit.max_concurrency), " sequences of ",
                         c.context, " tokens; the batch needs ", BatchText(c), utilization_text);

  std::string command = absl::StrCat("vllm serve ", ModelId(model, &fit));
  if (tp > 1) absl::StrAppend(&command, " --tensor-parallel-size ", tp);
  if (pp > 1) absl::StrAppend(&command, " --pipeline-parallel-size ", pp);
  const int ep = plan.expert_parallel;
  const int dp = ep > 1 ? ep / tp : 1;
  // Expert parallelism: EP size = TP x DP, the attention data-parallel
  // (docs.vllm.ai serving/expert_parallel_deployment, vLLM 0.11).
  if (dp > 1) absl::StrAppend(&command, " --data-parallel-size ", dp);
  if (ep > 1) absl::StrAppend(&command, " --enable-expert-parallel");
  // vLLM takes the model's maximum context by default.
  if (model.max_context_length <= 0 || c.context != model.max_context_length) {
    absl::StrAppend(&command, " --max-model-len ", c.context);
  }
  if (std::abs(utilization - kVllmDefaultUtilization) > 1e-9) {
    absl::StrAppend(&command, " --gpu-memory-utilization ", Num(utilization));
  }
  if (kv_fp8) absl::StrAppend(&command, " --kv-cache-dtype fp8");
  if (c.batch > defaults.max_num_seqs) absl::StrAppend(&command, " --max-num-seqs ", c.batch);
  fit.launch_command = std::move(command);
  if (plan.nodes > 1) VllmNodeCommands(plan, tp, dp, &fit);

  fit.notes.push_back(absl::StrCat(
      "CUDA graphs: vLLM 0.11 captures them after sizing the KV cache, out of the memory "
      "outside the budget (",
      GiB(c.total_bytes - budget), " per card): ", outside_text,
      " (vllm/v1/worker/gpu_model_runner.py capture_model)"));
  fit.notes.push_back(VllmLaterReleaseNote(c.total_bytes, utilization,
                                           std::abs(utilization - kVllmDefaultUtilization) > 1e-9,
                                           weights + activations + non_torch, graphs, needed_bytes,
                                           kVllmCudaContextBytes + nccl_startup));
  if (w.weight_format != NumberFormat::kBf16 && w.weight_format != NumberFormat::kFp16) {
    fit.notes.push_back(absl::StrCat(
        "weights ", NumberFormatName(w.weight_format),
        ": vLLM reads the quantization from the checkpoint, so the repository must hold weights "
        "already in that format"));
  }
  if (ep > 1) {
    fit.notes.push_back(absl::StrCat(
        "expert parallel: ", dp, " data-parallel engine", dp > 1 ? "s" : "", " of TP ", tp,
        ", each with its own KV cache and its share of the sequences; the all-to-all backend "
        "(--all2all-backend, DeepEP or pplx kernels) must be installed (vLLM's expert parallel "
        "deployment guide)"));
  }
  if (fit.model_id_placeholder) {
    fit.notes.push_back("<hugging-face-repo> is a placeholder: the record names no repository");
  }
  return fit;
}

// --- SGLang -------------------------------------------------------------

// The window layers SGLang 0.5 keeps whole: all of them. It runs no model
// with its sliding-window pool by default (SWAKVPool needs
// disable_hybrid_swa_memory off, which model_specific_adjustments sets for
// Gemma 2/3/3n and gpt-oss; Llama 4's chunks need --hybrid-kvcache-ratio;
// other families have no window code), so every layer holds every token
// (published: google/gemma-3-4b-it, "KV Cache is allocated. #tokens:
// 834615, K size: 54.12 GB", 34 layers x 4 x 256 x 2 bytes a token,
// sgl-project/sglang PR #4826). 0 without window layers or sizes.
int SglangWindowLayersKeptWhole(const RuntimeModel& model, const InferenceSizing& sizing) {
  if (model.sliding_window <= 0 || model.sliding_window_layers <= 0) return 0;
  if (CardLayerTokenBytes(1, sizing) <= 0) return 0;
  return model.sliding_window_layers;
}

// What the same command keeps under SGLang 0.5.3 and later
// (SglangLaterMemFractionStatic): the KV cache left after the same weights
// and runtime memory (`reserved_bytes`), against what the batch needs. A
// larger fraction would take what that rule keeps for activations and
// graphs, so a short pool does not fit there.
std::string SglangLaterReleaseNote(double total_bytes, int world, double reserved_bytes,
                                   double needed_bytes) {
  double later_reserved_mib = 0;
  const double later_fraction =
      SglangLaterMemFractionStatic(total_bytes, world, &later_reserved_mib);
  const double later_kv = total_bytes * later_fraction - reserved_bytes;
  std::string verdict;
  if (later_kv >= needed_bytes) {
    verdict = absl::StrCat(", enough for the batch's ", GiB(needed_bytes));
  } else {
    verdict = absl::StrCat(
        ", short of the batch's ", GiB(needed_bytes), ": it would need --mem-fraction-static ",
        Num(std::ceil((reserved_bytes + needed_bytes) / total_bytes * 1000) / 1000),
        ", which leaves less than the ", FixedDecimals(later_reserved_mib, 0),
        " MiB that rule keeps for activations and CUDA graphs: the plan does not fit there");
  }
  return absl::StrCat(
      "SGLang 0.5.3 and later (sgl-project/sglang PRs #10975 and #11076) reserve 512 MiB + 1.5 "
      "MiB per chunked-prefill token + 2 MiB per CUDA graph batch entry + TP x PP / 8 GiB, at "
      "least 10 GiB on cards over 60 GiB: ",
      FixedDecimals(later_reserved_mib, 0), " MiB here, a default of ", Num(later_fraction),
      ", with which this command there keeps about ", GiB(std::max(0.0, later_kv)),
      " of KV cache per card", verdict,
      "; terms added in later releases (piecewise CUDA graphs, DeepEP) are not modeled");
}

// Llama 3.2 Vision in SGLang (python/sglang/srt/models/mllama.py,
// schedule_batch.py prepare_encoder_info_extend): each image's tiles x
// patches positions are padding tokens in front of the request, in the one
// token pool, whose every slot holds all num_layers layers (the
// cross-attention layers write the image's slots, the others the text's).
// The per-token bytes become one layer-token's (the plan's physical cache:
// self-attention layers x text tokens + cross-attention layers x image
// positions) x num_layers; the pool's tokens and concurrency count the image.
// The image positions of a request: each image's tiles x patches
// (mllama.py pad_input_ids: num_concurrent_media x num_tiles x num_patches).
int64_t SglangImagePositions(const RuntimeModel& model, const ResolvedWorkload& w) {
  return model.cross_attention_positions * w.images_per_sequence;
}

void SglangCrossAttentionPool(const RuntimeModel& model, const ResolvedWorkload& w,
                              const DevicePlan& plan, double kv_memory, Common* c,
                              RuntimeFit* fit) {
  const double self_layers = model.num_layers - model.cross_attention_layers;
  const int64_t image_positions = SglangImagePositions(model, w);
  const double layer_tokens =
      c->batch * (self_layers * c->context +
                  model.cross_attention_layers * static_cast<double>(image_positions));
  const double layer_token_bytes =
      layer_tokens > 0 ? plan.kv_cache_bytes_per_card / layer_tokens : 0;
  c->kv_bytes_per_token = layer_token_bytes * model.num_layers;
  fit->kv_cache_tokens = kv_memory > 0 && c->kv_bytes_per_token > 0
                             ? static_cast<int64_t>(std::floor(kv_memory / c->kv_bytes_per_token))
                             : 0;
  const int64_t per_request = c->context + image_positions;
  fit->notes.push_back(absl::StrCat(
      "cross-attention: SGLang puts each image's ", model.cross_attention_positions,
      " positions in front of the request as padding tokens in the same pool as the text, and "
      "every slot of that pool holds all ",
      model.num_layers, " layers (", Whole(c->kv_bytes_per_token),
      " bytes per token per card): a request with ", w.images_per_sequence,
      w.images_per_sequence == 1 ? " image" : " images", " takes ", per_request,
      " slots, which the pool's tokens, the concurrency and --context-length count "
      "(mllama.py pad_input_ids; chunked prefill is off for this model)"));
}

RuntimeFit FitSglang(const RuntimeModel& model, const InferenceSizing& sizing,
                     const ResolvedWorkload& w, const DeviceSpec& device, const DevicePlan& plan) {
  RuntimeFit fit;
  fit.runtime = Runtime::kSglang;
  fit.version = kSglangVersion;
  fit.block_size_tokens = 1;  // --page-size 1 by default: a token per page
  Common c = CommonOf(w, device, plan);
  const double plan_bytes_per_token = c.kv_bytes_per_token;
  const int window_layers = SglangWindowLayersKeptWhole(model, sizing);
  const double whole_bytes_per_token =
      CardLayerTokenBytes(c.kv_bytes_per_token, sizing) * model.KvLayers();
  const bool windows_kept_whole =
      window_layers > 0 && whole_bytes_per_token > plan_bytes_per_token * (1 + 1e-9);
  if (windows_kept_whole) c.kv_bytes_per_token = whole_bytes_per_token;
  const int tp = std::max(1, plan.tensor_parallel);
  const int pp = std::max(1, plan.pipeline_parallel);
  fit.max_model_len_tokens = c.context;
  const NumberFormat kv = w.kv_cache_format;
  const bool kv_fp8 = kv == NumberFormat::kFp8;
  if (!KvCacheInModelDtypeOrFp8(kv)) {
    fit.reason = absl::StrCat(
        "SGLang 0.5 stores the KV cache in the model's dtype or fp8 (--kv-cache-dtype "
        "auto|fp8_e5m2|fp8_e4m3), not ",
        NumberFormatName(kv));
    return fit;
  }

  double reserved_mib = 0;
  // SGLang's --tp is every card of the server (the EP size under expert
  // parallelism).
  const int ep = plan.expert_parallel;
  const int world = ep > 1 ? ep : tp * pp;
  const double fraction = SglangMemFractionStatic(c.total_bytes, world, &reserved_mib);
  const double total_mib = c.total_bytes / kMiB;
  const double pool = c.total_bytes * fraction;
  const double weights = plan.weight_bytes_per_card;
  std::string before_arithmetic;
  const double before = SglangBeforePoolBytes(plan.overhead_bytes_per_card, std::max(tp, ep),
                                              device.links, &before_arithmetic);
  const double kv_memory = pool - weights - before;
  fit.kv_cache_bytes_per_card = std::max(0.0, kv_memory);
  int64_t tokens = kv_memory > 0 && c.kv_bytes_per_token > 0
                       ? static_cast<int64_t>(std::floor(kv_memory / c.kv_bytes_per_token))
                       : 0;
  fit.kv_cache_tokens = tokens;
  // Llama 3.2 Vision: an image's positions are tokens of the request, and
  // every token's slot holds all the layers (SglangCrossAttentionPool).
  int64_t per_request = c.context;
  if (model.cross_attention_layers > 0) {
    SglangCrossAttentionPool(model, w, plan, kv_memory, &c, &fit);
    tokens = fit.kv_cache_tokens;
    per_request += SglangImagePositions(model, w);
    fit.max_model_len_tokens = per_request;  // --context-length counts the images' tokens
  }
  const std::string per_request_text =
      per_request == c.context
          ? absl::StrCat(c.context)
          : absl::StrCat("(", c.context, " + ", per_request - c.context, " image positions)");
  const int64_t needed = per_request * c.batch;
  fit.kv_cache_bytes_needed_per_card = static_cast<double>(needed) * c.kv_bytes_per_token;
  if (c.context > 0) {
    fit.max_concurrency = static_cast<double>(fit.kv_cache_tokens) / per_request;
  }

  if (windows_kept_whole) {
    fit.notes.push_back(absl::StrCat(
        "SGLang 0.5 keeps every token in the ", window_layers, " ",
        IsLlama4(model.model_type) ? "chunked-attention" : "sliding-window",
        " layers too: its sliding-window pool is off for ",
        model.model_type.empty() ? std::string("this family") : model.model_type,
        " (python/sglang/srt/server_args.py model_specific_adjustments sets "
        "disable_hybrid_swa_memory for Gemma 2 and 3, Gemma 3n and gpt-oss; Llama 4 only with "
        "--hybrid-kvcache-ratio; Mistral has none; read at v0.5.5, 0c006b88): ",
        Num(c.kv_bytes_per_token), " bytes per token per card, not the plan's ",
        Num(plan_bytes_per_token)));
  }
  if (model.recurrent_layers > 0 && sizing.recurrent_state_bytes > 0) {
    fit.notes.push_back(
        "not modelled: SGLang keeps a hybrid's recurrent state in a pool of its own, and these "
        "tokens and this concurrency count it at the plan's bytes per token instead. SGLang "
        "0.5.4-0.5.6 gives that pool 0.9 / 1.9 of its memory for Qwen3-Next (radix cache on; "
        "--mamba-full-memory-ratio 0.9) and 512 request slots for the other hybrids (radix cache "
        "off), and keeps the SSM state in fp32 (--mamba-ssm-dtype), twice vLLM's bf16 "
        "(python/sglang/srt/model_executor/model_runner.py handle_max_mamba_cache, read at "
        "v0.5.5, 0c006b88); the KV pool then holds the attention layers alone");
  }
  Reserve(&fit, "static_pool", pool,
          absl::StrCat(TotalArithmetic(c, device), " = ", FixedDecimals(total_mib, 0),
                       " MiB; reserved ", FixedDecimals(reserved_mib, 0),
                       " MiB for activations, CUDA graphs and metadata by the card-size rule "
                       "(TP x PP = ",
                       world, "); mem_fraction_static = round((", FixedDecimals(total_mib, 0),
                       " - ", FixedDecimals(reserved_mib, 0), ") / ", FixedDecimals(total_mib, 0),
                       ", 3) = ", Num(fraction), "; static pool (weights + KV cache) = total x ",
                       Num(fraction), " = ", GiB(pool)),
          "python/sglang/srt/server_args.py ServerArgs._handle_gpu_memory_settings: reserved "
          "(2.8 + tp x pp / 10) GiB under 35 GiB, (9.5 + tp x pp / 2) GiB under 90 GiB, (12 + "
          "tp x pp / 2) GiB under 160 GiB, 32 GiB above");
  Reserve(&fit, "weights", weights,
          absl::StrCat("weights per card ", GiB(weights), " (TP ", tp,
                       plan.expert_parallel > 1 ? absl::StrCat(" x EP ", plan.expert_parallel) : "",
                       pp > 1 ? absl::StrCat(" x PP ", pp) : "", ")"),
          "loaded before the pool is sized (model_runner.py load_model)");
  Reserve(&fit, "runtime", before, before_arithmetic,
          "python/sglang/srt/model_executor/model_runner.py profile_max_num_token");
  Reserve(&fit, "kv_cache", std::max(0.0, kv_memory),
          absl::StrCat("static pool ", GiB(pool), " - weights ", GiB(weights), " - runtime ",
                       GiB(before), " = ", GiB(kv_memory), "; / ", Num(c.kv_bytes_per_token),
                       " bytes per token per card (K and V of every layer) = ", tokens,
                       " tokens (max_total_num_tokens); the workload needs ", BatchText(c), " x ",
                       per_request_text, " = ", needed),
          "python/sglang/srt/model_executor/model_runner.py profile_max_num_token: rest = "
          "available after loading - total x (1 - mem_fraction_static); max_total_num_tokens "
          "= rest / cell size");

  if (tokens < needed) {
    const double needed_fraction =
        (weights + before + static_cast<double>(needed) * c.kv_bytes_per_token) / c.total_bytes;
    fit.reason = absl::StrCat(
        "SGLang's pool holds ", tokens, " tokens, the workload needs ", needed, " (", BatchText(c),
        " x ", per_request_text, "): --mem-fraction-static ", Num(needed_fraction),
        " would be needed, which leaves less than SGLang's rule keeps for activations and "
        "CUDA graphs (",
        FixedDecimals(reserved_mib, 0), " MiB)");
    return fit;
  }
  fit.fits = true;
  fit.reason =
      absl::StrCat("the pool holds ", tokens, " tokens, ", Num(*fit.max_concurrency),
                   " sequences of ", per_request_text, " tokens; the batch needs ", BatchText(c));
  std::string command =
      absl::StrCat("python -m sglang.launch_server --model-path ", ModelId(model, &fit));
  if (ep > 1) {
    // SGLang: --tp is the server's cards, --ep-size splits the experts over
    // them, --enable-dp-attention --dp D replicates the attention D times
    // (docs.sglang.ai server arguments; DeepSeek's deployment guide).
    absl::StrAppend(&command, " --tp ", ep, " --ep-size ", ep);
    if (ep / tp > 1) absl::StrAppend(&command, " --enable-dp-attention --dp ", ep / tp);
  } else {
    if (tp > 1) absl::StrAppend(&command, " --tp ", tp);
    if (pp > 1) absl::StrAppend(&command, " --pp-size ", pp);
  }
  absl::StrAppend(&command, " --context-length ", fit.max_model_len_tokens);
  if (kv_fp8) absl::StrAppend(&command, " --kv-cache-dtype fp8_e4m3");
  if (plan.nodes > 1) {
    // Every node runs the same command with its rank (SGLang's multi-node
    // deployment: --nnodes, --node-rank, --dist-init-addr of node 0).
    for (int node = 0; node < plan.nodes; ++node) {
      fit.node_commands.push_back(absl::StrCat(
          "node ", node, ": ", command, " --nnodes ", plan.nodes, " --node-rank ", node,
          " --dist-init-addr <node-0-address>:5000", node == 0 ? " (serves the API)" : ""));
    }
  }
  fit.launch_command = std::move(command);
  fit.notes.push_back(absl::StrCat(
      "--mem-fraction-static is left at SGLang's default for this card (", Num(fraction),
      "); multimodal models get a smaller one (server_args.py adjust_mem_fraction_for_vlm). ",
      SglangLaterReleaseNote(c.total_bytes, world, weights + before,
                             fit.kv_cache_bytes_needed_per_card)));
  if (plan.nodes > 1) {
    fit.notes.push_back(absl::StrCat("over ", plan.nodes,
                                     " nodes: node_commands gives each node's command (the launch "
                                     "command with --nnodes, --node-rank and --dist-init-addr)"));
  }
  if (fit.model_id_placeholder) {
    fit.notes.push_back("<hugging-face-repo> is a placeholder: the record names no repository");
  }
  return fit;
}

// --- llama.cpp ----------------------------------------------------------

// llama.cpp's KV cache types (-ctk/-ctv, ggml types): f16 by default
// (common/common.h cache_type_k/v = GGML_TYPE_F16); 8-bit and 4-bit formats
// map to q8_0 (32 values in 34 bytes) and q4_0 (32 in 18).
struct LlamaKv {
  const char* type;
  double bits;
};
LlamaKv LlamaKvOf(NumberFormat kv) {
  switch (kv) {
    case NumberFormat::kFp32:
      return {"f32", 32};
    case NumberFormat::kFp8:
    case NumberFormat::kInt8:
      return {"q8_0", 8.5};
    case NumberFormat::kInt4:
      return {"q4_0", 4.5};
    default:
      return {"f16", 16};
  }
}

// The GGUF file type's name in a file name ("Q4_K_M", "BF16").
std::string GgufFileType(NumberFormat format) {
  std::string name(absl::StripPrefix(NumberFormatName(format), "gguf-"));
  if (name == "fp16") name = "f16";
  if (name == "fp32") name = "f32";
  return absl::AsciiStrToUpper(name);
}

RuntimeFit FitLlamaCpp(const RuntimeModel& model, const InferenceSizing& sizing,
                       const ResolvedWorkload& w, const DeviceSpec& device,
                       const DevicePlan& plan) {
  RuntimeFit fit;
  fit.runtime = Runtime::kLlamaCpp;
  fit.version = kLlamaCppVersion;
  const Common c = CommonOf(w, device, plan);
  const int cards = std::max(1, plan.cards);
  fit.max_model_len_tokens = c.context;
  if (plan.nodes > 1) {
    fit.reason = absl::StrCat(
        "the plan spans ", plan.nodes,
        " nodes: llama.cpp splits layers over the GPUs of one host; more hosts need its RPC "
        "backend (--rpc), not planned here");
    return fit;
  }
  const LlamaKv kv = LlamaKvOf(w.kv_cache_format);
  const double own_bits = BitsPerElement(w.kv_cache_format);
  const LlamaCppSwa swa = LlamaCppSwaImpl(model, sizing, c.context, c.batch);
  // The recurrent states are F32 whatever -ctk/-ctv say (llama-model.cpp
  // create_memory): taken out of the KV cache before its type is applied
  // and added back at 4 bytes an element.
  const double state = std::min(sizing.kv_cache_bytes, model.recurrent_state_bytes * c.batch);
  const double llama_state = model.llama_cpp_recurrent_state_bytes * c.batch;
  // The multi-token-prediction blocks' caches, each a full-context layer.
  const double mtp = sizing.kv_cache_bytes_largest_layer * model.llama_cpp_mtp_kv_layers;
  const double kv_total =
      own_bits > 0
          ? (sizing.kv_cache_bytes - state + swa.bytes + mtp) * kv.bits / own_bits + llama_state
          : 0;
  double weights = sizing.weight_bytes / cards;
  double kv_per_card = kv_total / cards;
  // Layers that differ (Nemotron-NAS): llama.cpp hands each card its layers
  // by count (llama-model.cpp: layer il to the device whose share of the
  // layers covers il), whatever they hold. A card is sized as its layers
  // (and the output layer) each as large as the largest could be, with its
  // embeddings' bytes, and as caching each layer's keys and values: at most
  // the whole.
  const int largest = model.layers_as_large_as_the_largest;
  const int card_layers = static_cast<int>(CeilDiv(model.num_layers + 1, cards));
  const bool uneven = cards > 1 && largest > 0 && model.num_layers > 0;
  if (uneven) {
    weights = std::min(sizing.weight_bytes, card_layers * sizing.weight_bytes / largest);
    kv_per_card = std::min(kv_total, card_layers * kv_total / std::max(1, model.KvLayers()));
  }
  const double compute = static_cast<double>(kLlamaCppUbatch) *
                         static_cast<double>(model.vocab_size + model.hidden_size) * 4;
  const double overhead = plan.overhead_bytes_per_card;
  const double used = weights + kv_per_card + compute + overhead;
  fit.kv_cache_bytes_per_card = kv_per_card;
  fit.kv_cache_bytes_needed_per_card = kv_per_card;
  fit.kv_cache_tokens = c.context * c.batch;
  fit.max_concurrency = static_cast<double>(c.batch);

  Reserve(
      &fit, "weights", weights,
      uneven
          ? absl::StrCat("layers of different sizes, given to the cards by count: up to ",
                         card_layers, " layers (", model.num_layers, " and the output layer over ",
                         cards, " cards) x weights ", GiB(sizing.weight_bytes), " / ", largest,
                         " (as many layers as large as the largest could be) = ", GiB(weights),
                         " on the fullest card")
          : absl::StrCat("weights ", GiB(sizing.weight_bytes), " / ", cards,
                         " cards (--split-mode layer: whole layers per card) = ", GiB(weights)),
      "common/common.h split_mode = LLAMA_SPLIT_MODE_LAYER");
  Reserve(&fit, "kv_cache", kv_per_card,
          absl::StrCat(
              "KV cache in ", kv.type, " (", Num(kv.bits), " bits per element): ",
              own_bits > 0 ? absl::StrCat(GiB(sizing.kv_cache_bytes - state), " x ", Num(kv.bits),
                                          " / ", Num(own_bits))
                           : std::string("0"),
              SwaText(model, swa),
              mtp > 0 ? absl::StrCat(" (with the ", model.llama_cpp_mtp_kv_layers,
                                     " multi-token-prediction block(s) the GGUF file keeps after "
                                     "the model's layers, each cached as a full layer: +",
                                     GiB(mtp), ")")
                      : "",
              llama_state > 0
                  ? absl::StrCat(" + recurrent state ", GiB(llama_state), " (", c.batch,
                                 " sequences x ",
                                 absl::StrFormat("%.0f", model.llama_cpp_recurrent_state_bytes),
                                 " bytes", ", every element in f32)")
                  : "",
              " = ", GiB(kv_total), " for -c ", c.context * c.batch, " tokens, ",
              uneven ? absl::StrCat("up to ", card_layers, " of its ", model.KvLayers(),
                                    " layers with attention on a card = ")
                     : absl::StrCat("/ ", cards, " cards = "),
              GiB(kv_per_card)),
          "common/common.h cache_type_k/v = GGML_TYPE_F16 (-ctk/-ctv); n_ctx = 0 takes the "
          "model's trained context unless -c is given");
  Reserve(&fit, "compute_buffer", compute,
          absl::StrCat(kLlamaCppUbatch, " tokens (n_ubatch) x (vocabulary ", model.vocab_size,
                       " + hidden ", model.hidden_size, ") x 4 bytes = ", GiB(compute),
                       " (the graph's fp32 logits and hidden state with flash attention, on by "
                       "default; an estimate of the compute buffer, counted on every card)"),
          "common/common.h n_ubatch = 512; flash_attn_type auto");
  Reserve(&fit, "overhead", overhead,
          absl::StrCat("CUDA context: the workload's overhead ", GiB(overhead)), "");
  if (used > c.total_bytes) {
    fit.reason =
        absl::StrCat("llama.cpp needs ", GiB(used), " per card (weights ", GiB(weights), " + KV ",
                     GiB(kv_per_card), " + compute ", GiB(compute), " + overhead ", GiB(overhead),
                     "), the card has ", GiB(c.total_bytes));
    return fit;
  }
  fit.fits = true;
  fit.reason = absl::StrCat(GiB(used), " per card of ", GiB(c.total_bytes),
                            " (llama.cpp reserves no fraction of memory)");
  std::string stem = model.repo_id.empty()
                         ? std::string("MODEL")
                         : std::string(model.repo_id.substr(model.repo_id.rfind('/') + 1));
  const bool given_file = !model.gguf_file.empty();
  fit.model_id_placeholder = !given_file;  // else no GGUF file is on record
  const std::string file = given_file
                               ? ShellWord(model.gguf_file)
                               : absl::StrCat(stem, "-", GgufFileType(w.weight_format), ".gguf");
  std::string command =
      absl::StrCat("llama-server -m ", file, " -ngl ",
                   model.num_layers > 0 ? model.num_layers + 1 : 999, " -c ", c.context * c.batch);
  if (c.batch > 1) absl::StrAppend(&command, " -np ", c.batch);
  if (std::string(kv.type) != "f16") {
    absl::StrAppend(&command, " -ctk ", kv.type, " -ctv ", kv.type);
  }
  fit.launch_command = std::move(command);
  if (!given_file) {
    fit.notes.push_back(absl::StrCat(
        "the .gguf file name is a placeholder: the record names no GGUF file; llama.cpp reads "
        "GGUF only (convert_hf_to_gguf.py, then llama-quantize to ",
        GgufFileType(w.weight_format), ")"));
  }
  fit.notes.push_back(absl::StrCat(
      "-ngl ", model.num_layers > 0 ? model.num_layers + 1 : 999,
      " puts every layer and the output layer on the GPU", cards > 1 ? "s" : "",
      "; -c is the cache shared by the -np slots (", c.context,
      " tokens each); --fit (on by default, 1 GiB margin per device) adjusts only what the "
      "command leaves unset"));
  if (cards > 1) {
    fit.notes.push_back(absl::StrCat(
        "-ts left out: with ", cards,
        " identical cards llama.cpp splits the layers in proportion to free memory, evenly; the "
        "layers run one card after another (no tensor parallelism)"));
  }
  return fit;
}

// Layers per vLLM KV cache group when two kinds of layers share the memory
// (vllm/v1/core/kv_cache_utils.py, read at vllm-project/vllm 001cabc1): the
// smaller kind's count, or the larger's when it is under 1.5x the smaller.
int VllmGroupSize(int kind_a, int kind_b) {
  const int fewer = std::min(kind_a, kind_b);
  const int more = std::max(kind_a, kind_b);
  return more < 1.5 * fewer ? more : fewer;
}

// A hybrid of attention and recurrent layers as vLLM 0.10.2-0.11 lays it
// out (runtime_fit.h, VllmKvLayout).
VllmKvLayout HybridKvLayout(int attention_layers, int recurrent_layers, double layer_token_bytes,
                            double state_layer_bytes, int64_t max_model_len) {
  VllmKvLayout out;
  out.full_layers = attention_layers;
  out.recurrent_layers = recurrent_layers;
  out.state_page_bytes = state_layer_bytes;
  out.block_tokens =
      kVllmBlockSize *
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(state_layer_bytes /
                                                          (kVllmBlockSize * layer_token_bytes))));
  const double page_bytes = static_cast<double>(out.block_tokens) * layer_token_bytes;
  out.group_size = VllmGroupSize(attention_layers, recurrent_layers);
  out.full_groups = static_cast<int>(CeilDiv(attention_layers, out.group_size));
  out.recurrent_groups = static_cast<int>(CeilDiv(recurrent_layers, out.group_size));
  out.padding_layers = out.Groups() * out.group_size - attention_layers - recurrent_layers;
  out.full_blocks = CeilDiv(max_model_len, out.block_tokens);
  out.blocks_per_request = out.full_groups * out.full_blocks + out.recurrent_groups;
  out.block_bytes = page_bytes * out.group_size;
  out.one_request_bytes =
      static_cast<double>(attention_layers * out.full_blocks + recurrent_layers) * page_bytes;
  return out;
}

}  // namespace

VllmBlocks VllmKvBlocks(double kv_cache_bytes, double kv_bytes_per_token, int64_t max_model_len) {
  return VllmKvBlocks(kv_cache_bytes,
                      VllmKvLayoutOf(RuntimeModel{}, kv_bytes_per_token, 0, max_model_len, 0));
}

VllmKvLayout VllmKvLayoutOf(const RuntimeModel& model, double kv_bytes_per_token,
                            double layer_token_bytes, int64_t max_model_len,
                            int max_num_batched_tokens) {
  VllmKvLayout out;
  const int layers = model.KvLayers();
  out.full_blocks = CeilDiv(max_model_len, kVllmBlockSize);
  const int window_layers =
      model.sliding_window > 0 ? std::min(model.sliding_window_layers, layers) : 0;
  const bool chunks_whole = window_layers > 0 && IsLlama4(model.model_type);
  if (window_layers <= 0 || layer_token_bytes <= 0 || chunks_whole) {
    // One group of every layer: a block is 16 tokens of all of them.
    out.full_layers = out.group_size = std::max(0, layers);
    out.full_groups = 1;
    out.blocks_per_request = out.full_blocks;
    // Llama 4 in vLLM 0.11: the hybrid manager is off by default for
    // chunked attention (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE
    // = 0, vllm-project/vllm PR #21761, until PR #29627 of 2025-12-16), and
    // unify_hybrid_kv_cache_specs makes each chunked layer full attention:
    // every layer keeps the whole context.
    out.chunked_layers_kept_whole = chunks_whole ? window_layers : 0;
    out.block_bytes = chunks_whole ? kVllmBlockSize * layer_token_bytes * layers
                                   : kVllmBlockSize * kv_bytes_per_token;
    out.one_request_bytes = static_cast<double>(out.full_blocks) * out.block_bytes;
    return out;
  }
  out.window_layers = window_layers;
  out.full_layers = layers - window_layers;
  out.window_kept = model.sliding_window - 1;
  out.window_tokens = std::min<int64_t>(out.window_kept + max_num_batched_tokens, max_model_len);
  out.window_blocks = CeilDiv(out.window_tokens, kVllmBlockSize) + 1;
  if (out.full_layers == 0) {
    // Every layer in the same window: one group.
    out.group_size = window_layers;
  } else {
    out.group_size = VllmGroupSize(out.full_layers, window_layers);
    out.full_groups = static_cast<int>(CeilDiv(out.full_layers, out.group_size));
  }
  out.window_groups = static_cast<int>(CeilDiv(window_layers, out.group_size));
  out.padding_layers = out.Groups() * out.group_size - layers;
  out.blocks_per_request =
      out.full_groups * out.full_blocks + out.window_groups * out.window_blocks;
  out.block_bytes = kVllmBlockSize * layer_token_bytes * out.group_size;
  out.one_request_bytes =
      static_cast<double>(out.full_layers * out.full_blocks + window_layers * out.window_blocks) *
      kVllmBlockSize * layer_token_bytes;
  return out;
}

std::optional<VllmKvLayout> VllmHybridKvLayout(const RuntimeModel& model,
                                               const InferenceSizing& sizing, int tp, int pp) {
  const int attention = model.KvLayers();
  if (model.recurrent_layers <= 0 || attention <= 0 || sizing.recurrent_state_bytes <= 0 ||
      sizing.context_length_tokens <= 0) {
    return std::nullopt;
  }
  tp = std::max(1, tp);
  pp = std::max(1, pp);
  const double sequences = std::max(1, sizing.batch_size);
  const double attention_bytes = sizing.model_kv_cache_bytes - sizing.recurrent_state_bytes;
  const double layer_token_bytes =
      attention_bytes /
      (sequences * static_cast<double>(sizing.context_length_tokens) * attention) /
      KvCacheDivisor(sizing, tp);
  const double state_layer_bytes =
      sizing.recurrent_state_bytes / (sequences * model.recurrent_layers) / tp;
  if (layer_token_bytes <= 0) return std::nullopt;
  return HybridKvLayout(static_cast<int>(CeilDiv(attention, pp)),
                        static_cast<int>(CeilDiv(model.recurrent_layers, pp)), layer_token_bytes,
                        state_layer_bytes, sizing.context_length_tokens);
}

int64_t VllmKvLayout::BlocksFor(int64_t sequences, int64_t max_model_len,
                                int max_num_batched_tokens) const {
  if (window_groups == 0) return blocks_per_request * sequences;
  // Each sequence keeps its own window; the step's batched tokens are shared.
  const int64_t tokens =
      std::min(sequences * window_kept + max_num_batched_tokens, sequences * max_model_len);
  const int64_t per_group = CeilDiv(tokens, kVllmBlockSize) + sequences;
  return full_groups * full_blocks * sequences + window_groups * per_group;
}

VllmBlocks VllmKvBlocks(double kv_cache_bytes, const VllmKvLayout& layout) {
  VllmBlocks out;
  if (kv_cache_bytes > 0 && layout.block_bytes > 0) {
    out.blocks = static_cast<int64_t>(std::floor(kv_cache_bytes / layout.block_bytes));
  }
  out.tokens = out.blocks / std::max(1, layout.Groups()) * layout.block_tokens;
  out.blocks_per_sequence = layout.blocks_per_request;
  if (out.blocks_per_sequence > 0) {
    out.max_concurrency =
        static_cast<double>(out.blocks) / static_cast<double>(out.blocks_per_sequence);
  }
  return out;
}

LlamaCppSwa LlamaCppSwaOf(const RuntimeModel& model, const InferenceSizing& sizing, int64_t context,
                          int64_t batch) {
  return LlamaCppSwaImpl(model, sizing, context, batch);
}

VllmDefaults VllmServeDefaults(double total_bytes, const std::string& device_name) {
  const bool large =
      total_bytes >= 70 * kGiB && !absl::StrContains(absl::AsciiStrToLower(device_name), "a100");
  return large ? VllmDefaults{8192, 1024} : VllmDefaults{2048, 256};
}

double SglangMemFractionStatic(double total_bytes, int parallel_size, double* reserved_mib) {
  const double mib = total_bytes / kMiB;
  const double p = std::max(1, parallel_size);
  double reserved = 0;
  if (mib < 35 * 1024) {
    reserved = (2.8 + p / 10) * 1024;  // T4, 4080, A10, L40, 4090, 5090
  } else if (mib < 90 * 1024) {
    reserved = (9.5 + p / 2) * 1024;  // H100, A100
  } else if (mib < 160 * 1024) {
    reserved = (12 + p / 2) * 1024;  // H20, H200
  } else {
    reserved = 32 * 1024;  // B200, MI300
  }
  if (reserved_mib != nullptr) *reserved_mib = reserved;
  return mib > 0 ? std::round((mib - reserved) / mib * 1000) / 1000 : 0;
}

double SglangLaterMemFractionStatic(double total_bytes, int parallel_size, double* reserved_mib) {
  const double mib = total_bytes / kMiB;
  const double p = std::max(1, parallel_size);
  // The card-size tiers' chunked prefill and CUDA graph batch defaults.
  struct Tier {
    double below_gib, chunked_prefill, graph_bs_small_tp, graph_bs_large_tp;
  };
  constexpr Tier kTiers[] = {{20, 2048, 8, 8},
                             {35, 2048, 24, 80},
                             {60, 4096, 32, 160},
                             {90, 8192, 256, 512},
                             {160, 8192, 256, 512}};
  Tier tier{0, 16384, 512, 512};
  for (const Tier& t : kTiers) {
    if (mib < t.below_gib * 1024) {
      tier = t;
      break;
    }
  }
  const double graph_bs = p < 4 ? tier.graph_bs_small_tp : tier.graph_bs_large_tp;
  double reserved =
      512 + std::max(tier.chunked_prefill, 2048.0) * 1.5 + graph_bs * 2 + p / 8 * 1024;
  if (mib > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  if (reserved_mib != nullptr) *reserved_mib = reserved;
  return mib > 0 ? std::round((mib - reserved) / mib * 1000) / 1000 : 0;
}

std::string RuntimeNotCheckedReason(Runtime runtime, const std::string& manufacturer,
                                    const DeviceSpec& device) {
  if (device.roofline_does_not_apply) {
    return "not checked: an on-chip SRAM design runs its own serving stack, not this runtime";
  }
  const std::string vendor = absl::AsciiStrToLower(manufacturer);
  const auto any_of = [&](std::initializer_list<const char*> names) {
    for (const char* name : names) {
      if (absl::StrContains(vendor, name)) return true;
    }
    return false;
  };
  switch (runtime) {
    case Runtime::kVllm:
    case Runtime::kSglang:
      if (any_of({"nvidia", "amd"})) return "";
      return absl::StrCat("not checked: the rules here are ",
                          runtime == Runtime::kVllm ? "vLLM's" : "SGLang's",
                          " CUDA and ROCm ones (NVIDIA, AMD); on ",
                          manufacturer.empty() ? "this device" : manufacturer,
                          " it runs through a platform plugin with its own, or not at all");
    case Runtime::kLlamaCpp:
      if (any_of({"nvidia", "amd", "apple", "intel", "huawei", "moore threads"})) return "";
      return absl::StrCat("not checked: llama.cpp has no GPU backend for ",
                          manufacturer.empty() ? "this device" : manufacturer,
                          " (CUDA, ROCm, Metal, SYCL, CANN and MUSA only)");
    case Runtime::kNone:
      break;
  }
  return "";
}

namespace {

// The modeled version's support of the model's family: a version that
// cannot load it (or only for pooling) gives no fit and no command, whatever
// its memory rules would say, which the reason keeps; an unknown family or
// a caveat is a note.
FamilySupport SupportOfModel(Runtime runtime, const RuntimeModel& model) {
  // llama.cpp loads the language model's architecture (a GGUF's) and the
  // vision or audio part from its own mmproj file.
  const std::string& family =
      model.family.empty() && runtime == Runtime::kLlamaCpp ? model.model_type : model.family;
  FamilySupport support = FamilySupportOf(runtime, family);
  if (family.empty()) {
    support.family = model.multimodal ? "this multimodal model (its wrapper's model_type is not "
                                        "on record)"
                                      : "this model (no model_type on record)";
  }
  return support;
}

void ApplyFamilySupport(Runtime runtime, const FamilySupport& support, RuntimeFit* fit) {
  const std::string text = FamilySupportText(runtime, fit->version, support);
  if (text.empty()) return;
  const bool loads = support.status == FamilySupportStatus::kSupported ||
                     support.status == FamilySupportStatus::kUnknown;
  if (loads) {
    fit->notes.push_back(text);
    return;
  }
  fit->reason = absl::StrCat(text, "; under its memory rules the plan ",
                             fit->fits ? "would fit" : absl::StrCat("would not: ", fit->reason));
  fit->fits = false;
  fit->launch_command.clear();
  fit->node_commands.clear();
  fit->model_id_placeholder = false;
}

}  // namespace

RuntimeFit FitRuntime(Runtime runtime, const RuntimeModel& model, const InferenceSizing& sizing,
                      const ResolvedWorkload& workload, const DeviceSpec& device,
                      const DevicePlan& plan, const std::string& manufacturer) {
  const std::string not_checked = RuntimeNotCheckedReason(runtime, manufacturer, device);
  if (!plan.fits || !not_checked.empty()) {
    RuntimeFit fit;
    fit.runtime = runtime;
    fit.version = runtime == Runtime::kVllm     ? kVllmVersion
                  : runtime == Runtime::kSglang ? kSglangVersion
                                                : kLlamaCppVersion;
    fit.reason = !not_checked.empty()
                     ? not_checked
                     : "the plan itself does not fit: no runtime runs it on these cards";
    return fit;
  }
  RuntimeFit fit;
  switch (runtime) {
    case Runtime::kVllm:
      fit = FitVllm(model, sizing, workload, device, plan);
      break;
    case Runtime::kSglang:
      fit = FitSglang(model, sizing, workload, device, plan);
      break;
    case Runtime::kLlamaCpp:
      fit = FitLlamaCpp(model, sizing, workload, device, plan);
      break;
    case Runtime::kNone:
      return fit;
  }
  ApplyFamilySupport(runtime, SupportOfModel(runtime, model), &fit);
  return fit;
}

bool LlamaCppCachesMtpBlocks(absl::string_view model_type) {
  return model_type == "glm4_moe" || model_type == "exaone_moe";
}

}  // namespace modelatlas::estimator
