#include "estimator-service/answers/plan_wire.h"

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "estimator-service/answers/runtime.h"

namespace modelatlas::estimator {
namespace {

// A plan's lines written encoded (core/plan.h) are HardwarePlan's field 15.
static_assert(v1::HardwarePlan::kArithmeticFieldNumber == kArithmeticLineField);

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedOutputStream;

// The figures a card states as integers, converted as the message path
// always has: what is needed rounded up, what is usable rounded down
// (std::ceil and std::floor of a value in int64_t's range). By the
// conversion's truncation toward zero, then a step: the default x86-64
// target has no rounding instruction, so std::ceil and std::floor were a
// libm call each, about 3,000 per plan over every accelerator (both walks).
int64_t Up(double bytes) {
  const auto whole = static_cast<int64_t>(bytes);
  return whole + (static_cast<double>(whole) < bytes ? 1 : 0);
}
int64_t Down(double bytes) {
  const auto whole = static_cast<int64_t>(bytes);
  return whole - (static_cast<double>(whole) > bytes ? 1 : 0);
}

v1::OffloadMode ToProtoMode(OffloadKind kind) {
  return kind == OffloadKind::kExperts ? v1::OFFLOAD_MODE_EXPERTS : v1::OFFLOAD_MODE_LAYERS;
}

// The card's OffloadPlacement (the plan's offload and the request's host).
void OffloadToMessage(const OffloadPlacement& p, const OffloadRequest& offload,
                      v1::OffloadPlacement* placed) {
  placed->set_mode(ToProtoMode(p.kind));
  placed->set_host(offload.host.name);
  placed->set_host_display_name(offload.host.display_name);
  placed->set_layers_on_cards(p.layers_on_cards);
  placed->set_layers_in_host(p.layers_in_host);
  placed->set_expert_layers_in_host(p.expert_layers_in_host);
  placed->set_moe_layers(offload.shape.moe_layers);
  placed->set_card_weight_bytes(Up(p.card_weight_bytes));
  placed->set_card_kv_cache_bytes(Up(p.card_kv_cache_bytes));
  placed->set_host_weight_bytes(Up(p.host_weight_bytes));
  placed->set_host_kv_cache_bytes(Up(p.host_kv_cache_bytes));
  placed->set_host_required_bytes(placed->host_weight_bytes() + placed->host_kv_cache_bytes());
  placed->set_host_usable_bytes(Down(offload.host.allocatable_bytes));
  placed->set_host_bandwidth_bytes_per_second(offload.host.bandwidth_bytes_per_second);
  placed->set_host_bandwidth_source(offload.host.bandwidth_source);
  placed->set_decode_card_seconds(p.decode_card_seconds);
  placed->set_decode_host_seconds(p.decode_host_seconds);
  placed->set_prefill_step_tokens(p.prefill_step_tokens);
  placed->set_prefill_copy_bytes_per_step(p.prefill_copy_bytes_per_step);
  placed->set_pcie_bytes_per_second(p.pcie_bytes_per_second);
  placed->set_prefill_copy_seconds_per_step(p.prefill_copy_seconds_per_step);
  placed->set_prefill_compute_seconds_per_step(p.prefill_compute_seconds_per_step);
}

// The record's device_memory, when the card has one: a record whose figures
// are usable and that states allocatable memory.
const DeviceSpec* DeviceMemoryOf(const PlanWireCards& cards, int index) {
  if (cards.prepared == nullptr) return nullptr;
  const PreparedDevice& record = (*cards.prepared)[index];
  if (!record.figures.ok() || !record.device.allocatable_memory_bytes.has_value()) return nullptr;
  return &record.device;
}

// Fields 18-25 of a card: what a card holds by component, and its layout.
struct SizingFields {
  int64_t weight_bytes = 0;
  int64_t kv_cache_bytes = 0;
  int64_t activation_bytes = 0;
  int64_t overhead_bytes = 0;
  int32_t tensor_parallel = 0;
  int32_t pipeline_parallel = 0;
  int32_t nodes = 0;
  const std::string* layout = nullptr;
};

SizingFields SizingFieldsOf(const DevicePlan& plan) {
  return {.weight_bytes = Up(plan.weight_bytes_per_card),
          .kv_cache_bytes = Up(plan.kv_cache_bytes_per_card),
          .activation_bytes = Up(plan.activation_bytes_per_card),
          .overhead_bytes = Up(plan.overhead_bytes_per_card),
          .tensor_parallel = plan.tensor_parallel,
          .pipeline_parallel = plan.pipeline_parallel,
          .nodes = plan.nodes,
          .layout = &plan.layout};
}

template <typename Sink>
void WalkSizingFields(const SizingFields& f, Sink& sink) {
  if (f.weight_bytes != 0) sink.Int64(18, f.weight_bytes);
  if (f.kv_cache_bytes != 0) sink.Int64(19, f.kv_cache_bytes);
  if (f.activation_bytes != 0) sink.Int64(20, f.activation_bytes);
  if (f.overhead_bytes != 0) sink.Int64(21, f.overhead_bytes);
  if (f.tensor_parallel != 0) sink.Int32(22, f.tensor_parallel);
  if (f.pipeline_parallel != 0) sink.Int32(23, f.pipeline_parallel);
  if (f.nodes != 0) sink.Int32(24, f.nodes);
  if (!f.layout->empty()) sink.Bytes(25, *f.layout);
}

// The bytes of fields 18-25 a writer wrote last, with the figures they were
// written from. In a plan over every accelerator most cards hold the whole
// model on one card: their sizing fields are the same bytes card after card,
// copied rather than encoded again (seven varints and a string, about 140
// instructions a card under callgrind, docs/BENCHMARKS.md, session 21).
class SizingRun {
 public:
  bool Holds(const SizingFields& f) const {
    return size_ != 0 && f.weight_bytes == figures_.weight_bytes &&
           f.kv_cache_bytes == figures_.kv_cache_bytes &&
           f.activation_bytes == figures_.activation_bytes &&
           f.overhead_bytes == figures_.overhead_bytes &&
           f.tensor_parallel == figures_.tensor_parallel &&
           f.pipeline_parallel == figures_.pipeline_parallel && f.nodes == figures_.nodes &&
           *f.layout == layout_;
  }
  uint8_t* CopyTo(uint8_t* p) const {
    std::memcpy(p, bytes_, size_);
    return p + size_;
  }
  // Keeps [begin, end), written from `f` (not kept when longer than the
  // room: a long layout name).
  void Keep(const SizingFields& f, const uint8_t* begin, const uint8_t* end) {
    const auto size = static_cast<size_t>(end - begin);
    if (size == 0 || size > sizeof(bytes_)) {
      size_ = 0;
      return;
    }
    figures_ = f;
    layout_ = *f.layout;
    std::memcpy(bytes_, begin, size);
    size_ = size;
  }

