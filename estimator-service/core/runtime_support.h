// Which model families the runtime versions a runtime fit models can load
// (runtime_fit.h: vLLM 0.11.x, SGLang 0.5.x before PR #10975, llama.cpp at
// 001d906a), and for a family they cannot, the first version that can, with
// the evidence (docs/FORMULAS.md, "Which families each runtime loads"). A
// fit under a version that cannot load the model would apply that version's
// memory rules to a model it refuses at start-up: FitRuntime says so
// instead of "fits".
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace modelatlas::estimator {

enum class Runtime;

enum class FamilySupportStatus {
  // The family is not in the table: whether the version loads it is not on
  // record, and the fit says so.
  kUnknown,
  // The modeled version loads it (`since` names a later patch release of the
  // same line when the line's first release did not).
  kSupported,
  // A later version than the one modeled loads it: `first_version`.
  kLaterVersion,
  // Only as an embedding or classification model (vLLM's pooling runner):
  // no generation, no KV cache: the generation rules modeled do not apply.
  kPoolingOnly,
  // No version read loads it.
  kNotSupported,
};

struct FamilySupport {
  FamilySupportStatus status = FamilySupportStatus::kUnknown;
  // The config.json model_type the row is for ("gemma4").
  std::string family;
  // kLaterVersion: the first release that loads it ("vLLM 0.19.0");
  // kSupported: the patch release of the modeled line it needs, if any.
  std::string first_version;
  // Where that comes from: a pull request and its merge date, release
  // notes, a registry read at a version.
  std::string evidence;
};

// The support of `family` (a config.json model_type, the multimodal
// wrapper's when there is one: runtime.h ServedFamily) in the version of
// `runtime` that runtime_fit.cc models.
FamilySupport FamilySupportOf(Runtime runtime, absl::string_view family);

// Every family the table has a row for, for the test that every family the
// readers accept has one.
std::vector<std::string> FamiliesWithSupportOnRecord();

// A sentence for a fit's reason or notes: "vLLM 0.11.x cannot load gemma4:
// first in vLLM 0.19.0 (...)"; empty for kSupported without `since`.
std::string FamilySupportText(Runtime runtime, const std::string& version,
                              const FamilySupport& support);

}  // namespace modelatlas::estimator
