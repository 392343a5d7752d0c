// How clients reach a service that may run as several replicas: every call
// balanced round-robin over the addresses a target resolves to (a headless
// Kubernetes Service's DNS name, or a comma-separated list of host:port).
#pragma once

#include <grpcpp/support/channel_arguments.h>

#include <string>

#include "absl/strings/string_view.h"

namespace modelatlas {

// "host:port" unchanged; "a:1,b:2" becomes "ipv4:a:1,b:2" (gRPC's static
// address list), so two local replicas can share the load.
std::string ChannelTarget(absl::string_view address);

// round_robin over every resolved address, quick reconnects (200 ms
// doubling to 5 s, with gRPC's jitter) when a replica restarts, and the
// project's response size limit (message_limits.h).
grpc::ChannelArguments BalancedChannelArguments();

}  // namespace modelatlas
