// Weight bytes as the files of each quantization tool really are, tensor by
// tensor (docs/FORMULAS.md, "Weights"): which tensors a tool quantizes,
// which it leaves in 16 or 32 bits (embeddings, output head, norms,
// routers), and the type llama.cpp picks for each tensor of each file type
// (ggml-org/llama.cpp src/llama-quant.cpp, llama_tensor_get_type).
#pragma once

#include <map>
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
  // Parameters per storage class ("Q4_K", "F32 norms, ...", "awq-int4
  // blocks: ..."), the same classes as the derivation.
  std::map<std::string, double> parameters_by_class;
};

// Whether the size of `format` depends on the tensors (every quantized
// format; plain formats store every tensor alike).
bool SizedByTensor(NumberFormat format);

// The weights of `arch` in `format` (group size for GPTQ, AWQ and int4, the
// compressed-tensors W4A16 layout: 0 = 128).
// `gguf_imatrix`: the GGUF file was quantized with an importance matrix
// (llama-quantize --imatrix; bartowski's and unsloth's files are): Q4_0 then
// keeps the first eighth of ffn_down in Q4_1. IQ files always have one.
// Hybrid and state-space models: the recurrent mixers' projections
// (in_proj, x_proj, dt_proj, out_proj) are quantized like any other matrix,
// conv1d, A, D, dt biases and norms stay F32 (llama.cpp's
// tensor_allows_quantization; 16-bit in safetensors checkpoints).
// The errors of CountParameterTotals and EncodingOf.
absl::StatusOr<WeightFile> WeightFileOf(const Architecture& arch, NumberFormat format,
                                        int group_size = 0, bool gguf_imatrix = false);

}  // namespace modelatlas::estimator
