#include "common/formats/hf_config.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/formats/json_depth.h"
#include "common/records/bounds.h"
#include "common/status/errors.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace modelatlas {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr char kField[] = "hf_config_json";

class Config {
 public:
  explicit Config(const Struct& s) : fields_(s.fields()) {}

  // The first present key among `keys` (its name in *found, when given).
  const Value* Find(std::initializer_list<const char*> keys, const char** found = nullptr) const {
    for (const char* key : keys) {
      auto it = fields_.find(key);
      if (it != fields_.end() && it->second.kind_case() != Value::kNullValue) {
        if (found != nullptr) *found = key;
        return &it->second;
      }
    }
    return nullptr;
  }
  // The first present key among `keys` as a whole number, or `fallback`.
  absl::StatusOr<int64_t> Int(std::initializer_list<const char*> keys, int64_t fallback) const {
    const char* key = *keys.begin();
    const Value* v = Find(keys, &key);
    if (v == nullptr) return fallback;
    if (v->kind_case() != Value::kNumberValue || v->number_value() < 0 ||
        v->number_value() != std::floor(v->number_value()) || v->number_value() > 1e15) {
      return InvalidFieldError(kField,
                               absl::StrCat("\"", key, "\" must be a non-negative whole number"));
    }
    return static_cast<int64_t>(v->number_value());
  }
  absl::StatusOr<int64_t> Required(std::initializer_list<const char*> keys) const {
    absl::StatusOr<int64_t> value = Int(keys, -1);
    if (value.ok() && *value < 0) {
      return InvalidFieldError(kField, absl::StrCat("missing \"", *keys.begin(), "\""));
    }
    return value;
  }
  bool Bool(const char* key, bool fallback) const {
    const Value* v = Find({key});
    return v != nullptr && v->kind_case() == Value::kBoolValue ? v->bool_value() : fallback;
  }
  // How many entries of the list `key` are the number `value`; -1 without
  // the list or with an empty one (transformers reads [] as "not given").
  int CountNumbers(const char* key, double value) const {
    const Value* v = Find({key});
    if (v == nullptr || v->kind_case() != Value::kListValue || v->list_value().values_size() == 0) {
      return -1;
    }
    int n = 0;
    for (const Value& item : v->list_value().values()) {
      if (item.kind_case() == Value::kNumberValue && item.number_value() == value) ++n;
    }
    return n;
  }
  // How many entries of the list `key` equal `value`; -1 without the list.
  int CountStrings(const char* key, const std::string& value) const {
    const Value* v = Find({key});
    if (v == nullptr || v->kind_case() != Value::kListValue) return -1;
    int n = 0;
    for (const Value& item : v->list_value().values()) {
      if (item.kind_case() == Value::kStringValue && item.string_value() == value) ++n;
    }
    return n;
  }
  std::string String(const char* key) const {
    const Value* v = Find({key});
    return v != nullptr && v->kind_case() == Value::kStringValue ? v->string_value() : "";
  }

 private:
  const google::protobuf::Map<std::string, Value>& fields_;
};

// Qwen3-Next's hybrid blocks: Qwen3-Next and Qwen3.5's language models.
bool HasQwen3NextBlocks(const std::string& type) {
  return type == "qwen3_next" || type == "qwen3_5_text" || type == "qwen3_5_moe_text";
}

// Families whose decoder blocks this reader knows.
const std::set<std::string>& KnownTypes() {
  static const auto* types = new std::set<std::string>{
      "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2",
      "phi3", "gpt2", "bert", "falcon", "deepseek_v2", "deepseek_v3", "gemma3_text", "gpt_neox",
      "olmoe", "gpt_oss", "t5", "phi",
      // mT5 (MT5ForConditionalGeneration): T5 v1.1's stacks under MT5Config's
      // defaults (gated GELU, untied).
      "mt5",
      // RoBERTa and XLM-R (RobertaModel, XLMRobertaModel): BERT's layout
      // and keys; the position table is max_position_embeddings rows (514:
      // two past padding_idx), type_vocab_size 1.
      "roberta", "xlm-roberta",
      // DistilBERT (DistilBertModel): BERT's blocks under other keys (dim,
      // hidden_dim, n_layers, n_heads), no token types, no pooler.
      // Nomic BERT (NomicBertModel, remote code: nomic-embed-text): rotary
      // positions, a fused Wqkv, a SwiGLU MLP, biases by flag, no pooler.
      "distilbert", "nomic_bert",
      // Kimi K2: DeepSeek-V3's blocks (DeepseekV3ForCausalLM) at other sizes;
      // DeepSeek-V3.2 (and V3.2-Exp): V3's blocks with a lightning indexer;
      // GLM-5 and 5.1 (glm_moe_dsa, GlmMoeDsaForCausalLM: vLLM and SGLang
      // subclass DeepseekV2ForCausalLM) the same blocks at their own sizes.
      "kimi_k2", "deepseek_v32", "glm_moe_dsa",
      // Phi-3.5-MoE and SlimMoE's Phi-mini/tiny-MoE: Mixtral's experts
      // behind LayerNorms, biased attention and output head.
      "phimoe",
      // Llama's blocks with other biases, norms or key names (see
      // ArchitectureFromRoot): OLMo 2 and 3, Granite 3, EXAONE 4, Qwen (v1),
      // GLM-4 (glm, glm4, chatglm), StarCoder2, InternLM2, Seed-OSS.
      "olmo2", "olmo3", "granite", "exaone4", "qwen", "glm", "glm4", "chatglm", "starcoder2",
      "internlm2", "seed_oss",
      // EXAONE 3.0 and 3.5 (ExaoneForCausalLM, remote code): Llama's blocks
      // under other key names (num_layers; the weights' names change no
      // count); tied by default (ExaoneConfig).
      "exaone",
      // MiMo-7B: Qwen2's blocks and a multi-token-prediction layer (MiMoMTPLayers).
      "mimo",
      // dots.llm1: DeepSeek-V3's routed and shared experts behind Qwen3's
      // attention (per-head QK RMSNorm, no MLA).
      "dots1",
      // Arcee's Trinity (AfmoeForCausalLM, modeling_afmoe.py): dense layers
      // first (num_dense_layers), then DeepSeek-V3's routed and shared
      // experts with a router bias (expert_bias); attention with per-head
      // QK norms and a sigmoid output gate (gate_proj, h x heads x head_dim);
      // four norms a layer; three sliding-window layers in four.
      "afmoe",
      // K-EXAONE (ExaoneMoeForCausalLM): EXAONE 4.0's attention (per-head
      // QK norms, three sliding-window layers in four) over dense layers
      // first, then routed experts with a router bias and shared experts;
      // its multi-token-prediction layer (mtp.*) a dense decoder layer on
      // the model's embedding and head (ExaoneMoeLayers).
      "exaone_moe",
      // SmolLM3: Llama's blocks; every fourth layer skips the rotary
      // embedding (no_rope_layers), which changes no weight and no cache.
      "smollm3",
      // Decoders with learned or ALiBi positions, LayerNorms and biases:
      // OPT, GPT-Neo, BLOOM, and StarCoder and SantaCoder (gpt_bigcode:
      // GPT-2's blocks with multi-query attention) (ArchitectureFromRoot).
      "opt", "gpt_neo", "bloom", "gpt_bigcode",
      // GPT-J (a parallel block behind one LayerNorm, a biased output head)
      // and StableLM (Llama's blocks behind LayerNorms).
      "gptj", "stablelm",
      // Command R, Aya Expanse (cohere) and Command R7B, Command A (cohere2):
      // a parallel block behind one LayerNorm without bias; OLMo (v1): norms
      // without parameters.
      "cohere", "cohere2", "olmo",
      // Mixtures of experts: GLM-4.5/4.6 (glm4_moe), GLM-4.7-Flash
      // (glm4_moe_lite: DeepSeek-V3's blocks), MiniMax-M2, ERNIE 4.5, and
      // Granite 3.0/3.1 MoE and PowerMoE (granitemoe: Granite's blocks with
      // Mixtral's experts of intermediate_size).
      "glm4_moe", "glm4_moe_lite", "minimax_m2", "ernie4_5", "ernie4_5_moe", "granitemoe",
      // Llama 4's language model (Llama4ForConditionalGeneration's text_config).
      "llama4_text",
      // Hybrid and state-space models (HybridArchitecture below).
      "jamba", "falcon_h1", "qwen3_next", "nemotron_h", "granitemoehybrid", "lfm2", "lfm2_moe",
      "kimi_linear",
      // Bamba (BambaForCausalLM): Granite 4.0 H's Mamba-2 and attention
      // layers without experts, each with a gated MLP of intermediate_size;
      // attn_layer_indices names the attention layers.
      "bamba",
      // Qwen3.5 and Qwen3.6's language models (qwen3_5 / qwen3_5_moe's
      // text_config): Qwen3-Next's blocks, the Gated DeltaNet projections
      // stored apart (in_proj_qkv, in_proj_z, in_proj_b, in_proj_a: the same
      // count as the fused ones).
      "qwen3_5_text", "qwen3_5_moe_text",
      // BART (BartModel, BartForConditionalGeneration): an encoder and a
      // decoder of post-norm blocks with biased attention and a plain GELU
      // MLP, each stack with its own learned position table (2 offset rows)
      // and a LayerNorm after the embedding; one shared token embedding, the
      // output head tied to it.
      "bart",
      // mBART (MBartModel, MBartForConditionalGeneration): BART's stacks
      // with pre-norm blocks and, beside each stack's embedding LayerNorm,
      // a final one (MBartEncoder's and MBartDecoder's layer_norm, built
      // whatever normalize_before and add_final_layer_norm say).
      "mbart",
      // Gemma 4's language model: sliding-window layers and full-attention
      // ones at their own head width and KV heads; the E models' per-layer
      // inputs and KV-shared layers (Gemma4Layers).
      "gemma4_text",
      // Llama-3.3-Nemotron-Super-49B and Llama-3.1-Nemotron-Ultra-253B
      // (DeciLMForCausalLM): Llama's blocks, each layer's attention and MLP
      // sized or left out by block_configs (NemotronNasLayers).
      "nemotron-nas"};
  return *types;
}

// State-space models without attention (StateSpaceArchitecture below).
const std::set<std::string>& StateSpaceTypes() {
  static const auto* types = new std::set<std::string>{"mamba", "falcon_mamba", "mamba2"};
  return *types;
}

// Multimodal wrappers this reader counts: a language model (text_config,
// or the top level for Qwen2-VL) and its vision or audio parts.
const std::set<std::string>& MultimodalTypes() {
  static const auto* types = new std::set<std::string>{
      "gemma3", "llava", "llama4", "mistral3", "qwen2_5_vl", "qwen2_audio", "qwen2_vl", "qwen3_5",
      "qwen3_5_moe", "qwen3_vl", "qwen3_vl_moe", "lfm2_vl",
      // LLaVA-NeXT (LLaVA-1.6): LLaVA's tower and projector and the
      // image_newline vector (text hidden size) it appends to each row;
      // LLaVA-OneVision the same on a SigLIP tower and Qwen2.
      "llava_next", "llava_onevision",
      // InternVL 2, 2.5, 3 and 3.5: InternVLChatModel (remote code:
      // llm_config) and transformers' InternVLForConditionalGeneration.
      // H2OVL-Mississippi: InternVLChatModel's tower, mlp1 and untied
      // language model (vLLM's H2OVLChatModel subclasses it).
      "internvl_chat", "internvl", "h2ovl_chat",
      // Idefics3 and SmolVLM (SmolVLM's classes subclass Idefics3's): a
      // SigLIP tower without its head, a pixel-shuffle connector, Llama.
      "idefics3", "smolvlm",
      // PaliGemma and PaliGemma 2 (PaliGemmaForConditionalGeneration): a
      // SigLIP tower without its pooling head, one biased linear to the
      // text width, Gemma's or Gemma 2's language model (text_config).
      "paligemma",
      // Phi-3-vision and Phi-3.5-vision (Phi3VForCausalLM, remote code): Phi-3
      // mini at the top level, CLIP ViT-L/14-336 (img_processor) and the HD
      // transform's separators and two-layer projection (embd_layer).
      "phi3_v",
      // GLM-4.1V and GLM-4.6V-Flash (Glm4vForConditionalGeneration): GLM-4's
      // blocks with q/k/v biases (text_config), a ViT of RMSNorms and
      // unbiased linears with a 3-D patch conv, a learned position table and
      // a downsampling conv (Glm4vVisionModel), its GLU patch merger.
      "glm4v",
      // GLM-4.5V and GLM-4.6V (Glm4vMoeForConditionalGeneration): GLM-4.5's
      // MoE blocks (text_config, glm4v_moe_text) under GLM-4.1V's ViT
      // (Glm4vMoeVisionModel subclasses Glm4vVisionModel) and merger.
      "glm4v_moe",
      // MiniCPM-V 2.5, 2.6 and 4.5 (MiniCPMV, remote code): the language
      // model at the top level (Llama 3's, Qwen2's or Qwen3's by version),
      // a SigLIP tower without its head and a resampler.
      "minicpmv",
      // Llama 3.2 Vision (MllamaForConditionalGeneration): Llama's blocks with
      // cross-attention layers among them (text_config
      // cross_attention_layers), the tiled Mllama ViT and one biased linear.
      "mllama",
      // Kimi K2.5 and K2.6: Kimi K2's DeepSeek-V3 model (text_config),
      // the MoonViT tower and its patch merger.
      "kimi_k25",
      // Kimi-VL (KimiVLForConditionalGeneration): the same MoonViT and
      // patch merger (KimiVLMultiModalProjector) over a DeepSeek-V3-style
      // MoE language model (text_config; Moonlight-16B-A3B's shape).
      "kimi_vl",
      // DeepSeek-OCR (DeepseekOCRForCausalLM): DeepSeek-V2's MoE model
      // (language_config), the DeepEncoder (SAM ViT-B and CLIP-L) and a
      // linear projector; DeepSeek-VL2 and DeepSeek-OCR-2 share the
      // model_type and are refused by architectures.
      "deepseek_vl_v2",
      // Gemma 4 (Gemma4ForConditionalGeneration): gemma4_text, its own ViT
      // and embed_vision, and E2B's and E4B's audio conformer and
      // embed_audio.
      "gemma4"};
  return *types;
}

std::set<std::string> AllTypes() {
  std::set<std::string> all = KnownTypes();
  all.insert("t5gemma");
  all.insert("step3p5");
  all.insert("mimo_v2_flash");
  all.insert(MultimodalTypes().begin(), MultimodalTypes().end());
  all.insert(StateSpaceTypes().begin(), StateSpaceTypes().end());
  return all;
}

std::string SupportedTypesText() { return absl::StrJoin(AllTypes(), ", "); }

// The defaults of the transformers configuration classes for the keys that
// multimodal configs leave out of text_config (LlamaConfig, Qwen2Config,
// Gemma3TextConfig; LLaVA-1.5's and Qwen2-Audio's text_config omit the
// widths, Gemma 3's the heads and the vocabulary).
const std::map<std::string, std::map<std::string, double>>& TextDefaults() {
  static const auto* defaults = new std::map<std::string, std::map<std::string, double>>{
      {"llama",
       {{"vocab_size", 32000},
        {"hidden_size", 4096},
        {"intermediate_size", 11008},
        {"num_hidden_layers", 32},
        {"num_attention_heads", 32},
        {"max_position_embeddings", 2048}}},
      {"qwen2",
       {{"vocab_size", 151936},
        {"hidden_size", 4096},
        {"intermediate_size", 22016},
        {"num_hidden_layers", 32},
        {"num_attention_heads", 32},
        {"num_key_value_heads", 32},
        {"max_position_embeddings", 32768}}},
      // GemmaConfig's and Gemma2Config's own defaults (PaliGemma's
      // text_config leaves head_dim out: 256, not hidden / heads).
      {"gemma",
       {{"vocab_size", 256000},
        {"hidden_size", 3072},
        {"intermediate_size", 24576},
        {"num_hidden_layers", 28},
        {"num_attention_heads", 16},
        {"num_key_value_heads", 16},
        {"head_dim", 256},
        {"max_position_embeddings", 8192}}},
      {"gemma2",
       {{"vocab_size", 256000},
        {"hidden_size", 2304},
        {"intermediate_size", 9216},
        {"num_hidden_layers", 26},
        {"num_attention_heads", 8},
        {"num_key_value_heads", 4},
        {"head_dim", 256},
        {"max_position_embeddings", 8192},
        {"sliding_window", 4096}}},
      // MllamaTextConfig's (Llama 3.2 Vision 11B's language model).
      {"mllama_text_model",
       {{"vocab_size", 128256},
        {"hidden_size", 4096},
        {"intermediate_size", 14336},
        {"num_hidden_layers", 40},
        {"num_attention_heads", 32},
        {"num_key_value_heads", 8},
        {"max_position_embeddings", 131072}}},
      {"gemma3_text",
       {{"vocab_size", 262208},
        {"hidden_size", 2304},
        {"intermediate_size", 9216},
        {"num_hidden_layers", 26},
        {"num_attention_heads", 8},
        {"num_key_value_heads", 4},
        {"head_dim", 256},
        {"max_position_embeddings", 131072},
        {"sliding_window", 4096}}}};
  return *defaults;
}

// Language-model keys a wrapper may keep at its top level (Qwen2-VL keeps
// all of them there; LLaVA repeats vocab_size).
constexpr const char* kTopLevelTextKeys[] = {
    "vocab_size",          "hidden_size",         "intermediate_size",       "num_hidden_layers",
    "num_attention_heads", "num_key_value_heads", "max_position_embeddings", "rms_norm_eps",
    "tie_word_embeddings", "sliding_window",      "use_sliding_window",      "head_dim"};

// `config` widened to a part's field for errors ("hf_config_json.vision_config").
absl::Status InPart(absl::Status status, absl::string_view part) {
  if (status.ok()) return status;
  return InvalidFieldError(absl::StrCat(kField, ".", part),
                           absl::StrCat(status.message(), " (in ", part, ")"));
}

// An encoder's figure: above 2^20 (no encoder is near) it is refused, so
// that products of two stay exact and narrowing to int32 cannot wrap.
constexpr int64_t kMaxEncoderFigure = int64_t{1} << 20;
int64_t TakeEncoderFigure(absl::StatusOr<int64_t> value, absl::Status* error) {
  if (value.ok() && *value > kMaxEncoderFigure) {
    value = InvalidFieldError(
        kField, absl::StrCat("an encoder figure is ", *value, "; at most ", kMaxEncoderFigure));
  }
  if (!value.ok() && error->ok()) *error = value.status();
  return value.ok() ? *value : 0;
}

// vision_config.model_type names a tower this reader does not count.
absl::Status UnknownVisionTower(absl::string_view vtype, absl::string_view supported) {
  return WithReason(
      InvalidFieldError(
          absl::StrCat(kField, ".vision_config.model_type"),
          absl::StrCat("\"", vtype,
                       "\" is not a vision tower this reader knows; supported: ", supported)),
      "UNSUPPORTED_MODEL_TYPE");
}

// InternViT-300M (InternVL 2 to 3.5's tower; vision_config model_type
// intern_vit_6b, sic, or transformers' internvl_vision). InternViT-6B (no
// qkv bias, RMSNorms, q/k norms) is refused by field: no checkpoint total
// confirmed its count. The sizes of transformers' configs may be [h, w]
// lists (square only). Each figure is required (InternVisionConfig's
// defaults are the 6B's).
absl::Status InternVitPart(const Config& v, common::v1::EncoderPart* part) {
  if (const std::string vtype = v.String("model_type");
      !vtype.empty() && vtype != "intern_vit_6b" && vtype != "internvl_vision") {
    return UnknownVisionTower(vtype, "intern_vit_6b, internvl_vision (for internvl)");
  }
  // A key left out takes its class's default: InternVisionConfig's are
  // the 6B's (qk_normalization true, rms_norm), InternVLVisionConfig's
  // the 300M's but for attention_bias (false).
  const bool native = v.String("model_type") == "internvl_vision";
  const bool bias = v.Bool("qkv_bias", v.Bool("attention_bias", false));
  const bool qk_norm = v.Bool("qk_normalization", v.Bool("use_qk_norm", !native));
  const std::string norm =
      v.String("norm_type").empty() ? (native ? "layer_norm" : "rms_norm") : v.String("norm_type");
  if (!bias || qk_norm || norm != "layer_norm") {
    return WithReason(
        InvalidFieldError(kField, absl::StrCat("InternViT with qkv_bias ", bias ? "true" : "false",
                                               ", qk_normalization ", qk_norm ? "true" : "false",
                                               " and norm_type ", norm,
                                               " (InternViT-6B) is not counted by this reader; "
                                               "InternViT-300M's (true, false, layer_norm) is")),
        "UNSUPPORTED_MODEL_TYPE");
  }
  // A square size: a number, or an [h, w] list of two equal numbers.
  const auto square = [&v](const char* key) -> absl::StatusOr<int64_t> {
    const Value* given = v.Find({key});
    if (given != nullptr && given->kind_case() == Value::kListValue) {
      const auto& sides = given->list_value().values();
      if (sides.size() != 2 || sides[0].kind_case() != Value::kNumberValue ||
          sides[0].number_value() != sides[1].number_value()) {
        return InvalidFieldError(kField, absl::StrCat("\"", key,
                                                      "\" must be a number or a "
                                                      "square [side, side]"));
      }
      Struct one;
      (*one.mutable_fields())[key] = sides[0];
      return Config(one).Required({key});
    }
    return v.Required({key});
  };
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> value) -> int64_t {
    return TakeEncoderFigure(std::move(value), &error);
  };
  part->set_layout("intern_vit");
  part->set_num_layers(static_cast<int32_t>(take(v.Required({"num_hidden_layers"}))));
  part->set_hidden_size(take(v.Required({"hidden_size"})));
  part->set_intermediate_size(take(v.Required({"intermediate_size"})));
  part->set_image_size(static_cast<int32_t>(take(square("image_size"))));
  part->set_patch_size(static_cast<int32_t>(take(square("patch_size"))));
  return error;
}

// Kimi K2.5's MoonViT (the remote code's vt_* keys, or transformers'
// Kimi_K25VisionConfig's unprefixed ones): SigLIP's block with biases and
// LayerNorms, a biased patch conv, a pos_emb table of height x width
// positions (interpolated to each image), a final LayerNorm. Its temporal
// positions are computed, not stored. Each figure is required.
absl::Status MoonVitPart(const Config& v, common::v1::EncoderPart* part) {
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> value) -> int64_t {
    return TakeEncoderFigure(std::move(value), &error);
  };
  part->set_layout("moonvit");
  part->set_num_layers(
      static_cast<int32_t>(take(v.Required({"vt_num_hidden_layers", "num_hidden_layers"}))));
  part->set_hidden_size(take(v.Required({"vt_hidden_size", "hidden_size"})));
  part->set_intermediate_size(take(v.Required({"vt_intermediate_size", "intermediate_size"})));
  part->set_patch_size(static_cast<int32_t>(take(v.Required({"patch_size"}))));
  const int64_t height = take(v.Required({"init_pos_emb_height", "pos_emb_height"}));
  const int64_t width = take(v.Required({"init_pos_emb_width", "pos_emb_width"}));
  part->set_max_positions(static_cast<int32_t>(take(height * width)));
  return error;
}

