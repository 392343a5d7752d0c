// The Hub client against a local stand-in of the Hub
// (tests/testing/hub_fixture_server.py): no test reaches the internet.
#include "common/fetch/hf_hub.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/fetch/http.h"
#include "common/status/errors.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/testing/process.h"

namespace modelatlas {
namespace {

namespace fs = std::filesystem;

constexpr char kMain[] = "0123456789abcdef0123456789abcdef01234567";
constexpr char kV1[] = "89abcdef0123456789abcdef0123456789abcdef";
constexpr char kGatedSha[] = "fedcba9876543210fedcba9876543210fedcba98";
constexpr char kSingleSha[] = "1111111111111111111111111111111111111111";
constexpr char kApiSha[] = "2222222222222222222222222222222222222222";
constexpr char kGgufSha[] = "3333333333333333333333333333333333333333";
constexpr char kConfig[] = R"({"model_type": "llama", "hidden_size": 8})";
constexpr char kOldConfig[] = R"({"model_type": "llama", "hidden_size": 4})";

void WriteFile(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<int> shape;
  int element_bytes;
};

// A safetensors file: the 8-byte length, the header, then the data.
std::string SafetensorsFile(const std::vector<TensorSpec>& tensors) {
  std::string header = "{\"__metadata__\": {\"format\": \"pt\"}";
  uint64_t offset = 0;
  for (const TensorSpec& t : tensors) {
    uint64_t bytes = t.element_bytes;
    std::string shape;
    for (int d : t.shape) {
      bytes *= d;
      absl::StrAppend(&shape, shape.empty() ? "" : ", ", d);
    }
    absl::StrAppend(&header, ", \"", t.name, "\": {\"dtype\": \"", t.dtype, "\", \"shape\": [",
                    shape, "], \"data_offsets\": [", offset, ", ", offset + bytes, "]}");
    offset += bytes;
  }
  header += "}";
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out += header;
  out.append(offset, '\x3c');  // the "weights"
  return out;
}

// A GGUF file whose header (a 25,000-token vocabulary, ~440 KB) is longer
// than the first range the client asks for, then 1 MiB of "weights".
std::string GgufFile() {
  std::string out = "GGUF";
  auto le = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto str = [&](const std::string& s) {
    le(s.size(), 8);
    out += s;
  };
  le(3, 4);  // version
  le(1, 8);  // tensors
  le(2, 8);  // key/values
  str("general.architecture");
  le(8, 4);
  str("llama");
  str("tokenizer.ggml.tokens");
  le(9, 4);
  le(8, 4);
  le(25000, 8);
  for (int i = 0; i < 25000; ++i) str(absl::StrCat("token", i));
  str("token_embd.weight");
  le(2, 4);
  le(256, 8);
  le(4096, 8);
  le(12, 4);  // q4_K: 4096 blocks of 144 bytes
  le(0, 8);
  out.resize((out.size() + 31) / 32 * 32, '\0');
  out.append(4096 * 144, '\x5a');
  return out;
}

std::string ApiInfo(const std::string& id, const std::string& sha,
                    const std::vector<std::string>& files, const std::string& extra = "") {
  std::string siblings;
  for (const std::string& f : files) {
    absl::StrAppend(&siblings, siblings.empty() ? "" : ", ", "{\"rfilename\": \"", f, "\"}");
  }
  return absl::StrCat("{\"id\": \"", id, "\", \"sha\": \"", sha, "\", \"siblings\": [", siblings,
                      "]", extra, "}");
}

// A JSON string literal (backslashes and quotes escaped).
std::string JsonQuote(absl::string_view s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
}

// Restores an environment variable at scope exit.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

struct LoggedRequest {
  std::string method, path, range, authorization;
  int status = 0;
  int64_t bytes = 0;
  int64_t size = -1;
};

class HfHubTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    dir_ = new fs::path(fs::path(::testing::TempDir()) / absl::StrCat("hub_fixture_", getpid()));
    fs::remove_all(*dir_);
    const fs::path root = *dir_ / "root";
    fs::create_directories(root);
    const std::string port_file = (*dir_ / "port").string();
    server_ =
        new testing::ChildProcess({"/usr/bin/python3", MODELATLAS_HUB_FIXTURE_SERVER, root.string(),
                                   port_file, (*dir_ / "requests.log").string()},
                                  (*dir_ / "server.log").string());
    int port = 0;
    for (int i = 0; i < 200 && port == 0; ++i) {
      for (absl::string_view line : absl::StrSplit(ReadFile(port_file), '\n')) {
        if (absl::ConsumePrefix(&line, "port=")) port = std::atoi(std::string(line).c_str());
      }
      if (port == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_NE(port, 0) << ReadFile(*dir_ / "server.log");
    WriteHubTree(root, port);  // read by the server per request
    endpoint_ = new std::string(absl::StrCat("http://127.0.0.1:", port));
  }
  static void TearDownTestSuite() {
    delete server_;  // SIGKILL and reap
    server_ = nullptr;
    std::error_code ec;
    fs::remove_all(*dir_, ec);
  }

  // The Hub as the fixture serves it: an API answer per revision, files under
  // files/{repo}/{sha}/, reached through rules that mimic the Hub's answers.
  static void WriteHubTree(const fs::path& root, int port) {
    const std::vector<std::string> sharded_files = {"config.json", "model.safetensors.index.json",
                                                    "model-00001-of-00002.safetensors",
                                                    "model-00002-of-00002.safetensors"};
    const std::string api_block = R"(, "safetensors": {"parameters": {"BF16": 320, "F32": 8},)"
                                  R"( "total": 328})";
    const fs::path api = root / "api/models";
    WriteFile(api / "org/sharded/revision/main",
              ApiInfo("org/sharded", kMain, sharded_files, api_block));
    WriteFile(api / "org/sharded/revision" / kMain,
              ApiInfo("org/sharded", kMain, sharded_files, api_block));
    WriteFile(api / "org/sharded/revision/v1.0", ApiInfo("org/sharded", kV1, {"config.json"}));
    WriteFile(api / "org/gated/revision/main", ApiInfo("org/gated", kGatedSha, {"config.json"}));
    WriteFile(api / "org/gguf/revision/main",
              ApiInfo("org/gguf", kGgufSha, {"README.md", "tiny.Q4_K_M.gguf"}));
    WriteFile(api / "org/single/revision/main",
              ApiInfo("org/single", kSingleSha, {"config.json", "model.safetensors"}));
    WriteFile(api / "org/apionly/revision/main",
              ApiInfo("org/apionly", kApiSha, {"config.json", "pytorch_model.bin"},
                      R"(, "safetensors": {"parameters": {"F16": 1234, "BOOL": 16},)"
                      R"( "total": 1250})"));

    const fs::path files = root / "files";
    WriteFile(files / "org/sharded" / kMain / "config.json", kConfig);
    WriteFile(files / "org/sharded" / kMain / "model.safetensors.index.json",
              R"({"metadata": {"total_size": 672}, "weight_map": {)"
              R"("model.embed_tokens.weight": "model-00001-of-00002.safetensors",)"
              R"("model.layers.0.mlp.weight": "model-00001-of-00002.safetensors",)"
              R"("model.norm.weight": "model-00002-of-00002.safetensors",)"
              R"("lm_head.weight": "model-00002-of-00002.safetensors"}})");
    // BF16 [16, 8] + BF16 [8, 8] = 192 parameters, 384 bytes.
    WriteFile(files / "org/sharded" / kMain / "model-00001-of-00002.safetensors",
              SafetensorsFile({{"model.embed_tokens.weight", "BF16", {16, 8}, 2},
                               {"model.layers.0.mlp.weight", "BF16", {8, 8}, 2}}));
    // F32 [8] + BF16 [16, 8] = 136 parameters, 288 bytes.
    WriteFile(files / "org/sharded" / kMain / "model-00002-of-00002.safetensors",
              SafetensorsFile(
                  {{"model.norm.weight", "F32", {8}, 4}, {"lm_head.weight", "BF16", {16, 8}, 2}}));
    WriteFile(files / "org/sharded" / kV1 / "config.json", kOldConfig);
    WriteFile(files / "org/gated" / kGatedSha / "config.json", kConfig);
    WriteFile(files / "org/single" / kSingleSha / "config.json", kConfig);
    WriteFile(files / "org/single" / kSingleSha / "model.safetensors",
              SafetensorsFile({{"w", "F16", {4, 4}, 2},
                               {"b", "F32", {4}, 4},
                               {"h.0.attn.attention.bias", "BOOL", {4, 4}, 1}}));
    WriteFile(files / "org/apionly" / kApiSha / "config.json", kConfig);
    WriteFile(files / "org/gguf" / kGgufSha / "tiny.Q4_K_M.gguf", GgufFile());

    // Rules (see hub_fixture_server.py): `match` is a Python regex, written
    // here unescaped; JsonQuote escapes it for the JSON file.
    std::vector<std::string> rules;
    auto rule = [&](const std::string& match, const std::string& rest) {
      rules.push_back(absl::StrCat("{\"match\": ", JsonQuote(match), ", ", rest, "}"));
    };
    const std::string main_or_sha = absl::StrCat("(?:main|", kMain, ")");
    const std::string v1_or_sha = absl::StrCat("(?:v1\\.0|", kV1, ")");
    // Gated: 401 without a token, 403 with one that has no access.
    rule("/(?:api/models/)?org/gated(?:/.*)?",
         R"j("require_no_auth": true, "status": 401, "headers": {"X-Error-Code": "GatedRepo",)j"
         R"j( "X-Error-Message": "Access to model org/gated is restricted."})j");
    rule(
        "/(?:api/models/)?org/gated(?:/.*)?",
        R"j("unless_token": "hf_granted", "status": 403, "headers": {"X-Error-Code": "GatedRepo"})j");
    rule("/api/models/org/missing(?:/.*)?",
         R"j("status": 404, "headers": {"X-Error-Code": "RepoNotFound",)j"
         R"j( "X-Error-Message": "Repository not found"})j");
    rule("/api/models/org/sharded/revision/nope",
         R"j("status": 404, "headers": {"X-Error-Code": "RevisionNotFound"})j");
    rule("/api/models/org/slow(?:/.*)?", R"j("delay_ms": 3000)j");
    // A redirect to another host name (localhost, not 127.0.0.1): the token
    // must not follow it.
    rule(absl::StrCat("/org/gated/resolve/(?:main|", kGatedSha, ")/weights.bin"),
         absl::StrCat(R"j("headers": {"X-Repo-Commit": ")j", kGatedSha, "\"}, ", "\"redirect\": ",
                      JsonQuote(absl::StrCat("http://localhost:", port, "/files/org/gated/",
                                             kGatedSha, "/config.json"))));
    // resolve: the commit in X-Repo-Commit; weights redirect to the "CDN".
    rule("/org/sharded/resolve/" + main_or_sha + "/.*",
         absl::StrCat(R"j("headers": {"X-Repo-Commit": ")j", kMain, "\"}"));
    rule("/org/sharded/resolve/" + v1_or_sha + "/.*",
         absl::StrCat(R"j("headers": {"X-Repo-Commit": ")j", kV1, "\"}"));
    rule("/org/sharded/resolve/" + main_or_sha + "/(model-.*\\.safetensors)",
         absl::StrCat("\"redirect\": ", JsonQuote(absl::StrCat("/cdn/", kMain, "/\\1"))));
    rule("/cdn/([0-9a-f]{40})/(.*)",
         absl::StrCat("\"rewrite\": ", JsonQuote("/files/org/sharded/\\1/\\2")));
    rule("/org/sharded/resolve/" + main_or_sha + "/(.*)",
         absl::StrCat("\"rewrite\": ",
                      JsonQuote(absl::StrCat("/files/org/sharded/", kMain, "/\\1"))));
    rule(
        "/org/sharded/resolve/" + v1_or_sha + "/(.*)",
        absl::StrCat("\"rewrite\": ", JsonQuote(absl::StrCat("/files/org/sharded/", kV1, "/\\1"))));
    const std::vector<std::pair<std::string, std::string>> plain = {
        {"gated", kGatedSha}, {"single", kSingleSha}, {"apionly", kApiSha}, {"gguf", kGgufSha}};
    for (const auto& [repo, sha] : plain) {
      rule(absl::StrCat("/org/", repo, "/resolve/(?:main|", sha, ")/(.*)"),
           absl::StrCat(R"j("headers": {"X-Repo-Commit": ")j", sha, "\"}, \"rewrite\": ",
                        JsonQuote(absl::StrCat("/files/org/", repo, "/", sha, "/\\1"))));
    }
    WriteFile(root / "_rules.json", absl::StrCat("[\n", absl::StrJoin(rules, ",\n"), "\n]\n"));
  }

  void SetUp() override {
    cache_ = (*dir_ / absl::StrCat("cache_",
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                 .string();
    fs::remove_all(cache_);
    std::ofstream(*dir_ / "requests.log", std::ios::trunc);
    env_.push_back(std::make_unique<ScopedEnv>("HF_ENDPOINT", endpoint_->c_str()));
    env_.push_back(std::make_unique<ScopedEnv>("HF_HUB_CACHE", cache_.c_str()));
    env_.push_back(std::make_unique<ScopedEnv>("HF_HOME", (*dir_ / "hf_home").c_str()));
    env_.push_back(std::make_unique<ScopedEnv>("HF_TOKEN", nullptr));
    env_.push_back(std::make_unique<ScopedEnv>("HUGGING_FACE_HUB_TOKEN", nullptr));
    env_.push_back(std::make_unique<ScopedEnv>("HF_TOKEN_PATH", nullptr));
    env_.push_back(std::make_unique<ScopedEnv>("HF_HUB_OFFLINE", nullptr));
  }
  void TearDown() override {
    while (!env_.empty()) env_.pop_back();  // restore in reverse
  }

  static std::vector<LoggedRequest> Requests() {
    std::vector<LoggedRequest> out;
    for (absl::string_view line : absl::StrSplit(ReadFile(*dir_ / "requests.log"), '\n')) {
      if (line.empty()) continue;
      google::protobuf::Struct s;
      EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(std::string(line), &s).ok());
      const auto& f = s.fields();
      LoggedRequest r;
      r.method = f.at("method").string_value();
      r.path = f.at("path").string_value();
      r.range = f.at("range").string_value();
      r.authorization = f.at("authorization").string_value();
      r.status = static_cast<int>(f.at("status").number_value());
      r.bytes = static_cast<int64_t>(f.at("bytes").number_value());
      if (f.at("size").has_number_value())
        r.size = static_cast<int64_t>(f.at("size").number_value());
      out.push_back(r);
    }
    return out;
  }

  static fs::path* dir_;
  static testing::ChildProcess* server_;
  static std::string* endpoint_;
  std::string cache_;
  std::vector<std::unique_ptr<ScopedEnv>> env_;
};

