#include "common/formats/gguf_architecture.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/formats/hf_config.h"
#include "common/status/errors.h"

namespace modelatlas {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

// general.architecture (llama.cpp src/llama-arch.cpp LLM_ARCH_NAMES) -> the
// config.json model_type whose blocks the file holds. "chatglm" files come
// from ChatGLM2/3 and GLM-4-9B-chat's own format, whose blocks are
// transformers' "glm"; Llama 4's holds its language model only (the vision
// tower is a separate mmproj file), as Qwen2-VL's and Qwen2.5-VL's
// (qwen2vl: Qwen2's blocks) and Qwen3-VL's (qwen3vl, qwen3vlmoe: Qwen3's
// dense and mixture-of-experts blocks; the deepstack features come from the
// vision tower, llama.cpp src/llama-arch.cpp LLM_ARCH_QWEN3VL's tensors are
// LLM_ARCH_QWEN3's).
const std::map<std::string, std::string>& Families() {
  static const auto* families =
      new std::map<std::string, std::string>{{"llama", "llama"},
                                             {"mistral", "mistral"},
                                             {"qwen2", "qwen2"},
                                             {"qwen2vl", "qwen2"},
                                             {"qwen3", "qwen3"},
                                             {"qwen2moe", "qwen2_moe"},
                                             {"qwen3moe", "qwen3_moe"},
                                             {"qwen3vl", "qwen3"},
                                             {"qwen3vlmoe", "qwen3_moe"},
                                             {"gemma", "gemma"},
                                             {"gemma2", "gemma2"},
                                             {"gemma3", "gemma3_text"},
                                             {"gemma4", "gemma4_text"},
                                             {"phi2", "phi"},
                                             {"phi3", "phi3"},
                                             {"phimoe", "phimoe"},
                                             {"deepseek2", "deepseek_v2"},
                                             {"olmo2", "olmo2"},
                                             {"olmoe", "olmoe"},
                                             {"granite", "granite"},
                                             {"granitemoe", "granitemoe"},
                                             {"stablelm", "stablelm"},
                                             {"exaone", "exaone"},
                                             {"exaone4", "exaone4"},
                                             {"internlm2", "internlm2"},
                                             {"seed_oss", "seed_oss"},
                                             {"smollm3", "smollm3"},
                                             {"glm4", "glm4"},
                                             {"chatglm", "glm"},
                                             {"glm4moe", "glm4_moe"},
                                             {"dots1", "dots1"},
                                             {"starcoder2", "starcoder2"},
                                             {"minimax-m2", "minimax_m2"},
                                             {"ernie4_5", "ernie4_5"},
                                             {"ernie4_5-moe", "ernie4_5_moe"},
                                             {"gpt-oss", "gpt_oss"},
                                             {"llama4", "llama4_text"},
                                             {"command-r", "cohere"},
                                             {"cohere2", "cohere2"},
                                             {"olmo", "olmo"},
                                             {"lfm2", "lfm2"},
                                             {"lfm2moe", "lfm2_moe"},
                                             {"mimo2", "mimo_v2_flash"},
                                             {"step35", "step3p5"},
                                             {"qwen3next", "qwen3_next"},
                                             {"qwen35", "qwen3_5_text"},
                                             {"qwen35moe", "qwen3_5_moe_text"},
                                             {"granitehybrid", "granitemoehybrid"},
                                             {"nemotron_h", "nemotron_h"},
                                             {"nemotron_h_moe", "nemotron_h"},
                                             {"falcon-h1", "falcon_h1"},
                                             {"jamba", "jamba"},
                                             {"deci", "nemotron-nas"},
                                             {"kimi-linear", "kimi_linear"},
                                             {"afmoe", "afmoe"},
                                             {"exaone-moe", "exaone_moe"}};
  return *families;
}

bool HasTensor(const GgufHeader& header, absl::string_view name) {
  for (const GgufTensorInfo& t : header.tensors) {
    if (t.name == name) return true;
  }
  return false;
}

// Some tensor of block `block`, or null.
const GgufTensorInfo* AnyTensorOfBlock(const GgufHeader& header, int64_t block) {
  const std::string prefix = absl::StrCat("blk.", block, ".");
  for (const GgufTensorInfo& t : header.tensors) {
    if (absl::StartsWith(t.name, prefix)) return &t;
  }
  return nullptr;
}

// A tensor of some block: "blk.N.<suffix>" for any N.
const GgufTensorInfo* AnyBlockTensor(const GgufHeader& header, absl::string_view suffix) {
  for (const GgufTensorInfo& t : header.tensors) {
    if (absl::StartsWith(t.name, "blk.") && absl::EndsWith(t.name, suffix)) return &t;
  }
  return nullptr;
}

// Blocks holding multi-token-prediction tensors ("blk.N.nextn.*"): GLM-4.5's
// converter keeps its MTP layer as a block after the model's
// (convert_hf_to_gguf.py Glm4MoeModel: block_count = num_hidden_layers +
// num_nextn_predict_layers).
int MtpBlocks(const GgufHeader& header) {
  std::set<std::string> blocks;
  for (const GgufTensorInfo& t : header.tensors) {
    if (!absl::StartsWith(t.name, "blk.") || !absl::StrContains(t.name, ".nextn.")) continue;
    std::vector<absl::string_view> parts = absl::StrSplit(t.name, '.');
    if (parts.size() > 1) blocks.insert(std::string(parts[1]));
  }
  return static_cast<int>(blocks.size());
}

// llama.cpp's Mamba files (general.architecture "mamba"; convert_hf_to_gguf.py
// MambaModel): mamba.ssm.inner_size, state_size, conv_kernel and
// time_step_rank beside the block count and width; the conv1d carries a
// bias, the projections none; an output.weight tensor when untied.
absl::StatusOr<common::v1::Architecture> MambaFromGguf(const GgufHeader& header,
                                                       absl::string_view field) {
  const GgufModelMetadata& m = header.model;
  FieldViolations missing;
  auto need = [&](const std::optional<int64_t>& v, absl::string_view key) -> int64_t {
    if (!v.has_value() || *v <= 0) {
      missing.Add(absl::StrCat(field, "mamba.", key), "missing from the metadata");
      return 0;
    }
    return *v;
  };
  common::v1::Architecture a;
  a.set_model_type("mamba");
  const int64_t layers = need(m.block_count, "block_count");
  a.set_num_layers(static_cast<int32_t>(layers));
  a.set_hidden_size(need(m.embedding_length, "embedding_length"));
  a.set_ssm_inner_size(need(header.GetInt("mamba.ssm.inner_size"), "ssm.inner_size"));
  a.set_ssm_state_size(
      static_cast<int32_t>(need(header.GetInt("mamba.ssm.state_size"), "ssm.state_size")));
  a.set_ssm_conv_kernel(
      static_cast<int32_t>(need(header.GetInt("mamba.ssm.conv_kernel"), "ssm.conv_kernel")));
  a.set_ssm_dt_rank(
      static_cast<int32_t>(need(header.GetInt("mamba.ssm.time_step_rank"), "ssm.time_step_rank")));
  if (m.vocab_size.has_value()) {
    a.set_vocab_size(*m.vocab_size);
  } else {
    missing.Add(absl::StrCat(field, "tokenizer.ggml.tokens"), "missing from the metadata");
  }
  a.set_recurrent_mixer("mamba");
  a.set_num_recurrent_layers(static_cast<int32_t>(layers));
  a.set_ssm_conv_bias(true);
  a.set_norms_per_layer(1);
  a.set_norm_type(common::v1::NORM_TYPE_RMS_NORM);
  // llama.cpp keeps the recurrent states in F32 (llama-model.cpp
  // create_memory: llama_memory_recurrent's type_r and type_s).
  a.set_ssm_state_fp32(true);
  a.set_tie_word_embeddings(!HasTensor(header, "output.weight"));
  a.set_published_parameter_count(static_cast<int64_t>(header.total_elements));
  if (absl::Status bad = missing.ToStatus(); !bad.ok()) return bad;
  return a;
}

// The config.json a transformer's GGUF metadata was written from.
class ConfigFromGguf {
 public:
  ConfigFromGguf(const GgufHeader& header, const std::string& model_type, absl::string_view field)
      : h_(header), prefix_(header.model.architecture + "."), field_(field) {
    Set("model_type", model_type);
  }

