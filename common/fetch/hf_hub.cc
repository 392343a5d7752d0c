#include "common/fetch/hf_hub.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/status/errors.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace modelatlas {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Struct;
using google::protobuf::Value;

constexpr uint64_t kMaxFileBytes = 64ull << 20;
constexpr int kMaxApiJsonDepth = 64;
// Shards of one checkpoint read for a description (the largest public
// checkpoints have a few hundred).
constexpr size_t kMaxShards = 2048;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

bool Truthy(absl::string_view value) {
  const std::string v = absl::AsciiStrToLower(absl::StripAsciiWhitespace(value));
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

std::optional<std::string> ReadWholeFile(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > max_bytes) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string content(size, '\0');
  in.read(content.data(), static_cast<std::streamsize>(size));
  if (static_cast<uintmax_t>(in.gcount()) != size) return std::nullopt;
  return content;
}

bool PartOk(absl::string_view part) {
  if (part.empty() || part.size() > 96) return false;
  for (char c : part) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return part.front() != '-' && part.front() != '.' && part.back() != '-' && part.back() != '.';
}

// An ETag as a file name: quotes and a weak prefix removed, hex only.
std::string BlobName(std::string etag) {
  if (absl::StartsWith(etag, "W/")) etag = etag.substr(2);
  absl::StripAsciiWhitespace(&etag);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  if (etag.size() < 32 || etag.size() > 128) return "";
  for (char c : etag) {
    if (!absl::ascii_isxdigit(c)) return "";
  }
  return etag;
}

// Writes `content` to `path` through a temporary file and a rename.
bool WriteAtomically(const fs::path& path, absl::string_view content) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  static std::atomic<uint64_t> counter{0};
  const fs::path tmp = path.string() + absl::StrCat(".tmp.", ::getpid(), ".", counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out) return false;
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

absl::StatusOr<Struct> ParseJson(absl::string_view json, absl::string_view what) {
  if (absl::Status depth = CheckJsonDepth(json, kMaxApiJsonDepth, what); !depth.ok()) return depth;
  Struct root;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto parsed =
      google::protobuf::util::JsonStringToMessage(std::string(json), &root, options);
  if (!parsed.ok()) {
    return absl::DataLossError(
        absl::StrCat(what, " is not a JSON object: ", std::string(parsed.message())));
  }
  return root;
}

}  // namespace

HfHubOptions HfHubOptions::FromEnvironment() {
  HfHubOptions o;
  std::string endpoint = Env("HF_ENDPOINT");
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (!endpoint.empty()) o.endpoint = endpoint;

  std::string home = Env("HF_HOME");
  if (home.empty()) {
    std::string cache = Env("XDG_CACHE_HOME");
    if (cache.empty() && !Env("HOME").empty()) cache = Env("HOME") + "/.cache";
    if (!cache.empty()) home = cache + "/huggingface";
  }
  o.cache_dir = Env("HF_HUB_CACHE");
  if (o.cache_dir.empty()) o.cache_dir = Env("HUGGINGFACE_HUB_CACHE");
  if (o.cache_dir.empty() && !home.empty()) o.cache_dir = home + "/hub";

  o.token = Env("HF_TOKEN");
  if (o.token.empty()) o.token = Env("HUGGING_FACE_HUB_TOKEN");
  if (o.token.empty()) {
    std::string path = Env("HF_TOKEN_PATH");
    if (path.empty() && !home.empty()) path = home + "/token";
    if (!path.empty()) o.token = ReadWholeFile(path, 1 << 16).value_or("");
  }
  o.token = std::string(absl::StripAsciiWhitespace(o.token));
  o.offline = Truthy(Env("HF_HUB_OFFLINE"));
  return o;
}

