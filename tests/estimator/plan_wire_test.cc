// PlanInference's cards written by hand (answers/plan_wire.h) against the
// message path (CardToMessage, then protobuf's serialization): the bytes
// must be the same for every field set and unset, empty strings, zeros,
// negative figures and NaN, and for the plans over every shipped
// accelerator, whole replies included.
#include "estimator-service/answers/plan_wire.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/catalog/shared_records.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/reply_arena.h"
#include "tests/estimator/fake_records.h"
#include "tests/estimator/field_numbers.h"
#include "tests/estimator/plan_inputs.h"
#include "tests/estimator/shipped_records.h"

namespace modelatlas::estimator {
namespace {

using common::v1::Hardware;
using common::v1::Model;

// The card's bytes both ways: by hand (first: the message path moves the
// plan's strings out), then as CardToMessage's HardwarePlan serialized.
struct BothWays {
  std::string wire;
  std::string message;
};
BothWays Serialize(PlanWireCards& cards, int index) {
  BothWays out;
  out.wire.resize(CardWireSize(cards, index));
  uint8_t* begin = reinterpret_cast<uint8_t*>(out.wire.data());
  uint8_t* end = WriteCardWire(cards, index, begin);
  EXPECT_EQ(static_cast<size_t>(end - begin), out.wire.size()) << "size and bytes written differ";
  v1::HardwarePlan message;
  CardToMessage(cards, index, nullptr, &message);
  out.message = message.SerializeAsString();
  return out;
}

// One card over a prepared record, the request's price or none.
struct OneCard {
  std::vector<DevicePlan> plans;
  PlanWireCards cards;
  explicit OneCard(DevicePlan plan, std::optional<double> price = std::nullopt,
                   std::shared_ptr<const std::vector<PreparedDevice>> prepared = nullptr) {
    plans.push_back(std::move(plan));
    cards.plans = &plans;
    cards.order = {0};
    cards.prices = {price};
    cards.price_source = v1::PRICE_SOURCE_RECORD;
    cards.prepared = std::move(prepared);
  }
};

void ExpectSameBytes(OneCard& card, const std::string& what) {
  SCOPED_TRACE(what);
  const bool bounded = !card.cards.offload.has_value() && card.cards.runtime_fits.empty();
  const size_t bound = bounded ? CardWireBound(card.cards, 0) : 0;
  const BothWays both = Serialize(card.cards, 0);
  EXPECT_EQ(both.wire, both.message);
  if (bounded) {
    EXPECT_LE(both.wire.size(), bound);
  }
  // Not vacuous: the message parses back from the hand bytes.
  v1::HardwarePlan parsed;
  EXPECT_TRUE(parsed.ParseFromString(both.wire));
}

// WriteCardWire writes HardwarePlan's fields one by one (and DeviceMemory's
// for field 100): a field added to either message must be written there and
// sized in CardWireSize, or PlanInference's replies would lack it. Then add
// its number here, and a case to EachFieldAloneIsTheMessagesBytes.
TEST(PlanWireTest, TheHandWrittenMessagesHaveTheFieldsTheWriterKnows) {
  EXPECT_EQ(
      FieldNumbers(v1::HardwarePlan::descriptor()),
      (std::vector<int>{1,  2,  3,  4,  5,  6,  7,  8,  9,  10,  11,  12,  13,  14,  15,  16,
                        17, 18, 19, 20, 21, 22, 23, 24, 25, 100, 120, 121, 122, 240, 260, 400}))
      << "HardwarePlan changed: write the new field in answers/plan_wire.cc";
  EXPECT_EQ(FieldNumbers(v1::DeviceMemory::descriptor()), (std::vector<int>{1, 2, 3, 4}))
      << "DeviceMemory changed: write the new field in answers/plan_wire.cc";
}

// Every field of a card at its proto3 default: nothing on the wire.
TEST(PlanWireTest, DefaultPlanIsAnEmptyCard) {
  OneCard card{DevicePlan{}};
  const BothWays both = Serialize(card.cards, 0);
  EXPECT_EQ(both.wire, "");
  EXPECT_EQ(both.message, "");
}

// Each field set alone, at a value that is on the wire, and at values
// protobuf omits or writes in full (zero, negative, NaN, empty strings).
TEST(PlanWireTest, EachFieldAloneIsTheMessagesBytes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<std::string, std::function<void(DevicePlan&)>>> cases = {
      {"name", [](DevicePlan& p) { p.name = "hardware/nvidia-h100"; }},
      {"display_name", [](DevicePlan& p) { p.display_name = "NVIDIA H100 SXM5 80GB"; }},
      {"display_name utf-8",
       [](DevicePlan& p) { p.display_name = "Ascend 910B \xe2\x80\x94 64 GB"; }},
      {"fits", [](DevicePlan& p) { p.fits = true; }},
      {"fits_on_one_card", [](DevicePlan& p) { p.fits_on_one_card = true; }},
      {"cards", [](DevicePlan& p) { p.cards = 1024; }},
      {"cards negative", [](DevicePlan& p) { p.cards = -1; }},
      {"required", [](DevicePlan& p) { p.required_bytes_per_card = 18.2e9 + 0.5; }},
      {"required below 1", [](DevicePlan& p) { p.required_bytes_per_card = 0.25; }},
      {"usable", [](DevicePlan& p) { p.usable_bytes_per_card = 85899345920.75; }},
      {"usable below 1 (floor 0)", [](DevicePlan& p) { p.usable_bytes_per_card = 0.75; }},
      {"headroom negative",
       [](DevicePlan& p) {
         p.required_bytes_per_card = 9e11;
         p.usable_bytes_per_card = 2e10;
       }},
      {"equal: headroom 0",
       [](DevicePlan& p) {
         p.required_bytes_per_card = 4e10;
         p.usable_bytes_per_card = 4e10;
       }},
      {"decode", [](DevicePlan& p) { p.decode_tokens_per_second = 123.456; }},
      {"decode 0 (optional: on the wire)", [](DevicePlan& p) { p.decode_tokens_per_second = 0.0; }},
      {"decode -0", [](DevicePlan& p) { p.decode_tokens_per_second = -0.0; }},
      {"decode NaN", [=](DevicePlan& p) { p.decode_tokens_per_second = nan; }},
      {"decode batch", [](DevicePlan& p) { p.decode_tokens_per_second_all = 1e6; }},
      {"prefill", [](DevicePlan& p) { p.prefill_tokens_per_second = 9876.5; }},
      {"ttft", [](DevicePlan& p) { p.time_to_first_token_seconds = 0.0123; }},
      {"cost", [](DevicePlan& p) { p.cost_usd_per_million_tokens = 0.42; }},
      {"cost infinite",
       [](DevicePlan& p) {
         p.cost_usd_per_million_tokens = std::numeric_limits<double>::infinity();
       }},
      {"reason", [](DevicePlan& p) { p.reason = "does not fit on 64 cards or fewer"; }},
      {"one line", [](DevicePlan& p) { p.arithmetic = {"usable per card: 80 GiB"}; }},
      {"empty lines (repeated: on the wire)",
       [](DevicePlan& p) {
         p.arithmetic = {"", "", "x"};
       }},
      {"a line of 300 bytes (two-byte length)",
       [](DevicePlan& p) { p.arithmetic = {std::string(300, 'a')}; }},
      {"a line of 20,000 bytes (three-byte length)",
       [](DevicePlan& p) { p.arithmetic = {std::string(20000, 'b')}; }},
      {"weight", [](DevicePlan& p) { p.weight_bytes_per_card = 16060522496; }},
      {"kv", [](DevicePlan& p) { p.kv_cache_bytes_per_card = 1073741824.5; }},
      {"activation", [](DevicePlan& p) { p.activation_bytes_per_card = 44553216; }},
      {"overhead", [](DevicePlan& p) { p.overhead_bytes_per_card = 1073741824; }},
      {"overhead negative", [](DevicePlan& p) { p.overhead_bytes_per_card = -5.5; }},
      {"tp", [](DevicePlan& p) { p.tensor_parallel = 8; }},
      {"pp", [](DevicePlan& p) { p.pipeline_parallel = 16; }},
      {"nodes", [](DevicePlan& p) { p.nodes = 200; }},
      {"layout", [](DevicePlan& p) { p.layout = "TP 8 x PP 2 over 2 nodes"; }},
      {"speed_not_modelled",
       [](DevicePlan& p) { p.speed_not_modelled = "SRAM-only: no roofline"; }},
      {"communication", [](DevicePlan& p) { p.decode_communication_seconds = 1.5e-5; }},
      {"decode_bound_doubtful",
       [](DevicePlan& p) { p.decode_bound_doubtful = "bandwidth doubtful: 1.8e+04 GB/s"; }},
      {"expert_parallel", [](DevicePlan& p) { p.expert_parallel = 64; }},
      {"expert_parallel negative", [](DevicePlan& p) { p.expert_parallel = -3; }},
  };
  for (auto& [what, set] : cases) {
    DevicePlan plan;
    set(plan);
    OneCard card{std::move(plan)};
    ExpectSameBytes(card, what);
    // Every other field set as well (the field's place among the others).
    DevicePlan full;
    full.name = "hardware/x";
    full.display_name = "X";
    full.fits = true;
    full.cards = 2;
    full.required_bytes_per_card = 3e10;
    full.usable_bytes_per_card = 7e10;
    full.arithmetic = {"a", "b"};
    full.layout = "TP 2";
    full.decode_tokens_per_second = 50;
    full.expert_parallel = 2;
    full.speed_not_modelled = "s";
    full.decode_bound_doubtful = "d";
    set(full);
    OneCard with_others{std::move(full), 2.5};
    ExpectSameBytes(with_others, absl::StrCat(what, ", with the others"));
  }
}

// CardWireBound's constant for the scalar fields holds them all at their
// longest (negative integers are ten-byte varints, every optional double
// set), with no text to make up for it: the one-walk reply
// (PlanWireReply::SerializeWithinBound) writes into a slice of the bound.
TEST(PlanWireTest, EveryScalarAtItsLongestIsWithinTheBound) {
  DevicePlan plan;
  plan.fits = true;
  plan.fits_on_one_card = true;
  plan.cards = -1;
  plan.required_bytes_per_card = 1e18;
  plan.usable_bytes_per_card = -1e18;
  plan.decode_tokens_per_second = 1;
  plan.decode_tokens_per_second_all = 2;
  plan.prefill_tokens_per_second = 3;
  plan.time_to_first_token_seconds = 4;
  plan.cost_usd_per_million_tokens = 5;
  plan.weight_bytes_per_card = -1e18;
  plan.kv_cache_bytes_per_card = -1e18;
  plan.activation_bytes_per_card = -1e18;
  plan.overhead_bytes_per_card = -1e18;
  plan.tensor_parallel = -1;
  plan.pipeline_parallel = -1;
  plan.nodes = -1;
  plan.decode_communication_seconds = 6;
  plan.expert_parallel = -1;
  OneCard card{plan, 7.5};
  const size_t bound = CardWireBound(card.cards, 0);
  const size_t size = CardWireSize(card.cards, 0);
  EXPECT_LE(size, bound);
  // Not a bound of anything: what it counts beyond these bytes is the six
  // empty texts' headers (42), a second tag byte on fields 3-13 (11), the
  // value bytes the two bools, seven doubles, the price source (1) and the
  // required bytes (1e18: nine) do not take (18 + 14 + 9 + 1): 95.
  EXPECT_EQ(bound - size, 95u) << size << " of " << bound;
  ExpectSameBytes(card, "every scalar at its longest");
}

// The byte counts on the wire are std::ceil of what a card needs and
// std::floor of what it may use (the writer rounds without libm), at
// integers, halves, values just off an integer, negatives (a headroom below
// zero comes from them) and near 2^53.
TEST(PlanWireTest, ByteCountsAreCeilingsOfNeedsAndFloorsOfWhatIsUsable) {
  const double edges[] = {0.0,
                          0.25,
                          0.5,
                          0.75,
                          1.0,
                          -0.25,
                          -0.5,
                          -1.0,
                          -1.75,
                          79.6e9 + 0.9,
                          80e9,
                          80e9 - 0.5,
                          std::nextafter(80e9, 0.0),
                          std::nextafter(80e9, 1e12),
                          -3e9 - 0.5,
                          4503599627370495.5,
                          9007199254740992.0};
  for (const double needed : edges) {
    for (const double usable : edges) {
      DevicePlan plan{.name = "hardware/a"};
      plan.required_bytes_per_card = needed;
      plan.usable_bytes_per_card = usable;
      plan.weight_bytes_per_card = needed;
      plan.kv_cache_bytes_per_card = usable;
      OneCard card{std::move(plan)};
      const BothWays both = Serialize(card.cards, 0);
      v1::HardwarePlan parsed;
      ASSERT_TRUE(parsed.ParseFromString(both.wire));
      const auto up = static_cast<int64_t>(std::ceil(needed));
      const auto down = static_cast<int64_t>(std::floor(usable));
      EXPECT_EQ(parsed.required_bytes_per_card(), up) << needed;
      EXPECT_EQ(parsed.usable_bytes_per_card(), down) << usable;
      EXPECT_EQ(parsed.headroom_bytes_per_card(), down - up) << needed << " " << usable;
      EXPECT_EQ(parsed.weight_bytes_per_card(), up) << needed;
      EXPECT_EQ(parsed.kv_cache_bytes_per_card(), static_cast<int64_t>(std::ceil(usable)))
          << usable;
    }
  }
}

// The price and where it came from; the record's device memory (absent
// when its figures are unusable or it states no allocatable memory).
TEST(PlanWireTest, PriceAndDeviceMemoryAreTheMessagesBytes) {
  for (std::optional<double> price : {std::optional<double>(), std::optional<double>(0.0),
                                      std::optional<double>(2.49), std::optional<double>(-1.0)}) {
    for (v1::PriceSource source :
         {v1::PRICE_SOURCE_UNSPECIFIED, v1::PRICE_SOURCE_RECORD, v1::PRICE_SOURCE_REQUEST}) {
      OneCard card{DevicePlan{.name = "hardware/a"}, price};
      card.cards.price_source = source;
      ExpectSameBytes(card, absl::StrCat("price ", price.value_or(-99), " source ", source));
    }
  }
  auto prepared = std::make_shared<std::vector<PreparedDevice>>(5);
  (*prepared)[0].device.memory_bytes = 80e9;
  (*prepared)[0].device.allocatable_memory_bytes = 79.6e9 + 0.9;
  (*prepared)[0].device.allocatable_memory_source = "NVIDIA's datasheet";
  (*prepared)[1].device.memory_bytes = 0;  // every field at its default
  (*prepared)[1].device.allocatable_memory_bytes = 0;
  (*prepared)[2].device.memory_bytes = 24e9;
  (*prepared)[2].device.allocatable_memory_bytes = 24e9 * 0.75;
  (*prepared)[2].device.allocatable_memory_assumed = true;
  (*prepared)[3].device.memory_bytes = 16e9;  // no allocatable memory: no device_memory
  (*prepared)[4] = (*prepared)[0];
  (*prepared)[4].figures = absl::InvalidArgumentError("bandwidth missing");  // unusable
  for (int i = 0; i < 5; ++i) {
    std::vector<PreparedDevice> one(1, (*prepared)[i]);
    OneCard card{DevicePlan{.name = "hardware/a"}, std::nullopt,
                 std::make_shared<const std::vector<PreparedDevice>>(std::move(one))};
    const BothWays both = Serialize(card.cards, 0);
    EXPECT_EQ(both.wire, both.message) << "record " << i;
    v1::HardwarePlan parsed;
    ASSERT_TRUE(parsed.ParseFromString(both.wire));
    EXPECT_EQ(parsed.has_device_memory(), i <= 2) << "record " << i;
  }
}

// The rare submessages: offload (with an offload request) and the runtime's
// fit (found by the plan's name).
TEST(PlanWireTest, OffloadAndRuntimeFitAreTheMessagesBytes) {
  DevicePlan plan{.name = "hardware/rtx-4090", .display_name = "RTX 4090"};
  auto placement = std::make_shared<OffloadPlacement>();
  placement->kind = OffloadKind::kExperts;
  placement->layers_on_cards = 20;
  placement->layers_in_host = 12;
  placement->card_weight_bytes = 2.2e10 + 0.3;
  placement->host_weight_bytes = 1.1e10;
  placement->decode_host_seconds = 0.02;
  plan.offload = placement;
  plan.arithmetic = {"offload (llama.cpp -ngl 20)"};
  OneCard card{plan};
  OffloadRequest request;
  request.host.name = "hardware/host-2x-amd-epyc-9004-ddr5-4800";
  request.host.display_name = "2x EPYC";
  request.host.allocatable_bytes = 7.5e11;
  card.cards.offload = request;
  RuntimeFit fit;
  fit.runtime = Runtime::kVllm;
  fit.version = "0.11";
  fit.fits = true;
  fit.kv_cache_blocks = 1000;
  fit.notes = {"a note"};
  card.cards.runtime_fits["hardware/rtx-4090"] = fit;
  card.cards.runtime_fits["hardware/other"] = RuntimeFit{};
  ExpectSameBytes(card, "offload and runtime fit");
  // Without the request's offload the plan's placement is not stated (as
  // the message path).
  OneCard no_request{plan};
  ExpectSameBytes(no_request, "placement without a request");
}

// The workloads of PreparedRecordsTest.PlansWrittenOverEarlierPlansAreFreshPlans
// (8B, 405B, 405B on at most 2 cards, 8B, 8B at 0.8 utilization), each plan
// written over the previous workload's on the same record, on every shipped
// accelerator with its record's price and device memory: every card's hand
// bytes are its message's.
TEST(PlanWireTest, EveryShippedAcceleratorsCardIsTheMessagesBytes) {
  const SharedRecords<Hardware> list(testing::ShippedHardwareRecords());
  ASSERT_GE(list.size(), 200u);
  const auto prepared = PreparedDevicesOf(list);
  PlanInput small = Llama31_8BInBf16();
  PlanInput large = About405BInBf16();
  PlanInput few_cards = large;
  few_cards.max_cards = 2;
  PlanInput other_utilization = small;
  other_utilization.workload.memory_utilization = 0.8;
  std::vector<DevicePlan> kept(list.size());
  int compared = 0;
  int with_device_memory = 0;
  int fitting = 0;
  for (const PlanInput* input : {&small, &large, &few_cards, &small, &other_utilization}) {
    PlanWireCards cards;
    cards.plans = &kept;
    cards.prepared = prepared;
    cards.price_source = v1::PRICE_SOURCE_RECORD;
    cards.prices.resize(list.size());
    DeviceSpec device;
    for (size_t i = 0; i < list.size(); ++i) {
      const PreparedDevice& record = (*prepared)[i];
      if (!record.figures.ok()) {
        kept[i] = DevicePlan{.name = list[i].name(), .display_name = list[i].display_name()};
        kept[i].reason = std::string(record.figures.message());
        continue;
      }
      DeviceFor(record, list[i], input->workload.weight_format, &device);
      PlanOnDeviceInto(*input, device, &record.usable, &kept[i]);
      cards.prices[i] = device.price_usd_per_hour;
    }
    // The message path moves the plans' text: compare on a copy.
    std::vector<DevicePlan> copy = kept;
    PlanWireCards message_cards = cards;
    message_cards.plans = &copy;
    for (size_t i = 0; i < list.size(); ++i) {
      const int index = static_cast<int>(i);
      std::string wire(CardWireSize(cards, index), '\0');
      uint8_t* begin = reinterpret_cast<uint8_t*>(wire.data());
      ASSERT_EQ(WriteCardWire(cards, index, begin) - begin, static_cast<ptrdiff_t>(wire.size()));
      v1::HardwarePlan message;
      CardToMessage(message_cards, index, nullptr, &message);
      ASSERT_EQ(wire, message.SerializeAsString()) << list[i].name();
      ++compared;
      if (message.has_device_memory()) ++with_device_memory;
      if (message.fits()) ++fitting;
    }
  }
  EXPECT_GE(compared, 5 * 200);
  EXPECT_GE(with_device_memory, 5 * 100);
  EXPECT_GE(fitting, 500);
}

// A plan's lines written for the wire (PlanInput::lines_as_wire) are
// protobuf's encoding of HardwarePlan.arithmetic holding the lines the same
// plan writes as strings, and decode back to them: on every shipped
// accelerator for small, large and MoE models, at one and many cards, short
// lines (under 128 bytes: a one-byte length), usual ones (two bytes) and a
// line over 16,383 bytes (three), each plan written over the one before it
// on the same record in the other mode.
TEST(PlanWireTest, EncodedLinesAreTheLinesAsProtobufEncodesThem) {
  const SharedRecords<Hardware> list(testing::ShippedHardwareRecords());
  const auto prepared = PreparedDevicesOf(list);
  PlanInput small = Llama31_8BInBf16();
  PlanInput large = About405BInBf16();
  PlanInput moe = Llama31_8BInBf16();
  moe.sizing.active_share = 0.25;
  moe.sizing.num_experts = 8;
  moe.sizing.num_experts_per_token = 2;
  moe.sizing.expert_weight_bytes = moe.sizing.weight_bytes * 0.8;
  moe.workload.batch_size = 4;
  moe.workload.prompt_tokens = 0;
  std::vector<DevicePlan> kept(list.size());
  size_t lengths[3] = {0, 0, 0};  // lines under 128 bytes, to 16,383, longer
  const auto check = [&lengths](const DevicePlan& as_strings, const DevicePlan& as_wire) {
    EXPECT_TRUE(as_wire.arithmetic.empty());
    EXPECT_TRUE(as_strings.arithmetic_wire.empty());
    v1::HardwarePlan lines;
    for (const std::string& line : as_strings.arithmetic) {
      lines.add_arithmetic(line);
      ++lengths[line.size() < 128 ? 0 : line.size() < 16384 ? 1 : 2];
    }
    // The record's usable-memory line (kept encoded with its UsableCard),
    // then the plan's own.
    const std::string usable_line =
        as_wire.usable_line_wire != nullptr ? *as_wire.usable_line_wire : std::string();
    EXPECT_EQ(usable_line + as_wire.arithmetic_wire, lines.SerializeAsString());
    std::vector<std::string> decoded;
    AppendPlanWireLines(as_wire, &decoded);
    EXPECT_EQ(decoded, as_strings.arithmetic);
  };
  for (int round = 0; round < 2; ++round) {
    for (PlanInput* input : {&small, &large, &moe}) {
      DeviceSpec device;
      for (size_t i = 0; i < list.size(); ++i) {
        const PreparedDevice& record = (*prepared)[i];
        if (!record.figures.ok()) continue;
        DeviceFor(record, list[i], input->workload.weight_format, &device);
        input->lines_as_wire = false;
        const DevicePlan as_strings = PlanOnDevice(*input, device, &record.usable);
        // Over the plan the other mode left (round 1: strings; round 0: a
        // wire plan from the previous input).
        input->lines_as_wire = true;
        PlanOnDeviceInto(*input, device, &record.usable, &kept[i]);
        SCOPED_TRACE(list[i].name());
        // The record's line is pointed at, not copied into the plan.
        EXPECT_EQ(kept[i].usable_line_wire, &record.usable.line_wire);
        check(as_strings, kept[i]);
        if (round == 1) {
          input->lines_as_wire = false;
          PlanOnDeviceInto(*input, device, &record.usable, &kept[i]);
          EXPECT_EQ(kept[i].arithmetic, as_strings.arithmetic);
          EXPECT_TRUE(kept[i].arithmetic_wire.empty());
          EXPECT_EQ(kept[i].usable_line_wire, nullptr);
        }
      }
    }
  }
  // A record whose memory source is longer than 16,383 bytes: the usable
  // line's length takes three bytes.
  DeviceSpec long_source{.name = "hardware/long",
                         .memory_bytes = 80e9,
                         .allocatable_memory_bytes = 79e9,
                         .allocatable_memory_source = std::string(20000, 's'),
                         .bandwidth_bytes_per_second = 3.35e12,
                         .peak_flops = 989e12};
  small.lines_as_wire = false;
  const DevicePlan as_strings = PlanOnDevice(small, long_source);
  small.lines_as_wire = true;
  check(as_strings, PlanOnDevice(small, long_source));
  EXPECT_GT(lengths[0], 200u);
  EXPECT_GT(lengths[1], 1000u);
  EXPECT_EQ(lengths[2], 1u);
}

// `request` answered both ways: on the heap into `heap` (the message path,
// whose bytes protobuf serializes: the expected reply) and into cards pooled
// on `arena` (the wire path: `*answer` and `*cards`). Both must be OK.
void AnswerOnHeapAndForTheWire(const std::shared_ptr<testing::FakeRecords>& records,
                               const v1::PlanInferenceRequest& request,
                               testing::Answer<v1::PlanInferenceResponse>* heap, ReplyArena* arena,
                               v1::PlanInferenceResponse** answer, PlanWireCards** cards) {
  AnswerPlanInference(records, request, heap->done());
  ASSERT_TRUE(heap->result.has_value());
  ASSERT_TRUE(heap->result->ok()) << heap->result->status();
  *answer = arena->Create<v1::PlanInferenceResponse>();
  *cards = google::protobuf::Arena::Create<PlanWireCards>(arena->arena());
  std::optional<absl::Status> done;
  AnswerPlanInferenceInto(records, request, *answer, *cards,
                          [&done](const absl::Status& status) { done = status; });
  ASSERT_TRUE(done.has_value());
  ASSERT_TRUE(done->ok()) << *done;
}

// The one-walk reply (the service's, ReplyMessage): within its bound, the
// same bytes as `expected`, nothing written past what it returns. A reply
// with offload or a runtime's fits has no bound (0).
void ExpectOneWalkIsTheBytes(const PlanWireReply& reply, const std::string& expected,
                             bool bounded) {
  const size_t bound = reply.UpperBoundBytes();
  if (!bounded) {
    EXPECT_EQ(bound, 0u);
    return;
  }
  ASSERT_GE(bound, expected.size());
  constexpr size_t kGuard = 64;
  std::string bytes(bound + kGuard, '\xA5');
  uint8_t* begin = reinterpret_cast<uint8_t*>(bytes.data());
  uint8_t* end = reply.SerializeWithinBound(begin);
  ASSERT_EQ(static_cast<size_t>(end - begin), expected.size());
  EXPECT_EQ(bytes.substr(0, expected.size()), expected);
  EXPECT_EQ(bytes.substr(bound), std::string(kGuard, '\xA5')) << "written past the bound";
}

// Whole replies: the service's (PlanWireReply of the arena answer and its
// cards) against the heap answer's bytes, for the requests of
// PreparedRecordsTest.ArenaPlanIsTheHeapPlanByteForByteOnEveryShippedAccelerator
// (prices, a runtime's fits, many-card layouts, newer models, offload, a
// two-record list), each twice, the plans pooled and written over from
// request to request.
TEST(PlanWireTest, WireReplyIsTheHeapReplyByteForByteOnEveryShippedAccelerator) {
  auto records = std::make_shared<testing::FakeRecords>();
  for (const Model& model : testing::Shipped().models()) records->Add(model);
  for (const Hardware& hw : testing::Shipped().hardware()) records->Add(hw);
  const int shipped_hardware = testing::Shipped().hardware_size();
  std::vector<v1::PlanInferenceRequest> requests(8);
  requests[0].set_model("models/llama-3-1-8b");
  requests[0].mutable_workload()->set_context_length_tokens(8192);
  requests[1].set_model("models/llama-3-1-405b");
  requests[1].set_max_cards(1024);
  requests[1].set_objective(v1::PLAN_OBJECTIVE_CHEAPEST);
  requests[1].set_price_usd_per_card_hour(2.5);
  requests[2].set_model("models/llama-3-1-70b");
  requests[2].mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_INT4);
  requests[2].set_runtime(v1::RUNTIME_VLLM);
  requests[3].set_model("models/llama-3-1-8b");
  requests[3].set_newer_models(true);
  requests[4].set_model("models/llama-3-1-70b");
  requests[4].set_offload(v1::OFFLOAD_MODE_AUTO);
  requests[4].set_offload_host("hardware/host-2x-amd-epyc-9004-ddr5-4800");
  requests[5].set_model("models/llama-3-1-70b");
  requests[5].add_hardware(testing::Shipped().hardware(0).name());
  requests[5].add_hardware(testing::Shipped().hardware(shipped_hardware - 1).name());
  requests[6].set_model("models/llama-3-1-405b");
  requests[6].set_max_cards(2);  // fits nowhere: every card says why
  requests[7] = requests[0];
  for (int round = 0; round < 2; ++round) {
    for (const v1::PlanInferenceRequest& request : requests) {
      SCOPED_TRACE(absl::StrCat("round ", round, ": ", request.ShortDebugString()));
      testing::Answer<v1::PlanInferenceResponse> heap;
      ReplyArena arena;
      v1::PlanInferenceResponse* answer = nullptr;
      PlanWireCards* cards = nullptr;
      ASSERT_NO_FATAL_FAILURE(
          AnswerOnHeapAndForTheWire(records, request, &heap, &arena, &answer, &cards));
      const std::string expected = (*heap.result)->SerializeAsString();
      // With newer models the cards are the reply's messages (their
      // reference card is read from them), else none are.
      const int cards_as_messages = request.newer_models() ? (*heap.result)->plans_size() : 0;
      EXPECT_EQ(answer->plans_size(), cards_as_messages);
      EXPECT_EQ(static_cast<int>(cards->order.size()),
                (*heap.result)->plans_size() - cards_as_messages);
      const PlanWireReply reply(answer, cards);
      const size_t size = reply.ByteSizeLong();
      EXPECT_EQ(size, expected.size());
      EXPECT_EQ(reply.SerializeAsString(), expected);
      // Into an array of the size, as the service writes its slice.
      std::string bytes(size, '\0');
      uint8_t* begin = reinterpret_cast<uint8_t*>(bytes.data());
      EXPECT_EQ(reply.SerializeWithCachedSizesToArray(begin), begin + size);
      EXPECT_EQ(bytes, expected);
      ExpectOneWalkIsTheBytes(
          reply, expected,
          cards->order.empty() || (!cards->offload.has_value() && cards->runtime_fits.empty()));
    }
  }
}

// Each record's device_memory field is encoded once per prepared list and
// thread (plan_wire.cc, DeviceMemoryFields) and copied into every reply on
// that list. Replies over one list (its fields kept from the first), then
// over a list whose records state other allocatable memory and sources (a
// new snapshot state: its fields encoded anew), then the first list again,
// each equal to the message path's bytes.
TEST(PlanWireTest, DeviceMemoryFieldsFollowTheRecordsFromListToList) {
  std::vector<Hardware> records(testing::Shipped().hardware().begin(),
                                testing::Shipped().hardware().end());
  const SharedRecords<Hardware> first(records);
  int changed_records = 0;
  for (Hardware& hw : records) {
    if (!hw.has_allocatable_memory_bytes()) continue;
    hw.set_allocatable_memory_bytes(hw.allocatable_memory_bytes() * 0.5);
    hw.set_allocatable_memory_source("halved for this test");
    ++changed_records;
  }
  ASSERT_GT(changed_records, 20);
  const SharedRecords<Hardware> changed(records);
  const Model* model = nullptr;
  for (const Model& m : testing::Shipped().models()) {
    if (m.name() == "models/llama-3-1-8b") model = &m;
  }
  ASSERT_NE(model, nullptr);
  v1::PlanInferenceRequest request;
  request.set_model(model->name());
  std::string first_bytes, changed_bytes;
  int with_device_memory = 0;
  for (const SharedRecords<Hardware>* list : {&first, &first, &changed, &changed, &first}) {
    v1::PlanInferenceResponse heap;
    ASSERT_TRUE(PlanInferenceInto(&heap, *model, *list, request).ok());
    const std::string expected = heap.SerializeAsString();
    for (const v1::HardwarePlan& plan : heap.plans())
      with_device_memory += plan.has_device_memory();
    ReplyArena arena;
    v1::PlanInferenceResponse* answer = arena.Create<v1::PlanInferenceResponse>();
    auto* cards = google::protobuf::Arena::Create<PlanWireCards>(arena.arena());
    ASSERT_TRUE(PlanInferenceInto(answer, cards, *model, *list, request).ok());
    const std::string wire = PlanWireReply(answer, cards).SerializeAsString();
    EXPECT_EQ(wire, expected) << (list == &first ? "first list" : "changed list");
    (list == &first ? first_bytes : changed_bytes) = wire;
  }
  EXPECT_GT(with_device_memory, 5 * 100);
  // Not a test of nothing: the changed records' fields are on the wire.
  EXPECT_NE(first_bytes, changed_bytes);
  EXPECT_NE(changed_bytes.find("halved for this test"), std::string::npos);
}

// The plans' lines are written encoded on the wire path (plan.h,
// PlanInput::lines_as_wire) and as strings on the heap path: whole replies
// over every shipped accelerator are the same bytes for a spread of requests
// whose lines differ in shape (dense, mixture of experts with and without
// expert parallelism, many-card layouts with pipeline stages, contexts,
// weight formats, batch sizes, no prompt, offload, a runtime, request
// prices, accelerator filters), each twice and interleaved so every plan is
// written over another request's, and once more over a heap reply's plans
// on the same arena pool.
TEST(PlanWireTest, EncodedLinesMakeTheHeapReplysBytesForManyRequests) {
  auto records = std::make_shared<testing::FakeRecords>();
  for (const Model& model : testing::Shipped().models()) records->Add(model);
  for (const Hardware& hw : testing::Shipped().hardware()) records->Add(hw);
  std::vector<v1::PlanInferenceRequest> requests;
  const auto add = [&requests](const std::string& model) -> v1::PlanInferenceRequest& {
    requests.emplace_back().set_model(model);
    return requests.back();
  };
  for (const char* model :
       {"models/llama-3-1-8b", "models/llama-3-1-405b", "models/mixtral-8x7b-v0-1",
        "models/mixtral-8x22b-v0-1", "models/qwen3-30b-a3b", "models/deepseek-v3",
        "models/gpt-2-124m", "models/gpt-oss-120b", "models/qwen2-5-72b"}) {
    add(model);
    v1::PlanInferenceRequest& long_context = add(model);
    long_context.mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_FP8);
    long_context.mutable_workload()->set_context_length_tokens(32768);
    long_context.mutable_workload()->set_batch_size(8);
    v1::PlanInferenceRequest& many = add(model);
    many.mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_GGUF_Q4_K_M);
    many.mutable_workload()->set_context_length_tokens(131072);
    many.mutable_workload()->set_batch_size(64);
    many.set_max_cards(1024);
    many.set_objective(v1::PLAN_OBJECTIVE_FASTEST);
    v1::PlanInferenceRequest& cheap = add(model);
    cheap.mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_INT4);
    cheap.set_objective(v1::PLAN_OBJECTIVE_CHEAPEST);
    cheap.set_price_usd_per_card_hour(1.75);
    v1::PlanInferenceRequest& no_prompt = add(model);
    no_prompt.mutable_workload()->set_prompt_tokens(1);
    no_prompt.set_max_cards(1);
    v1::PlanInferenceRequest& two = add(model);
    two.mutable_workload()->set_batch_size(3);
    two.set_max_cards(2);
  }
  for (const char* model : {"models/llama-3-1-70b", "models/mixtral-8x7b-v0-1"}) {
    v1::PlanInferenceRequest& offload = add(model);
    offload.set_offload(v1::OFFLOAD_MODE_AUTO);
    offload.set_offload_host("hardware/host-2x-amd-epyc-9004-ddr5-4800");
  }
  add("models/deepseek-v3").mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_FP8);
  add("models/llama-3-1-70b").set_runtime(v1::RUNTIME_VLLM);
  add("models/qwen3-30b-a3b").set_runtime(v1::RUNTIME_LLAMA_CPP);
  v1::PlanInferenceRequest& filtered = add("models/llama-3-1-8b");
  for (int i : {0, 7, 100}) filtered.add_hardware(testing::Shipped().hardware(i).name());
  const size_t distinct = requests.size();
  for (size_t i = 0; i < distinct; ++i) requests.push_back(requests[i]);
  int cards = 0;
  int many_card_plans = 0;
  int expert_parallel_plans = 0;
  int with_offload = 0;
  for (const v1::PlanInferenceRequest& request : requests) {
    SCOPED_TRACE(request.ShortDebugString());
    testing::Answer<v1::PlanInferenceResponse> heap;
    ReplyArena arena;
    v1::PlanInferenceResponse* answer = nullptr;
    PlanWireCards* wire_cards = nullptr;
    ASSERT_NO_FATAL_FAILURE(
        AnswerOnHeapAndForTheWire(records, request, &heap, &arena, &answer, &wire_cards));
    const std::string expected = (*heap.result)->SerializeAsString();
    ASSERT_EQ(static_cast<int>(wire_cards->order.size()), (*heap.result)->plans_size());
    // The wire path's plans hold their lines encoded, none as strings
    // (but offload's, which follow).
    for (int index : wire_cards->order) {
      const DevicePlan& plan = (*wire_cards->plans)[index];
      if (plan.offload == nullptr) {
        EXPECT_TRUE(plan.arithmetic.empty()) << plan.name;
      }
      // Named by the record's own strings (no copy), or (a record not
      // planned on) by its own.
      EXPECT_EQ(plan.record_name != nullptr, plan.name.empty()) << NameOf(plan);
      EXPECT_FALSE(NameOf(plan).empty());
    }
    const PlanWireReply reply(answer, wire_cards);
    EXPECT_EQ(reply.ByteSizeLong(), expected.size());
    ASSERT_EQ(reply.SerializeAsString(), expected);
    ExpectOneWalkIsTheBytes(reply, expected,
                            wire_cards->order.empty() || (!wire_cards->offload.has_value() &&
                                                          wire_cards->runtime_fits.empty()));
    for (const v1::HardwarePlan& plan : (*heap.result)->plans()) {
      ++cards;
      many_card_plans += plan.cards() > 1;
      expert_parallel_plans += plan.expert_parallel() > 0;
      with_offload += plan.has_offload();
    }
    // The same plans' pool, now written as strings (the message path on
    // the arena: newer models), then as lines for the wire again.
    v1::PlanInferenceRequest newer = request;
    newer.set_newer_models(true);
    testing::Answer<v1::PlanInferenceResponse> heap_newer;
    ReplyArena arena_newer;
    v1::PlanInferenceResponse* answer_newer = nullptr;
    PlanWireCards* newer_cards = nullptr;
    ASSERT_NO_FATAL_FAILURE(AnswerOnHeapAndForTheWire(records, newer, &heap_newer, &arena_newer,
                                                      &answer_newer, &newer_cards));
    EXPECT_EQ(PlanWireReply(answer_newer, newer_cards).SerializeAsString(),
              (*heap_newer.result)->SerializeAsString());
  }
  // Not a test of one shape: every kind of line was on the wire.
  EXPECT_GT(cards, 2 * 50 * 250);
  EXPECT_GT(many_card_plans, 1000);
  EXPECT_GT(expert_parallel_plans, 10);
  EXPECT_GT(with_offload, 10);
}

// The wire path needs the plans pooled on an arena: on the heap it is an
// error, not a dangling pointer.
TEST(PlanWireTest, CardsForTheWireNeedAnArena) {
  auto records = std::make_shared<testing::FakeRecords>();
  for (const Model& model : testing::Shipped().models()) records->Add(model);
  for (const Hardware& hw : testing::Shipped().hardware()) records->Add(hw);
  v1::PlanInferenceRequest request;
  request.set_model("models/llama-3-1-8b");
  v1::PlanInferenceResponse heap;
  PlanWireCards cards;
  std::optional<absl::Status> done;
  AnswerPlanInferenceInto(records, request, &heap, &cards,
                          [&done](const absl::Status& status) { done = status; });
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->code(), absl::StatusCode::kInternal) << *done;
}

}  // namespace
}  // namespace modelatlas::estimator
