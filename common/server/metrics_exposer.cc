#include "common/server/metrics_exposer.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace modelatlas {
namespace {

// How often the waker connects while the exposer stops: the stop then
// waits about this long for the listening thread instead of up to 2 s.
constexpr absl::Duration kWakeInterval = absl::Milliseconds(10);
// A connect that would block this long is given up (the port is local to
// this process; a blocking connect to an unreachable host could otherwise
// outlast the 2 s it saves).
constexpr int kConnectTimeoutMs = 100;

// Opens a TCP connection to host:port and closes it at once: the listening
// thread's poll returns, and the worker handed the connection reads its end
// and drops it. Failures do not matter: the stop then takes civetweb's time.
void ConnectAndClose(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addresses) != 0) return;
  for (const addrinfo* address = addresses; address != nullptr; address = address->ai_next) {
    const int fd = socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    // Linux applies SO_SNDTIMEO to connect() too (socket(7)).
    timeval timeout{.tv_sec = 0, .tv_usec = kConnectTimeoutMs * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    const bool connected = connect(fd, address->ai_addr, address->ai_addrlen) == 0;
    close(fd);
    if (connected) break;
  }
  freeaddrinfo(addresses);
}

}  // namespace

std::string HostToReach(absl::string_view listen_address) {
  absl::string_view host;
  if (!listen_address.empty() && listen_address.front() == '[') {
    const size_t close = listen_address.find(']');
    host = listen_address.substr(1, close == absl::string_view::npos ? close : close - 1);
  } else {
    const size_t colon = listen_address.rfind(':');
    host = colon == absl::string_view::npos ? listen_address : listen_address.substr(0, colon);
  }
  if (host.empty() || host == "0.0.0.0" || host == "*") return "127.0.0.1";
  if (host == "::") return "::1";
  return std::string(host);
}

void StopExposer(std::unique_ptr<prometheus::Exposer> exposer, absl::string_view listen_address) {
  if (exposer == nullptr) return;
  const std::string host = HostToReach(listen_address);
  const std::vector<int> ports = exposer->GetListeningPorts();
  absl::Notification stopped;
  // Connects until the stop is over: a connection made before mg_stop set
  // its flag wakes a poll that then goes back to waiting, so one is not
  // enough.
  std::thread waker([&] {
    while (!stopped.WaitForNotificationWithTimeout(kWakeInterval)) {
      for (int port : ports) ConnectAndClose(host, port);
    }
  });
  exposer.reset();
  stopped.Notify();
  waker.join();
}

}  // namespace modelatlas