// Kimi K2.5's projector (mm_projector_type "patchmerger"): merge_kernel_size
// [k, k] patches merged after a LayerNorm each; "patchmergerv2" (no
// pre-norm, no biases, a post RMSNorm) is refused by field.
absl::Status KimiK25Projector(const Config& vision, int64_t text_hidden,
                              common::v1::EncoderPart* projector) {
  if (const std::string kind = vision.String("mm_projector_type");
      !kind.empty() && kind != "patchmerger") {
    return WithReason(InvalidFieldError(absl::StrCat(kField, ".vision_config.mm_projector_type"),
                                        absl::StrCat("\"", kind,
                                                     "\" is not counted by this reader; "
                                                     "\"patchmerger\" is")),
                      "UNSUPPORTED_MODEL_TYPE");
  }
  int64_t side = 2;
  if (const Value* kernel = vision.Find({"merge_kernel_size"}); kernel != nullptr) {
    const bool square = kernel->kind_case() == Value::kListValue &&
                        kernel->list_value().values_size() == 2 &&
                        kernel->list_value().values(0).kind_case() == Value::kNumberValue &&
                        kernel->list_value().values(0).number_value() ==
                            kernel->list_value().values(1).number_value();
    if (!square) {
      return InvalidFieldError(absl::StrCat(kField, ".vision_config.merge_kernel_size"),
                               "must be a square [k, k]");
    }
    side = static_cast<int64_t>(kernel->list_value().values(0).number_value());
  }
  absl::Status error;
  projector->set_layout("kimi_k25_projector");
  projector->set_spatial_merge_size(static_cast<int32_t>(TakeEncoderFigure(side, &error)));
  projector->set_output_size(text_hidden);
  return error;
}

// DeepSeek-OCR's projector (projector_config: MlpProjector "linear"): one
// biased linear from input_dim (SAM's and CLIP-L's features side by side,
// 2048) to the text width, with the learned image_newline and
// view_seperator vectors.
absl::Status DeepSeekOcrProjector(const Config& top, int64_t text_hidden,
                                  common::v1::EncoderPart* projector) {
  const Value* given = top.Find({"projector_config"});
  if (given == nullptr || given->kind_case() != Value::kStructValue) {
    return InvalidFieldError(absl::StrCat(kField, ".projector_config"), "required");
  }
  const Config c(given->struct_value());
  const std::string kind = c.String("projector_type");
  const auto refuse = [](const char* key, absl::string_view why) {
    return WithReason(InvalidFieldError(absl::StrCat(kField, ".projector_config.", key), why),
                      "UNSUPPORTED_MODEL_TYPE");
  };
  if (kind != "linear" && kind != "downsample_mlp_gelu") {
    return refuse("projector_type",
                  absl::StrCat("\"", kind,
                               "\" is not counted by this reader; \"linear\" (DeepSeek-OCR) "
                               "and \"downsample_mlp_gelu\" (DeepSeek-VL2) are"));
  }
  absl::Status error;
  const int64_t input = TakeEncoderFigure(c.Required({"input_dim"}), &error);
  const int64_t output = TakeEncoderFigure(c.Int({"n_embed"}, text_hidden), &error);
  const int64_t merge = TakeEncoderFigure(c.Int({"downsample_ratio"}, 2), &error);
  if (!error.ok()) return InPart(error, "projector_config");
  if (kind == "downsample_mlp_gelu") {
    // MlpProjectorConfig's depth 2 and mlp_ratio 1: linears (w x m^2) x t
    // and t x t; other shapes are not counted.
    if (c.Int({"depth"}, 2).value_or(0) != 2) return refuse("depth", "only 2 is counted");
    if (const Value* ratio = c.Find({"mlp_ratio"});
        ratio != nullptr &&
        !(ratio->kind_case() == Value::kNumberValue && ratio->number_value() == 1)) {
      return refuse("mlp_ratio", "only 1 is counted");
    }
  }
  if (output != text_hidden) {
    return InvalidFieldError(
        absl::StrCat(kField, ".projector_config.n_embed"),
        absl::StrCat(output, " differs from the language model's hidden_size ", text_hidden));
  }
  projector->set_layout(kind == "linear" ? "deepseek_ocr_projector" : "deepseek_vl2_projector");
  projector->set_hidden_size(input);
  projector->set_output_size(text_hidden);
  if (kind != "linear") projector->set_spatial_merge_size(static_cast<int32_t>(merge));
  return absl::OkStatus();
}

// InternVL's projector (mlp1): downsample_ratio (0.5) folds 1 / ratio
// patches per side into one before its LayerNorm and two linears.
absl::Status InternVlProjector(const Config& top, int64_t text_hidden,
                               common::v1::EncoderPart* projector) {
  const Value* ratio = top.Find({"downsample_ratio"});
  const double r = ratio != nullptr && ratio->kind_case() == Value::kNumberValue
                       ? ratio->number_value()
                       : (ratio == nullptr ? 0.5 : -1);
  const double per_side = r > 0 ? 1 / r : 0;
  if (!(r > 0 && r <= 1) || per_side != std::floor(per_side)) {
    return InvalidFieldError(absl::StrCat(kField, ".downsample_ratio"),
                             "must be 1 / a whole number of patches per side (0.5: 2 x 2)");
  }
  projector->set_layout("internvl_projector");
  projector->set_spatial_merge_size(static_cast<int32_t>(per_side));
  projector->set_output_size(text_hidden);
  return absl::OkStatus();
}

// Gemma 4's ViT (Gemma4VisionConfig; the 31B's and 26B-A4B's: 27 layers
// of 1152, heads of 72; E2B's and E4B's: 16 of 768, heads of 64). Its attention is counted as four
// h x h matrices, so heads x head_dim must be the width and every head its own KV head; other
// shapes are refused by field. Each figure is required.
absl::Status Gemma4VisionPart(const Config& v, common::v1::EncoderPart* part) {
  if (const std::string vtype = v.String("model_type");
      !vtype.empty() && vtype != "gemma4_vision") {
    return UnknownVisionTower(vtype, "gemma4_vision (for gemma4)");
  }
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> value) -> int64_t {
    return TakeEncoderFigure(std::move(value), &error);
  };
  part->set_layout("gemma4_vision");
  part->set_num_layers(static_cast<int32_t>(take(v.Required({"num_hidden_layers"}))));
  part->set_hidden_size(take(v.Required({"hidden_size"})));
  part->set_intermediate_size(take(v.Required({"intermediate_size"})));
  part->set_patch_size(static_cast<int32_t>(take(v.Required({"patch_size"}))));
  part->set_max_positions(static_cast<int32_t>(take(v.Required({"position_embedding_size"}))));
  part->set_head_dim(static_cast<int32_t>(take(v.Required({"head_dim"}))));
  const int64_t heads = take(v.Required({"num_attention_heads"}));
  const int64_t kv_heads = take(v.Int({"num_key_value_heads"}, heads));
  if (!error.ok()) return error;
  if (heads * part->head_dim() != part->hidden_size() || kv_heads != heads) {
    return WithReason(
        InvalidFieldError(
            kField, absl::StrCat("num_attention_heads (", heads, ") x head_dim (", part->head_dim(),
                                 ") must equal hidden_size (", part->hidden_size(),
                                 ") with as many KV heads (", kv_heads,
                                 "): other Gemma 4 towers are not counted")),
        "UNSUPPORTED_MODEL_TYPE");
  }
  return absl::OkStatus();
}

// Gemma 4's audio conformer (Gemma4AudioConfig; E2B's and E4B's: 12 blocks
// of 1024, 8 heads, kernel 5, subsampling channels [128, 32], output 1536).
// Each figure is required.
absl::StatusOr<common::v1::EncoderPart> Gemma4AudioPart(const Config& a) {
  if (const std::string atype = a.String("model_type"); !atype.empty() && atype != "gemma4_audio") {
    return WithReason(InvalidFieldError(absl::StrCat(kField, ".audio_config.model_type"),
                                        absl::StrCat("\"", atype,
                                                     "\" is not an audio tower this reader knows; "
                                                     "supported: gemma4_audio (for gemma4)")),
                      "UNSUPPORTED_MODEL_TYPE");
  }
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> value) -> int64_t {
    return TakeEncoderFigure(std::move(value), &error);
  };
  common::v1::EncoderPart part;
  part.set_kind("audio_encoder");
  part.set_layout("gemma4_audio");
  part.set_num_layers(static_cast<int32_t>(take(a.Required({"num_hidden_layers"}))));
  part.set_hidden_size(take(a.Required({"hidden_size"})));
  const int64_t heads = take(a.Required({"num_attention_heads"}));
  part.set_conv_kernel_size(static_cast<int32_t>(take(a.Required({"conv_kernel_size"}))));
  part.set_output_size(take(a.Required({"output_proj_dims"})));
  if (!error.ok()) return error;
  if (heads <= 0 || part.hidden_size() % heads != 0) {
    return InvalidFieldError(
        kField, absl::StrCat("num_attention_heads (", heads, ") must divide hidden_size (",
                             part.hidden_size(), ")"));
  }
  part.set_head_dim(static_cast<int32_t>(part.hidden_size() / heads));
  const Value* channels = a.Find({"subsampling_conv_channels"});
  if (channels == nullptr || channels->kind_case() != Value::kListValue ||
      channels->list_value().values_size() != 2) {
    return InvalidFieldError(kField, "subsampling_conv_channels: required, two channel counts");
  }
  for (const Value& count : channels->list_value().values()) {
    if (count.kind_case() != Value::kNumberValue || !(count.number_value() >= 1) ||
        count.number_value() > kMaxEncoderFigure ||
        count.number_value() != std::floor(count.number_value())) {
      return InvalidFieldError(kField,
                               "subsampling_conv_channels: each a whole number from 1 to 2^20");
    }
    part.add_subsampling_channels(static_cast<int32_t>(count.number_value()));
  }
  return part;
}

absl::StatusOr<common::v1::EncoderPart> VisionPart(const Struct& vision, absl::string_view type) {
  const Config v(vision);
  common::v1::EncoderPart part;
  part.set_kind("vision_encoder");
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> value) -> int64_t {
    return TakeEncoderFigure(std::move(value), &error);
  };
  if (type == "llama4") {
    // Llama4VisionConfig: a CLIP-like ViT and its pixel-shuffle adapter
    // (vision_adapter: fc1 intermediate_size x projector_input_dim, fc2
    // projector_output_dim square, both without bias), whose output the
    // projector takes.
    part.set_layout("llama4_vision");
    part.set_num_layers(static_cast<int32_t>(take(v.Int({"num_hidden_layers"}, 34))));
    part.set_hidden_size(take(v.Int({"hidden_size"}, 768)));
    part.set_intermediate_size(take(v.Int({"intermediate_size"}, 5632)));
    part.set_image_size(static_cast<int32_t>(take(v.Int({"image_size"}, 448))));
    part.set_patch_size(static_cast<int32_t>(take(v.Int({"patch_size"}, 14))));
    const int64_t adapter_in = take(v.Int({"projector_input_dim"}, 4096));
    const int64_t adapter_out = take(v.Int({"projector_output_dim"}, 4096));
    const int64_t vision_out = take(v.Int({"vision_output_dim"}, 7680));
    if (error.ok() && (adapter_in != adapter_out || adapter_out != vision_out)) {
      // fc2 takes fc1's output and the projector fc2's: unequal widths
      // describe no model that runs.
      return InPart(InvalidFieldError(kField, absl::StrCat("projector_input_dim (", adapter_in,
                                                           "), projector_output_dim (", adapter_out,
                                                           ") and vision_output_dim (", vision_out,
                                                           ") must be equal")),
                    "vision_config");
    }
    part.set_output_size(adapter_out);
  } else if (type == "minicpmv") {
    // modeling_navit_siglip.py's SiglipVisionTransformer (2.6, 4.5) and
    // Idefics2VisionTransformer (2.5): SigLIP's embeddings, blocks and
    // post_layernorm, no pooling head; MiniCPMVConfig's default tower
    // (SigLIP-400M at 980 px) fills what the file leaves out. The resampler
    // drops the last block with drop_vision_last_layer (MiniCPMVProjector).
    part.set_layout("siglip_vision");
    part.set_pooling_head(false);
    part.set_num_layers(static_cast<int32_t>(take(v.Int({"num_hidden_layers"}, 27))));
    part.set_hidden_size(take(v.Int({"hidden_size"}, 1152)));
    part.set_intermediate_size(take(v.Int({"intermediate_size"}, 4304)));
    part.set_image_size(static_cast<int32_t>(take(v.Int({"image_size"}, 980))));
    part.set_patch_size(static_cast<int32_t>(take(v.Int({"patch_size"}, 14))));
  } else if (type == "mllama") {
    // MllamaVisionConfig: local and gated global layers over tiles of
    // image_size; the tile tables have a row per supported aspect ratio and
    // one more; the output is the last layer's states beside those of
    // intermediate_layers_indices.
    part.set_layout("mllama_vision");
    part.set_num_layers(static_cast<int32_t>(take(v.Int({"num_hidden_layers"}, 32))));
    part.set_num_global_layers(static_cast<int32_t>(take(v.Int({"num_global_layers"}, 8))));
    part.set_hidden_size(take(v.Int({"hidden_size"}, 1280)));
    part.set_intermediate_size(take(v.Int({"intermediate_size"}, 5120)));
    part.set_image_size(static_cast<int32_t>(take(v.Int({"image_size"}, 448))));
    part.set_patch_size(static_cast<int32_t>(take(v.Int({"patch_size"}, 14))));
    part.set_max_tiles(static_cast<int32_t>(take(v.Int({"max_num_tiles"}, 4))));
    const int64_t vision_out = take(v.Int({"vision_output_dim"}, 7680));
    const auto listed = [&v](const char* key, int fallback) {
      const Value* list = v.Find({key});
      if (list == nullptr) return fallback;
      return list->kind_case() == Value::kListValue ? list->list_value().values_size() : -1;
    };
    const int ratios = listed("supported_aspect_ratios", 8);
    const int intermediate = listed("intermediate_layers_indices", 5);
    if (ratios < 1) {
      return InPart(InvalidFieldError(kField, "supported_aspect_ratios: a list of at least one"),
                    "vision_config");
    }
    if (error.ok() && (intermediate < 0 || vision_out != part.hidden_size() * (intermediate + 1))) {
      return InPart(
          InvalidFieldError(kField, absl::StrCat("vision_output_dim (", vision_out,
                                                 ") must be hidden_size x (1 + the layers in "
                                                 "intermediate_layers_indices) = ",
                                                 part.hidden_size(), " x ", intermediate + 1)),
          "vision_config");
    }
    part.set_aspect_ratio_ids(ratios + 1);
    part.set_output_size(vision_out);
  } else if (type == "qwen2_vl") {
    // Qwen2VLVisionConfig: embed_dim is the ViT width, hidden_size the
    // language model's (what the merger maps into).
    part.set_layout("qwen2_vl_vision");
    part.set_num_layers(static_cast<int32_t>(take(v.Int({"depth"}, 32))));
    part.set_hidden_size(take(v.Int({"embed_dim"}, 1280)));
    part.set_intermediate_size(part.hidden_size() * take(v.Int({"mlp_ratio"}, 4)));
    part.set_output_size(take(v.Int({"hidden_size"}, 3584)));
  } else if (type == "qwen3_5" || type == "qwen3_5_moe" || type == "qwen3_vl" ||
             type == "qwen3_vl_moe") {
    // Qwen3-VL's tower (Qwen3VLVisionModel: a biased Conv3d patch
    // embedding, num_position_embeddings learned positions, blocks of
    // biased LayerNorms, attention and a plain MLP); its merger maps into
    // out_hidden_size. Qwen3.5's (Qwen3_5VisionModel) has no deepstack
    // mergers; Qwen3-VL's are counted with its merger (qwen3_vl_merger).
    if (const Value* deepstack = v.Find({"deepstack_visual_indexes"});
        (type == "qwen3_5" || type == "qwen3_5_moe") && deepstack != nullptr &&
        deepstack->kind_case() == Value::kListValue && deepstack->list_value().values_size() > 0) {
      return InPart(WithReason(InvalidFieldError(kField,
                                                 "deepstack_visual_indexes: deepstack "
                                                 "mergers are not counted by this reader"),
                               "UNSUPPORTED_MODEL_TYPE"),
                    "vision_config");
    }
    part.set_layout("qwen3_vl_vision");
    part.set_num_layers(static_cast<int32_t>(take(v.Required({"depth"}))));
    part.set_hidden_size(take(v.Required({"hidden_size"})));
    part.set_intermediate_size(take(v.Required({"intermediate_size"})));
    part.set_output_size(take(v.Required({"out_hidden_size"})));
    part.set_max_positions(static_cast<int32_t>(take(v.Int({"num_position_embeddings"}, 2304))));
    part.set_patch_size(static_cast<int32_t>(take(v.Int({"patch_size"}, 16))));
  } else if (type == "mistral3" || (type == "llava" && v.String("model_type") == "pixtral")) {
    // PixtralVisionConfig (Mistral Small 3.1 and later; Pixtral-12B in
    // transformers' LLaVA format): its defaults fill the keys a config
    // leaves out.
    if (const std::string vtype = v.String("model_type"); !vtype.empty() && vtype != "pixtral") {
      return UnknownVisionTower(vtype, "pixtral (for mistral3)");
    }
    part.set_layout("pixtral_vision");
    part.set_num_layers(static_cast<int32_t>(take(v.Int({"num_hidden_layers"}, 24))));
    part.set_hidden_size(take(v.Int({"hidden_size"}, 1024)));
    part.set_intermediate_size(take(v.Int({"intermediate_size"}, 4096)));
    part.set_patch_size(static_cast<int32_t>(take(v.Int({"patch_size"}, 16))));
  } else if (type == "internvl_chat" || type == "internvl" || type == "h2ovl_chat") {
    absl::Status intern = InternVitPart(v, &part);
    if (!intern.ok()) return InPart(intern, "vision_config");
  } else if (type == "lfm2_vl") {
    // LFM2-VL's tower: Siglip2VisionConfig (NaFlex), whose defaults fill
    // the keys a config leaves out; num_patches positions.
    if (const std::string vtype = v.String("model_type");
        !vtype.empty() && vtype != "siglip2_vision_model") {
      return UnknownVisionTower(vtype, "siglip2_vision_model (for lfm2_vl)");
    }
    part.set_layout("siglip2_vision");
    part.set_num_layers(static_cast<int32_t>(take(v.Int({"num_hidden_layers"}, 12))));
    part.set_hidden_size(take(v.Int({"hidden_size"}, 768)));
    part.set_intermediate_size(take(v.Int({"intermediate_size"}, 3072)));
    part.set_patch_size(static_cast<int32_t>(take(v.Int({"patch_size"}, 16))));
    part.set_max_positions(static_cast<int32_t>(take(v.Int({"num_patches"}, 256))));
    part.set_pooling_head(v.Bool("vision_use_head", true));
  } else if (type == "glm4v" || type == "glm4v_moe") {
    // Glm4vVisionModel: the blocks' MLP is out_hidden_size wide, the
    // downsampling conv (spatial_merge_size) maps hidden_size into
    // out_hidden_size; the merger (intermediate_size) is the projector.
    // Glm4vVisionConfig's defaults fill the keys a config leaves out.
    if (v.Bool("attention_bias", false)) {
      return WithReason(InvalidFieldError(absl::StrCat(kField, ".vision_config.attention_bias"),
                                          "true: a biased qkv in the vision tower is not counted "
                                          "by this reader"),
                        "UNSUPPORTED_MODEL_TYPE");
    }
    part.set_layout("glm4v_vision");
    part.set_num_layers(static_cast<int32_t>(take(v.Int({"depth"}, 24))));
    part.set_hidden_size(take(v.Int({"hidden_size"}, 1536)));
    part.set_output_size(take(v.Int({"out_hidden_size"}, 4096)));
    part.set_intermediate_size(part.output_size());
    part.set_image_size(static_cast<int32_t>(take(v.Int({"image_size"}, 336))));
    part.set_patch_size(static_cast<int32_t>(take(v.Int({"patch_size"}, 14))));
    part.set_num_channels(static_cast<int32_t>(take(v.Int({"in_channels"}, 3))));
    part.set_temporal_patch_size(static_cast<int32_t>(take(v.Int({"temporal_patch_size"}, 2))));
    part.set_spatial_merge_size(static_cast<int32_t>(take(v.Int({"spatial_merge_size"}, 2))));
  } else if (type == "phi3_v") {
    // Phi3ImageEmbedding builds CLIPVisionModel from transformers' CLIP
    // ViT-L/14-336 configuration whatever else the file says (the name is
    // checked in Phi3VProjector).
    part.set_layout("clip_vision");
    part.set_num_layers(24);
    part.set_hidden_size(1024);
    part.set_intermediate_size(4096);
    part.set_image_size(336);
    part.set_patch_size(14);
  } else if (type == "kimi_k25" || type == "kimi_vl") {
    absl::Status moonvit = MoonVitPart(v, &part);
    if (!moonvit.ok()) return InPart(moonvit, "vision_config");
  } else if (type == "deepseek_vl_v2" && v.String("model_name") == "deeplip_b_l") {
    // DeepSeek-OCR's DeepEncoder: its code builds SAM ViT-B and CLIP-L at
    // fixed shapes (build_sam_vit_b, build_clip_l); vision_config only
    // documents them. The part carries CLIP-L's: width 1024, 24 blocks,
    // MLP 4096, 224 px in patches of 14.
    part.set_layout("deepencoder");
    part.set_num_layers(24);
    part.set_hidden_size(1024);
    part.set_intermediate_size(4096);
    part.set_image_size(224);
    part.set_patch_size(14);
  } else if (type == "deepseek_vl_v2") {
    // DeepSeek-VL2's tower (siglip_vit.py VisionTransformer, timm's
    // vit_so400m_patch14_siglip_384): SigLIP's layout with the attention-
    // pooling head global_pool "map" builds although it is unused; the MLP
    // is int(width x mlp_ratio) wide.
    if (const std::string name = v.String("model_name"); name != "siglip_so400m_patch14_384") {
      return UnknownVisionTower(name.empty() ? "(no model_name)" : name,
                                "deeplip_b_l, siglip_so400m_patch14_384 (for deepseek_vl_v2)");
    }
    const Value* ratio = v.Find({"mlp_ratio"});
    const int64_t width = take(v.Required({"width"}));
    if (ratio == nullptr || ratio->kind_case() != Value::kNumberValue ||
        !(ratio->number_value() > 0)) {
      return InPart(InvalidFieldError(absl::StrCat(kField, ".vision_config.mlp_ratio"),
                                      "required: a positive number"),
                    "vision_config");
    }
    part.set_layout("siglip_vision");
    part.set_pooling_head(true);
    part.set_hidden_size(width);
    part.set_intermediate_size(
        take(static_cast<int64_t>(static_cast<double>(width) * ratio->number_value())));
    part.set_num_layers(static_cast<int32_t>(take(v.Required({"layers"}))));
    part.set_image_size(static_cast<int32_t>(take(v.Required({"image_size"}))));
    part.set_patch_size(static_cast<int32_t>(take(v.Required({"patch_size"}))));
  } else if (type == "idefics3" || type == "smolvlm") {
    // Idefics3VisionTransformer: SigLIP's tower (a biased patch conv,
    // (image_size / patch_size)^2 positions, post_layernorm) without the
    // pooling head the conversion drops. Idefics3VisionConfig's defaults
    // fill the keys a config leaves out (SmolVLM2's omit the widths).
    if (const std::string vtype = v.String("model_type");
        !vtype.empty() && vtype != "idefics3_vision" && vtype != "smolvlm_vision") {
      return UnknownVisionTower(vtype, "idefics3_vision, smolvlm_vision (for idefics3, smolvlm)");
    }
    part.set_layout("siglip_vision");
    part.set_pooling_head(false);
    part.set_num_layers(static_cast<int32_t>(take(v.Int({"num_hidden_layers"}, 12))));
    part.set_hidden_size(take(v.Int({"hidden_size"}, 1152)));
    part.set_intermediate_size(take(v.Int({"intermediate_size"}, 3072)));
    part.set_image_size(static_cast<int32_t>(take(v.Int({"image_size"}, 224))));
    part.set_patch_size(static_cast<int32_t>(take(v.Int({"patch_size"}, 32))));
  } else if (type == "gemma4") {
    absl::Status gemma4 = Gemma4VisionPart(v, &part);
    if (!gemma4.ok()) return InPart(gemma4, "vision_config");
  } else if (type == "qwen2_5_vl") {
    part.set_layout("qwen2_5_vl_vision");
    part.set_num_layers(static_cast<int32_t>(take(v.Required({"depth"}))));
    part.set_hidden_size(take(v.Required({"hidden_size"})));
    part.set_intermediate_size(take(v.Required({"intermediate_size"})));
    part.set_output_size(take(v.Required({"out_hidden_size"})));
  } else {
    // LLaVA (CLIP, or SigLIP; Pixtral above) and Gemma 3 (SigLIP). LlavaConfig's default
    // tower is CLIP ViT-L/14-336; CLIPVisionConfig's and SiglipVisionConfig's
    // own defaults fill the keys a config leaves out.
    const std::string vtype =
        v.String("model_type").empty()
            ? (type == "gemma3" || type == "llava_onevision" || type == "paligemma"
                   ? "siglip_vision_model"
                   : "clip_vision_model")
            : v.String("model_type");
    const bool llava_default =
        (type == "llava" || type == "llava_next") && v.String("model_type").empty();
    if (vtype == "clip_vision_model") {
      part.set_layout("clip_vision");
    } else if (vtype == "siglip_vision_model") {
      part.set_layout("siglip_vision");
      part.set_pooling_head(v.Bool("vision_use_head", true));
    } else {
      return UnknownVisionTower(vtype, "clip_vision_model, siglip_vision_model, pixtral");
    }
    part.set_num_layers(
        static_cast<int32_t>(take(v.Int({"num_hidden_layers"}, llava_default ? 24 : 12))));
    part.set_hidden_size(take(v.Int({"hidden_size"}, llava_default ? 1024 : 768)));
    part.set_intermediate_size(take(v.Int({"intermediate_size"}, llava_default ? 4096 : 3072)));
    part.set_image_size(
        static_cast<int32_t>(take(v.Int({"image_size"}, llava_default ? 336 : 224))));
    part.set_patch_size(static_cast<int32_t>(take(
        v.Int({"patch_size"}, llava_default ? 14 : (part.layout() == "clip_vision" ? 32 : 16)))));
  }
  // Qwen's towers embed video frames in time as well (a Conv3d over
  // temporal_patch_size frames) and merge spatial_merge_size^2 patches in
  // their mergers; no other tower reads these keys.
  const bool qwen_vl = part.layout() == "qwen2_vl_vision" || part.layout() == "qwen2_5_vl_vision" ||
                       part.layout() == "qwen3_vl_vision";
  if (qwen_vl) {
    if (part.layout() != "qwen3_vl_vision") {  // Qwen3-VL's patch (16) is read above.
      part.set_patch_size(static_cast<int32_t>(take(v.Int({"patch_size"}, 14))));
    }
    part.set_temporal_patch_size(static_cast<int32_t>(take(v.Int({"temporal_patch_size"}, 2))));
    part.set_spatial_merge_size(static_cast<int32_t>(take(v.Int({"spatial_merge_size"}, 2))));
  }
  part.set_num_channels(
      static_cast<int32_t>(take(v.Int({"num_channels", "in_channels", "in_chans"}, 3))));
  if (!error.ok()) return InPart(error, "vision_config");
  return part;
}

