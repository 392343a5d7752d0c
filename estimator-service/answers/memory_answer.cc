#include "estimator-service/answers/memory_answer.h"

#include <google/protobuf/wire_format_lite.h>

#include <bit>
#include <cstring>
#include <memory>

#include "common/text/text_memo.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/core/units.h"

namespace modelatlas::estimator {
namespace {

using google::protobuf::internal::WireFormatLite;

// Field numbers below 16 have a one-byte tag; every field written here is
// below 16 (catalog_view, 140, is the service's).
constexpr size_t kTagBytes = 1;

// proto3 writes a double only when its bits are not all zero (-0.0 is
// written, 0.0 is not), as protobuf 3.21's generated code tests it.
bool DoublePresent(double value) {
  uint64_t raw;
  std::memcpy(&raw, &value, sizeof(raw));
  return raw != 0;
}

size_t StringField(const std::string& value) {
  return value.empty() ? 0 : kTagBytes + WireFormatLite::StringSize(value);
}
size_t Int64Field(int64_t value) {
  return value == 0 ? 0 : kTagBytes + WireFormatLite::Int64Size(value);
}
size_t BoolField(bool value) { return value ? kTagBytes + 1 : 0; }
size_t MessageField(size_t size) { return kTagBytes + WireFormatLite::LengthDelimitedSize(size); }

// The writers below put the bytes WireFormatLite's array writers put (tag,
// varint, little-endian fixed64), inline: they were a third of the reply's
// writing, one out-of-line call per field (docs/BENCHMARKS.md, session 14).
// Every tag here fits one byte (fields below 16).
static_assert(std::endian::native == std::endian::little, "doubles are written as their bytes");

uint8_t* WriteTag(int field, WireFormatLite::WireType type, uint8_t* target) {
  *target = static_cast<uint8_t>((field << 3) | type);
  return target + 1;
}
uint8_t* WriteVarint(uint64_t value, uint8_t* target) {
  while (value >= 0x80) {
    *target++ = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  *target = static_cast<uint8_t>(value);
  return target + 1;
}
uint8_t* WriteBytes(int field, const std::string& value, uint8_t* target) {
  target = WriteTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, target);
  target = WriteVarint(value.size(), target);
  std::memcpy(target, value.data(), value.size());
  return target + value.size();
}
uint8_t* WriteString(int field, const std::string& value, uint8_t* target) {
  return value.empty() ? target : WriteBytes(field, value, target);
}
// int64 and int32 (and enums) are varints of the value sign-extended to 64
// bits: a negative one takes ten bytes.
uint8_t* WriteInt64(int field, int64_t value, uint8_t* target) {
  if (value == 0) return target;
  target = WriteTag(field, WireFormatLite::WIRETYPE_VARINT, target);
  return WriteVarint(static_cast<uint64_t>(value), target);
}
uint8_t* WriteInt32(int field, int32_t value, uint8_t* target) {
  return WriteInt64(field, value, target);
}
uint8_t* WriteDouble(int field, double value, uint8_t* target) {
  if (!DoublePresent(value)) return target;
  target = WriteTag(field, WireFormatLite::WIRETYPE_FIXED64, target);
  std::memcpy(target, &value, sizeof(value));
  return target + sizeof(value);
}
uint8_t* WriteBool(int field, bool value, uint8_t* target) {
  if (!value) return target;
  target = WriteTag(field, WireFormatLite::WIRETYPE_VARINT, target);
  *target = 1;
  return target + 1;
}
uint8_t* WriteMessageHeader(int field, size_t size, uint8_t* target) {
  target = WriteTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, target);
  return WriteVarint(size, target);
}

size_t LineSize(const EstimateLine& line) {
  return StringField(line.component) + Int64Field(line.bytes) + StringField(line.arithmetic);
}
size_t DoubleField(double value) { return DoublePresent(value) ? kTagBytes + 8 : 0; }

// The most bytes a field's tag and a varint take: a one-byte tag (fields
// below 16) and a varint of up to ten bytes (a negative int64, or a length).
constexpr size_t kMostFieldBytes = 1 + 10;
// The most an InferenceWorkload's eleven scalar fields take: nine varints
// and two doubles. Under 128: its length is one byte.
constexpr size_t kMostInferenceWorkloadBytes = 9 * kMostFieldBytes + 2 * (1 + 8);
static_assert(kMostInferenceWorkloadBytes < 128);

// The size of InferenceWorkload's fields as WriteInferenceWorkloadFields
// writes them (int32s and enums are varints of the value sign-extended to
// 64 bits, as int64s are).
size_t InferenceWorkloadFieldsSize(const ResolvedWorkload& w) {
  return Int64Field(w.context_length_tokens) + Int64Field(w.batch_size) +
         Int64Field(w.prefill_chunk_tokens) + Int64Field(w.prompt_tokens) +
         Int64Field(ToProtoNumberFormat(w.weight_format)) +
         Int64Field(ToProtoNumberFormat(w.kv_cache_format)) +
         Int64Field(w.quantization_group_size) + kTagBytes +
         WireFormatLite::Int64Size(w.overhead_bytes) + DoubleField(w.memory_utilization) +
         DoubleField(w.prefill_efficiency) +
         (ImagesPerSequenceStated(w) ? kTagBytes + WireFormatLite::Int32Size(w.images_per_sequence)
                                     : 0);
}

// InferenceWorkload's fields as ToProto(ResolvedWorkload) sets them (every
// field set, overhead_bytes, optional, present even when 0;
// images_per_sequence, optional, present when ImagesPerSequenceStated),
// without the message's own tag and length; returns the end.
uint8_t* WriteInferenceWorkloadFields(const ResolvedWorkload& w, uint8_t* target) {
  target = WriteInt64(1, w.context_length_tokens, target);
  target = WriteInt32(2, w.batch_size, target);
  target = WriteInt32(3, w.prefill_chunk_tokens, target);
  target = WriteInt64(4, w.prompt_tokens, target);
  // Enums are written as int32 varints (WireFormatLite::WriteEnumToArray).
  target = WriteInt32(5, ToProtoNumberFormat(w.weight_format), target);
  target = WriteInt32(6, ToProtoNumberFormat(w.kv_cache_format), target);
  target = WriteInt32(7, w.quantization_group_size, target);
  // Optional: written even when 0.
  target = WriteTag(8, WireFormatLite::WIRETYPE_VARINT, target);
  target = WriteVarint(static_cast<uint64_t>(w.overhead_bytes), target);
  target = WriteDouble(9, w.memory_utilization, target);
  target = WriteDouble(10, w.prefill_efficiency, target);
  if (!ImagesPerSequenceStated(w)) return target;
  target = WriteTag(11, WireFormatLite::WIRETYPE_VARINT, target);
  return WriteVarint(static_cast<uint64_t>(static_cast<int64_t>(w.images_per_sequence)), target);
}

// Field 7, one line.
uint8_t* WriteLine(const EstimateLine& line, uint8_t* target) {
  target = WriteMessageHeader(7, LineSize(line), target);
  target = WriteString(1, line.component, target);
  target = WriteInt64(2, line.bytes, target);
  return WriteString(3, line.arithmetic, target);
}

// Field 13's message (ResolvedWorkload) without its own tag and length: its
// size, and the message written (the InferenceWorkload's size is
// InferenceWorkloadFieldsSize's, computed once by the caller).
size_t ResolvedWorkloadSize(size_t inference_workload_size, absl::string_view statement,
                            const ResolvedWorkload& w) {
  return MessageField(inference_workload_size) +
         (statement.empty() ? 0
                            : kTagBytes + WireFormatLite::LengthDelimitedSize(statement.size())) +
         BoolField(w.context_capped) + BoolField(w.weight_format_from_checkpoint) +
         BoolField(w.checkpoint_quantization_not_sized) + BoolField(w.context_defaulted) +
         BoolField(w.weight_format_defaulted) + Int64Field(w.model_max_context_tokens) +
         BoolField(w.weights_from_file) + BoolField(ImagesPerSequenceDefaultedForModel(w));
}
uint8_t* WriteWorkloadField(const ResolvedWorkload& w, absl::string_view statement,
                            uint8_t* target) {
  const size_t inference_workload_size = InferenceWorkloadFieldsSize(w);
  target =
      WriteMessageHeader(13, ResolvedWorkloadSize(inference_workload_size, statement, w), target);
  target = WriteMessageHeader(1, inference_workload_size, target);
  target = WriteInferenceWorkloadFields(w, target);
  if (!statement.empty()) {
    target = WriteTag(2, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, target);
    target = WriteVarint(statement.size(), target);
    std::memcpy(target, statement.data(), statement.size());
    target += statement.size();
  }
  target = WriteBool(3, w.context_capped, target);
  target = WriteBool(4, w.weight_format_from_checkpoint, target);
  target = WriteBool(5, w.checkpoint_quantization_not_sized, target);
  target = WriteBool(6, w.context_defaulted, target);
  target = WriteBool(7, w.weight_format_defaulted, target);
  target = WriteInt64(8, w.model_max_context_tokens, target);
  target = WriteBool(9, w.weights_from_file, target);
  return WriteBool(10, ImagesPerSequenceDefaultedForModel(w), target);
}
size_t WorkloadFieldSize(const ResolvedWorkload& w, absl::string_view statement) {
  return MessageField(ResolvedWorkloadSize(InferenceWorkloadFieldsSize(w), statement, w));
}

// Fields 8-10: the total in bytes, GiB and GB.
uint8_t* WriteTotals(int64_t total_bytes, double total_gib, double total_gb, uint8_t* target) {
  target = WriteInt64(8, total_bytes, target);
  target = WriteDouble(9, total_gib, target);
  return WriteDouble(10, total_gb, target);
}

}  // namespace

