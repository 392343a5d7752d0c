#include "common/formats/safetensors.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/status/errors.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace modelatlas {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr char kHeaderField[] = "safetensors_header";
constexpr char kIndexField[] = "safetensors_index";
// Largest integer a JSON number (a double) holds exactly.
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

absl::Status HeaderError(absl::string_view message) {
  return InvalidFieldError(kHeaderField, message);
}

// A JSON number that is a whole number in [0, 2^53], else nullopt.
std::optional<uint64_t> WholeNumber(const Value& v) {
  if (v.kind_case() != Value::kNumberValue) return std::nullopt;
  const double d = v.number_value();
  if (!(d >= 0) || d > kMaxExactInteger || d != std::floor(d)) return std::nullopt;
  return static_cast<uint64_t>(d);
}

absl::StatusOr<Struct> ParseObject(absl::string_view json, absl::string_view field) {
  if (absl::Status depth = CheckJsonDepth(json, kMaxSafetensorsJsonDepth, field); !depth.ok()) {
    return depth;
  }
  Struct root;
  const auto parsed = google::protobuf::util::JsonStringToMessage(std::string(json), &root);
  if (!parsed.ok()) {
    return InvalidFieldError(field,
                             absl::StrCat("is not a JSON object: ", std::string(parsed.message())));
  }
  return root;
}

absl::StatusOr<SafetensorsTensor> ParseTensor(const std::string& name, const Value& v) {
  auto error = [&](absl::string_view what) {
    return HeaderError(absl::StrCat("tensor \"", name, "\": ", what));
  };
  if (v.kind_case() != Value::kStructValue) return error("is not an object");
  const auto& f = v.struct_value().fields();
  SafetensorsTensor t;
  t.name = name;

  auto dtype = f.find("dtype");
  if (dtype == f.end() || dtype->second.kind_case() != Value::kStringValue) {
    return error("missing \"dtype\"");
  }
  t.dtype = dtype->second.string_value();
  const std::optional<int> bits = SafetensorsDtypeBits(t.dtype);
  if (!bits) return error(absl::StrCat("unknown dtype \"", t.dtype, "\""));

  auto shape = f.find("shape");
  if (shape == f.end() || shape->second.kind_case() != Value::kListValue) {
    return error("missing \"shape\" (a list of dimensions)");
  }
  if (shape->second.list_value().values_size() > 64) return error("has more than 64 dimensions");
  uint64_t elements = 1;
  for (const Value& d : shape->second.list_value().values()) {
    const std::optional<uint64_t> dim = WholeNumber(d);
    if (!dim) return error("shape holds something other than a non-negative whole number");
    uint64_t product = 0;
    if (__builtin_mul_overflow(elements, *dim, &product) ||
        static_cast<double>(product) > kMaxExactInteger) {
      return error("has more than 2^53 elements");
    }
    elements = product;
    t.shape.push_back(static_cast<int64_t>(*dim));
  }
  t.parameters = static_cast<int64_t>(elements);

  auto offsets = f.find("data_offsets");
  if (offsets == f.end() || offsets->second.kind_case() != Value::kListValue ||
      offsets->second.list_value().values_size() != 2) {
    return error("missing \"data_offsets\" ([begin, end])");
  }
  const std::optional<uint64_t> begin = WholeNumber(offsets->second.list_value().values(0));
  const std::optional<uint64_t> end = WholeNumber(offsets->second.list_value().values(1));
  if (!begin || !end) return error("data_offsets must be non-negative whole numbers below 2^53");
  if (*end < *begin) return error("data_offsets end before they begin");
  t.begin = *begin;
  t.end = *end;

  // elements < 2^53 and bits <= 64, so the product fits 2^59.
  const uint64_t total_bits = elements * static_cast<uint64_t>(*bits);
  if (total_bits % 8 != 0) {
    return error(absl::StrCat(elements, " elements of ", t.dtype, " are not a whole byte count"));
  }
  if (t.bytes() != total_bits / 8) {
    return error(absl::StrCat("data_offsets [", t.begin, ", ", t.end, "] span ", t.bytes(),
                              " bytes; shape x ", t.dtype, " needs ", total_bits / 8));
  }
  return t;
}

}  // namespace

