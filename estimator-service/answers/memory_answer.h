// The memory answer (EstimateInferenceMemoryResponse) as plain figures, and
// its wire bytes written by hand from them (issue 22 point 1, branch
// s12-estimate). The computed EstimateInferenceMemory replies these bytes
// (copied into the reply's slice): no message is built, so no ~20 messages
// and strings are allocated, set, sized and serialized per call. The CLI,
// the tests, the JSON front and the plan (whose memory part is this answer)
// keep the message, converted from the same figures (ToProto), so both are
// one answer; WriteMemoryAnswer writes the fields in field-number order, as
// protobuf's serializer does, and tests/estimator/memory_answer_test.cc
// holds the two byte for byte on every shipped model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/workload.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {

// Every field of EstimateInferenceMemoryResponse but catalog_view (the
// service appends it). Strings and vectors keep their buffers across Clear(),
// so an answer object reused from call to call allocates nothing once warm.
struct MemoryAnswer {
  std::string model;               // 1
  std::string display_name;        // 2
  bool available = false;          // 3
  std::string no_estimate_reason;  // 4
  bool hypothetical = false;       // 5
  double parameters = 0;           // 6, parameters
  // 7; the first `line_count` of `lines` (the rest are buffers kept for reuse).
  std::vector<EstimateLine> lines;
  size_t line_count = 0;
  int64_t total_bytes = 0;  // 8, bytes
  double total_gib = 0;     // 9, GiB (2^30 bytes)
  double total_gb = 0;      // 10, GB (1e9 bytes)
  // 11; the first `warning_count` of `warnings`.
  std::vector<std::string> warnings;
  size_t warning_count = 0;
  int64_t catalog_revision = 0;  // 12
  // 13, present when has_workload: the workload and its statement.
  bool has_workload = false;
  ResolvedWorkload workload;
  std::string statement;
  std::string source;           // 14
  std::string source_revision;  // 15

  // Not part of the answer: the sizing's scratch, kept with it so that an
  // answer reused from call to call (the service's pool) writes its texts
  // into buffers it already has (EstimateInferenceMemoryInto). Clear()
  // leaves them.
  InferenceArithmetic arithmetic_scratch;
  InferenceMemoryEstimate estimate_scratch;

  // Back to an empty answer, the buffers kept.
  void Clear();
  // A new line (its strings emptied, buffers kept) / warning at the end.
  // AddLine is inline: four calls an answer, each ~10 instructions of a
  // call's own (callgrind, session 17).
  EstimateLine& AddLine() {
    if (line_count == lines.size()) lines.emplace_back();
    EstimateLine& line = lines[line_count++];
    line.component.clear();
    line.bytes = 0;
    line.arithmetic.clear();
    return line;
  }
  std::string& AddWarning();
};

// The answer as a message (into `out`, empty; on the heap or an arena).
void ToProto(const MemoryAnswer& answer, v1::EstimateInferenceMemoryResponse* out);

// The answer's wire bytes, the bytes protobuf writes for ToProto's message,
// written at `target`, which holds at least MostMemoryAnswerBytes(answer)
// bytes (a few hundred more than are written); returns the end.
size_t MostMemoryAnswerBytes(const MemoryAnswer& answer);
uint8_t* WriteMemoryAnswer(const MemoryAnswer& answer, uint8_t* target);

// The computed answer of a catalog record whose weights are published, as
// its parts (CatalogSnapshot's PreparedRecord keeps the record's own fields
// encoded once; the rest is the call's): written straight into the reply
// with no MemoryAnswer between, so that no text is copied into an answer's
// strings and out again (docs/BENCHMARKS.md, session 18, branch
// s18-estimate). The bytes are WriteMemoryAnswer's for the same answer.
struct MemoryAnswerParts {
  // Fields 1 (model), 2 (display_name), 3 (available: true) and 6
  // (parameters), encoded: EncodeRecordAnswerHead.
  absl::string_view head;
  // 7: every line of `lines`.
  const std::vector<EstimateLine>* lines = nullptr;
  // 8, bytes; 9 and 10 (GiB, GB) are computed from it.
  int64_t total_bytes = 0;
  // 11: every warning of `warnings`.
  const std::vector<std::string>* warnings = nullptr;
  int64_t catalog_revision = 0;  // 12
  // 13, encoded: EncodedWorkloadField.
  absl::string_view workload;
  // Fields 14 (source) and 15 (source_revision), encoded:
  // EncodeRecordAnswerSource.
  absl::string_view source;
};

// The encoded head and source of a record's available answer (the fields
// MemoryAnswer's model, display_name, available, parameters; source).
std::string EncodeRecordAnswerHead(absl::string_view model, absl::string_view display_name,
                                   double parameters);
std::string EncodeRecordAnswerSource(absl::string_view source);

// Field 13 of an answer of `workload` (the workload and its statement,
// WorkloadStatement's), encoded: remembered per thread by every figure it
// shows, as the statement is (answers ask with a few workloads over and
// over), so that a call copies it whole instead of sizing and writing ten
// figures and the statement. Valid until this thread asks for another.
absl::string_view EncodedWorkloadField(const ResolvedWorkload& workload);

// The parts' bytes: sized once when made (each line's length kept for the
// writing), then written.
class MemoryAnswerPartsBytes {
 public:
  explicit MemoryAnswerPartsBytes(const MemoryAnswerParts& parts);
  MemoryAnswerPartsBytes(const MemoryAnswerPartsBytes&) = delete;
  MemoryAnswerPartsBytes& operator=(const MemoryAnswerPartsBytes&) = delete;

  size_t size() const { return size_; }
  // Writes exactly size() bytes at `target`; returns the end.
  uint8_t* Write(uint8_t* target) const;

 private:
  // The lengths of the first lines (an answer has two to five; any
  // further line's is computed again when written).
  static constexpr size_t kKeptLineSizes = 8;
  const MemoryAnswerParts& parts_;
  size_t line_sizes_[kKeptLineSizes];
  size_t size_ = 0;
};

// The same bytes, of a known size (for a caller that needs the size first:
// the general path, kept answers, tests), written once when made into the
// object's own buffer (WriteMemoryAnswer: no pass sizes the answer first,
// as protobuf's ByteSizeLong does; that pass was a third of the reply's
// ~1,400 instructions, docs/BENCHMARKS.md, session 17, branch s17-estimate).
// Write copies them; `answer` is not kept.
class MemoryAnswerBytes {
 public:
  explicit MemoryAnswerBytes(const MemoryAnswer& answer);
  MemoryAnswerBytes(const MemoryAnswerBytes&) = delete;
  MemoryAnswerBytes& operator=(const MemoryAnswerBytes&) = delete;

  size_t size() const { return size_; }
  // Writes exactly size() bytes at `target`; returns the end.
  uint8_t* Write(uint8_t* target) const;

 private:
  // A computed answer is about 800-1,500 bytes: in place, not on the heap.
  uint8_t inline_bytes_[2048];
  std::unique_ptr<uint8_t[]> heap_bytes_;  // a larger answer's
  const uint8_t* bytes_ = nullptr;
  size_t size_ = 0;
};

}  // namespace modelatlas::estimator
