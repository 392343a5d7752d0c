#include "common/fetch/http.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace modelatlas {
namespace {

struct Received {
  long status = 0;
  HttpHeaders headers;
};

struct Transfer {
  std::vector<Received> responses;
  std::string body;
  uint64_t max_body = 0;
  bool too_long = false;
  // A range request answered with the whole file (200): keep `range_length`.
  std::optional<uint64_t> range_length;
  bool cut_at_range = false;
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  absl::string_view line(data, n);
  line = absl::StripTrailingAsciiWhitespace(line);
  if (absl::StartsWith(line, "HTTP/")) {
    Received r;
    const size_t space = line.find(' ');
    if (space != absl::string_view::npos) {
      int code = 0;
      if (absl::SimpleAtoi(line.substr(space + 1, 3), &code)) r.status = code;
    }
    t->responses.push_back(std::move(r));
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos || t->responses.empty()) return n;
  std::string name = absl::AsciiStrToLower(line.substr(0, colon));
  t->responses.back().headers[name] =
      std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  return n;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  const long status = t->responses.empty() ? 0 : t->responses.back().status;
  if (t->range_length && status == 200) {
    const uint64_t room = *t->range_length - std::min<uint64_t>(*t->range_length, t->body.size());
    if (n > room) {
      t->body.append(data, room);
      t->cut_at_range = true;
      return 0;  // stop reading the whole file
    }
  }
  if (t->body.size() + n > t->max_body) {
    t->too_long = true;
    return 0;
  }
  t->body.append(data, n);
  return n;
}

// CURLOPT_XFERINFOFUNCTION: a non-zero return aborts the transfer
// (CURLE_ABORTED_BY_CALLBACK).
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancelled = static_cast<const std::function<bool()>*>(user);
  return (*cancelled)() ? 1 : 0;
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

std::string HttpResponse::Header(absl::string_view name) const {
  const std::string key = absl::AsciiStrToLower(name);
  if (auto it = headers.find(key); it != headers.end()) return it->second;
  for (auto r = redirects.rbegin(); r != redirects.rend(); ++r) {
    if (auto it = r->find(key); it != r->end()) return it->second;
  }
  return "";
}

std::string UrlHost(absl::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == absl::string_view::npos) return "";
  absl::string_view rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const size_t at = rest.rfind('@'); at != absl::string_view::npos) rest = rest.substr(at + 1);
  return std::string(rest);
}

