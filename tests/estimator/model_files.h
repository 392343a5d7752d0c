// Model files for the model-source tests, built in memory: a tiny Llama's
// config.json and safetensors checkpoint, a GGUF file with its metadata, and
// a local stand-in of the Hugging Face Hub serving them
// (tests/testing/hub_fixture_server.py). No test reaches the internet.
#pragma once

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "tests/testing/process.h"

namespace modelatlas::estimator::testing {

namespace fs = std::filesystem;

// A tiny Llama: 2 layers, hidden 64, 4 heads (2 KV heads), MLP 128, vocab 256.
inline constexpr char kTinyLlamaConfig[] =
    R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,)"
    R"( "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,)"
    R"( "vocab_size": 256, "max_position_embeddings": 2048, "tie_word_embeddings": false,)"
    R"( "hidden_act": "silu", "rms_norm_eps": 1e-05})";
inline constexpr char kTinyLlamaSha[] = "4444444444444444444444444444444444444444";
inline constexpr char kTinyLlavaSha[] = "7777777777777777777777777777777777777777";
inline constexpr char kRwkvSha[] = "5555555555555555555555555555555555555555";
// org/tiny-llama at tag v2: a later commit (the same files).
inline constexpr char kTinyLlamaV2Sha[] = "6666666666666666666666666666666666666666";

inline void WriteModelFile(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

inline std::string ReadModelFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Tensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  int element_bytes;
};

// The 8-byte length, the JSON header and (when `with_data`) the data.
inline std::string SafetensorsBytes(const std::vector<Tensor>& tensors, bool with_data = true) {
  std::string header = "{\"__metadata__\": {\"format\": \"pt\"}";
  uint64_t offset = 0;
  for (const Tensor& t : tensors) {
    uint64_t bytes = static_cast<uint64_t>(t.element_bytes);
    std::vector<std::string> dims;
    for (int64_t d : t.shape) {
      bytes *= static_cast<uint64_t>(d);
      dims.push_back(absl::StrCat(d));
    }
    absl::StrAppend(&header, ", \"", t.name, "\": {\"dtype\": \"", t.dtype, "\", \"shape\": [",
                    absl::StrJoin(dims, ", "), "], \"data_offsets\": [", offset, ", ",
                    offset + bytes, "]}");
    offset += bytes;
  }
  header += "}";
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out += header;
  if (with_data) out.append(offset, '\x3c');
  return out;
}

// The tiny Llama's tensors in BF16 (norms in F32): 2*64*256 + 2*(64*64*2 +
// 32*64*2 + 128*64*3) embeddings and blocks, 5 norms of 64.
inline std::vector<Tensor> TinyLlamaTensors() {
  std::vector<Tensor> t = {{"model.embed_tokens.weight", "BF16", {256, 64}, 2},
                           {"lm_head.weight", "BF16", {256, 64}, 2},
                           {"model.norm.weight", "F32", {64}, 4}};
  for (int i = 0; i < 2; ++i) {
    const std::string p = absl::StrCat("model.layers.", i, ".");
    t.push_back({p + "self_attn.q_proj.weight", "BF16", {64, 64}, 2});
    t.push_back({p + "self_attn.k_proj.weight", "BF16", {32, 64}, 2});
    t.push_back({p + "self_attn.v_proj.weight", "BF16", {32, 64}, 2});
    t.push_back({p + "self_attn.o_proj.weight", "BF16", {64, 64}, 2});
    t.push_back({p + "mlp.gate_proj.weight", "BF16", {128, 64}, 2});
    t.push_back({p + "mlp.up_proj.weight", "BF16", {128, 64}, 2});
    t.push_back({p + "mlp.down_proj.weight", "BF16", {64, 128}, 2});
    t.push_back({p + "input_layernorm.weight", "F32", {64}, 4});
    t.push_back({p + "post_attention_layernorm.weight", "F32", {64}, 4});
  }
  return t;
}