fs::path* HfHubTest::dir_ = nullptr;
testing::ChildProcess* HfHubTest::server_ = nullptr;
std::string* HfHubTest::endpoint_ = nullptr;

TEST_F(HfHubTest, OptionsFromTheEnvironment) {
  HfHubOptions o = HfHubOptions::FromEnvironment();
  EXPECT_EQ(o.endpoint, *endpoint_);
  EXPECT_EQ(o.cache_dir, cache_);
  EXPECT_TRUE(o.token.empty());
  EXPECT_FALSE(o.offline);
  {
    ScopedEnv endpoint("HF_ENDPOINT", nullptr);
    ScopedEnv cache("HF_HUB_CACHE", nullptr);
    ScopedEnv offline("HF_HUB_OFFLINE", "true");
    WriteFile(*dir_ / "hf_home/token", "hf_from_home\n");
    o = HfHubOptions::FromEnvironment();
    EXPECT_EQ(o.endpoint, "https://huggingface.co");
    EXPECT_EQ(o.cache_dir, (*dir_ / "hf_home/hub").string());
    EXPECT_EQ(o.token, "hf_from_home");
    EXPECT_TRUE(o.offline);
    fs::remove(*dir_ / "hf_home/token");
  }
  WriteFile(*dir_ / "token_file", " hf_from_path \n");
  {
    ScopedEnv path("HF_TOKEN_PATH", (*dir_ / "token_file").c_str());
    EXPECT_EQ(HfHubOptions::FromEnvironment().token, "hf_from_path");
    ScopedEnv token("HF_TOKEN", "hf_from_env");
    EXPECT_EQ(HfHubOptions::FromEnvironment().token, "hf_from_env");
  }
}