void MemoryAnswer::Clear() {
  model.clear();
  display_name.clear();
  available = false;
  no_estimate_reason.clear();
  hypothetical = false;
  parameters = 0;
  line_count = 0;
  total_bytes = 0;
  total_gib = 0;
  total_gb = 0;
  warning_count = 0;
  catalog_revision = 0;
  has_workload = false;
  workload = ResolvedWorkload{};
  statement.clear();
  source.clear();
  source_revision.clear();
}

std::string& MemoryAnswer::AddWarning() {
  if (warning_count == warnings.size()) warnings.emplace_back();
  std::string& warning = warnings[warning_count++];
  warning.clear();
  return warning;
}

void ToProto(const MemoryAnswer& a, v1::EstimateInferenceMemoryResponse* out) {
  out->set_model(a.model);
  out->set_display_name(a.display_name);
  out->set_available(a.available);
  out->set_no_estimate_reason(a.no_estimate_reason);
  out->set_hypothetical(a.hypothetical);
  out->set_parameters(a.parameters);
  out->mutable_lines()->Reserve(static_cast<int>(a.line_count));
  for (size_t i = 0; i < a.line_count; ++i) {
    v1::EstimateLine* line = out->add_lines();
    line->set_component(a.lines[i].component);
    line->set_bytes(a.lines[i].bytes);
    line->set_arithmetic(a.lines[i].arithmetic);
  }
  out->set_total_bytes(a.total_bytes);
  out->set_total_gib(a.total_gib);
  out->set_total_gb(a.total_gb);
  for (size_t i = 0; i < a.warning_count; ++i) out->add_warnings(a.warnings[i]);
  out->set_catalog_revision(a.catalog_revision);
  if (a.has_workload) {
    // The workload as every answer converts it (conversions.cc), with the
    // statement this answer wrote (the same text; the message path is not
    // the service's hot path, so the second writing costs nothing there).
    v1::ResolvedWorkload* resolved = out->mutable_workload();
    ToProto(a.workload, resolved);
    resolved->set_statement(a.statement);
  }
  out->set_source(a.source);
  out->set_source_revision(a.source_revision);
}

