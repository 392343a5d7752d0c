// A Hugging Face Hub client that behaves as the huggingface_hub library does:
//   endpoint      $HF_ENDPOINT, default https://huggingface.co
//   token         $HF_TOKEN, else the file $HF_TOKEN_PATH, else $HF_HOME/token;
//                 sent as "Authorization: Bearer ..." to the endpoint only
//   offline       $HF_HUB_OFFLINE=1 (or true/yes/on): no network, cache only
//   cache         $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub,
//                 laid out as models--{org}--{name}/refs/{revision} (the sha)
//                 and models--{org}--{name}/snapshots/{sha}/{filename}
// Calls: GET {endpoint}/api/models/{repo_id}[/revision/{revision}] for the
// commit sha, file list and safetensors totals; files from
// GET {endpoint}/{repo_id}/resolve/{revision}/{filename}, which may redirect
// to a CDN. Whole files fetched are written to the cache; with a commit sha
// for revision, a cached file is read without any network call.
//
// Typical use (the estimator, the CLI):
//   HfHubClient hub;  // options from the environment
//   absl::StatusOr<HfModelDescription> d = hub.FetchModelDescription("Qwen/Qwen2.5-7B", "main");
//   if (!d.ok()) return d.status();
//   ArchitectureFromHfConfig(d->config_json);   // common/formats/hf_config.h
//   d->total_parameters, d->parameters_by_dtype  // exact, when d->tensor_source is set
// and for a GGUF repository: hub.FetchGgufHeader(repo, "main", "model.Q4_K_M.gguf").
//
// Errors: INVALID_ARGUMENT for a malformed repository id, revision or file
// name (checked before any URL is built); NOT_FOUND naming the repository,
// revision or file; UNAUTHENTICATED for a gated or private repository without
// a token ("set HF_TOKEN"); PERMISSION_DENIED when the token has no access;
// UNAVAILABLE naming the host when the network fails; DEADLINE_EXCEEDED on
// timeout; FAILED_PRECONDITION when offline and the cache lacks the answer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/fetch/http.h"
#include "common/formats/gguf.h"
#include "common/formats/safetensors.h"

namespace modelatlas {

inline constexpr char kHfDefaultEndpoint[] = "https://huggingface.co";

struct HfHubOptions {
  std::string endpoint = kHfDefaultEndpoint;  // no trailing '/'
  std::string token;                          // empty: anonymous
  std::string cache_dir;                      // empty: no cache
  bool offline = false;
  absl::Duration timeout = absl::Seconds(60);
  absl::Duration connect_timeout = absl::Seconds(15);
  // Polled during every transfer; true stops it (CANCELLED): set by the
  // estimator to "the gRPC caller has cancelled" (HttpOptions::cancelled).
  std::function<bool()> cancelled;

  // The options huggingface_hub would use, from the environment variables
  // above (HUGGING_FACE_HUB_TOKEN and HUGGINGFACE_HUB_CACHE too, as fallbacks).
  static HfHubOptions FromEnvironment();
};

// A file's content and the commit it was read at.
struct HfFile {
  std::string content;
  std::string commit_sha;
  bool from_cache = false;
};

// HEAD {endpoint}/{repo_id}/resolve/{revision}/{filename}: what the Hub says
// of a file without sending it.
struct HfFileMetadata {
  std::string commit_sha;        // X-Repo-Commit
  std::string etag;              // X-Linked-Etag (LFS: the sha256) or ETag
  std::optional<uint64_t> size;  // X-Linked-Size, else the final Content-Length
  std::string location;          // where the Hub redirected (a CDN), if it did
};

// GET /api/models/{repo_id}/revision/{revision}.
struct HfModelInfo {
  std::string id;
  std::string sha;                    // the commit the revision points to
  std::vector<std::string> siblings;  // file names (rfilename)
  bool gated = false;                 // "auto" or "manual"
  bool is_private = false;
  // The "safetensors" block, when the Hub computed one.
  std::map<std::string, int64_t> safetensors_parameters;  // per dtype
  std::optional<int64_t> safetensors_total;
};

// What an estimate needs to know about a model repository.
struct HfModelDescription {
  std::string repo_id;
  std::string revision;     // as asked
  std::string commit_sha;   // what it resolved to
  std::string config_json;  // empty when the repository has no config.json
  std::vector<std::string> files;
  // Tensor totals: "safetensors" (from the files' headers: exact, with bytes),
  // "api" (the Hub's safetensors block: parameters only), or "" (unknown).
  std::string tensor_source;
  std::map<std::string, int64_t> parameters_by_dtype;
  std::map<std::string, uint64_t> bytes_by_dtype;  // only from headers
  int64_t total_parameters = 0;                    // BOOL masks left out (SafetensorsHeader)
  int64_t mask_elements = 0;                       // the BOOL tensors' elements
  uint64_t total_bytes = 0;                        // only from headers
  std::optional<uint64_t> index_total_size;        // metadata.total_size of the index
  std::vector<std::string> safetensors_files;      // the headers read
  // Tensor totals (parameters, bytes) by the first three dot-separated
  // segments of their names ("visual.merger.mlp", "model.layers.0"), only
  // from headers: how a multimodal checkpoint's encoders are sized exactly.
  std::map<std::string, std::pair<int64_t, uint64_t>> totals_by_name_prefix;
};

// The first three dot-separated segments of a tensor's name (all of it
// when shorter): the key of HfModelDescription::totals_by_name_prefix.
std::string TensorNamePrefix(absl::string_view name);

// INVALID_ARGUMENT (field "repo_id") unless `repo_id` is "name" or
// "org/name" with each part of letters, digits, '-', '_' and '.', not
// starting or ending with '-' or '.', without "--" or "..", at most 96 characters.
absl::Status ValidateRepoId(absl::string_view repo_id);
// INVALID_ARGUMENT (field "revision") unless a branch, tag or sha made of
// letters, digits and "-_./" without "..", at most 256 characters.
absl::Status ValidateRevision(absl::string_view revision);
// INVALID_ARGUMENT (field "filename") unless a relative path without ".."
// segments, backslashes or control characters.
absl::Status ValidateRepoFilename(absl::string_view filename);
// True for a 40-character lower-case hex commit sha.
bool IsCommitSha(absl::string_view revision);

// The cache folder of a model repository: {cache_dir}/models--{org}--{name}.
std::string HfRepoCacheDir(absl::string_view cache_dir, absl::string_view repo_id);

// Every call takes `revision` as a branch, tag or commit sha; empty means "main".
class HfHubClient {
 public:
  explicit HfHubClient(HfHubOptions options = HfHubOptions::FromEnvironment());

