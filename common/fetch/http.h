// A small blocking HTTP(S) client over libcurl: whole small files, byte
// ranges, HEAD; redirects followed (http and https only); the headers of every
// response kept; proxies from http_proxy / https_proxy / no_proxy (libcurl
// reads them itself). One curl handle per request, so an HttpClient may be
// shared between threads.
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

namespace modelatlas {

struct HttpOptions {
  absl::Duration timeout = absl::Seconds(60);  // the whole request, redirects included
  absl::Duration connect_timeout = absl::Seconds(15);
  int max_redirects = 10;
  // Bodies longer than this are cut off: RESOURCE_EXHAUSTED.
  uint64_t max_body_bytes = 64ull << 20;
  // Sent as "Authorization: Bearer <token>" when not empty, to the first
  // host only (libcurl drops it when a redirect leaves that host).
  std::string bearer_token;
  std::string user_agent = "modelatlas/0.1";
  // Polled while a transfer is under way (libcurl's progress callback: often
  // while bytes flow, about once a second while the server is silent); true
  // aborts the transfer: CANCELLED. How a caller that has gone (a cancelled
  // gRPC call) stops a fetch already started.
  std::function<bool()> cancelled;
};

struct HttpRequest {
  std::string url;
  bool head = false;  // HEAD instead of GET
  // [begin, begin + length): a "Range: bytes=begin-(begin+length-1)" request.
  std::optional<std::pair<uint64_t, uint64_t>> range;
  bool follow_redirects = true;
  std::vector<std::pair<std::string, std::string>> headers;  // extra request headers
};

// Header names are lower case; a repeated header keeps its last value.
using HttpHeaders = std::map<std::string, std::string>;

struct HttpResponse {
  long status = 0;  // of the last response
  std::string body;
  HttpHeaders headers;                 // of the last response
  std::vector<HttpHeaders> redirects;  // of each redirect before it, in order
  std::string url;                     // the last URL (after redirects)

  // `name` (any case) from the last response, else from the latest redirect
  // that has it (e.g. X-Repo-Commit, which the Hub sets on its redirect to
  // the CDN); empty when absent.
  std::string Header(absl::string_view name) const;
};

class HttpClient {
 public:
  explicit HttpClient(HttpOptions options = {});

  // Sends a request and returns the response whatever its HTTP status;
  // only transport failures are errors: UNAVAILABLE (naming the host and
  // curl's message) for DNS, connection and TLS failures, DEADLINE_EXCEEDED
  // on timeout, CANCELLED when options.cancelled said so mid-transfer,
  // RESOURCE_EXHAUSTED when the body passes max_body_bytes,
  // INVALID_ARGUMENT for a URL that is not http(s).
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) const;

  // GET, following redirects; a non-2xx answer is an error (HttpStatusError).
  absl::StatusOr<HttpResponse> Get(const std::string& url) const;
  // GET of bytes [begin, begin + length). A server that ignores the Range
  // header is read no further than `length` bytes; past offset 0 that is
  // FAILED_PRECONDITION. The body may be shorter at the end of the file.
  absl::StatusOr<HttpResponse> GetRange(const std::string& url, uint64_t begin,
                                        uint64_t length) const;
  // HEAD, following redirects unless told not to.
  absl::StatusOr<HttpResponse> Head(const std::string& url, bool follow_redirects = true) const;

  const HttpOptions& options() const { return options_; }

 private:
  HttpOptions options_;
};

// OK for 2xx (and 3xx when redirects were not followed); otherwise an error
// naming the method and URL, with the server's X-Error-Code and
// X-Error-Message when it sent them: NOT_FOUND (404), UNAUTHENTICATED (401),
// PERMISSION_DENIED (403), OUT_OF_RANGE (416), RESOURCE_EXHAUSTED (429),
// UNAVAILABLE (5xx), FAILED_PRECONDITION (other).
absl::Status HttpStatusError(const HttpResponse& response, absl::string_view method,
                             absl::string_view url);

// The host of an http(s) URL ("huggingface.co", "127.0.0.1:8080"); empty if none.
std::string UrlHost(absl::string_view url);

// Percent-encodes everything but unreserved characters (and '/' when
// keep_slash), as Python's urllib.parse.quote does.
std::string UrlEncode(absl::string_view text, bool keep_slash);

}  // namespace modelatlas