// A GGUF file (version 3) of a Llama-like model with hidden 256, 2 blocks,
// 4 heads (2 KV), MLP 512, a 300-token vocabulary, general.file_type 15
// (Q4_K_M), and three tensors: token_embd q4_K [256, 300] (300 blocks of
// 144 bytes), output q6_K [256, 300] (300 blocks of 210 bytes), a norm f32
// [256]. `architecture` replaces "llama" when given. Data follows unless
// `header_only`. `extra`: more tensors (name, dims), F32, after those three.
struct GgufExtraTensor {
  std::string name;
  std::vector<uint64_t> dims;
};
inline std::string GgufBytes(const std::string& architecture = "llama", bool header_only = false,
                             const std::vector<GgufExtraTensor>& extra = {}) {
  std::string out = "GGUF";
  auto le = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto str = [&](const std::string& s) {
    le(s.size(), 8);
    out += s;
  };
  auto kv_u32 = [&](const std::string& key, uint32_t v) {
    str(key);
    le(4, 4);
    le(v, 4);
  };
  le(3, 4);                 // version
  le(3 + extra.size(), 8);  // tensors
  le(11, 8);                // key/values
  str("general.architecture");
  le(8, 4);
  str(architecture);
  str("general.name");
  le(8, 4);
  str("Tiny GGUF");
  kv_u32("general.file_type", 15);
  kv_u32(architecture + ".block_count", 2);
  kv_u32(architecture + ".embedding_length", 256);
  kv_u32(architecture + ".feed_forward_length", 512);
  kv_u32(architecture + ".attention.head_count", 4);
  kv_u32(architecture + ".attention.head_count_kv", 2);
  kv_u32(architecture + ".context_length", 2048);
  str("general.alignment");
  le(4, 4);
  le(32, 4);
  str("tokenizer.ggml.tokens");
  le(9, 4);
  le(8, 4);
  le(300, 8);
  for (int i = 0; i < 300; ++i) str(absl::StrCat("t", i));
  uint64_t offset = 0;
  auto tensor = [&](const std::string& name, std::vector<uint64_t> dims, uint32_t type,
                    uint64_t bytes) {
    str(name);
    le(dims.size(), 4);
    for (uint64_t d : dims) le(d, 8);
    le(type, 4);
    le(offset, 8);
    offset += (bytes + 31) / 32 * 32;
  };
  tensor("token_embd.weight", {256, 300}, 12, 300 * 144);
  tensor("output.weight", {256, 300}, 14, 300 * 210);
  tensor("output_norm.weight", {256}, 0, 1024);
  for (const GgufExtraTensor& t : extra) {
    uint64_t elements = 1;
    for (uint64_t d : t.dims) elements *= d;
    tensor(t.name, t.dims, 0, 4 * elements);
  }
  out.resize((out.size() + 31) / 32 * 32, '\0');
  if (!header_only) out.append(offset, '\x5a');
  return out;
}
// A GGUF header (version 3) written key by key and tensor by tensor, as
// llama.cpp's convert_hf_to_gguf.py writes a model's: for the readers'
// family tests. Tensors are F32 unless a ggml type is given; the data
// section is not written (the header only, as the CLI sends it).
class GgufHeaderWriter {
 public:
  GgufHeaderWriter& Str(const std::string& key, const std::string& value) {
    Key(key, 8);
    Text(&kv_, value);
    return *this;
  }
  GgufHeaderWriter& U32(const std::string& key, uint32_t value) {
    Key(key, 4);
    Le(&kv_, value, 4);
    return *this;
  }
  GgufHeaderWriter& F32(const std::string& key, float value) {
    Key(key, 6);
    uint32_t bits = 0;
    static_assert(sizeof(bits) == sizeof(value));
    std::memcpy(&bits, &value, sizeof(bits));
    Le(&kv_, bits, 4);
    return *this;
  }
  GgufHeaderWriter& Bool(const std::string& key, bool value) {
    Key(key, 7);
    kv_.push_back(value ? 1 : 0);
    return *this;
  }
  // An array of int32 (convert_hf_to_gguf.py writes per-layer lists so).
  GgufHeaderWriter& I32Array(const std::string& key, const std::vector<int32_t>& values) {
    Key(key, 9);
    Le(&kv_, 5, 4);
    Le(&kv_, values.size(), 8);
    for (int32_t v : values) Le(&kv_, static_cast<uint32_t>(v), 4);
    return *this;
  }
  // An array of bools (add_sliding_window_pattern's per-layer flags).
  GgufHeaderWriter& BoolArray(const std::string& key, const std::vector<bool>& values) {
    Key(key, 9);
    Le(&kv_, 7, 4);
    Le(&kv_, values.size(), 8);
    for (bool v : values) kv_.push_back(v ? 1 : 0);
    return *this;
  }
  // tokenizer.ggml.tokens with `n` placeholder tokens.
  GgufHeaderWriter& Tokens(int n) {
    Key("tokenizer.ggml.tokens", 9);
    Le(&kv_, 8, 4);
    Le(&kv_, static_cast<uint64_t>(n), 8);
    for (int i = 0; i < n; ++i) Text(&kv_, absl::StrCat("t", i));
    return *this;
  }
  // `dims` row first (ne[0]), as in the file.
  GgufHeaderWriter& Tensor(const std::string& name, const std::vector<uint64_t>& dims,
                           uint32_t ggml_type = 0, uint32_t bytes_per_element = 4) {
    Text(&tensors_, name);
    Le(&tensors_, dims.size(), 4);
    uint64_t elements = 1;
    for (uint64_t d : dims) {
      Le(&tensors_, d, 8);
      elements *= d;
    }
    Le(&tensors_, ggml_type, 4);
    Le(&tensors_, offset_, 8);
    offset_ += (elements * bytes_per_element + 31) / 32 * 32;
    elements_ += elements;
    ++tensor_count_;
    return *this;
  }
  uint64_t elements() const { return elements_; }
  std::string Header() const {
    std::string out = "GGUF";
    Le(&out, 3, 4);
    Le(&out, tensor_count_, 8);
    Le(&out, kv_count_, 8);
    out += kv_;
    out += tensors_;
    out.resize((out.size() + 31) / 32 * 32, '\0');
    return out;
  }

