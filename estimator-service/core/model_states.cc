#include "estimator-service/core/model_states.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "common/status/errors.h"

namespace modelatlas::estimator {
namespace {

// DeepSpeed's additional_buffer_factor for host memory.
constexpr double kBufferFactor = 1.5;

std::string Num(double v) { return absl::StrFormat("%.0f", v); }

}  // namespace

absl::StatusOr<ModelStatesEstimate> EstimateModelStates(const ModelStatesInput& in) {
  if (!std::isfinite(in.parameters) || in.parameters <= 0) {
    return InvalidFieldError("parameters", "must be a positive finite number");
  }
  if (in.zero_stage < 0 || in.zero_stage > 3) {
    return InvalidFieldError("zero_stage", "must be 0, 1, 2 or 3");
  }
  if (in.offload_parameters && in.zero_stage != 3) {
    return InvalidFieldError("offload_parameters", "needs ZeRO stage 3");
  }
  const double p = in.parameters;
  const double n = std::max(1, in.gpus);
  const double per_node = std::max(1, in.gpus_per_node);
  const double nodes = std::max(1.0, std::ceil(n / per_node));
  ModelStatesEstimate out;
  if (in.zero_stage == 3) {
    if (!in.largest_layer_parameters.has_value() || !std::isfinite(*in.largest_layer_parameters) ||
        *in.largest_layer_parameters <= 0 || *in.largest_layer_parameters > p) {
      return InvalidFieldError("largest_layer_parameters",
                               "ZeRO-3 needs the largest layer's parameters (positive, at most "
                               "the total), as DeepSpeed's estimator takes them");
    }
    const double layer = *in.largest_layer_parameters;
    const double largest = 4 * layer;
    // zero_init=True, as DeepSpeed's default.
    if (in.offload_parameters) {
      out.device_bytes = largest;
      out.host_bytes = p * 18 / nodes * kBufferFactor;
      out.device_arithmetic = absl::StrFormat(
          "4 x %s largest-layer parameters (fp16 weights and gradients gathered) "
          "= %s bytes (ZeRO-3, parameters and optimizer offloaded)",
          Num(layer), Num(out.device_bytes));
      out.host_arithmetic = absl::StrFormat(
          "%s parameters x 18 bytes / %s nodes x 1.5 buffer = %s "
          "bytes per node",
          Num(p), Num(nodes), Num(out.host_bytes));
    } else if (in.offload_optimizer) {
      out.device_bytes = largest + std::floor(2 * p / n);
      out.host_bytes = p * 16 / nodes * kBufferFactor;
      out.device_arithmetic = absl::StrFormat(
          "4 x %s largest-layer parameters + 2 bytes x %s parameters / %s GPUs = %s bytes "
          "(ZeRO-3, optimizer offloaded)",
          Num(layer), Num(p), Num(n), Num(out.device_bytes));
      out.host_arithmetic = absl::StrFormat(
          "%s parameters x 16 bytes / %s nodes x 1.5 buffer = %s "
          "bytes per node",
          Num(p), Num(nodes), Num(out.host_bytes));
    } else {
      out.device_bytes = largest + std::floor(18 * p / n);
      out.host_bytes = layer * 4 * per_node * kBufferFactor;
      out.device_arithmetic = absl::StrFormat(
          "4 x %s largest-layer parameters + 18 bytes x %s parameters / %s GPUs = %s bytes "
          "(ZeRO-3)",
          Num(layer), Num(p), Num(n), Num(out.device_bytes));
      out.host_arithmetic = absl::StrFormat(
          "%s largest-layer parameters x 4 bytes x %s GPUs per node x 1.5 buffer = %s bytes "
          "(loading)",
          Num(layer), Num(per_node), Num(out.host_bytes));
    }
    return out;
  }
  if (in.zero_stage == 2 && in.offload_optimizer) {
    out.device_bytes = 2 * p;
    out.host_bytes = p * std::max(4 * n, 16.0) * kBufferFactor;
    out.device_arithmetic = absl::StrFormat(
        "2 bytes x %s parameters (fp16 weights) = %s bytes (ZeRO-2, optimizer offloaded)", Num(p),
        Num(out.device_bytes));
    out.host_arithmetic =
        absl::StrFormat("%s parameters x max(4 x %s GPUs, 16) bytes x 1.5 buffer = %s bytes",
                        Num(p), Num(n), Num(out.host_bytes));
    return out;
  }
  // Stage 2 as DeepSpeed: fp16 weights and gradients whole, 16 bytes of
  // fp32 states sharded. Stage 1 keeps the gradients whole too (the same
  // figure); stage 0 shards nothing.
  const double sharded = in.zero_stage == 0 ? 1 : n;
  out.device_bytes = 4 * p + std::floor(16 * p / sharded);
  out.host_bytes = p * 4 * per_node * kBufferFactor;
  out.device_arithmetic = absl::StrFormat(
      "4 bytes x %s parameters (fp16 weights and gradients) + 16 bytes x %s parameters / %s = "
      "%s bytes (ZeRO-%d)",
      Num(p), Num(p), Num(sharded), Num(out.device_bytes), in.zero_stage);
  out.host_arithmetic = absl::StrFormat(
      "%s parameters x 4 bytes x %s GPUs per node x 1.5 buffer = %s bytes (loading)", Num(p),
      Num(per_node), Num(out.host_bytes));
  return out;
}

}  // namespace modelatlas::estimator
