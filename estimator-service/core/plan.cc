#include "estimator-service/core/plan.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "absl/cleanup/cleanup.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/text/decimal.h"
#include "estimator-service/core/fit_matrix.h"

namespace modelatlas::estimator {
namespace {

constexpr double kGiB = 1073741824.0;

// A plan's lines written through a raw pointer into
// DevicePlan::arithmetic_wire (kArithmeticLineTag's encoding, plan.h), the
// string held at its whole capacity while they are written: a piece is an
// inline bounds check and copy (a literal's a few moves), where
// std::string::append was an out-of-line call with its own check and a
// memcpy call, about 15 per card, and each line was then sized and copied
// again by the reply's writer (docs/BENCHMARKS.md, session 18, branch
// s18-plan). A pooled plan keeps the string's capacity: a plan over every
// accelerator grows none after its first call.
class LineWriter {
 public:
  explicit LineWriter(std::string* out) : out_(out) {
    // Written from the start; the earlier text is overwritten, not cleared,
    // and the room past it made by a resize (which zero-fills it) is a
    // little more than it, not the whole capacity (the fill was 1.7% of a
    // plan over every accelerator; docs/BENCHMARKS.md, session 18): a
    // pooled plan is mostly about as long as the one it replaces.
    out->resize(std::max(out->size() + kSpareBytes, kFirstBytes));
    Point();
  }
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;
  ~LineWriter() { Finish(); }

  // Trims the string to the lines written; nothing is written after.
  void Finish() {
    if (out_ == nullptr) return;
    out_->resize(Used());
    out_ = nullptr;
  }
  // The bytes a line's length is given before its text is written (a
  // varint: 1 under 128 bytes, 2 under 16,384; protobuf encoding guide,
  // "Base 128 Varints"): a guess by the line's writer. A wrong guess moves
  // the text.
  enum class Expected { kShort = 1, kUsual = 2 };
  // A line's text is what is appended between these two.
  void BeginLine(Expected expected) {
    length_bytes_ = static_cast<size_t>(expected);
    Room(1 + length_bytes_);
    *p_++ = static_cast<char>(kArithmeticLineTag);
    length_at_ = Used();
    p_ += length_bytes_;
  }
  void EndLine() {
    const size_t length = Used() - (length_at_ + length_bytes_);
    char* const at = out_->data() + length_at_;
    if (length_bytes_ == 1 && length < 128) {
      at[0] = static_cast<char>(length);
      return;
    }
    if (length_bytes_ == 2 && length - 128 < 16384 - 128) {
      at[0] = static_cast<char>(0x80 | (length & 0x7f));
      at[1] = static_cast<char>(length >> 7);
      return;
    }
    EndOtherLine(length);
  }
  // A line whose text is known: its length written first.
  void AddLine(std::string_view text) {
    uint8_t varint[kMaxVarintBytes];
    const size_t varint_bytes = Varint(text.size(), varint);
    Room(1 + varint_bytes);
    *p_++ = static_cast<char>(kArithmeticLineTag);
    std::memcpy(p_, varint, varint_bytes);
    p_ += varint_bytes;
    append(text);
  }

  // Inlined (GCC kept it out of line): a literal's copy, of a size known
  // when compiled, is then a few moves instead of a memcpy call.
  [[gnu::always_inline]] void append(const char* data, size_t size) {
    Room(size);
    std::memcpy(p_, data, size);
    p_ += size;
  }
  [[gnu::always_inline]] void append(std::string_view text) { append(text.data(), text.size()); }
  // Room for `size` more bytes at the returned pointer; Advance(n) after
  // writing n of them.
  [[gnu::always_inline]] char* Room(size_t size) {
    if (static_cast<size_t>(end_ - p_) < size) Grow(size);
    return p_;
  }
  void Advance(size_t size) { p_ += size; }
  // Where the next line starts, and the encoded lines between two such
  // positions (valid until the next write).
  size_t Position() const { return Used(); }
  std::string_view Between(size_t from, size_t to) const {
    return std::string_view(out_->data() + from, to - from);
  }

 private:
  static constexpr size_t kMaxVarintBytes = 10;
  // `value` as a varint at `out`; returns its bytes.
  static size_t Varint(uint64_t value, uint8_t* out) {
    size_t bytes = 0;
    for (;; value >>= 7) {
      out[bytes++] = static_cast<uint8_t>((value & 0x7f) | (value > 0x7f ? 0x80 : 0));
      if (value <= 0x7f) return bytes;
    }
  }
  // EndOtherLine's copies; the last may read and write past the text, within
  // the string.
  static constexpr size_t kMoveBlockBytes = 16;
  // A new string's room (a plan over every accelerator writes about 1,150
  // bytes per card: its string doubles twice, on its first call only).
  static constexpr size_t kFirstBytes = 512;
  static constexpr size_t kSpareBytes = 256;

  size_t Used() const { return static_cast<size_t>(p_ - out_->data()); }
  void Point() {
    p_ = out_->data();
    end_ = p_ + out_->size();
  }
  void EndOtherLine(size_t length);
  [[gnu::noinline]] void Grow(size_t size) {
    const size_t used = Used();
    out_->resize(std::max(2 * out_->size(), used + size));
    Point();
    p_ += used;
  }

  std::string* out_;
  char* p_ = nullptr;
  char* end_ = nullptr;
  // Where the line being written keeps its length, and in how many bytes.
  size_t length_at_ = 0;
  size_t length_bytes_ = 0;
};

void LineWriter::EndOtherLine(size_t length) {
  uint8_t varint[kMaxVarintBytes];
  const size_t varint_bytes = Varint(length, varint);
  // The text moves to follow its length: one byte back or forward, 16 bytes
  // at a time (each block read before a neighbour's copy overwrites it; no
  // memmove call), or by memmove for a line of 16 KiB or more.
  if (varint_bytes + 1 == length_bytes_) {
    Room(kMoveBlockBytes);
    char* const text = out_->data() + length_at_ + length_bytes_;
    for (size_t moved = 0; moved < length; moved += kMoveBlockBytes) {
      char block[kMoveBlockBytes];
      std::memcpy(block, text + moved, kMoveBlockBytes);
      std::memcpy(text + moved - 1, block, kMoveBlockBytes);
    }
    p_ -= 1;
  } else if (varint_bytes == length_bytes_ + 1) {
    Room(kMoveBlockBytes + 1);
    char* const text = out_->data() + length_at_ + length_bytes_;
    for (size_t block_at = (length + kMoveBlockBytes - 1) / kMoveBlockBytes * kMoveBlockBytes;
         block_at > 0;) {
      block_at -= kMoveBlockBytes;
      char block[kMoveBlockBytes];
      std::memcpy(block, text + block_at, kMoveBlockBytes);
      std::memcpy(text + block_at + 1, block, kMoveBlockBytes);
    }
    p_ += 1;
  } else {
    if (varint_bytes > length_bytes_) Room(varint_bytes - length_bytes_);
    char* const base = out_->data();
    std::memmove(base + length_at_ + varint_bytes, base + length_at_ + length_bytes_, length);
    p_ = base + length_at_ + varint_bytes + length;
  }
  std::memcpy(out_->data() + length_at_, varint, varint_bytes);
}

// Calls `line(text)` for each line of `wire` (LineWriter's bytes), in order.
template <typename Line>
void ForEachWireLine(const std::string& wire, Line line) {
  const auto* p = reinterpret_cast<const uint8_t*>(wire.data());
  const uint8_t* const end = p + wire.size();
  while (p < end) {
    ++p;  // kArithmeticLineTag
    uint64_t length = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t byte = *p++;
      length |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    line(std::string_view(reinterpret_cast<const char*>(p), length));
    p += length;
  }
}

// Lines of a card on one device are mostly under 128 bytes (decode, prefill,
// time to first token, cost: about 75-125); the memory and many-card lines
// longer.
constexpr LineWriter::Expected kShortLine = LineWriter::Expected::kShort;
constexpr LineWriter::Expected kUsualLine = LineWriter::Expected::kUsual;

// One line of a LineWriter while in scope: begun when made, ended when left.
class LineScope {
 public:
  explicit LineScope(LineWriter* lines,
                     LineWriter::Expected expected = LineWriter::Expected::kUsual)
      : lines_(lines) {
    lines->BeginLine(expected);
  }
  LineScope(const LineScope&) = delete;
  LineScope& operator=(const LineScope&) = delete;
  ~LineScope() { lines_->EndLine(); }