TEST_F(HfHubTest, FetchesADescriptionByRepoIdFromShardHeaders) {
  HfHubClient hub;
  absl::StatusOr<HfModelDescription> d = hub.FetchModelDescription("org/sharded", "main");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->commit_sha, kMain);
  EXPECT_EQ(d->revision, "main");
  EXPECT_EQ(d->config_json, kConfig);
  EXPECT_EQ(d->tensor_source, "safetensors");
  EXPECT_EQ(d->parameters_by_dtype, (std::map<std::string, int64_t>{{"BF16", 320}, {"F32", 8}}));
  EXPECT_EQ(d->bytes_by_dtype, (std::map<std::string, uint64_t>{{"BF16", 640}, {"F32", 32}}));
  EXPECT_EQ(d->total_parameters, 328);
  EXPECT_EQ(d->total_bytes, 672u);
  EXPECT_EQ(d->index_total_size, 672u);
  EXPECT_EQ(d->safetensors_files.size(), 2u);
  EXPECT_EQ(d->files.size(), 4u);

  // Range requests only: no weight shard was ever served whole; the shards
  // came through the CDN redirect; nothing carried a token.
  int shard_requests = 0;
  for (const LoggedRequest& r : Requests()) {
    EXPECT_TRUE(r.authorization.empty()) << r.path;
    if (!absl::EndsWith(r.path, "0002.safetensors")) continue;
    ++shard_requests;
    if (absl::StartsWith(r.path, "/cdn/")) {
      EXPECT_EQ(r.status, 206) << r.path;
      EXPECT_FALSE(r.range.empty()) << r.path;
      EXPECT_LT(r.bytes, r.size) << r.path << " served whole";
    } else {
      EXPECT_EQ(r.status, 302) << r.path;
    }
  }
  EXPECT_EQ(shard_requests, 8);  // 2 shards x 2 ranges x (redirect + CDN)

  // The cache as huggingface_hub lays it out.
  const fs::path repo = HfRepoCacheDir(cache_, "org/sharded");
  EXPECT_EQ(repo.filename(), "models--org--sharded");
  EXPECT_EQ(ReadFile(repo / "refs/main"), kMain);
  EXPECT_EQ(ReadFile(repo / "snapshots" / kMain / "config.json"), kConfig);
  EXPECT_TRUE(fs::is_symlink(repo / "snapshots" / kMain / "config.json"));
  EXPECT_FALSE(fs::exists(repo / "snapshots" / kMain / "model-00001-of-00002.safetensors"));
}

