// libFuzzer target: the AIP-160 filter and order_by parsers, and evaluating
// a parsed filter on a record.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/query/filter.h"
#include "modelatlas/common/v1/model.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto* descriptor = modelatlas::common::v1::Model::descriptor();
  auto filter = modelatlas::query::Filter::Parse(text, descriptor);
  if (filter.ok()) {
    modelatlas::common::v1::Model model;
    model.set_display_name("Fuzz");
    model.set_parameters(7e9);
    model.add_domains("Language");
    model.mutable_architecture()->set_num_layers(32);
    (void)filter->Matches(model);
  }
  (void)modelatlas::query::ParseOrderBy(text, descriptor);
  return 0;
}