absl::Status ValidateRepoId(absl::string_view repo_id) {
  const std::vector<absl::string_view> parts = absl::StrSplit(repo_id, '/');
  bool ok = repo_id.size() <= 96 && parts.size() <= 2 && !absl::StrContains(repo_id, "--") &&
            !absl::StrContains(repo_id, "..") && !absl::EndsWith(repo_id, ".git");
  for (absl::string_view part : parts) ok = ok && PartOk(part);
  if (!ok) {
    return InvalidFieldError(
        "repo_id", absl::StrCat("\"", repo_id,
                                "\" is not a Hub repository id (\"org/name\": letters, digits, "
                                "'-', '_', '.'; no \"--\" or \"..\"; at most 96 characters)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateRevision(absl::string_view revision) {
  bool ok = !revision.empty() && revision.size() <= 256 && !absl::StrContains(revision, "..") &&
            revision.front() != '/' && revision.back() != '/';
  for (char c : revision) {
    ok = ok && (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/');
  }
  for (absl::string_view part : absl::StrSplit(revision, '/')) {
    ok = ok && !part.empty() && part != ".";
  }
  if (!ok) {
    return InvalidFieldError("revision",
                             absl::StrCat("\"", revision, "\" is not a branch, tag or commit sha"));
  }
  return absl::OkStatus();
}

absl::Status ValidateRepoFilename(absl::string_view filename) {
  bool ok = !filename.empty() && filename.size() <= 1024 && filename.front() != '/';
  for (char c : filename) ok = ok && c != '\\' && static_cast<unsigned char>(c) >= 0x20;
  for (absl::string_view part : absl::StrSplit(filename, '/')) {
    ok = ok && !part.empty() && part != "." && part != "..";
  }
  if (!ok) {
    return InvalidFieldError("filename",
                             absl::StrCat("\"", filename, "\" is not a relative file path"));
  }
  return absl::OkStatus();
}

bool IsCommitSha(absl::string_view revision) {
  return revision.size() == 40 && std::all_of(revision.begin(), revision.end(), [](char c) {
           return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
         });
}

std::string TensorNamePrefix(absl::string_view name) {
  size_t dot = 0;
  for (int dots = 0; dots < 3; ++dots) {
    dot = name.find('.', dots == 0 ? 0 : dot + 1);
    if (dot == absl::string_view::npos) return std::string(name);
  }
  return std::string(name.substr(0, dot));
}

std::string HfRepoCacheDir(absl::string_view cache_dir, absl::string_view repo_id) {
  return absl::StrCat(cache_dir, "/models--", absl::StrReplaceAll(repo_id, {{"/", "--"}}));
}

HfHubClient::HfHubClient(HfHubOptions options)
    : options_(std::move(options)),
      http_(HttpOptions{.timeout = options_.timeout,
                        .connect_timeout = options_.connect_timeout,
                        .max_body_bytes = kMaxFileBytes,
                        .bearer_token = options_.token,
                        .cancelled = options_.cancelled}) {}

std::string HfHubClient::SnapshotPath(absl::string_view repo_id, absl::string_view sha,
                                      absl::string_view filename) const {
  return absl::StrCat(HfRepoCacheDir(options_.cache_dir, repo_id), "/snapshots/", sha, "/",
                      filename);
}

absl::StatusOr<std::string> HfHubClient::CachedSha(absl::string_view repo_id,
                                                   absl::string_view revision) const {
  const std::string dir = HfRepoCacheDir(options_.cache_dir, repo_id);
  auto missing = [&]() {
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "HF_HUB_OFFLINE is set and ", repo_id, " at revision \"", revision,
                          "\" is not in the cache", options_.cache_dir.empty() ? "" : " at ",
                          options_.cache_dir, "; unset HF_HUB_OFFLINE to fetch it")),
                      "OFFLINE_NOT_CACHED");
  };
  if (options_.cache_dir.empty()) return missing();
  std::string sha(revision);
  if (!IsCommitSha(revision)) {
    std::optional<std::string> ref = ReadWholeFile(absl::StrCat(dir, "/refs/", revision), 256);
    if (!ref) return missing();
    sha = std::string(absl::StripAsciiWhitespace(*ref));
    if (!IsCommitSha(sha)) return missing();
  }
  std::error_code ec;
  if (!fs::is_directory(absl::StrCat(dir, "/snapshots/", sha), ec)) return missing();
  return sha;
}

void HfHubClient::WriteCache(absl::string_view repo_id, absl::string_view revision,
                             absl::string_view sha, absl::string_view filename,
                             absl::string_view content, absl::string_view etag) const {
  // Best effort, as huggingface_hub: a cache that cannot be written is skipped.
  if (options_.cache_dir.empty() || !IsCommitSha(sha)) return;
  const std::string dir = HfRepoCacheDir(options_.cache_dir, repo_id);
  WriteRef(repo_id, revision, sha);
  const fs::path snapshot = SnapshotPath(repo_id, sha, filename);
  const std::string blob = BlobName(std::string(etag));
  std::error_code ec;
  if (blob.empty()) {
    WriteAtomically(snapshot, content);
    return;
  }
  // blobs/{etag} and a relative symlink to it from the snapshot, as the library does.
  const fs::path blob_path = absl::StrCat(dir, "/blobs/", blob);
  if (!fs::exists(blob_path, ec) && !WriteAtomically(blob_path, content)) return;
  fs::create_directories(snapshot.parent_path(), ec);
  fs::remove(snapshot, ec);
  fs::create_symlink(fs::relative(blob_path, snapshot.parent_path(), ec), snapshot, ec);
  if (ec) WriteAtomically(snapshot, content);
}

void HfHubClient::WriteRef(absl::string_view repo_id, absl::string_view revision,
                           absl::string_view sha) const {
  if (options_.cache_dir.empty() || !IsCommitSha(sha) || revision == sha) return;
  WriteAtomically(absl::StrCat(HfRepoCacheDir(options_.cache_dir, repo_id), "/refs/", revision),
                  sha);
}

absl::Status HfHubClient::HubError(const HttpResponse& response, absl::string_view url,
                                   absl::string_view repo_id, absl::string_view revision,
                                   absl::string_view filename) const {
  if (response.status >= 200 && response.status < 300) return absl::OkStatus();
  const std::string code = response.Header("X-Error-Code");
  const bool anonymous = options_.token.empty();
  if (code == "GatedRepo") {
    if (anonymous) {
      return WithReason(absl::UnauthenticatedError(
                            absl::StrCat(repo_id,
                                         " is a gated repository: set HF_TOKEN to a token of an "
                                         "account granted access at ",
                                         options_.endpoint, "/", repo_id)),
                        "GATED_REPO");
    }
    return WithReason(absl::PermissionDeniedError(
                          absl::StrCat(repo_id,
                                       " is a gated repository and the token (HF_TOKEN) has no "
                                       "access: request it at ",
                                       options_.endpoint, "/", repo_id)),
                      "GATED_REPO");
  }
  if (code == "RepoNotFound" || (response.status == 404 && code.empty() && filename.empty())) {
    return WithReason(
        absl::NotFoundError(absl::StrCat(
            "repository \"", repo_id, "\" not found at ", options_.endpoint,
            anonymous && response.status == 401 ? " (if it is private, set HF_TOKEN)" : "")),
        "REPO_NOT_FOUND");
  }
  if (code == "RevisionNotFound") {
    return WithReason(
        absl::NotFoundError(absl::StrCat("revision \"", revision, "\" not found in ", repo_id)),
        "REVISION_NOT_FOUND");
  }
  if (code == "EntryNotFound" || response.status == 404) {
    return WithReason(absl::NotFoundError(absl::StrCat("file \"", filename, "\" not found in ",
                                                       repo_id, " at revision ", revision)),
                      "FILE_NOT_FOUND");
  }
  if (response.status == 401) {
    return absl::UnauthenticatedError(absl::StrCat(
        HttpStatusError(response, "GET", url).message(), "; ",
        anonymous ? "set HF_TOKEN to a token with access" : "the token (HF_TOKEN) was refused"));
  }
  return HttpStatusError(response, "GET", url);
}

absl::StatusOr<HfModelInfo> HfHubClient::ModelInfo(absl::string_view repo_id,
                                                   absl::string_view revision) const {
  if (revision.empty()) revision = "main";
  if (absl::Status s = ValidateRepoId(repo_id); !s.ok()) return s;
  if (absl::Status s = ValidateRevision(revision); !s.ok()) return s;
  HfModelInfo info;
  info.id = std::string(repo_id);
  if (options_.offline) {
    // The library's offline mode knows only what the cache holds.
    absl::StatusOr<std::string> sha = CachedSha(repo_id, revision);
    if (!sha.ok()) return sha.status();
    info.sha = *sha;
    const fs::path root = fs::path(SnapshotPath(repo_id, *sha, "")).parent_path();
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code entry_ec;
      if (it->is_directory(entry_ec)) continue;
      info.siblings.push_back(it->path().lexically_relative(root).string());
    }
    std::sort(info.siblings.begin(), info.siblings.end());
    return info;
  }

  const std::string url = absl::StrCat(options_.endpoint, "/api/models/", repo_id, "/revision/",
                                       UrlEncode(revision, /*keep_slash=*/false));
  absl::StatusOr<HttpResponse> response = http_.Send({.url = url});
  if (!response.ok()) return response.status();
  if (absl::Status s = HubError(*response, url, repo_id, revision, ""); !s.ok()) return s;
  absl::StatusOr<Struct> root = ParseJson(response->body, absl::StrCat("the answer of ", url));
  if (!root.ok()) return root.status();
  const auto& f = root->fields();
  auto string_field = [&](const char* key) -> std::string {
    auto it = f.find(key);
    return it != f.end() && it->second.kind_case() == Value::kStringValue
               ? it->second.string_value()
               : "";
  };
  info.sha = string_field("sha");
  if (!IsCommitSha(info.sha)) {
    return absl::DataLossError(absl::StrCat(url, ": no commit sha in the answer"));
  }
  if (std::string id = string_field("id"); !id.empty()) info.id = id;
  if (auto it = f.find("siblings"); it != f.end() && it->second.has_list_value()) {
    for (const Value& s : it->second.list_value().values()) {
      if (!s.has_struct_value()) continue;
      auto name = s.struct_value().fields().find("rfilename");
      if (name != s.struct_value().fields().end() && name->second.has_string_value()) {
        info.siblings.push_back(name->second.string_value());
      }
    }
  }
  if (auto it = f.find("gated"); it != f.end()) {
    info.gated = it->second.has_string_value() ||
                 (it->second.kind_case() == Value::kBoolValue && it->second.bool_value());
  }
  if (auto it = f.find("private"); it != f.end() && it->second.kind_case() == Value::kBoolValue) {
    info.is_private = it->second.bool_value();
  }
  if (auto it = f.find("safetensors"); it != f.end() && it->second.has_struct_value()) {
    const auto& st = it->second.struct_value().fields();
    auto whole = [](const Value& v) -> std::optional<int64_t> {
      if (v.kind_case() != Value::kNumberValue || !(v.number_value() >= 0) ||
          v.number_value() > 9.0e15) {
        return std::nullopt;
      }
      return static_cast<int64_t>(v.number_value());
    };
    if (auto p = st.find("parameters"); p != st.end() && p->second.has_struct_value()) {
      for (const auto& [dtype, n] : p->second.struct_value().fields()) {
        if (std::optional<int64_t> v = whole(n)) info.safetensors_parameters[dtype] = *v;
      }
    }
    if (auto t = st.find("total"); t != st.end()) info.safetensors_total = whole(t->second);
  }
  return info;
}