 private:
  SizingFields figures_;
  std::string layout_;
  uint8_t bytes_[96];
  size_t size_ = 0;  // 0: nothing kept
};

// Two sinks for one walk over a card's fields (WalkCard): one counts the
// bytes, the other writes them. Each writes its field unconditionally; the
// walk decides, as the generated code does, which fields are on the wire.
// The tag of field f with wire type t is the varint (f << 3) | t
// (protobuf encoding guide, "Message Structure").
struct Counter {
  size_t bytes = 0;
  static size_t Tag(int field) { return CodedOutputStream::VarintSize32(field << 3); }
  void Bool(int field, bool) { bytes += Tag(field) + 1; }
  void Int32(int field, int32_t v) {
    bytes += Tag(field) + CodedOutputStream::VarintSize32SignExtended(v);
  }
  void Int64(int field, int64_t v) {
    bytes += Tag(field) + CodedOutputStream::VarintSize64(static_cast<uint64_t>(v));
  }
  void Double(int field, double) { bytes += Tag(field) + 8; }
  void Bytes(int field, const std::string& s) {
    bytes +=
        Tag(field) + CodedOutputStream::VarintSize32(static_cast<uint32_t>(s.size())) + s.size();
  }
  // A message field of `size` bytes whose body `write` writes.
  template <typename Body>
  void Message(int field, size_t size, Body&&) {
    bytes += Tag(field) + CodedOutputStream::VarintSize32(static_cast<uint32_t>(size)) + size;
  }
  // A whole field already encoded (tag, length and body).
  void Encoded(const std::string& field) { bytes += field.size(); }
  void Sizing(const SizingFields& f) { WalkSizingFields(f, *this); }
};

struct Writer {
  uint8_t* p;
  // When given, the sizing fields written last (a reply's cards in turn).
  SizingRun* sizing_run = nullptr;
  void Bool(int field, bool v) { p = WireFormatLite::WriteBoolToArray(field, v, p); }
  void Int32(int field, int32_t v) { p = WireFormatLite::WriteInt32ToArray(field, v, p); }
  void Int64(int field, int64_t v) { p = WireFormatLite::WriteInt64ToArray(field, v, p); }
  void Double(int field, double v) { p = WireFormatLite::WriteDoubleToArray(field, v, p); }
  // Text the service wrote or read from a record, which protobuf checked as
  // UTF-8 when the record was parsed: written without a second pass.
  void Bytes(int field, const std::string& s) {
    p = WireFormatLite::WriteTagToArray(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, p);
    p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(s.size()), p);
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
  template <typename Body>
  void Message(int field, size_t size, Body&& body) {
    p = WireFormatLite::WriteTagToArray(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, p);
    p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), p);
    p = body(p);
  }
  void Encoded(const std::string& field) {
    std::memcpy(p, field.data(), field.size());
    p += field.size();
  }
  void Sizing(const SizingFields& f) {
    if (sizing_run == nullptr) {
      WalkSizingFields(f, *this);
    } else if (sizing_run->Holds(f)) {
      p = sizing_run->CopyTo(p);
    } else {
      uint8_t* const begin = p;
      WalkSizingFields(f, *this);
      sizing_run->Keep(f, begin, p);
    }
  }
};