  void Set(const char* key, const std::string& value) { Field(key).set_string_value(value); }
  void Set(const char* key, int64_t value) {
    Field(key).set_number_value(static_cast<double>(value));
  }
  void SetBool(const char* key, bool value) { Field(key).set_bool_value(value); }
  void SetIf(const char* key, std::optional<int64_t> value) {
    if (value.has_value()) Set(key, *value);
  }
  Value& Field(const char* key) { return (*root_.mutable_fields())[key]; }
  void Erase(const char* key) { root_.mutable_fields()->erase(key); }
  // A required value: a missing one is a violation naming `{arch}.<key>`.
  int64_t Need(std::optional<int64_t> value, absl::string_view key) {
    if (!value.has_value() || *value <= 0) {
      missing_.Add(absl::StrCat(field_, prefix_, key), "missing from the metadata");
      return 0;
    }
    return *value;
  }
  std::optional<int64_t> Int(absl::string_view key) const {
    return h_.GetInt(absl::StrCat(prefix_, key));
  }
  const GgufArray* Array(absl::string_view key) const {
    return h_.GetArray(absl::StrCat(prefix_, key));
  }
  std::string Key(absl::string_view key) const { return absl::StrCat(field_, prefix_, key); }
  FieldViolations& missing() { return missing_; }
  // `{arch}.<key>` as one entry per block, as llama.cpp's get_key_or_arr
  // wants it; null, with a violation ("must list one <what> per block ...
  // <note>"), when the file has no such list or one of another length.
  const GgufArray* PerBlock(absl::string_view key, int64_t blocks, absl::string_view what,
                            absl::string_view note = "") {
    const GgufArray* list = Array(key);
    if (list != nullptr && static_cast<int64_t>(list->numbers.size()) == blocks) return list;
    missing_.Add(Key(key), absl::StrCat("must list one ", what, " per block, block_count (", blocks,
                                        ") of them", note));
    return nullptr;
  }
  // One head's width of ssm.inner_size over ssm.time_step_rank's `heads`
  // (`what`: "heads", "value heads"), or 0 with a violation when the heads
  // do not divide it.
  int64_t HeadWidth(int64_t inner, int64_t heads, absl::string_view what = "heads") {
    if (heads <= 0) return 0;
    if (inner % heads != 0) {
      missing_.Add(Key("ssm.inner_size"), absl::StrCat(inner,
                                                       " is not a whole number of "
                                                       "ssm.time_step_rank's ",
                                                       heads, " ", what));
    }
    return inner / heads;
  }
  // Whether block `block` holds "blk.<block>.<suffix>": the file's names are
  // put in a set on the first call, since readers ask once or twice a block.
  bool BlockHas(int64_t block, absl::string_view suffix) {
    if (tensor_names_.empty()) {
      for (const GgufTensorInfo& t : h_.tensors) tensor_names_.insert(t.name);
    }
    return tensor_names_.contains(absl::StrCat("blk.", block, ".", suffix));
  }
  std::string Json() const {
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(root_, &json);
    return json;
  }