absl::StatusOr<std::string> HfHubClient::ResolveRevision(absl::string_view repo_id,
                                                         absl::string_view revision) const {
  if (revision.empty()) revision = "main";
  if (absl::Status s = ValidateRepoId(repo_id); !s.ok()) return s;
  if (absl::Status s = ValidateRevision(revision); !s.ok()) return s;
  if (IsCommitSha(revision)) return std::string(revision);
  if (options_.offline) return CachedSha(repo_id, revision);
  absl::StatusOr<HfModelInfo> info = ModelInfo(repo_id, revision);
  if (!info.ok()) return info.status();
  return info->sha;
}

absl::StatusOr<HfFile> HfHubClient::Download(
    absl::string_view repo_id, absl::string_view revision, absl::string_view filename,
    std::optional<std::pair<uint64_t, uint64_t>> range) const {
  if (revision.empty()) revision = "main";
  if (absl::Status s = ValidateRepoId(repo_id); !s.ok()) return s;
  if (absl::Status s = ValidateRevision(revision); !s.ok()) return s;
  if (absl::Status s = ValidateRepoFilename(filename); !s.ok()) return s;

  // The cache answers for a pinned commit, and for anything when offline.
  if (!options_.cache_dir.empty() && (IsCommitSha(revision) || options_.offline)) {
    absl::StatusOr<std::string> sha =
        IsCommitSha(revision) ? std::string(revision) : CachedSha(repo_id, revision);
    if (sha.ok()) {
      const std::string path = SnapshotPath(repo_id, *sha, filename);
      std::error_code ec;
      if (fs::is_regular_file(path, ec)) {
        HfFile file{.commit_sha = *sha, .from_cache = true};
        if (!range) {
          std::optional<std::string> content = ReadWholeFile(path, kMaxFileBytes);
          if (!content) {
            return absl::ResourceExhaustedError(
                absl::StrCat(path, " is unreadable or over ", kMaxFileBytes, " bytes"));
          }
          file.content = *std::move(content);
          return file;
        }
        std::ifstream in(path, std::ios::binary);
        const uintmax_t size = fs::file_size(path, ec);
        if (!in || ec) return absl::DataLossError(absl::StrCat("cannot read ", path));
        const uint64_t begin = std::min<uint64_t>(range->first, size);
        const uint64_t length = std::min<uint64_t>({range->second, size - begin, kMaxFileBytes});
        file.content.resize(length);
        in.seekg(static_cast<std::streamoff>(begin));
        in.read(file.content.data(), static_cast<std::streamsize>(length));
        file.content.resize(static_cast<size_t>(in.gcount()));
        return file;
      }
    }
    if (options_.offline) {
      return WithReason(absl::FailedPreconditionError(absl::StrCat(
                            "HF_HUB_OFFLINE is set and \"", filename, "\" of ", repo_id,
                            " at revision \"", revision, "\" is not in the cache",
                            options_.cache_dir.empty() ? "" : " at ", options_.cache_dir)),
                        "OFFLINE_NOT_CACHED");
    }
  }
  if (options_.offline) {
    return WithReason(
        absl::FailedPreconditionError("HF_HUB_OFFLINE is set and there is no cache (HF_HUB_CACHE)"),
        "OFFLINE_NOT_CACHED");
  }

  const std::string url =
      absl::StrCat(options_.endpoint, "/", repo_id, "/resolve/", UrlEncode(revision, false), "/",
                   UrlEncode(filename, /*keep_slash=*/true));
  absl::StatusOr<HttpResponse> response = http_.Send({.url = url, .range = range});
  if (!response.ok()) return response.status();
  if (absl::Status s = HubError(*response, url, repo_id, revision, filename); !s.ok()) return s;
  if (range && response->status == 200 && range->first > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("GET ", url, ": the server ignored the Range header"));
  }
  HfFile file;
  file.content = std::move(response->body);
  if (range && file.content.size() > range->second) file.content.resize(range->second);
  file.commit_sha = response->Header("X-Repo-Commit");
  if (!IsCommitSha(file.commit_sha)) {
    file.commit_sha = IsCommitSha(revision) ? std::string(revision) : "";
  }
  if (!range) {
    std::string etag = response->Header("X-Linked-Etag");
    if (etag.empty()) etag = response->Header("ETag");
    WriteCache(repo_id, revision, file.commit_sha, filename, file.content, etag);
  }
  return file;
}

