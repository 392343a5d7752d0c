// Validation of records before they are written: names, required fields,
// and every number finite and within its range. Nothing is clamped: a bad
// value is refused with the field that holds it.
#pragma once

#include "common/status/errors.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/type/date.pb.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::catalog {

// Adds a violation for every problem, with field paths prefixed by `prefix`
// (e.g. "models[3]").
void ValidateModel(const common::v1::Model& model, const std::string& prefix,
                   FieldViolations* violations);
void ValidateHardware(const common::v1::Hardware& hardware, const std::string& prefix,
                      FieldViolations* violations);

// A date of the calendar (2024-02-29 but not 2023-02-29), or a year-month
// or year alone (zero day, or zero month and day), in years 1 to 9999.
bool IsValidDate(const google::type::Date& date);
// Within google.protobuf.Timestamp's range (0001-01-01 to 9999-12-31), with
// nanos 0 to 999,999,999.
bool IsValidTimestamp(const google::protobuf::Timestamp& timestamp);

// Replaces every byte of every string field (nested messages included)
// that is not part of well-formed UTF-8 with U+FFFD: for messages that echo
// input back (import reports), which a client could not parse otherwise.
void ReplaceInvalidUtf8(google::protobuf::Message* message);

}  // namespace modelatlas::catalog