TEST_F(HfHubTest, RevisionsAndPinnedShas) {
  HfHubClient hub;
  absl::StatusOr<HfModelDescription> old = hub.FetchModelDescription("org/sharded", "v1.0");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->commit_sha, kV1);
  EXPECT_EQ(old->config_json, kOldConfig);
  EXPECT_EQ(old->tensor_source, "");
  EXPECT_EQ(ReadFile(fs::path(HfRepoCacheDir(cache_, "org/sharded")) / "refs/v1.0"), kV1);

  absl::StatusOr<std::string> sha = hub.ResolveRevision("org/sharded", "main");
  ASSERT_TRUE(sha.ok()) << sha.status();
  EXPECT_EQ(*sha, kMain);
  sha = hub.ResolveRevision("org/sharded", "");  // empty means main
  ASSERT_TRUE(sha.ok()) << sha.status();
  EXPECT_EQ(*sha, kMain);

  absl::StatusOr<HfFile> file = hub.FetchFile("org/sharded", "main", "config.json");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->commit_sha, kMain);
  EXPECT_FALSE(file->from_cache);

  // A pinned sha answers from the cache, with no request at all.
  const size_t before = Requests().size();
  EXPECT_EQ(*hub.ResolveRevision("org/sharded", kMain), kMain);
  file = hub.FetchFile("org/sharded", kMain, "config.json");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(file->from_cache);
  EXPECT_EQ(file->content, kConfig);
  EXPECT_EQ(Requests().size(), before);

  absl::Status missing = hub.ModelInfo("org/sharded", "nope").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound) << missing;
  EXPECT_TRUE(absl::StrContains(missing.message(), "revision \"nope\"")) << missing;
  absl::Status no_file = hub.FetchFile("org/sharded", "main", "tokenizer.json").status();
  EXPECT_EQ(no_file.code(), absl::StatusCode::kNotFound) << no_file;
  EXPECT_TRUE(absl::StrContains(no_file.message(), "tokenizer.json")) << no_file;
}