// Every string's bytes and, for every field that may be written, the most
// its tag and length or value take: only the strings are read, no field is
// sized.
size_t MostMemoryAnswerBytes(const MemoryAnswer& a) {
  size_t most = a.model.size() + a.display_name.size() + a.no_estimate_reason.size() +
                a.source.size() + a.source_revision.size() + 15 * kMostFieldBytes;
  for (size_t i = 0; i < a.line_count; ++i) {
    most += a.lines[i].component.size() + a.lines[i].arithmetic.size() + 4 * kMostFieldBytes;
  }
  for (size_t i = 0; i < a.warning_count; ++i) most += a.warnings[i].size() + kMostFieldBytes;
  if (a.has_workload) {
    most += a.statement.size() + 4 * kMostFieldBytes + kMostInferenceWorkloadBytes;
  }
  return most;
}

// Field-number order, as protobuf's serializer writes (byte for byte the
// message's bytes, not only an equal message). A nested message's length is
// computed just before it is written from its fields' sizes, so nothing is
// sized twice.
uint8_t* WriteMemoryAnswer(const MemoryAnswer& a, uint8_t* target) {
  target = WriteString(1, a.model, target);
  target = WriteString(2, a.display_name, target);
  target = WriteBool(3, a.available, target);
  target = WriteString(4, a.no_estimate_reason, target);
  target = WriteBool(5, a.hypothetical, target);
  target = WriteDouble(6, a.parameters, target);
  for (size_t i = 0; i < a.line_count; ++i) target = WriteLine(a.lines[i], target);
  target = WriteTotals(a.total_bytes, a.total_gib, a.total_gb, target);
  // Repeated strings are written even when empty.
  for (size_t i = 0; i < a.warning_count; ++i) target = WriteBytes(11, a.warnings[i], target);
  target = WriteInt64(12, a.catalog_revision, target);
  if (a.has_workload) target = WriteWorkloadField(a.workload, a.statement, target);
  target = WriteString(14, a.source, target);
  return WriteString(15, a.source_revision, target);
}

