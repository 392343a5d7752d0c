// Which model a command is about, from its argument or its source flags:
//   MODEL                       a catalog name
//   --hf=ORG/NAME[@REVISION]    a Hugging Face repository (the estimator fetches it)
//   --gguf=FILE                 a local GGUF file: its header only, never the weights
//   --mmproj=FILE               with --gguf: llama.cpp's multimodal projector file
//                               (header only): vision/audio encoder and projector
//   --safetensors=FILE          a local safetensors file, or a sharded
//                               checkpoint's model.safetensors.index.json (every
//                               shard's header); config.json beside it is sent too
//   --hf_config=FILE            a config.json
// The files are read here and their header bytes sent; the estimator parses
// them (common/formats), so parsing lives in one place.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "modelatlas/estimator/v1/model_source.pb.h"

namespace modelatlas::cli {

// The source flags every model command takes.
const std::vector<const char*>& ModelSourceFlags();

// True when --hf, --gguf, --safetensors or --hf_config is given.
bool AnyModelSourceFlag();

// The model `args` (first argument, may be absent) and the source flags
// name; INVALID_ARGUMENT when none or more than one is given, or a file
// cannot be read.
absl::StatusOr<estimator::v1::ModelSource> ModelSourceFromFlags(
    const std::vector<std::string>& args);

// What is served next to the model (`estimate memory`, `plan`):
//   --lora_config=FILE     a PEFT adapter_config.json (its r and target_modules)
//   --lora_adapters=N      adapters resident at once
//   --draft=SPEC           a draft model for speculative decoding: a catalog
//                          name, hf:ORG/NAME[@REV], gguf:FILE or hf_config:FILE
const std::vector<const char*>& ServingFlags();
absl::StatusOr<std::optional<estimator::v1::LoraAdapter>> LoraFromFlags();
absl::StatusOr<std::optional<estimator::v1::ModelSource>> DraftFromFlags();

// The first bytes of a GGUF file up to the end of its header (the tensor
// data not read); INVALID_ARGUMENT naming the file otherwise.
absl::StatusOr<std::string> ReadGgufHeaderBytes(const std::string& path);
// A safetensors file's 8-byte length and JSON header.
absl::StatusOr<std::string> ReadSafetensorsHeaderBytes(const std::string& path);

}  // namespace modelatlas::cli