absl::StatusOr<HfFile> HfHubClient::FetchFile(absl::string_view repo_id, absl::string_view revision,
                                              absl::string_view filename) const {
  return Download(repo_id, revision, filename, std::nullopt);
}

absl::StatusOr<HfFile> HfHubClient::FetchRange(absl::string_view repo_id,
                                               absl::string_view revision,
                                               absl::string_view filename, uint64_t begin,
                                               uint64_t length) const {
  if (length == 0) return absl::InvalidArgumentError("an empty byte range");
  return Download(repo_id, revision, filename, std::make_pair(begin, length));
}

absl::StatusOr<SafetensorsHeader> HfHubClient::FetchSafetensorsHeader(
    absl::string_view repo_id, absl::string_view revision, absl::string_view filename) const {
  auto in_file = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(repo_id, "/", filename, ": ", s.message()));
  };
  absl::StatusOr<HfFile> prefix =
      FetchRange(repo_id, revision, filename, 0, kSafetensorsPrefixBytes);
  if (!prefix.ok()) return prefix.status();
  absl::StatusOr<uint64_t> n = SafetensorsHeaderLength(prefix->content);
  if (!n.ok()) return in_file(n.status());
  // The header at the same commit, even if the branch moves in between.
  const std::string pinned =
      prefix->commit_sha.empty() ? std::string(revision) : prefix->commit_sha;
  absl::StatusOr<HfFile> json = FetchRange(repo_id, pinned, filename, kSafetensorsPrefixBytes, *n);
  if (!json.ok()) return json.status();
  if (json->content.size() != *n) {
    return in_file(
        absl::DataLossError(absl::StrCat("the file ends inside its ", *n, "-byte header")));
  }
  absl::StatusOr<SafetensorsHeader> header = ParseSafetensorsHeader(json->content);
  if (!header.ok()) return in_file(header.status());
  return header;
}

