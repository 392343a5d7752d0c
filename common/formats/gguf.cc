#include "common/formats/gguf.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/status/errors.h"

namespace modelatlas {
namespace {

constexpr char kField[] = "gguf_header";
// ggml's limits: GGML_MAX_DIMS and GGML_MAX_NAME (names are shorter than 64).
constexpr uint32_t kMaxDims = 4;
constexpr uint64_t kMaxTensorNameBytes = 63;
constexpr uint64_t kMaxKeyBytes = 65535;  // docs/gguf.md: keys are at most 2^16-1 bytes

// ggml type traits: block size in elements and bytes per block, indexed by
// enum ggml_type. From ggml-org/ggml at d99724f2b141fed9e1a9f402213506c081433465:
// include/ggml.h (enum ggml_type), src/ggml.c (type_traits[]: .blck_size,
// .type_size = sizeof(block_*)) and src/ggml-common.h (the block structs and
// their static_asserts, QK_K = 256, K_SCALE_SIZE = 12, IQ3S_N_SCALE = QK_K/64).
// Removed ids (4, 5, 31-33, 36-38) have no entry.
constexpr std::array<GgmlTypeTraits, 43> kGgmlTypes = {{
    {"f32", 1, 4},         // 0  GGML_TYPE_F32
    {"f16", 1, 2},         // 1  GGML_TYPE_F16
    {"q4_0", 32, 18},      // 2  half d + 16 B of nibbles
    {"q4_1", 32, 20},      // 3  half d, m + 16 B
    {nullptr, 0, 0},       // 4  Q4_2, removed
    {nullptr, 0, 0},       // 5  Q4_3, removed
    {"q5_0", 32, 22},      // 6  half d + u32 qh + 16 B
    {"q5_1", 32, 24},      // 7  half d, m + u32 qh + 16 B
    {"q8_0", 32, 34},      // 8  half d + 32 B
    {"q8_1", 32, 36},      // 9  half d, s + 32 B
    {"q2_K", 256, 84},     // 10 2 halves + QK_K/16 + QK_K/4
    {"q3_K", 256, 110},    // 11 half + QK_K/4 + QK_K/8 + 12
    {"q4_K", 256, 144},    // 12 2 halves + 12 + QK_K/2
    {"q5_K", 256, 176},    // 13 2 halves + 12 + QK_K/2 + QK_K/8
    {"q6_K", 256, 210},    // 14 half + QK_K/16 + 3*QK_K/4
    {"q8_K", 256, 292},    // 15 float + QK_K + QK_K/16 int16
    {"iq2_xxs", 256, 66},  // 16 half + QK_K/8 uint16
    {"iq2_xs", 256, 74},   // 17 half + QK_K/8 uint16 + QK_K/32
    {"iq3_xxs", 256, 98},  // 18 half + 3*(QK_K/8)
    {"iq1_s", 256, 50},    // 19 half + QK_K/8 + QK_K/16
    {"iq4_nl", 32, 18},    // 20 half + QK4_NL/2
    {"iq3_s", 256, 110},   // 21 half + 13*(QK_K/32) + QK_K/64
    {"iq2_s", 256, 82},    // 22 half + QK_K/4 + QK_K/16
    {"iq4_xs", 256, 136},  // 23 half + uint16 + QK_K/64 + QK_K/2
    {"i8", 1, 1},          // 24
    {"i16", 1, 2},         // 25
    {"i32", 1, 4},         // 26
    {"i64", 1, 8},         // 27
    {"f64", 1, 8},         // 28
    {"iq1_m", 256, 56},    // 29 QK_K/8 + QK_K/16 + QK_K/32
    {"bf16", 1, 2},        // 30
    {nullptr, 0, 0},       // 31 Q4_0_4_4, removed
    {nullptr, 0, 0},       // 32 Q4_0_4_8, removed
    {nullptr, 0, 0},       // 33 Q4_0_8_8, removed
    {"tq1_0", 256, 54},    // 34 half + QK_K/64 + (QK_K - 4*QK_K/64)/5
    {"tq2_0", 256, 66},    // 35 half + QK_K/4
    {nullptr, 0, 0},       // 36 IQ4_NL_4_4, removed
    {nullptr, 0, 0},       // 37 IQ4_NL_4_8, removed
    {nullptr, 0, 0},       // 38 IQ4_NL_8_8, removed
    {"mxfp4", 32, 17},     // 39 u8 e + QK_MXFP4/2
    {"nvfp4", 64, 36},     // 40 4 u8 scales + QK_NVFP4/2
    {"q1_0", 128, 18},     // 41 half + QK1_0/8
    {"q2_0", 64, 18},      // 42 half + QK2_0/4
}};

absl::Status Error(absl::string_view message) { return InvalidFieldError(kField, message); }

bool MulOverflows(uint64_t a, uint64_t b, uint64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}
bool AddOverflows(uint64_t a, uint64_t b, uint64_t* out) {
  return __builtin_add_overflow(a, b, out);
}

// Bytes of one scalar value of `type`; 0 for string and array.
uint64_t ScalarBytes(uint32_t type) {
  switch (static_cast<GgufValueType>(type)) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
      return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32:
      return 4;
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64:
      return 8;
    default:
      return 0;
  }
}

// A cursor over the buffer. A read past its end records how long a prefix
// would have been needed; a read past kMaxGgufHeaderBytes is an error.
class Reader {
 public:
  explicit Reader(absl::string_view data) : data_(data) {}