 private:
  const GgufHeader& h_;
  const std::string prefix_;
  const std::string field_;
  Struct root_;
  FieldViolations missing_;
  absl::flat_hash_set<absl::string_view> tensor_names_;  // views of h_'s names
};

// llama.cpp's Mamba-2 files (general.architecture "mamba2";
// conversion/mamba.py Mamba2Model): ssm.inner_size the heads' width
// together, ssm.time_step_rank the heads, ssm.group_count, ssm.state_size
// and ssm.conv_kernel; the biases as tensors. Read as the Mamba2Config they
// were written from; llama.cpp keeps the states in F32.
absl::StatusOr<common::v1::Architecture> Mamba2FromGguf(const GgufHeader& header,
                                                        absl::string_view field) {
  const GgufModelMetadata& m = header.model;
  ConfigFromGguf c(header, "mamba2", field);
  c.Set("num_hidden_layers", c.Need(m.block_count, "block_count"));
  c.Set("hidden_size", c.Need(m.embedding_length, "embedding_length"));
  const int64_t heads = c.Need(c.Int("ssm.time_step_rank"), "ssm.time_step_rank");
  const int64_t inner = c.Need(c.Int("ssm.inner_size"), "ssm.inner_size");
  c.Set("num_heads", heads);
  c.Set("head_dim", c.HeadWidth(inner, heads));
  c.Set("n_groups", c.Need(c.Int("ssm.group_count"), "ssm.group_count"));
  c.Set("state_size", c.Need(c.Int("ssm.state_size"), "ssm.state_size"));
  c.Set("conv_kernel", c.Need(c.Int("ssm.conv_kernel"), "ssm.conv_kernel"));
  c.SetBool("use_conv_bias", AnyBlockTensor(header, ".ssm_conv1d.bias") != nullptr);
  c.SetBool("use_bias", AnyBlockTensor(header, ".ssm_in.bias") != nullptr);
  c.SetBool("tie_word_embeddings", !HasTensor(header, "output.weight"));
  c.Set("mamba_ssm_dtype", "float32");
  if (m.vocab_size.has_value()) {
    c.Set("vocab_size", *m.vocab_size);
  } else {
    c.missing().Add(absl::StrCat(field, "tokenizer.ggml.tokens"), "missing from the metadata");
  }
  if (absl::Status bad = c.missing().ToStatus(); !bad.ok()) return bad;
  absl::StatusOr<common::v1::Architecture> a = ArchitectureFromHfConfig(c.Json());
  if (!a.ok()) {
    return absl::Status(a.status().code(),
                        absl::StrCat("the mamba2 metadata, read as the config.json it was written "
                                     "from: ",
                                     a.status().message()));
  }
  a->clear_source();  // the answer names the file
  a->set_published_parameter_count(static_cast<int64_t>(header.total_elements));
  return a;
}

// config.json's layer_types from a list of flags, true for a sliding layer.
void LayerTypes(ConfigFromGguf* c, const std::vector<bool>& sliding) {
  Value& list = c->Field("layer_types");
  list.mutable_list_value()->clear_values();
  for (bool s : sliding) {
    list.mutable_list_value()->add_values()->set_string_value(s ? "sliding_attention"
                                                                : "full_attention");
  }
}

// {arch}.attention.sliding_window_pattern: a period (the last layer of each
// period full, as Gemma 3's config says it) or a flag per layer, true for a
// sliding one (convert_hf_to_gguf.py add_sliding_window_pattern).
void SlidingPattern(ConfigFromGguf* c) {
  if (std::optional<int64_t> period = c->Int("attention.sliding_window_pattern")) {
    c->Set("sliding_window_pattern", *period);
  } else if (const GgufArray* flags = c->Array("attention.sliding_window_pattern");
             flags != nullptr && !flags->numbers.empty()) {
    std::vector<bool> sliding;
    for (double f : flags->numbers) sliding.push_back(f != 0);
    LayerTypes(c, sliding);
  }
}

// {arch}.attention.sliding_window_pattern as one flag per block, true for a
// sliding one: llama.cpp's get_key_or_arr wants block_count entries, the
// multi-token-prediction blocks' included (mimo2 writes INT32 0/1, step35
// BOOL). Empty, with a violation, when the file has no such list.
std::vector<bool> SlidingFlags(ConfigFromGguf* c, int64_t blocks) {
  const std::string key = "attention.sliding_window_pattern";
  const GgufArray* flags = c->PerBlock(key, blocks, "0/1 flag");
  if (flags == nullptr) return {};
  std::vector<bool> sliding;
  for (size_t i = 0; i < flags->numbers.size(); ++i) {
    const double f = flags->numbers[i];
    if (f != 0 && f != 1) {
      c->missing().Add(absl::StrCat(c->Key(key), "[", i, "]"), "must be 0 (full) or 1 (sliding)");
      return {};
    }
    sliding.push_back(f == 1);
  }
  return sliding;
}

// A per-block count (a number, or one entry per block: llama.cpp's
// get_key_or_arr) as the sliding layers' and the full ones' among the
// first `layers` blocks; 0 for a kind the model has none of. Entries that
// differ within a kind are a violation naming the first that does.
struct PerKind {
  int64_t sliding = 0, full = 0;
};

PerKind CountPerKind(ConfigFromGguf* c, absl::string_view key, const std::vector<bool>& sliding,
                     int64_t layers) {
  PerKind out;
  if (std::optional<int64_t> one = c->Int(key)) {
    out.sliding = out.full = *one;
    return out;
  }
  const GgufArray* per_block = c->Array(key);
  if (per_block == nullptr || per_block->numbers.size() != sliding.size()) {
    c->missing().Add(c->Key(key), absl::StrCat("must be a number or list one per block, ",
                                               sliding.size(), " of them"));
    return out;
  }
  for (int64_t i = 0; i < layers; ++i) {
    const int64_t n = static_cast<int64_t>(per_block->numbers[i]);
    int64_t& kind = sliding[i] ? out.sliding : out.full;
    if (n <= 0 || (kind != 0 && kind != n)) {
      c->missing().Add(
          absl::StrCat(c->Key(key), "[", i, "]"),
          absl::StrCat(n, ": every ", sliding[i] ? "sliding" : "full",
                       "-attention layer must have the same positive count (", kind, " before)"));
      return out;
    }
    kind = n;
  }
  return out;
}

// The trunk blocks (the first `layers`) with a router, ffn_gate_inp: the
// mixture-of-experts layers (mimo2 and step35 write no key for the dense
// ones).
std::vector<int64_t> RoutedBlocks(ConfigFromGguf* c, int64_t layers) {
  std::vector<int64_t> routed;
  for (int64_t i = 0; i < layers; ++i) {
    if (c->BlockHas(i, "ffn_gate_inp.weight")) routed.push_back(i);
  }
  return routed;
}

// MiMo-V2-Flash (llama.cpp LLM_ARCH_MIMO2; convert_hf_to_gguf.py
// MimoV2Model, PR #18328, later conversion/mimo.py): one head_count and
// head_count_kv per block (the sliding layers' 8, the full ones' 4),
// key_length the query and key heads' 192 and value_length the values' 128,
// sliding_window_pattern hybrid_layer_pattern's 0/1 per block, sinks only
// as blk.N.attn_sinks tensors, a block without ffn_gate_inp dense, the
// router bias as exp_probs_b. Since PR #22493 (b9055) the checkpoint's three
// multi-token-prediction layers follow as blocks 48-50 (nextn_predict_layers
// 3, each marked sliding); older files hold the 48 alone. The config.json
// reader then counts the MTP blocks the file holds, not its default three.
void Mimo2Keys(const GgufHeader& header, ConfigFromGguf* c, int64_t layers, int64_t blocks,
               int mtp_blocks) {
  const std::vector<bool> sliding = SlidingFlags(c, blocks);
  if (sliding.empty()) return;
  const int64_t listed = static_cast<int64_t>(sliding.size());
  for (int64_t i = layers; i < std::min<int64_t>(layers + mtp_blocks, listed); ++i) {
    if (!sliding[i]) {
      c->missing().Add(absl::StrCat(c->Key("attention.sliding_window_pattern"), "[", i, "]"),
                       "a multi-token-prediction block with full attention is not counted by "
                       "this reader");
    }
  }
  Value& pattern = c->Field("hybrid_layer_pattern");
  bool swa_sinks = false, full_sinks = false;
  for (int64_t i = 0; i < layers; ++i) {
    pattern.mutable_list_value()->add_values()->set_number_value(sliding[i] ? 1 : 0);
    (sliding[i] ? swa_sinks : full_sinks) |= c->BlockHas(i, "attn_sinks.weight");
  }
  c->Erase("layer_types");
  const PerKind heads = CountPerKind(c, "attention.head_count", sliding, layers);
  const PerKind kv = CountPerKind(c, "attention.head_count_kv", sliding, layers);
  c->Set("num_attention_heads", heads.full > 0 ? heads.full : heads.sliding);
  c->Set("num_key_value_heads", kv.full > 0 ? kv.full : kv.sliding);
  c->Set("swa_num_attention_heads", heads.sliding > 0 ? heads.sliding : heads.full);
  c->Set("swa_num_key_value_heads", kv.sliding > 0 ? kv.sliding : kv.full);
  c->Set("head_dim", c->Need(c->Int("attention.key_length"), "attention.key_length"));
  c->Set("v_head_dim", c->Need(c->Int("attention.value_length"), "attention.value_length"));
  c->SetBool("add_swa_attention_sink_bias", swa_sinks);
  c->SetBool("add_full_attention_sink_bias", full_sinks);
  if (header.model.expert_count.value_or(0) > 0) {
    Value& moe = c->Field("moe_layer_freq");
    const std::vector<int64_t> routed = RoutedBlocks(c, layers);
    for (int64_t i = 0; i < layers; ++i) {
      const bool is_routed = std::find(routed.begin(), routed.end(), i) != routed.end();
      moe.mutable_list_value()->add_values()->set_number_value(is_routed ? 1 : 0);
    }
  }
  if (AnyBlockTensor(header, ".exp_probs_b.bias") != nullptr) c->Set("topk_method", "noaux_tc");
  // MiMo-V2.5's shared expert: refused by the config.json reader, by name.
  if (AnyBlockTensor(header, ".ffn_up_shexp.weight") != nullptr) c->Set("n_shared_experts", 1);
  c->SetBool("use_qk_norm", AnyBlockTensor(header, ".attn_q_norm.weight") != nullptr);
  c->Set("num_nextn_predict_layers", mtp_blocks);
}

// Step-3.5-Flash (llama.cpp LLM_ARCH_STEP35; convert_hf_to_gguf.py
// Step35Model, PR #19283, later conversion/step3.py): head_count per block
// (96 in the sliding layers, 64 in the full ones), head_count_kv per block
// (8), key_length = value_length = head_dim, sliding_window_pattern a BOOL
// per block, the head-wise gate as blk.N.attn_gate, the shared expert's
// width as expert_shared_feed_forward_length, the router bias as
// exp_probs_b. Since PR #23274 (b9480) the three multi-token-prediction
// layers follow as blocks 45-47, each with its own output head
// (nextn.shared_head_head).
void Step35Keys(const GgufHeader& header, ConfigFromGguf* c, int64_t layers, int64_t blocks,
                int mtp_blocks) {
  const std::vector<bool> sliding = SlidingFlags(c, blocks);
  if (sliding.empty()) return;
  const PerKind heads = CountPerKind(c, "attention.head_count", sliding, layers);
  const PerKind kv = CountPerKind(c, "attention.head_count_kv", sliding, layers);
  const int64_t head_dim = c->Need(c->Int("attention.key_length"), "attention.key_length");
  c->Set("att_impl_type", "GQA");
  c->Set("num_attention_heads", heads.full > 0 ? heads.full : heads.sliding);
  c->Set("num_attention_groups", kv.full > 0 ? kv.full : kv.sliding);
  c->Set("head_dim", head_dim);
  Struct& other = *c->Field("attention_other_setting").mutable_struct_value();
  (*other.mutable_fields())["attention_type"].set_string_value("sliding_attention");
  (*other.mutable_fields())["num_attention_heads"].set_number_value(
      static_cast<double>(heads.sliding > 0 ? heads.sliding : heads.full));
  (*other.mutable_fields())["num_attention_groups"].set_number_value(
      static_cast<double>(kv.sliding > 0 ? kv.sliding : kv.full));
  (*other.mutable_fields())["head_dim"].set_number_value(static_cast<double>(head_dim));
  c->SetBool("use_qk_norm", AnyBlockTensor(header, ".attn_q_norm.weight") != nullptr);
  c->SetBool("use_head_wise_attn_gate", AnyBlockTensor(header, ".attn_gate.weight") != nullptr);
  if (header.model.expert_count.value_or(0) > 0) {
    c->Set("moe_top_k", header.model.expert_used_count.value_or(0));
    c->SetIf("share_expert_dim", c->Int("expert_shared_feed_forward_length"));
    c->SetBool("use_moe_router_bias", AnyBlockTensor(header, ".exp_probs_b.bias") != nullptr);
    c->Set("moe_layers_enum", absl::StrJoin(RoutedBlocks(c, layers), ","));
  }
  c->Set("num_nextn_predict_layers", mtp_blocks);
}

// LFM2 and LFM2-MoE (convert_hf_to_gguf.py LFM2Model, LFM2MoeModel):
// attention.head_count_kv per layer, 0 for a short-conv layer (llama.cpp's
// is_recr), shortconv.l_cache the convolution's taps, feed_forward_length
// the MLP width already adjusted (block_auto_adjust_ff_dim applied), and
// for the mixture the dense lead (leading_dense_block_count).
void ShortConvLayers(const GgufHeader& header, ConfigFromGguf* c) {
  if (const GgufArray* kv = c->Array("attention.head_count_kv");
      kv != nullptr && !kv->numbers.empty()) {
    Value& list = c->Field("layer_types");
    list.mutable_list_value()->clear_values();
    for (double n : kv->numbers) {
      list.mutable_list_value()->add_values()->set_string_value(n == 0 ? "conv" : "full_attention");
    }
  }
  c->Set("conv_L_cache", c->Need(c->Int("shortconv.l_cache"), "shortconv.l_cache"));
  c->SetBool("conv_bias", AnyBlockTensor(header, ".shortconv.in_proj.bias") != nullptr);
  c->SetBool("block_auto_adjust_ff_dim", false);
  c->SetIf("num_dense_layers", c->Int("leading_dense_block_count"));
}

// Qwen3-Next and Qwen3.5's language models (llama.cpp LLM_ARCH_QWEN3NEXT,
// QWEN35, QWEN35MOE; conversion/qwen.py Qwen3NextModel and its Qwen3.5
// subclasses): the Gated DeltaNet mixer under llama.cpp's SSM keys
// (ssm.conv_kernel the conv's taps, ssm.state_size a key head's width,
// ssm.group_count the key heads, ssm.time_step_rank the value heads,
// ssm.inner_size value heads x value width); attention in every
// full_attention_interval-th layer, unless attention.recurrent_layers flags
// each block (src/models/qwen3next.cpp load_arch_hparams); Qwen3.5's
// multi-token-prediction layer as a block after the model's
// (_Qwen35MtpMixin; Qwen3-Next's converter drops it). llama.cpp keeps the
// recurrent states in F32 (llama-model.cpp create_memory: recurrent_type_s).
void Qwen3NextKeys(ConfigFromGguf* c, int64_t layers, int64_t blocks, int mtp_blocks) {
  const int64_t value_heads = c->Need(c->Int("ssm.time_step_rank"), "ssm.time_step_rank");
  const int64_t inner = c->Need(c->Int("ssm.inner_size"), "ssm.inner_size");
  c->Set("linear_num_value_heads", value_heads);
  c->Set("linear_value_head_dim", c->HeadWidth(inner, value_heads, "value heads"));
  c->Set("linear_num_key_heads", c->Need(c->Int("ssm.group_count"), "ssm.group_count"));
  c->Set("linear_key_head_dim", c->Need(c->Int("ssm.state_size"), "ssm.state_size"));
  c->Set("linear_conv_kernel_dim", c->Need(c->Int("ssm.conv_kernel"), "ssm.conv_kernel"));
  if (c->Array("attention.recurrent_layers") != nullptr) {
    if (const GgufArray* recurrent = c->PerBlock("attention.recurrent_layers", blocks, "flag")) {
      Value& types = c->Field("layer_types");
      for (int64_t i = 0; i < layers; ++i) {
        types.mutable_list_value()->add_values()->set_string_value(
            recurrent->numbers[i] != 0 ? "linear_attention" : "full_attention");
      }
    }
  } else {
    c->SetIf("full_attention_interval", c->Int("full_attention_interval"));
  }
  c->Set("num_nextn_predict_layers", mtp_blocks);
  c->Set("mamba_ssm_dtype", "float32");
}

// Granite 4.0 H, Nemotron-H and Falcon-H1 (llama.cpp LLM_ARCH_GRANITE_HYBRID,
// LLM_ARCH_NEMOTRON_H, LLM_ARCH_FALCON_H1; conversion/granite.py GraniteHybridModel and
// conversion/nemotron.py NemotronHModel): attention.head_count_kv per
// block, 0 for a Mamba-2 layer; the mixer under llama.cpp's SSM keys
// (ssm.time_step_rank the heads, ssm.inner_size heads x head width,
// ssm.group_count, ssm.state_size, ssm.conv_kernel; biases as tensors).
// Nemotron-H gives feed_forward_length per block, 0 where a block is not an
// MLP: one mixer per block, as its hybrid_override_pattern says. llama.cpp
// keeps the recurrent states in F32.
void Mamba2HybridKeys(const GgufHeader& header, ConfigFromGguf* c, const std::string& type,
                      int64_t layers, int64_t blocks) {
  // Falcon-H1 (conversion/falcon_h1.py FalconH1Model; src/models/falcon-h1.cpp)
  // runs attention and a Mamba-2 mixer side by side in every block: one
  // head_count_kv for all, the mixer's norm only when ssm_norm is there.
  const bool every_block = type == "falcon_h1";
  const GgufArray* kv = every_block ? nullptr
                                    : c->PerBlock("attention.head_count_kv", blocks, "count",
                                                  ", 0 for a Mamba-2 layer");
  if (!every_block && kv == nullptr) return;
  const int64_t heads = c->Need(c->Int("ssm.time_step_rank"), "ssm.time_step_rank");
  const int64_t inner = c->Need(c->Int("ssm.inner_size"), "ssm.inner_size");
  const int64_t head_width = c->HeadWidth(inner, heads);
  const int64_t groups = c->Need(c->Int("ssm.group_count"), "ssm.group_count");
  const int64_t state = c->Need(c->Int("ssm.state_size"), "ssm.state_size");
  const int64_t conv = c->Need(c->Int("ssm.conv_kernel"), "ssm.conv_kernel");
  const bool conv_bias = AnyBlockTensor(header, ".ssm_conv1d.bias") != nullptr;
  const bool proj_bias = AnyBlockTensor(header, ".ssm_in.bias") != nullptr;
  c->Set("mamba_ssm_dtype", "float32");
  if (every_block || type == "granitemoehybrid") {
    // FalconH1Config's and GraniteMoeHybridConfig's shared mamba_* names.
    c->Set("mamba_n_heads", heads);
    c->Set("mamba_d_head", head_width);
    c->Set("mamba_n_groups", groups);
    c->Set("mamba_d_state", state);
    c->Set("mamba_d_conv", conv);
    c->SetBool("mamba_conv_bias", conv_bias);
    c->SetBool("mamba_proj_bias", proj_bias);
  }
  if (every_block) {
    c->Set("mamba_d_ssm", inner);
    c->SetBool("mamba_rms_norm", AnyBlockTensor(header, ".ssm_norm.weight") != nullptr);
    return;
  }
  if (type == "granitemoehybrid") {
    Value& types = c->Field("layer_types");
    for (int64_t i = 0; i < layers; ++i) {
      types.mutable_list_value()->add_values()->set_string_value(kv->numbers[i] > 0 ? "attention"
                                                                                    : "mamba");
    }
    // The shared MLP (the whole MLP without experts: Granite 4.0 H Micro).
    std::optional<int64_t> shared = c->Int("expert_shared_feed_forward_length");
    if (!shared.has_value()) shared = header.model.feed_forward_length;
    c->Set("shared_intermediate_size", c->Need(shared, "expert_shared_feed_forward_length"));
    return;
  }
  const GgufArray* ffn =
      c->PerBlock("feed_forward_length", blocks, "width", ", 0 where a block is not an MLP");
  if (ffn == nullptr) return;
  // nemotron_h_moe (Nemotron 3 Nano): its MLP blocks are MoE blocks of
  // routed relu2 experts and a shared one (src/models/nemotron-h.cpp); the
  // latent projections of moe_latent_size (Nemotron 3 Super) are not
  // counted by the config.json reader.
  const bool moe = header.model.expert_count.value_or(0) > 0;
  if (c->Int("moe_latent_size").value_or(0) > 0) {
    c->missing().Add(c->Key("moe_latent_size"),
                     "latent MoE projections (ffn_latent_down, ffn_latent_up) are not counted by "
                     "this reader");
  }
  std::string pattern;
  for (int64_t i = 0; i < layers; ++i) {
    pattern.push_back(kv->numbers[i] > 0 ? '*' : ffn->numbers[i] > 0 ? (moe ? 'E' : '-') : 'M');
  }
  c->Set("hybrid_override_pattern", pattern);
  c->SetIf("moe_shared_expert_intermediate_size", c->Int("expert_shared_feed_forward_length"));
  c->Set("mamba_num_heads", heads);
  c->Set("mamba_head_dim", head_width);
  c->Set("n_groups", groups);
  c->Set("ssm_state_size", state);
  c->Set("conv_kernel", conv);
  c->SetBool("use_conv_bias", conv_bias);
  c->SetBool("use_bias", proj_bias);
}

// The period and offset of the blocks flagged among the first `layers`
// (JambaConfig's attn_layer_period / attn_layer_offset: block i flagged when
// i % period == offset), or nullopt when they are not that regular.
std::optional<std::pair<int64_t, int64_t>> PeriodOf(const std::vector<bool>& flagged,
                                                    int64_t layers) {
  std::vector<int64_t> at;
  for (int64_t i = 0; i < layers; ++i) {
    if (flagged[i]) at.push_back(i);
  }
  if (at.empty()) return std::nullopt;
  const int64_t period = at.size() > 1 ? at[1] - at[0] : layers;
  const int64_t offset = at[0] % period;
  for (int64_t i = 0; i < layers; ++i) {
    if (flagged[i] != (i % period == offset)) return std::nullopt;
  }
  return std::make_pair(period, offset);
}

// Jamba (llama.cpp LLM_ARCH_JAMBA; conversion/jamba.py JambaModel):
// head_count_kv per block, 0 for a Mamba-1 layer (ssm.inner_size the
// mixer's width, ssm.state_size, ssm.conv_kernel, ssm.time_step_rank its
// dt rank), a router (ffn_gate_inp) in the MoE blocks; the config's
// periods and offsets are read back from where the attention and MoE
// blocks are.
void JambaKeys(const GgufHeader& header, ConfigFromGguf* c, int64_t layers, int64_t blocks) {
  const GgufArray* kv =
      c->PerBlock("attention.head_count_kv", blocks, "count", ", 0 for a Mamba layer");
  if (kv == nullptr) return;
  std::vector<bool> attention, routed;
  for (int64_t i = 0; i < layers; ++i) {
    attention.push_back(kv->numbers[i] > 0);
    routed.push_back(c->BlockHas(i, "ffn_gate_inp.weight"));
  }
  // Each kind's period and offset under JambaConfig's names, or a
  // violation naming the key the blocks were read from.
  auto set_period = [&](const std::vector<bool>& flagged, const char* name, const char* key,
                        absl::string_view blocks_text) {
    const std::optional<std::pair<int64_t, int64_t>> at = PeriodOf(flagged, layers);
    if (!at.has_value()) {
      c->missing().Add(c->Key(key), absl::StrCat("its ", blocks_text, " are not one every ", name,
                                                 "_period blocks, which this reader counts"));
      return;
    }
    c->Set(absl::StrCat(name, "_period").c_str(), at->first);
    c->Set(absl::StrCat(name, "_offset").c_str(), at->second);
  };
  set_period(attention, "attn_layer", "attention.head_count_kv", "attention blocks");
  if (header.model.expert_count.value_or(0) > 1) {
    set_period(routed, "expert_layer", "expert_count", "blocks with a router (ffn_gate_inp)");
  }
  const int64_t hidden = header.model.embedding_length.value_or(0);
  const int64_t inner = c->Need(c->Int("ssm.inner_size"), "ssm.inner_size");
  if (hidden > 0 && inner % hidden != 0) {
    c->missing().Add(c->Key("ssm.inner_size"),
                     absl::StrCat(inner, " is not a whole multiple of embedding_length ", hidden,
                                  " (JambaConfig's mamba_expand)"));
  }
  c->Set("mamba_expand", hidden > 0 ? inner / hidden : 0);
  c->Set("mamba_d_state", c->Need(c->Int("ssm.state_size"), "ssm.state_size"));
  c->Set("mamba_d_conv", c->Need(c->Int("ssm.conv_kernel"), "ssm.conv_kernel"));
  c->Set("mamba_dt_rank", c->Need(c->Int("ssm.time_step_rank"), "ssm.time_step_rank"));
  c->SetBool("mamba_conv_bias", AnyBlockTensor(header, ".ssm_conv1d.bias") != nullptr);
  c->SetBool("mamba_proj_bias", AnyBlockTensor(header, ".ssm_in.bias") != nullptr);
  c->Set("mamba_ssm_dtype", "float32");
}

// Llama-3.3-Nemotron-Super and Llama-3.1-Nemotron-Ultra (llama.cpp
// LLM_ARCH_DECI; conversion/deci.py DeciModel, src/models/deci.cpp):
// head_count, head_count_kv and feed_forward_length one per block, a 0
// head_count where the attention is a no-op and a 0 width where the FFN is;
// read as the block_configs they were written from. A block of heads
// without KV heads is Nemotron-51B's linear replacement of its attention
// (replace_with_linear), refused by entry. The widths, which the converter
// wrote from ffn_mult, are the file's (`widths`, set on the architecture
// read).
void DeciKeys(ConfigFromGguf* c, int64_t blocks, int64_t hidden, std::vector<int64_t>* widths) {
  // DeciLM-7B's files (no block_configs): one head count, KV heads per
  // layer (variable grouped-query attention), which one KV-head count
  // cannot size.
  if (c->Int("attention.head_count").has_value()) {
    c->missing().Add(c->Key("attention.head_count"),
                     "one head count for every block is DeciLM-7B's layout (a KV-head count per "
                     "layer), which this reader does not size; Nemotron-NAS files list one per "
                     "block");
    return;
  }
  const GgufArray* heads =
      c->PerBlock("attention.head_count", blocks, "count", ", 0 for a layer without attention");
  const GgufArray* kv =
      c->PerBlock("attention.head_count_kv", blocks, "count", ", 0 for a layer without attention");
  const GgufArray* ffn =
      c->PerBlock("feed_forward_length", blocks, "width", ", 0 for a layer without an MLP");
  if (heads == nullptr || kv == nullptr || ffn == nullptr || hidden <= 0) return;
  Value& configs = c->Field("block_configs");
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t h = static_cast<int64_t>(heads->numbers[i]);
    const int64_t g = static_cast<int64_t>(kv->numbers[i]);
    const int64_t f = static_cast<int64_t>(ffn->numbers[i]);
    if (h > 0 && (g <= 0 || h % g != 0)) {
      c->missing().Add(absl::StrCat(c->Key("attention.head_count_kv"), "[", i, "]"),
                       g <= 0 ? "a layer of heads without KV heads (Nemotron-51B's linear "
                                "replacement of attention) is not counted by this reader"
                              : "must divide the layer's head_count");
      return;
    }
    Struct& block = *configs.mutable_list_value()->add_values()->mutable_struct_value();
    Struct& attention = *(*block.mutable_fields())["attention"].mutable_struct_value();
    (*attention.mutable_fields())["no_op"].set_bool_value(h == 0);
    if (h > 0) {
      (*attention.mutable_fields())["n_heads_in_group"].set_number_value(
          static_cast<double>(h / g));
    }
    Struct& mlp = *(*block.mutable_fields())["ffn"].mutable_struct_value();
    (*mlp.mutable_fields())["no_op"].set_bool_value(f <= 0);
    // A multiplier the width comes back from; the file's width is kept.
    if (f > 0) {
      (*mlp.mutable_fields())["ffn_mult"].set_number_value(1.5 * static_cast<double>(f) /
                                                           static_cast<double>(hidden));
    }
    widths->push_back(std::max<int64_t>(0, f));
  }
}