absl::StatusOr<GgufHeader> HfHubClient::FetchGgufHeader(absl::string_view repo_id,
                                                        absl::string_view revision,
                                                        absl::string_view filename) const {
  auto in_file = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(repo_id, "/", filename, ": ", s.message()));
  };
  std::string prefix;
  std::string pinned(revision);
  uint64_t want = 256 << 10;
  for (;;) {
    absl::StatusOr<HfFile> more =
        FetchRange(repo_id, pinned, filename, prefix.size(), want - prefix.size());
    if (!more.ok()) {
      if (more.status().code() == absl::StatusCode::kOutOfRange && !prefix.empty()) {
        return in_file(absl::DataLossError(
            absl::StrCat("the file (", prefix.size(), " bytes) ends inside its header")));
      }
      return more.status();
    }
    if (!more->commit_sha.empty()) pinned = more->commit_sha;
    const bool at_end = more->content.size() < want - prefix.size();
    prefix += more->content;
    absl::StatusOr<GgufParseResult> r = ParseGgufHeader(prefix);
    if (!r.ok()) return in_file(r.status());
    if (r->complete) return std::move(r->header);
    if (at_end) {
      return in_file(absl::DataLossError(
          absl::StrCat("the file (", prefix.size(), " bytes) ends inside its header")));
    }
    // The parser only checks bytes_needed against kMaxGgufHeaderBytes.
    want = std::min<uint64_t>(kMaxGgufHeaderBytes, std::max<uint64_t>(r->bytes_needed, 2 * want));
  }
}