// DeviceMemory (device_memory.proto) of a record, fields 1-4.
template <typename Sink>
void WalkDeviceMemory(const DeviceSpec& device, Sink& sink) {
  if (int64_t v = Down(device.memory_bytes); v != 0) sink.Int64(1, v);
  if (int64_t v = Down(device.allocatable_memory_bytes.value_or(0)); v != 0) sink.Int64(2, v);
  if (device.allocatable_memory_assumed) sink.Bool(3, true);
  if (!device.allocatable_memory_source.empty()) sink.Bytes(4, device.allocatable_memory_source);
}

size_t DeviceMemorySize(const DeviceSpec& device) {
  Counter counter;
  WalkDeviceMemory(device, counter);
  return counter.bytes;
}

// The device_memory field (100) of a record, tag and length included: the
// same bytes on every plan on that record.
template <typename Sink>
void WalkDeviceMemoryField(const DeviceSpec& device, Sink& sink) {
  sink.Message(100, DeviceMemorySize(device), [&device](uint8_t* p) {
    Writer body{p};
    WalkDeviceMemory(device, body);
    return body.p;
  });
}

// Every record's device_memory field of a prepared list, encoded once per
// list (per state of the snapshot's hardware) and thread, not sized and
// written on every card of every reply (about 200 instructions per card
// under callgrind, docs/BENCHMARKS.md, session 17). A thread keeps the last
// list's; a list that is not the one kept (the kept one expired or another
// is asked for) is encoded anew. Shared with the replies that use it.
std::shared_ptr<const std::vector<std::string>> DeviceMemoryFields(
    const std::shared_ptr<const std::vector<PreparedDevice>>& prepared) {
  struct Kept {
    std::weak_ptr<const std::vector<PreparedDevice>> of;
    std::shared_ptr<const std::vector<std::string>> fields;
  };
  thread_local Kept kept;
  if (kept.fields != nullptr && kept.of.lock() == prepared) return kept.fields;
  auto fields = std::make_shared<std::vector<std::string>>(prepared->size());
  for (size_t i = 0; i < prepared->size(); ++i) {
    const PreparedDevice& record = (*prepared)[i];
    if (!record.figures.ok() || !record.device.allocatable_memory_bytes.has_value()) continue;
    Counter counter;
    WalkDeviceMemoryField(record.device, counter);
    std::string& bytes = (*fields)[i];
    bytes.resize(counter.bytes);
    Writer writer{reinterpret_cast<uint8_t*>(bytes.data())};
    WalkDeviceMemoryField(record.device, writer);
  }
  kept = {.of = prepared, .fields = fields};
  return fields;
}

