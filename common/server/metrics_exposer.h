// Stopping the Prometheus /metrics endpoint (prometheus::Exposer) without
// the wait built into the HTTP server under it.
//
// prometheus-cpp 1.0 serves /metrics with civetweb. civetweb's listening
// thread (1.15, Debian 12: master_thread_run in src/civetweb.c) waits in
// poll() on its sockets with a fixed timeout, SOCKET_TIMEOUT_QUANTUM = 2000
// ms, and reads the stop flag only when that poll returns; mg_stop(), which
// ~Exposer calls, sleeps until it has. So a server stopping waited up to 2 s
// after its gRPC drain, whatever --shutdown_deadline said: the full 2 s
// right after a scrape, because the scrape restarts the poll (measured:
// docs/BENCHMARKS.md, "Session 18, branch s18-replicas"; seen with gdb as
// the civetweb-master thread in poll(timeout=2000) and the main thread in
// mg_stop's sleep). A connection to the port makes the poll return at once,
// so StopExposer opens such connections while the exposer stops.
#pragma once

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "prometheus/exposer.h"

namespace modelatlas {

// Destroys `exposer` (its port closed, its threads joined) within about
// 10 ms plus the time an in-flight scrape takes. `listen_address` is the
// host:port it was created with; its host is where the wake-up connections
// go (a wildcard address is reached through loopback).
void StopExposer(std::unique_ptr<prometheus::Exposer> exposer, absl::string_view listen_address);

// The host a connection to a server listening on `listen_address`
// (host:port, [v6]:port) goes to: the host itself, loopback for a wildcard
// ("0.0.0.0", "::", "*" or none). No lookup: a name is returned as given.
std::string HostToReach(absl::string_view listen_address);

}  // namespace modelatlas
