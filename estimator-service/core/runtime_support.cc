#include "estimator-service/core/runtime_support.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "estimator-service/core/runtime_fit.h"

namespace modelatlas::estimator {
namespace {

using S = FamilySupportStatus;

// One runtime's support of one family.
struct Cell {
  S status = S::kUnknown;
  absl::string_view version;   // FamilySupport::first_version
  absl::string_view evidence;  // FamilySupport::evidence
};

constexpr Cell Yes() { return {S::kSupported, "", ""}; }
// Loaded, with something to say (a patch release of the modeled line, a
// backend, a limit).
constexpr Cell YesSince(absl::string_view version, absl::string_view evidence) {
  return {S::kSupported, version, evidence};
}
constexpr Cell YesBut(absl::string_view evidence) { return {S::kSupported, "", evidence}; }
constexpr Cell Later(absl::string_view version, absl::string_view evidence) {
  return {S::kLaterVersion, version, evidence};
}
constexpr Cell Pooling(absl::string_view evidence) { return {S::kPoolingOnly, "", evidence}; }
constexpr Cell No(absl::string_view evidence) { return {S::kNotSupported, "", evidence}; }
constexpr Cell Unknown(absl::string_view evidence) { return {S::kUnknown, "", evidence}; }

struct Row {
  absl::string_view family;
  Cell vllm, sglang, llama_cpp;
};

// Read from the runtimes' model registries and their history
// (docs/FORMULAS.md, "Which families each runtime loads", has the method):
// vLLM 0.11.x against the registry (vllm/model_executor/models/registry.py)
// and the release notes of 0.10.1-0.11.1 and the registries vLLM 0.14.1,
// 0.17.1 and 0.19.1 report (kaito-project/kaito's dumps of
// ModelRegistry.get_supported_archs()); SGLang 0.5.2 / 0.5.3rc0 (the last
// releases before PR #10975) by each model file's EntryClass at the tags'
// commits (b0d25e7, 86a32bb) and SGLang's own release index
// (docs/release_lookup/release_index.json) for first releases; llama.cpp at
// master b10076 (305ba519, 2026-07-21) by src/llama-arch.cpp and the
// converter's registered classes, each first build by the commit that added
// it. A family first released after the modeled version names that release
// and the pull request.
constexpr char kVllmPooling[] =
    "only through its pooling runner (embeddings, classification, scoring): no generation and no "
    "KV cache";
constexpr char kVllmEncoderDecoder[] =
    "vLLM 0.11 (the V1 engine alone) serves no encoder-decoder model but Whisper: BART, mBART, "
    "Florence-2 and Mllama were last in 0.10.2, and T5 was never in the registry";
constexpr char kSglangNone[] =
    "no SGLang model file registers it (python/sglang/srt/models, read at v0.5.2 and on main of "
    "2026-07-22); SGLang's Transformers fallback was not checked";
constexpr char kSglangPooling[] =
    "only as an embedding or reranking model: no generation and no KV cache";
constexpr char kLlamaCppPooling[] =
    "only as an embedding or reranking model (LLM_ARCH_BERT, LLM_ARCH_NOMIC_BERT): no "
    "generation";

constexpr Row kRows[] = {
    {"llama", Yes(), Yes(), Yes()},
    {"mistral", Yes(), Yes(), Yes()},
    {"mixtral", Yes(), Yes(), Yes()},
    {"qwen", Yes(), Yes(), Yes()},
    {"qwen2", Yes(), Yes(), Yes()},
    {"qwen2_moe", Yes(), Yes(), Yes()},
    {"qwen3", Yes(), Yes(), Yes()},
    {"qwen3_moe", Yes(), Yes(), Yes()},
    {"qwen3_next", Yes(),
     YesSince("SGLang 0.5.2", "sgl-project/sglang PR #10233, merged 2025-09-11 (not in 0.5.1)"),
     Yes()},
    {"gemma", Yes(), Yes(), Yes()},
    {"gemma2", Yes(), Yes(), Yes()},
    {"gemma3_text", Yes(), Yes(), Yes()},
    {"gemma3", Yes(), Yes(), Yes()},
    {"kimi_vl", Yes(),
     YesBut("models/kimi_vl.py since 0.4.6.post2 (sgl-project/sglang PR #5383, merged "
            "2025-04-29)"),
     YesBut("the text model since b6077 (ggml-org/llama.cpp PR #15051), the mmproj since b6285 "
            "(PR #15458)")},
    {"glm4v", Yes(),
     YesBut("models/glm4v.py since 0.5.0rc1 (sgl-project/sglang PR #8798, merged 2025-08-09); PR "
            "#14585 (first in 0.5.6.post1) fixed a server that did not start, so GLM-4.6V-Flash "
            "may need that release"),
     YesBut("the text model since b5974 (ggml-org/llama.cpp PR #14823), the mmproj since b7429 "
            "(PR #18042, which also changed the text conversion: text files made before it do "
            "not take the mmproj)")},
    {"glm4v_moe",
     YesBut("vLLM 0.11 loads Glm4vMoeForConditionalGeneration (first in 0.10.1), but GLM-4.6V's "
            "config.json keeps its rotary settings under rope_parameters, which 0.11 does not "
            "read: vLLM's GLM-4.6V recipe asks for 0.12.0 or later"),
     Yes(), Yes()},
    {"phi3_v", Yes(),
     No("no SGLang model file registers Phi3VForCausalLM (through v0.5.17; sgl-project/sglang "
        "issue #1108 is open); its Transformers fallback was not checked"),
     No("convert_hf_to_gguf.py has no Phi3VForCausalLM: ggml-org/llama.cpp PRs #7705 and #17687 "
        "were not merged")},
    {"minicpmv",
     YesBut("vLLM's minicpmv.py serves MiniCPM-V by its config's version: 2.5 and 2.6 since "
            "0.5.4 (vllm-project/vllm PR #4087), 4.5 since 0.10.2 (PR #23586)"),
     YesBut("SGLang's minicpmv.py serves MiniCPM-V 2.6 (sgl-project/sglang issue #2461); 2.5 "
            "and 4.5 were not found in it"),
     YesBut("through the legacy conversion (tools/mtmd/legacy-models: minicpmv-surgery.py, "
            "minicpmv-convert-image-encoder-to-gguf.py --minicpmv_version N, then "
            "convert_hf_to_gguf.py on the language model it extracts), not convert_hf_to_gguf.py "
            "alone; 2.5 from ggml-org/llama.cpp PR #7599, 2.6 from PR #8967 (b3598), 4.5 from PR "
            "#15575")},
    {"mllama", No(kVllmEncoderDecoder),
     YesBut("each image's 4 tiles x 1,601 positions are padding tokens in front of the request, "
            "in the same token pool as the text (python/sglang/srt/models/mllama.py "
            "pad_input_ids; sgl-project/sglang PR #1551, first in 0.3.4.post1)"),
     No("convert_hf_to_gguf.py has no MllamaForConditionalGeneration (ggml-org/llama.cpp issue "
        "#9663) and mtmd no Mllama projector; Ollama runs it with its own engine and files")},
    {"paligemma", Yes(),
     No("no SGLang model file registers PaliGemmaForConditionalGeneration (through v0.5.17); its "
        "Transformers fallback was not checked"),
     No("convert_hf_to_gguf.py has no PaliGemmaForConditionalGeneration: ggml-org/llama.cpp PRs "
        "#7553 and #24200 were not merged")},
    {"gemma4",
     Later("vLLM 0.19.0",
           "vllm-project/vllm PR #38826, merged 2026-04-02, named in v0.19.0's release notes, "
           "which ask for transformers 5.5.0 or later; not in 0.17.1's registry"),
     Later("SGLang 0.5.11",
           "sgl-project/sglang PR #21952, merged 2026-04-07, after v0.5.10 (a third-party "
           "version matrix gives 0.5.11)"),
     YesBut("LLM_ARCH_GEMMA4 from b8637 (ggml-org/llama.cpp PR #21309, merged 2026-04-02)")},
    {"phi", Yes(), Yes(), Yes()},
    {"phi3", Yes(), Yes(), Yes()},
    {"phimoe", Yes(), Yes(), Yes()},
    {"gpt2", Yes(), Yes(), Yes()},
    {"bert", Pooling(kVllmPooling), Pooling(kSglangPooling), Pooling(kLlamaCppPooling)},
    {"roberta", Pooling(kVllmPooling),
     No("SGLang's roberta.py registers only XLM-RoBERTa's classes (read at v0.5.2 and on main of "
        "2026-07-22)"),
     Pooling(kLlamaCppPooling)},
    {"xlm-roberta", Pooling(kVllmPooling), Pooling(kSglangPooling), Pooling(kLlamaCppPooling)},
    {"distilbert",
     No("no vLLM registry read (0.10 to 0.25.1) has a DistilBERT class; the Transformers backend "
        "was not checked"),
     No(kSglangNone), Pooling(kLlamaCppPooling)},
    {"nomic_bert", Pooling(kVllmPooling), No(kSglangNone), Pooling(kLlamaCppPooling)},
    {"falcon", Yes(), No(kSglangNone), Yes()},
    {"deepseek", Yes(), Yes(), Yes()},
    {"deepseek_v2", Yes(), Yes(), Yes()},
    {"deepseek_v3", Yes(), Yes(), Yes()},
    {"kimi_k2", Yes(), Yes(), Yes()},
    {"deepseek_v32",
     YesSince("vLLM 0.11.0", "DeepSeek-V3.2-Exp in v0.11.0's release notes (#25896)"),
     Later("SGLang 0.5.3", "sgl-project/sglang PR #11061, merged 2025-10-06"),
     YesBut("LLM_ARCH_DEEPSEEK32 with its indexer cache from b9411 (ggml-org/llama.cpp PR #23346, "
            "merged 2026-05-29)")},
    {"kimi_k25",
     Later("vLLM 0.15.0", "vllm-project/vllm PR #33131, merged 2026-01-27; not in 0.14.1"),
     Later("SGLang 0.5.9",
           "sgl-project/sglang PR #17789, merged 2026-01-27; not in 0.5.8.post1 (SGLang's "
           "release index)"),
     YesBut("from b8003 (ggml-org/llama.cpp PR #19170, merged 2026-02-11)")},
    {"glm", Yes(), No(kSglangNone), Yes()},
    {"glm4", Yes(), Yes(), Yes()},
    {"chatglm", Yes(), Yes(), Yes()},
    {"glm4_moe", Yes(), Yes(), Yes()},
    {"glm4_moe_lite",
     Later("vLLM 0.15.0", "vllm-project/vllm PR #31386, merged 2026-01-19; not in 0.14.1"),
     Later("SGLang 0.5.8", "sgl-project/sglang PR #17247, merged 2026-01-20"),
     YesBut("from b7778 (ggml-org/llama.cpp PR #18936, merged 2026-01-19)")},
    {"step3p5",
     Later("vLLM 0.15.1",
           "vllm-project/vllm PR #33523 (step3p5.py, step3p5_mtp.py), merged 2026-02-02; first "
           "in v0.15.1"),
     Later("SGLang 0.5.9",
           "sgl-project/sglang PR #18084 (step3p5.py), merged 2026-02-03; its first tagged "
           "release not confirmed (launch images were per-PR builds)"),
     YesBut("LLM_ARCH_STEP35 from b7964 (ggml-org/llama.cpp PR #19283, convert_hf_to_gguf.py "
            "Step35Model); its converter dropped the three multi-token-prediction layers until "
            "b9480 (PR #23274), which keeps them as blocks 45-47 for speculative decoding")},
    {"mimo_v2_flash",
     Later("vLLM 0.14.0",
           "vllm-project/vllm PR #30836 (mimo_v2_flash.py), merged 2025-12-19, after v0.13.0's "
           "release branch; not checked against the v0.14.0 tag"),
     Later("SGLang 0.5.7",
           "sgl-project/sglang PR #15207 (mimo_v2_flash.py, mimo_v2_flash_nextn.py), merged "
           "2025-12-19; v0.5.7 the first tag that contains it"),
     YesBut("LLM_ARCH_MIMO2 from b7534 (ggml-org/llama.cpp PR #18328, convert_hf_to_gguf.py "
            "MimoV2Model), its sliding layers in the iSWA cache; its converter dropped the three "
            "multi-token-prediction layers until b9055 (PR #22493), which keeps them as blocks "
            "48-50 that llama.cpp does not load")},
    {"glm_moe_dsa",
     Later("vLLM 0.16.0",
           "vllm-project/vllm PR #34124, merged 2026-02-09; vllm-project/recipes' GLM-5 "
           "min_vllm_version 0.16.0; in 0.17.1's registry"),
     Later("SGLang 0.5.9", "sgl-project/sglang PR #18521, merged 2026-02-10"),
     YesBut("from b8036 (ggml-org/llama.cpp PR #19460, merged 2026-02-13), as plain multi-head "
            "latent attention: the indexer's weights load, it does not run")},
    {"gpt_neox", Yes(), No(kSglangNone), Yes()},
    {"gpt_neo", No("no vLLM registry read (0.10 to 0.25.1) has GPTNeoForCausalLM"), No(kSglangNone),
     No("no LLM_ARCH and no converter class at b10076")},
    {"gptj", Yes(), Later("SGLang 0.5.9", "sgl-project/sglang PR #7839, merged 2026-01-30"),
     No("LLM_ARCH_GPTJ is a name only at b10076: no graph builder, no converter class")},
    {"bloom", Yes(), No(kSglangNone), Yes()},
    {"opt", Yes(),
     YesSince("SGLang 0.5.2", "sgl-project/sglang PR #10165, merged 2025-09-09 (not in 0.5.1)"),
     No("no LLM_ARCH and no converter class at b10076")},
    {"gpt_bigcode", Yes(), Yes(), Yes()},
    {"stablelm", Yes(), Yes(), Yes()},
    {"starcoder2", Yes(), Later("SGLang 0.5.3", "sgl-project/sglang PR #10609, merged 2025-10-03"),
     Yes()},
    {"olmo", Yes(), Yes(), Yes()},
    {"olmo2", Yes(), Yes(), Yes()},
    {"olmo3", Yes(), Later("SGLang 0.5.4", "sgl-project/sglang PR #11396, merged 2025-10-20"),
     Yes()},
    {"olmoe", Yes(), Yes(), Yes()},
    {"gpt_oss", Yes(), Yes(), Yes()},
    {"t5", No(kVllmEncoderDecoder),
     No("no SGLang model file registers T5ForConditionalGeneration (T5 appears only as a "
        "diffusion text encoder)"),
     No("llama-server has no encoder path: T5 runs only in llama-cli / llama-completion "
        "(ggml-org/llama.cpp PR #8141, #8993)")},
    {"t5gemma", No(kVllmEncoderDecoder), No(kSglangNone),
     No("no T5Gemma architecture in src/llama-arch.cpp and no converter class at b10076")},
    {"bart", No(kVllmEncoderDecoder), No(kSglangNone),
     No("no BART architecture in src/llama-arch.cpp and no converter class at b10076")},
    {"mbart", No(kVllmEncoderDecoder), No(kSglangNone),
     No("no mBART architecture in src/llama-arch.cpp and no converter class at b10076")},
    {"granite", Yes(), Yes(), Yes()},
    {"granitemoe", Yes(), Yes(), Yes()},
    {"granitemoehybrid", Yes(),
     Later("SGLang 0.5.9",
           "sgl-project/sglang PR #18040, merged 2026-02-15, before PR #18389 (2026-02-16), "
           "which 0.5.9's release notes name"),
     Yes()},
    {"exaone", Yes(), Yes(), Yes()},
    {"exaone4", Yes(),
     Later("SGLang 0.5.9",
           "sgl-project/sglang PR #8205, merged 2026-01-27; not in 0.5.8.post1 (SGLang's "
           "release index)"),
     Yes()},
    {"exaone_moe",
     Later("vLLM 0.14.0",
           "vllm-project/vllm PR #31621 (exaone_moe.py, registered as ExaoneMoEForCausalLM), "
           "merged in the week to 2026-01-16; in 0.14.0's documentation and 0.14.1's registry"),
     Later("SGLang 0.5.9", "sgl-project/sglang PR #16294 (exaone_moe.py), merged 2026-01-30"),
     YesBut("LLM_ARCH_EXAONE_MOE from b7727 (ggml-org/llama.cpp PR #18543, merged 2026-01-13); "
            "the multi-token-prediction block the converter keeps is loaded and not run")},
    {"internlm2", Yes(), Yes(), Yes()},
    {"seed_oss", Yes(),
     No("sgl-project/sglang PRs #9448 and #30930 were never merged (SGLang's list of "
        "Transformers-fallback architectures, issue #18458, names it)"),
     Yes()},
    {"mimo", Yes(), Yes(),
     No("MiMoForCausalLM has no converter class at b10076 (ggml-org/llama.cpp issue #13218 "
        "open); only MiMo-V2 (mimo2) runs")},
    {"dots1", Yes(), No(kSglangNone), Yes()},
    {"afmoe",
     YesSince("vLLM 0.11.2",
              "vllm-project/vllm PR #28332 (afmoe.py), merged in the week to 2025-11-21: not in "
              "0.11.0's registry, in 0.11.2's; whether 0.11.1 has it was not confirmed"),
     Later("SGLang 0.5.8", "sgl-project/sglang PR #13216 (afmoe.py), merged 2026-01-16"),
     YesBut("LLM_ARCH_AFMOE from b7061 (ggml-org/llama.cpp PR #16477, merged 2025-11-14), its "
            "sliding layers in the iSWA cache")},
    {"smollm3",
     YesBut("through vLLM's Transformers backend (TransformersForCausalLM), not a model of its "
            "own (v0.10.1 release notes, #22665)"),
     No(kSglangNone), Yes()},
    {"cohere", Yes(), Yes(), Yes()},
    {"cohere2", Yes(), Yes(), Yes()},
    {"minimax_m2",
     YesSince("vLLM 0.11.1",
              "vllm-project/vllm PR #27535, merged 2025-10-26; 0.11.0 refuses "
              "MiniMaxM2ForCausalLM"),
     Later("SGLang 0.5.4.post1", "sgl-project/sglang PR #12129, merged 2025-10-26"), Yes()},
    {"ernie4_5", Yes(), Yes(), Yes()},
    {"ernie4_5_moe", Yes(), Yes(), Yes()},
    {"llama4", Yes(), Yes(), Yes()},
    {"llama4_text",
     YesBut("the text-only Llama4ForCausalLM is registered from vLLM 0.10.1 (vllm-project/vllm "
            "PR #17818, committed 2025-07-26; the only commit on main to add it)"),
     Yes(), Yes()},
    {"jamba", Yes(), No(kSglangNone), Yes()},
    // DeciLMForCausalLM (vLLM's and SGLang's nemotron_nas.py; llama.cpp's
    // LLM_ARCH_DECI, convert_hf_to_gguf.py DeciModel).
    {"nemotron-nas", Yes(), Yes(), Yes()},
    {"bamba", Yes(),
     No("no SGLang model file registers BambaForCausalLM (sgl-project/sglang issue #18458 lists "
        "it under the Transformers fallback, which was not checked)"),
     YesBut("since b5868 (ggml-org/llama.cpp PR #13550, \"Granite Four\", merged 2025-07-11)")},
    {"falcon_h1", Yes(), Later("SGLang 0.5.3", "sgl-project/sglang PR #10988, merged 2025-10-02"),
     Yes()},
    {"nemotron_h", Yes(),
     Later("SGLang 0.5.3.post1", "sgl-project/sglang PR #10909, merged 2025-10-08"), Yes()},
    {"lfm2", Yes(),
     Later("SGLang 0.5.9",
           "sgl-project/sglang PR #16890, merged 2026-01-22, after 0.5.8's cut (SGLang's "
           "release index)"),
     Yes()},
    {"lfm2_moe",
     YesSince("vLLM 0.11.1 (probably)",
              "LFM2-8B-A1B and transformers' lfm2_moe appeared on 2025-10-07, after 0.11.0; in "
              "0.14.1's registry; the pull request was not found"),
     Later("SGLang 0.5.9", "sgl-project/sglang PR #17997, merged 2026-02-11"),
     YesBut("from b6709 (ggml-org/llama.cpp PR #16464, merged 2025-10-07)")},
    {"lfm2_vl",
     Later("vLLM 0.14.0",
           "vllm-project/vllm PR #31758 (January 2026); in 0.14.1's registry, not in December "
           "2025's main"),
     Later("SGLang 0.5.10",
           "sgl-project/sglang PR #21230, merged 2026-04-04, after v0.5.10rc0 "
           "and before the release/v0.5.10 branch was cut"),
     Yes()},
    {"kimi_linear",
     YesSince("vLLM 0.11.1", "vllm-project/vllm PR #27809, merged 2025-10-30; 0.11.0 refuses it"),
     Later("SGLang 0.5.4.post2", "sgl-project/sglang PR #12469, merged 2025-10-31"),
     YesBut("from b7957 (ggml-org/llama.cpp PR #18755, merged 2026-02-06)")},
    {"qwen3_5",
     Later("vLLM 0.17.0",
           "vllm-project/vllm PR #34110; 0.16.0 refuses Qwen3.5 (\"not supported for now\"); in "
           "0.17.1's registry"),
     Later("SGLang 0.5.9", "sgl-project/sglang PR #18489, merged 2026-02-09"),
     YesBut("from b7990 (ggml-org/llama.cpp PR #19468, merged 2026-02-10)")},
    {"mamba", Yes(), No(kSglangNone), Yes()},
    {"falcon_mamba", Yes(), No(kSglangNone), Yes()},
    {"mamba2", Yes(),
     No("SGLang has Mamba-2 only as a mixer inside hybrids (PR #10988), no Mamba2ForCausalLM"),
     Yes()},
    {"llava", Yes(),
     YesBut("LlavaForConditionalGeneration, mainly for Pixtral-type checkpoints; the llava "
            "format's own classes (lmms-lab) run"),
     YesBut("the language model; a CLIP tower's mmproj file only through the legacy "
            "llava_surgery.py and convert_image_encoder_to_gguf.py scripts")},
    {"llava_next", Yes(),
     No("no class for Hugging Face's LlavaNextForConditionalGeneration; lmms-lab's "
        "llava-format checkpoints run"),
     YesBut("through the legacy llava_surgery_v2.py conversion only")},
    {"llava_onevision", Yes(),
     No("no class for Hugging Face's LlavaOnevisionForConditionalGeneration; lmms-lab's "
        "LlavaQwenForCausalLM checkpoints run"),
     No("no converter class at b10076")},
    {"mistral3", Yes(), Yes(), Yes()},
    {"qwen2_vl", Yes(), Yes(), Yes()},
    {"qwen2_5_vl", Yes(), Yes(), Yes()},
    {"qwen2_audio", Yes(), Yes(), Yes()},
    {"qwen3_vl", YesSince("vLLM 0.11.0", "Qwen3-VL in v0.11.0's release notes (#24727)"),
     Later("SGLang 0.5.3", "sgl-project/sglang PR #10323, merged 2025-09-23, after 0.5.3rc0"),
     YesBut("from b6887 (ggml-org/llama.cpp PR #16780, merged 2025-10-30)")},
    {"internvl_chat", Yes(), Yes(), Yes()},
    {"internvl", Yes(),
     No("no class for Hugging Face's InternVLForConditionalGeneration (InternVL*-hf) on main of "
        "2026-07-22"),
     No("tools/mtmd/README.md at b10076: InternVL3-*-hf checkpoints are not converted")},
    {"h2ovl_chat", Yes(), No(kSglangNone),
     No("H2OVLChatModel is in neither converter map (text nor mmproj) of llama.cpp's 2026 "
        "converter, and no pull request adds it; mtmd has no H2OVL tiling")},
    {"idefics3", Yes(), No(kSglangNone),
     YesBut("the vision tower's mmproj from b5169 (PR #13050); Idefics3-8B's language model's "
            "conversion was not checked")},
    {"smolvlm", Yes(), No(kSglangNone), Yes()},
    {"deepseek_vl_v2", Yes(), Yes(),
     No("DeepseekVLV2ForCausalLM has no converter class at b10076")},
    {"deepseek_ocr",
     YesSince("vLLM 0.11.1",
              "vllm-project/vllm PR #27247, merged 2025-10-22; 0.11.0 refuses "
              "DeepseekOCRForCausalLM"),
     Later("SGLang 0.5.4", "sgl-project/sglang PR #11891, merged 2025-10-23"),
     YesBut("from b8530 (ggml-org/llama.cpp PR #17400, merged 2026-03-25)")},
};

// Language models inside a wrapper, and wrappers of one family: the same
// row (a Gemma 4 text checkpoint is Gemma 4 to every runtime; Qwen3.5's MoE
// and Qwen3-VL's MoE arrived with their dense models).
constexpr std::pair<absl::string_view, absl::string_view> kAliases[] = {
    {"gemma4_text", "gemma4"},
    {"qwen3_5_text", "qwen3_5"},
    {"qwen3_5_moe_text", "qwen3_5"},
    {"qwen3_5_moe", "qwen3_5"},
    {"qwen3_vl_moe", "qwen3_vl"},
    // mT5 runs in T5's classes in each runtime (llama.cpp converts
    // MT5ForConditionalGeneration as T5).
    {"mt5", "t5"},
};

absl::string_view RowFamily(absl::string_view family) {
  for (const auto& [alias, row] : kAliases) {
    if (family == alias) return row;
  }
  return family;
}

const Row* FindRow(absl::string_view family) {
  const absl::string_view key = RowFamily(family);
  for (const Row& row : kRows) {
    if (row.family == key) return &row;
  }
  return nullptr;
}

}  // namespace

FamilySupport FamilySupportOf(Runtime runtime, absl::string_view family) {
  FamilySupport out;
  out.family = std::string(family);
  const Row* row = FindRow(family);
  if (row == nullptr) return out;
  const Cell& cell = runtime == Runtime::kVllm     ? row->vllm
                     : runtime == Runtime::kSglang ? row->sglang
                                                   : row->llama_cpp;
  out.status = cell.status;
  out.first_version = std::string(cell.version);
  out.evidence = std::string(cell.evidence);
  return out;
}

std::vector<std::string> FamiliesWithSupportOnRecord() {
  std::vector<std::string> out;
  for (const auto& [alias, row] : kAliases) out.emplace_back(alias);
  for (const Row& row : kRows) out.emplace_back(row.family);
  std::sort(out.begin(), out.end());
  return out;
}

std::string FamilySupportText(Runtime runtime, const std::string& version,
                              const FamilySupport& support) {
  const std::string family = support.family.empty() ? "this family" : support.family;
  const std::string name = runtime == Runtime::kVllm     ? "vLLM"
                           : runtime == Runtime::kSglang ? "SGLang"
                                                         : "llama.cpp";
  switch (support.status) {
    case S::kUnknown:
      return absl::StrCat("whether ", version, " loads ", family, " is not on record",
                          support.evidence.empty() ? "" : absl::StrCat(" (", support.evidence, ")"),
                          ": the figures apply its memory rules as if it did");
    case S::kSupported:
      if (support.first_version.empty() && support.evidence.empty()) return "";
      if (support.first_version.empty()) {
        return absl::StrCat(name, " loads ", family, ": ", support.evidence);
      }
      return absl::StrCat(family, " needs ", support.first_version, " or later (", support.evidence,
                          ")");
    case S::kLaterVersion:
      return absl::StrCat(version, " cannot load ", family, ": first in ", support.first_version,
                          " (", support.evidence, ")");
    case S::kPoolingOnly:
      return absl::StrCat(version, " serves ", family, " ", support.evidence,
                          ": the generation rules here do not apply");
    case S::kNotSupported:
      return absl::StrCat(version, " cannot load ", family, ": ", support.evidence);
  }
  return "";
}

}  // namespace modelatlas::estimator