  bool ok() const { return need_ == 0 && error_.ok(); }
  uint64_t pos() const { return pos_; }
  uint64_t need() const { return need_; }
  const absl::Status& error() const { return error_; }
  bool Fail(absl::Status status) {
    if (error_.ok()) error_ = std::move(status);
    return false;
  }

  bool Take(uint64_t n, absl::string_view* out) {
    if (!ok()) return false;
    uint64_t end = 0;
    if (AddOverflows(pos_, n, &end) || end > kMaxGgufHeaderBytes) {
      return Fail(
          Error(absl::StrCat("a ", n, "-byte field at offset ", pos_,
                             " runs past the header limit of ", kMaxGgufHeaderBytes, " bytes")));
    }
    if (end > data_.size()) {
      need_ = end;
      return false;
    }
    if (out != nullptr) *out = data_.substr(pos_, n);
    pos_ = end;
    return true;
  }
  template <typename T>
  bool Le(T* value) {
    absl::string_view bytes;
    if (!Take(sizeof(T), &bytes)) return false;
    uint64_t v = 0;
    for (size_t i = sizeof(T); i-- > 0;) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
    if constexpr (std::is_same_v<T, float>) {
      uint32_t u = static_cast<uint32_t>(v);
      std::memcpy(value, &u, sizeof(u));
    } else if constexpr (std::is_same_v<T, double>) {
      std::memcpy(value, &v, sizeof(v));
    } else {
      *value = static_cast<T>(v);
    }
    return true;
  }
  // A GGUF string: u64 length, then the bytes. `max` bounds the length.
  bool String(std::string* out, uint64_t max, absl::string_view what) {
    uint64_t length = 0;
    if (!Le(&length)) return false;
    if (length > max) {
      return Fail(Error(absl::StrCat(what, " at offset ", pos_ - 8, " is ", length,
                                     " bytes long; the limit is ", max)));
    }
    absl::string_view bytes;
    if (!Take(length, &bytes)) return false;
    if (out != nullptr) out->assign(bytes.data(), bytes.size());
    return true;
  }
  // Fails unless `count` items of at least `min_bytes` each could still fit
  // under kMaxGgufHeaderBytes: bounds every loop by the header limit.
  bool CheckCount(uint64_t count, uint64_t min_bytes, absl::string_view what) {
    if (!ok()) return false;
    const uint64_t room = kMaxGgufHeaderBytes - std::min(pos_, kMaxGgufHeaderBytes);
    if (count > room / min_bytes) {
      return Fail(Error(absl::StrCat(what, " count ", count, " cannot fit the header limit of ",
                                     kMaxGgufHeaderBytes, " bytes")));
    }
    return true;
  }