// A rare submessage (offload, runtime_fit: only with offload or a runtime
// in the request, on few cards) is built as a message and serialized by
// protobuf: its bytes are the message path's by construction.
template <typename Sink>
void SerializedMessage(int field, const google::protobuf::MessageLite& message, Sink& sink) {
  const size_t size = message.ByteSizeLong();
  sink.Message(field, size,
               [&message](uint8_t* p) { return message.SerializeWithCachedSizesToArray(p); });
}

// HardwarePlan's fields in field-number order (estimator_service.proto), as
// CardToMessage sets them.
// `device_memory`, when given, is DeviceMemoryFields(cards.prepared).
template <typename Sink>
void WalkCard(const PlanWireCards& cards, int index, Sink& sink,
              const std::vector<std::string>* device_memory = nullptr) {
  const DevicePlan& plan = (*cards.plans)[index];
  if (const std::string& name = NameOf(plan); !name.empty()) sink.Bytes(1, name);
  if (const std::string& display = DisplayNameOf(plan); !display.empty()) sink.Bytes(2, display);
  if (plan.fits) sink.Bool(3, true);
  if (plan.fits_on_one_card) sink.Bool(4, true);
  if (plan.cards != 0) sink.Int32(5, plan.cards);
  const int64_t required = Up(plan.required_bytes_per_card);
  const int64_t usable = Down(plan.usable_bytes_per_card);
  if (required != 0) sink.Int64(6, required);
  if (usable != 0) sink.Int64(7, usable);
  if (const int64_t headroom = usable - required; headroom != 0) sink.Int64(8, headroom);
  if (plan.decode_tokens_per_second) sink.Double(9, *plan.decode_tokens_per_second);
  if (plan.decode_tokens_per_second_all) sink.Double(10, *plan.decode_tokens_per_second_all);
  if (plan.prefill_tokens_per_second) sink.Double(11, *plan.prefill_tokens_per_second);
  if (plan.time_to_first_token_seconds) sink.Double(12, *plan.time_to_first_token_seconds);
  if (plan.cost_usd_per_million_tokens) sink.Double(13, *plan.cost_usd_per_million_tokens);
  if (!plan.reason.empty()) sink.Bytes(14, plan.reason);
  // Repeated: every line is on the wire, an empty one too. Those written
  // encoded (plan.h, kArithmeticLineTag) first, as blocks: the record's
  // usable-memory line, kept with the record, then the plan's own.
  if (plan.usable_line_wire != nullptr) sink.Encoded(*plan.usable_line_wire);
  if (!plan.arithmetic_wire.empty()) sink.Encoded(plan.arithmetic_wire);
  for (const std::string& line : plan.arithmetic) sink.Bytes(15, line);
  if (const std::optional<double>& price = cards.prices[index]; price.has_value()) {
    sink.Double(16, *price);
    if (cards.price_source != v1::PRICE_SOURCE_UNSPECIFIED) sink.Int32(17, cards.price_source);
  }
  sink.Sizing(SizingFieldsOf(plan));
  if (device_memory != nullptr) {
    if (const std::string& field = (*device_memory)[index]; !field.empty()) sink.Encoded(field);
  } else if (const DeviceSpec* device = DeviceMemoryOf(cards, index); device != nullptr) {
    WalkDeviceMemoryField(*device, sink);
  }
  if (!plan.speed_not_modelled.empty()) sink.Bytes(120, plan.speed_not_modelled);
  if (plan.decode_communication_seconds) sink.Double(121, *plan.decode_communication_seconds);
  if (!plan.decode_bound_doubtful.empty()) sink.Bytes(122, plan.decode_bound_doubtful);
  if (plan.offload != nullptr && cards.offload.has_value()) {
    v1::OffloadPlacement placed;
    OffloadToMessage(*plan.offload, *cards.offload, &placed);
    SerializedMessage(240, placed, sink);
  }
  if (!cards.runtime_fits.empty()) {
    if (auto fit = cards.runtime_fits.find(NameOf(plan)); fit != cards.runtime_fits.end()) {
      v1::RuntimeFit message;
      ToProto(fit->second, &message);
      SerializedMessage(260, message, sink);
    }
  }
  if (plan.expert_parallel != 0) sink.Int32(400, plan.expert_parallel);
}

