// List filters after AIP-160, checked against the record's descriptor and
// evaluated on records by protobuf reflection.
//
//   parameters > 1e9 AND domains:"Language" AND accessibility = OPEN_WEIGHTS_UNRESTRICTED
//   NOT frontier_model = true OR confidence = CONFIDENT
//   display_name:"llama"          (text match: contains, ignoring case)
//   architecture.num_experts > 0  (nested fields)
//   publication_date >= "2023-01-01"
//   training_compute_flop:*       (the field is set)
//   "bert"                        (bare text: display name contains it, ignoring case)
//
// Precedence is AIP-160's: NOT binds tightest, then OR, then AND (also written
// as juxtaposition), so `a AND b OR c` means `a AND (b OR c)`.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace modelatlas::query {

// Longest filter accepted, characters.
inline constexpr size_t kMaxFilterLength = 4096;

class Filter {
 public:
  // Parses `text` for records of type `descriptor`. Empty text matches
  // everything. INVALID_ARGUMENT (field "filter") names the problem and its
  // position: unknown field, wrong type, bad syntax.
  static absl::StatusOr<Filter> Parse(absl::string_view text,
                                      const google::protobuf::Descriptor* descriptor);

  bool Matches(const google::protobuf::Message& record) const;
  bool empty() const { return root_ == nullptr; }

  // A test that every record this filter accepts passes: one of the terms
  // AND-ed at the filter's top, in a form a store can apply to a column while
  // it reads (catalog-service pushes these into SQL). Only narrowing: the
  // caller still evaluates Matches() on what the store returns.
  struct NecessaryTest {
    enum class Op { kLess, kLessOrEqual, kEqual, kGreaterOrEqual, kGreater, kContains };
    // A top-level field: a singular number or date with presence (the value
    // OrderValueOf gives; an unset field passes no test), or a list of text
    // (kContains: some element, lower-cased, contains `text`).
    std::string field;
    Op op = Op::kEqual;
    double number = 0;  // finite; dates as yyyymmdd
    std::string text;   // lower case
  };
  std::vector<NecessaryTest> NecessaryTests() const;

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
};

// One key of an order_by clause.
struct OrderKey {
  // Fields from the record down to the scalar, e.g. {architecture, num_layers}.
  std::vector<const google::protobuf::FieldDescriptor*> path;
  bool descending = false;
};

// Parses AIP-132 `order_by`: "field [desc], other_field". Only singular
// scalars (numbers, strings, enums, bools, dates, timestamps) can be keys.
absl::StatusOr<std::vector<OrderKey>> ParseOrderBy(absl::string_view text,
                                                   const google::protobuf::Descriptor* descriptor);

// The value `record` sorts by under `key`, as OrderedBefore compares it:
// numbers, enums, bools, dates (yyyymmdd) and timestamps (Unix seconds) as
// double, text as string (compared bytewise); nullopt when the field is unset
// (unset values sort last in either direction). Stores that index a sort key
// keep this value, so their order is this one by construction.
std::optional<std::variant<double, std::string>> OrderValueOf(
    const google::protobuf::Message& record, const OrderKey& key);

// Strict weak order of two records under `keys`; unset values sort last in
// either direction; ties keep the caller's order.
bool OrderedBefore(const google::protobuf::Message& a, const google::protobuf::Message& b,
                   const std::vector<OrderKey>& keys);

}  // namespace modelatlas::query