 private:
  absl::string_view data_;
  uint64_t pos_ = 0;
  uint64_t need_ = 0;
  absl::Status error_;
};

bool ReadValue(Reader& r, uint32_t type, int depth, const std::string& key, GgufValue* out);

bool ReadArray(Reader& r, int depth, const std::string& key, GgufArray* out) {
  if (depth > kMaxGgufArrayDepth) {
    return r.Fail(Error(absl::StrCat("key \"", key, "\": arrays nested deeper than ",
                                     kMaxGgufArrayDepth, " levels")));
  }
  uint32_t type = 0;
  uint64_t length = 0;
  if (!r.Le(&type) || !r.Le(&length)) return false;
  if (type > static_cast<uint32_t>(GgufValueType::kFloat64)) {
    return r.Fail(Error(absl::StrCat("key \"", key, "\": unknown array element type ", type)));
  }
  const uint64_t scalar = ScalarBytes(type);
  const uint64_t min_bytes = scalar > 0                                              ? scalar
                             : type == static_cast<uint32_t>(GgufValueType::kString) ? 8
                                                                                     : 12;
  if (!r.CheckCount(length, min_bytes, absl::StrCat("key \"", key, "\": array element"))) {
    return false;
  }
  out->element_type = static_cast<GgufValueType>(type);
  out->length = length;
  if (scalar > 0 && type != static_cast<uint32_t>(GgufValueType::kBool) &&
      length > kMaxGgufKeptArrayElements) {
    return r.Take(length * scalar, nullptr);  // bounded by CheckCount
  }
  if (type == static_cast<uint32_t>(GgufValueType::kString)) {
    const std::string what = absl::StrCat("key \"", key, "\" element");
    for (uint64_t i = 0; i < length; ++i) {
      if (!r.String(nullptr, kMaxGgufHeaderBytes, what)) return false;
    }
    return true;
  }
  for (uint64_t i = 0; i < length; ++i) {
    GgufValue element;
    if (!ReadValue(r, type, depth, key, &element)) return false;
    if (scalar > 0 && length <= kMaxGgufKeptArrayElements) {
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_arithmetic_v<V>) out->numbers.push_back(static_cast<double>(v));
          },
          element);
    }
  }
  return true;
}

bool ReadValue(Reader& r, uint32_t type, int depth, const std::string& key, GgufValue* out) {
  switch (static_cast<GgufValueType>(type)) {
    case GgufValueType::kUint8: {
      uint8_t v = 0;
      if (!r.Le(&v)) return false;
      *out = uint64_t{v};
      return true;
    }
    case GgufValueType::kInt8: {
      uint8_t v = 0;
      if (!r.Le(&v)) return false;
      *out = int64_t{static_cast<int8_t>(v)};
      return true;
    }
    case GgufValueType::kUint16: {
      uint16_t v = 0;
      if (!r.Le(&v)) return false;
      *out = uint64_t{v};
      return true;
    }
    case GgufValueType::kInt16: {
      uint16_t v = 0;
      if (!r.Le(&v)) return false;
      *out = int64_t{static_cast<int16_t>(v)};
      return true;
    }
    case GgufValueType::kUint32: {
      uint32_t v = 0;
      if (!r.Le(&v)) return false;
      *out = uint64_t{v};
      return true;
    }
    case GgufValueType::kInt32: {
      uint32_t v = 0;
      if (!r.Le(&v)) return false;
      *out = int64_t{static_cast<int32_t>(v)};
      return true;
    }
    case GgufValueType::kFloat32: {
      float v = 0;
      if (!r.Le(&v)) return false;
      *out = double{v};
      return true;
    }
    case GgufValueType::kBool: {
      uint8_t v = 0;
      if (!r.Le(&v)) return false;
      if (v > 1) return r.Fail(Error(absl::StrCat("key \"", key, "\": bool value ", v)));
      *out = v == 1;
      return true;
    }
    case GgufValueType::kString: {
      std::string s;
      if (!r.String(&s, kMaxGgufHeaderBytes, absl::StrCat("key \"", key, "\" value"))) return false;
      *out = std::move(s);
      return true;
    }
    case GgufValueType::kArray: {
      GgufArray a;
      if (!ReadArray(r, depth + 1, key, &a)) return false;
      *out = std::move(a);
      return true;
    }
    case GgufValueType::kUint64: {
      uint64_t v = 0;
      if (!r.Le(&v)) return false;
      *out = v;
      return true;
    }
    case GgufValueType::kInt64: {
      uint64_t v = 0;
      if (!r.Le(&v)) return false;
      *out = static_cast<int64_t>(v);
      return true;
    }
    case GgufValueType::kFloat64: {
      double v = 0;
      if (!r.Le(&v)) return false;
      *out = v;
      return true;
    }
  }
  return r.Fail(Error(absl::StrCat("key \"", key, "\": unknown value type ", type)));
}

