// Validation of records before they are written: names, required fields,
// and every number finite and within its range. Nothing is clamped: a bad
// value is refused with the field that holds it.
#pragma once

#include "common/status/errors.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::catalog {

// Adds a violation for every problem, with field paths prefixed by `prefix`
// (e.g. "models[3]").
void ValidateModel(const common::v1::Model& model, const std::string& prefix,
                   FieldViolations* violations);
void ValidateHardware(const common::v1::Hardware& hardware, const std::string& prefix,
                      FieldViolations* violations);

// Replaces every byte of every string field (nested messages included)
// that is not part of well-formed UTF-8 with U+FFFD: for messages that echo
// input back (import reports), which a client could not parse otherwise.
void ReplaceInvalidUtf8(google::protobuf::Message* message);

}  // namespace modelatlas::catalog