// Kimi Linear (llama.cpp LLM_ARCH_KIMI_LINEAR; conversion/kimi_linear.py,
// src/models/kimi-linear.cpp): head_count_kv per block, 1 for a latent
// attention layer (its MLA stored as multi-query attention) and 0 for a Kimi
// Delta Attention one; kda.head_dim and ssm.conv_kernel the KDA heads' width
// and conv taps (head_count heads). Read as KimiLinearConfig's
// linear_attn_config, its layers 1-based.
void KimiLinearKeys(ConfigFromGguf* c, int64_t layers, int64_t blocks, int64_t heads) {
  const GgufArray* kv = c->PerBlock("attention.head_count_kv", blocks, "count",
                                    ", 0 for a Kimi Delta Attention layer");
  if (kv == nullptr) return;
  Struct& linear = *c->Field("linear_attn_config").mutable_struct_value();
  Value& full = (*linear.mutable_fields())["full_attn_layers"];
  Value& kda = (*linear.mutable_fields())["kda_layers"];
  full.mutable_list_value();
  kda.mutable_list_value();
  for (int64_t i = 0; i < layers; ++i) {
    (kv->numbers[i] > 0 ? full : kda)
        .mutable_list_value()
        ->add_values()
        ->set_number_value(static_cast<double>(i + 1));
  }
  (*linear.mutable_fields())["num_heads"].set_number_value(static_cast<double>(heads));
  (*linear.mutable_fields())["head_dim"].set_number_value(
      static_cast<double>(c->Need(c->Int("kda.head_dim"), "kda.head_dim")));
  (*linear.mutable_fields())["short_conv_kernel_size"].set_number_value(
      static_cast<double>(c->Need(c->Int("ssm.conv_kernel"), "ssm.conv_kernel")));
}