TEST_F(HfHubTest, SingleFileAndApiOnlyRepositories) {
  HfHubClient hub;
  absl::StatusOr<HfModelDescription> single = hub.FetchModelDescription("org/single", "main");
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_EQ(single->tensor_source, "safetensors");
  // A BOOL tensor (GPT-Neo's stored causal mask) is no parameter; its bytes
  // are the file's.
  EXPECT_EQ(single->total_parameters, 20);
  EXPECT_EQ(single->mask_elements, 16);
  EXPECT_EQ(single->total_bytes, 64u);
  absl::StatusOr<HfModelDescription> api = hub.FetchModelDescription("org/apionly", "main");
  ASSERT_TRUE(api.ok()) << api.status();
  EXPECT_EQ(api->tensor_source, "api");
  EXPECT_EQ(api->total_parameters, 1234);  // the Hub's 1,250 less its BOOL 16
  EXPECT_EQ(api->mask_elements, 16);
  EXPECT_EQ(api->parameters_by_dtype.at("F16"), 1234);
  EXPECT_TRUE(api->bytes_by_dtype.empty());
}

TEST_F(HfHubTest, TokenIsSentOnlyWhenSet) {
  {
    HfHubClient anonymous;
    absl::Status gated = anonymous.ModelInfo("org/gated", "main").status();
    EXPECT_EQ(gated.code(), absl::StatusCode::kUnauthenticated) << gated;
    EXPECT_TRUE(absl::StrContains(gated.message(), "gated")) << gated;
    EXPECT_TRUE(absl::StrContains(gated.message(), "set HF_TOKEN")) << gated;
    EXPECT_EQ(GetReason(gated), "GATED_REPO");
    absl::Status file = anonymous.FetchFile("org/gated", "main", "config.json").status();
    EXPECT_EQ(file.code(), absl::StatusCode::kUnauthenticated) << file;
  }
  for (const LoggedRequest& r : Requests()) EXPECT_EQ(r.authorization, "") << r.path;

  ScopedEnv token("HF_TOKEN", "hf_granted");
  HfHubClient granted;
  absl::StatusOr<HfModelDescription> d = granted.FetchModelDescription("org/gated", "main");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->commit_sha, kGatedSha);
  EXPECT_EQ(d->config_json, kConfig);
  const std::vector<LoggedRequest> log = Requests();
  ASSERT_GE(log.size(), 4u);
  EXPECT_EQ(log.back().authorization, "Bearer hf_granted");

  ScopedEnv wrong("HF_TOKEN", "hf_other");
  absl::Status denied = HfHubClient().ModelInfo("org/gated", "main").status();
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied) << denied;
  EXPECT_TRUE(absl::StrContains(denied.message(), "has no access")) << denied;
}