// An integer key, or the largest element of an integer array (per-layer values).
std::optional<int64_t> IntOrMax(const GgufHeader& h, const std::string& key) {
  if (std::optional<int64_t> v = h.GetInt(key)) return v;
  const GgufArray* a = h.GetArray(key);
  if (a == nullptr || a->numbers.empty()) return std::nullopt;
  const double max = *std::max_element(a->numbers.begin(), a->numbers.end());
  if (!(max >= 0) || max > 9.0e15) return std::nullopt;
  return static_cast<int64_t>(max);
}

void FillModelMetadata(GgufHeader& h) {
  GgufModelMetadata& m = h.model;
  m.architecture = h.GetString("general.architecture").value_or("");
  m.name = h.GetString("general.name").value_or("");
  const std::string a = m.architecture;
  m.block_count = h.GetInt(a + ".block_count");
  m.embedding_length = h.GetInt(a + ".embedding_length");
  m.feed_forward_length = IntOrMax(h, a + ".feed_forward_length");
  m.head_count = IntOrMax(h, a + ".attention.head_count");
  m.head_count_kv = IntOrMax(h, a + ".attention.head_count_kv");
  m.context_length = h.GetInt(a + ".context_length");
  m.expert_count = h.GetInt(a + ".expert_count");
  m.expert_used_count = h.GetInt(a + ".expert_used_count");
  m.key_length = h.GetInt(a + ".attention.key_length");
  if (const GgufArray* tokens = h.GetArray("tokenizer.ggml.tokens")) {
    m.vocab_size = static_cast<int64_t>(tokens->length);
  }
  m.file_type = h.GetInt("general.file_type");
  if (m.file_type) m.file_type_name = GgufFileTypeName(*m.file_type);
}

bool ReadTensorInfo(Reader& r, uint32_t alignment, GgufTensorInfo* t) {
  if (!r.String(&t->name, kMaxTensorNameBytes, "tensor name")) return false;
  auto fail = [&](absl::string_view what) {
    return r.Fail(Error(absl::StrCat("tensor \"", t->name, "\": ", what)));
  };
  uint32_t n_dims = 0;
  if (!r.Le(&n_dims)) return false;
  if (n_dims > kMaxDims) return fail(absl::StrCat(n_dims, " dimensions; ggml allows ", kMaxDims));
  t->elements = 1;
  for (uint32_t i = 0; i < n_dims; ++i) {
    uint64_t d = 0;
    if (!r.Le(&d)) return false;
    if (d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return fail(absl::StrCat("dimension ", i, " is ", d));
    }
    t->dims.push_back(d);
    if (MulOverflows(t->elements, d, &t->elements) ||
        t->elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return fail("element count overflows 63 bits");
    }
  }
  if (!r.Le(&t->ggml_type)) return false;
  const std::optional<GgmlTypeTraits> traits = GgmlTypeInfo(t->ggml_type);
  if (!traits) return fail(absl::StrCat("unknown or removed ggml type ", t->ggml_type));
  t->type_name = traits->name;
  const uint64_t row = t->dims.empty() ? 1 : t->dims[0];
  if (row % traits->block_size != 0) {
    return fail(absl::StrCat("rows of ", row, " elements are not whole ", t->type_name,
                             " blocks of ", traits->block_size));
  }
  if (MulOverflows(t->elements / traits->block_size, traits->type_size, &t->bytes)) {
    return fail("byte size overflows 64 bits");
  }
  if (!r.Le(&t->offset)) return false;
  if (t->offset % alignment != 0) {
    return fail(
        absl::StrCat("data offset ", t->offset, " is not a multiple of the alignment ", alignment));
  }
  return true;
}

}  // namespace