// At most a field's tag (field numbers under 2,048: two bytes) and a length
// (under 2^32: five bytes); a scalar's tag and value (a negative int64 is ten
// bytes, a double eight).
constexpr size_t kLengthFieldHeaderBytes = 2 + 5;
constexpr size_t kScalarFieldBytes = 2 + 10;
// WalkCard's scalar fields: 3-13, 16-24, 121, 400.
constexpr size_t kCardScalarFields = 22;

// An upper bound on the bytes WalkCard writes for card `index`: every
// scalar field at its longest, every length-delimited one with its size.
// Every field WalkCard writes is counted here: a field added there is added
// here (PlanWireTest.OneWalkWritesTheRepliesBytesWithinTheirBound checks
// every card of many plans; ...EveryScalarAtItsLongestIsWithinTheBound the
// constant). Not for a card with an offload placement or a runtime fit
// (PlanWireReply::UpperBoundBytes: those replies are sized exactly).
size_t CardBytesBound(const PlanWireCards& cards, int index,
                      const std::vector<std::string>* device_memory) {
  const DevicePlan& plan = (*cards.plans)[index];
  size_t bound = kCardScalarFields * kScalarFieldBytes;
  for (const std::string* text : {&NameOf(plan), &DisplayNameOf(plan), &plan.reason, &plan.layout,
                                  &plan.speed_not_modelled, &plan.decode_bound_doubtful}) {
    bound += kLengthFieldHeaderBytes + text->size();
  }
  if (plan.usable_line_wire != nullptr) bound += plan.usable_line_wire->size();
  bound += plan.arithmetic_wire.size();
  for (const std::string& line : plan.arithmetic) bound += kLengthFieldHeaderBytes + line.size();
  if (device_memory != nullptr) {
    bound += (*device_memory)[index].size();
  } else if (const DeviceSpec* device = DeviceMemoryOf(cards, index); device != nullptr) {
    bound += kLengthFieldHeaderBytes + DeviceMemorySize(*device);
  }
  return bound;
}

}  // namespace