std::string EncodeRecordAnswerHead(absl::string_view model, absl::string_view display_name,
                                   double parameters) {
  std::string out(model.size() + display_name.size() + 4 * kMostFieldBytes, '\0');
  uint8_t* begin = reinterpret_cast<uint8_t*>(out.data());
  uint8_t* target = WriteString(1, std::string(model), begin);
  target = WriteString(2, std::string(display_name), target);
  target = WriteBool(3, true, target);
  target = WriteDouble(6, parameters, target);
  out.resize(static_cast<size_t>(target - begin));
  return out;
}

std::string EncodeRecordAnswerSource(absl::string_view source) {
  std::string out(source.size() + kMostFieldBytes, '\0');
  uint8_t* begin = reinterpret_cast<uint8_t*>(out.data());
  // Field 15 (source_revision) is empty for a catalog record: not written.
  const uint8_t* end = WriteString(14, std::string(source), begin);
  out.resize(static_cast<size_t>(end - begin));
  return out;
}

absl::string_view EncodedWorkloadField(const ResolvedWorkload& w) {
  thread_local TextMemo<std::tuple_size_v<WorkloadKey>> memo;
  const WorkloadKey key = WorkloadKeyOf(w);
  if (const std::string* known = memo.Find(key)) return *known;
  const std::string& statement = WorkloadStatementInPlace(w);
  std::string encoded(WorkloadFieldSize(w, statement), '\0');
  WriteWorkloadField(w, statement, reinterpret_cast<uint8_t*>(encoded.data()));
  return memo.Remember(key, encoded);
}

MemoryAnswerPartsBytes::MemoryAnswerPartsBytes(const MemoryAnswerParts& parts) : parts_(parts) {
  size_t size = parts.head.size() + parts.workload.size() + parts.source.size();
  const std::vector<EstimateLine>& lines = *parts.lines;
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t line_size = LineSize(lines[i]);
    if (i < kKeptLineSizes) line_sizes_[i] = line_size;
    size += MessageField(line_size);
  }
  const double total = static_cast<double>(parts.total_bytes);
  size += Int64Field(parts.total_bytes) + DoubleField(BytesToGiB(total)) +
          DoubleField(BytesToGB(total));
  for (const std::string& warning : *parts.warnings) {
    size += kTagBytes + WireFormatLite::StringSize(warning);
  }
  size_ = size + Int64Field(parts.catalog_revision);
}

uint8_t* MemoryAnswerPartsBytes::Write(uint8_t* target) const {
  const MemoryAnswerParts& p = parts_;
  std::memcpy(target, p.head.data(), p.head.size());
  target += p.head.size();
  const std::vector<EstimateLine>& lines = *p.lines;
  for (size_t i = 0; i < lines.size(); ++i) {
    const EstimateLine& line = lines[i];
    target = WriteMessageHeader(7, i < kKeptLineSizes ? line_sizes_[i] : LineSize(line), target);
    target = WriteString(1, line.component, target);
    target = WriteInt64(2, line.bytes, target);
    target = WriteString(3, line.arithmetic, target);
  }
  const double total = static_cast<double>(p.total_bytes);
  target = WriteTotals(p.total_bytes, BytesToGiB(total), BytesToGB(total), target);
  for (const std::string& warning : *p.warnings) target = WriteBytes(11, warning, target);
  target = WriteInt64(12, p.catalog_revision, target);
  std::memcpy(target, p.workload.data(), p.workload.size());
  target += p.workload.size();
  std::memcpy(target, p.source.data(), p.source.size());
  return target + p.source.size();
}

MemoryAnswerBytes::MemoryAnswerBytes(const MemoryAnswer& answer) {
  const size_t most = MostMemoryAnswerBytes(answer);
  uint8_t* begin = inline_bytes_;
  if (most > sizeof(inline_bytes_)) {
    heap_bytes_ = std::make_unique_for_overwrite<uint8_t[]>(most);
    begin = heap_bytes_.get();
  }
  bytes_ = begin;
  size_ = static_cast<size_t>(WriteMemoryAnswer(answer, begin) - begin);
}

uint8_t* MemoryAnswerBytes::Write(uint8_t* target) const {
  std::memcpy(target, bytes_, size_);
  return target + size_;
}

}  // namespace modelatlas::estimator