std::string GgufFileTypeName(int64_t file_type) {
  // llama.cpp include/llama.h, enum llama_ftype: the values stable across
  // releases (4-6 and 33-35 were removed; newer ones are left out).
  static const auto* names = new std::map<int64_t, std::string>{
      {0, "F32"},      {1, "F16"},      {2, "Q4_0"},      {3, "Q4_1"},    {7, "Q8_0"},
      {8, "Q5_0"},     {9, "Q5_1"},     {10, "Q2_K"},     {11, "Q3_K_S"}, {12, "Q3_K_M"},
      {13, "Q3_K_L"},  {14, "Q4_K_S"},  {15, "Q4_K_M"},   {16, "Q5_K_S"}, {17, "Q5_K_M"},
      {18, "Q6_K"},    {19, "IQ2_XXS"}, {20, "IQ2_XS"},   {21, "Q2_K_S"}, {22, "IQ3_XS"},
      {23, "IQ3_XXS"}, {24, "IQ1_S"},   {25, "IQ4_NL"},   {26, "IQ3_S"},  {27, "IQ3_M"},
      {28, "IQ2_S"},   {29, "IQ2_M"},   {30, "IQ4_XS"},   {31, "IQ1_M"},  {32, "BF16"},
      {36, "TQ1_0"},   {37, "TQ2_0"},   {38, "MXFP4_MOE"}};
  auto it = names->find(file_type);
  return it == names->end() ? "" : it->second;
}

std::optional<GgmlTypeTraits> GgmlTypeInfo(uint32_t ggml_type) {
  if (ggml_type >= kGgmlTypes.size() || kGgmlTypes[ggml_type].name == nullptr) return std::nullopt;
  return kGgmlTypes[ggml_type];
}

std::optional<int64_t> GgufHeader::GetInt(absl::string_view key) const {
  auto it = metadata.find(std::string(key));
  if (it == metadata.end()) return std::nullopt;
  if (const auto* u = std::get_if<uint64_t>(&it->second)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&it->second)) return *i;
  return std::nullopt;
}

std::optional<std::string> GgufHeader::GetString(absl::string_view key) const {
  auto it = metadata.find(std::string(key));
  if (it == metadata.end()) return std::nullopt;
  if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  return std::nullopt;
}

const GgufArray* GgufHeader::GetArray(absl::string_view key) const {
  auto it = metadata.find(std::string(key));
  if (it == metadata.end()) return nullptr;
  return std::get_if<GgufArray>(&it->second);
}

