#include "cli/model_source.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/formats/gguf.h"
#include "common/formats/safetensors.h"

ABSL_FLAG(std::string, hf, "",
          "A Hugging Face repository instead of MODEL: ORG/NAME[@REVISION] (the estimator "
          "fetches its config.json and safetensors headers; the answer names the commit)");
ABSL_FLAG(std::string, gguf, "",
          "A local GGUF file instead of MODEL (only its header is read and sent)");
ABSL_FLAG(std::string, safetensors, "",
          "A local .safetensors file or model.safetensors.index.json instead of MODEL (only "
          "headers are read; config.json beside it gives the architecture)");
ABSL_FLAG(std::string, hf_config, "", "A Hugging Face config.json file instead of MODEL");
ABSL_FLAG(std::string, mmproj, "",
          "With --gguf: llama.cpp's multimodal projector file (mmproj-*.gguf); its vision or "
          "audio encoder and projector are sized from its header and added");
ABSL_FLAG(std::string, lora_config, "",
          "memory, plan: LoRA adapters served with the model, from a PEFT adapter_config.json");
ABSL_FLAG(int32_t, lora_adapters, 1, "memory, plan: LoRA adapters resident at once");
ABSL_FLAG(std::string, draft, "",
          "memory, plan: a draft model for speculative decoding: a catalog name, "
          "hf:ORG/NAME[@REV], gguf:FILE or hf_config:FILE");

namespace modelatlas::cli {
namespace {

namespace fs = std::filesystem;
namespace v1 = estimator::v1;

absl::StatusOr<std::string> ReadPrefix(const std::string& path, uint64_t bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  std::string out(bytes, '\0');
  in.read(out.data(), static_cast<std::streamsize>(bytes));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

const std::vector<const char*>& ModelSourceFlags() {
  static const auto* flags =
      new std::vector<const char*>{"hf", "gguf", "mmproj", "safetensors", "hf_config"};
  return *flags;
}

bool AnyModelSourceFlag() {
  return !absl::GetFlag(FLAGS_hf).empty() || !absl::GetFlag(FLAGS_gguf).empty() ||
         !absl::GetFlag(FLAGS_safetensors).empty() || !absl::GetFlag(FLAGS_hf_config).empty();
}

absl::StatusOr<std::string> ReadGgufHeaderBytes(const std::string& path) {
  uint64_t want = 1 << 20;
  for (;;) {
    absl::StatusOr<std::string> prefix = ReadPrefix(path, want);
    if (!prefix.ok()) return prefix.status();
    absl::StatusOr<GgufParseResult> parsed = ParseGgufHeader(*prefix);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is not a GGUF file: ", parsed.status().message()));
    }
    if (parsed->complete) return prefix->substr(0, parsed->header.data_offset);
    if (prefix->size() < want) {
      return absl::InvalidArgumentError(absl::StrCat(path, " ends before its GGUF header does"));
    }
    want = std::max<uint64_t>(parsed->bytes_needed, 2 * want);
    if (want > kMaxGgufHeaderBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": GGUF header beyond ", kMaxGgufHeaderBytes, " bytes"));
    }
  }
}

absl::StatusOr<std::string> ReadSafetensorsHeaderBytes(const std::string& path) {
  absl::StatusOr<std::string> first = ReadPrefix(path, kSafetensorsPrefixBytes);
  if (!first.ok()) return first.status();
  if (first->size() < kSafetensorsPrefixBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a safetensors file"));
  }
  absl::StatusOr<uint64_t> length = SafetensorsHeaderLength(*first);
  if (!length.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a safetensors file: ", length.status().message()));
  }
  absl::StatusOr<std::string> header = ReadPrefix(path, kSafetensorsPrefixBytes + *length);
  if (!header.ok()) return header.status();
  if (header->size() < kSafetensorsPrefixBytes + *length) {
    return absl::InvalidArgumentError(absl::StrCat(path, " ends before its header does"));
  }
  return header;
}

const std::vector<const char*>& ServingFlags() {
  static const auto* flags = new std::vector<const char*>{"lora_config", "lora_adapters", "draft"};
  return *flags;
}

absl::StatusOr<std::optional<v1::LoraAdapter>> LoraFromFlags() {
  const std::string path = absl::GetFlag(FLAGS_lora_config);
  if (path.empty()) return std::nullopt;
  absl::StatusOr<std::string> text = ReadWhole(path);
  if (!text.ok()) return text.status();
  v1::LoraAdapter lora;
  lora.set_adapter_config_json(*std::move(text));
  lora.set_adapters(absl::GetFlag(FLAGS_lora_adapters));
  return lora;
}