  // The commit sha of `revision` ("main", a tag, a branch or a sha).
  absl::StatusOr<std::string> ResolveRevision(absl::string_view repo_id,
                                              absl::string_view revision) const;
  absl::StatusOr<HfModelInfo> ModelInfo(absl::string_view repo_id,
                                        absl::string_view revision) const;
  // A whole file (up to 64 MiB), from the cache when there, else fetched and cached.
  absl::StatusOr<HfFile> FetchFile(absl::string_view repo_id, absl::string_view revision,
                                   absl::string_view filename) const;
  // Bytes [begin, begin + length) of a file by a range request (never cached;
  // offline, read from a cached file).
  absl::StatusOr<HfFile> FetchRange(absl::string_view repo_id, absl::string_view revision,
                                    absl::string_view filename, uint64_t begin,
                                    uint64_t length) const;
  // A safetensors file's header: two range requests (8 bytes, then N).
  absl::StatusOr<SafetensorsHeader> FetchSafetensorsHeader(absl::string_view repo_id,
                                                           absl::string_view revision,
                                                           absl::string_view filename) const;
  // A GGUF file's header by range requests of growing size (256 KiB, then
  // at least doubling), never the tensor data; at most kMaxGgufHeaderBytes.
  absl::StatusOr<GgufHeader> FetchGgufHeader(absl::string_view repo_id, absl::string_view revision,
                                             absl::string_view filename) const;
  // HEAD of a file (redirects followed). Offline: NOT available
  // (FAILED_PRECONDITION), as huggingface_hub.
  absl::StatusOr<HfFileMetadata> FileMetadata(absl::string_view repo_id, absl::string_view revision,
                                              absl::string_view filename) const;
  // config.json, the commit sha and the tensor totals: from the safetensors
  // headers (model.safetensors, or every shard of model.safetensors.index.json,
  // by range requests, never the weights), else from the API's safetensors
  // block. Offline: config.json and any safetensors files in the cache.
  absl::StatusOr<HfModelDescription> FetchModelDescription(absl::string_view repo_id,
                                                           absl::string_view revision) const;

  const HfHubOptions& options() const { return options_; }

 private:
  absl::StatusOr<HfFile> Download(absl::string_view repo_id, absl::string_view revision,
                                  absl::string_view filename,
                                  std::optional<std::pair<uint64_t, uint64_t>> range) const;
  absl::StatusOr<std::string> CachedSha(absl::string_view repo_id,
                                        absl::string_view revision) const;
  std::string SnapshotPath(absl::string_view repo_id, absl::string_view sha,
                           absl::string_view filename) const;
  void WriteRef(absl::string_view repo_id, absl::string_view revision, absl::string_view sha) const;
  void WriteCache(absl::string_view repo_id, absl::string_view revision, absl::string_view sha,
                  absl::string_view filename, absl::string_view content,
                  absl::string_view etag) const;
  absl::Status HubError(const HttpResponse& response, absl::string_view url,
                        absl::string_view repo_id, absl::string_view revision,
                        absl::string_view filename) const;

  HfHubOptions options_;
  HttpClient http_;
};

}  // namespace modelatlas
