#include "tests/testing/grpc_testing.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "prometheus/text_serializer.h"

namespace modelatlas::testing {

std::chrono::system_clock::time_point DeadlineFromNow(int milliseconds) {
  return std::chrono::system_clock::now() + std::chrono::milliseconds(milliseconds);
}

std::string HealthStatus(const std::shared_ptr<grpc::Channel>& channel,
                         const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(DeadlineFromNow(1000));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) return "SERVICE_UNKNOWN";
  if (!status.ok()) return "error: " + status.error_message();
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
}

bool WaitUntilServing(const std::shared_ptr<grpc::Channel>& channel, const std::string& service,
                      int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (HealthStatus(channel, service) == "SERVING") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

google::rpc::Status DecodeDetails(const grpc::Status& status) {
  google::rpc::Status decoded;
  decoded.ParseFromString(status.error_details());
  return decoded;
}

double SeriesValue(const std::string& exposition, const std::string& metric,
                   const std::vector<std::string>& label_matchers) {
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (!absl::StartsWith(line, metric + "{") && !absl::StartsWith(line, metric + " ")) continue;
    bool all = true;
    for (const std::string& matcher : label_matchers) all = all && absl::StrContains(line, matcher);
    if (!all) continue;
    double value = 0;
    const size_t space = line.rfind(' ');
    if (absl::SimpleAtod(line.substr(space + 1), &value)) return value;
  }
  return -1;
}

std::string Render(prometheus::Registry& registry) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry.Collect());
  return out.str();
}

std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    const std::string request =
        "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[65536];
      for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) response.append(buffer, n);
    }
  }
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

std::string UrlEncode(const std::string& text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace modelatlas::testing