// LFM2-VL (Lfm2VlModel): the tower's layers up to vision_feature_layer
// (the remote code and llama.cpp drop the rest: 27 + (-2) + 1 = 26 stored
// in LFM2-VL-1.6B), then Lfm2VlMultiModalProjector: downsample_factor x
// downsample_factor patches unshuffled, a LayerNorm unless
// projector_use_layernorm is false (LFM2.5-VL), linears of
// projector_hidden_size with biases (projector_bias; without them refused).
absl::Status Lfm2VlProjector(const Config& top, int64_t text_hidden,
                             common::v1::EncoderPart* encoder, common::v1::EncoderPart* projector) {
  absl::Status error;
  int64_t feature_layer = -1;  // Lfm2VlConfig's default: the last layer
  if (const Value* given = top.Find({"vision_feature_layer"}); given != nullptr) {
    if (given->kind_case() != Value::kNumberValue ||
        given->number_value() != std::floor(given->number_value()) ||
        std::abs(given->number_value()) > kMaxEncoderFigure) {
      return InvalidFieldError(absl::StrCat(kField, ".vision_feature_layer"),
                               "must be a whole number (a layer of the tower)");
    }
    feature_layer = static_cast<int64_t>(given->number_value());
  }
  const int layers = encoder->num_layers();
  const int64_t kept = feature_layer < 0 ? layers + feature_layer + 1 : feature_layer + 1;
  if (kept < 1 || kept > layers) {
    return InvalidFieldError(
        absl::StrCat(kField, ".vision_feature_layer"),
        absl::StrCat("is ", feature_layer, "; the tower has ", layers, " layers"));
  }
  encoder->set_num_layers(static_cast<int32_t>(kept));
  if (!top.Bool("projector_bias", true)) {
    return WithReason(InvalidFieldError(absl::StrCat(kField, ".projector_bias"),
                                        "a projector without biases is not counted by this "
                                        "reader"),
                      "UNSUPPORTED_MODEL_TYPE");
  }
  const int64_t factor = TakeEncoderFigure(top.Int({"downsample_factor"}, 2), &error);
  const int64_t width = TakeEncoderFigure(top.Int({"projector_hidden_size"}, 2560), &error);
  if (!error.ok()) return error;
  projector->set_layout(top.Bool("projector_use_layernorm", true) ? "lfm2_vl_projector"
                                                                  : "lfm2_vl_projector_unnormed");
  projector->set_spatial_merge_size(static_cast<int32_t>(factor));
  projector->set_intermediate_size(width);
  projector->set_output_size(text_hidden);
  return absl::OkStatus();
}

// Phi3ImageEmbedding's projection (embd_layer): the HD transform merges
// 2 x 2 patches of the tower's 1,024 into 4,096, separated by two learned
// vectors (glb_GN, sub_GN), then two biased linears to the text width
// (projection_cls "mlp"). Other towers, projections and HD settings are
// refused by field.
absl::Status Phi3VProjector(const Struct* processor, const Struct* embedding, int64_t text_hidden,
                            const common::v1::EncoderPart& tower,
                            common::v1::EncoderPart* projector) {
  const auto refuse = [](absl::string_view key, absl::string_view why) {
    return WithReason(InvalidFieldError(absl::StrCat(kField, ".", key), why),
                      "UNSUPPORTED_MODEL_TYPE");
  };
  if (processor == nullptr || embedding == nullptr) {
    return refuse(processor == nullptr ? "img_processor" : "embd_layer", "required for phi3_v");
  }
  const Config p(*processor);
  const Config e(*embedding);
  if (const std::string name = p.String("model_name");
      name != "openai/clip-vit-large-patch14-336") {
    return refuse(
        "img_processor.model_name",
        absl::StrCat("\"", name, "\": only openai/clip-vit-large-patch14-336 is counted"));
  }
  if (e.String("projection_cls") != "mlp") {
    return refuse("embd_layer.projection_cls", "only \"mlp\" is counted");
  }
  for (const char* key : {"use_hd_transform", "with_learnable_separator"}) {
    if (!e.Bool(key, false)) {
      return refuse(absl::StrCat("embd_layer.", key),
                    "must be true: only the HD transform with its separators is counted");
    }
  }
  absl::Status error;
  const int64_t out = TakeEncoderFigure(p.Int({"image_dim_out"}, 1024), &error);
  if (!error.ok()) return InPart(error, "img_processor");
  if (out != tower.hidden_size()) {
    return refuse("img_processor.image_dim_out",
                  absl::StrCat(out, " is not the tower's width ", tower.hidden_size()));
  }
  projector->set_layout("phi3v_projector");
  projector->set_output_size(text_hidden);
  return absl::OkStatus();
}

// PaliGemmaMultiModalProjector: one biased linear from the tower's width
// to projection_dim, which must be the text width (the language model
// takes its output). The tower's positions are its image tokens: a
// config that gives num_image_tokens without image_size sets the image
// side from it (PaliGemmaConfig derives one from the other).
absl::Status PaliGemmaProjector(const Config& top, const Struct* vision, int64_t text_hidden,
                                common::v1::EncoderPart* tower,
                                common::v1::EncoderPart* projector) {
  absl::Status error;
  const int64_t projection = TakeEncoderFigure(top.Int({"projection_dim"}, text_hidden), &error);
  if (!error.ok()) return error;
  if (projection != text_hidden) {
    return InvalidFieldError(absl::StrCat(kField, ".projection_dim"),
                             absl::StrCat(projection, " differs from the language model's width ",
                                          text_hidden, ", which takes the projector's output"));
  }
  if (vision != nullptr) {
    const Config v(*vision);
    const int64_t tokens = TakeEncoderFigure(v.Int({"num_image_tokens"}, 0), &error);
    if (!error.ok()) return InPart(error, "vision_config");
    const int64_t side = tower->image_size() / std::max(1, tower->patch_size());
    if (tokens > 0 && tokens != side * side) {
      const auto root = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(tokens))));
      if (v.Find({"image_size"}) != nullptr || root * root != tokens) {
        return InvalidFieldError(
            absl::StrCat(kField, ".vision_config.num_image_tokens"),
            absl::StrCat(tokens, " is not (image_size ", tower->image_size(), " / patch_size ",
                         tower->patch_size(), ")^2 = ", side * side));
      }
      tower->set_image_size(static_cast<int32_t>(root * tower->patch_size()));
    }
  }
  projector->set_layout("linear_projector");
  projector->set_output_size(text_hidden);
  return absl::OkStatus();
}

absl::StatusOr<int> CountLayerIndices(const Config& c, const char* key, int L);

// MiniCPM-V's language model by its config's version (a number, or the
// string "2.5"): Llama 3 8B's blocks in 2.5, Qwen2's in 2.6, Qwen3's in 4.5
// (vLLM's minicpmv.py chooses its class the same way). MiniCPM-V 2.0 and
// 4.0 (MiniCPM's own language models) are refused by field.
absl::StatusOr<std::string> MiniCpmvLanguageModel(const Config& top) {
  const Value* version = top.Find({"version"});
  std::string text;
  if (version != nullptr && version->kind_case() == Value::kNumberValue) {
    text = absl::StrFormat("%.1f", version->number_value());
  } else if (version != nullptr && version->kind_case() == Value::kStringValue) {
    text = version->string_value();
  }
  if (text == "2.5") return std::string("llama");
  if (text == "2.6") return std::string("qwen2");
  if (text == "4.5") return std::string("qwen3");
  return WithReason(
      InvalidFieldError(absl::StrCat(kField, ".version"),
                        absl::StrCat(text.empty() ? "missing" : absl::StrCat("\"", text, "\""),
                                     ": MiniCPM-V 2.5, 2.6 and 4.5 are counted "
                                     "(their language models Llama 3's, Qwen2's, "
                                     "Qwen3's); 2.0 and 4.0 are not")),
      "UNSUPPORTED_MODEL_TYPE");
}

// MllamaTextModel's embed_tokens: vocab_size + 8 rows (the image token's
// and seven reserved), lm_head vocab_size.
constexpr int kMllamaExtraEmbeddingRows = 8;

// Llama 3.2 Vision's text_config made a Llama config: MllamaTextConfig's
// defaults for the keys it leaves out; returns how many distinct layers
// cross_attention_layers names (its default [3, 8, ..., 38] when absent).
// INVALID_ARGUMENT for another text model_type or a bad index.
absl::StatusOr<int> MllamaTextConfig(Struct* text) {
  auto& fields = *text->mutable_fields();
  if (fields.count("model_type") && fields.at("model_type").string_value() != "mllama_text_model") {
    return InvalidFieldError(absl::StrCat(kField, ".text_config.model_type"),
                             "must be mllama_text_model for mllama");
  }
  for (const auto& [key, value] : TextDefaults().at("mllama_text_model")) {
    if (!fields.count(key)) fields[key].set_number_value(value);
  }
  fields["model_type"].set_string_value("llama");
  if (!fields.count("cross_attention_layers")) {
    for (const int layer : {3, 8, 13, 18, 23, 28, 33, 38}) {
      fields["cross_attention_layers"].mutable_list_value()->add_values()->set_number_value(layer);
    }
  }
  const Config c(*text);
  absl::Status error;
  const int64_t layers = TakeEncoderFigure(c.Int({"num_hidden_layers"}, 40), &error);
  if (!error.ok()) return InPart(error, "text_config");
  absl::StatusOr<int> crossing =
      CountLayerIndices(c, "cross_attention_layers", static_cast<int>(layers));
  if (!crossing.ok() || *crossing == 0 || *crossing >= layers) {
    return InvalidFieldError(
        absl::StrCat(kField, ".text_config.cross_attention_layers"),
        absl::StrCat("must name between 1 and ", layers - 1, " of the ", layers, " layers"));
  }
  return *crossing;
}

absl::StatusOr<common::v1::Architecture> MultimodalArchitecture(const Struct& root,
                                                                const std::string& type) {
  const auto& fields = root.fields();
  auto sub = [&](const char* key) -> const Struct* {
    auto it = fields.find(key);
    return it != fields.end() && it->second.has_struct_value() ? &it->second.struct_value()
                                                               : nullptr;
  };
  // The language model: text_config, completed from the top level and the
  // defaults of its configuration class.
  Struct text;
  const bool internvl = type == "internvl_chat" || type == "internvl" || type == "h2ovl_chat";
  if (const Struct* given = sub("text_config"); given != nullptr) {
    text = *given;
  } else if (const Struct* llm = sub("llm_config"); llm != nullptr && internvl) {
    text = *llm;  // InternVLChatConfig's name for it
  } else if (const Struct* language = sub("language_config");
             language != nullptr && type == "deepseek_vl_v2") {
    text = *language;
  }
  if (type == "deepseek_vl_v2") {
    const Value* names = Config(root).Find({"architectures"});
    const std::string name = names != nullptr && names->kind_case() == Value::kListValue &&
                                     names->list_value().values_size() > 0
                                 ? names->list_value().values(0).string_value()
                                 : "";
    if (name != "DeepseekOCRForCausalLM" && name != "DeepseekVLV2ForCausalLM") {
      return WithReason(InvalidFieldError(absl::StrCat(kField, ".architectures"),
                                          "deepseek_vl_v2 is counted for DeepSeek-OCR "
                                          "(DeepseekOCRForCausalLM) and DeepSeek-VL2 "
                                          "(DeepseekVLV2ForCausalLM); DeepSeek-OCR-2's encoder is "
                                          "not counted by this reader"),
                        "UNSUPPORTED_MODEL_TYPE");
    }
  }
  if (type == "paligemma" && sub("text_config") == nullptr) {
    return InvalidFieldError(absl::StrCat(kField, ".text_config"), "required for paligemma");
  }
  if (internvl && !text.fields().count("model_type")) {
    return InvalidFieldError(absl::StrCat(kField, ".text_config.model_type"),
                             "required for internvl (llm_config or text_config)");
  }
  const bool qwen_vl = type == "qwen2_vl" || type == "qwen2_5_vl";
  const bool phi3_v = type == "phi3_v";
  // Glm4vTextConfig is GLM-4's blocks with q/k/v biases always
  // (Glm4vTextAttention), whatever attention_bias says.
  if (type == "glm4v") {
    auto& text_fields = *text.mutable_fields();
    if (!text_fields.count("model_type") ||
        text_fields.at("model_type").string_value() == "glm4v_text") {
      text_fields["model_type"].set_string_value("glm4");
    }
    text_fields["attention_bias"].set_bool_value(true);
  }
  // Glm4vMoeTextConfig is GLM-4.5's (Glm4MoeConfig's) blocks, biased by
  // attention_bias, with multimodal rotary sections that change no weight.
  if (type == "glm4v_moe") {
    auto& text_fields = *text.mutable_fields();
    if (!text_fields.count("model_type") ||
        text_fields.at("model_type").string_value() == "glm4v_moe_text") {
      text_fields["model_type"].set_string_value("glm4_moe");
    }
  }
  // MiniCPMVConfig subclasses the language model's configuration: its
  // version says which.
  if (type == "minicpmv") {
    absl::StatusOr<std::string> language = MiniCpmvLanguageModel(Config(root));
    if (!language.ok()) return language.status();
    (*text.mutable_fields())["model_type"].set_string_value(*language);
  }
  // MllamaTextConfig: Llama's blocks, cross-attention layers among them
  // (counted after the language model is read), its own defaults.
  int cross_attention_layers = 0;
  if (type == "mllama") {
    absl::StatusOr<int> crossing = MllamaTextConfig(&text);
    if (!crossing.ok()) return crossing.status();
    cross_attention_layers = *crossing;
  }
  const bool qwen3_5 = type == "qwen3_5" || type == "qwen3_5_moe";
  const bool qwen3_vl = type == "qwen3_vl" || type == "qwen3_vl_moe";
  auto& t = *text.mutable_fields();
  for (const char* key : kTopLevelTextKeys) {
    // Mistral3Config's own tie_word_embeddings (true by default in newer
    // transformers) says nothing of its language model, whose lm_head is
    // untied unless text_config says so (transformers #42313).
    if ((type == "mistral3" || internvl) && absl::string_view(key) == "tie_word_embeddings") {
      continue;
    }
    if (!t.count(key) && fields.count(key)) t[key] = fields.at(key);
  }
  // InternVLChatConfig unties the language model "for models of all
  // sizes": its checkpoints store lm_head even over Qwen2-0.5B.
  if (type == "internvl_chat" || type == "h2ovl_chat") {
    t["tie_word_embeddings"].set_bool_value(false);
  }
  // Idefics3ForConditionalGeneration ties lm_head by its own config's flag
  // (Idefics3Config's default: false), whatever its base language model
  // did (SmolLM2 ties; SmolVLM stores lm_head).
  if (type == "idefics3" || type == "smolvlm") {
    t["tie_word_embeddings"].set_bool_value(Config(root).Bool("tie_word_embeddings", false));
  }
  if (qwen3_vl) {
    // Qwen3VLTextConfig and Qwen3VLMoeTextConfig are Qwen3's and Qwen3-MoE's
    // blocks (their multimodal rotary sections change no weight).
    t["model_type"].set_string_value(type == "qwen3_vl" ? "qwen3" : "qwen3_moe");
  } else if (!t.count("model_type") || qwen_vl || phi3_v) {
    t["model_type"].set_string_value(
        type == "llava" || type == "llava_next" || type == "idefics3" || type == "smolvlm" ? "llama"
        : type == "mistral3"                      ? "mistral"
        : type == "gemma3"                        ? "gemma3_text"
        : type == "paligemma"                     ? "gemma"
        : type == "phi3_v"                        ? "phi3"
        : type == "glm4v"                         ? "glm4"
        : type == "gemma4"                        ? "gemma4_text"
        : type == "llama4"                        ? "llama4_text"
        : type == "qwen3_5"                       ? "qwen3_5_text"
        : type == "qwen3_5_moe"                   ? "qwen3_5_moe_text"
        : type == "lfm2_vl"                       ? "lfm2"
        : type == "kimi_k25" || type == "kimi_vl" ? "deepseek_v3"
        : type == "deepseek_vl_v2"                ? "deepseek_v2"
                                                  : "qwen2");
  }
  const std::string text_type = t["model_type"].string_value();
  if (MultimodalTypes().count(text_type)) {
    return InvalidFieldError(absl::StrCat(kField, ".text_config.model_type"),
                             "a multimodal model inside another is not counted");
  }
  if (auto defaults = TextDefaults().find(text_type); defaults != TextDefaults().end()) {
    for (const auto& [key, value] : defaults->second) {
      if (!t.count(key)) t[key].set_number_value(value);
    }
  }
  std::string text_json;
  if (!google::protobuf::util::MessageToJsonString(text, &text_json).ok()) {
    return InvalidFieldError(absl::StrCat(kField, ".text_config"), "cannot be read");
  }
  absl::StatusOr<common::v1::Architecture> a = ArchitectureFromHfConfig(text_json);
  if (!a.ok()) {
    if (GetFieldViolations(a.status()).empty()) return a.status();
    absl::Status in_text = InPart(a.status(), "text_config");
    if (absl::StrContains(a.status().message(), "is not a family")) {
      return WithReason(in_text, "UNSUPPORTED_MODEL_TYPE");
    }
    return in_text;
  }
  const int64_t text_hidden = a->hidden_size();
  // What runtimes load: the wrapper, not its language model alone.
  a->set_wrapper_model_type(type);

  if (type == "qwen2_audio") {
    static const Struct* const kEmpty = new Struct();
    const Struct* audio = sub("audio_config");
    const Config c(audio != nullptr ? *audio : *kEmpty);
    // Qwen2AudioEncoderConfig defaults (Whisper large-v3's encoder).
    common::v1::EncoderPart encoder;
    encoder.set_kind("audio_encoder");
    encoder.set_layout("whisper_encoder");
    absl::Status error;
    auto take = [&](absl::StatusOr<int64_t> value) -> int64_t {
      return TakeEncoderFigure(std::move(value), &error);
    };
    encoder.set_num_layers(static_cast<int32_t>(take(c.Int({"encoder_layers"}, 32))));
    encoder.set_hidden_size(take(c.Int({"d_model"}, 1280)));
    encoder.set_intermediate_size(take(c.Int({"encoder_ffn_dim"}, 5120)));
    encoder.set_num_mel_bins(static_cast<int32_t>(take(c.Int({"num_mel_bins"}, 128))));
    encoder.set_max_positions(static_cast<int32_t>(take(c.Int({"max_source_positions"}, 1500))));
    if (!error.ok()) return InPart(error, "audio_config");
    common::v1::EncoderPart projector;
    projector.set_kind("projector");
    projector.set_layout("linear_projector");
    projector.set_hidden_size(encoder.hidden_size());
    projector.set_output_size(text_hidden);
    *a->add_encoder_parts() = std::move(encoder);
    *a->add_encoder_parts() = std::move(projector);
  } else {
    static const Struct* const kEmpty = new Struct();
    const Struct* vision = sub("vision_config");
    absl::StatusOr<common::v1::EncoderPart> encoder =
        VisionPart(vision != nullptr ? *vision : *kEmpty, type);
    if (!encoder.ok()) return encoder.status();
    common::v1::EncoderPart projector;
    projector.set_kind("projector");
    projector.set_hidden_size(encoder->hidden_size());
    if (qwen_vl || qwen3_5 || qwen3_vl) {
      // Qwen3.5's merger is Qwen2-VL's: a LayerNorm and two biased linears;
      // Qwen3-VL's adds one merger per deepstack_visual_indexes entry
      // (num_layers of the qwen3_vl_merger part).
      projector.set_layout(type == "qwen2_5_vl" ? "qwen2_5_vl_merger"
                           : qwen3_vl           ? "qwen3_vl_merger"
                                                : "qwen2_vl_merger");
      projector.set_spatial_merge_size(encoder->spatial_merge_size());
      projector.set_output_size(encoder->output_size());
      encoder->clear_output_size();
      if (qwen3_vl && vision != nullptr) {
        const Value* deepstack = Config(*vision).Find({"deepstack_visual_indexes"});
        if (deepstack != nullptr && deepstack->kind_case() == Value::kListValue) {
          projector.set_num_layers(deepstack->list_value().values_size());
        }
      }
    } else if (type == "mistral3") {
      // Mistral3MultiModalProjector: its linears take one vision layer's
      // features (vision_feature_layer a number) and carry biases with
      // multimodal_projector_bias; neither other case is counted.
      const Config top(root);
      if (const Value* layer = top.Find({"vision_feature_layer"});
          layer != nullptr && layer->kind_case() == Value::kListValue) {
        return WithReason(InvalidFieldError(absl::StrCat(kField, ".vision_feature_layer"),
                                            "a list of vision layers is not counted by this "
                                            "reader (one layer's features: a number)"),
                          "UNSUPPORTED_MODEL_TYPE");
      }
      if (top.Bool("multimodal_projector_bias", false)) {
        return WithReason(InvalidFieldError(absl::StrCat(kField, ".multimodal_projector_bias"),
                                            "projector biases are not counted by this reader"),
                          "UNSUPPORTED_MODEL_TYPE");
      }
      absl::Status error;
      const int64_t merge = TakeEncoderFigure(top.Int({"spatial_merge_size"}, 2), &error);
      if (!error.ok()) return error;
      projector.set_layout("mistral3_projector");
      projector.set_spatial_merge_size(static_cast<int32_t>(merge));
      projector.set_output_size(text_hidden);
    } else if (internvl) {
      absl::Status projected = InternVlProjector(Config(root), text_hidden, &projector);
      if (!projected.ok()) return projected;
    } else if (type == "lfm2_vl") {
      absl::Status lfm2 = Lfm2VlProjector(Config(root), text_hidden, &*encoder, &projector);
      if (!lfm2.ok()) return lfm2;
    } else if (type == "deepseek_vl_v2") {
      absl::Status projected = DeepSeekOcrProjector(Config(root), text_hidden, &projector);
      if (!projected.ok()) return projected;
    } else if (type == "kimi_k25" || type == "kimi_vl") {
      absl::Status projected =
          KimiK25Projector(Config(vision != nullptr ? *vision : *kEmpty), text_hidden, &projector);
      if (!projected.ok()) return projected;
    } else if (type == "idefics3" || type == "smolvlm") {
      absl::Status error;
      const int64_t scale = TakeEncoderFigure(Config(root).Int({"scale_factor"}, 2), &error);
      if (!error.ok()) return error;
      projector.set_layout("idefics3_connector");
      projector.set_spatial_merge_size(static_cast<int32_t>(scale));
      projector.set_output_size(text_hidden);
    } else if (type == "glm4v" || type == "glm4v_moe") {
      // Glm4vVisionPatchMerger: proj out x out, a LayerNorm, a GLU of
      // intermediate_size, no biases; its output is the text width.
      absl::Status error;
      const int64_t merger =
          TakeEncoderFigure(Config(vision != nullptr ? *vision : *kEmpty)
                                .Int({"intermediate_size"}, type == "glm4v" ? 13696 : 10944),
                            &error);
      if (!error.ok()) return InPart(error, "vision_config");
      if (encoder->output_size() != text_hidden) {
        return InvalidFieldError(
            absl::StrCat(kField, ".vision_config.out_hidden_size"),
            absl::StrCat(encoder->output_size(), " differs from the language model's width ",
                         text_hidden, ", which takes the merger's output"));
      }
      projector.set_layout("glm4v_merger");
      projector.set_hidden_size(encoder->output_size());
      projector.set_intermediate_size(merger);
      projector.set_output_size(text_hidden);
    } else if (type == "phi3_v") {
      absl::Status projected = Phi3VProjector(sub("img_processor"), sub("embd_layer"), text_hidden,
                                              *encoder, &projector);
      if (!projected.ok()) return projected;
    } else if (type == "paligemma") {
      absl::Status projected =
          PaliGemmaProjector(Config(root), vision, text_hidden, &*encoder, &projector);
      if (!projected.ok()) return projected;
    } else if (type == "minicpmv") {
      // The Resampler: query_num learned queries of the text width.
      const Config top(root);
      absl::Status error;
      const int64_t queries = TakeEncoderFigure(top.Int({"query_num"}, 64), &error);
      if (!error.ok()) return error;
      if (top.Bool("drop_vision_last_layer", true)) {
        if (encoder->num_layers() < 2) {
          return InvalidFieldError(absl::StrCat(kField, ".vision_config.num_hidden_layers"),
                                   "must be at least 2 when drop_vision_last_layer drops one");
        }
        encoder->set_num_layers(encoder->num_layers() - 1);
      }
      projector.set_layout("minicpmv_resampler");
      projector.set_num_queries(static_cast<int32_t>(queries));
      projector.set_output_size(text_hidden);
    } else if (type == "mllama") {
      // multi_modal_projector: one biased linear from the tower's output
      // (its last layer's and intermediate layers' states side by side).
      // The cross-attention layers attend to one image's tiles, each
      // (image / patch)^2 patches and a class token.
      projector.set_layout("linear_projector");
      projector.set_hidden_size(encoder->output_size());
      projector.set_output_size(text_hidden);
      const int64_t side = encoder->image_size() / encoder->patch_size();
      a->set_num_cross_attention_layers(cross_attention_layers);
      a->set_cross_attention_positions(int64_t{encoder->max_tiles()} * (side * side + 1));
      a->set_extra_embedding_rows(kMllamaExtraEmbeddingRows);
    } else if (type == "llama4") {
      // Llama4MultiModalProjector: one linear without bias from the
      // adapter's output.
      projector.set_layout("llama4_projector");
      projector.set_hidden_size(encoder->output_size());
      projector.set_output_size(text_hidden);
    } else {
      projector.set_layout(type == "gemma3"   ? "gemma3_projector"
                           : type == "gemma4" ? "gemma4_projector"
                           : type == "llava_next" || type == "llava_onevision"
                               ? "llava_next_projector"
                               : "llava_projector");
      projector.set_output_size(text_hidden);
    }
    *a->add_encoder_parts() = *std::move(encoder);
    *a->add_encoder_parts() = std::move(projector);
    if (const Struct* audio = sub("audio_config"); type == "gemma4" && audio != nullptr) {
      // E2B and E4B: the audio conformer and embed_audio, one linear from
      // its output (output_proj_dims) without bias.
      absl::StatusOr<common::v1::EncoderPart> tower = Gemma4AudioPart(Config(*audio));
      if (!tower.ok()) return InPart(tower.status(), "audio_config");
      common::v1::EncoderPart embedder;
      embedder.set_kind("projector");
      embedder.set_layout("gemma4_projector");
      embedder.set_hidden_size(tower->output_size());
      embedder.set_output_size(text_hidden);
      *a->add_encoder_parts() = *std::move(tower);
      *a->add_encoder_parts() = std::move(embedder);
    }
  }
  a->set_source(absl::StrCat(
      "config.json (", type, ": the language model from ",
      (qwen_vl || phi3_v || type == "minicpmv") && !sub("text_config") ? "the top level"
      : internvl && !sub("text_config")                                ? "llm_config"
      : type == "deepseek_vl_v2"                                       ? "language_config"
                                                                       : "text_config",
      type == "qwen2_audio"                                ? ", audio_config"
      : type == "gemma4" && sub("audio_config") != nullptr ? ", vision_config, audio_config"
                                                           : ", vision_config",
      ")"));
  return a;
}