 private:
  LineWriter* lines_;
};

// A literal's text, its length known when compiled: GCC's out-of-line copy
// of std::string::append(const char*) measured each literal with strlen on
// every call (1.6% of a plan over every accelerator under callgrind); into a
// LineWriter, a copy of a known size is a few moves.
template <typename Out, size_t N>
[[gnu::always_inline]] inline void AppendLiteral(Out* out, const char (&text)[N]) {
  out->append(text, N - 1);
}
// absl::StrAppend for either sink.
template <typename Out, typename... Pieces>
void AppendCat(Out* out, const Pieces&... pieces) {
  out->append(absl::StrCat(pieces...));
}

std::string GiB(double bytes) { return absl::StrCat(FixedDecimals(bytes / kGiB, 2), " GiB"); }
std::string Num(double value) { return SignificantDigits(value, 4); }

// The same texts appended in place: the lines every card of a plan over every
// accelerator has are written into one string each, with no string per
// figure (GiB and Num made and copied a string for each).
void AppendGiB(std::string* out, double bytes) {
  AppendFixedDecimals(out, bytes / kGiB, 2);
  AppendLiteral(out, " GiB");
}
void AppendNum(std::string* out, double value) { AppendSignificantDigits(out, value, 4); }
// Into a LineWriter the digits are written where they go.
void AppendGiB(LineWriter* out, double bytes) {
  const double gib = bytes / kGiB;
  if (const int length = TryFixedDecimals(gib, 2, out->Room(kFastDecimalBytes)); length >= 0) {
    out->Advance(static_cast<size_t>(length));
  } else {
    out->append(FixedDecimals(gib, 2));
  }
  AppendLiteral(out, " GiB");
}
// Returns where the text starts and its length (for a caller that keeps it).
std::string_view AppendNum(LineWriter* out, double value) {
  char* const at = out->Room(kFastDecimalBytes);
  if (const int length = TrySignificantDigits(value, 4, at); length >= 0) {
    out->Advance(static_cast<size_t>(length));
    return {at, static_cast<size_t>(length)};
  }
  out->append(SignificantDigits(value, 4));
  return {};
}
// An integer as absl::StrAppend writes it.
// Most are card counts, layers and heads under 100: written inline (absl's
// out-of-line conversion was about 70 instructions each under callgrind,
// docs/BENCHMARKS.md, session 18).
template <typename Integer>
void AppendInt(LineWriter* out, Integer value) {
  char* const at = out->Room(absl::numbers_internal::kFastToBufferSize);
  if (value >= 0 && value < 10) {
    at[0] = static_cast<char>('0' + value);
    out->Advance(1);
  } else if (value >= 10 && value < 100) {
    at[0] = static_cast<char>('0' + value / 10);
    at[1] = static_cast<char>('0' + value % 10);
    out->Advance(2);
  } else {
    out->Advance(static_cast<size_t>(absl::numbers_internal::FastIntToBuffer(value, at) - at));
  }
}

// A figure's text kept while a plan is written: a plan states some figures
// twice (decode tokens/s in the decode and the cost lines, and per sequence
// and for the batch, which are equal at batch 1; prefill tokens/s in the
// prefill and time-to-first-token lines), and formatting is the largest
// share of writing a plan (docs/BENCHMARKS.md, branch s11-plan). The text
// is AppendNum's: copied when the value is the same to the bit.
struct FigureText {
  uint64_t bits = 0;
  uint8_t length = 0;  // 0: none kept
  char text[23];
};
void AppendNumKept(LineWriter* out, double value, FigureText* kept) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  if (kept->length != 0 && kept->bits == bits) {
    out->append(kept->text, kept->length);
    return;
  }
  const std::string_view text = AppendNum(out, value);
  if (!text.empty() && text.size() < sizeof(kept->text)) {
    kept->bits = bits;
    kept->length = static_cast<uint8_t>(text.size());
    std::memcpy(kept->text, text.data(), text.size());
  } else {
    kept->length = 0;
  }
}
// The same for a record's own figures (its bandwidth in GB/s, peak in
// TFLOP/s, price per hour), the same on every plan on that record: kept per
// thread by value, 1,024 entries (32 KiB), so a plan over every accelerator
// formats each record's figures once, not once per plan.
void AppendRecordNum(LineWriter* out, double value) {
  thread_local std::array<FigureText, 1024> kept{};
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  AppendNumKept(out, value, &kept[(bits * 0x9E3779B97F4A7C15ull) >> 54]);
}

// A link's rate in GB/s or a latency in us: whole numbers (most are) as
// integers, which costs no formatting lookup.
std::string Whole(double value) {
  const double rounded = std::round(value);
  return rounded == value && std::abs(value) < 1e15 ? absl::StrCat(static_cast<int64_t>(rounded))
                                                    : Num(value);
}

// Whole(value) appended in place.
void AppendWhole(LineWriter* out, double value) {
  const double rounded = std::round(value);
  if (rounded == value && std::abs(value) < 1e15) {
    AppendInt(out, static_cast<int64_t>(rounded));
  } else {
    AppendNum(out, value);
  }
}

// Plans' lines that depend on one or two of the device's figures only, kept
// while a plan over many devices is written
// (PlanInput::shared_lines_generation): many records share a bandwidth, a
// peak or a capacity (of the 258 accelerators' one-card plans of Llama 3.1
// 8B, 141 memory lines hold 57 texts and 138 decode lines 75;
// docs/BENCHMARKS.md, session 24), and many-card plans a layout and node
// size (their 81 layout lines hold 7 texts, their memory lines 29; session
// 25). Kept by the figures they were written from (their bits), with the
// bound's figures the plan states, per thread, direct-mapped: a slot taken
// by another key is written over.
class SharedLines {
 public:
  enum class Kind : uint8_t { kMemory, kDecode, kPrefill };
  // The two figures a kept group of lines states (a bound's), 0 when none.
  using Figures = std::array<double, 2>;
  struct Kept {
    std::string_view wire;  // the encoded lines, as LineWriter wrote them
    Figures figures;
  };

  static SharedLines& ForThread(uint64_t generation) {
    // On the heap: a thread_local of this size (28 KiB) is static TLS, which
    // glibc carves out of every thread's stack, and the metrics server's
    // threads (civetweb, small stacks) then overflowed theirs on their first
    // scrape (the end-to-end tests caught it, session 24).
    thread_local std::unique_ptr<SharedLines> kept;
    if (kept == nullptr) kept = std::make_unique<SharedLines>();
    SharedLines& lines = *kept;
    if (lines.generation_ != generation) {
      lines.generation_ = generation;
      ++lines.epoch_;
      lines.text_.clear();
    }
    return lines;
  }

