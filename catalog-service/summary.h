// Counting and grouping across the catalog ("models trained on A100, by
// organization"): the records a filter selects, counted per value of one
// field, with the sum, minimum and maximum of a numeric field per group.
// Plain C++ over the Catalog; the gRPC adapter only calls Summarize.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog-service/catalog.h"
#include "modelatlas/catalog/v1/catalog_service.pb.h"

namespace modelatlas::catalog {

struct SummaryQuery {
  std::string filter;       // AIP-160; empty = every record
  std::string group_by;     // a field path; empty = one group of all
  std::string value_field;  // a numeric single-valued field path; empty = counts only
};

// Checks group_by and value_field against Record's fields: INVALID_ARGUMENT
// names each bad one ("group_by", "value_field"), with the closest field
// names.
template <typename Record>
absl::Status ValidateSummaryQuery(const SummaryQuery& query);

// The summary of `records` (already filtered). A record whose group_by is a
// list counts once in the group of each distinct value; a record that does
// not set it counts in the group with the empty value. Groups: the largest
// first, ties by value. `revision` is copied into the answer.
template <typename Record>
absl::StatusOr<v1::Summary> SummarizeRecords(const std::vector<Record>& records,
                                             const SummaryQuery& query, int64_t revision);

// Validates the query, reads every record the filter selects and
// summarizes them.
template <typename Record>
absl::StatusOr<v1::Summary> Summarize(Catalog& catalog, const SummaryQuery& query);

}  // namespace modelatlas::catalog