absl::StatusOr<GgufParseResult> ParseGgufHeader(absl::string_view file_prefix) {
  GgufParseResult result;
  GgufHeader& h = result.header;
  Reader r(file_prefix);
  auto finish = [&]() -> absl::StatusOr<GgufParseResult> {
    if (!r.error().ok()) return r.error();
    result.complete = false;
    result.bytes_needed = r.need();
    result.header = GgufHeader();
    return result;
  };

  // Magic, compared on whatever prefix is there.
  constexpr absl::string_view kMagic("GGUF", 4);
  if (kMagic.substr(0, std::min(file_prefix.size(), kMagic.size())) !=
      file_prefix.substr(0, kMagic.size())) {
    return Error("does not start with the magic \"GGUF\"");
  }
  if (!r.Take(4, nullptr) || !r.Le(&h.version)) return finish();
  if ((h.version & 0xFFFF) == 0) {
    return Error(absl::StrCat("version ", h.version, ": big-endian GGUF files are not supported"));
  }
  if (h.version < 2 || h.version > 3) {
    return Error(absl::StrCat("GGUF version ", h.version, " is not supported (only 2 and 3)"));
  }
  uint64_t n_tensors = 0;
  uint64_t n_kv = 0;
  if (!r.Le(&n_tensors) || !r.Le(&n_kv)) return finish();
  // A key/value is at least 8 + 4 + 1 bytes; a tensor info at least 8 + 4 + 4 + 8.
  if (!r.CheckCount(n_kv, 13, "metadata key/value") || !r.CheckCount(n_tensors, 24, "tensor")) {
    return finish();
  }

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key;
    uint32_t type = 0;
    if (!r.String(&key, kMaxKeyBytes, "metadata key") || !r.Le(&type)) return finish();
    if (h.metadata.count(key)) return Error(absl::StrCat("duplicate metadata key \"", key, "\""));
    GgufValue value;
    if (!ReadValue(r, type, 0, key, &value)) return finish();
    if (key == "general.alignment") {
      if (type != static_cast<uint32_t>(GgufValueType::kUint32)) {
        return Error("general.alignment must be a uint32");
      }
      const uint64_t a = std::get<uint64_t>(value);
      if (a == 0 || (a & (a - 1)) != 0) {
        return Error(absl::StrCat("general.alignment ", a, " is not a power of two"));
      }
      h.alignment = static_cast<uint32_t>(a);
    }
    h.metadata.emplace(std::move(key), std::move(value));
  }

  std::set<std::string> names;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    if (!ReadTensorInfo(r, h.alignment, &t)) return finish();
    if (!names.insert(t.name).second) {
      return Error(absl::StrCat("duplicate tensor name \"", t.name, "\""));
    }
    h.tensors.push_back(std::move(t));
  }

  // The data section starts at the next multiple of the alignment.
  h.data_offset = (r.pos() + h.alignment - 1) / h.alignment * h.alignment;
  std::vector<const GgufTensorInfo*> by_offset;
  for (const GgufTensorInfo& t : h.tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return a->offset < b->offset; });
  uint64_t end = 0;
  const GgufTensorInfo* previous = nullptr;
  for (const GgufTensorInfo* t : by_offset) {
    if (previous != nullptr && t->offset < end) {
      return Error(absl::StrCat("tensor \"", t->name, "\" data at ", t->offset,
                                " overlaps tensor \"", previous->name, "\" ending at ", end));
    }
    if (AddOverflows(t->offset, t->bytes, &end)) {
      return Error(absl::StrCat("tensor \"", t->name, "\": offset + size overflows 64 bits"));
    }
    previous = t;
    h.bytes_by_type[t->type_name] += t->bytes;
    h.elements_by_type[t->type_name] += t->elements;
    // Sums of non-overlapping ranges below `end`, and element counts at most
    // 256 per byte: no overflow once `end` did not.
    h.total_bytes += t->bytes;
    if (AddOverflows(h.total_elements, t->elements, &h.total_elements)) {
      return Error("total element count overflows 64 bits");
    }
  }
  if (AddOverflows(h.data_offset, end, &h.file_bytes)) {
    return Error("the data section's end overflows 64 bits");
  }
  FillModelMetadata(h);
  result.complete = true;
  return result;
}

absl::StatusOr<GgufHeader> ReadGgufFileHeader(const std::string& path) {
  std::error_code ec;
  const uintmax_t file_size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\""));
  std::string prefix;
  uint64_t want = std::min<uint64_t>(file_size, 1 << 20);
  for (;;) {
    const size_t have = prefix.size();
    prefix.resize(want);
    in.read(prefix.data() + have, static_cast<std::streamsize>(want - have));
    if (static_cast<uint64_t>(in.gcount()) != want - have) {
      return absl::DataLossError(absl::StrCat(path, ": short read"));
    }
    absl::StatusOr<GgufParseResult> r = ParseGgufHeader(prefix);
    if (!r.ok()) {
      return absl::Status(r.status().code(), absl::StrCat(path, ": ", r.status().message()));
    }
    if (r->complete) {
      if (r->header.file_bytes > file_size) {
        return Error(absl::StrCat(path, ": is ", file_size, " bytes; its tensors end at byte ",
                                  r->header.file_bytes));
      }
      return std::move(r->header);
    }
    if (r->bytes_needed > file_size) {
      return Error(absl::StrCat(path, ": the file (", file_size,
                                " bytes) ends inside its header, which needs at least ",
                                r->bytes_needed));
    }
    want = std::min<uint64_t>(file_size, std::max<uint64_t>(r->bytes_needed, 2 * want));
  }
}

}  // namespace modelatlas