// Mamba-1's dt rank: a number, or "auto" = ceil(hidden_size / 16)
// (transformers MambaConfig time_step_rank, JambaConfig mamba_dt_rank).
absl::StatusOr<int64_t> DtRank(const Config& c, const char* key, int64_t hidden) {
  if (c.String(key) == "auto" || c.Find({key}) == nullptr) return (hidden + 15) / 16;
  return c.Int({key}, 0);
}

// True when the config keeps the SSM state in fp32 (Qwen3.5's
// mamba_ssm_dtype, Nemotron Nano 2's mamba_ssm_cache_dtype).
bool SsmStateFp32(const Config& c) {
  return c.String("mamba_ssm_dtype") == "float32" || c.String("mamba_ssm_cache_dtype") == "float32";
}

// Mamba, Falcon-Mamba and Mamba-2: a stack of mixers, one RMSNorm each,
// no attention and no MLP (transformers MambaConfig, FalconMambaConfig,
// Mamba2Config and their defaults).
absl::StatusOr<common::v1::Architecture> StateSpaceArchitecture(const Config& c,
                                                                const std::string& type) {
  common::v1::Architecture a;
  a.set_model_type(type);
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> v) -> int64_t {
    if (!v.ok() && error.ok()) error = v.status();
    return v.ok() ? *v : 0;
  };
  const int64_t layers = take(c.Required({"num_hidden_layers", "n_layer"}));
  const int64_t hidden = take(c.Required({"hidden_size", "d_model"}));
  a.set_vocab_size(take(c.Required({"vocab_size"})));
  if (!error.ok()) return error;
  a.set_num_layers(static_cast<int32_t>(layers));
  a.set_hidden_size(hidden);
  a.set_norm_type(common::v1::NORM_TYPE_RMS_NORM);
  a.set_norms_per_layer(1);
  a.set_recurrent_mixer(type == "mamba2" ? "mamba2" : "mamba");
  a.set_num_recurrent_layers(static_cast<int32_t>(layers));
  a.set_ssm_conv_kernel(static_cast<int32_t>(take(c.Int({"conv_kernel"}, 4))));
  a.set_ssm_conv_bias(c.Bool("use_conv_bias", true));
  a.set_ssm_proj_bias(c.Bool("use_bias", false));
  a.set_ssm_state_fp32(SsmStateFp32(c));
  const int64_t expand = take(c.Int({"expand"}, 2));
  if (type == "mamba2") {
    // Mamba2Config: num_heads x head_dim inner channels, n_groups for B/C,
    // a gated RMSNorm before out_proj; untied by default.
    const int64_t heads = take(c.Int({"num_heads"}, 128));
    const int64_t head_dim = take(c.Int({"head_dim"}, 64));
    a.set_ssm_inner_size(heads * head_dim);
    a.set_ssm_num_heads(static_cast<int32_t>(heads));
    a.set_ssm_num_groups(static_cast<int32_t>(take(c.Int({"n_groups"}, 8))));
    a.set_ssm_state_size(static_cast<int32_t>(take(c.Int({"state_size"}, 128))));
    a.set_ssm_gated_norm(true);
    a.set_tie_word_embeddings(c.Bool("tie_word_embeddings", false));
  } else {
    // MambaConfig: intermediate_size = expand x hidden_size inner channels;
    // tied by default.
    a.set_ssm_inner_size(take(c.Int({"intermediate_size"}, expand * hidden)));
    a.set_ssm_state_size(static_cast<int32_t>(take(c.Int({"state_size"}, 16))));
    a.set_ssm_dt_rank(static_cast<int32_t>(take(DtRank(c, "time_step_rank", hidden))));
    a.set_tie_word_embeddings(c.Bool("tie_word_embeddings", true));
  }
  if (!error.ok()) return error;
  a.set_source("config.json");
  return a;
}

// A list of strings: how many entries equal `value`, or -1 without it.
int CountIn(const Config& c, const char* key, const char* value) {
  return c.CountStrings(key, value);
}

// How many distinct layers the list `key` names (LFM2's full_attn_idxs,
// Bamba's attn_layer_indices); INVALID_ARGUMENT naming the key when an entry
// is not a layer index from 0 to L - 1. An empty list names none.
absl::StatusOr<int> CountLayerIndices(const Config& c, const char* key, int L) {
  const Value* listed = c.Find({key});
  std::set<int64_t> layers;
  bool valid = listed != nullptr && listed->kind_case() == Value::kListValue;
  if (valid) {
    for (const Value& item : listed->list_value().values()) {
      if (item.kind_case() != Value::kNumberValue || item.number_value() < 0 ||
          item.number_value() >= L || item.number_value() != std::floor(item.number_value())) {
        valid = false;
        break;
      }
      layers.insert(static_cast<int64_t>(item.number_value()));
    }
  }
  if (!valid) {
    return InvalidFieldError(absl::StrCat(kField, ".", key),
                             absl::StrCat("must list layer indices from 0 to ", L - 1));
  }
  return static_cast<int>(layers.size());
}

// LFM2 and LFM2-MoE (transformers models/lfm2, models/lfm2_moe): layer_types
// names each layer's operator, "full_attention" (GQA with a per-head RMSNorm
// on queries and keys) or "conv" (Lfm2ShortConv: in_proj to B, C and x of
// hidden_size each, a depthwise conv1d of conv_L_cache taps, out_proj);
// without it, full_attn_idxs lists the attention layers (Lfm2Config; neither
// key: every layer attends). Every layer has a SwiGLU MLP. LFM2's width is
// block_ff_dim (else intermediate_size), with block_auto_adjust_ff_dim taken
// to 2/3 of it, times block_ffn_dim_multiplier, rounded up to a multiple of
// block_multiple_of (Lfm2MLP). LFM2-MoE: the first num_dense_layers layers
// dense at intermediate_size as written, the others routed (num_experts of
// moe_intermediate_size, no shared expert); its router's expert_bias is a
// buffer, not a parameter (model.num_parameters() leaves it out). The
// embeddings are tied unless tie_embedding or tie_word_embeddings says not.
absl::Status Lfm2Layers(const Config& c, const std::string& type, common::v1::Architecture* a) {
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> v) -> int64_t {
    if (!v.ok() && error.ok()) error = v.status();
    return v.ok() ? *v : 0;
  };
  const int L = a->num_layers();
  int attention = CountIn(c, "layer_types", "full_attention");
  if (attention >= 0) {
    const int conv = CountIn(c, "layer_types", "conv");
    if (attention + conv != L) {
      return InvalidFieldError(absl::StrCat(kField, ".layer_types"),
                               absl::StrCat("must name \"full_attention\" or \"conv\" for each "
                                            "of the ",
                                            L, " layers"));
    }
  } else if (c.Find({"full_attn_idxs"}) != nullptr) {
    absl::StatusOr<int> listed = CountLayerIndices(c, "full_attn_idxs", L);
    if (!listed.ok()) return listed.status();
    attention = *listed;
  } else {
    attention = L;
  }
  a->set_recurrent_mixer("short_conv");
  a->set_num_attention_layers(attention);
  a->set_num_recurrent_layers(L - attention);
  a->set_num_mlp_layers(L);
  a->set_ssm_inner_size(a->hidden_size());
  a->set_ssm_conv_kernel(static_cast<int32_t>(take(c.Int({"conv_L_cache"}, 3))));
  a->set_ssm_conv_bias(c.Bool("conv_bias", false));
  a->set_ssm_proj_bias(a->ssm_conv_bias());
  a->set_qk_norm(true);
  a->set_tie_word_embeddings(c.Bool("tie_embedding", c.Bool("tie_word_embeddings", true)));
  if (type == "lfm2") {
    int64_t ff = take(c.Int({"block_ff_dim", "intermediate_size"}, 12288));
    if (c.Bool("block_auto_adjust_ff_dim", true)) {
      ff = 2 * ff / 3;
      const Value* multiplier = c.Find({"block_ffn_dim_multiplier"});
      if (multiplier != nullptr &&
          (multiplier->kind_case() != Value::kNumberValue || multiplier->number_value() <= 0)) {
        return InvalidFieldError(absl::StrCat(kField, ".block_ffn_dim_multiplier"),
                                 "must be a positive number");
      }
      if (multiplier != nullptr) {
        ff = static_cast<int64_t>(multiplier->number_value() * static_cast<double>(ff));
      }
      const int64_t multiple = std::max<int64_t>(1, take(c.Int({"block_multiple_of"}, 256)));
      ff = multiple * ((ff + multiple - 1) / multiple);
    }
    a->set_intermediate_size(ff);
    a->set_num_experts(0);
  } else {
    a->set_intermediate_size(take(c.Int({"intermediate_size"}, 7168)));
    const int64_t dense = take(c.Int({"num_dense_layers"}, 2));
    if (dense > L) {
      return InvalidFieldError(absl::StrCat(kField, ".num_dense_layers"),
                               absl::StrCat("is ", dense, "; the model has ", L, " layers"));
    }
    a->set_num_dense_layers(static_cast<int32_t>(dense));
  }
  return error;
}

// The layers a list names, 1-based (KimiLinearConfig's is_kda_layer:
// (index + 1) in kda_layers): each a whole number in [1, layers], none twice.
absl::StatusOr<std::set<int64_t>> OneBasedLayers(const Value* listed, int layers,
                                                 const std::string& field) {
  if (listed == nullptr || listed->kind_case() != Value::kListValue) {
    return InvalidFieldError(field, "is required: a list of layers (1-based)");
  }
  std::set<int64_t> out;
  for (const Value& item : listed->list_value().values()) {
    const bool whole = item.kind_case() == Value::kNumberValue &&
                       item.number_value() == std::floor(item.number_value());
    if (!whole || item.number_value() < 1 || item.number_value() > layers ||
        !out.insert(static_cast<int64_t>(item.number_value())).second) {
      return InvalidFieldError(
          field, absl::StrCat("must list layers 1 to ", layers, " (1-based), each once"));
    }
  }
  return out;
}

// Kimi Linear (KimiLinearConfig, modeling_kimi.py; vLLM kimi_linear.py):
// linear_attn_config lists the Kimi Delta Attention layers (kda_layers) and
// the full-attention ones (full_attn_layers), 1-based, which together are
// every layer once; the full-attention layers are DeepSeek-V3's latent
// attention without a query LoRA (q_lora_rank null) and without rotary
// positions (mla_use_nope), which changes no weight and no cache; KDA has
// num_heads heads of head_dim for queries, keys and values and a conv of
// short_conv_kernel_size taps. The first first_k_dense_replace layers are
// dense (intermediate_size), the others routed: num_experts of
// moe_intermediate_size, num_experts_per_token a token, num_shared_experts
// shared ones, a router bias (e_score_correction_bias, a parameter in the
// checkpoint). vLLM keeps the recurrent state in fp32 (kda_state_dtype).
absl::Status KimiLinearLayers(const Config& c, common::v1::Architecture* a) {
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> v) -> int64_t {
    if (!v.ok() && error.ok()) error = v.status();
    return v.ok() ? *v : 0;
  };
  const int L = a->num_layers();
  const std::string field = absl::StrCat(kField, ".linear_attn_config");
  const Value* linear = c.Find({"linear_attn_config"});
  if (linear == nullptr || linear->kind_case() != Value::kStructValue) {
    return InvalidFieldError(field, "is required for kimi_linear (kda_layers, full_attn_layers)");
  }
  const Config lc(linear->struct_value());
  absl::StatusOr<std::set<int64_t>> full =
      OneBasedLayers(lc.Find({"full_attn_layers"}), L, absl::StrCat(field, ".full_attn_layers"));
  if (!full.ok()) return full.status();
  absl::StatusOr<std::set<int64_t>> kda =
      OneBasedLayers(lc.Find({"kda_layers"}), L, absl::StrCat(field, ".kda_layers"));
  if (!kda.ok()) return kda.status();
  for (int64_t layer : *full) {
    if (kda->count(layer)) {
      return InvalidFieldError(absl::StrCat(field, ".kda_layers"),
                               absl::StrCat("and full_attn_layers both list layer ", layer));
    }
  }
  if (static_cast<int>(full->size() + kda->size()) != L) {
    return InvalidFieldError(
        absl::StrCat(field, ".kda_layers"),
        absl::StrCat("and full_attn_layers list ", full->size() + kda->size(), " layers of ", L));
  }
  if (take(c.Int({"moe_layer_freq"}, 1)) != 1) {
    return WithReason(InvalidFieldError(absl::StrCat(kField, ".moe_layer_freq"),
                                        "routed layers other than every layer after "
                                        "first_k_dense_replace are not counted by this reader"),
                      "UNSUPPORTED_MODEL_TYPE");
  }
  const int64_t heads = take(lc.Required({"num_heads"}));
  const int64_t head_dim = take(lc.Required({"head_dim"}));
  a->set_recurrent_mixer("kda");
  a->set_num_attention_layers(static_cast<int32_t>(full->size()));
  a->set_num_recurrent_layers(static_cast<int32_t>(kda->size()));
  a->set_num_mlp_layers(L);
  a->set_ssm_num_heads(static_cast<int32_t>(heads));
  a->set_ssm_num_groups(static_cast<int32_t>(heads));
  a->set_ssm_state_size(static_cast<int32_t>(head_dim));
  a->set_ssm_inner_size(heads * head_dim);
  a->set_ssm_conv_kernel(static_cast<int32_t>(take(lc.Int({"short_conv_kernel_size"}, 4))));
  a->set_ssm_gated_norm(true);
  a->set_ssm_state_fp32(true);
  // head_dim at the top level (hidden_size / heads) is not the latent
  // attention's: its widths are qk_nope_head_dim, qk_rope_head_dim and
  // v_head_dim.
  a->clear_head_dim();
  a->set_num_experts_per_token(static_cast<int32_t>(take(c.Int({"num_experts_per_token"}, 0))));
  a->set_num_shared_experts(static_cast<int32_t>(take(c.Int({"num_shared_experts"}, 0))));
  if (a->num_experts() > 0) a->set_router_bias(true);
  if (a->max_context_length() == 0) {
    a->set_max_context_length(take(c.Int({"model_max_length"}, 0)));
  }
  return error;
}