// Gemma 4 (convert_hf_to_gguf.py Gemma4Model; llama.cpp LLM_ARCH_GEMMA4):
// attention.key_length is global_head_dim and key_length_swa head_dim;
// head_count_kv a number, or per layer (the sliding layers' and the full
// ones' KV heads) when the config has num_global_key_value_heads; a full
// layer without attn_v takes its values from the keys (attention_k_eq_v);
// feed_forward_length per layer with use_double_wide_mlp (the KV-shared
// layers' twice the others'); attention.shared_kv_layers,
// embedding_length_per_layer_input (0 without per-layer inputs) and
// expert_used_count (top_k_experts, beside the dense MLP).
void Gemma4Keys(const GgufHeader& header, ConfigFromGguf* c) {
  c->Set("head_dim", c->Need(c->Int("attention.key_length_swa"), "attention.key_length_swa"));
  c->Set("global_head_dim", c->Need(c->Int("attention.key_length"), "attention.key_length"));
  const GgufArray* flags = c->Array("attention.sliding_window_pattern");
  int first_full = -1, first_sliding = -1;
  if (flags != nullptr) {
    for (size_t i = 0; i < flags->numbers.size(); ++i) {
      int& first = flags->numbers[i] != 0 ? first_sliding : first_full;
      if (first < 0) first = static_cast<int>(i);
    }
  }
  if (const GgufArray* kv = c->Array("attention.head_count_kv");
      kv != nullptr && first_full >= 0 && first_sliding >= 0 &&
      static_cast<size_t>(std::max(first_full, first_sliding)) < kv->numbers.size()) {
    c->Set("num_key_value_heads", static_cast<int64_t>(kv->numbers[first_sliding]));
    c->Set("num_global_key_value_heads", static_cast<int64_t>(kv->numbers[first_full]));
  }
  c->SetBool(
      "attention_k_eq_v",
      first_full >= 0 && !HasTensor(header, absl::StrCat("blk.", first_full, ".attn_v.weight")));
  if (const GgufArray* widths = c->Array("feed_forward_length");
      widths != nullptr && !widths->numbers.empty()) {
    const int64_t base = static_cast<int64_t>(widths->numbers.front());
    c->Set("intermediate_size", base);
    c->SetBool("use_double_wide_mlp", static_cast<int64_t>(widths->numbers.back()) == 2 * base);
  }
  c->SetIf("num_kv_shared_layers", c->Int("attention.shared_kv_layers"));
  if (const std::optional<int64_t> per_layer = c->Int("embedding_length_per_layer_input");
      per_layer.value_or(0) > 0) {
    c->Set("hidden_size_per_layer_input", *per_layer);
    // per_layer_token_embd: {layers x P, rows}.
    for (const GgufTensorInfo& t : header.tensors) {
      if (t.name == "per_layer_token_embd.weight" && t.dims.size() == 2) {
        c->Set("vocab_size_per_layer_input", static_cast<int64_t>(t.dims[1]));
      }
    }
  }
  if (header.model.expert_count.value_or(0) > 0) {
    c->SetBool("enable_moe_block", true);
    c->Set("top_k_experts", header.model.expert_used_count.value_or(0));
  }
}

