#include "common/records/lookup_keys.h"

#include <algorithm>

#include "common/status/resource_names.h"

namespace modelatlas {

std::vector<std::string> LookupKeysOf(const common::v1::Model& model) {
  return {LookupKey(model.display_name())};
}

std::vector<std::string> LookupKeysOf(const common::v1::Hardware& hardware) {
  std::vector<std::string> keys = {LookupKey(hardware.display_name())};
  auto add = [&keys](const std::string& name) {
    std::string key = LookupKey(name);
    // A name repeated among the aliases is one key: one record, not two.
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  };
  for (const std::string& alias : hardware.aliases()) add(alias);
  for (const std::string& alias : hardware.shared_aliases()) add(alias);
  return keys;
}

}  // namespace modelatlas