TEST_F(HfHubTest, MissingRepositoryIsNotFound) {
  absl::Status missing = HfHubClient().FetchModelDescription("org/missing", "main").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound) << missing;
  EXPECT_TRUE(absl::StrContains(missing.message(), "repository \"org/missing\" not found"))
      << missing;
  EXPECT_EQ(GetReason(missing), "REPO_NOT_FOUND");
}

TEST_F(HfHubTest, UnreachableEndpointIsUnavailable) {
  ScopedEnv endpoint("HF_ENDPOINT", "http://127.0.0.1:1");
  absl::Status down = HfHubClient().FetchModelDescription("org/sharded", "main").status();
  EXPECT_EQ(down.code(), absl::StatusCode::kUnavailable) << down;
  EXPECT_TRUE(absl::StrContains(down.message(), "127.0.0.1:1")) << down;
}

TEST_F(HfHubTest, SlowEndpointTimesOut) {
  HfHubOptions options = HfHubOptions::FromEnvironment();
  options.timeout = absl::Milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  absl::Status slow = HfHubClient(options).ModelInfo("org/slow", "main").status();
  EXPECT_EQ(slow.code(), absl::StatusCode::kDeadlineExceeded) << slow;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST_F(HfHubTest, ATransferUnderWayStopsWhenItsCallerCancels) {
  // org/slow answers after 3 s; the caller goes after 300 ms. Without the
  // progress callback the client would wait for the answer (3 s or more).
  HfHubOptions options = HfHubOptions::FromEnvironment();
  options.timeout = absl::Seconds(30);
  std::atomic<bool> gone{false};
  options.cancelled = [&gone] { return gone.load(); };
  std::thread caller([&gone] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    gone = true;
  });
  const auto start = std::chrono::steady_clock::now();
  absl::Status slow = HfHubClient(options).ModelInfo("org/slow", "main").status();
  const auto took = std::chrono::steady_clock::now() - start;
  caller.join();
  EXPECT_EQ(slow.code(), absl::StatusCode::kCancelled) << slow;
  EXPECT_LT(took, std::chrono::milliseconds(2500));
  // A caller gone before the transfer starts sends nothing.
  const size_t before = Requests().size();
  absl::Status never = HfHubClient(options).ModelInfo("org/sharded", "main").status();
  EXPECT_EQ(never.code(), absl::StatusCode::kCancelled) << never;
  EXPECT_EQ(Requests().size(), before);
}

