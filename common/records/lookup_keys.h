// The names a record answers to, as lookup keys (LookupKey: case folded,
// ASCII punctuation dropped): a model's display name; a hardware record's
// display name, aliases and shared aliases (names that fit several records,
// such as "A100" or "M3 Max", which a lookup answers with the candidates
// rather than choosing one). The catalog stores them with each record and
// the estimator's snapshot indexes the same keys, so both resolve a name
// the same way.
#pragma once

#include <string>
#include <vector>

#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas {

std::vector<std::string> LookupKeysOf(const common::v1::Model& model);
std::vector<std::string> LookupKeysOf(const common::v1::Hardware& hardware);

}  // namespace modelatlas