 private:
  static void Le(std::string* out, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  static void Text(std::string* out, const std::string& s) {
    Le(out, s.size(), 8);
    *out += s;
  }
  void Key(const std::string& key, uint32_t type) {
    Text(&kv_, key);
    Le(&kv_, type, 4);
    ++kv_count_;
  }
  std::string kv_, tensors_;
  uint64_t kv_count_ = 0, tensor_count_ = 0, offset_ = 0, elements_ = 0;
};

inline constexpr uint64_t kGgufTensorBytes = 300 * 144 + 300 * 210 + 1024;
inline constexpr uint64_t kGgufTensorElements = 2 * 256 * 300 + 256;

// A tiny LLaVA: the tiny Llama's tensors under language_model., a
// one-block CLIP tower and the projector, in BF16.
inline std::vector<Tensor> TinyLlavaTensors() {
  std::vector<Tensor> t;
  for (Tensor tensor : TinyLlamaTensors()) {
    tensor.name = "language_model." + tensor.name;
    t.push_back(tensor);
  }
  t.push_back(
      {"vision_tower.vision_model.embeddings.patch_embedding.weight", "BF16", {32, 3, 14, 14}, 2});
  t.push_back({"vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight", "BF16", {64, 32}, 2});
  t.push_back({"multi_modal_projector.linear_1.weight", "BF16", {64, 32}, 2});
  t.push_back({"multi_modal_projector.linear_1.bias", "BF16", {64}, 2});
  return t;
}

inline constexpr char kTinyLlavaConfig[] = R"({"model_type": "llava",
  "text_config": {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
    "vocab_size": 256, "max_position_embeddings": 2048, "tie_word_embeddings": false},
  "vision_config": {"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 64,
    "num_hidden_layers": 1, "image_size": 28, "patch_size": 14}})";