// The layer pattern and mixer of the hybrids that also have attention,
// after their transformers configuration classes; `a` already holds the
// attention, MLP and MoE fields the common path reads.
absl::Status HybridArchitecture(const Config& c, const Struct& root, const std::string& type,
                                common::v1::Architecture* a) {
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> v) -> int64_t {
    if (!v.ok() && error.ok()) error = v.status();
    return v.ok() ? *v : 0;
  };
  const int L = a->num_layers();
  const int64_t h = a->hidden_size();
  a->set_ssm_state_fp32(SsmStateFp32(c));
  // The Mamba-2 mixer's mamba_* keys, which FalconH1Config and
  // GraniteMoeHybridConfig share. Falcon-H1 may state the inner width
  // (`inner_key` mamba_d_ssm); its gated norm is a key, Granite's always on.
  auto read_mamba2_mixer = [&](const char* inner_key, bool gated_norm) {
    const int64_t heads = take(c.Int({"mamba_n_heads"}, 128));
    const int64_t head_dim =
        c.String("mamba_d_head") == "auto" ? 0 : take(c.Int({"mamba_d_head"}, 0));
    const int64_t derived = head_dim > 0 ? heads * head_dim : take(c.Int({"mamba_expand"}, 2)) * h;
    a->set_ssm_inner_size(inner_key != nullptr ? take(c.Int({inner_key}, derived)) : derived);
    a->set_ssm_num_heads(static_cast<int32_t>(heads));
    a->set_ssm_num_groups(static_cast<int32_t>(take(c.Int({"mamba_n_groups"}, 1))));
    a->set_ssm_state_size(static_cast<int32_t>(take(c.Int({"mamba_d_state"}, 256))));
    a->set_ssm_conv_kernel(static_cast<int32_t>(take(c.Int({"mamba_d_conv"}, 4))));
    a->set_ssm_conv_bias(c.Bool("mamba_conv_bias", true));
    a->set_ssm_proj_bias(c.Bool("mamba_proj_bias", false));
    a->set_ssm_gated_norm(gated_norm);
  };
  if (type == "jamba") {
    // JambaConfig: attention in layers i % attn_layer_period ==
    // attn_layer_offset (4 of 32 for Jamba-v0.1), Mamba-1 elsewhere; MoE in
    // layers i % expert_layer_period == expert_layer_offset, a dense MLP in
    // the others; JambaMambaMixer adds RMSNorms on dt, B and C.
    const int64_t period = std::max<int64_t>(1, take(c.Int({"attn_layer_period"}, 8)));
    const int64_t offset = take(c.Int({"attn_layer_offset"}, 4));
    const int64_t e_period = std::max<int64_t>(1, take(c.Int({"expert_layer_period"}, 2)));
    const int64_t e_offset = take(c.Int({"expert_layer_offset"}, 1));
    int attention = 0, moe = 0;
    for (int i = 0; i < L; ++i) {
      if (i % period == offset) ++attention;
      if (i % e_period == e_offset) ++moe;
    }
    a->set_recurrent_mixer("mamba");
    a->set_num_attention_layers(attention);
    a->set_num_recurrent_layers(L - attention);
    a->set_num_mlp_layers(L);
    a->set_num_dense_layers(a->num_experts() > 1 ? L - moe : 0);
    if (a->num_experts() <= 1) a->set_num_experts(0);
    a->set_ssm_inner_size(take(c.Int({"mamba_expand"}, 2)) * h);
    a->set_ssm_state_size(static_cast<int32_t>(take(c.Int({"mamba_d_state"}, 16))));
    a->set_ssm_conv_kernel(static_cast<int32_t>(take(c.Int({"mamba_d_conv"}, 4))));
    a->set_ssm_dt_rank(static_cast<int32_t>(take(DtRank(c, "mamba_dt_rank", h))));
    a->set_ssm_conv_bias(c.Bool("mamba_conv_bias", true));
    a->set_ssm_proj_bias(c.Bool("mamba_proj_bias", false));
    a->set_ssm_gated_norm(true);
  } else if (type == "falcon_h1") {
    // FalconH1Config: every layer runs attention and a Mamba-2 mixer side by
    // side, then a gated MLP; mamba_d_ssm inner channels (else heads x
    // head dim, else expand x hidden); the mixer's norm only with
    // mamba_rms_norm.
    a->set_recurrent_mixer("mamba2");
    a->set_num_attention_layers(L);
    a->set_num_recurrent_layers(L);
    a->set_num_mlp_layers(L);
    read_mamba2_mixer("mamba_d_ssm", c.Bool("mamba_rms_norm", false));
  } else if (HasQwen3NextBlocks(type)) {
    // Qwen3NextConfig: layer_types, else full attention every
    // full_attention_interval-th layer (i + 1) % interval == 0, Gated
    // DeltaNet in the others; MoE except mlp_only_layers and off the
    // decoder_sparse_step; gated attention (q_proj twice as wide).
    int full = CountIn(c, "layer_types", "full_attention");
    if (full < 0) {
      const int64_t interval = std::max<int64_t>(1, take(c.Int({"full_attention_interval"}, 4)));
      full = 0;
      for (int i = 0; i < L; ++i) full += (i + 1) % interval == 0;
    }
    a->set_recurrent_mixer("gated_deltanet");
    a->set_num_attention_layers(full);
    a->set_num_recurrent_layers(L - full);
    a->set_num_mlp_layers(L);
    const int64_t v_heads = take(c.Int({"linear_num_value_heads"}, 32));
    a->set_ssm_num_heads(static_cast<int32_t>(v_heads));
    a->set_ssm_inner_size(v_heads * take(c.Int({"linear_value_head_dim"}, 128)));
    a->set_ssm_num_groups(static_cast<int32_t>(take(c.Int({"linear_num_key_heads"}, 16))));
    a->set_ssm_state_size(static_cast<int32_t>(take(c.Int({"linear_key_head_dim"}, 128))));
    a->set_ssm_conv_kernel(static_cast<int32_t>(take(c.Int({"linear_conv_kernel_dim"}, 4))));
    a->set_ssm_gated_norm(true);
    a->set_attention_output_gate(true);
    // MoE layers: not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0.
    const int64_t step = std::max<int64_t>(1, take(c.Int({"decoder_sparse_step"}, 1)));
    std::set<int64_t> mlp_only;
    if (const Value* v = c.Find({"mlp_only_layers"});
        v != nullptr && v->kind_case() == Value::kListValue) {
      for (const Value& item : v->list_value().values()) {
        if (item.kind_case() == Value::kNumberValue) {
          mlp_only.insert(static_cast<int64_t>(item.number_value()));
        }
      }
    }
    int moe = 0;
    for (int i = 0; i < L; ++i) moe += !mlp_only.count(i) && (i + 1) % step == 0;
    a->set_num_dense_layers(a->num_experts() > 0 ? L - moe : 0);
    a->set_shared_expert_intermediate_size(take(c.Int({"shared_expert_intermediate_size"}, 0)));
    a->set_shared_expert_gate(a->shared_expert_intermediate_size() > 0);
    // The checkpoints ship one multi-token-prediction layer (mtp.*) that
    // uses the model's embedding and head: Qwen3-Next-80B-A3B-Instruct's
    // 81,324,862,720 parameters are the 79,674,391,296 of the model plus
    // exactly one such layer (docs/ACCURACY.md).
    a->set_num_mtp_layers(static_cast<int32_t>(
        take(c.Int({"num_nextn_predict_layers", "mtp_num_hidden_layers"}, 1))));
    a->set_mtp_shares_embeddings(true);
  } else if (type == "lfm2" || type == "lfm2_moe") {
    if (absl::Status lfm2 = Lfm2Layers(c, type, a); !lfm2.ok()) return lfm2;
  } else if (type == "kimi_linear") {
    if (absl::Status kimi = KimiLinearLayers(c, a); !kimi.ok()) return kimi;
  } else if (type == "granitemoehybrid") {
    // GraniteMoeHybridConfig (Granite 4.0 H): layer_types names each layer's
    // mixer, "mamba" (GraniteMoeHybridMambaLayer: Mamba-2 with a gated
    // RMSNorm, mamba_n_heads x mamba_d_head inner channels) or "attention";
    // every layer then has an MoE block (num_local_experts experts of
    // intermediate_size, a router without bias) and a shared MLP of
    // shared_intermediate_size beside it, or the shared MLP alone without
    // experts (Granite 4.0 H 1B, Micro).
    const int mamba = CountIn(c, "layer_types", "mamba");
    const int attention = CountIn(c, "layer_types", "attention");
    if (mamba < 0 || attention < 0 || mamba + attention != L) {
      return InvalidFieldError(
          absl::StrCat(kField, ".layer_types"),
          absl::StrCat("must name \"mamba\" or \"attention\" for each of the ", L, " layers"));
    }
    a->set_recurrent_mixer("mamba2");
    a->set_num_recurrent_layers(mamba);
    a->set_num_attention_layers(attention);
    a->set_num_mlp_layers(L);
    const int64_t shared = take(c.Int({"shared_intermediate_size"}, 1024));
    if (a->num_experts() > 0) {
      a->set_shared_expert_intermediate_size(shared);
      a->set_num_shared_experts(1);
      a->set_num_dense_layers(0);
    } else {
      a->set_intermediate_size(shared);
    }
    read_mamba2_mixer(nullptr, true);
  } else if (type == "bamba") {
    // BambaConfig: attention in the attn_layer_indices layers (BambaAttention,
    // Llama's), BambaMixer (Mamba-2 with a gated RMSNorm; mamba_d_head
    // "auto" = mamba_expand x hidden / heads) in the others; a gated MLP
    // (BambaMLP) in every layer. Without the list every layer would be
    // Mamba-2, which this reader counts as mamba2.
    absl::StatusOr<int> attention = CountLayerIndices(c, "attn_layer_indices", L);
    if (!attention.ok()) return attention.status();
    if (*attention == 0) {
      return InvalidFieldError(absl::StrCat(kField, ".attn_layer_indices"),
                               "names no attention layer: a Bamba of Mamba-2 layers alone is not "
                               "counted by this reader (model_type mamba2 is)");
    }
    a->set_recurrent_mixer("mamba2");
    a->set_num_recurrent_layers(L - *attention);
    a->set_num_attention_layers(*attention);
    a->set_num_mlp_layers(L);
    read_mamba2_mixer(nullptr, true);
  } else if (type == "nemotron_h") {
    // NemotronHConfig: one mixer per layer as hybrid_override_pattern says
    // ("M" Mamba-2, "*" attention, "-" MLP, "E" MoE), one RMSNorm each; a
    // plain (relu2) MLP; Mamba-2 with a gated norm.
    const std::string pattern = c.String("hybrid_override_pattern");
    if (static_cast<int>(pattern.size()) != L) {
      return InvalidFieldError(
          absl::StrCat(kField, ".hybrid_override_pattern"),
          absl::StrCat("must have one character per layer (", L, "), has ", pattern.size()));
    }
    int mamba = 0, attention = 0, mlp = 0, moe = 0;
    for (char ch : pattern) {
      if (ch == 'M') {
        ++mamba;
      } else if (ch == '*') {
        ++attention;
      } else if (ch == '-') {
        ++mlp;
      } else if (ch == 'E') {
        ++moe;
      } else {
        return InvalidFieldError(absl::StrCat(kField, ".hybrid_override_pattern"),
                                 absl::StrCat("has '", std::string(1, ch),
                                              "'; known: M (Mamba-2), * (attention), - (MLP), "
                                              "E (MoE)"));
      }
    }
    if (moe > 0 && a->num_experts() <= 0) {
      return InvalidFieldError(absl::StrCat(kField, ".n_routed_experts"),
                               "must be positive when hybrid_override_pattern has MoE layers (E)");
    }
    a->set_recurrent_mixer("mamba2");
    a->set_num_recurrent_layers(mamba);
    a->set_num_attention_layers(attention);
    a->set_num_mlp_layers(mlp + moe);
    if (moe > 0) {
      // NemotronHMoE (Nemotron 3 Nano): routed relu2 experts (up and down
      // projections), a router, and a shared expert of
      // moe_shared_expert_intermediate_size; the "-" layers stay dense.
      a->set_num_dense_layers(mlp);
      a->set_shared_expert_intermediate_size(
          take(c.Int({"moe_shared_expert_intermediate_size"}, 0)));
      if (a->shared_expert_intermediate_size() > 0) {
        a->set_num_shared_experts(std::max(1, a->num_shared_experts()));
      }
    } else {
      a->set_num_experts(0);
    }
    a->set_norms_per_layer(1);
    a->set_gated_mlp(false);
    const int64_t heads = take(c.Int({"mamba_num_heads"}, 128));
    a->set_ssm_num_heads(static_cast<int32_t>(heads));
    a->set_ssm_inner_size(heads * take(c.Int({"mamba_head_dim"}, 64)));
    a->set_ssm_num_groups(static_cast<int32_t>(take(c.Int({"n_groups"}, 8))));
    a->set_ssm_state_size(static_cast<int32_t>(take(c.Int({"ssm_state_size"}, 128))));
    a->set_ssm_conv_kernel(static_cast<int32_t>(take(c.Int({"conv_kernel"}, 4))));
    a->set_ssm_conv_bias(c.Bool("use_conv_bias", true));
    a->set_ssm_proj_bias(c.Bool("use_bias", false));
    a->set_ssm_gated_norm(true);
    if (const int64_t head_dim = take(c.Int({"attention_head_dim", "head_dim"}, 0)); head_dim > 0) {
      a->set_head_dim(static_cast<int32_t>(head_dim));
    }
  }
  (void)root;
  return error;
}

// How a quantized checkpoint stores its weights, from config.json's
// quantization_config (transformers' quantizer configs,
// transformers/utils/quantization_config.py): a format the estimator sizes
// as a whole checkpoint, with its group size where it has groups, or what
// the config says when no format here sizes it. A config without
// quantization_config says nothing beyond its torch_dtype, which servers
// cast (vLLM serves float32 checkpoints in float16): nothing is set.
struct CheckpointQuantization {
  std::string format;      // the estimator's name, e.g. "awq-int4"; empty: none
  int64_t group_size = 0;  // input weights per scale group; 0: none
  std::string not_sized;   // quantized, but not in a format sized here
};

CheckpointQuantization Sized(std::string format, int64_t group_size = 0) {
  return {.format = std::move(format), .group_size = group_size};
}
CheckpointQuantization NotSized(std::string what) {
  return {.not_sized = what.substr(0, records::kMaxCheckpointNotSizedChars)};
}

// A name from the file, kept printable and short for the texts that quote it.
std::string Quoted(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (out.size() == 40) break;
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') {
      out.push_back(c);
    }
  }
  return out.empty() ? "unnamed" : out;
}

// A group size as the estimator takes it; -1 (GPTQ's per-column scales)
// and anything else: none.
std::optional<int64_t> GroupSize(const Config& q, std::initializer_list<const char*> keys) {
  const Value* v = q.Find(keys);
  if (v == nullptr || v->kind_case() != Value::kNumberValue) return std::nullopt;
  const double group = v->number_value();
  // Bounded before the cast (1e300 has no int64_t).
  if (!(group >= 1 && group <= 4096) || group != std::floor(group) ||
      !records::IsQuantizationGroupSize(static_cast<int64_t>(group))) {
    return std::nullopt;
  }
  return static_cast<int64_t>(group);
}

// A weight width in bits as the file gives it: a whole number from 1 to 64,
// else 0 (no width a format here has; a value such as 1e300 is not cast).
int64_t Bits(const Config& q, std::initializer_list<const char*> keys) {
  const Value* v = q.Find(keys);
  if (v == nullptr || v->kind_case() != Value::kNumberValue) return 0;
  const double bits = v->number_value();
  return bits >= 1 && bits <= 64 && bits == std::floor(bits) ? static_cast<int64_t>(bits) : 0;
}

// Whether a block shape (FineGrainedFP8Config's weight_block_size,
// compressed-tensors' block_structure) is [128, 128], the one fp8-block128
// sizes.
bool IsBlock128(const Value* block) {
  return block != nullptr && block->kind_case() == Value::kListValue &&
         block->list_value().values_size() == 2 &&
         block->list_value().values(0).number_value() == 128 &&
         block->list_value().values(1).number_value() == 128;
}

// GPTQ (AutoGPTQ, GPTQModel) and AWQ (AutoAWQ): int4 or int8 weights with a
// 16-bit scale and a zero point per group of `group_size` input weights.
CheckpointQuantization GptqOrAwq(const Config& q, const std::string& method) {
  const int64_t bits = Bits(q, {"bits", "w_bit"});
  const std::optional<int64_t> group = GroupSize(q, {"group_size", "q_group_size"});
  if (!group.has_value()) {
    const Value* g = q.Find({"group_size", "q_group_size"});
    const bool per_column =
        g != nullptr && g->kind_case() == Value::kNumberValue && g->number_value() == -1;
    return NotSized(absl::StrCat(method, ", ", bits, " bits, ",
                                 per_column ? "per-column scales (group_size -1)"
                                            : "no group size of 1-4096 (a power of two)"));
  }
  if (method == "awq" && bits == 4) return Sized("awq-int4", *group);
  if (method == "gptq" && bits == 4) return Sized("gptq-int4", *group);
  if (method == "gptq" && bits == 8) return Sized("gptq-int8", *group);
  return NotSized(absl::StrCat(method, ", ", bits, " bits"));
}

// bitsandbytes: NF4 (with or without double quantization) or LLM.int8.
CheckpointQuantization BitsAndBytes(const Config& q) {
  if (q.Bool("load_in_4bit", false)) {
    const std::string type = absl::AsciiStrToLower(q.String("bnb_4bit_quant_type"));
    if (type == "nf4") {
      return Sized(q.Bool("bnb_4bit_use_double_quant", false) ? "nf4-double-quant" : "nf4");
    }
    return NotSized(absl::StrCat("bitsandbytes, 4-bit ", Quoted(type.empty() ? "fp4" : type)));
  }
  if (q.Bool("load_in_8bit", false)) return Sized("int8");
  return NotSized("bitsandbytes, neither load_in_4bit nor load_in_8bit");
}

// compressed-tensors (llm-compressor): each config group names its weights'
// scheme; a checkpoint whose groups all share one scheme the estimator sizes
// is that format (FP8 per tensor or channel, FP8 in 128x128 blocks, INT8 per
// channel, W4A16 symmetric groups, NVFP4). Mixed or other schemes: not sized.
CheckpointQuantization CompressedTensors(const Config& q) {
  const Value* groups = q.Find({"config_groups"});
  if (groups == nullptr || groups->kind_case() != Value::kStructValue ||
      groups->struct_value().fields().empty()) {
    return NotSized("compressed-tensors without config_groups");
  }
  // How the file packs them: four-bit values eight to an int32 in
  // "pack-quantized" and "nvfp4-pack-quantized"; other formats keep a byte
  // per value or more.
  const std::string packing = absl::AsciiStrToLower(q.String("format"));
  std::optional<CheckpointQuantization> common;
  for (const auto& [name, group] : groups->struct_value().fields()) {
    if (group.kind_case() != Value::kStructValue) return NotSized("compressed-tensors");
    const Config g(group.struct_value());
    const Value* weights = g.Find({"weights"});
    if (weights == nullptr || weights->kind_case() != Value::kStructValue) {
      return NotSized("compressed-tensors, a group without weights");
    }
    const Config w(weights->struct_value());
    const int64_t bits = Bits(w, {"num_bits"});
    const std::string type = absl::AsciiStrToLower(w.String("type"));
    const std::string strategy = absl::AsciiStrToLower(w.String("strategy"));
    const bool symmetric = w.Bool("symmetric", true);
    CheckpointQuantization scheme =
        NotSized(absl::StrCat("compressed-tensors, ", Quoted(type), " ", bits, "-bit ",
                              Quoted(strategy), " weights", symmetric ? "" : ", asymmetric"));
    if (type == "float" && bits == 8) {
      if (strategy == "tensor" || strategy == "channel") {
        scheme = Sized("fp8");
      } else if (strategy == "block" && IsBlock128(w.Find({"block_structure"}))) {
        scheme = Sized("fp8-block128");
      }
    } else if (type == "int" && bits == 8 && symmetric &&
               (strategy == "tensor" || strategy == "channel")) {
      scheme = Sized("int8");
    } else if (type == "int" && bits == 4 && symmetric && strategy == "group" &&
               packing == "pack-quantized") {
      if (const std::optional<int64_t> size = GroupSize(w, {"group_size"})) {
        scheme = Sized("int4", *size);
      }
    } else if (type == "float" && bits == 4 && strategy == "tensor_group" &&
               GroupSize(w, {"group_size"}) == 16 && packing == "nvfp4-pack-quantized") {
      scheme = Sized("nvfp4");
    }
    if (!scheme.not_sized.empty()) return scheme;
    if (common.has_value() &&
        (common->format != scheme.format || common->group_size != scheme.group_size)) {
      return NotSized("compressed-tensors, groups with different weight schemes");
    }
    common = scheme;
  }
  return *common;
}

CheckpointQuantization CheckpointQuantizationOf(const Struct& root) {
  const auto found = root.fields().find("quantization_config");
  if (found == root.fields().end() || found->second.kind_case() == Value::kNullValue) return {};
  if (found->second.kind_case() != Value::kStructValue) {
    return NotSized("a quantization_config that is not an object");
  }
  const Config q(found->second.struct_value());
  std::string method = absl::AsciiStrToLower(q.String("quant_method"));
  // transformers reads a config with load_in_4bit or load_in_8bit and no
  // quant_method as bitsandbytes (older checkpoints).
  if (method.empty() && (q.Bool("load_in_4bit", false) || q.Bool("load_in_8bit", false))) {
    method = "bitsandbytes";
  }
  if (method == "mxfp4") return Sized("mxfp4");
  if (method == "fp8") {
    const Value* block = q.Find({"weight_block_size"});
    if (block == nullptr) return Sized("fp8");
    if (IsBlock128(block)) return Sized("fp8-block128");
    return NotSized("fp8 with a weight_block_size other than [128, 128]");
  }
  if (method == "fbgemm_fp8") return Sized("fp8");  // per-channel scales
  if (method == "modelopt") {
    const std::string algorithm = absl::AsciiStrToUpper(q.String("quant_algo"));
    if (algorithm == "FP8") return Sized("fp8");
    if (algorithm == "NVFP4") return Sized("nvfp4");
    return NotSized(absl::StrCat("modelopt, ", Quoted(algorithm)));
  }
  if (method == "gptq" || method == "awq") return GptqOrAwq(q, method);
  if (method == "bitsandbytes") return BitsAndBytes(q);
  if (method == "compressed-tensors") return CompressedTensors(q);
  if (method.empty()) return NotSized("a quantization_config without quant_method");
  return NotSized(Quoted(method));
}

absl::StatusOr<common::v1::Architecture> ArchitectureFromRoot(const Struct& root);

}  // namespace

std::vector<std::string> HfConfigModelTypes() {
  const std::set<std::string> all = AllTypes();
  return {all.begin(), all.end()};
}

absl::StatusOr<common::v1::Architecture> ArchitectureFromHfConfig(absl::string_view json) {
  if (json.size() > kMaxHfConfigBytes) {
    return InvalidFieldError(
        kField, absl::StrCat("is ", json.size(), " bytes; the limit is ", kMaxHfConfigBytes));
  }
  // Bounded before the parser sees it (its time and stack grow with depth).
  if (absl::Status deep = CheckJsonDepth(json, kMaxJsonDepth, kField); !deep.ok()) return deep;
  Struct root;
  auto parsed = google::protobuf::util::JsonStringToMessage(std::string(json), &root);
  if (!parsed.ok()) {
    return InvalidFieldError(kField,
                             absl::StrCat("is not a JSON object: ", std::string(parsed.message())));
  }
  absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromRoot(root);
  if (arch.ok()) {
    CheckpointQuantization checkpoint = CheckpointQuantizationOf(root);
    arch->set_checkpoint_weight_format(std::move(checkpoint.format));
    arch->set_checkpoint_quantization_group_size(static_cast<int32_t>(checkpoint.group_size));
    arch->set_checkpoint_quantization_not_sized(std::move(checkpoint.not_sized));
    // A 16-bit o_proj is a trait of the FP8 checkpoint only.
    if (arch->checkpoint_weight_format() != "fp8-block128") {
      arch->clear_checkpoint_attention_output_16bit();
    }
  }
  return arch;
}

