// Weight bytes as the files of each quantization tool really are, tensor by
// tensor (docs/FORMULAS.md, "Weights"): which tensors a tool quantizes,
// which it leaves in 16 or 32 bits (embeddings, output head, norms,
// routers), and the type llama.cpp picks for each tensor of each file type
// (ggml-org/llama.cpp src/llama-quant.cpp, llama_tensor_get_type).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "estimator-service/core/architecture.h"
#include "estimator-service/core/number_format.h"

namespace modelatlas::estimator {

struct WeightFile {
  // Bytes of the tensors (no file metadata).
  double bytes = 0;
  // Parameters counted (CountParameterTotals of the architecture).
  double parameters = 0;
  // bytes x 8 / parameters.
  double bits_per_parameter = 0;
  // Which tensors got which type, e.g. "token_embd Q4_K, output Q6_K, ...".
  std::string derivation;
};

// Whether the size of `format` depends on the tensors (every quantized
// format; plain formats store every tensor alike).
bool SizedByTensor(NumberFormat format);

// The weights of `arch` in `format` (group size for GPTQ/AWQ: 0 = 128).
// The errors of CountParameterTotals and EncodingOf; FAILED_PRECONDITION for
// a hybrid or state-space model (its tensors are not tabled yet: callers
// fall back on the format's flat bits).
absl::StatusOr<WeightFile> WeightFileOf(const Architecture& arch, NumberFormat format,
                                        int group_size = 0);

}  // namespace modelatlas::estimator