// A llama.cpp mmproj file's header (general.architecture "clip"), version
// 3, for the tiny GGUF above (projection_dim 256 = its embedding_length,
// unless told otherwise): a vision tower of two f16 tensors (a 14x14x3
// patch embedding into 64 and one 64x64 projection) and an mlp projector
// (mm.0 f16 64x256 and its f32 bias).
inline std::string MmprojBytes(uint32_t projection_dim = 256,
                               const std::string& architecture = "clip") {
  std::string out = "GGUF";
  auto le = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto str = [&](const std::string& s) {
    le(s.size(), 8);
    out += s;
  };
  auto kv_u32 = [&](const std::string& key, uint32_t v) {
    str(key);
    le(4, 4);
    le(v, 4);
  };
  le(3, 4);  // version
  le(4, 8);  // tensors
  le(7, 8);  // key/values
  str("general.architecture");
  le(8, 4);
  str(architecture);
  str("clip.projector_type");
  le(8, 4);
  str("mlp");
  kv_u32("clip.vision.embedding_length", 64);
  kv_u32("clip.vision.block_count", 1);
  kv_u32("clip.vision.feed_forward_length", 128);
  kv_u32("clip.vision.projection_dim", projection_dim);
  kv_u32("clip.vision.image_size", 224);
  uint64_t offset = 0;
  auto tensor = [&](const std::string& name, std::vector<uint64_t> dims, uint32_t type,
                    uint64_t bytes) {
    str(name);
    le(dims.size(), 4);
    for (uint64_t d : dims) le(d, 8);
    le(type, 4);
    le(offset, 8);
    offset += (bytes + 31) / 32 * 32;
  };
  tensor("v.patch_embd.weight", {14, 14, 3, 64}, 1, 14 * 14 * 3 * 64 * 2);
  tensor("v.blk.0.attn_q.weight", {64, 64}, 1, 64 * 64 * 2);
  tensor("mm.0.weight", {64, 256}, 1, 64 * 256 * 2);
  tensor("mm.0.bias", {256}, 0, 256 * 4);
  out.resize((out.size() + 31) / 32 * 32, '\0');
  return out;
}
inline constexpr uint64_t kMmprojVisionBytes = 14 * 14 * 3 * 64 * 2 + 64 * 64 * 2;
inline constexpr uint64_t kMmprojVisionElements = 14 * 14 * 3 * 64 + 64 * 64;
inline constexpr uint64_t kMmprojProjectorBytes = 64 * 256 * 2 + 256 * 4;
inline constexpr uint64_t kMmprojProjectorElements = 64 * 256 + 256;

// A JSON string literal.
inline std::string Quote(absl::string_view s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
}

