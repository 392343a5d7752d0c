#include "common/server/channels.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/server/message_limits.h"

namespace modelatlas {

std::string ChannelTarget(absl::string_view address) {
  if (absl::StrContains(address, ',') && !absl::StrContains(address, ":/") &&
      !absl::StartsWith(address, "ipv4:") && !absl::StartsWith(address, "ipv6:")) {
    return absl::StrCat("ipv4:", address);
  }
  return std::string(address);
}

grpc::ChannelArguments BalancedChannelArguments() {
  grpc::ChannelArguments args;
  args.SetLoadBalancingPolicyName("round_robin");
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  // gRPC's default of 4 MiB is below what the catalog accepts and sends
  // (a 5 MB record made every List and snapshot load fail).
  args.SetMaxReceiveMessageSize(kMaxResponseBytes);
  return args;
}

}  // namespace modelatlas