  std::optional<Kept> Find(Kind kind, uint64_t a, uint64_t b) const {
    const Slot& slot = slots_[SlotOf(kind, a, b)];
    if (slot.epoch != epoch_ || slot.kind != kind || slot.a != a || slot.b != b) {
      return std::nullopt;
    }
    return Kept{.wire = std::string_view(text_.data() + slot.offset, slot.length),
                .figures = slot.figures};
  }
  void Keep(Kind kind, uint64_t a, uint64_t b, std::string_view wire, const Figures& figures) {
    Slot& slot = slots_[SlotOf(kind, a, b)];
    slot = {.epoch = epoch_,
            .a = a,
            .b = b,
            .offset = static_cast<uint32_t>(text_.size()),
            .length = static_cast<uint32_t>(wire.size()),
            .kind = kind,
            .figures = figures};
    text_.append(wire);
  }

 private:
  static constexpr size_t kSlots = 512;
  struct Slot {
    uint64_t epoch = 0;  // 0: never kept
    uint64_t a = 0;
    uint64_t b = 0;
    uint32_t offset = 0;
    uint32_t length = 0;
    Kind kind = Kind::kMemory;
    Figures figures = {0, 0};
  };
  static size_t SlotOf(Kind kind, uint64_t a, uint64_t b) {
    const uint64_t mixed =
        (a ^ (b * 0xC2B2AE3D27D4EB4Full) ^ static_cast<uint64_t>(kind)) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(mixed >> 55);  // 9 bits: kSlots
  }

  uint64_t generation_ = 0;
  uint64_t epoch_ = 0;
  std::string text_;
  std::array<Slot, kSlots> slots_{};
};

// A figure that may be absent as a key: its bits, or a NaN no figure has.
uint64_t KeyBits(const std::optional<double>& figure) {
  return figure.has_value() ? std::bit_cast<uint64_t>(*figure) : 0x7ff8'dead'beef'0001ull;
}

// The lines `write` writes into `lines` and the figures it returns, or, when
// `shared` (null: none) kept lines under this key earlier in the call, a copy
// of those and their figures; lines written here are kept under the key.
// Inlined with its `write` (out of line, the plan's code reached its locals
// through the lambda's captures: 1% more instructions, session 24).
template <typename Write>
[[gnu::always_inline]] inline SharedLines::Figures SharedOrWritten(SharedLines* shared,
                                                                   SharedLines::Kind kind,
                                                                   uint64_t a, uint64_t b,
                                                                   LineWriter& lines, Write write) {
  if (shared != nullptr) {
    if (const std::optional<SharedLines::Kept> kept = shared->Find(kind, a, b)) {
      lines.append(kept->wire);
      return kept->figures;
    }
  }
  const size_t from = lines.Position();
  const SharedLines::Figures figures = write();
  if (shared != nullptr) shared->Keep(kind, a, b, lines.Between(from, lines.Position()), figures);
  return figures;
}

// The layout and node size a plan's layout and memory lines state, packed
// exactly into a SharedLines key: 0 on one card (its memory line states
// neither); none with expert parallelism, or when a figure does not fit its
// bits (those lines are then written, not shared).
std::optional<uint64_t> LayoutKey(const Layout& layout, const NodeSize& node) {
  if (layout.cards() == 1) return 0;
  const auto fits = [](int value, int bits) { return value >= 0 && value < (1 << bits); };
  if (layout.expert_parallel > 1 || !fits(layout.tensor_parallel, 20) ||
      !fits(layout.pipeline_parallel, 20) || !fits(node.cards, 20)) {
    return std::nullopt;
  }
  // The cards are tensor x pipeline parallelism: not a figure of their own.
  return static_cast<uint64_t>(node.assumed) | static_cast<uint64_t>(layout.tensor_parallel) << 1 |
         static_cast<uint64_t>(layout.pipeline_parallel) << 21 |
         static_cast<uint64_t>(node.cards) << 41;
}

}  // namespace

double UsableBytesPerCard(const DeviceSpec& device, double memory_utilization,
                          std::string* arithmetic) {
  if (device.allocatable_memory_bytes.has_value()) {
    // The GPU's share of unified memory is already what it may use: no
    // serving engine's fraction on top (llama.cpp and MLX plan on it).
    const double fraction = device.unified_memory ? 1.0 : memory_utilization;
    const double usable = *device.allocatable_memory_bytes * fraction;
    if (arithmetic != nullptr) {
      *arithmetic = absl::StrCat(
          "usable per card: allocatable ", GiB(*device.allocatable_memory_bytes), " of ",
          GiB(device.memory_bytes), " marketed",
          device.allocatable_memory_source.empty()
              ? ""
              : absl::StrCat(" (", device.allocatable_memory_source, ")"),
          device.unified_memory ? ", the GPU's share of unified memory, used whole"
                                : absl::StrCat(" x ", Num(fraction), " (memory utilization)"),
          " = ", GiB(usable));
    }
    return usable;
  }
  const double fraction =
      device.unified_memory ? ResolvedWorkload::kUnifiedMemoryFraction : memory_utilization;
  const double usable = device.memory_bytes * fraction;
  if (arithmetic != nullptr) {
    *arithmetic = absl::StrCat(
        "usable per card: ", GiB(device.memory_bytes), " x ", Num(fraction),
        device.unified_memory ? " (unified memory: the GPU's share)" : " (memory utilization)",
        " = ", GiB(usable));
  }
  return usable;
}

namespace {

KeptFigure KeepFigure(double value) {
  KeptFigure figure{.kept = true, .value = value};
  AppendNum(&figure.text, value);
  return figure;
}

// The figure's text: the kept one when it was written from this value (to
// the bit), else written now (AppendRecordNum).
void AppendRecordFigure(LineWriter* out, double value, const KeptFigure* kept) {
  if (kept != nullptr && kept->kept &&
      std::bit_cast<uint64_t>(kept->value) == std::bit_cast<uint64_t>(value)) {
    out->append(kept->text);
    return;
  }
  AppendRecordNum(out, value);
}

}  // namespace

UsableCard UsableCardOf(const DeviceSpec& device, double memory_utilization) {
  UsableCard card{.memory_utilization = memory_utilization};
  card.usable_bytes = UsableBytesPerCard(device, memory_utilization, &card.arithmetic);
  {
    LineWriter line(&card.line_wire);
    line.AddLine(card.arithmetic);
  }
  // As PlanOnDeviceInto states them (decode and cost lines).
  if (device.bandwidth_bytes_per_second.has_value()) {
    card.bandwidth_gb_per_second = KeepFigure(*device.bandwidth_bytes_per_second / 1e9);
  }
  if (device.price_usd_per_hour.has_value()) {
    card.price_usd_per_hour = KeepFigure(*device.price_usd_per_hour);
  }
  if (device.bandwidth_doubtful && device.bandwidth_bytes_per_second.has_value()) {
    const double bandwidth = *device.bandwidth_bytes_per_second;
    card.doubtful_bandwidth_line = {
        .kept = true,
        .value = bandwidth,
        .text = DoubtfulBandwidthReason(device.memory_bytes, bandwidth)};
  }
  return card;
}

namespace {

// A plan on a model whose KV cache could not be counted (no architecture on
// record) says so where the KV cache's 0 GiB would read as none needed.
constexpr char kKvNotCounted[] = " (not counted: no architecture or context)";

std::string KvCacheGiB(const InferenceSizing& sizing, double bytes) {
  std::string text = GiB(bytes);
  if (sizing.kv_cache_not_counted) text.append(kKvNotCounted);
  return text;
}

}  // namespace