std::optional<int> SafetensorsDtypeBits(absl::string_view dtype) {
  // The dtypes of the safetensors crate (safetensors/src/tensor.rs, Dtype::bitsize).
  static const auto* bits = new std::map<std::string, int, std::less<>>{
      {"BOOL", 8}, {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
      {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
      {"U16", 16}, {"F16", 16},    {"BF16", 16},   {"I32", 32},    {"U32", 32},
      {"F32", 32}, {"C64", 64},    {"F64", 64},    {"I64", 64},    {"U64", 64}};
  auto it = bits->find(dtype);
  if (it == bits->end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<uint64_t> SafetensorsHeaderLength(absl::string_view first_bytes) {
  if (first_bytes.size() < kSafetensorsPrefixBytes) {
    return absl::OutOfRangeError(
        absl::StrCat("a safetensors file starts with an 8-byte header length; got ",
                     first_bytes.size(), " bytes"));
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(first_bytes[i]);
  if (n == 0) return HeaderError("header length is 0");
  if (n > kMaxSafetensorsHeaderBytes) {
    return HeaderError(absl::StrCat("header length ", n, " is above the limit of ",
                                    kMaxSafetensorsHeaderBytes, " bytes"));
  }
  return n;
}

absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(absl::string_view json) {
  if (json.size() > kMaxSafetensorsHeaderBytes) {
    return HeaderError(
        absl::StrCat("is ", json.size(), " bytes; the limit is ", kMaxSafetensorsHeaderBytes));
  }
  // The reference writer pads the header with spaces; the reader requires '{'.
  if (json.empty() || json.front() != '{') return HeaderError("does not start with '{'");
  absl::StatusOr<Struct> root = ParseObject(json, kHeaderField);
  if (!root.ok()) return root.status();

  SafetensorsHeader h;
  h.header_bytes = json.size();
  for (const auto& [name, value] : root->fields()) {
    if (name == "__metadata__") {
      if (value.kind_case() != Value::kStructValue)
        return HeaderError("__metadata__ is not an object");
      for (const auto& [key, v] : value.struct_value().fields()) {
        if (v.kind_case() != Value::kStringValue) {
          return HeaderError(absl::StrCat("__metadata__ \"", key, "\" is not a string"));
        }
        h.metadata[key] = v.string_value();
      }
      continue;
    }
    absl::StatusOr<SafetensorsTensor> t = ParseTensor(name, value);
    if (!t.ok()) return t.status();
    h.tensors.push_back(*std::move(t));
  }

  // Data ranges must tile [0, total) in order, as the reference reader checks.
  std::sort(h.tensors.begin(), h.tensors.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  const SafetensorsTensor* previous = nullptr;
  for (const SafetensorsTensor& t : h.tensors) {
    if (t.begin < expected) {
      return HeaderError(absl::StrCat("tensor \"", t.name, "\" data [", t.begin, ", ", t.end,
                                      ") overlaps tensor \"", previous->name, "\" [",
                                      previous->begin, ", ", previous->end, ")"));
    }
    if (t.begin > expected) {
      return HeaderError(absl::StrCat("tensor \"", t.name, "\" data begins at ", t.begin,
                                      "; the previous tensor ends at ", expected,
                                      " (gaps are not allowed)"));
    }
    expected = t.end;
    previous = &t;
    h.parameters_by_dtype[t.dtype] += t.parameters;
    h.bytes_by_dtype[t.dtype] += t.bytes();
    // Each tensor is < 2^53 elements and bytes; the sum of tiles is `expected`.
    (t.dtype == "BOOL" ? h.mask_elements : h.total_parameters) += t.parameters;
    if (h.total_parameters < 0 || static_cast<double>(h.total_parameters) > kMaxExactInteger) {
      return HeaderError("total parameters above 2^53");
    }
  }
  h.total_bytes = expected;
  return h;
}

absl::StatusOr<SafetensorsHeader> ParseSafetensorsFileStart(absl::string_view bytes) {
  absl::StatusOr<uint64_t> n = SafetensorsHeaderLength(bytes);
  if (!n.ok()) return n.status();
  if (bytes.size() - kSafetensorsPrefixBytes < *n) {
    return absl::OutOfRangeError(absl::StrCat("the safetensors header needs the file's first ",
                                              kSafetensorsPrefixBytes + *n, " bytes; got ",
                                              bytes.size()));
  }
  return ParseSafetensorsHeader(bytes.substr(kSafetensorsPrefixBytes, *n));
}

absl::StatusOr<SafetensorsHeader> ReadSafetensorsFileHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\""));
  std::string prefix(kSafetensorsPrefixBytes, '\0');
  in.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  prefix.resize(static_cast<size_t>(in.gcount()));
  absl::StatusOr<uint64_t> n = SafetensorsHeaderLength(prefix);
  if (!n.ok())
    return absl::Status(n.status().code(), absl::StrCat(path, ": ", n.status().message()));
  std::error_code ec;
  const uintmax_t file_size = std::filesystem::file_size(path, ec);
  if (ec || file_size < kSafetensorsPrefixBytes + *n) {
    return HeaderError(absl::StrCat(path, ": header length ", *n, " is beyond the file's end"));
  }
  std::string json(*n, '\0');  // bounded by kMaxSafetensorsHeaderBytes and the file size
  in.read(json.data(), static_cast<std::streamsize>(json.size()));
  if (static_cast<uint64_t>(in.gcount()) != *n) {
    return absl::DataLossError(absl::StrCat(path, ": short read of the header"));
  }
  absl::StatusOr<SafetensorsHeader> h = ParseSafetensorsHeader(json);
  if (!h.ok())
    return absl::Status(h.status().code(), absl::StrCat(path, ": ", h.status().message()));
  if (file_size != kSafetensorsPrefixBytes + *n + h->total_bytes) {
    return HeaderError(absl::StrCat(path, ": is ", file_size, " bytes; the header describes ",
                                    kSafetensorsPrefixBytes + *n + h->total_bytes));
  }
  return h;
}

absl::StatusOr<SafetensorsIndex> ParseSafetensorsIndex(absl::string_view json) {
  if (json.size() > kMaxSafetensorsIndexBytes) {
    return InvalidFieldError(kIndexField, absl::StrCat("is ", json.size(), " bytes; the limit is ",
                                                       kMaxSafetensorsIndexBytes));
  }
  absl::StatusOr<Struct> root = ParseObject(json, kIndexField);
  if (!root.ok()) return root.status();
  SafetensorsIndex index;
  const auto& f = root->fields();
  if (auto meta = f.find("metadata");
      meta != f.end() && meta->second.kind_case() == Value::kStructValue) {
    const auto& m = meta->second.struct_value().fields();
    if (auto total = m.find("total_size");
        total != m.end() && total->second.kind_case() != Value::kNullValue) {
      std::optional<uint64_t> bytes = WholeNumber(total->second);
      if (!bytes) {
        return InvalidFieldError(kIndexField,
                                 "metadata.total_size must be a non-negative whole number");
      }
      index.total_size = bytes;
    }
  }
  auto map = f.find("weight_map");
  if (map == f.end() || map->second.kind_case() != Value::kStructValue ||
      map->second.struct_value().fields().empty()) {
    return InvalidFieldError(kIndexField, "missing \"weight_map\" (tensor -> shard file)");
  }
  std::set<std::string> shards;
  for (const auto& [tensor, file] : map->second.struct_value().fields()) {
    if (file.kind_case() != Value::kStringValue) {
      return InvalidFieldError(kIndexField,
                               absl::StrCat("weight_map \"", tensor, "\" is not a file name"));
    }
    const std::string& name = file.string_value();
    if (name.empty() || name.front() == '/' || name.find("..") != std::string::npos ||
        name.find('\\') != std::string::npos || name.find('\0') != std::string::npos) {
      return InvalidFieldError(kIndexField, absl::StrCat("weight_map \"", tensor,
                                                         "\" names an unsafe path \"", name, "\""));
    }
    index.weight_map[tensor] = name;
    shards.insert(name);
  }
  index.shards.assign(shards.begin(), shards.end());
  return index;
}

}  // namespace modelatlas