TEST_F(HfHubTest, OfflineReadsOnlyTheCache) {
  {
    ScopedEnv offline("HF_HUB_OFFLINE", "1");
    absl::Status none = HfHubClient().FetchModelDescription("org/sharded", "main").status();
    EXPECT_EQ(none.code(), absl::StatusCode::kFailedPrecondition) << none;
    EXPECT_TRUE(absl::StrContains(none.message(), "HF_HUB_OFFLINE")) << none;
    EXPECT_TRUE(absl::StrContains(none.message(), "org/sharded")) << none;
    EXPECT_EQ(HfHubClient().FetchFile("org/sharded", kMain, "config.json").status().code(),
              absl::StatusCode::kFailedPrecondition);
  }
  EXPECT_TRUE(Requests().empty());

  ASSERT_TRUE(HfHubClient().FetchModelDescription("org/sharded", "main").ok());
  const size_t online = Requests().size();
  ScopedEnv offline("HF_HUB_OFFLINE", "1");
  HfHubClient hub;
  absl::StatusOr<HfModelDescription> d = hub.FetchModelDescription("org/sharded", "main");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->commit_sha, kMain);
  EXPECT_EQ(d->config_json, kConfig);
  EXPECT_EQ(d->tensor_source, "");  // the weights were never downloaded

  // With the weights in the cache (as a full download leaves them), offline
  // totals come from the local headers.
  const fs::path snapshot = fs::path(HfRepoCacheDir(cache_, "org/sharded")) / "snapshots" / kMain;
  for (const char* shard :
       {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
    fs::copy_file(*dir_ / "root/files/org/sharded" / kMain / shard, snapshot / shard);
  }
  d = hub.FetchModelDescription("org/sharded", "main");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->tensor_source, "safetensors");
  EXPECT_EQ(d->total_parameters, 328);
  EXPECT_EQ(Requests().size(), online);  // offline: not one request
}

TEST_F(HfHubTest, RangeRequests) {
  HfHubClient hub;
  absl::StatusOr<HfFile> r =
      hub.FetchRange("org/sharded", "main", "model-00001-of-00002.safetensors", 0, 8);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->content.size(), 8u);
  EXPECT_EQ(r->commit_sha, kMain);
  const std::string whole =
      ReadFile(*dir_ / "root/files/org/sharded" / kMain / "model-00001-of-00002.safetensors");
  EXPECT_EQ(r->content, whole.substr(0, 8));
  r = hub.FetchRange("org/sharded", "main", "model-00001-of-00002.safetensors", 8, 20);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->content, whole.substr(8, 20));
  absl::StatusOr<SafetensorsHeader> h =
      hub.FetchSafetensorsHeader("org/sharded", "main", "model-00002-of-00002.safetensors");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->total_parameters, 136);
  EXPECT_EQ(h->total_bytes, 288u);
  for (const LoggedRequest& req : Requests()) {
    if (absl::StartsWith(req.path, "/cdn/")) {
      EXPECT_LT(req.bytes, req.size);
    }
  }
}

TEST_F(HfHubTest, GgufHeaderByGrowingRanges) {
  HfHubClient hub;
  absl::StatusOr<GgufHeader> h = hub.FetchGgufHeader("org/gguf", "main", "tiny.Q4_K_M.gguf");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->model.architecture, "llama");
  EXPECT_EQ(h->model.vocab_size, 25000);
  EXPECT_EQ(h->total_bytes, 4096u * 144);
  EXPECT_EQ(h->total_elements, 256u * 4096);
  int requests = 0;
  for (const LoggedRequest& r : Requests()) {
    ++requests;
    EXPECT_EQ(r.status, 206) << r.path;
    EXPECT_LT(r.bytes, r.size) << r.path;
  }
  EXPECT_EQ(requests, 2);  // 256 KiB, then up to 512 KiB
  EXPECT_EQ(h->file_bytes, static_cast<uint64_t>(fs::file_size(*dir_ / "root/files/org/gguf" /
                                                               kGgufSha / "tiny.Q4_K_M.gguf")));
}