void CardToMessage(PlanWireCards& cards, int index, google::protobuf::Arena* arena,
                   v1::HardwarePlan* out) {
  DevicePlan& plan = (*cards.plans)[index];
  // The runtime's fit is found by the plan's name, read before it moves.
  if (!cards.runtime_fits.empty()) {
    if (auto fit = cards.runtime_fits.find(NameOf(plan)); fit != cards.runtime_fits.end()) {
      ToProto(fit->second, out->mutable_runtime_fit());
    }
  }
  if (plan.record_name != nullptr) {
    out->set_hardware(*plan.record_name);
  } else {
    out->set_hardware(std::move(plan.name));
  }
  if (plan.record_display_name != nullptr) {
    out->set_display_name(*plan.record_display_name);
  } else {
    out->set_display_name(std::move(plan.display_name));
  }
  out->set_fits(plan.fits);
  out->set_fits_on_one_card(plan.fits_on_one_card);
  out->set_cards(plan.cards);
  out->set_tensor_parallel(plan.tensor_parallel);
  out->set_pipeline_parallel(plan.pipeline_parallel);
  out->set_expert_parallel(plan.expert_parallel);
  out->set_nodes(plan.nodes);
  // An empty string is not on the wire (proto3), and setting one still
  // allocates a string: a plan that does not fit has no layout, one that
  // fits no reason.
  if (!plan.layout.empty()) out->set_layout(std::move(plan.layout));
  out->set_required_bytes_per_card(Up(plan.required_bytes_per_card));
  out->set_usable_bytes_per_card(Down(plan.usable_bytes_per_card));
  out->set_headroom_bytes_per_card(out->usable_bytes_per_card() - out->required_bytes_per_card());
  out->set_weight_bytes_per_card(Up(plan.weight_bytes_per_card));
  out->set_kv_cache_bytes_per_card(Up(plan.kv_cache_bytes_per_card));
  out->set_activation_bytes_per_card(Up(plan.activation_bytes_per_card));
  out->set_overhead_bytes_per_card(Up(plan.overhead_bytes_per_card));
  if (plan.decode_tokens_per_second)
    out->set_decode_tokens_per_second(*plan.decode_tokens_per_second);
  if (plan.decode_tokens_per_second_all) {
    out->set_decode_tokens_per_second_batch(*plan.decode_tokens_per_second_all);
  }
  if (plan.prefill_tokens_per_second) {
    out->set_prefill_tokens_per_second(*plan.prefill_tokens_per_second);
  }
  if (plan.time_to_first_token_seconds) {
    out->set_time_to_first_token_seconds(*plan.time_to_first_token_seconds);
  }
  if (plan.cost_usd_per_million_tokens) {
    out->set_cost_usd_per_million_tokens(*plan.cost_usd_per_million_tokens);
  }
  if (plan.decode_communication_seconds) {
    out->set_decode_communication_seconds(*plan.decode_communication_seconds);
  }
  if (!plan.speed_not_modelled.empty()) {
    out->set_speed_not_modelled(std::move(plan.speed_not_modelled));
  }
  if (!plan.decode_bound_doubtful.empty()) {
    out->set_decode_bound_doubtful(std::move(plan.decode_bound_doubtful));
  }
  if (const std::optional<double>& price = cards.prices[index]; price.has_value()) {
    out->set_price_usd_per_card_hour(*price);
    out->set_price_source(cards.price_source);
  }
  if (const DeviceSpec* device = DeviceMemoryOf(cards, index); device != nullptr) {
    DeviceMemoryToProto(*device, out->mutable_device_memory());
  }
  if (plan.offload != nullptr && cards.offload.has_value()) {
    OffloadToMessage(*plan.offload, *cards.offload, out->mutable_offload());
  }
  if (!plan.reason.empty()) out->set_reason(std::move(plan.reason));
  google::protobuf::RepeatedPtrField<std::string>* lines = out->mutable_arithmetic();
  if (plan.usable_line_wire != nullptr || !plan.arithmetic_wire.empty()) {
    // Lines written for the wire (PlanInput::lines_as_wire) become strings.
    std::vector<std::string> decoded;
    AppendPlanWireLines(plan, &decoded);
    for (std::string& line : decoded) *lines->Add() = std::move(line);
  }
  lines->Reserve(lines->size() + static_cast<int>(plan.arithmetic.size()));
  if (arena != nullptr) {
    // Pointed at, not owned: the pooled plans outlive the reply (their
    // lease ends with the arena), and the arena never deletes what it
    // was given this way.
    for (std::string& line : plan.arithmetic) lines->UnsafeArenaAddAllocated(&line);
  } else {
    for (std::string& line : plan.arithmetic) lines->Add(std::move(line));
  }
}

size_t CardWireSize(const PlanWireCards& cards, int index) {
  Counter counter;
  WalkCard(cards, index, counter);
  return counter.bytes;
}

uint8_t* WriteCardWire(const PlanWireCards& cards, int index, uint8_t* target) {
  Writer writer{target};
  WalkCard(cards, index, writer);
  return writer.p;
}

size_t CardWireBound(const PlanWireCards& cards, int index) {
  return CardBytesBound(cards, index, nullptr);
}

size_t PlanWireReply::ByteSizeLong() const {
  rest_size_ = rest_->ByteSizeLong();
  total_ = rest_size_;
  card_sizes_.clear();
  device_memory_.reset();
  if (cards_ != nullptr) {
    if (cards_->prepared != nullptr && !cards_->order.empty()) {
      device_memory_ = DeviceMemoryFields(cards_->prepared);
    }
    card_sizes_.reserve(cards_->order.size());
    // plans = 2: one length-delimited field per card (tag 0x12).
    for (int index : cards_->order) {
      Counter counter;
      WalkCard(*cards_, index, counter, device_memory_.get());
      const size_t size = counter.bytes;
      card_sizes_.push_back(static_cast<uint32_t>(size));
      total_ += 1 + CodedOutputStream::VarintSize32(static_cast<uint32_t>(size)) + size;
    }
  }
  return total_;
}

namespace {

// The bytes of a serialized reply's field 1 (memory), its tag and length
// included, from its sizes cached by ByteSizeLong.
size_t MemoryFieldBytes(const v1::PlanInferenceResponse& rest) {
  if (!rest.has_memory()) return 0;
  const size_t body = rest.memory().GetCachedSize();
  return 1 + CodedOutputStream::VarintSize32(static_cast<uint32_t>(body)) + body;
}

}  // namespace