namespace {

// Layers per sliding-window period when a config lists no layer_types:
// Gemma3TextConfig 6, Cohere2Config 4, GptOssConfig 2 (even layers
// sliding), Olmo3Config 4 (OLMo 3 files are llama.cpp's olmo2); 0 = no
// default period.
int64_t DefaultSlidingPeriod(const std::string& type) {
  if (type == "gemma3_text") return 6;
  if (type == "cohere2" || type == "olmo2" || type == "olmo3") return 4;
  if (type == "gpt_oss") return 2;
  if (type == "afmoe") return 4;
  return 0;
}

// Gemma 4's language model (Gemma4TextConfig, modeling_gemma4.py) beyond
// Gemma 3's blocks: its full-attention layers (those layer_types does not
// list as sliding) at global_head_dim, with num_global_key_value_heads and
// no v_proj when attention_k_eq_v (Gemma4TextAttention:
// use_alternative_attention); with enable_moe_block, every layer's dense
// MLP (intermediate_size) runs beside num_experts experts of
// moe_intermediate_size (top_k_experts routed; gate and up fused), whose
// router keeps a scale per hidden element and per expert, and three more
// RMSNorms (post_feedforward_layernorm_1/_2, pre_feedforward_layernorm_2).
// The E2B and E4B models' per-layer inputs (hidden_size_per_layer_input),
// layers reusing an earlier layer's KV cache (num_kv_shared_layers) and
// their double-wide MLPs are read too.
absl::Status Gemma4Layers(const Config& c, common::v1::Architecture* a) {
  const auto refuse = [](const char* key, absl::string_view why) {
    return WithReason(InvalidFieldError(absl::StrCat(kField, ".", key), why),
                      "UNSUPPORTED_MODEL_TYPE");
  };
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> v) -> int64_t {
    if (!v.ok() && error.ok()) error = v.status();
    return v.ok() ? *v : 0;
  };
  if (c.CountStrings("layer_types", "sliding_attention") < 0) {
    return refuse("layer_types", "required for gemma4_text (which layers slide)");
  }
  // E2B and E4B: per-layer inputs, and the last num_kv_shared_layers
  // reusing the cache of the last earlier layer of their kind (their k/v
  // projections stay in the checkpoint and are counted); with
  // use_double_wide_mlp those layers' MLPs are twice as wide.
  const int64_t per_layer = take(c.Int({"hidden_size_per_layer_input"}, 0));
  if (per_layer > 0) {
    a->set_per_layer_input_size(static_cast<int32_t>(per_layer));
    a->set_per_layer_input_vocab_size(take(c.Int({"vocab_size_per_layer_input"}, a->vocab_size())));
  }
  const int64_t shared = take(c.Int({"num_kv_shared_layers"}, 0));
  if (shared > 0) {
    a->set_num_kv_shared_layers(static_cast<int32_t>(shared));
    a->set_kv_shared_layers_double_mlp(c.Bool("use_double_wide_mlp", false));
    // The estimator takes the full-attention layers as spread evenly
    // (Architecture::KvOwnFullLayers): the listed layers must agree.
    const Value* types = c.Find({"layer_types"});
    const int layers = a->num_layers();
    const int own = static_cast<int>(std::max<int64_t>(0, layers - shared));
    const int full = layers - c.CountStrings("layer_types", "sliding_attention");
    int listed_full = 0;
    for (int i = 0; i < own && i < types->list_value().values_size(); ++i) {
      listed_full += types->list_value().values(i).string_value() != "sliding_attention";
    }
    if (layers <= 0 || listed_full != static_cast<int>(int64_t{full} * own / layers)) {
      return refuse("layer_types",
                    "the full-attention layers before num_kv_shared_layers are not spread as "
                    "Gemma 4's (every n-th): not sized by this reader");
    }
  }
  if (a->num_sliding_window_layers() > 0 && a->num_sliding_window_layers() < a->num_layers()) {
    const bool values_from_keys = c.Bool("attention_k_eq_v", false);
    a->set_global_head_dim(static_cast<int32_t>(take(c.Int({"global_head_dim"}, a->head_dim()))));
    a->set_global_values_from_keys(values_from_keys);
    // Gemma4TextAttention: the global KV heads only with attention_k_eq_v.
    a->set_num_global_key_value_heads(static_cast<int32_t>(
        values_from_keys ? take(c.Int({"num_global_key_value_heads"}, a->num_key_value_heads()))
                         : a->num_key_value_heads()));
  }
  if (c.Bool("enable_moe_block", false)) {
    a->set_num_experts(static_cast<int32_t>(take(c.Required({"num_experts"}))));
    a->set_num_experts_per_token(static_cast<int32_t>(take(c.Required({"top_k_experts"}))));
    a->set_moe_intermediate_size(take(c.Required({"moe_intermediate_size"})));
    a->set_num_shared_experts(1);
    a->set_shared_expert_intermediate_size(a->intermediate_size());
    a->set_num_dense_layers(0);
    a->set_router_scales(true);
    a->set_norms_per_layer(7);
  } else {
    a->set_num_experts(0);
    a->set_num_experts_per_token(0);
    a->set_moe_intermediate_size(0);
  }
  return error;
}

// K-EXAONE (ExaoneMoeConfig; vLLM's exaone_moe.py, llama.cpp's
// src/models/exaone-moe.cpp): which layers are dense, by mlp_layer_types
// ("dense"/"sparse"), is_moe_layer (one flag a layer) or the leading count
// (first_k_dense_replace; first_last_k_dense_replace in the first
// revision); the router's e_score_correction_bias; num_shared_experts of
// moe_intermediate_size each; num_nextn_predict_layers multi-token-prediction
// layers in the checkpoint (mtp.*: a decoder layer with a dense MLP of
// intermediate_size, fc from 2h to h and three norms, on the model's
// embedding and head; vLLM's exaone_moe_mtp.py).
absl::Status ExaoneMoeLayers(const Config& c, common::v1::Architecture* a) {
  const int layers = a->num_layers();
  // A per-layer list: whether an entry names a dense layer, or nullopt for
  // an entry of another kind.
  struct PerLayer {
    const char* key;
    const char* entries;  // what each entry must be
    std::optional<bool> (*dense)(const Value&);
  };
  static constexpr PerLayer kLists[] = {
      {"mlp_layer_types", "must be \"dense\" or \"sparse\"",
       [](const Value& v) -> std::optional<bool> {
         if (v.kind_case() != Value::kStringValue) return std::nullopt;
         if (v.string_value() == "dense") return true;
         if (v.string_value() == "sparse") return false;
         return std::nullopt;
       }},
      {"is_moe_layer", "must be true or false",
       [](const Value& v) -> std::optional<bool> {
         if (v.kind_case() != Value::kBoolValue) return std::nullopt;
         return !v.bool_value();
       }},
  };
  int dense = -1;
  for (const PerLayer& spelling : kLists) {
    const Value* list = c.Find({spelling.key});
    if (list == nullptr || list->kind_case() != Value::kListValue) continue;
    const auto& entries = list->list_value().values();
    if (entries.size() != layers) {
      return InvalidFieldError(
          absl::StrCat(kField, ".", spelling.key),
          absl::StrCat("lists ", entries.size(), " layers; num_hidden_layers is ", layers));
    }
    dense = 0;
    for (int i = 0; i < layers; ++i) {
      const std::optional<bool> is_dense = spelling.dense(entries[i]);
      if (!is_dense.has_value()) {
        return InvalidFieldError(absl::StrCat(kField, ".", spelling.key, "[", i, "]"),
                                 spelling.entries);
      }
      dense += *is_dense;
    }
    break;
  }
  if (dense < 0) {
    absl::StatusOr<int64_t> leading =
        c.Int({"first_k_dense_replace", "first_last_k_dense_replace"}, 1);
    if (!leading.ok()) return leading.status();
    if (*leading > layers) {
      return InvalidFieldError(absl::StrCat(kField, ".first_k_dense_replace"),
                               absl::StrCat("must be at most num_hidden_layers (", layers, ")"));
    }
    dense = static_cast<int>(*leading);
  }
  a->set_num_dense_layers(dense);
  a->set_router_bias(true);
  absl::StatusOr<int64_t> shared = c.Int({"num_shared_experts"}, 0);
  absl::StatusOr<int64_t> mtp = c.Int({"num_nextn_predict_layers"}, 0);
  if (!shared.ok()) return shared.status();
  if (!mtp.ok()) return mtp.status();
  a->set_num_shared_experts(static_cast<int32_t>(*shared));
  a->set_num_mtp_layers(static_cast<int32_t>(*mtp));
  a->set_mtp_dense_mlp(true);
  a->set_mtp_shares_embeddings(true);
  return absl::OkStatus();
}

// Nemotron-NAS (DeciLMForCausalLM: NVIDIA's modeling_decilm.py, vLLM's
// model_executor/models/nemotron_nas.py DeciLMDecoderLayer): block_configs
// gives each layer's attention, a no-op (no input_layernorm, no weights, no
// KV cache) or grouped-query attention over num_attention_heads /
// n_heads_in_group KV heads, and its FFN, a no-op (no
// post_attention_layernorm) or Llama's gated MLP of
// _ffn_mult_to_intermediate_size(ffn_mult, hidden_size) =
// int(2 x ffn_mult x hidden_size / 3) rounded up to a multiple of 256.
// The estimator takes one KV-head count for every attention layer; the
// variants no published Super or Ultra uses (replace_with_linear: one
// hidden x hidden linear, Nemotron-51B's; sparsify; window_length;
// sink tokens) are refused naming the key.
absl::Status NemotronNasLayers(const Config& c, common::v1::Architecture* a) {
  const auto refuse = [](const std::string& key, absl::string_view why) {
    return WithReason(InvalidFieldError(absl::StrCat(kField, ".", key), why),
                      "UNSUPPORTED_MODEL_TYPE");
  };
  const Value* blocks = c.Find({"block_configs"});
  if (blocks == nullptr || blocks->kind_case() != Value::kListValue ||
      blocks->list_value().values_size() != a->num_layers()) {
    return refuse("block_configs",
                  absl::StrCat("must list one block per layer, num_hidden_layers (",
                               a->num_layers(), ") of them"));
  }
  const double hidden = static_cast<double>(a->hidden_size());
  int attention_layers = 0;
  int64_t kv_heads = 0, widest = 0;
  a->clear_layer_intermediate_sizes();
  for (int i = 0; i < blocks->list_value().values_size(); ++i) {
    const std::string at = absl::StrCat("block_configs[", i, "]");
    const Value& block = blocks->list_value().values(i);
    if (block.kind_case() != Value::kStructValue) return refuse(at, "must be an object");
    const Config layer(block.struct_value());
    const Value* attention = layer.Find({"attention"});
    const Value* ffn = layer.Find({"ffn"});
    if (attention == nullptr || attention->kind_case() != Value::kStructValue || ffn == nullptr ||
        ffn->kind_case() != Value::kStructValue) {
      return refuse(at, "must have an \"attention\" and an \"ffn\" object");
    }
    const Config attn(attention->struct_value());
    const Config mlp(ffn->struct_value());
    for (const auto& [part, key] : std::initializer_list<std::pair<const Config*, const char*>>{
             {&attn, "replace_with_linear"},
             {&attn, "sparsify"},
             {&attn, "window_length"},
             {&attn, "num_sink_tokens"},
             {&attn, "unshifted_sink"},
             {&mlp, "replace_with_linear"},
             {&mlp, "sparsify"}}) {
      const Value* v = part->Find({key});
      const bool set = v != nullptr && !(v->kind_case() == Value::kBoolValue && !v->bool_value());
      if (set) {
        return refuse(absl::StrCat(at, part == &attn ? ".attention." : ".ffn.", key),
                      "this variant of a Nemotron-NAS block is not counted by this reader");
      }
    }
    if (!attn.Bool("no_op", false)) {
      const Value* group = attn.Find({"n_heads_in_group"});
      const int64_t per_group = group != nullptr && group->kind_case() == Value::kNumberValue &&
                                        group->number_value() >= 1 &&
                                        group->number_value() == std::floor(group->number_value())
                                    ? static_cast<int64_t>(group->number_value())
                                    : 0;
      if (per_group <= 0 || a->num_attention_heads() % per_group != 0) {
        return refuse(absl::StrCat(at, ".attention.n_heads_in_group"),
                      absl::StrCat("must be a whole number dividing num_attention_heads (",
                                   a->num_attention_heads(), ")"));
      }
      const int64_t heads = a->num_attention_heads() / per_group;
      if (kv_heads != 0 && heads != kv_heads) {
        return refuse(absl::StrCat(at, ".attention.n_heads_in_group"),
                      absl::StrCat("gives ", heads, " KV heads where earlier layers have ",
                                   kv_heads, ": this reader sizes one KV-head count"));
      }
      kv_heads = heads;
      ++attention_layers;
    }
    int64_t width = 0;
    if (!mlp.Bool("no_op", false)) {
      const Value* mult = mlp.Find({"ffn_mult"});
      if (mult == nullptr || mult->kind_case() != Value::kNumberValue ||
          !(mult->number_value() > 0) || mult->number_value() > 1000) {
        return refuse(absl::StrCat(at, ".ffn.ffn_mult"), "must be a number above 0, at most 1000");
      }
      // Python's int() of the same double arithmetic, then find_multiple.
      width = static_cast<int64_t>(2 * mult->number_value() * hidden / 3);
      if (width % 256 != 0) width += 256 - width % 256;
    }
    a->add_layer_intermediate_sizes(width);
    widest = std::max(widest, width);
  }
  if (attention_layers == 0) {
    return refuse("block_configs", "has no layer with attention, which this reader sizes");
  }
  a->set_num_key_value_heads(static_cast<int32_t>(kv_heads));
  a->set_num_attention_layers(attention_layers);
  a->set_intermediate_size(widest);
  return absl::OkStatus();
}

// OPT configurations whose blocks this reader does not count, refused
// rather than counted short: OPT-350m projects a narrower embedding
// (word_embed_proj_dim 512) in and out of the blocks (project_in,
// project_out), and its post-norm blocks (do_layer_norm_before false) have
// no final LayerNorm.
absl::Status RefuseOptVariants(const Config& c) {
  absl::StatusOr<int64_t> hidden = c.Int({"hidden_size"}, 0);
  absl::StatusOr<int64_t> projected = c.Int({"word_embed_proj_dim"}, hidden.value_or(0));
  if (hidden.ok() && projected.ok() && *projected != *hidden) {
    return WithReason(
        InvalidFieldError(absl::StrCat(kField, ".word_embed_proj_dim"),
                          absl::StrCat(*projected, " differs from hidden_size ", *hidden,
                                       ": OPT's project_in and project_out (OPT-350m) are not "
                                       "counted by this reader")),
        "UNSUPPORTED_MODEL_TYPE");
  }
  if (!c.Bool("do_layer_norm_before", true)) {
    return WithReason(InvalidFieldError(absl::StrCat(kField, ".do_layer_norm_before"),
                                        "false: OPT's post-norm blocks without a final LayerNorm "
                                        "(OPT-350m) are not counted by this reader"),
                      "UNSUPPORTED_MODEL_TYPE");
  }
  return absl::OkStatus();
}

// BART and mBART configurations this reader does not count, refused by
// field: a decoder whose width or heads differ from the encoder's (both
// stacks are counted from one layer shape), and, under model_type "bart",
// mBART's pre-norm blocks with final LayerNorms (normalize_before,
// add_final_layer_norm: BART's own configs leave both out or false;
// BartModel would build neither, so such a file is a converted mBART that
// names the wrong class).
absl::Status RefuseBartVariants(const Config& c, bool mbart) {
  for (const auto& [decoder_key, encoder_key] :
       {std::pair<const char*, const char*>{"decoder_ffn_dim", "encoder_ffn_dim"},
        {"decoder_attention_heads", "encoder_attention_heads"}}) {
    absl::StatusOr<int64_t> encoder = c.Int({encoder_key}, 0);
    absl::StatusOr<int64_t> decoder = c.Int({decoder_key}, encoder.value_or(0));
    if (encoder.ok() && decoder.ok() && *decoder != *encoder) {
      return WithReason(
          InvalidFieldError(absl::StrCat(kField, ".", decoder_key),
                            absl::StrCat(*decoder, " differs from ", encoder_key, " ", *encoder,
                                         ": a BART decoder of another shape is "
                                         "not counted by this reader")),
          "UNSUPPORTED_MODEL_TYPE");
    }
  }
  for (const char* key : {"normalize_before", "add_final_layer_norm"}) {
    if (!mbart && c.Bool(key, false)) {
      return WithReason(InvalidFieldError(absl::StrCat(kField, ".", key),
                                          "true: mBART's pre-norm blocks and final LayerNorms "
                                          "are not counted by this reader"),
                        "UNSUPPORTED_MODEL_TYPE");
    }
  }
  return absl::OkStatus();
}

// Nomic BERT (contrastors' modeling_hf_nomic_bert.py) configurations this
// reader does not count, refused by field: the MoE variant
// (nomic-embed-text-v2-moe), a learned position table (no rotary), fc1 and
// fc2 biased differently, and a config that leaves a bias flag to the
// remote code's defaults.
absl::Status RefuseNomicBertVariants(const Config& c) {
  const auto refuse = [](const char* key, absl::string_view why) {
    return WithReason(InvalidFieldError(absl::StrCat(kField, ".", key), why),
                      "UNSUPPORTED_MODEL_TYPE");
  };
  if (c.Int({"moe_every_n_layers"}, 0).value_or(1) > 0) {
    return refuse("moe_every_n_layers", "nomic_bert's experts are not counted by this reader");
  }
  const Value* rotary = c.Find({"rotary_emb_fraction"});
  if (rotary == nullptr || rotary->kind_case() != Value::kNumberValue ||
      !(rotary->number_value() > 0)) {
    return refuse("rotary_emb_fraction",
                  "nomic_bert without rotary positions (a learned table) is not counted by "
                  "this reader");
  }
  for (const char* key : {"qkv_proj_bias", "mlp_fc1_bias", "mlp_fc2_bias"}) {
    const Value* flag = c.Find({key});
    if (flag == nullptr || flag->kind_case() != Value::kBoolValue) {
      return refuse(key, "required (true or false) for nomic_bert");
    }
  }
  if (c.Bool("mlp_fc1_bias", false) != c.Bool("mlp_fc2_bias", false)) {
    return refuse("mlp_fc2_bias", "differs from mlp_fc1_bias: not counted by this reader");
  }
  if (c.Bool("parallel_block", false)) {
    return refuse("parallel_block", "nomic_bert's parallel blocks are not counted by this reader");
  }
  return absl::OkStatus();
}

// Nomic BERT's blocks on BERT's: rotary positions (no table), Wqkv and
// out_proj biased by qkv_proj_bias, fc11/fc12/fc2 (SwiGLU; intermediate
// rounded up to a multiple of 256) or fc1/fc2 biased by mlp_fc*_bias, the
// vocabulary padded to pad_vocab_size_multiple, LayerNorms unless
// use_rms_norm.
void NomicBertBlocks(const Config& c, common::v1::Architecture* a) {
  a->set_position_embedding(common::v1::POSITION_EMBEDDING_ROTARY);
  const int64_t multiple = c.Int({"pad_vocab_size_multiple"}, 1).value_or(1);
  if (multiple > 1) a->set_vocab_size((a->vocab_size() + multiple - 1) / multiple * multiple);
  const std::string activation = c.String("activation_function");
  const bool gated = activation == "swiglu" || activation == "geglu" || activation == "glu";
  a->set_gated_mlp(gated);
  if (gated) a->set_intermediate_size((a->intermediate_size() + 255) / 256 * 256);
  const bool qkv_bias = c.Bool("qkv_proj_bias", true);
  a->set_attention_qkv_bias(qkv_bias);
  a->set_attention_output_bias(qkv_bias);
  a->set_mlp_bias(c.Bool("mlp_fc1_bias", true));
  if (c.Bool("use_rms_norm", false)) a->set_norm_type(common::v1::NORM_TYPE_RMS_NORM);
}

// T5Gemma (T5GemmaForConditionalGeneration): an encoder and a decoder of
// Gemma 2's blocks (the `encoder` and `decoder` sub-configs; a missing
// decoder is the encoder's copy, as T5GemmaConfig makes it), each stack
// with its own embedding, the output head tied to the decoder's unless
// tie_word_embeddings is false; the decoder adds cross attention with its
// own pre and post norms. An encoder and decoder of different sizes
// (9b-2b: cross attention reads the encoder's width) is refused by field.
absl::StatusOr<common::v1::Architecture> T5GemmaArchitecture(const Struct& root) {
  const Config top(root);
  const Value* encoder = top.Find({"encoder"});
  if (encoder == nullptr || encoder->kind_case() != Value::kStructValue) {
    return InvalidFieldError(absl::StrCat(kField, ".encoder"),
                             "required: an object (T5GemmaModuleConfig)");
  }
  const Value* given = top.Find({"decoder"});
  const Struct& decoder = given != nullptr && given->kind_case() == Value::kStructValue
                              ? given->struct_value()
                              : encoder->struct_value();
  const Config e(encoder->struct_value()), d(decoder);
  for (const char* key : {"hidden_size", "intermediate_size", "num_attention_heads",
                          "num_key_value_heads", "head_dim", "vocab_size"}) {
    const Value* mine = e.Find({key});
    const Value* theirs = d.Find({key});
    const bool same =
        (mine == nullptr && theirs == nullptr) ||
        (mine != nullptr && theirs != nullptr && mine->kind_case() == Value::kNumberValue &&
         theirs->kind_case() == Value::kNumberValue &&
         mine->number_value() == theirs->number_value());
    if (!same) {
      return WithReason(
          InvalidFieldError(absl::StrCat(kField, ".decoder.", key),
                            "differs from the encoder's: an encoder and decoder of different "
                            "sizes (T5Gemma 9b-2b) are not counted by this reader"),
          "UNSUPPORTED_MODEL_TYPE");
    }
  }
  Struct blocks = encoder->struct_value();
  (*blocks.mutable_fields())["model_type"].set_string_value("gemma2");
  std::string blocks_json;
  if (!google::protobuf::util::MessageToJsonString(blocks, &blocks_json).ok()) {
    return InvalidFieldError(absl::StrCat(kField, ".encoder"), "cannot be read");
  }
  absl::StatusOr<common::v1::Architecture> a = ArchitectureFromHfConfig(blocks_json);
  if (!a.ok()) {
    return GetFieldViolations(a.status()).empty() ? a.status() : InPart(a.status(), "encoder");
  }
  absl::StatusOr<int64_t> decoder_layers = d.Required({"num_hidden_layers"});
  if (!decoder_layers.ok()) return InPart(decoder_layers.status(), "decoder");
  a->set_model_type("t5gemma");
  a->set_num_decoder_layers(static_cast<int32_t>(*decoder_layers));
  a->set_separate_encoder_embedding(true);
  a->set_tie_word_embeddings(top.Bool("tie_word_embeddings", true));
  // The decoder's self and cross attention caches are sized the context
  // long, without Gemma 2's window on alternate layers: the larger cache.
  a->set_sliding_window(0);
  a->set_num_sliding_window_layers(0);
  a->set_source("config.json (t5gemma: Gemma 2's blocks from the encoder and decoder sub-configs)");
  return a;
}

// A config key this reader does not count, refused naming it.
absl::Status RefuseKey(const std::string& key, absl::string_view why) {
  return WithReason(InvalidFieldError(absl::StrCat(kField, ".", key), why),
                    "UNSUPPORTED_MODEL_TYPE");
}

// The sizes a decoder-only reader of its own takes first (num_hidden_layers,
// hidden_size, vocab_size, intermediate_size, max_position_embeddings);
// the layers, and the first bad key's error in *error when none is there.
int64_t ReadDecoderSizes(const Config& c, common::v1::Architecture* a, absl::Status* error) {
  auto take = [error](absl::StatusOr<int64_t> v) -> int64_t {
    if (!v.ok() && error->ok()) *error = v.status();
    return v.ok() ? *v : 0;
  };
  const int64_t layers = take(c.Required({"num_hidden_layers"}));
  a->set_num_layers(static_cast<int32_t>(layers));
  a->set_hidden_size(take(c.Required({"hidden_size"})));
  a->set_vocab_size(take(c.Required({"vocab_size"})));
  a->set_intermediate_size(take(c.Required({"intermediate_size"})));
  a->set_max_context_length(take(c.Int({"max_position_embeddings"}, 0)));
  return layers;
}