absl::StatusOr<HfFileMetadata> HfHubClient::FileMetadata(absl::string_view repo_id,
                                                         absl::string_view revision,
                                                         absl::string_view filename) const {
  if (revision.empty()) revision = "main";
  if (absl::Status s = ValidateRepoId(repo_id); !s.ok()) return s;
  if (absl::Status s = ValidateRevision(revision); !s.ok()) return s;
  if (absl::Status s = ValidateRepoFilename(filename); !s.ok()) return s;
  if (options_.offline) {
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "HF_HUB_OFFLINE is set: no file metadata for ", repo_id, "/", filename)),
                      "OFFLINE_NOT_CACHED");
  }
  const std::string url =
      absl::StrCat(options_.endpoint, "/", repo_id, "/resolve/", UrlEncode(revision, false), "/",
                   UrlEncode(filename, /*keep_slash=*/true));
  absl::StatusOr<HttpResponse> response = http_.Send({.url = url, .head = true});
  if (!response.ok()) return response.status();
  if (absl::Status s = HubError(*response, url, repo_id, revision, filename); !s.ok()) return s;
  HfFileMetadata m;
  m.commit_sha = response->Header("X-Repo-Commit");
  if (!IsCommitSha(m.commit_sha)) m.commit_sha = IsCommitSha(revision) ? std::string(revision) : "";
  m.etag = response->Header("X-Linked-Etag");
  if (m.etag.empty()) m.etag = response->Header("ETag");
  uint64_t size = 0;
  if (absl::SimpleAtoi(response->Header("X-Linked-Size"), &size) ||
      absl::SimpleAtoi(response->headers["content-length"], &size)) {
    m.size = size;
  }
  if (!response->redirects.empty()) m.location = response->redirects.back()["location"];
  return m;
}