TEST_F(HfHubTest, FileMetadataByHead) {
  absl::StatusOr<HfFileMetadata> m =
      HfHubClient().FileMetadata("org/sharded", "main", "model-00002-of-00002.safetensors");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->commit_sha, kMain);
  EXPECT_EQ(m->size, fs::file_size(*dir_ / "root/files/org/sharded" / kMain /
                                   "model-00002-of-00002.safetensors"));
  EXPECT_TRUE(absl::StartsWith(m->location, "/cdn/")) << m->location;
  EXPECT_EQ(m->etag.size(), 42u);
  for (const LoggedRequest& r : Requests()) {
    EXPECT_EQ(r.method, "HEAD");
    EXPECT_EQ(r.bytes, 0);
  }
  EXPECT_EQ(HfHubClient().FileMetadata("org/sharded", "main", "nope.bin").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(HfHubTest, TokenDoesNotFollowARedirectToAnotherHost) {
  ScopedEnv token("HF_TOKEN", "hf_granted");
  absl::StatusOr<HfFile> f = HfHubClient().FetchFile("org/gated", "main", "weights.bin");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->content, kConfig);
  EXPECT_EQ(f->commit_sha, kGatedSha);
  const std::vector<LoggedRequest> log = Requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].authorization, "Bearer hf_granted");
  EXPECT_TRUE(absl::StartsWith(log[1].path, "/files/")) << log[1].path;
  EXPECT_EQ(log[1].authorization, "");

  ScopedEnv bad("HF_TOKEN", "hf_bad\r\nX-Injected: 1");
  EXPECT_EQ(HfHubClient().FetchFile("org/gated", "main", "config.json").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(HfHubTest, ValidatesIdsBeforeAnyRequest) {
  HfHubClient hub;
  for (const char* bad : {"", "../x", "a/b/c", "org--x/y", "org/name.git", "-org/x", "org/x y",
                          "org/..", "org//x", "org/x?y"}) {
    absl::Status s = hub.FetchModelDescription(bad, "main").status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(GetFieldViolations(s).at(0).field, "repo_id") << bad;
  }
  EXPECT_EQ(hub.FetchFile("org/sharded", "main", "../../etc/passwd").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(hub.FetchFile("org/sharded", "main", "/etc/passwd").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(hub.ModelInfo("org/sharded", "../main").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(hub.ModelInfo("org/sharded", "main?x=1").status().code(),
            absl::StatusCode::kInvalidArgument);
  for (const char* bad : {".", "a//b", "a/./b", "/main", "main/", "a b", "a\\b"}) {
    EXPECT_EQ(ValidateRevision(bad).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(Requests().empty());
  EXPECT_TRUE(ValidateRepoId("gpt2").ok());
  EXPECT_TRUE(ValidateRepoId("meta-llama/Llama-3.1-8B").ok());
  EXPECT_TRUE(ValidateRevision("refs/pr/1").ok());
  EXPECT_TRUE(IsCommitSha(kMain));
  EXPECT_FALSE(IsCommitSha("main"));
}

TEST_F(HfHubTest, HttpClientStatusesHeadersAndRanges) {
  HttpClient http;
  const std::string config_url = *endpoint_ + "/org/sharded/resolve/main/config.json";
  absl::StatusOr<HttpResponse> r = http.Get(config_url);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, kConfig);
  EXPECT_EQ(r->Header("x-repo-commit"), kMain);
  EXPECT_EQ(r->Header("ETag").size(), 42u);  // a quoted sha1

  // Redirected: X-Repo-Commit was on the redirect, not on the CDN's answer.
  const std::string shard_url =
      *endpoint_ + "/org/sharded/resolve/main/model-00001-of-00002.safetensors";
  r = http.GetRange(shard_url, 2, 3);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 206);
  EXPECT_EQ(r->body.size(), 3u);
  EXPECT_EQ(r->redirects.size(), 1u);
  EXPECT_EQ(r->Header("X-Repo-Commit"), kMain);
  EXPECT_TRUE(absl::StartsWith(r->Header("Content-Range"), "bytes 2-4/"))
      << r->Header("Content-Range");
  EXPECT_TRUE(absl::StrContains(r->url, "/cdn/"));

  absl::StatusOr<HttpResponse> head = http.Head(shard_url, /*follow_redirects=*/false);
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->status, 302);
  EXPECT_TRUE(absl::StartsWith(head->Header("Location"), "/cdn/"));
  EXPECT_TRUE(head->body.empty());

  absl::Status missing = http.Get(*endpoint_ + "/nothing/here").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.message(), "/nothing/here")) << missing;
  absl::Status gated = http.Get(*endpoint_ + "/api/models/org/gated/revision/main").status();
  EXPECT_EQ(gated.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(absl::StrContains(gated.message(), "X-Error-Code: GatedRepo")) << gated;
  EXPECT_EQ(http.GetRange(config_url, 10000, 5).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(http.Get("file:///etc/passwd").status().code(), absl::StatusCode::kInvalidArgument);

  HttpOptions small;
  small.max_body_bytes = 10;
  EXPECT_EQ(HttpClient(small).Get(config_url).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(HttpTest, UrlHelpers) {
  EXPECT_EQ(UrlHost("https://huggingface.co/api/models/x"), "huggingface.co");
  EXPECT_EQ(UrlHost("http://user:pw@127.0.0.1:8080?q"), "127.0.0.1:8080");
  EXPECT_EQ(UrlHost("no-scheme"), "");
  EXPECT_EQ(UrlEncode("refs/pr/1", /*keep_slash=*/false), "refs%2Fpr%2F1");
  EXPECT_EQ(UrlEncode("dir/a b+c.json", /*keep_slash=*/true), "dir/a%20b%2Bc.json");
}

}  // namespace
}  // namespace modelatlas