// Step-3.5-Flash (Step3p5Config, its remote modeling_step3p5.py and
// vLLM's step3p5.py): Llama's gated blocks with per-head QK norms and a
// head-wise sigmoid gate (g_proj, heads x hidden); its full-attention
// layers (layer_types) with num_attention_heads query heads, its
// sliding-window layers with attention_other_setting's (96 beside 64), both
// over num_attention_groups KV heads of head_dim; MoE layers listed in
// moe_layers_enum (moe_num_experts of moe_intermediate_size, moe_top_k
// routed, one shared expert of share_expert_dim, a router bias), the rest
// dense of intermediate_size; num_nextn_predict_layers MTP layers, each a
// sliding-window layer with a dense MLP and its own output head
// (shared_head.output), the embedding the model's. layer_types lists the
// MTP layers after the num_hidden_layers main ones.
absl::StatusOr<common::v1::Architecture> Step3p5Architecture(const Config& c) {
  common::v1::Architecture a;
  a.set_model_type("step3p5");
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> v) -> int64_t {
    if (!v.ok() && error.ok()) error = v.status();
    return v.ok() ? *v : 0;
  };
  const int64_t layers = ReadDecoderSizes(c, &a, &error);
  const int64_t full_heads = take(c.Required({"num_attention_heads"}));
  const int64_t kv_heads = take(c.Required({"num_attention_groups"}));
  const int64_t head_dim = take(c.Required({"head_dim"}));
  const int64_t mtp_layers = take(c.Int({"num_nextn_predict_layers"}, 0));
  if (!error.ok()) return error;
  if (c.String("att_impl_type") != "GQA") {
    return RefuseKey("att_impl_type", "only \"GQA\" attention is counted by this reader");
  }
  // The sliding-window layers' geometry.
  const Value* other = c.Find({"attention_other_setting"});
  if (other == nullptr || other->kind_case() != Value::kStructValue) {
    return RefuseKey("attention_other_setting",
                     "required: the sliding-window layers' heads (an object)");
  }
  const Config sliding(other->struct_value());
  if (sliding.String("attention_type") != "sliding_attention") {
    return RefuseKey("attention_other_setting.attention_type",
                     "only \"sliding_attention\" is counted by this reader");
  }
  const int64_t sliding_heads = take(sliding.Required({"num_attention_heads"}));
  if (take(sliding.Int({"num_attention_groups"}, kv_heads)) != kv_heads ||
      take(sliding.Int({"head_dim"}, head_dim)) != head_dim) {
    return RefuseKey(
        "attention_other_setting",
        "KV heads or head_dim other than the full-attention layers' are not counted by "
        "this reader");
  }
  // Which layers slide: the first num_hidden_layers entries; the MTP
  // layers' entries after them must slide too.
  const Value* types = c.Find({"layer_types"});
  if (types == nullptr || types->kind_case() != Value::kListValue ||
      types->list_value().values_size() < layers + mtp_layers) {
    return RefuseKey("layer_types",
                     "required: num_hidden_layers + num_nextn_predict_layers entries");
  }
  int sliding_layers = 0;
  for (int i = 0; i < layers + mtp_layers; ++i) {
    const std::string kind = types->list_value().values(i).string_value();
    if (kind != "sliding_attention" && kind != "full_attention") {
      return RefuseKey(absl::StrCat("layer_types[", i, "]"),
                       "must be \"full_attention\" or \"sliding_attention\"");
    }
    if (i >= layers && kind != "sliding_attention") {
      return RefuseKey(absl::StrCat("layer_types[", i, "]"),
                       "a multi-token-prediction layer with full attention is not counted by this "
                       "reader");
    }
    sliding_layers += i < layers && kind == "sliding_attention";
  }
  a.set_num_attention_heads(static_cast<int32_t>(sliding_heads));
  a.set_num_key_value_heads(static_cast<int32_t>(kv_heads));
  a.set_head_dim(static_cast<int32_t>(head_dim));
  a.set_sliding_window(static_cast<int32_t>(take(c.Required({"sliding_window"}))));
  a.set_num_sliding_window_layers(sliding_layers);
  if (sliding_layers < layers && full_heads != sliding_heads) {
    a.set_num_global_attention_heads(static_cast<int32_t>(full_heads));
    a.set_global_head_dim(static_cast<int32_t>(head_dim));
    a.set_num_global_key_value_heads(static_cast<int32_t>(kv_heads));
  }
  a.set_qk_norm(c.Bool("use_qk_norm", false));
  a.set_attention_head_gate(c.Bool("use_head_wise_attn_gate", false));
  a.set_gated_mlp(true);
  a.set_norm_type(common::v1::NORM_TYPE_RMS_NORM);
  a.set_position_embedding(common::v1::POSITION_EMBEDDING_ROTARY);
  a.set_tie_word_embeddings(c.Bool("tie_word_embeddings", false));
  // MoE layers: moe_layers_enum, "3,4,...,44".
  const int64_t experts = take(c.Int({"moe_num_experts"}, 0));
  if (experts > 0) {
    const std::string listed = c.String("moe_layers_enum");
    int moe = 0;
    for (absl::string_view item : absl::StrSplit(listed, ',', absl::SkipWhitespace())) {
      int index = -1;
      if (!absl::SimpleAtoi(item, &index) || index < 0 || index >= layers) {
        return RefuseKey("moe_layers_enum", "must list layer indices below num_hidden_layers");
      }
      ++moe;
    }
    if (moe == 0) return RefuseKey("moe_layers_enum", "required with moe_num_experts");
    a.set_num_experts(static_cast<int32_t>(experts));
    a.set_num_experts_per_token(static_cast<int32_t>(take(c.Required({"moe_top_k"}))));
    a.set_moe_intermediate_size(take(c.Required({"moe_intermediate_size"})));
    const int64_t shared = take(c.Int({"share_expert_dim"}, 0));
    if (shared > 0) {
      a.set_num_shared_experts(1);
      a.set_shared_expert_intermediate_size(shared);
    }
    a.set_router_bias(c.Bool("use_moe_router_bias", false));
    a.set_num_dense_layers(static_cast<int32_t>(layers - moe));
  }
  if (mtp_layers > 0) {
    a.set_num_mtp_layers(static_cast<int32_t>(mtp_layers));
    a.set_mtp_own_output_head(true);
    a.set_mtp_dense_mlp(true);
  }
  if (!error.ok()) return error;
  a.set_source("config.json (step3p5)");
  return a;
}

// Each layer's kind from a list of `layers` entries: the Hub's integers
// (hybrid_layer_pattern 0 = full attention, 1 = sliding window;
// moe_layer_freq 0 = dense, 1 = MoE) or transformers' strings (layer_types
// "full_attention" / "sliding_attention", mlp_layer_types "dense" /
// "sparse"); how many are of the second kind, or an error naming the entry.
absl::StatusOr<int> CountSecondKind(const Config& c, const char* numbers_key,
                                    const char* strings_key, const char* first, const char* second,
                                    int64_t layers) {
  const char* key = numbers_key;
  const Value* list = c.Find({numbers_key, strings_key}, &key);
  const bool numbers = key == numbers_key;
  if (list == nullptr || list->kind_case() != Value::kListValue ||
      list->list_value().values_size() != layers) {
    return RefuseKey(numbers_key,
                     absl::StrCat("required (or ", strings_key,
                                  "): one entry per layer, num_hidden_layers of them"));
  }
  int count = 0;
  for (int i = 0; i < layers; ++i) {
    const Value& item = list->list_value().values(i);
    const bool is_first = numbers
                              ? item.kind_case() == Value::kNumberValue && item.number_value() == 0
                              : item.string_value() == first;
    const bool is_second = numbers
                               ? item.kind_case() == Value::kNumberValue && item.number_value() == 1
                               : item.string_value() == second;
    if (!is_first && !is_second) {
      return RefuseKey(
          absl::StrCat(key, "[", i, "]"),
          numbers ? "must be 0 or 1" : absl::StrCat("must be \"", first, "\" or \"", second, "\""));
    }
    count += is_second;
  }
  return count;
}

// MiMo-V2-Flash (XiaomiMiMo's config.json as transformers'
// convert_mimo_v2_flash_weights_to_hf.py and vLLM's mimo_v2_flash.py read
// it): each layer full attention or a 128-token sliding window
// (hybrid_layer_pattern); the full layers num_attention_heads over
// num_key_value_heads, the sliding ones swa_num_attention_heads over
// swa_num_key_value_heads; queries and keys head_dim wide, values
// v_head_dim (192 and 128); a learned sink per head where
// add_swa_attention_sink_bias / add_full_attention_sink_bias; an MLP of
// intermediate_size or an MoE block (moe_layer_freq) of n_routed_experts
// of moe_intermediate_size, num_experts_per_tok routed, a router bias
// (topk_method "noaux_tc": e_score_correction_bias), no shared expert.
// Its checkpoint also holds three multi-token-prediction layers
// (model.mtp.layers.0-2: a sliding-window layer with sinks, a dense MLP,
// enorm, hnorm, eh_proj and a final norm, on the model's embedding and
// head) that no config key counts; num_nextn_predict_layers, when a config
// has it, is taken instead.
constexpr int64_t kMimoV2FlashMtpLayers = 3;

absl::StatusOr<common::v1::Architecture> MimoV2FlashArchitecture(const Config& c) {
  common::v1::Architecture a;
  a.set_model_type("mimo_v2_flash");
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> v) -> int64_t {
    if (!v.ok() && error.ok()) error = v.status();
    return v.ok() ? *v : 0;
  };
  const int64_t layers = ReadDecoderSizes(c, &a, &error);
  const int64_t full_heads = take(c.Required({"num_attention_heads"}));
  const int64_t full_kv = take(c.Required({"num_key_value_heads"}));
  const int64_t head_dim = take(c.Required({"head_dim"}));
  const int64_t v_head_dim = take(c.Int({"v_head_dim"}, head_dim));
  const int64_t mtp_layers = take(c.Int({"num_nextn_predict_layers"}, kMimoV2FlashMtpLayers));
  if (!error.ok()) return error;
  absl::StatusOr<int> sliding = CountSecondKind(c, "hybrid_layer_pattern", "layer_types",
                                                "full_attention", "sliding_attention", layers);
  if (!sliding.ok()) return sliding.status();
  const bool has_full = *sliding < layers;
  if (*sliding > 0) {
    const int64_t swa_heads = take(c.Required({"swa_num_attention_heads"}));
    const int64_t swa_kv = take(c.Required({"swa_num_key_value_heads"}));
    if (take(c.Int({"swa_head_dim"}, head_dim)) != head_dim ||
        take(c.Int({"swa_v_head_dim"}, v_head_dim)) != v_head_dim) {
      return RefuseKey("swa_head_dim",
                       "sliding-window heads of another width than the full-attention layers' are "
                       "not counted by this reader");
    }
    a.set_num_attention_heads(static_cast<int32_t>(swa_heads));
    a.set_num_key_value_heads(static_cast<int32_t>(swa_kv));
    a.set_sliding_window(take(c.Required({"sliding_window", "sliding_window_size"})));
    a.set_num_sliding_window_layers(*sliding);
    if (has_full) {
      if (full_heads != swa_heads)
        a.set_num_global_attention_heads(static_cast<int32_t>(full_heads));
      if (full_kv != swa_kv) a.set_num_global_key_value_heads(static_cast<int32_t>(full_kv));
    }
  } else {
    a.set_num_attention_heads(static_cast<int32_t>(full_heads));
    a.set_num_key_value_heads(static_cast<int32_t>(full_kv));
  }
  a.set_head_dim(static_cast<int32_t>(head_dim));
  if (v_head_dim != head_dim) a.set_v_head_dim(static_cast<int32_t>(v_head_dim));
  // Sinks: in the sliding layers (and the MTP layers, which slide), in the
  // full ones, or both.
  const bool swa_sinks = c.Bool("add_swa_attention_sink_bias", false) && *sliding > 0;
  const bool full_sinks = c.Bool("add_full_attention_sink_bias", false) && has_full;
  if (full_sinks && !swa_sinks && *sliding > 0) {
    return RefuseKey("add_full_attention_sink_bias",
                     "sinks in the full-attention layers alone are not counted by this reader");
  }
  a.set_attention_sinks(swa_sinks || full_sinks);
  a.set_attention_sinks_sliding_only(swa_sinks && has_full && !full_sinks);
  if (c.Bool("use_qk_norm", false)) {
    return RefuseKey("use_qk_norm", "query and key norms are not counted by this reader");
  }
  a.set_attention_qkv_bias(c.Bool("attention_bias", false));
  a.set_gated_mlp(true);
  a.set_norm_type(common::v1::NORM_TYPE_RMS_NORM);
  a.set_position_embedding(common::v1::POSITION_EMBEDDING_ROTARY);
  a.set_tie_word_embeddings(c.Bool("tie_word_embeddings", false));
  const int64_t experts = take(c.Int({"n_routed_experts"}, 0));
  if (experts > 0) {
    absl::StatusOr<int> moe =
        CountSecondKind(c, "moe_layer_freq", "mlp_layer_types", "dense", "sparse", layers);
    if (!moe.ok()) return moe.status();
    if (take(c.Int({"n_shared_experts"}, 0)) > 0) {
      return RefuseKey("n_shared_experts", "shared experts are not counted by this reader");
    }
    a.set_num_experts(static_cast<int32_t>(experts));
    a.set_num_experts_per_token(static_cast<int32_t>(take(c.Required({"num_experts_per_tok"}))));
    a.set_moe_intermediate_size(take(c.Required({"moe_intermediate_size"})));
    a.set_router_bias(c.String("topk_method") == "noaux_tc");
    a.set_num_dense_layers(static_cast<int32_t>(layers - *moe));
  }
  if (mtp_layers > 0) {
    a.set_num_mtp_layers(static_cast<int32_t>(mtp_layers));
    a.set_mtp_shares_embeddings(true);
    a.set_mtp_dense_mlp(true);
  }
  // Its FP8 checkpoint keeps o_proj in BF16 (the MiMo-V2-Flash report,
  // section 2.1; the MiMo-V2.5 configs' ignored_layers list every o_proj):
  // used only when the weights are sized in that checkpoint's format.
  a.set_checkpoint_attention_output_16bit(true);
  if (!error.ok()) return error;
  a.set_source(c.Find({"num_nextn_predict_layers"}) != nullptr
                   ? "config.json (mimo_v2_flash)"
                   : "config.json (mimo_v2_flash; its three multi-token-prediction layers from "
                     "the checkpoint, model.mtp.layers.0-2: no config key counts them)");
  return a;
}

