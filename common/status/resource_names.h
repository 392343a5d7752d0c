// Resource names and ids after AIP-122: `models/{model_id}`,
// `hardware/{hardware_id}`, ids matching ^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$.
#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace modelatlas {

inline constexpr absl::string_view kModelsCollection = "models";
inline constexpr absl::string_view kHardwareCollection = "hardware";

// True when `id` is a valid AIP-122 resource id.
bool IsValidResourceId(absl::string_view id);

// The id in "{collection}/{id}", or nullopt when `name` is not of that form
// or the id is invalid.
std::optional<std::string> ResourceIdFromName(absl::string_view name, absl::string_view collection);

// "{collection}/{id}".
std::string ResourceName(absl::string_view collection, absl::string_view id);

// A stable id derived from a display name: lower case, runs of other
// characters turned into one '-', trimmed to 63 characters, prefixed with
// "m-" when it would not start with a letter. "Megatron-BERT" -> "megatron-bert".
std::string ResourceIdFromDisplayName(absl::string_view display_name);

// The key display names and aliases are matched by, ignoring ASCII case and
// ASCII punctuation: ASCII letters (lower case) and digits, and every
// non-ASCII character as it is. "Megatron-BERT" and "megatron bert" both
// give "megatronbert"; "悟道 2.0" gives "悟道20", not "20".
std::string LookupKey(absl::string_view text);

}  // namespace modelatlas
