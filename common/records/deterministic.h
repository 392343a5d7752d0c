// A message's bytes with map entries in key order, so that the same content
// always gives the same bytes: what the shipped dataset's generator prints
// (a regenerated file diffs by record) and what the catalog fingerprints
// (a record nobody changed is recognised at the next start).
#pragma once

#include <string>

#include "google/protobuf/message.h"

namespace modelatlas {

std::string DeterministicBytes(const google::protobuf::Message& message);

}  // namespace modelatlas