absl::StatusOr<common::v1::Architecture> ArchitectureFromRoot(const Struct& root) {
  const Config c(root);
  const std::string type = c.String("model_type");
  if (type == "t5gemma") return T5GemmaArchitecture(root);
  if (type == "step3p5") return Step3p5Architecture(c);
  if (type == "mimo_v2_flash") return MimoV2FlashArchitecture(c);
  if (MultimodalTypes().count(type)) return MultimodalArchitecture(root, type);
  if (StateSpaceTypes().count(type)) return StateSpaceArchitecture(c, type);
  if (!KnownTypes().count(type)) {
    // The caller's input names a family this reader cannot count: their
    // argument, not a missing RPC (UNIMPLEMENTED would say the latter).
    return WithReason(
        InvalidFieldError(
            absl::StrCat(kField, ".model_type"),
            absl::StrCat("\"", type,
                         "\" is not a family this reader knows; supported model_type values: ",
                         SupportedTypesText())),
        "UNSUPPORTED_MODEL_TYPE");
  }
  const bool is_gpt2 = type == "gpt2";
  const bool is_distilbert = type == "distilbert";
  const bool is_nomic_bert = type == "nomic_bert";
  if (is_nomic_bert) {
    if (absl::Status refused = RefuseNomicBertVariants(c); !refused.ok()) return refused;
  }
  const bool is_bert = type == "bert" || type == "roberta" || type == "xlm-roberta" ||
                       is_distilbert || is_nomic_bert;
  const bool is_falcon = type == "falcon";
  const bool is_neox = type == "gpt_neox";  // GPT-NeoX, Pythia
  // Phi-1, Phi-1.5, Phi-2 (PhiForCausalLM): one LayerNorm before a parallel
  // attention and MLP, biases throughout, the output head's too.
  const bool is_phi = type == "phi";
  if (is_phi && c.Bool("qk_layernorm", false)) {
    // LayerNorms on the queries and keys: no published Phi has them, and
    // this reader does not count them (not a guess short by their size).
    return WithReason(InvalidFieldError(absl::StrCat(kField, ".qk_layernorm"),
                                        "phi with qk_layernorm is not counted by this reader"),
                      "UNSUPPORTED_MODEL_TYPE");
  }
  // OPT (OPTForCausalLM): learned positions in a table with 2 rows before
  // the first (OPTLearnedPositionalEmbedding's offset), every Linear biased
  // by enable_bias, a plain ReLU MLP of ffn_dim, LayerNorms, tied.
  const bool is_opt = type == "opt";
  if (is_opt) {
    if (absl::Status refused = RefuseOptVariants(c); !refused.ok()) return refused;
  }
  // GPT-Neo (GPTNeoForCausalLM): GPT-2's layout with unbiased q/k/v_proj and
  // a biased out_proj; every other layer attends within window_size tokens.
  const bool is_gpt_neo = type == "gpt_neo";
  // BLOOM (BloomForCausalLM): ALiBi, a LayerNorm after the token embedding
  // (word_embeddings_layernorm), a fused biased query_key_value, a plain 4h
  // GELU MLP with biases, tied.
  const bool is_bloom = type == "bloom";
  // Phi-3.5-MoE (PhimoeForCausalLM): Mixtral's routed experts of
  // intermediate_size; LayerNorms with biases; q/k/v/o biased by
  // attention_bias, the untied lm_head by lm_head_bias.
  const bool is_phimoe = type == "phimoe";
  // StarCoder, SantaCoder (GPTBigCodeForCausalLM): GPT-2's blocks whose
  // c_attn yields one key and value head with multi_query (the default).
  const bool is_bigcode = type == "gpt_bigcode";
  // GPT-J (GPTJForCausalLM): attention and MLP side by side behind ln_1;
  // q/k/v/out_proj without biases, fc_in and fc_out with theirs; an untied
  // lm_head with a bias (GPTJConfig ties nothing by default).
  const bool is_gptj = type == "gptj";
  // StableLM (StableLmForCausalLM): Llama's gated MLP behind LayerNorms with
  // biases; q/k/v_proj biased by use_qkv_bias; use_parallel_residual runs
  // attention and MLP behind one norm; qk_layernorm normalizes each head of
  // the queries and keys (a weight per head and element, no bias).
  const bool is_stablelm = type == "stablelm";
  const bool is_gemma3 = type == "gemma3_text";
  const bool is_mt5 = type == "mt5";
  const bool is_t5 = type == "t5" || is_mt5;
  const bool is_mbart = type == "mbart";
  const bool is_bart = type == "bart" || is_mbart;
  if (is_bart) {
    if (absl::Status refused = RefuseBartVariants(c, is_mbart); !refused.ok()) return refused;
  }
  // StarCoder2: LayerNorms with biases, every Linear biased (use_bias), a
  // plain GELU MLP (c_fc, c_proj).
  const bool is_starcoder2 = type == "starcoder2";
  // Qwen (v1, QWenLMHeadModel): c_attn with a bias, w1 and w2 each half of
  // intermediate_size wide (QWenMLP: ff_dim_in = intermediate_size // 2).
  const bool is_qwen1 = type == "qwen";
  // ChatGLM2, ChatGLM3 and GLM-4's own format (ChatGLMForConditionalGeneration):
  // padded_vocab_size, ffn_hidden_size, multi_query_group_num. ChatGLM-6B
  // (v1) shares the model_type but not the blocks (GLM's 2D positions, a
  // plain MLP, LayerNorms); it has no padded_vocab_size.
  const bool is_chatglm = type == "chatglm";
  if (is_chatglm && c.Find({"padded_vocab_size"}) == nullptr) {
    return WithReason(
        InvalidFieldError(absl::StrCat(kField, ".padded_vocab_size"),
                          "missing: a chatglm config without it is ChatGLM-6B (v1), whose "
                          "blocks this reader does not count"),
        "UNSUPPORTED_MODEL_TYPE");
  }

  common::v1::Architecture a;
  a.set_model_type(type);
  absl::Status error;
  auto take = [&](absl::StatusOr<int64_t> v) -> int64_t {
    if (!v.ok() && error.ok()) error = v.status();
    return v.ok() ? *v : 0;
  };
  a.set_num_layers(static_cast<int32_t>(
      take(is_distilbert ? c.Required({"n_layers"})
           : is_bart     ? c.Required({"encoder_layers"})
                         : c.Required({"num_hidden_layers", "n_layer", "num_layers"}))));
  a.set_hidden_size(take(is_distilbert
                             ? c.Required({"dim"})
                             : c.Required({"hidden_size", "n_embd", "d_model", "n_embed"})));
  a.set_num_attention_heads(static_cast<int32_t>(
      take(is_distilbert ? c.Required({"n_heads"})
           : is_bart     ? c.Required({"encoder_attention_heads"})
                         : c.Required({"num_attention_heads", "n_head", "num_heads"}))));
  // ChatGLM's embedding and output layer are padded_vocab_size rows.
  a.set_vocab_size(
      take(is_chatglm ? c.Required({"padded_vocab_size"}) : c.Required({"vocab_size"})));
  if (!error.ok()) return error;

  // Key/value heads: GQA configs say so; Falcon's multi-query uses one.
  int64_t kv_heads = take(c.Int({"num_key_value_heads", "num_kv_heads"}, 0));
  if (is_chatglm && c.Bool("multi_query_attention", false)) {
    kv_heads = take(c.Int({"multi_query_group_num"}, 1));
  }
  if (is_bigcode && kv_heads == 0 && c.Bool("multi_query", true)) kv_heads = 1;
  if (is_falcon && kv_heads == 0) {
    kv_heads = c.Bool("new_decoder_architecture", false) ? a.num_attention_heads()
               : c.Bool("multi_query", true)             ? 1
                                                         : a.num_attention_heads();
  }
  a.set_num_key_value_heads(
      static_cast<int32_t>(kv_heads > 0 ? kv_heads : a.num_attention_heads()));
  a.set_head_dim(static_cast<int32_t>(
      take(c.Int({"head_dim", "d_kv", "kv_channels"},
                 a.hidden_size() / std::max<int32_t>(1, a.num_attention_heads())))));
  a.set_intermediate_size(
      take(is_distilbert ? c.Required({"hidden_dim"})
           : is_bart     ? c.Required({"encoder_ffn_dim"})
                     : c.Int({"intermediate_size", "n_inner", "ffn_dim", "d_ff", "ffn_hidden_size"},
                             4 * a.hidden_size())));  // GPT-2, Falcon: 4h
  if (is_qwen1) a.set_intermediate_size(a.intermediate_size() / 2);
  if (is_bloom) a.set_intermediate_size(4 * a.hidden_size());  // BloomMLP: always 4h
  a.set_max_context_length(
      take(c.Int({"max_position_embeddings", "n_positions", "n_ctx", "seq_length"}, 0)));
  if (!error.ok()) return error;

  // Defaults of the transformers configuration classes.
  // Ernie4_5Config and Ernie4_5_MoeConfig tie by default too.
  const bool is_cohere = type == "cohere" || type == "cohere2";
  // OPT, GPT-Neo and BLOOM keep PretrainedConfig's default (tied).
  const bool tied_by_default = is_gpt2 || is_bert || is_falcon || type == "gemma" || is_cohere ||
                               type == "gemma2" || is_gemma3 || (is_t5 && !is_mt5) ||
                               is_starcoder2 || type == "ernie4_5" || type == "ernie4_5_moe" ||
                               type == "smollm3" || type == "exaone" || is_opt || is_gpt_neo ||
                               is_bloom || is_bigcode || type == "gemma4_text" || is_bart;
  a.set_tie_word_embeddings(c.Bool("tie_word_embeddings", tied_by_default));
  // T5: "relu" (v1.0) is plain, "gated-gelu" (v1.1, Flan-T5; MT5Config's
  // default) gated.
  const std::string feed_forward = c.String("feed_forward_proj");
  a.set_gated_mlp(is_t5 ? (feed_forward.empty() ? is_mt5 : feed_forward.rfind("gated", 0) == 0)
                        : !is_gpt2 && !is_bert && !is_falcon && !is_neox && !is_phi &&
                              !is_starcoder2 && !is_opt && !is_gpt_neo && !is_bloom &&
                              !is_bigcode && !is_gptj && !is_bart);
  const bool layer_norm = is_gpt2 || is_bert || is_falcon || is_neox || is_phi || is_starcoder2 ||
                          is_opt || is_gpt_neo || is_bloom || is_phimoe || is_bigcode || is_gptj ||
                          is_stablelm || is_bart;
  a.set_norm_type(is_opt && !c.Bool("layer_norm_elementwise_affine", true)
                      ? common::v1::NORM_TYPE_LAYER_NORM_WITHOUT_PARAMETERS
                  : layer_norm     ? common::v1::NORM_TYPE_LAYER_NORM
                  : is_cohere      ? common::v1::NORM_TYPE_LAYER_NORM_WITHOUT_BIAS
                  : type == "olmo" ? common::v1::NORM_TYPE_LAYER_NORM_WITHOUT_PARAMETERS
                                   : common::v1::NORM_TYPE_RMS_NORM);
  a.set_position_embedding(is_t5 ? common::v1::POSITION_EMBEDDING_RELATIVE
                           : is_gpt2 || is_bert || is_opt || is_gpt_neo || is_bigcode || is_bart
                               ? common::v1::POSITION_EMBEDDING_LEARNED
                           : is_bloom || (is_falcon && c.Bool("alibi", false))
                               ? common::v1::POSITION_EMBEDDING_ALIBI
                               : common::v1::POSITION_EMBEDDING_ROTARY);
  // BartLearnedPositionalEmbedding keeps OPT's 2 offset rows.
  if (is_opt || is_bart) a.set_learned_position_offset(2);
  // mBART: layernorm_embedding beside each stack's final layer_norm.
  if (is_bloom || is_mbart) a.set_embedding_norm(true);
  if (is_neox) {
    // GPTNeoXAttention: query_key_value and dense with biases (attention_bias,
    // default true); the MLP's dense_h_to_4h / dense_4h_to_h always.
    a.set_attention_qkv_bias(c.Bool("attention_bias", true));
    a.set_attention_output_bias(c.Bool("attention_bias", true));
    a.set_mlp_bias(true);
  } else if (type == "gpt_oss") {
    // GptOssAttention: biased projections and a sink per head; experts and
    // the router with biases.
    a.set_attention_qkv_bias(c.Bool("attention_bias", true));
    a.set_attention_output_bias(c.Bool("attention_bias", true));
    a.set_mlp_bias(true);
    a.set_router_bias(true);
    a.set_attention_sinks(true);
  } else if (is_gpt2 || is_bert || is_bloom || is_bigcode || is_bart) {
    a.set_attention_qkv_bias(true);
    a.set_attention_output_bias(true);
    a.set_mlp_bias(true);
  } else if (is_opt) {
    // OPTAttention's q/k/v/out_proj and OPTDecoderLayer's fc1, fc2.
    const bool bias = c.Bool("enable_bias", true);
    a.set_attention_qkv_bias(bias);
    a.set_attention_output_bias(bias);
    a.set_mlp_bias(bias);
  } else if (is_gpt_neo) {
    // GPTNeoSelfAttention: k/v/q_proj without bias, out_proj with one;
    // GPTNeoMLP's c_fc and c_proj with theirs.
    a.set_attention_output_bias(true);
    a.set_mlp_bias(true);
  } else if (is_phi) {
    // PhiAttention's q/k/v_proj and dense, PhiMLP's fc1 and fc2, lm_head:
    // every Linear with a bias.
    a.set_attention_qkv_bias(true);
    a.set_attention_output_bias(true);
    a.set_mlp_bias(true);
    a.set_output_head_bias(!a.tie_word_embeddings());
  } else if (is_gptj) {
    a.set_mlp_bias(true);
    a.set_output_head_bias(!a.tie_word_embeddings());
  } else if (is_stablelm) {
    a.set_attention_qkv_bias(c.Bool("use_qkv_bias", false));
  } else if (is_falcon) {
    const bool bias = c.Bool("bias", false);
    a.set_attention_qkv_bias(bias);
    a.set_attention_output_bias(bias);
    a.set_mlp_bias(bias);
  } else if (is_starcoder2) {
    const bool bias = c.Bool("use_bias", true);
    a.set_attention_qkv_bias(bias);
    a.set_attention_output_bias(bias);
    a.set_mlp_bias(bias);
  } else if (type == "qwen2" || type == "qwen2_moe" || is_qwen1 || type == "mimo") {
    // Qwen2 always has Q/K/V biases, Qwen's c_attn too; MiMoAttention is
    // Qwen2Attention.
    a.set_attention_qkv_bias(true);
  } else if (type == "glm" || type == "glm4" || type == "glm4_moe") {
    // GlmAttention: q/k/v_proj biased by attention_bias (default true),
    // o_proj never; the fused gate_up_proj and down_proj never.
    a.set_attention_qkv_bias(c.Bool("attention_bias", true));
  } else if (is_chatglm) {
    // SelfAttention's query_key_value biased by add_qkv_bias; dense and the
    // MLP by add_bias_linear (false in every published config).
    a.set_attention_qkv_bias(c.Bool("add_qkv_bias", false));
    a.set_attention_output_bias(c.Bool("add_bias_linear", false));
    a.set_mlp_bias(c.Bool("add_bias_linear", false));
  } else if (type == "internlm2") {
    // InternLM2Attention's wqkv and wo biased by `bias`; the MLP's w1/w2/w3
    // never.
    a.set_attention_qkv_bias(c.Bool("bias", true));
    a.set_attention_output_bias(c.Bool("bias", true));
  } else if (type == "ernie4_5" || type == "ernie4_5_moe") {
    // Ernie4_5Attention and Ernie4_5MLP: every Linear biased by use_bias
    // (false in the published configs), the output head too when untied.
    const bool bias = c.Bool("use_bias", false);
    a.set_attention_qkv_bias(bias);
    a.set_attention_output_bias(bias);
    a.set_mlp_bias(bias);
    a.set_output_head_bias(bias && !a.tie_word_embeddings());
  } else if (type == "afmoe") {
    // AfmoeConfig sets attention_bias to False whatever the file says; no
    // Linear of the model has a bias.
  } else if (type == "seed_oss") {
    // SeedOssAttention: q/k/v_proj by attention_bias, o_proj by
    // attention_out_bias; the MLP by mlp_bias.
    a.set_attention_qkv_bias(c.Bool("attention_bias", false));
    a.set_attention_output_bias(c.Bool("attention_out_bias", false));
    a.set_mlp_bias(c.Bool("mlp_bias", false));
  } else {
    a.set_attention_qkv_bias(c.Bool("attention_bias", false));
    a.set_attention_output_bias(c.Bool("attention_bias", false));
    a.set_mlp_bias(c.Bool("mlp_bias", false));
  }
  // Phi-3.5-MoE: the default branch's attention_bias, and its untied
  // lm_head biased by lm_head_bias.
  if (is_phimoe) a.set_output_head_bias(c.Bool("lm_head_bias", false) && !a.tie_word_embeddings());
  const bool is_olmo = type == "olmoe" || type == "olmo2" || type == "olmo3";
  a.set_qk_norm(type == "qwen3" || type == "qwen3_moe" || is_gemma3 || type == "gemma4_text" ||
                is_olmo || HasQwen3NextBlocks(type) || type == "exaone4" || type == "dots1" ||
                type == "afmoe" || type == "exaone_moe");
  // OLMoE, OLMo 2 and 3 normalize the whole query and key projections
  // (q_norm, k_norm); the others each head (head_dim).
  a.set_qk_norm_full_width(is_olmo);
  if (type == "glm4_moe") {
    // Glm4MoeAttention: q_norm and k_norm of head_dim with use_qk_norm
    // (GLM-4.5 and 4.6; not GLM-4.5-Air).
    a.set_qk_norm(c.Bool("use_qk_norm", false));
  } else if (is_cohere) {
    // CohereAttention with use_qk_norm: CohereLayerNorm((heads, head_dim))
    // on queries and keys, a weight per head and element (Command R+ v01).
    a.set_qk_norm(c.Bool("use_qk_norm", false));
    a.set_qk_norm_full_width(a.qk_norm());
  } else if (is_stablelm) {
    a.set_qk_norm(c.Bool("qk_layernorm", false));
    a.set_qk_norm_full_width(a.qk_norm());
  } else if (type == "minimax_m2") {
    // MiniMaxM2Attention: qk_norm_type "per_layer" normalizes the whole
    // projections (heads x head_dim), "per_head" each head.
    a.set_qk_norm(c.Bool("use_qk_norm", true));
    a.set_qk_norm_full_width(c.String("qk_norm_type") != "per_head");
  }
  // Gemma 2 and 3 norm before and after attention and the MLP; GLM-4-0414
  // (Glm4DecoderLayer) adds post_self_attn_layernorm and post_mlp_layernorm.
  // AfmoeDecoderLayer: input_layernorm, post_attention_layernorm,
  // pre_mlp_layernorm and post_mlp_layernorm.
  if (type == "gemma2" || is_gemma3 || type == "glm4" || type == "gemma4_text" || type == "afmoe") {
    a.set_norms_per_layer(4);
  }
  // CohereDecoderLayer: attention and MLP side by side behind one norm.
  if ((is_falcon && !c.Bool("new_decoder_architecture", false) && c.Bool("parallel_attn", true)) ||
      is_phi || is_cohere || is_gptj || (is_stablelm && c.Bool("use_parallel_residual", false))) {
    a.set_norms_per_layer(1);
  }
  if (is_bart) {
    // Each stack's layernorm_embedding takes the place of a final norm (as
    // BERT's does); the decoder's blocks add cross attention.
    a.set_num_decoder_layers(static_cast<int32_t>(take(c.Int({"decoder_layers"}, a.num_layers()))));
  }
  if (is_t5) {
    // T5ForConditionalGeneration: encoder and decoder stacks sharing the
    // embedding; relative position bias in each stack's first layer.
    a.set_num_decoder_layers(
        static_cast<int32_t>(take(c.Int({"num_decoder_layers"}, a.num_layers()))));
    a.set_relative_attention_buckets(
        static_cast<int32_t>(take(c.Int({"relative_attention_num_buckets"}, 32))));
  }
  if (is_bert) {
    a.set_type_vocab_size(is_distilbert ? 0 : take(c.Int({"type_vocab_size"}, 2)));
    // The bare model as AutoModel builds it: BertModel's pooler;
    // DistilBertModel has none, nor do nomic-embed's files (its remote
    // code would add a random one).
    a.set_pooler(!is_distilbert && !is_nomic_bert);
  }
  if (is_nomic_bert) NomicBertBlocks(c, &a);

  // GPT-Neo's local layers (attention_types, window_size) keep every
  // position in transformers' cache, which masks the window instead (no
  // other runtime serves GPT-Neo): no window, the larger cache.
  // Sliding windows: Mistral applies its window everywhere; Gemma 2 in every
  // other layer; Qwen and SmolLM3 only when use_sliding_window is true.
  // Gemma 3: five sliding layers in six (layer_types, else
  // sliding_window_pattern). Phi-3 declares a window that transformers'
  // cache does not apply (it allocates every position): no window; nor
  // Phi-3.5-MoE's, as long as its positions (131,072).
  // StarCoder2 declares one (4096) that llama.cpp does not apply
  // (LLM_ARCH_STARCODER2 has no sliding-window attention) while vLLM does:
  // sized without it, the larger cache, so no plan fits on a window its
  // runtime may not keep.
  const int64_t window = take(c.Int({"sliding_window"}, 0));
  const bool window_flagged =
      type.rfind("qwen", 0) == 0 || type == "smollm3" || type == "mimo" || type == "dots1";
  if (window > 0 && type != "phi3" && !is_phimoe && !is_starcoder2 &&
      (!window_flagged || c.Bool("use_sliding_window", false))) {
    a.set_sliding_window(window);
    if (type == "gemma2") a.set_num_sliding_window_layers(a.num_layers() / 2);
    const int sliding_listed = c.CountStrings("layer_types", "sliding_attention");
    if (sliding_listed == 0) {
      a.set_sliding_window(0);  // every layer attends to every position
    } else if (sliding_listed > 0) {
      a.set_num_sliding_window_layers(sliding_listed);
    } else if (const int64_t period = DefaultSlidingPeriod(type); period > 0) {
      // The config class's default layout (llama.cpp's set_swa_pattern for
      // the same families): the last layer of each period full.
      // (AfmoeConfig names its period global_attn_every_n_layers.)
      const int64_t pattern = std::max<int64_t>(
          1, take(c.Int({"sliding_window_pattern", "global_attn_every_n_layers"}, period)));
      a.set_num_sliding_window_layers(
          static_cast<int32_t>(a.num_layers() - a.num_layers() / pattern));
    } else if (type == "exaone4" || type == "exaone_moe") {
      // EXAONE 4.0's config.json spells its pattern "LLLG" (three local
      // layers, then a global one); Exaone4Config's default is every fourth
      // layer global. Never every layer sliding, which would shrink the KV
      // cache of the global layers.
      const std::string spelled = c.String("sliding_window_pattern");
      int sliding = 0;
      if (!spelled.empty()) {
        for (int i = 0; i < a.num_layers(); ++i) {
          const char kind = spelled[static_cast<size_t>(i) % spelled.size()];
          if (kind != 'L' && kind != 'G') {
            return InvalidFieldError(
                absl::StrCat(kField, ".sliding_window_pattern"),
                absl::StrCat("has '", std::string(1, kind), "'; known: L (local), G (global)"));
          }
          sliding += kind == 'L';
        }
      } else {
        const int64_t pattern = std::max<int64_t>(1, take(c.Int({"sliding_window_pattern"}, 4)));
        sliding = static_cast<int>(a.num_layers() - a.num_layers() / pattern);
      }
      a.set_num_sliding_window_layers(sliding);
      if (sliding == 0) a.set_sliding_window(0);
    }
  }

  // Mixture of experts.
  a.set_num_experts(static_cast<int32_t>(
      take(c.Int({"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"}, 0))));
  a.set_num_experts_per_token(
      static_cast<int32_t>(take(c.Int({"num_experts_per_tok", "experts_per_token", "moe_k"}, 0))));
  a.set_num_shared_experts(
      static_cast<int32_t>(take(c.Int({"n_shared_experts", "moe_num_shared_experts"}, 0))));
  a.set_moe_intermediate_size(take(c.Int({"moe_intermediate_size"}, 0)));
  a.set_num_dense_layers(static_cast<int32_t>(take(c.Int({"first_k_dense_replace"}, 0))));
  // Qwen2-MoE: one shared expert of its own width behind a sigmoid gate
  // (transformers Qwen2MoeSparseMoeBlock: shared_expert, shared_expert_gate).
  if (type == "qwen2_moe") {
    a.set_shared_expert_intermediate_size(take(c.Int({"shared_expert_intermediate_size"}, 0)));
    a.set_shared_expert_gate(a.shared_expert_intermediate_size() > 0);
  }
  // DeepSeek-V3: a router bias per expert (e_score_correction_bias, with
  // topk_method "noaux_tc") and the multi-token-prediction module.
  // Llama 4 (Llama4TextConfig): routed layers every interleave_moe_layer_step
  // (moe_layers when listed), each with num_local_experts experts of
  // intermediate_size and one shared expert of that width, no router bias;
  // the other layers dense at intermediate_size_mlp. Its QK norm is an L2
  // norm without weights. RoPE layers (no_rope_layers 1; every layer but
  // each fourth by default) attend within chunks of attention_chunk_size
  // tokens, so a runtime keeps at most a chunk of their keys and values
  // (vLLM ChunkedLocalAttentionSpec, llama.cpp's chunked SWA cache): sized
  // as a window of that many tokens.
  if (type == "llama4_text") {
    const int64_t L = a.num_layers();
    a.set_moe_intermediate_size(take(c.Int({"intermediate_size"}, 8192)));
    a.set_intermediate_size(take(c.Int({"intermediate_size_mlp"}, 16384)));
    a.set_num_experts(static_cast<int32_t>(take(c.Int({"num_local_experts"}, 16))));
    a.set_num_experts_per_token(static_cast<int32_t>(take(c.Int({"num_experts_per_tok"}, 1))));
    a.set_num_shared_experts(1);
    int64_t routed = 0;
    if (const Value* listed = c.Find({"moe_layers"});
        listed != nullptr && listed->kind_case() == Value::kListValue) {
      routed = listed->list_value().values_size();
    } else {
      const int64_t step = std::max<int64_t>(1, take(c.Int({"interleave_moe_layer_step"}, 1)));
      for (int64_t i = step - 1; i < L; i += step) ++routed;
    }
    if (routed > L) {
      return InvalidFieldError(absl::StrCat(kField, ".moe_layers"),
                               absl::StrCat("lists ", routed, " layers of ", L));
    }
    a.set_num_dense_layers(static_cast<int32_t>(L - routed));
    int rope_layers = c.CountStrings("layer_types", "chunked_attention");
    if (rope_layers < 0) rope_layers = c.CountNumbers("no_rope_layers", 1);
    if (rope_layers < 0) {
      const int64_t interval = std::max<int64_t>(1, take(c.Int({"no_rope_layer_interval"}, 4)));
      rope_layers = static_cast<int>(L - L / interval);
    }
    const int64_t chunk = take(c.Int({"attention_chunk_size"}, 8192));
    if (chunk > 0 && rope_layers > 0) {
      a.set_sliding_window(chunk);
      a.set_num_sliding_window_layers(rope_layers);
    }
  }
  // GLM-4.5 (Glm4MoeTopkRouter) and GLM-4.7-Flash keep both: their
  // checkpoints store the module at layer num_hidden_layers.
  if (type == "deepseek_v3" || type == "kimi_k2" || type == "glm4_moe_lite" ||
      type == "deepseek_v32" || type == "glm_moe_dsa") {
    a.set_router_bias(c.String("topk_method") == "noaux_tc" || c.String("topk_method").empty());
    a.set_num_mtp_layers(static_cast<int32_t>(take(c.Int({"num_nextn_predict_layers"}, 0))));
  }
  // GLM-5's multi-token-prediction layer (model.layers.78) holds no
  // embed_tokens or shared_head.head of its own (GLM-5.1's tensor table):
  // it uses the model's, unlike DeepSeek-V3's.
  if (type == "glm_moe_dsa") a.set_mtp_shares_embeddings(true);
  if (type == "glm4_moe") {
    a.set_router_bias(true);
    a.set_num_mtp_layers(static_cast<int32_t>(take(c.Int({"num_nextn_predict_layers"}, 0))));
  }
  // dots.llm1 (Dots1TopkRouter): the router's e_score_correction_bias is in
  // the checkpoint (dots.llm1.inst's 142,774,381,696 holds it).
  if (type == "dots1") a.set_router_bias(true);
  // Trinity (AfmoeMoE): expert_bias, a parameter of one per expert; the
  // shared experts one MLP of num_shared_experts x moe_intermediate_size
  // (the count of that many of an expert's width); AfmoeAttention's
  // gate_proj as Qwen3-Next's query gate (the same h x heads x head_dim).
  if (type == "afmoe") {
    a.set_router_bias(true);
    a.set_num_shared_experts(static_cast<int32_t>(take(c.Int({"num_shared_experts"}, 2))));
    a.set_num_dense_layers(
        static_cast<int32_t>(take(c.Int({"num_dense_layers", "first_k_dense_replace"}, 1))));
    a.set_attention_output_gate(true);
    if (a.num_dense_layers() > a.num_layers()) {
      return InvalidFieldError(
          absl::StrCat(kField, ".num_dense_layers"),
          absl::StrCat("must be at most num_hidden_layers (", a.num_layers(), ")"));
    }
  }
  // MiMo-7B (MiMoMTPLayers): token_layernorm, hidden_layernorm, input_proj
  // (2h -> h), a Qwen2 decoder layer and final_layernorm, using the model's
  // embedding and output head; MiMo-7B-Base's 7,833,409,536 holds one.
  if (type == "mimo") {
    a.set_num_mtp_layers(static_cast<int32_t>(take(c.Int({"num_nextn_predict_layers"}, 0))));
    a.set_mtp_shares_embeddings(true);
  }
  // MiniMax-M2: every layer routed (intermediate_size is each expert's
  // width), a router bias with use_routing_bias; no shared expert. Its
  // config's use_mtp and num_mtp_modules name modules the published
  // checkpoint does not hold (no mtp tensors in it): not counted.
  if (type == "minimax_m2") {
    a.set_router_bias(c.Bool("use_routing_bias", true));
    if (take(c.Int({"shared_intermediate_size"}, 0)) > 0) {
      return WithReason(InvalidFieldError(absl::StrCat(kField, ".shared_intermediate_size"),
                                          "a shared expert in minimax_m2 is not counted by "
                                          "this reader"),
                        "UNSUPPORTED_MODEL_TYPE");
    }
  }
  // ERNIE 4.5 MoE (Ernie4_5_MoeSparseMoeBlock): layer i routed when
  // moe_layer_start_index <= i <= moe_layer_end_index (-1: the last) and
  // (i + 1) % moe_layer_interval == 0, dense (intermediate_size) otherwise;
  // shared experts of moe_intermediate_size each; the router's
  // e_score_correction_bias (moe_statics). The 300B checkpoint's own
  // multi-token-prediction layer is not read from config.json.
  if (type == "ernie4_5_moe") {
    a.set_router_bias(true);
    const int64_t start = take(c.Int({"moe_layer_start_index"}, 1));
    const Value* end_value = c.Find({"moe_layer_end_index"});
    int64_t end = a.num_layers() - 1;
    if (end_value != nullptr && end_value->kind_case() == Value::kNumberValue &&
        end_value->number_value() != -1) {
      end = take(c.Int({"moe_layer_end_index"}, end));
    }
    const int64_t interval = std::max<int64_t>(1, take(c.Int({"moe_layer_interval"}, 1)));
    int routed = 0;
    for (int64_t i = 0; i < a.num_layers(); ++i) {
      if (i >= start && i <= end && (i + 1) % interval == 0) ++routed;
    }
    a.set_num_dense_layers(a.num_layers() - routed);
  }

  // Multi-head latent attention (DeepSeek-V2/V3).
  a.set_q_lora_rank(static_cast<int32_t>(take(c.Int({"q_lora_rank"}, 0))));
  a.set_kv_lora_rank(static_cast<int32_t>(take(c.Int({"kv_lora_rank"}, 0))));
  a.set_qk_rope_head_dim(static_cast<int32_t>(take(c.Int({"qk_rope_head_dim"}, 0))));
  a.set_qk_nope_head_dim(static_cast<int32_t>(take(c.Int({"qk_nope_head_dim"}, 0))));
  a.set_v_head_dim(static_cast<int32_t>(take(c.Int({"v_head_dim"}, 0))));
  // DeepSeek-V3.2's sparse attention: the indexer's heads and width
  // (DeepSeek-V3.2-Exp inference/model.py, Indexer).
  if (type == "deepseek_v32" || type == "glm_moe_dsa") {
    a.set_index_n_heads(static_cast<int32_t>(take(c.Required({"index_n_heads"}))));
    a.set_index_head_dim(static_cast<int32_t>(take(c.Required({"index_head_dim"}))));
    // GlmMoeDsaConfig.indexer_types: "full" layers keep an indexer, "shared"
    // ones reuse another's top-k and hold none (a pruned GLM-5 stores fewer
    // indexers); every layer is counted with one, so a "shared" entry is
    // refused rather than over-counted.
    if (const Value* kinds = c.Find({"indexer_types"});
        kinds != nullptr && kinds->kind_case() == Value::kListValue) {
      for (int i = 0; i < kinds->list_value().values_size(); ++i) {
        const Value& kind = kinds->list_value().values(i);
        if (kind.kind_case() != Value::kStringValue || kind.string_value() != "full") {
          return WithReason(
              InvalidFieldError(absl::StrCat(kField, ".indexer_types[", i, "]"),
                                "only \"full\" layers (each with its own indexer) are counted "
                                "by this reader"),
              "UNSUPPORTED_MODEL_TYPE");
        }
      }
    }
  }
  if (!error.ok()) return error;
  if (type == "gemma4_text") {
    if (absl::Status gemma4 = Gemma4Layers(c, &a); !gemma4.ok()) return gemma4;
  }
  if (type == "nemotron-nas") {
    if (absl::Status nas = NemotronNasLayers(c, &a); !nas.ok()) return nas;
  }
  if (type == "exaone_moe") {
    if (absl::Status moe = ExaoneMoeLayers(c, &a); !moe.ok()) return moe;
  }
  if (type == "jamba" || type == "falcon_h1" || HasQwen3NextBlocks(type) || type == "nemotron_h" ||
      type == "granitemoehybrid" || type == "lfm2" || type == "lfm2_moe" || type == "kimi_linear" ||
      type == "bamba") {
    if (absl::Status hybrid = HybridArchitecture(c, root, type, &a); !hybrid.ok()) return hybrid;
  }
  a.set_source("config.json");
  return a;
}

}  // namespace
}  // namespace modelatlas