SizingFigures FiguresOf(const PlanInput& input) {
  SizingFigures f{.weights_gib = GiB(input.sizing.weight_bytes),
                  .kv_cache_gib = KvCacheGiB(input.sizing, input.sizing.kv_cache_bytes),
                  .activations_gib = GiB(input.sizing.activation_bytes),
                  .overhead_gib = GiB(input.sizing.overhead_bytes),
                  .active_parameters = Num(input.sizing.active_parameters()),
                  .prefill_efficiency = Num(input.workload.prefill_efficiency)};
  // As PlanOnDevice writes it for a one-card layout (tp = pp = 1, no expert
  // parallelism: no stage or latent-cache note).
  const Layout one_card;
  std::string& line = f.one_card_parts;
  AppendLiteral(&line, "per card on 1: weights ");
  AppendGiB(&line, WeightBytesPerCard(input.sizing, one_card));
  AppendLiteral(&line, " / 1 + KV cache ");
  line.append(KvCacheGiB(input.sizing, KvBytesPerCard(input.sizing, one_card)));
  absl::StrAppend(&line, " + activations ", f.activations_gib, " + overhead ", f.overhead_gib,
                  " = ");
  AppendGiB(&line, RequiredBytesPerCard(input.sizing, one_card));
  AppendLiteral(&line, "; headroom ");
  // The speed lines' fixed parts, as PlanOnDeviceInto wrote them piece by
  // piece on every card.
  absl::StrAppend(&f.decode_one_card, " GB/s / (weights ", f.weights_gib);
  if (input.sizing.active_share < 1) {
    AppendLiteral(&f.decode_one_card, " x active share ");
    AppendNum(&f.decode_one_card, input.sizing.active_share);
  }
  absl::StrAppend(&f.decode_one_card, " + KV ", f.kv_cache_gib, ") = ");
  f.decode_batch =
      absl::StrCat(" tokens/s per sequence, x ", input.workload.batch_size, " sequences = ");
  f.prefill_after_peak = absl::StrCat(" TFLOP/s x ", f.prefill_efficiency, " efficiency / (2 x ",
                                      f.active_parameters, " active parameters) = ");
  f.first_token_before_prefill =
      absl::StrCat("time to first token: ", input.workload.prompt_tokens, " prompt tokens / ");
  f.fixed_parts_sum =
      absl::StrCat(" + activations ", f.activations_gib, " + overhead ", f.overhead_gib, " = ");
  f.decode_step_weights = absl::StrCat("decode step: (weights ", f.weights_gib);
  if (input.sizing.active_share < 1) {
    AppendLiteral(&f.decode_step_weights, " x active share ");
    AppendNum(&f.decode_step_weights, input.sizing.active_share);
  }
  AppendLiteral(&f.decode_step_weights, " / ");
  f.decode_step_kv = absl::StrCat(" + KV ", f.kv_cache_gib);
  return f;
}

DevicePlan PlanOnDevice(const PlanInput& input, const DeviceSpec& device,
                        const UsableCard* usable) {
  DevicePlan plan;
  PlanOnDeviceInto(input, device, usable, &plan);
  return plan;
}

namespace {

// Every member set as in a new DevicePlan, member by member (assigning a new
// plan, with the strings moved out and back, was 3% of a plan over every
// accelerator): the strings and lines keep their storage.
// A member added to DevicePlan changes its size: reset it here too.
static_assert(sizeof(DevicePlan) == 464, "reset every DevicePlan member in ResetKeepingStorage");
void ResetKeepingStorage(DevicePlan* plan) {
  plan->name.clear();
  plan->display_name.clear();
  plan->record_name = nullptr;
  plan->record_display_name = nullptr;
  plan->fits = false;
  plan->fits_on_one_card = false;
  plan->cards = 0;
  plan->tensor_parallel = 0;
  plan->pipeline_parallel = 0;
  plan->expert_parallel = 0;
  plan->nodes = 0;
  plan->layout.clear();
  plan->required_bytes_per_card = 0;
  plan->usable_bytes_per_card = 0;
  plan->headroom_bytes_per_card = 0;
  plan->weight_bytes_per_card = 0;
  plan->kv_cache_bytes_per_card = 0;
  plan->activation_bytes_per_card = 0;
  plan->overhead_bytes_per_card = 0;
  plan->decode_tokens_per_second.reset();
  plan->decode_tokens_per_second_all.reset();
  plan->prefill_tokens_per_second.reset();
  plan->time_to_first_token_seconds.reset();
  plan->cost_usd_per_million_tokens.reset();
  plan->decode_communication_seconds.reset();
  plan->speed_not_modelled.clear();
  plan->decode_bound_doubtful.clear();
  plan->reason.clear();
  plan->usable_line_wire = nullptr;
  // The lines stay (PlanOnDeviceInto writes over arithmetic_wire and
  // reuses the lines in order, dropping the ones it does not need).
  plan->offload.reset();
}

}  // namespace