absl::StatusOr<HfModelDescription> HfHubClient::FetchModelDescription(
    absl::string_view repo_id, absl::string_view revision) const {
  if (revision.empty()) revision = "main";
  absl::StatusOr<HfModelInfo> info = ModelInfo(repo_id, revision);
  if (!info.ok()) return info.status();
  HfModelDescription d;
  d.repo_id = std::string(repo_id);
  d.revision = std::string(revision);
  d.commit_sha = info->sha;
  d.files = info->siblings;
  auto has = [&](absl::string_view name) {
    return std::find(d.files.begin(), d.files.end(), name) != d.files.end();
  };

  // Every later read is pinned to the commit the revision resolved to; the
  // cache remembers what the revision pointed to.
  if (!options_.offline && !IsCommitSha(revision)) WriteRef(repo_id, revision, d.commit_sha);
  if (has("config.json")) {
    absl::StatusOr<HfFile> config = FetchFile(repo_id, d.commit_sha, "config.json");
    if (!config.ok()) return config.status();
    d.config_json = std::move(config->content);
  }

  std::vector<std::string> shards;
  if (has("model.safetensors.index.json")) {
    absl::StatusOr<HfFile> index_file =
        FetchFile(repo_id, d.commit_sha, "model.safetensors.index.json");
    if (!index_file.ok()) return index_file.status();
    absl::StatusOr<SafetensorsIndex> index = ParseSafetensorsIndex(index_file->content);
    if (!index.ok()) return index.status();
    d.index_total_size = index->total_size;
    shards = index->shards;
    if (shards.size() > kMaxShards) {
      return absl::InvalidArgumentError(
          absl::StrCat(repo_id, "/model.safetensors.index.json names ", shards.size(),
                       " shards; the limit is ", kMaxShards));
    }
  } else if (has("model.safetensors")) {
    shards = {"model.safetensors"};
  }
  bool complete = !shards.empty();
  SafetensorsHeader sum;
  for (const std::string& shard : shards) {
    if (options_.offline && !has(shard)) {
      complete = false;  // offline, and the weights were never downloaded
      break;
    }
    absl::StatusOr<SafetensorsHeader> h = FetchSafetensorsHeader(repo_id, d.commit_sha, shard);
    if (!h.ok()) return h.status();
    for (const auto& [dtype, n] : h->parameters_by_dtype) sum.parameters_by_dtype[dtype] += n;
    for (const auto& [dtype, n] : h->bytes_by_dtype) sum.bytes_by_dtype[dtype] += n;
    sum.total_parameters += h->total_parameters;
    sum.mask_elements += h->mask_elements;
    sum.total_bytes += h->total_bytes;
    for (const SafetensorsTensor& t : h->tensors) {
      auto& [parameters, bytes] = d.totals_by_name_prefix[TensorNamePrefix(t.name)];
      parameters += t.parameters;
      bytes += t.bytes();
    }
    d.safetensors_files.push_back(shard);
  }
  if (complete) {
    d.tensor_source = "safetensors";
    d.parameters_by_dtype = std::move(sum.parameters_by_dtype);
    d.bytes_by_dtype = std::move(sum.bytes_by_dtype);
    d.total_parameters = sum.total_parameters;
    d.mask_elements = sum.mask_elements;
    d.total_bytes = sum.total_bytes;
  } else if (info->safetensors_total) {
    d.totals_by_name_prefix.clear();
    d.safetensors_files.clear();
    d.tensor_source = "api";
    d.parameters_by_dtype = info->safetensors_parameters;
    // The Hub's total counts BOOL masks too (as the headers would show them).
    auto masks = info->safetensors_parameters.find("BOOL");
    d.mask_elements = masks != info->safetensors_parameters.end() ? masks->second : 0;
    d.total_parameters = *info->safetensors_total - d.mask_elements;
  } else {
    d.totals_by_name_prefix.clear();
    d.safetensors_files.clear();
  }
  return d;
}

}  // namespace modelatlas
