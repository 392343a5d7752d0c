// What a filter or an order_by can name in a record: every field path with
// its kind, for `modelatlas fields` and for "did you mean" when a filter
// names a field that does not exist.
#pragma once

#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"

namespace modelatlas::query {

struct QueryField {
  // Dotted path from the record, e.g. "architecture.num_layers".
  std::string path;
  // "number", "text", "enum", "bool", "date" (YYYY-MM-DD) or "timestamp".
  std::string kind;
  // A list: `field:value` tests membership; not a key for order_by.
  bool repeated = false;
  // For enums, the value names a filter compares with.
  std::vector<std::string> enum_values;
};

// Every comparable field of `descriptor`'s records, nested messages
// flattened, in declaration order. Maps and lists of messages hold no
// comparable field and are left out.
std::vector<QueryField> QueryFields(const google::protobuf::Descriptor* descriptor);

// The paths of QueryFields, for suggestions.
std::vector<std::string> QueryFieldPaths(const google::protobuf::Descriptor* descriptor);

}  // namespace modelatlas::query