void PlanOnDeviceInto(const PlanInput& input, const DeviceSpec& device, const UsableCard* usable,
                      DevicePlan* out) {
  if (input.figures == nullptr) {
    // Written for this plan alone (an optional of them on every plan's path
    // cost about 60 instructions per card under callgrind, docs/BENCHMARKS.md,
    // session 18).
    const SizingFigures own = FiguresOf(input);
    PlanInput with_figures = input;
    with_figures.figures = &own;
    return PlanOnDeviceInto(with_figures, device, usable, out);
  }
  const SizingFigures& f = *input.figures;
  const InferenceSizing& shape = input.sizing;
  const ResolvedWorkload& w = input.workload;
  ResetKeepingStorage(out);
  DevicePlan& plan = *out;
  // The lines are written encoded (LineWriter); a plan for a caller that
  // reads DevicePlan::arithmetic has them decoded there when it is written,
  // into the lines of the plan it replaces (their storage kept: a caller
  // planning on the same records again allocates no line).
  const bool as_wire = input.lines_as_wire;
  if (as_wire) plan.arithmetic.clear();
  LineWriter lines(&plan.arithmetic_wire);
  bool lines_finished = false;
  const auto finish_lines = [&plan, &lines, &lines_finished, as_wire] {
    if (lines_finished) return;
    lines_finished = true;
    lines.Finish();
    if (as_wire) return;
    size_t used = 0;
    ForEachWireLine(plan.arithmetic_wire, [&plan, &used](std::string_view text) {
      if (used < plan.arithmetic.size()) {
        plan.arithmetic[used].assign(text);
      } else {
        plan.arithmetic.emplace_back(text);
      }
      ++used;
    });
    plan.arithmetic.resize(used);
    plan.arithmetic_wire.clear();
  };
  absl::Cleanup finish_at_return = finish_lines;
  if (!input.names_by_caller) {
    plan.name.assign(device.name);
    plan.display_name.assign(device.display_name);
  }
  if (usable != nullptr && usable->memory_utilization == w.memory_utilization) {
    plan.usable_bytes_per_card = usable->usable_bytes;
    if (as_wire) {
      plan.usable_line_wire = &usable->line_wire;
    } else {
      lines.AddLine(usable->arithmetic);
    }
  } else {
    std::string line;
    plan.usable_bytes_per_card = UsableBytesPerCard(device, w.memory_utilization, &line);
    lines.AddLine(line);
  }
  if (device.memory_bytes <= 0) {
    plan.reason = "memory size not on record";
    return;
  }

  NodeSize node;
  if (device.scale_up_domain_size.has_value() && *device.scale_up_domain_size > 1) {
    node = {.cards = *device.scale_up_domain_size, .assumed = false};
  }
  const std::optional<Layout> layout =
      input.layouts != nullptr
          ? input.layouts->Find(plan.usable_bytes_per_card, node)
          : FewestCardsLayout(shape, plan.usable_bytes_per_card, input.max_cards, node);
  plan.fits = layout.has_value();
  // What each card holds, by component (the plan's memory bars).
  const auto split = [&](double weight_bytes, double kv_cache_bytes) {
    plan.weight_bytes_per_card = weight_bytes;
    plan.kv_cache_bytes_per_card = kv_cache_bytes;
    plan.activation_bytes_per_card = shape.activation_bytes;
    plan.overhead_bytes_per_card = shape.overhead_bytes;
  };
  if (!plan.fits) {
    split(shape.weight_bytes, KvBytesPerCard(shape, 1));
    plan.required_bytes_per_card = RequiredBytesPerCard(shape, 1);
    plan.headroom_bytes_per_card = plan.usable_bytes_per_card - plan.required_bytes_per_card;
    plan.reason.reserve(96);
    absl::StrAppend(&plan.reason, "does not fit on ", input.max_cards, " cards or fewer (");
    AppendGiB(&plan.reason, plan.required_bytes_per_card);
    AppendLiteral(&plan.reason, " needed on one card, ");
    AppendGiB(&plan.reason, plan.usable_bytes_per_card);
    AppendLiteral(&plan.reason, " usable)");
    if (input.offload != nullptr) {
      // Its lines (in DevicePlan::arithmetic) follow this plan's.
      finish_lines();
      PlanWithOffload(input, device, node, &plan);
    }
    return;
  }
  const int n = layout->cards();
  const int tp = layout->tensor_parallel;
  const int pp = layout->pipeline_parallel;
  plan.cards = n;
  plan.tensor_parallel = tp;
  plan.pipeline_parallel = pp;
  plan.nodes = (n + node.cards - 1) / node.cards;
  AppendLayoutName(&plan.layout, *layout, node);  // cleared by ResetKeepingStorage
  plan.fits_on_one_card = n == 1;
  // Each once per plan (they were worked out three and two times).
  const double weights = WeightBytesPerCard(shape, *layout);
  const double kv_cache = KvBytesPerCard(shape, *layout);
  split(weights, kv_cache);
  plan.required_bytes_per_card = RequiredBytesPerCard(shape, weights, kv_cache);
  plan.headroom_bytes_per_card = plan.usable_bytes_per_card - plan.required_bytes_per_card;
  plan.expert_parallel = layout->expert_parallel > 1 ? layout->expert_parallel : 0;
  const bool ep = layout->expert_parallel > 1;
  // Lines that other records' plans share (SharedLines): the layout and
  // memory lines on any number of cards, the decode and prefill groups on one.
  SharedLines* const shared = input.shared_lines_generation != 0
                                  ? &SharedLines::ForThread(input.shared_lines_generation)
                                  : nullptr;
  SharedLines* const shared_one_card = n == 1 ? shared : nullptr;
  if (ep) {
    // One pipeline stage: an expert-parallel layout has none other (Layout).
    const int d = layout->attention_replicas();
    lines.AddLine(absl::StrCat(
        "layout: ", plan.layout,
        ": expert parallelism (vLLM --enable-expert-parallel, SGLang "
        "--ep-size): the routed experts split over ",
        n, " cards, ", ExpertsPerCard(shape, n), " of ", shape.num_experts,
        " per card; the attention and other dense weights tensor-"
        "parallel over ",
        tp, " card", tp > 1 ? "s" : "", " (heads ", shape.num_attention_heads, " / ", tp,
        ") within a node of ", node.cards, " cards",
        node.assumed ? " (assumed: the record has no scale-up domain size)"
                     : " (the record's scale-up domain)",
        d > 1
            ? absl::StrCat(", replicated over ", d, " data-parallel ranks, each with ",
                           SequencesPerReplica(shape, *layout), " of ", w.batch_size, " sequences")
            : std::string()));
    const double dense = shape.weight_bytes - shape.expert_weight_bytes;
    lines.AddLine(absl::StrCat(
        "per card on ", n, ": dense weights ", GiB(dense), " / ", tp, " + routed experts ",
        GiB(shape.expert_weight_bytes), " x ", ExpertsPerCard(shape, n), " / ", shape.num_experts,
        " + KV cache ", GiB(kv_cache),
        d > 1 ? absl::StrCat(" (", SequencesPerReplica(shape, *layout), " of ", w.batch_size,
                             " sequences)")
              : std::string(),
        shape.kv_cache_replicated && tp > 1 ? " (MLA latent cache: whole on every rank)" : "",
        " + activations ", f.activations_gib, " + overhead ", f.overhead_gib, " = ",
        GiB(plan.required_bytes_per_card), "; headroom ", GiB(plan.headroom_bytes_per_card)));
  } else {
    // The layout and memory lines depend on the layout, the node size and
    // the headroom only (on one card the headroom only).
    const std::optional<uint64_t> layout_key = LayoutKey(*layout, node);
    SharedOrWritten(
        layout_key.has_value() ? shared : nullptr, SharedLines::Kind::kMemory,
        std::bit_cast<uint64_t>(plan.headroom_bytes_per_card), layout_key.value_or(0),
        lines, [&]() __attribute__((always_inline)) {
          if (n > 1) {
            const LineScope scope(&lines);
            LineWriter& line = lines;
            AppendLiteral(&line, "layout: ");
            line.append(plan.layout);
            AppendLiteral(&line, ": tensor parallelism within a node of ");
            AppendInt(&line, node.cards);
            if (node.assumed) {
              AppendLiteral(&line, " cards (assumed: the record has no scale-up domain size)");
            } else {
              AppendLiteral(&line, " cards (the record's scale-up domain)");
            }
            AppendLiteral(&line, ", heads ");
            AppendInt(&line, shape.num_attention_heads);
            AppendLiteral(&line, " / ");
            AppendInt(&line, tp);
            if (pp > 1) {
              AppendCat(&line, ", ", pp, " pipeline stages of at most ", LayersPerStage(shape, pp),
                        " of ", shape.num_layers, " layers");
            }
          }
          if (pp > 1) {
            lines.AddLine(absl::StrCat(
                "weights per stage (bounded from above): min(", f.weights_gib, ", ",
                LayersPerStage(shape, pp), " layers x ", f.weights_gib, " / ",
                shape.num_largest_layers, " layers + embeddings ", Num(shape.embedding_parameters),
                " parameters x ", Num(std::max(2.0, shape.weight_bytes / shape.parameters)),
                " bytes) = ", GiB(weights * tp), "; KV cache per stage: min(", f.kv_cache_gib, ", ",
                LayersPerStage(shape, pp), " layers x ", GiB(shape.kv_cache_bytes_largest_layer),
                " per full layer",
                shape.kv_cache_bytes > shape.model_kv_cache_bytes ? " + the draft model's" : "",
                ")"));
          }
          if (n == 1) {
            const LineScope scope(&lines);
            LineWriter& line = lines;
            line.append(f.one_card_parts);
            AppendGiB(&line, plan.headroom_bytes_per_card);
            return SharedLines::Figures{};
          }
          const LineScope scope(&lines);
          LineWriter& line = lines;
          AppendLiteral(&line, "per card on ");
          AppendInt(&line, n);
          AppendLiteral(&line, ": weights ");
          if (pp > 1) AppendLiteral(&line, "per stage ");
          AppendGiB(&line, weights * tp);
          AppendLiteral(&line, " / ");
          AppendInt(&line, tp);
          AppendLiteral(&line, " + KV cache ");
          AppendGiB(&line, kv_cache);
          if (shape.kv_cache_not_counted) AppendLiteral(&line, kKvNotCounted);
          if (shape.kv_cache_replicated && tp > 1) {
            AppendLiteral(&line, " (MLA latent cache: whole on every rank)");
          }
          line.append(f.fixed_parts_sum);
          AppendGiB(&line, plan.required_bytes_per_card);
          AppendLiteral(&line, "; headroom ");
          AppendGiB(&line, plan.headroom_bytes_per_card);
          return SharedLines::Figures{};
        });
  }

  if (device.roofline_does_not_apply) {
    // Weights held in on-chip SRAM over a wafer or many chips: what limits
    // decode is the fabric between cores and chips, which no record states.
    plan.speed_not_modelled =
        "speed not modelled: on-chip SRAM (wafer-scale or SRAM-only design); the memory "
        "roofline does not apply";
    lines.AddLine(plan.speed_not_modelled);
    return;
  }
  SpeedInput speed{.sizing = &shape,
                   .layout = *layout,
                   .nodes = plan.nodes,
                   .batch_size = w.batch_size,
                   .prompt_tokens = w.prompt_tokens,
                   .prefill_chunk_tokens = w.prefill_chunk_tokens,
                   .prefill_efficiency = w.prefill_efficiency,
                   .bandwidth_bytes_per_second = device.bandwidth_bytes_per_second,
                   .peak_flops = device.peak_flops};
  if (n > 1) {
    speed.within_node = WithinNodeLink(device.links);
    if (plan.nodes > 1) speed.between_nodes = BetweenNodesLink(device.links);
  }
  // Figures this plan states twice (AppendNumKept).
  FigureText decode_text;
  FigureText prefill_text;
  const bool has_peak =
      device.peak_flops.has_value() && *device.peak_flops > 0 && shape.active_parameters() > 0;

  // Decode is memory-bound: every step reads the weights (for MoE only the
  // active experts' share) and the batch's KV cache once, then the links
  // carry the activations (core/speed.h).
  const double active_share = shape.active_share;
  const bool has_bandwidth =
      device.bandwidth_bytes_per_second.has_value() && *device.bandwidth_bytes_per_second > 0;
  // On one card the decode bound and its line depend on the bandwidth and
  // the peak (the compute roof) only.
  const uint64_t peak_key = KeyBits(device.peak_flops);
  if (has_bandwidth) {
    const SharedLines::Figures decode = SharedOrWritten(
        shared_one_card, SharedLines::Kind::kDecode, KeyBits(device.bandwidth_bytes_per_second),
        peak_key, lines, [&]() __attribute__((always_inline)) {
          const DecodeBound d = BoundDecode(speed);
          const int m = d.micro_batches;
          const LineScope scope(&lines, n == 1 ? kShortLine : kUsualLine);
          LineWriter& line = lines;
          if (n == 1) {
            // One card: no links, no stages (the hot path of a plan over every
            // accelerator: one line, one allocation).
            AppendLiteral(&line, "decode bound: ");
            AppendRecordFigure(&line, *device.bandwidth_bytes_per_second / 1e9,
                               usable != nullptr ? &usable->bandwidth_gb_per_second : nullptr);
            line.append(f.decode_one_card);
            AppendNumKept(&line, d.tokens_per_second_per_sequence, &decode_text);
            line.append(f.decode_batch);
            AppendNumKept(&line, d.tokens_per_second_all, &decode_text);
            AppendLiteral(&line, " tokens/s");
          } else if (ep) {
            const double expert_each = shape.expert_weight_bytes / shape.num_experts;
            line.append(
                absl::StrCat("decode step: (dense weights read ",
                             GiB(std::max(0.0, shape.weight_bytes * active_share -
                                                   expert_each * shape.num_experts_per_token)),
                             " / ", tp, " + ", d.experts_read_per_card, " routed expert",
                             d.experts_read_per_card > 1 ? "s" : "", " of each MoE layer (top-",
                             shape.num_experts_per_token, " over ", n, " cards at best evenly) ",
                             GiB(expert_each * d.experts_read_per_card), " + KV ", GiB(kv_cache),
                             ") / ", Num(*device.bandwidth_bytes_per_second / 1e9),
                             " GB/s = ", Num(d.memory_seconds * 1e3), " ms"));
          } else {
            const int kv_divisor = KvCacheDivisor(shape, tp);
            line.append(f.decode_step_weights);
            AppendInt(&line, tp);
            line.append(f.decode_step_kv);
            if (m > 1) {
              AppendLiteral(&line, " / ");
              AppendInt(&line, m);
              AppendLiteral(&line, " micro-batches");
            }
            AppendLiteral(&line, " / ");
            AppendInt(&line, kv_divisor);
            if (shape.kv_cache_replicated) {
              AppendLiteral(&line, " (latent cache on every rank)");
            } else if (kv_divisor < tp) {
              AppendLiteral(&line, " (KV heads)");
            }
            AppendLiteral(&line, ") / ");
            AppendRecordFigure(&line, *device.bandwidth_bytes_per_second / 1e9,
                               usable != nullptr ? &usable->bandwidth_gb_per_second : nullptr);
            AppendLiteral(&line, " GB/s = ");
            AppendNum(&line, d.memory_seconds * 1e3);
            AppendLiteral(&line, " ms");
          }
          if (n > 1) {
            plan.decode_communication_seconds =
                d.tensor_parallel_seconds + d.pipeline_seconds + d.expert_parallel_seconds;
            if (d.tensor_parallel_seconds > 0) {
              if (d.overlapped) {
                AppendLiteral(&line, "; overlapped with TP all-reduces ");
              } else {
                AppendLiteral(&line, " + TP all-reduces ");
              }
              if (ep) {
                AppendInt(&line, shape.num_layers);
                AppendLiteral(&line, " + ");
                AppendInt(&line, std::max(0, shape.num_layers - shape.num_moe_layers));
                AppendLiteral(&line, " dense");
              } else {
                AppendLiteral(&line, "2 x ");
                AppendInt(&line, shape.num_layers);
              }
              AppendLiteral(&line, " layers over ");
              line.append(speed.within_node->kind);
              AppendLiteral(&line, " (");
              AppendWhole(&line, speed.within_node->bytes_per_second / 1e9);
              AppendLiteral(&line, " GB/s per direction, ");
              AppendWhole(&line, speed.within_node->latency_seconds * 1e6);
              AppendLiteral(&line, " us each) = ");
              AppendNum(&line, d.tensor_parallel_seconds * 1e3);
              AppendLiteral(&line, " ms");
            }
            if (d.pipeline_seconds > 0) {
              AppendCat(
                  &line,
                  d.overlapped && d.tensor_parallel_seconds == 0 ? "; overlapped with " : " + ",
                  pp - 1, " pipeline hops",
                  plan.nodes > 1
                      ? absl::StrCat(" (", plan.nodes - 1, " between nodes over ",
                                     speed.between_nodes.kind,
                                     speed.between_nodes.assumed ? ", assumed" : "", ", ",
                                     Whole(speed.between_nodes.bytes_per_second / 1e9), " GB/s)")
                      : std::string(),
                  " = ", Num(d.pipeline_seconds * 1e3), " ms");
            }
            if (d.expert_parallel_seconds > 0) {
              AppendCat(
                  &line,
                  d.overlapped && d.tensor_parallel_seconds == 0 ? "; overlapped with " : " + ",
                  "EP all-to-alls 2 (dispatch, combine) x ", shape.num_moe_layers,
                  " MoE layers: ", SequencesPerReplica(shape, *layout), " tokens / ", tp, " x top-",
                  shape.num_experts_per_token, " x ", shape.hidden_size,
                  " x 2 bytes, (EP - 1) / EP of it to other cards (balanced routing)",
                  plan.nodes > 1
                      ? absl::StrCat(", across nodes over ", speed.between_nodes.kind,
                                     speed.between_nodes.assumed ? " (assumed)" : "", " ",
                                     Whole(speed.between_nodes.bytes_per_second / 1e9), " GB/s")
                      : std::string(),
                  speed.within_node.has_value()
                      ? absl::StrCat(", within a node over ", speed.within_node->kind, " ",
                                     Whole(speed.within_node->bytes_per_second / 1e9), " GB/s")
                      : std::string(),
                  " = ", Num(d.expert_parallel_seconds * 1e3), " ms");
            }
            if (d.overlapped &&
                d.tensor_parallel_seconds + d.pipeline_seconds + d.expert_parallel_seconds > 0) {
              AppendCat(&line, " (the batch splits in two: step = the longer of reads and links = ",
                        Num(d.step_seconds() * 1e3), " ms)");
            }
            if (pp > 1 && m < pp) {
              AppendCat(&line, "; pipeline bubble: ", m, " micro-batch", m > 1 ? "es" : "", " for ",
                        pp, " stages, each stage idle ", pp - m, "/", pp, " of the step");
            }
            if (!d.communication_counted) {
              if (shape.hidden_size > 0 && shape.num_layers > 0) {
                AppendLiteral(
                    &line, "; links not counted (no interconnect on record): the bound is looser");
              } else {
                AppendLiteral(
                    &line,
                    "; links not counted (layers or hidden size unknown): the bound is looser");
              }
            }
          }
          if (n > 1) {
            AppendLiteral(&line, " -> ");
            AppendNumKept(&line, d.tokens_per_second_per_sequence, &decode_text);
            line.append(f.decode_batch);
            AppendNumKept(&line, d.tokens_per_second_all, &decode_text);
            AppendLiteral(&line, " tokens/s");
          }
          if (d.compute_bound) {
            AppendCat(&line, " (compute roof: ", n, " x ", Num(*device.peak_flops / 1e12),
                      " TFLOP/s at 100% / (2 x ", f.active_parameters, " active parameters))");
          }
          return SharedLines::Figures{d.tokens_per_second_per_sequence, d.tokens_per_second_all};
        });
    plan.decode_tokens_per_second = decode[0];
    plan.decode_tokens_per_second_all = decode[1];
  }
  if (device.bandwidth_doubtful && plan.decode_tokens_per_second.has_value()) {
    // The bound is only as good as the record's bandwidth.
    const double bandwidth = device.bandwidth_bytes_per_second.value_or(0);
    const KeptFigure* kept = usable != nullptr ? &usable->doubtful_bandwidth_line : nullptr;
    if (kept != nullptr && kept->kept && kept->value == bandwidth) {
      plan.decode_bound_doubtful.assign(kept->text);
    } else {
      plan.decode_bound_doubtful = DoubtfulBandwidthReason(device.memory_bytes, bandwidth);
    }
    lines.AddLine(plan.decode_bound_doubtful);
  }

  // Prefill is compute-bound: 2 FLOP per active parameter per token. On one
  // card its bound and lines depend on the peak only.
  if (has_peak) {
    const SharedLines::Figures prefill = SharedOrWritten(
        shared_one_card, SharedLines::Kind::kPrefill, peak_key, 0,
        lines, [&]() __attribute__((always_inline)) {
          const PrefillBound p = BoundPrefill(speed);
          {
            const LineScope scope(&lines, kShortLine);
            LineWriter& line = lines;
            AppendLiteral(&line, "prefill bound: ");
            AppendInt(&line, n);
            AppendLiteral(&line, " x ");
            AppendRecordNum(&line, *device.peak_flops / 1e12);
            line.append(f.prefill_after_peak);
            AppendNumKept(&line, p.tokens_per_second, &prefill_text);
            AppendLiteral(&line, " tokens/s");
          }
          if (w.prompt_tokens > 0) {
            const bool links_longer =
                p.tensor_parallel_seconds > p.compute_seconds * p.bubble_factor;
            if (pp == 1 && !links_longer) {
              const LineScope scope(&lines, kShortLine);
              LineWriter& line = lines;
              line.append(f.first_token_before_prefill);
              AppendNumKept(&line, p.tokens_per_second, &prefill_text);
              AppendLiteral(&line, " tokens/s = ");
              AppendNum(&line, p.time_to_first_token_seconds);
              AppendLiteral(&line, " s");
            } else {
              std::string line =
                  absl::StrCat("time to first token: ", w.prompt_tokens, " prompt tokens / ",
                               Num(p.tokens_per_second), " tokens/s");
              if (pp > 1) {
                AppendCat(&line, " x (", p.chunks, " chunks + ", pp - 1, ") / ", p.chunks,
                          " (pipeline bubble)");
              }
              if (links_longer) {
                AppendCat(&line,
                          "; the TP all-reduces take longer: ", Num(p.tensor_parallel_seconds),
                          " s");
              }
              AppendCat(&line, " = ", Num(p.time_to_first_token_seconds), " s");
              lines.AddLine(line);
            }
          }
          return SharedLines::Figures{p.tokens_per_second, p.time_to_first_token_seconds};
        });
    plan.prefill_tokens_per_second = prefill[0];
    if (w.prompt_tokens > 0) plan.time_to_first_token_seconds = prefill[1];
  }

  if (device.price_usd_per_hour.has_value() && plan.decode_tokens_per_second_all.has_value()) {
    const double per_hour = *plan.decode_tokens_per_second_all * 3600;
    plan.cost_usd_per_million_tokens = *device.price_usd_per_hour * n / per_hour * 1e6;
    const LineScope scope(&lines, kShortLine);
    LineWriter& line = lines;
    AppendLiteral(&line, "cost: ");
    AppendInt(&line, n);
    AppendLiteral(&line, " x $");
    AppendRecordFigure(&line, *device.price_usd_per_hour,
                       usable != nullptr ? &usable->price_usd_per_hour : nullptr);
    AppendLiteral(&line, "/h / (");
    AppendNumKept(&line, *plan.decode_tokens_per_second_all, &decode_text);
    AppendLiteral(&line, " tokens/s x 3600) x 1e6 = $");
    AppendNum(&line, *plan.cost_usd_per_million_tokens);
    AppendLiteral(&line, " per million tokens");
  }
}