// Multi-head latent attention (deepseek2): the ranks and head widths. Files
// written since llama.cpp stored MLA as multi-query attention give the
// decompressed widths as key_length_mla / value_length_mla (key_length is
// then the compressed cache's); older ones as key_length / value_length, and
// llama.cpp runs those as multi-head attention, caching every head
// (llama-hparams is_mla(): both _mla widths non-zero). Returns true for the
// newer layout, whose cache is the latent.
bool LatentAttention(ConfigFromGguf* c, int64_t heads) {
  const int64_t rope = c->Need(c->Int("rope.dimension_count"), "rope.dimension_count");
  c->Set("kv_lora_rank", c->Need(c->Int("attention.kv_lora_rank"), "attention.kv_lora_rank"));
  c->Set("q_lora_rank", c->Int("attention.q_lora_rank").value_or(0));
  c->Set("qk_rope_head_dim", rope);
  const bool mqa_layout = c->Int("attention.key_length_mla").has_value();
  const int64_t key =
      c->Need(c->Int(mqa_layout ? "attention.key_length_mla" : "attention.key_length"),
              mqa_layout ? "attention.key_length_mla" : "attention.key_length");
  const int64_t value =
      c->Need(c->Int(mqa_layout ? "attention.value_length_mla" : "attention.value_length"),
              mqa_layout ? "attention.value_length_mla" : "attention.value_length");
  if (key > rope) c->Set("qk_nope_head_dim", key - rope);
  c->Set("v_head_dim", value);
  c->Set("num_key_value_heads", heads);
  return mqa_layout && c->Int("attention.value_length_mla").value_or(0) > 0;
}

}  // namespace