absl::StatusOr<std::optional<v1::ModelSource>> DraftFromFlags() {
  const std::string spec = absl::GetFlag(FLAGS_draft);
  if (spec.empty()) return std::nullopt;
  v1::ModelSource draft;
  absl::string_view rest = spec;
  if (absl::ConsumePrefix(&rest, "hf:")) {
    std::vector<std::string> parts = absl::StrSplit(rest, absl::MaxSplits('@', 1));
    draft.mutable_hf_repo()->set_id(parts[0]);
    if (parts.size() > 1) draft.mutable_hf_repo()->set_revision(parts[1]);
  } else if (absl::ConsumePrefix(&rest, "gguf:")) {
    absl::StatusOr<std::string> header = ReadGgufHeaderBytes(std::string(rest));
    if (!header.ok()) return header.status();
    draft.mutable_gguf_header()->set_header(*std::move(header));
    draft.mutable_gguf_header()->set_file_name(fs::path(std::string(rest)).filename().string());
  } else if (absl::ConsumePrefix(&rest, "hf_config:")) {
    absl::StatusOr<std::string> text = ReadWhole(std::string(rest));
    if (!text.ok()) return text.status();
    draft.mutable_inline_model()->set_hf_config_json(*std::move(text));
    draft.mutable_inline_model()->set_display_name(fs::path(std::string(rest)).filename().string());
  } else {
    draft.set_catalog_name(spec);
  }
  return draft;
}

absl::StatusOr<v1::ModelSource> ModelSourceFromFlags(const std::vector<std::string>& args) {
  v1::ModelSource source;
  int given = 0;
  const std::string hf = absl::GetFlag(FLAGS_hf);
  const std::string gguf = absl::GetFlag(FLAGS_gguf);
  const std::string safetensors = absl::GetFlag(FLAGS_safetensors);
  const std::string config = absl::GetFlag(FLAGS_hf_config);
  const std::string mmproj = absl::GetFlag(FLAGS_mmproj);
  if (!args.empty() && !args[0].empty()) {
    ++given;
    source.set_catalog_name(args[0]);
  }
  if (!hf.empty()) {
    ++given;
    std::vector<std::string> parts = absl::StrSplit(hf, absl::MaxSplits('@', 1));
    source.mutable_hf_repo()->set_id(parts[0]);
    if (parts.size() > 1) source.mutable_hf_repo()->set_revision(parts[1]);
  }
  if (!gguf.empty()) {
    ++given;
    absl::StatusOr<std::string> header = ReadGgufHeaderBytes(gguf);
    if (!header.ok()) return header.status();
    source.mutable_gguf_header()->set_header(*std::move(header));
    source.mutable_gguf_header()->set_file_name(fs::path(gguf).filename().string());
    if (!mmproj.empty()) {
      absl::StatusOr<std::string> projector = ReadGgufHeaderBytes(mmproj);
      if (!projector.ok()) return projector.status();
      source.mutable_gguf_header()->set_mmproj_header(*std::move(projector));
      source.mutable_gguf_header()->set_mmproj_file_name(fs::path(mmproj).filename().string());
    }
  } else if (!mmproj.empty()) {
    return absl::InvalidArgumentError("--mmproj goes with --gguf (the model's own GGUF file)");
  }
  if (!safetensors.empty()) {
    ++given;
    v1::ModelFileHeader* file = source.mutable_safetensors_header();
    const fs::path path(safetensors);
    file->set_file_name(path.filename().string());
    std::vector<std::string> shards = {safetensors};
    if (absl::EndsWith(safetensors, ".json")) {
      absl::StatusOr<std::string> index = ReadWhole(safetensors);
      if (!index.ok()) return index.status();
      absl::StatusOr<SafetensorsIndex> parsed = ParseSafetensorsIndex(*index);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(safetensors, ": ", parsed.status().message()));
      }
      file->set_index_json(*index);
      shards.clear();
      for (const std::string& shard : parsed->shards) {
        shards.push_back((path.parent_path() / shard).string());
      }
    }
    for (size_t i = 0; i < shards.size(); ++i) {
      absl::StatusOr<std::string> header = ReadSafetensorsHeaderBytes(shards[i]);
      if (!header.ok()) return header.status();
      if (i == 0) {
        file->set_header(*std::move(header));
      } else {
        file->add_more_headers(*std::move(header));
      }
    }
    const fs::path beside = path.parent_path() / "config.json";
    const std::string config_path = !config.empty() ? config : beside.string();
    if (!config.empty() || fs::exists(beside)) {
      absl::StatusOr<std::string> text = ReadWhole(config_path);
      if (!text.ok()) return text.status();
      file->set_config_json(*std::move(text));
    }
  } else if (!config.empty()) {
    ++given;
    absl::StatusOr<std::string> text = ReadWhole(config);
    if (!text.ok()) return text.status();
    source.mutable_inline_model()->set_hf_config_json(*std::move(text));
    source.mutable_inline_model()->set_display_name(fs::path(config).filename().string());
  }
  if (given == 0) {
    return absl::InvalidArgumentError(
        "name a MODEL, or give --hf=ORG/NAME[@REV], --gguf=FILE, --safetensors=FILE or "
        "--hf_config=FILE");
  }
  if (given > 1) {
    return absl::InvalidArgumentError(
        "give one model: MODEL, --hf, --gguf, --safetensors or --hf_config (--hf_config goes "
        "with --safetensors)");
  }
  return source;
}

}  // namespace modelatlas::cli