uint64_t NewPlanGeneration() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

void AppendWireLines(const std::string& wire, std::vector<std::string>* lines) {
  ForEachWireLine(wire, [lines](std::string_view text) { lines->emplace_back(text); });
}

void AppendPlanWireLines(const DevicePlan& plan, std::vector<std::string>* lines) {
  if (plan.usable_line_wire != nullptr) AppendWireLines(*plan.usable_line_wire, lines);
  AppendWireLines(plan.arithmetic_wire, lines);
}

std::vector<int> RankOrder(PlanObjective objective, const std::vector<DevicePlan>& all) {
  return RankOrder(objective, all.size(), all);
}

std::vector<int> RankOrder(PlanObjective objective, size_t count,
                           const std::vector<DevicePlan>& all) {
  return RankOrder(objective, count, all, {});
}

std::vector<int> RanksByName(size_t count, absl::FunctionRef<const std::string&(size_t)> name_of) {
  std::vector<int> by_name(count);
  for (size_t i = 0; i < count; ++i) by_name[i] = static_cast<int>(i);
  std::sort(by_name.begin(), by_name.end(),
            [&name_of](int a, int b) { return name_of(a) < name_of(b); });
  std::vector<int> rank(count);
  int current = 0;
  for (size_t i = 0; i < count; ++i) {
    if (i > 0 && name_of(by_name[i - 1]) != name_of(by_name[i])) current = static_cast<int>(i);
    rank[by_name[i]] = current;
  }
  return rank;
}