std::string UrlEncode(absl::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
        (keep_slash && c == '/')) {
      out.push_back(c);
    } else {
      const auto u = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

HttpClient::HttpClient(HttpOptions options) : options_(std::move(options)) { GlobalInit(); }

absl::StatusOr<HttpResponse> HttpClient::Send(const HttpRequest& request) const {
  if (!absl::StartsWith(request.url, "http://") && !absl::StartsWith(request.url, "https://")) {
    return absl::InvalidArgumentError(absl::StrCat("not an http(s) URL: \"", request.url, "\""));
  }
  for (const char ch : options_.bearer_token) {
    if (static_cast<unsigned char>(ch) < 0x21 || ch == 0x7f) {
      return absl::InvalidArgumentError("the bearer token holds a space or control character");
    }
  }
  if (request.range && request.range->second == 0) {
    return absl::InvalidArgumentError("an empty byte range");
  }
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return absl::InternalError("curl_easy_init failed");
  CURL* c = curl.get();
  Transfer t;
  t.max_body = options_.max_body_bytes;
  char error[CURL_ERROR_SIZE] = {0};

  curl_slist* list = nullptr;
  if (!options_.bearer_token.empty()) {
    list = curl_slist_append(list, ("Authorization: Bearer " + options_.bearer_token).c_str());
  }
  for (const auto& [name, value] : request.headers) {
    list = curl_slist_append(list, absl::StrCat(name, ": ", value).c_str());
  }
  std::unique_ptr<curl_slist, SlistDeleter> headers(list);
  std::string range;
  if (request.range) {
    const auto [begin, length] = *request.range;
    uint64_t last = 0;
    if (__builtin_add_overflow(begin, length - 1, &last)) {
      return absl::InvalidArgumentError("byte range past 2^64");
    }
    range = absl::StrCat(begin, "-", last);
    t.range_length = length;
  }

  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, request.follow_redirects ? 1L : 0L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, static_cast<long>(options_.max_redirects));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(options_.timeout)));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(options_.connect_timeout)));
  curl_easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (request.head) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  if (options_.cancelled) {
    if (options_.cancelled()) {
      return absl::CancelledError(absl::StrCat(request.url, ": cancelled before it was sent"));
    }
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &options_.cancelled);
  }
  if (!range.empty()) {
    curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
  } else {
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // gzip etc., decoded by curl
  }

  const CURLcode code = curl_easy_perform(c);
  const std::string host = UrlHost(request.url);
  const std::string what = error[0] != '\0' ? error : curl_easy_strerror(code);
  if (t.too_long) {
    return absl::ResourceExhaustedError(absl::StrCat("GET ", request.url, ": the body is over ",
                                                     options_.max_body_bytes, " bytes"));
  }
  if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && t.cut_at_range)) {
    switch (code) {
      case CURLE_ABORTED_BY_CALLBACK:
        return absl::CancelledError(
            absl::StrCat(request.url, ": the transfer was abandoned (its caller has gone)"));
      case CURLE_OPERATION_TIMEDOUT:
        return absl::DeadlineExceededError(
            absl::StrCat(request.url, ": no answer from ", host, " within ",
                         absl::FormatDuration(options_.timeout), " (", what, ")"));
      case CURLE_UNSUPPORTED_PROTOCOL:
      case CURLE_URL_MALFORMAT:
        return absl::InvalidArgumentError(absl::StrCat(request.url, ": ", what));
      case CURLE_TOO_MANY_REDIRECTS:
        return absl::FailedPreconditionError(absl::StrCat(request.url, ": ", what));
      default:
        return absl::UnavailableError(
            absl::StrCat("cannot reach ", host.empty() ? request.url : host, ": ", what));
    }
  }

  HttpResponse response;
  char* effective = nullptr;
  curl_easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &effective);
  response.url = effective != nullptr ? effective : request.url;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  // The last response is the answer; earlier 3xx ones are the redirects
  // (1xx and a proxy's CONNECT answer are neither).
  if (!t.responses.empty()) {
    response.headers = std::move(t.responses.back().headers);
    t.responses.pop_back();
    for (Received& r : t.responses) {
      if (r.status >= 300 && r.status < 400) response.redirects.push_back(std::move(r.headers));
    }
  }
  response.body = std::move(t.body);
  return response;
}

absl::StatusOr<HttpResponse> HttpClient::Get(const std::string& url) const {
  absl::StatusOr<HttpResponse> r = Send({.url = url});
  if (!r.ok()) return r.status();
  if (absl::Status s = HttpStatusError(*r, "GET", url); !s.ok()) return s;
  return r;
}

absl::StatusOr<HttpResponse> HttpClient::GetRange(const std::string& url, uint64_t begin,
                                                  uint64_t length) const {
  absl::StatusOr<HttpResponse> r = Send({.url = url, .range = std::make_pair(begin, length)});
  if (!r.ok()) return r.status();
  if (absl::Status s = HttpStatusError(*r, "GET", url); !s.ok()) return s;
  if (r->status == 200 && begin > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("GET ", url, ": the server ignored the Range header (bytes ", begin, "-",
                     begin + length - 1, ")"));
  }
  if (r->body.size() > length) r->body.resize(length);
  return r;
}

absl::StatusOr<HttpResponse> HttpClient::Head(const std::string& url, bool follow_redirects) const {
  absl::StatusOr<HttpResponse> r =
      Send({.url = url, .head = true, .follow_redirects = follow_redirects});
  if (!r.ok()) return r.status();
  if (absl::Status s = HttpStatusError(*r, "HEAD", url); !s.ok()) return s;
  return r;
}

absl::Status HttpStatusError(const HttpResponse& response, absl::string_view method,
                             absl::string_view url) {
  const long s = response.status;
  if (s >= 200 && s < 400) return absl::OkStatus();
  std::string message = absl::StrCat(method, " ", url, ": HTTP ", s);
  const std::string code = response.Header("X-Error-Code");
  const std::string detail = response.Header("X-Error-Message");
  if (!code.empty()) absl::StrAppend(&message, " (X-Error-Code: ", code, ")");
  if (!detail.empty()) absl::StrAppend(&message, ": ", detail);
  switch (s) {
    case 401:
      return absl::UnauthenticatedError(message);
    case 403:
      return absl::PermissionDeniedError(message);
    case 404:
      return absl::NotFoundError(message);
    case 416:
      return absl::OutOfRangeError(message);
    case 429:
      return absl::ResourceExhaustedError(message);
    default:
      return s >= 500 ? absl::UnavailableError(message) : absl::FailedPreconditionError(message);
  }
}

}  // namespace modelatlas