// The Hub stand-in: org/tiny-llama (config.json + model.safetensors, commit
// kTinyLlamaSha), org/rwkv (an unsupported family), org/gated (401 without
// a token), org/missing (404). Started once per test suite.
class HubFixture {
 public:
  explicit HubFixture(const fs::path& dir) : dir_(dir) {
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    fs::remove_all(dir_);
    const fs::path root = dir_ / "root";
    fs::create_directories(root);
    WriteTree(root);
    const std::string port_file = (dir_ / "port").string();
    server_ = std::make_unique<modelatlas::testing::ChildProcess>(
        std::vector<std::string>{"/usr/bin/python3", MODELATLAS_HUB_FIXTURE_SERVER, root.string(),
                                 port_file, (dir_ / "requests.log").string()},
        (dir_ / "server.log").string());
    for (int i = 0; i < 200 && port_ == 0; ++i) {
      for (absl::string_view line : absl::StrSplit(ReadModelFile(port_file), '\n')) {
        if (absl::ConsumePrefix(&line, "port=")) port_ = std::atoi(std::string(line).c_str());
      }
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~HubFixture() {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  int port() const { return port_; }
  std::string endpoint() const { return absl::StrCat("http://127.0.0.1:", port_); }
  // Requests the stand-in answered (JSON lines).
  std::string log() const { return ReadModelFile(dir_ / "requests.log"); }

 private:
  static std::string ApiInfo(const std::string& id, const std::string& sha,
                             const std::vector<std::string>& files) {
    std::vector<std::string> siblings;
    for (const std::string& f : files)
      siblings.push_back(absl::StrCat("{\"rfilename\": ", Quote(f), "}"));
    return absl::StrCat("{\"id\": ", Quote(id), ", \"sha\": ", Quote(sha), ", \"siblings\": [",
                        absl::StrJoin(siblings, ", "), "]}");
  }

  static void WriteTree(const fs::path& root) {
    const fs::path api = root / "api/models";
    const std::vector<std::string> files = {"config.json", "model.safetensors"};
    for (const std::string& rev : {std::string("main"), std::string(kTinyLlamaSha)}) {
      WriteModelFile(api / "org/tiny-llama/revision" / rev,
                     ApiInfo("org/tiny-llama", kTinyLlamaSha, files));
      WriteModelFile(api / "org/rwkv/revision" / rev,
                     ApiInfo("org/rwkv", kRwkvSha, {"config.json"}));
    }
    WriteModelFile(root / "files/org/tiny-llama" / kTinyLlamaSha / "config.json", kTinyLlamaConfig);
    WriteModelFile(root / "files/org/tiny-llama" / kTinyLlamaSha / "model.safetensors",
                   SafetensorsBytes(TinyLlamaTensors()));
    for (const std::string& rev : {std::string("v2"), std::string(kTinyLlamaV2Sha)}) {
      WriteModelFile(api / "org/tiny-llama/revision" / rev,
                     ApiInfo("org/tiny-llama", kTinyLlamaV2Sha, files));
    }
    WriteModelFile(root / "files/org/tiny-llama" / kTinyLlamaV2Sha / "config.json",
                   kTinyLlamaConfig);
    WriteModelFile(root / "files/org/tiny-llama" / kTinyLlamaV2Sha / "model.safetensors",
                   SafetensorsBytes(TinyLlamaTensors()));
    for (const std::string& rev : {std::string("main"), std::string(kTinyLlavaSha)}) {
      WriteModelFile(api / "org/tiny-llava/revision" / rev,
                     ApiInfo("org/tiny-llava", kTinyLlavaSha, files));
    }
    WriteModelFile(root / "files/org/tiny-llava" / kTinyLlavaSha / "config.json", kTinyLlavaConfig);
    WriteModelFile(root / "files/org/tiny-llava" / kTinyLlavaSha / "model.safetensors",
                   SafetensorsBytes(TinyLlavaTensors()));
    WriteModelFile(root / "files/org/rwkv" / kRwkvSha / "config.json",
                   R"({"model_type": "rwkv", "hidden_size": 64})");
    std::vector<std::string> rules;
    auto rule = [&](const std::string& match, const std::string& rest) {
      rules.push_back(absl::StrCat("{\"match\": ", Quote(match), ", ", rest, "}"));
    };
    rule("/(?:api/models/)?org/gated(?:/.*)?",
         R"j("require_no_auth": true, "status": 401, "headers": {"X-Error-Code": "GatedRepo",)j"
         R"j( "X-Error-Message": "Access to model org/gated is restricted."})j");
    rule("/(?:api/models/)?org/missing(?:/.*)?",
         R"j("status": 404, "headers": {"X-Error-Code": "RepoNotFound",)j"
         R"j( "X-Error-Message": "Repository not found"})j");
    // A Hub that answers after 5 s: a fetch under way, for cancellation.
    rule("/(?:api/models/)?org/slow(?:/.*)?", R"j("delay_ms": 5000)j");
    rule(absl::StrCat("/org/tiny-llama/resolve/(?:v2|", kTinyLlamaV2Sha, ")/(.*)"),
         absl::StrCat(R"j("headers": {"X-Repo-Commit": ")j", kTinyLlamaV2Sha, "\"}, \"rewrite\": ",
                      Quote(absl::StrCat("/files/org/tiny-llama/", kTinyLlamaV2Sha, "/\\1"))));
    for (const auto& [repo, sha] : std::vector<std::pair<std::string, std::string>>{
             {"tiny-llama", kTinyLlamaSha}, {"rwkv", kRwkvSha}, {"tiny-llava", kTinyLlavaSha}}) {
      rule(absl::StrCat("/org/", repo, "/resolve/(?:main|", sha, ")/(.*)"),
           absl::StrCat(R"j("headers": {"X-Repo-Commit": ")j", sha, "\"}, \"rewrite\": ",
                        Quote(absl::StrCat("/files/org/", repo, "/", sha, "/\\1"))));
    }
    WriteModelFile(root / "_rules.json", absl::StrCat("[\n", absl::StrJoin(rules, ",\n"), "\n]\n"));
  }

  fs::path dir_;
  std::unique_ptr<modelatlas::testing::ChildProcess> server_;
  int port_ = 0;
};

}  // namespace modelatlas::estimator::testing