uint8_t* PlanWireReply::SerializeWithCachedSizesToArray(uint8_t* target) const {
  // protobuf writes fields in field-number order: memory (1), then the cards
  // (2), then the rest (3 and up). rest has no cards, so its bytes are
  // field 1's followed by the others': the cards go between.
  const size_t memory_bytes = MemoryFieldBytes(*rest_);
  uint8_t* const rest_at = target;
  uint8_t* end = rest_->SerializeWithCachedSizesToArray(rest_at);
  if (cards_ == nullptr || cards_->order.empty()) return end;
  // Move the fields after memory to the end, then write the cards in the gap.
  const size_t tail = rest_size_ - memory_bytes;
  const size_t cards_bytes = total_ - rest_size_;
  std::memmove(rest_at + memory_bytes + cards_bytes, rest_at + memory_bytes, tail);
  uint8_t* p = rest_at + memory_bytes;
  SizingRun sizing_run;
  for (size_t i = 0; i < cards_->order.size(); ++i) {
    p = WireFormatLite::WriteTagToArray(2, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, p);
    p = CodedOutputStream::WriteVarint32ToArray(card_sizes_[i], p);
    Writer writer{p, &sizing_run};
    WalkCard(*cards_, cards_->order[i], writer, device_memory_.get());
    p = writer.p;
  }
  return rest_at + total_;
}

size_t PlanWireReply::UpperBoundBytes() const {
  rest_size_ = rest_->ByteSizeLong();
  card_sizes_.clear();
  device_memory_.reset();
  total_ = 0;
  if (cards_ == nullptr || cards_->order.empty()) return rest_size_;
  // Offload placements and runtime fits are messages protobuf sizes: those
  // replies take the two walks.
  if (cards_->offload.has_value() || !cards_->runtime_fits.empty()) return 0;
  if (cards_->prepared != nullptr) device_memory_ = DeviceMemoryFields(cards_->prepared);
  size_t bound = rest_size_;
  card_sizes_.reserve(cards_->order.size());
  for (int index : cards_->order) {
    const size_t card = CardBytesBound(*cards_, index, device_memory_.get());
    card_sizes_.push_back(static_cast<uint32_t>(card));
    bound += 1 + CodedOutputStream::VarintSize32(static_cast<uint32_t>(card)) + card;
  }
  return bound;
}

uint8_t* PlanWireReply::SerializeWithinBound(uint8_t* target) const {
  // As SerializeWithCachedSizesToArray: memory (1), the cards (2), then the
  // rest (3 and up), but the cards' sizes are learnt as they are written.
  // The fields after memory are set aside and written after the cards.
  const size_t memory_bytes = MemoryFieldBytes(*rest_);
  uint8_t* end = rest_->SerializeWithCachedSizesToArray(target);
  if (cards_ == nullptr || cards_->order.empty()) return end;
  thread_local std::string after_memory;
  after_memory.assign(reinterpret_cast<const char*>(target + memory_bytes),
                      static_cast<size_t>(end - (target + memory_bytes)));
  uint8_t* p = target + memory_bytes;
  SizingRun sizing_run;
  for (size_t i = 0; i < cards_->order.size(); ++i) {
    p = WireFormatLite::WriteTagToArray(2, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, p);
    // The body is written after room for its bound's length; a shorter
    // length (a body under 128 bytes with a bound over) moves it back.
    const int room = CodedOutputStream::VarintSize32(card_sizes_[i]);
    Writer writer{p + room, &sizing_run};
    WalkCard(*cards_, cards_->order[i], writer, device_memory_.get());
    const auto size = static_cast<uint32_t>(writer.p - (p + room));
    const int length = CodedOutputStream::VarintSize32(size);
    if (length < room) std::memmove(p + length, p + room, size);
    p = CodedOutputStream::WriteVarint32ToArray(size, p) + size;
  }
  std::memcpy(p, after_memory.data(), after_memory.size());
  return p + after_memory.size();
}

std::string PlanWireReply::SerializeAsString() const {
  std::string bytes(ByteSizeLong(), '\0');
  uint8_t* begin = reinterpret_cast<uint8_t*>(bytes.data());
  uint8_t* end = SerializeWithCachedSizesToArray(begin);
  bytes.resize(static_cast<size_t>(end - begin));
  return bytes;
}

}  // namespace modelatlas::estimator
