// The field numbers a message has, for the tests that guard the hand-written
// wire writers (answers/memory_answer.cc, answers/plan_wire.cc): a field
// added to one of their messages must be written by hand too, or the reply
// would silently lack it where the message path carries it.
#pragma once

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <vector>

namespace modelatlas::estimator {

inline std::vector<int> FieldNumbers(const google::protobuf::Descriptor* message) {
  std::vector<int> numbers;
  for (int i = 0; i < message->field_count(); ++i) numbers.push_back(message->field(i)->number());
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

}  // namespace modelatlas::estimator