namespace {

// A double as an unsigned integer in the same order (IEEE 754's bits, the
// negatives' flipped): -0 and +0 the same, as they compare equal.
uint64_t Ordered(double value) {
  const uint64_t bits = std::bit_cast<uint64_t>(value + 0.0);
  return (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
}

// A fitting plan's place under an objective: four words compared in order,
// then its name's rank and its position (equal plans keep their order, as
// a stable sort would).
struct RankKey {
  uint64_t words[4];
  uint32_t name_rank;
  uint32_t position;
};

bool RanksBefore(const RankKey& a, const RankKey& b) {
  for (int i = 0; i < 4; ++i) {
    if (a.words[i] != b.words[i]) return a.words[i] < b.words[i];
  }
  if (a.name_rank != b.name_rank) return a.name_rank < b.name_rank;
  return a.position < b.position;
}

template <PlanObjective kObjective>
RankKey KeyOf(const DevicePlan& p, int name_rank, int position) {
  const uint64_t offload = p.offload != nullptr ? 1 : 0;
  const uint64_t cards = static_cast<uint32_t>(p.cards) ^ (uint32_t{1} << 31);  // signed order
  // A speed is not negative: ~Ordered's top bit is 0, and a doubtful one
  // (DevicePlan::decode_bound_doubtful) sets it, ranking after every
  // credible speed.
  const uint64_t doubtful = p.decode_bound_doubtful.empty() ? 0 : 1;
  const uint64_t slower = ~Ordered(p.decode_tokens_per_second_all.value_or(0)) | doubtful << 63;
  RankKey key{.words = {},
              .name_rank = static_cast<uint32_t>(name_rank),
              .position = static_cast<uint32_t>(position)};
  if constexpr (kObjective == PlanObjective::kCheapest) {
    const bool has_cost = p.cost_usd_per_million_tokens.has_value();
    // A credible cost, then a doubtful one, then none.
    key.words[0] = offload << 2 | (has_cost ? doubtful : 2);
    key.words[1] = has_cost ? Ordered(*p.cost_usd_per_million_tokens) : 0;
    key.words[2] = cards;
    key.words[3] = slower;
  } else if constexpr (kObjective == PlanObjective::kFastest) {
    key.words[0] = offload;
    key.words[1] = slower;
    key.words[2] = cards;
  } else {
    key.words[0] = offload << 32 | cards;
    key.words[1] = slower;
  }
  return key;
}

// A key sorted by a 64-bit prefix of its order, then (prefixes equal) by
// the whole key: most comparisons are one of integers, and a sort moves 16
// bytes, not RankKey's 40 (sorting the keys themselves, four words compared
// in turn, was 6% of a plan over every accelerator's instructions under
// callgrind, docs/BENCHMARKS.md, session 24).
struct Sortable {
  uint64_t prefix;
  uint32_t key;  // index into the keys
};

// The prefix: words[0] less the smallest (exact while the keys' words[0] lie
// within 256 of each other: cards, offload, whether there is a cost) in the
// top byte, then words[1]'s top 56 bits. A smaller prefix is a smaller key
// (words[0] smaller, or equal and words[1] smaller); equal prefixes are
// ordered by the whole key. Keys whose words[0] spread wider all get
// prefix 0: the whole key orders them.
std::vector<Sortable> SortablesOf(const std::vector<RankKey>& keys) {
  std::vector<Sortable> sortables(keys.size());
  uint64_t lowest = UINT64_MAX;
  uint64_t highest = 0;
  for (const RankKey& key : keys) {
    lowest = std::min(lowest, key.words[0]);
    highest = std::max(highest, key.words[0]);
  }
  const bool narrow = keys.empty() || highest - lowest < 256;
  for (size_t i = 0; i < keys.size(); ++i) {
    sortables[i].key = static_cast<uint32_t>(i);
    sortables[i].prefix = narrow ? (keys[i].words[0] - lowest) << 56 | keys[i].words[1] >> 8 : 0;
  }
  return sortables;
}

}  // namespace

std::vector<int> RankOrder(PlanObjective objective, size_t count,
                           const std::vector<DevicePlan>& all, std::span<const int> name_ranks) {
  // Fitting plans by a key of integers compared word by word; the others
  // by name (its rank, an int). Comparing the plans' fields through their
  // positions, names as strings, was 7% of a plan over every accelerator
  // under callgrind (docs/BENCHMARKS.md, session 20). The order is the
  // comparison plan.h documents (RankOrderTest checks it against one); a NaN
  // speed or cost has no order, and lands anywhere.
  const size_t n = std::min(count, all.size());
  std::vector<int> own_ranks;
  if (name_ranks.size() < n) {
    own_ranks = RanksByName(n, [&all](size_t i) -> const std::string& { return NameOf(all[i]); });
    name_ranks = own_ranks;
  }
  std::vector<RankKey> keys;
  std::vector<std::pair<int, int>> not_fitting;  // (name rank, position)
  keys.reserve(n);
  not_fitting.reserve(n);
  const auto key_by = [&]<PlanObjective kObjective>() {
    for (size_t i = 0; i < n; ++i) {
      const int at = static_cast<int>(i);
      if (all[i].fits) {
        keys.push_back(KeyOf<kObjective>(all[i], name_ranks[i], at));
      } else {
        not_fitting.emplace_back(name_ranks[i], at);
      }
    }
  };
  switch (objective) {
    case PlanObjective::kCheapest:
      key_by.template operator()<PlanObjective::kCheapest>();
      break;
    case PlanObjective::kFastest:
      key_by.template operator()<PlanObjective::kFastest>();
      break;
    case PlanObjective::kFewestCards:
    default:  // no objective's key: cards, speed and name
      key_by.template operator()<PlanObjective::kFewestCards>();
      break;
  }
  std::vector<Sortable> fitting = SortablesOf(keys);
  const RankKey* const key = keys.data();
  std::sort(fitting.begin(), fitting.end(), [key](const Sortable& a, const Sortable& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    return RanksBefore(key[a.key], key[b.key]);
  });
  std::sort(not_fitting.begin(), not_fitting.end());
  std::vector<int> order;
  order.reserve(n);
  for (const Sortable& sortable : fitting)
    order.push_back(static_cast<int>(key[sortable.key].position));
  for (const auto& [rank, at] : not_fitting) order.push_back(at);
  return order;
}

void RankPlans(PlanObjective objective, std::vector<DevicePlan>* plans) {
  // Moves each plan once, in the ranked order.
  const std::vector<int> order = RankOrder(objective, *plans);
  std::vector<DevicePlan> ranked;
  ranked.reserve(plans->size());
  for (int i : order) ranked.push_back(std::move((*plans)[i]));
  *plans = std::move(ranked);
}

}  // namespace modelatlas::estimator
