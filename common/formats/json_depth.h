// A bound on how deeply untrusted JSON nests, checked before any parser sees
// it: protobuf's JSON parser has no nesting limit of its own and takes time
// and stack growing with the depth (20,000 nested arrays: 12.5 CPU-seconds).
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace modelatlas {

// Deepest nesting of arrays and objects accepted in a config a caller sends
// (config.json, a LoRA adapter config), read into google.protobuf.Struct:
// that parser takes 33 levels of objects (50 of arrays) and refuses deeper
// ones only after spending time on them, with a message that does not say
// why; no real config nests past 5.
inline constexpr int kMaxJsonDepth = 32;

// INVALID_ARGUMENT (naming `field`, the bound and the byte where it was
// passed) when `json` nests arrays/objects deeper than `max_depth`; brackets
// inside strings are skipped. One pass, no allocation.
absl::Status CheckJsonDepth(absl::string_view json, int max_depth, absl::string_view field);

}  // namespace modelatlas
