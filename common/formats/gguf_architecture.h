// The architecture in a GGUF file's metadata (llama.cpp).
//
// llama.cpp's convert_hf_to_gguf.py writes a checkpoint's config.json as
// `{general.architecture}.*` keys (gguf-py/gguf/constants.py: block_count,
// embedding_length, attention.head_count_kv, expert_feed_forward_length,
// ...). This reader puts them back under their config.json names and hands
// them to the config.json reader (hf_config.h), so a family's blocks are
// decided in one place whichever file they come in, and what config.json
// leaves to the tensors (biases, QK norms, a tied output head, the
// multi-token-prediction layers a file keeps) is read from the tensor names.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/formats/gguf.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas {

// The architecture of `header`'s model; `field` prefixes field violations
// (e.g. "source.gguf_header.metadata."). INVALID_ARGUMENT naming the key
// for missing metadata, and with reason UNSUPPORTED_MODEL_TYPE naming the
// supported general.architecture values for another family.
// published_parameter_count is the file's tensor total.
absl::StatusOr<common::v1::Architecture> ArchitectureFromGguf(const GgufHeader& header,
                                                              absl::string_view field);

// The general.architecture values read, sorted.
std::vector<std::string> GgufArchitecturesRead();

}  // namespace modelatlas