std::vector<std::string> GgufArchitecturesRead() {
  std::vector<std::string> known;
  for (const auto& [name, type] : Families()) known.push_back(name);
  known.push_back("mamba");
  known.push_back("mamba2");
  std::sort(known.begin(), known.end());
  return known;
}

absl::StatusOr<common::v1::Architecture> ArchitectureFromGguf(const GgufHeader& header,
                                                              absl::string_view field) {
  const GgufModelMetadata& m = header.model;
  if (m.architecture == "mamba") return MambaFromGguf(header, field);
  if (m.architecture == "mamba2") return Mamba2FromGguf(header, field);
  auto family = Families().find(m.architecture);
  if (family == Families().end()) {
    return WithReason(
        InvalidFieldError(absl::StrCat(field, "general.architecture"),
                          absl::StrCat("\"", m.architecture,
                                       "\" is not a family this reader knows; supported "
                                       "general.architecture values: ",
                                       absl::StrJoin(GgufArchitecturesRead(), ", "))),
        "UNSUPPORTED_MODEL_TYPE");
  }
  // Layers without key/value heads are recurrent (llama.cpp's hybrids write
  // 0 for them): not sized as attention, except LFM2's short-conv layers,
  // which the file names that way (ShortConvLayers).
  const bool short_conv = family->second == "lfm2" || family->second == "lfm2_moe";
  // Granite 4.0 H's and Nemotron-H's 0s are their Mamba-2 layers
  // (Mamba2HybridKeys).
  const bool mamba2_hybrid = family->second == "granitemoehybrid" ||
                             family->second == "nemotron_h" || family->second == "falcon_h1";
  const bool jamba = family->second == "jamba";        // its 0s are Mamba-1 layers (JambaKeys)
  const bool deci = family->second == "nemotron-nas";  // its 0s are no-ops (DeciKeys)
  const bool kimi = family->second == "kimi_linear";   // its 0s are KDA layers

  if (const GgufArray* kv = header.GetArray(m.architecture + ".attention.head_count_kv");
      kv != nullptr && !short_conv && !mamba2_hybrid && !jamba && !deci && !kimi) {
    for (double n : kv->numbers) {
      if (n == 0) {
        return WithReason(
            InvalidFieldError(absl::StrCat(field, m.architecture, ".attention.head_count_kv"),
                              "lists layers without key/value heads (recurrent layers of a "
                              "hybrid model), which this reader does not size"),
            "UNSUPPORTED_MODEL_TYPE");
      }
    }
  }
  const bool experts = m.expert_count.value_or(0) > 0;
  const bool router_bias = AnyBlockTensor(header, ".exp_probs_b.bias") != nullptr;
  std::string type = family->second;
  if (type == "llama" && experts) type = "mixtral";
  // DeepSeek-V3's files are deepseek2 with a router bias per expert.
  if (type == "deepseek_v2" && router_bias) type = "deepseek_v3";
  ConfigFromGguf c(header, type, field);

  const int64_t blocks = c.Need(m.block_count, "block_count");
  // block_count counts the multi-token-prediction blocks a file keeps;
  // nextn_predict_layers how many the model has (a file may declare them
  // and hold their tensors elsewhere: step35's --mtp draft files). The
  // trunk is what is left; the MTP layers counted are the blocks present.
  const int mtp = MtpBlocks(header);
  const int64_t declared_mtp = std::max<int64_t>(c.Int("nextn_predict_layers").value_or(0), mtp);
  if (blocks > 0 && declared_mtp >= blocks) {
    c.missing().Add(c.Key("nextn_predict_layers"),
                    absl::StrCat(declared_mtp,
                                 " multi-token-prediction blocks leave none of "
                                 "block_count's ",
                                 blocks, " for the model"));
  }
  const int64_t layers = blocks > declared_mtp ? blocks - declared_mtp : blocks;
  c.Set("num_hidden_layers", layers);
  if (mtp > 0) c.Set("num_nextn_predict_layers", mtp);
  if (mtp > 0 && layers > 0 && AnyTensorOfBlock(header, 0) == nullptr) {
    // convert_hf_to_gguf.py --mtp (conversion/mimo.py, step3.py): the MTP
    // blocks alone, a draft for the file that holds the model.
    c.missing().Add(c.Key("block_count"),
                    absl::StrCat("the file holds only its ", mtp,
                                 " multi-token-prediction blocks, none of the model's ", layers,
                                 " (a draft file): give the model's own GGUF file"));
  }
  c.Set("hidden_size", c.Need(m.embedding_length, "embedding_length"));
  const int64_t heads = c.Need(m.head_count, "attention.head_count");
  c.Set("num_attention_heads", heads);
  c.Set("num_key_value_heads", m.head_count_kv.value_or(heads));
  const std::optional<int64_t> expert_width = c.Int("expert_feed_forward_length");
  c.Set("intermediate_size", experts && !m.feed_forward_length.has_value()
                                 ? c.Need(expert_width, "expert_feed_forward_length")
                                 : c.Need(m.feed_forward_length, "feed_forward_length"));
  if (m.vocab_size.has_value()) {
    c.Set("vocab_size", *m.vocab_size);
  } else {
    c.missing().Add(absl::StrCat(field, "tokenizer.ggml.tokens"), "missing from the metadata");
  }
  c.SetIf("max_position_embeddings", m.context_length);
  c.SetBool("tie_word_embeddings", !HasTensor(header, "output.weight"));

  // Attention widths: one head_dim for keys and values, or MLA's.
  bool latent_cache_per_head = false;
  if (type == "deepseek_v2" || type == "deepseek_v3" || kimi) {
    latent_cache_per_head = !LatentAttention(&c, heads);
  } else if (m.key_length.has_value() && type != "mimo_v2_flash") {  // Mimo2Keys: its own
    const std::optional<int64_t> value = c.Int("attention.value_length");
    if (value.has_value() && *value != *m.key_length) {
      c.missing().Add(c.Key("attention.value_length"),
                      absl::StrCat(*value, " differs from attention.key_length ", *m.key_length,
                                   ": this reader sizes keys and values of one width"));
    }
    c.Set("head_dim", *m.key_length);
  }

  // Mixtures of experts, under each family's config.json names.
  if (experts) {
    for (const char* key :
         {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"})
      c.Set(key, *m.expert_count);
    for (const char* key : {"num_experts_per_tok", "moe_k", "num_experts_per_token"})
      c.Set(key, m.expert_used_count.value_or(0));
    c.SetIf("moe_intermediate_size", expert_width);
    c.SetIf("shared_expert_intermediate_size", c.Int("expert_shared_feed_forward_length"));
    for (const char* key : {"n_shared_experts", "moe_num_shared_experts", "num_shared_experts"})
      c.SetIf(key, c.Int("expert_shared_count"));
    c.SetIf("first_k_dense_replace", c.Int("leading_dense_block_count"));
  }
  if (type == "mixtral" || type == "minimax_m2" || type == "gpt_oss" || type == "phimoe" ||
      type == "granitemoe") {
    // Their config.json's intermediate_size is an expert's.
    if (expert_width.has_value()) c.Set("intermediate_size", *expert_width);
  } else if (type == "llama4_text") {
    // Llama4TextConfig: intermediate_size is an expert's, intermediate_size_mlp
    // the dense layers'.
    if (expert_width.has_value()) c.Set("intermediate_size", *expert_width);
    c.SetIf("intermediate_size_mlp", m.feed_forward_length);
    c.SetIf("interleave_moe_layer_step", c.Int("interleave_moe_layer_step"));
  } else if (type == "ernie4_5_moe") {
    c.SetIf("moe_layer_start_index", c.Int("leading_dense_block_count"));
    c.SetIf("moe_layer_interval", c.Int("interleave_moe_layer_step"));
  }

  if (short_conv) ShortConvLayers(header, &c);
  if (type == "gemma4_text") Gemma4Keys(header, &c);

  // What config.json says and GGUF leaves to the tensors.
  const bool qkv_bias = AnyBlockTensor(header, ".attn_q.bias") != nullptr ||
                        AnyBlockTensor(header, ".attn_qkv.bias") != nullptr;
  const bool output_bias = AnyBlockTensor(header, ".attn_output.bias") != nullptr;
  const bool mlp_bias = AnyBlockTensor(header, ".ffn_up.bias") != nullptr ||
                        AnyBlockTensor(header, ".ffn_down.bias") != nullptr;
  if (type == "starcoder2" || type == "ernie4_5" || type == "ernie4_5_moe") {
    c.SetBool("use_bias", qkv_bias);
  } else if (type == "internlm2") {
    c.SetBool("bias", qkv_bias);
  } else if (type == "stablelm") {
    // StableLM's q/k/v biases (use_qkv_bias); its per-head query and key
    // LayerNorms (qk_layernorm) and the parallel residual (one norm a block:
    // no ffn_norm, llama.cpp's LLM_ARCH_STABLELM).
    c.SetBool("use_qkv_bias", qkv_bias);
    c.SetBool("qk_layernorm", AnyBlockTensor(header, ".attn_q_norm.weight") != nullptr);
    c.SetBool("use_parallel_residual", AnyBlockTensor(header, ".ffn_norm.weight") == nullptr);
  } else if (type == "seed_oss") {
    c.SetBool("attention_bias", qkv_bias);
    c.SetBool("attention_out_bias", output_bias);
    c.SetBool("mlp_bias", mlp_bias);
  } else {
    c.SetBool("attention_bias", qkv_bias);
    c.SetBool("mlp_bias", mlp_bias);
  }
  if (type == "phimoe") c.SetBool("lm_head_bias", HasTensor(header, "output.bias"));
  if (type == "glm4_moe" || type == "cohere" || type == "cohere2") {
    c.SetBool("use_qk_norm", AnyBlockTensor(header, ".attn_q_norm.weight") != nullptr);
  } else if (type == "minimax_m2") {
    // Whole-projection norms ("per_layer") or one head's width.
    const GgufTensorInfo* q_norm = AnyBlockTensor(header, ".attn_q_norm.weight");
    const int64_t head_dim = m.key_length.value_or(0);
    c.Set("qk_norm_type", q_norm != nullptr && head_dim > 0 && !q_norm->dims.empty() &&
                                  static_cast<int64_t>(q_norm->dims[0]) == head_dim
                              ? "per_head"
                              : "per_layer");
    c.SetBool("use_routing_bias", router_bias);
  }

  // Sliding windows.
  c.SetIf("sliding_window", c.Int("attention.sliding_window"));
  SlidingPattern(&c);
  if (type == "mimo_v2_flash") Mimo2Keys(header, &c, layers, blocks, mtp);
  if (type == "step3p5") Step35Keys(header, &c, layers, blocks, mtp);
  const bool delta_net =
      type == "qwen3_next" || type == "qwen3_5_text" || type == "qwen3_5_moe_text";
  if (delta_net) Qwen3NextKeys(&c, layers, blocks, mtp);
  if (mamba2_hybrid) Mamba2HybridKeys(header, &c, type, layers, blocks);
  if (jamba) JambaKeys(header, &c, layers, blocks);
  std::vector<int64_t> deci_widths;
  if (deci) DeciKeys(&c, blocks, m.embedding_length.value_or(0), &deci_widths);
  if (kimi) KimiLinearKeys(&c, layers, blocks, heads);
  // A window without a pattern in the file: the config.json reader applies
  // the family's default period, which is llama.cpp's set_swa_pattern too
  // (gemma2 2, gemma3 6, cohere2 4, gpt-oss 2, olmo2 4, exaone4 4).
  if (absl::Status bad = c.missing().ToStatus(); !bad.ok()) return bad;

  absl::StatusOr<common::v1::Architecture> a = ArchitectureFromHfConfig(c.Json());
  if (!a.ok()) {
    return absl::Status(a.status().code(),
                        absl::StrCat("the ", m.architecture,
                                     " metadata, read as the config.json it was written from: ",
                                     a.status().message()));
  }
  if (mtp > 0 && !a->mtp_own_output_head() &&
      !AnyBlockTensor(header, ".nextn.embed_tokens.weight")) {
    a->set_mtp_shares_embeddings(true);
  }
  // Fused attention: convert_hf_to_gguf.py writes one blk.N.attn_qkv tensor
  // per block where the checkpoint has one projection (Phi-3's qkv_proj),
  // llama.cpp's loaders take attn_qkv where a file has one and attn_q/k/v
  // otherwise (llama-model.cpp: wqkv TENSOR_NOT_REQUIRED, then wq, wk, wv),
  // and the quantizer gives attn_qkv attn_v's type rules
  // (llama-quant.cpp category_is_attn_v): the file's names decide, not the
  // family.
  // (Qwen3-Next's and Qwen3.5's attn_qkv is their Gated DeltaNet's input
  // projection; their attention layers keep attn_q, attn_k and attn_v.)
  const bool fused = AnyBlockTensor(header, ".attn_qkv.weight") != nullptr && !delta_net;
  const bool split = AnyBlockTensor(header, ".attn_q.weight") != nullptr;
  if (fused || split) a->set_fused_qkv(fused);
  if (latent_cache_per_head) a->set_latent_attention_cache_per_head(true);
  if (deci && static_cast<int64_t>(deci_widths.size()) == a->num_layers()) {
    a->clear_layer_intermediate_sizes();
    for (int64_t width : deci_widths) a->add_layer_intermediate_sizes(width);
    a->set_intermediate_size(*std::max_element(deci_widths.begin(), deci_widths.end()));
  }
  // nemotron_h_moe's routers keep e_score_correction_bias as exp_probs_b,
  // which llama.cpp requires; the config.json reader counts no router bias
  // for nemotron_h (the BF16 checkpoint's published total holds none).
  if (type == "nemotron_h" && router_bias) a->set_router_bias(true);
  a->clear_source();  // the answer names the file
  a->set_published_parameter_count(static_cast<int64_t>(header.total_elements));
  return a;
}

}  // namespace modelatlas
