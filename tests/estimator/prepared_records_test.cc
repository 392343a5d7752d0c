// What the estimator checks and converts once per state of its snapshot
// instead of on every call (issue 22 point 1): a catalog model's
// architecture check, made when the record is loaded or changed, and each
// hardware record's figure check and conversion, made once per shared list.
// Each must equal what the per-call path computes, errors included.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/plan_wire.h"
#include "estimator-service/catalog/shared_records.h"
#include "estimator-service/catalog/snapshot.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/reply_arena.h"
#include "tests/estimator/fake_records.h"
#include "tests/estimator/plan_inputs.h"
#include "tests/estimator/shipped_records.h"

namespace modelatlas::estimator {
namespace {

using common::v1::Hardware;
using common::v1::Model;
using testing::H100;
using testing::Llama8B;

catalog::v1::WatchResponse Put(const Model& model, int64_t revision) {
  catalog::v1::WatchResponse message;
  message.set_revision(revision);
  auto* change = message.add_changes();
  change->set_revision(revision);
  change->set_name(model.name());
  *change->mutable_model() = model;
  return message;
}

catalog::v1::WatchResponse Delete(const std::string& name, int64_t revision) {
  catalog::v1::WatchResponse message;
  message.set_revision(revision);
  auto* change = message.add_changes();
  change->set_revision(revision);
  change->set_name(name);
  change->set_type(catalog::v1::CHANGE_TYPE_DELETED);
  return message;
}

// The check the snapshot hands out with the record (UseModel); nullopt when
// the record is not there.
std::optional<absl::Status> KeptCheck(const CatalogSnapshot& snapshot, const std::string& name) {
  std::optional<absl::Status> kept;
  snapshot.UseModel(name, [&](const Model&, int64_t, const absl::Status& check) { kept = check; });
  return kept;
}

TEST(PreparedRecordsTest, SnapshotKeepsEachModelsArchitectureCheckAcrossChanges) {
  // Never started: Apply feeds it as Watch would.
  CatalogSnapshot snapshot(grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()),
                           "nowhere");
  Model good = Llama8B();
  Model bad = Llama8B();
  bad.set_name("models/broken");
  bad.set_display_name("Broken");
  bad.mutable_architecture()->set_num_layers(-3);
  bad.mutable_architecture()->set_hidden_size(int64_t{1} << 40);
  snapshot.Apply(Put(good, 1));
  snapshot.Apply(Put(bad, 2));

  const absl::Status bad_check = ValidateModelArchitecture(bad, "architecture");
  ASSERT_EQ(bad_check.code(), absl::StatusCode::kFailedPrecondition) << bad_check;
  ASSERT_EQ(KeptCheck(snapshot, "models/broken"), bad_check);
  ASSERT_EQ(KeptCheck(snapshot, "Llama 3.1 8B"), absl::OkStatus());

  // The memory answer with the kept check is the answer without it, the
  // error's code and message included.
  v1::EstimateInferenceMemoryRequest request;
  request.set_model("models/broken");
  request.mutable_workload()->set_context_length_tokens(8192);
  for (const std::string name : {"models/broken", "models/llama-3-1-8b"}) {
    std::optional<absl::StatusOr<v1::EstimateInferenceMemoryResponse>> kept, checked;
    snapshot.UseModel(name, [&](const Model& model, int64_t, const absl::Status& check) {
      kept = EstimateMemoryForModel(model, request, nullptr, nullptr, &check);
      checked = EstimateMemoryForModel(model, request);
    });
    ASSERT_TRUE(kept.has_value() && checked.has_value()) << name;
    ASSERT_EQ(kept->status(), checked->status()) << name;
    if (kept->ok()) {
      EXPECT_EQ((*kept)->SerializeAsString(), (*checked)->SerializeAsString()) << name;
    }
  }

  // Corrected in place: the record keeps its address, its check is new.
  Model fixed = good;
  fixed.set_name("models/broken");
  fixed.set_display_name("Broken");
  snapshot.Apply(Put(fixed, 3));
  EXPECT_EQ(KeptCheck(snapshot, "models/broken"), absl::OkStatus());
  // Broken again, then deleted and added back corrected.
  snapshot.Apply(Put(bad, 4));
  EXPECT_EQ(KeptCheck(snapshot, "models/broken"), bad_check);
  snapshot.Apply(Delete("models/broken", 5));
  EXPECT_EQ(KeptCheck(snapshot, "models/broken"), std::nullopt);
  snapshot.Apply(Put(fixed, 6));
  EXPECT_EQ(KeptCheck(snapshot, "models/broken"), absl::OkStatus());
  EXPECT_EQ(KeptCheck(snapshot, "models/llama-3-1-8b"), absl::OkStatus());
}

// What UsePreparedModel hands out with the record: its check and its
// architecture converted, as the per-call path computes them; nullopt when
// the record is not there.
struct Handed {
  absl::Status check;
  std::optional<Architecture> architecture;
  int64_t revision = 0;
};
std::optional<Handed> HandedOut(const CatalogSnapshot& snapshot, const std::string& name) {
  std::optional<Handed> handed;
  snapshot.UsePreparedModel(name, [&](const CatalogSnapshot::UsedModel& used) {
    handed =
        Handed{used.prepared.architecture_check, used.prepared.architecture, used.sync.revision};
    // Prepared from this very record.
    EXPECT_EQ(PrepareRecord(used.model).architecture_check, used.prepared.architecture_check);
  });
  return handed;
}

TEST(PreparedRecordsTest, SnapshotPreparesEachModelAgainWhenItChangesAndDropsItWhenItGoes) {
  CatalogSnapshot snapshot(grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()),
                           "nowhere");
  Model llama = Llama8B();
  snapshot.Apply(Put(llama, 1));
  // Not loaded: nothing is handed out (the service's synchronous path asks
  // the catalog instead).
  EXPECT_FALSE(HandedOut(snapshot, "Llama 3.1 8B").has_value());
  snapshot.MarkLoadedForTest();
  std::optional<Handed> handed = HandedOut(snapshot, "Llama 3.1 8B");
  ASSERT_TRUE(handed.has_value());
  EXPECT_TRUE(handed->check.ok()) << handed->check;
  ASSERT_TRUE(handed->architecture.has_value());
  const Architecture converted = ToCoreArchitecture(llama.architecture());
  EXPECT_EQ(handed->architecture->num_layers, converted.num_layers);
  EXPECT_EQ(handed->architecture->hidden_size, converted.hidden_size);
  EXPECT_EQ(handed->architecture->num_key_value_heads, converted.num_key_value_heads);
  EXPECT_EQ(handed->architecture->vocab_size, converted.vocab_size);
  EXPECT_EQ(handed->revision, 1);

  // Changed in place (the record keeps its address): prepared again.
  llama.mutable_architecture()->set_num_layers(48);
  snapshot.Apply(Put(llama, 2));
  handed = HandedOut(snapshot, "models/llama-3-1-8b");
  ASSERT_TRUE(handed.has_value() && handed->architecture.has_value());
  EXPECT_EQ(handed->architecture->num_layers, 48);
  EXPECT_EQ(handed->revision, 2);
  // Broken: the check fails as the per-call check fails.
  Model broken = llama;
  broken.mutable_architecture()->set_num_layers(-3);
  snapshot.Apply(Put(broken, 3));
  handed = HandedOut(snapshot, "models/llama-3-1-8b");
  ASSERT_TRUE(handed.has_value());
  EXPECT_EQ(handed->check, ValidateModelArchitecture(broken, "architecture"));
  EXPECT_FALSE(handed->check.ok());
  // Without an architecture any more: none handed out.
  Model bare = llama;
  bare.clear_architecture();
  bare.set_parameters(8e9);
  snapshot.Apply(Put(bare, 4));
  handed = HandedOut(snapshot, "Llama 3.1 8B");
  ASSERT_TRUE(handed.has_value());
  EXPECT_TRUE(handed->check.ok());
  EXPECT_FALSE(handed->architecture.has_value());
  // Deleted: not found, by either name; added back: prepared anew.
  snapshot.Apply(Delete("models/llama-3-1-8b", 5));
  EXPECT_FALSE(HandedOut(snapshot, "models/llama-3-1-8b").has_value());
  EXPECT_FALSE(HandedOut(snapshot, "Llama 3.1 8B").has_value());
  snapshot.Apply(Put(Llama8B(), 6));
  handed = HandedOut(snapshot, "Llama 3.1 8B");
  ASSERT_TRUE(handed.has_value() && handed->architecture.has_value());
  EXPECT_EQ(handed->architecture->num_layers, converted.num_layers);
  EXPECT_EQ(handed->revision, 6);
}

// The weights a record keeps per format (PreparedRecord::weights): made with
// the record, sized at the first ask, and made anew (nothing kept) when the
// record changes; none without an architecture; gone with the record.
struct HandedWeights {
  const PreparedWeights* weights = nullptr;
  std::string fp8_text;  // the record's FP8 weights line, as kept
  double parameters = 0;
};
std::optional<HandedWeights> WeightsHandedOut(const CatalogSnapshot& snapshot,
                                              const std::string& name) {
  std::optional<HandedWeights> handed;
  snapshot.UsePreparedModel(name, [&](const CatalogSnapshot::UsedModel& used) {
    handed = HandedWeights{used.prepared.weights.get()};
    if (used.prepared.weights == nullptr || !used.prepared.architecture.has_value()) return;
    absl::StatusOr<double> parameters = ParametersOfModel(used.model, &*used.prepared.architecture);
    if (!parameters.ok()) return;
    handed->parameters = *parameters;
    const WeightsPart* part = used.prepared.weights->Get(*parameters, &*used.prepared.architecture,
                                                         NumberFormat::kFp8, 128);
    if (part != nullptr) handed->fp8_text = part->text;
  });
  return handed;
}

// The FP8 weights line written afresh for `model` (nothing kept).
std::string Fp8WeightsText(const Model& model) {
  const Architecture arch = ToCoreArchitecture(model.architecture());
  absl::StatusOr<double> parameters = ParametersOfModel(model, &arch);
  WeightsPart fresh;
  EXPECT_TRUE(parameters.ok() &&
              SizeWeightsPart(*parameters, &arch, NumberFormat::kFp8, 128, &fresh).ok());
  return fresh.text;
}

TEST(PreparedRecordsTest, RecordsKeepTheirWeightsPerFormatUntilTheyChange) {
  CatalogSnapshot snapshot(grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()),
                           "nowhere");
  Model llama = Llama8B();
  snapshot.Apply(Put(llama, 1));
  snapshot.MarkLoadedForTest();
  std::optional<HandedWeights> first = WeightsHandedOut(snapshot, "Llama 3.1 8B");
  ASSERT_TRUE(first.has_value() && first->weights != nullptr);
  EXPECT_EQ(first->weights->kept(), 1u);  // FP8, sized at the first ask
  EXPECT_EQ(first->fp8_text, Fp8WeightsText(llama));
  EXPECT_NE(first->fp8_text.find("fp8"), std::string::npos) << first->fp8_text;
  // Asked again: the same kept part, nothing more sized.
  std::optional<HandedWeights> again = WeightsHandedOut(snapshot, "models/llama-3-1-8b");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->weights, first->weights);
  EXPECT_EQ(again->weights->kept(), 1u);
  EXPECT_EQ(again->fp8_text, first->fp8_text);

  // Changed (fewer layers: fewer parameters, other tensors): the record's
  // weights are made anew, and the line is the changed record's.
  llama.mutable_architecture()->set_num_layers(16);
  llama.clear_parameters();
  snapshot.Apply(Put(llama, 2));
  std::optional<HandedWeights> changed = WeightsHandedOut(snapshot, "Llama 3.1 8B");
  ASSERT_TRUE(changed.has_value() && changed->weights != nullptr);
  EXPECT_EQ(changed->fp8_text, Fp8WeightsText(llama));
  EXPECT_NE(changed->fp8_text, first->fp8_text);
  EXPECT_NE(changed->parameters, first->parameters);
  EXPECT_EQ(changed->weights->kept(), 1u);

  // Without an architecture: nothing kept per format (the formulas size
  // parameters x the format's bits).
  Model bare = llama;
  bare.clear_architecture();
  bare.set_parameters(8e9);
  snapshot.Apply(Put(bare, 3));
  std::optional<HandedWeights> none = WeightsHandedOut(snapshot, "Llama 3.1 8B");
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->weights, nullptr);
  // Erased: nothing handed out; put back: made anew.
  snapshot.Apply(Delete("models/llama-3-1-8b", 4));
  EXPECT_FALSE(WeightsHandedOut(snapshot, "Llama 3.1 8B").has_value());
  snapshot.Apply(Put(Llama8B(), 5));
  std::optional<HandedWeights> back = WeightsHandedOut(snapshot, "Llama 3.1 8B");
  ASSERT_TRUE(back.has_value() && back->weights != nullptr);
  EXPECT_EQ(back->fp8_text, Fp8WeightsText(Llama8B()));
  EXPECT_EQ(back->fp8_text, first->fp8_text);
}

TEST(PreparedRecordsTest, SharedListDerivesOnceForEveryCopy) {
  std::atomic<int> made{0};
  auto count = [&made](const std::vector<Hardware>& records) {
    ++made;
    return static_cast<int>(records.size());
  };
  SharedRecords<Hardware> list(std::vector<Hardware>{H100(), H100()});
  const SharedRecords<Hardware> copy = list;
  EXPECT_EQ(*list.Derive<int>(count), 2);
  EXPECT_EQ(*copy.Derive<int>(count), 2);
  EXPECT_EQ(list.Derive<int>(count).get(), copy.Derive<int>(count).get());
  EXPECT_EQ(made.load(), 1);
  // Another list (the hardware changed) derives its own.
  SharedRecords<Hardware> other(std::vector<Hardware>{H100()});
  EXPECT_EQ(*other.Derive<int>(count), 1);
  EXPECT_EQ(made.load(), 2);
  // Another kind of value is computed, not kept in place of the first.
  auto twice = [](const std::vector<Hardware>& records) { return 2.0 * records.size(); };
  EXPECT_EQ(*list.Derive<double>(twice), 4.0);
  EXPECT_EQ(*list.Derive<int>(count), 2);
  EXPECT_EQ(made.load(), 2);
}

TEST(PreparedRecordsTest, PreparedDevicesAreTheChecksAndDevicesOfEachRecord) {
  Hardware priced = H100();
  priced.mutable_peak()->set_tensor_fp16_bf16_flops(989e12);
  priced.mutable_peak()->set_fp8_flops(1979e12);
  priced.mutable_peak()->set_int8_ops(1979e12);
  priced.set_cloud_price_usd_per_chip_hour(2.5);
  priced.set_scale_up_domain_size(8);
  priced.set_scale_up_bandwidth_bytes_per_second(900e9);
  Hardware beyond = H100();
  beyond.set_name("hardware/beyond");
  beyond.set_memory_bytes(1e300);  // beyond any real device: not planned
  const SharedRecords<Hardware> list(std::vector<Hardware>{priced, beyond, H100()});
  const auto prepared = PreparedDevicesOf(list);
  ASSERT_EQ(prepared->size(), list.size());
  EXPECT_EQ(PreparedDevicesOf(list).get(), prepared.get());  // once per list
  // Every record's name rank, the unusable one's too: the count of names
  // before it (two records share H100()'s name, and so its rank).
  EXPECT_EQ((*prepared)[1].name_rank, 0) << list[1].name();
  EXPECT_EQ((*prepared)[0].name_rank, 1);
  EXPECT_EQ((*prepared)[2].name_rank, 1);
  for (size_t i = 0; i < list.size(); ++i) {
    const Hardware& hw = list[i];
    EXPECT_EQ((*prepared)[i].figures, CheckDeviceFigures(hw)) << hw.name();
    if (!(*prepared)[i].figures.ok()) continue;
    // DeviceForPlan: the prepared spec itself in the default format without
    // a request's price (or with the record's own), a copy otherwise.
    DeviceSpec scratch;
    EXPECT_EQ(&DeviceForPlan((*prepared)[i], hw, NumberFormat::kBf16, std::nullopt, &scratch),
              &(*prepared)[i].device);
    const std::optional<double> own_price = (*prepared)[i].device.price_usd_per_hour;
    if (own_price.has_value()) {
      EXPECT_EQ(&DeviceForPlan((*prepared)[i], hw, NumberFormat::kBf16, own_price, &scratch),
                &(*prepared)[i].device);
    }
    EXPECT_EQ(&DeviceForPlan((*prepared)[i], hw, NumberFormat::kBf16, 7.25, &scratch), &scratch);
    EXPECT_EQ(scratch.price_usd_per_hour, 7.25);
    EXPECT_EQ(scratch.peak_flops, DeviceOf(hw, NumberFormat::kBf16).peak_flops);
    for (const NumberFormat format :
         {NumberFormat::kBf16, NumberFormat::kFp8, NumberFormat::kInt4, NumberFormat::kGgufQ4KM}) {
      for (const std::optional<double> request_price :
           {std::optional<double>(), std::optional(1.5)}) {
        const DeviceSpec& planned =
            DeviceForPlan((*prepared)[i], hw, format, request_price, &scratch);
        DeviceSpec expected = DeviceOf(hw, format);
        if (request_price.has_value()) expected.price_usd_per_hour = request_price;
        EXPECT_EQ(planned.name, expected.name);
        EXPECT_EQ(planned.memory_bytes, expected.memory_bytes);
        EXPECT_EQ(planned.allocatable_memory_source, expected.allocatable_memory_source);
        EXPECT_EQ(planned.bandwidth_bytes_per_second, expected.bandwidth_bytes_per_second);
        EXPECT_EQ(planned.peak_flops, expected.peak_flops) << hw.name();
        EXPECT_EQ(planned.price_usd_per_hour, expected.price_usd_per_hour) << hw.name();
        EXPECT_EQ(planned.scale_up_domain_size, expected.scale_up_domain_size);
      }
      const DeviceSpec a = DeviceFor((*prepared)[i], hw, format);
      const DeviceSpec b = DeviceOf(hw, format);
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.display_name, b.display_name);
      EXPECT_EQ(a.memory_bytes, b.memory_bytes);
      EXPECT_EQ(a.allocatable_memory_bytes, b.allocatable_memory_bytes);
      EXPECT_EQ(a.allocatable_memory_source, b.allocatable_memory_source);
      EXPECT_EQ(a.allocatable_memory_assumed, b.allocatable_memory_assumed);
      EXPECT_EQ(a.bandwidth_bytes_per_second, b.bandwidth_bytes_per_second);
      EXPECT_EQ(a.peak_flops, b.peak_flops) << hw.name();
      EXPECT_EQ(a.price_usd_per_hour, b.price_usd_per_hour);
      EXPECT_EQ(a.unified_memory, b.unified_memory);
      EXPECT_EQ(a.scale_up_domain_size, b.scale_up_domain_size);
      EXPECT_EQ(a.links.scale_up_bytes_per_second, b.links.scale_up_bytes_per_second);
      EXPECT_EQ(a.links.pcie_generation, b.links.pcie_generation);
      EXPECT_EQ(a.roofline_does_not_apply, b.roofline_does_not_apply);
      EXPECT_EQ(a.bandwidth_doubtful, b.bandwidth_doubtful);
    }
  }
  EXPECT_FALSE((*prepared)[1].figures.ok());
}

// Every field of two plans, the text line by line.
void ExpectSamePlan(const DevicePlan& a, const DevicePlan& b, const std::string& context) {
  EXPECT_EQ(a.name, b.name) << context;
  EXPECT_EQ(a.display_name, b.display_name) << context;
  EXPECT_EQ(a.fits, b.fits) << context;
  EXPECT_EQ(a.fits_on_one_card, b.fits_on_one_card) << context;
  EXPECT_EQ(a.cards, b.cards) << context;
  EXPECT_EQ(a.tensor_parallel, b.tensor_parallel) << context;
  EXPECT_EQ(a.pipeline_parallel, b.pipeline_parallel) << context;
  EXPECT_EQ(a.expert_parallel, b.expert_parallel) << context;
  EXPECT_EQ(a.nodes, b.nodes) << context;
  EXPECT_EQ(a.layout, b.layout) << context;
  EXPECT_EQ(a.required_bytes_per_card, b.required_bytes_per_card) << context;
  EXPECT_EQ(a.usable_bytes_per_card, b.usable_bytes_per_card) << context;
  EXPECT_EQ(a.headroom_bytes_per_card, b.headroom_bytes_per_card) << context;
  EXPECT_EQ(a.weight_bytes_per_card, b.weight_bytes_per_card) << context;
  EXPECT_EQ(a.kv_cache_bytes_per_card, b.kv_cache_bytes_per_card) << context;
  EXPECT_EQ(a.decode_tokens_per_second, b.decode_tokens_per_second) << context;
  EXPECT_EQ(a.decode_tokens_per_second_all, b.decode_tokens_per_second_all) << context;
  EXPECT_EQ(a.prefill_tokens_per_second, b.prefill_tokens_per_second) << context;
  EXPECT_EQ(a.time_to_first_token_seconds, b.time_to_first_token_seconds) << context;
  EXPECT_EQ(a.cost_usd_per_million_tokens, b.cost_usd_per_million_tokens) << context;
  EXPECT_EQ(a.decode_communication_seconds, b.decode_communication_seconds) << context;
  EXPECT_EQ(a.speed_not_modelled, b.speed_not_modelled) << context;
  EXPECT_EQ(a.reason, b.reason) << context;
  EXPECT_EQ(a.arithmetic, b.arithmetic) << context;
}

// A plan over every accelerator plans on each record's prepared spec, reused
// from record to record, with the usable-memory sentence kept with the
// records: on every shipped accelerator, for a model that fits on one card,
// one that needs many and a request at another memory utilization (the kept
// sentence does not apply), the plan is the one PlanOnDevice writes from the
// record alone.
TEST(PreparedRecordsTest, PlansFromPreparedRecordsAreThePlainPlansOnEveryShippedAccelerator) {
  const SharedRecords<Hardware> list(testing::ShippedHardwareRecords());
  ASSERT_GE(list.size(), 200u);
  const auto prepared = PreparedDevicesOf(list);
  PlanInput small = Llama31_8BInBf16();
  PlanInput large = About405BInBf16();
  PlanInput other_utilization = small;
  other_utilization.workload.memory_utilization = 0.8;
  int planned = 0;
  int one_card = 0;
  for (const PlanInput* input : {&small, &large, &other_utilization}) {
    DeviceSpec reused;
    for (size_t i = 0; i < list.size(); ++i) {
      const PreparedDevice& record = (*prepared)[i];
      if (!record.figures.ok()) continue;
      DeviceFor(record, list[i], input->workload.weight_format, &reused);
      const DevicePlan fast = PlanOnDevice(*input, reused, &record.usable);
      const DevicePlan plain =
          PlanOnDevice(*input, DeviceOf(list[i], input->workload.weight_format));
      ExpectSamePlan(fast, plain, list[i].name());
      ++planned;
      if (fast.fits && fast.cards == 1) {
        // The memory line of a one-card plan is written once per sizing up to
        // the headroom: it must still state this plan's own figures.
        constexpr double kGiB = 1073741824.0;
        ASSERT_GE(fast.arithmetic.size(), 2u);
        EXPECT_EQ(fast.arithmetic[1],
                  absl::StrFormat(
                      "per card on 1: weights %.2f GiB / 1 + KV cache %.2f GiB + "
                      "activations %.2f GiB + overhead %.2f GiB = %.2f GiB; "
                      "headroom %.2f GiB",
                      fast.weight_bytes_per_card / kGiB, fast.kv_cache_bytes_per_card / kGiB,
                      fast.activation_bytes_per_card / kGiB, fast.overhead_bytes_per_card / kGiB,
                      fast.required_bytes_per_card / kGiB, fast.headroom_bytes_per_card / kGiB))
            << list[i].name();
        ++one_card;
      }
    }
  }
  EXPECT_GE(planned, 3 * 200);
  // The peaks are prepared per format: every format, every record.
  for (size_t i = 0; i < list.size(); ++i) {
    if (!(*prepared)[i].figures.ok()) continue;
    for (int f = 0; f <= static_cast<int>(NumberFormat::kFp8Block); ++f) {
      const auto format = static_cast<NumberFormat>(f);
      DeviceSpec reused;
      DeviceFor((*prepared)[i], list[i], format, &reused);
      EXPECT_EQ(reused.peak_flops, DeviceOf(list[i], format).peak_flops)
          << list[i].name() << " " << NumberFormatName(format);
    }
  }
  EXPECT_GE(one_card, 100);
}

// A plan written over an earlier one (PlanOnDeviceInto, as the service
// writes each reply's plans over the previous reply's to reuse their
// storage) is the plan PlanOnDevice writes afresh: on every shipped
// accelerator, over the plan of another workload on the same record (the
// 405B's many lines over the 8B's few and back) and over the plan of the
// record before it (one that does not fit, one without a roofline, ...).
TEST(PreparedRecordsTest, PlansWrittenOverEarlierPlansAreFreshPlans) {
  const SharedRecords<Hardware> list(testing::ShippedHardwareRecords());
  ASSERT_GE(list.size(), 200u);
  const auto prepared = PreparedDevicesOf(list);
  PlanInput small = Llama31_8BInBf16();
  PlanInput large = About405BInBf16();
  PlanInput few_cards = large;  // does not fit on 2 cards anywhere
  few_cards.max_cards = 2;
  PlanInput other_utilization = small;
  other_utilization.workload.memory_utilization = 0.8;
  std::vector<DevicePlan> kept(list.size());
  DevicePlan carried;
  int planned = 0;
  int lines_differ = 0;
  for (const PlanInput* input : {&small, &large, &few_cards, &small, &other_utilization}) {
    const SizingFigures figures = FiguresOf(*input);
    PlanInput with_figures = *input;
    with_figures.figures = &figures;
    DeviceSpec reused;
    for (size_t i = 0; i < list.size(); ++i) {
      const PreparedDevice& record = (*prepared)[i];
      if (!record.figures.ok()) continue;
      DeviceFor(record, list[i], input->workload.weight_format, &reused);
      const DevicePlan fresh = PlanOnDevice(*input, reused, &record.usable);
      const size_t earlier_lines = kept[i].arithmetic.size();
      PlanOnDeviceInto(with_figures, reused, &record.usable, &kept[i]);
      ExpectSamePlan(kept[i], fresh, absl::StrCat(list[i].name(), " over its earlier plan"));
      PlanOnDeviceInto(*input, reused, &record.usable, &carried);
      ExpectSamePlan(carried, fresh, absl::StrCat(list[i].name(), " over the previous record's"));
      if (earlier_lines != 0 && earlier_lines != fresh.arithmetic.size()) ++lines_differ;
      ++planned;
    }
  }
  EXPECT_GE(planned, 5 * 200);
  // Written over plans with more lines and with fewer.
  EXPECT_GE(lines_differ, 100);
}

// A plan over many records shares one-card plans' memory, decode and
// prefill lines between records with the same figures
// (PlanInput::shared_lines_generation, plan.cc SharedLines): every plan so
// written must be the plan PlanOnDevice writes afresh. On every shipped
// accelerator (many share a bandwidth, a peak or a capacity), for the 8B
// and the 405B, and with two inputs planned in turn record by record, each
// under its own generation (the lines kept for one are not the other's);
// then on cards that share a bandwidth but not a peak at a batch where the
// compute roof binds on one of them (a key without the peak would give both
// the same decode line).
TEST(PreparedRecordsTest, LinesSharedBetweenRecordsAreEachPlansOwnLines) {
  const SharedRecords<Hardware> list(testing::ShippedHardwareRecords());
  const auto prepared = PreparedDevicesOf(list);
  PlanInput small = Llama31_8BInBf16();
  PlanInput large = About405BInBf16();
  const auto shared_input = [](const PlanInput& input, const SizingFigures& figures) {
    PlanInput with = input;
    with.figures = &figures;
    with.shared_lines_generation = NewPlanGeneration();
    return with;
  };
  const SizingFigures small_figures = FiguresOf(small);
  const SizingFigures large_figures = FiguresOf(large);
  const PlanInput small_shared = shared_input(small, small_figures);
  const PlanInput large_shared = shared_input(large, large_figures);
  int planned = 0;
  int one_card = 0;
  // Each input alone over the list, then both in turn on each record.
  const std::vector<std::vector<const PlanInput*>> passes = {
      {&small_shared}, {&large_shared}, {&small_shared, &large_shared}};
  for (const std::vector<const PlanInput*>& pass : passes) {
    DeviceSpec reused;
    DevicePlan written;
    for (size_t i = 0; i < list.size(); ++i) {
      const PreparedDevice& record = (*prepared)[i];
      if (!record.figures.ok()) continue;
      for (const PlanInput* input : pass) {
        DeviceFor(record, list[i], input->workload.weight_format, &reused);
        PlanOnDeviceInto(*input, reused, &record.usable, &written);
        PlanInput alone = *input;
        alone.shared_lines_generation = 0;
        const DevicePlan fresh = PlanOnDevice(alone, reused, &record.usable);
        ExpectSamePlan(written, fresh, list[i].name());
        ++planned;
        if (fresh.fits_on_one_card) ++one_card;
      }
    }
  }
  EXPECT_GE(planned, 4 * 200);
  EXPECT_GE(one_card, 200);

  // One bandwidth, two peaks, at batch 256: the slow card's decode is
  // bounded by its compute roof, the fast one's by its memory.
  PlanInput batch = Llama31_8BInBf16();
  batch.workload.batch_size = 256;
  const SizingFigures batch_figures = FiguresOf(batch);
  const PlanInput batch_shared = shared_input(batch, batch_figures);
  DeviceSpec slow{.name = "slow", .display_name = "Slow"};
  slow.memory_bytes = 1e12;
  slow.bandwidth_bytes_per_second = 2e12;
  slow.peak_flops = 2e13;
  DeviceSpec fast = slow;
  fast.name = "fast";
  fast.display_name = "Fast";
  fast.peak_flops = 2e15;
  DeviceSpec slow_again = slow;
  slow_again.name = "slow-again";
  std::vector<std::string> decode_lines;
  for (const DeviceSpec* device : {&slow, &fast, &slow_again}) {
    const DevicePlan written = PlanOnDevice(batch_shared, *device);
    PlanInput alone = batch;
    const DevicePlan fresh = PlanOnDevice(alone, *device);
    ExpectSamePlan(written, fresh, device->name);
    ASSERT_GE(fresh.arithmetic.size(), 3u) << device->name;
    decode_lines.push_back(fresh.arithmetic[2]);
  }
  EXPECT_TRUE(absl::StrContains(decode_lines[0], "compute roof")) << decode_lines[0];
  EXPECT_FALSE(absl::StrContains(decode_lines[1], "compute roof")) << decode_lines[1];
  EXPECT_EQ(decode_lines[2], decode_lines[0]);
}

// Many-card plans share their layout and memory lines with the plans of
// other records at the same headroom, layout and node size (plan.cc
// LayoutKey): cards of one capacity that differ in node size only (8, 8
// assumed, 4) each state their own node, and a card like an earlier one
// states the same lines, as PlanOnDevice writes them afresh. The 405B needs
// tensor and pipeline parallelism over nodes on these cards.
TEST(PreparedRecordsTest, ManyCardLinesAreSharedOnlyAtTheSameLayoutAndNode) {
  PlanInput large = About405BInBf16();
  const SizingFigures figures = FiguresOf(large);
  PlanInput shared = large;
  shared.figures = &figures;
  shared.shared_lines_generation = NewPlanGeneration();
  DeviceSpec node_of_8{.name = "node-8", .display_name = "Node of 8"};
  node_of_8.memory_bytes = 80e9;
  node_of_8.bandwidth_bytes_per_second = 2e12;
  node_of_8.peak_flops = 1e15;
  node_of_8.scale_up_domain_size = 8;
  DeviceSpec assumed = node_of_8;
  assumed.name = "assumed";
  assumed.scale_up_domain_size.reset();
  DeviceSpec node_of_4 = node_of_8;
  node_of_4.name = "node-4";
  node_of_4.scale_up_domain_size = 4;
  DeviceSpec node_of_8_again = node_of_8;
  node_of_8_again.name = "node-8-again";
  std::vector<DevicePlan> written;
  for (const DeviceSpec* device : {&node_of_8, &assumed, &node_of_4, &node_of_8_again}) {
    written.push_back(PlanOnDevice(shared, *device));
    const DevicePlan fresh = PlanOnDevice(large, *device);
    ExpectSamePlan(written.back(), fresh, device->name);
    ASSERT_GT(fresh.cards, 8) << device->name;
    ASSERT_GT(fresh.pipeline_parallel, 1) << device->name;
    ASSERT_GE(fresh.arithmetic.size(), 4u) << device->name;
  }
  const auto layout_line = [](const DevicePlan& plan) { return plan.arithmetic[1]; };
  EXPECT_TRUE(absl::StrContains(layout_line(written[1]), "assumed")) << layout_line(written[1]);
  EXPECT_FALSE(absl::StrContains(layout_line(written[0]), "assumed")) << layout_line(written[0]);
  EXPECT_NE(layout_line(written[2]), layout_line(written[0]));
  EXPECT_EQ(written[3].arithmetic, written[0].arithmetic);
}

// The figures a plan states twice, and each record's bandwidth, peak and
// price, are formatted once and their text copied (plan.cc AppendNumKept,
// AppendRecordNum): every line of every one-card plan on the shipped
// accelerators must still state the plan's own figures, as printf's %.4g
// writes them, at batch 1 (per sequence = the batch's) and at batch 3.
TEST(PreparedRecordsTest, KeptFigureTextsAreEachPlansOwnFigures) {
  const SharedRecords<Hardware> list(testing::ShippedHardwareRecords());
  const auto prepared = PreparedDevicesOf(list);
  PlanInput one = Llama31_8BInBf16();
  one.workload.batch_size = 1;
  PlanInput three = one;
  three.workload.batch_size = 3;
  three.sizing.kv_cache_bytes *= 3;
  int checked = 0;
  int priced = 0;
  for (const PlanInput* input : {&one, &three, &one}) {
    DeviceSpec device;
    for (size_t i = 0; i < list.size(); ++i) {
      const PreparedDevice& record = (*prepared)[i];
      if (!record.figures.ok()) continue;
      DeviceFor(record, list[i], input->workload.weight_format, &device);
      const DevicePlan plan = PlanOnDevice(*input, device, &record.usable);
      if (!plan.fits || plan.cards != 1 || !plan.decode_tokens_per_second.has_value()) continue;
      const auto line_starting = [&plan](const std::string& start) -> std::string {
        for (const std::string& line : plan.arithmetic) {
          if (absl::StartsWith(line, start)) return line;
        }
        return "";
      };
      const std::string decode = line_starting("decode bound: ");
      EXPECT_TRUE(absl::StartsWith(
          decode,
          absl::StrFormat("decode bound: %.4g GB/s", *device.bandwidth_bytes_per_second / 1e9)))
          << decode;
      // (A compute roof, when it binds, follows.)
      EXPECT_TRUE(absl::StrContains(
          decode, absl::StrFormat("= %.4g tokens/s per sequence, x %d sequences = %.4g tokens/s",
                                  *plan.decode_tokens_per_second, input->workload.batch_size,
                                  *plan.decode_tokens_per_second_all)))
          << decode;
      if (plan.prefill_tokens_per_second.has_value()) {
        const std::string prefill = line_starting("prefill bound: ");
        EXPECT_TRUE(absl::StartsWith(
            prefill, absl::StrFormat("prefill bound: 1 x %.4g TFLOP/s", *device.peak_flops / 1e12)))
            << prefill;
        EXPECT_TRUE(absl::EndsWith(
            prefill, absl::StrFormat("= %.4g tokens/s", *plan.prefill_tokens_per_second)))
            << prefill;
        EXPECT_EQ(
            line_starting("time to first token: "),
            absl::StrFormat("time to first token: 1000 prompt tokens / %.4g tokens/s = %.4g s",
                            *plan.prefill_tokens_per_second, *plan.time_to_first_token_seconds));
      }
      if (plan.cost_usd_per_million_tokens.has_value()) {
        EXPECT_EQ(line_starting("cost: "),
                  absl::StrFormat("cost: 1 x $%.4g/h / (%.4g tokens/s x 3600) x 1e6 = $%.4g per "
                                  "million tokens",
                                  *device.price_usd_per_hour, *plan.decode_tokens_per_second_all,
                                  *plan.cost_usd_per_million_tokens));
        ++priced;
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 300);
  EXPECT_GE(priced, 10);
}

// The service builds PlanInference's reply on an arena (ReplyArena,
// AnswerPlanInferenceInto) and serializes it from there: its bytes must be
// the heap answer's (AnswerPlanInference) for the plan over every shipped
// accelerator, for requests that fill every part of a plan (prices, a
// runtime's fits, many-card layouts, plans that do not fit, newer models),
// and again on a block taken back from the pool.
TEST(PreparedRecordsTest, ArenaPlanIsTheHeapPlanByteForByteOnEveryShippedAccelerator) {
  auto records = std::make_shared<testing::FakeRecords>();
  for (const Model& model : testing::Shipped().models()) records->Add(model);
  for (const Hardware& hw : testing::Shipped().hardware()) records->Add(hw);
  const int shipped_hardware = testing::Shipped().hardware_size();
  ASSERT_GE(shipped_hardware, 200);
  std::vector<v1::PlanInferenceRequest> requests(4);
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
  // The plans are kept from reply to reply on the arena (PooledOnArena) and
  // written over: a plan with offload lines, then a list of two records
  // (fewer plans than kept), then every record again.
  requests.resize(7);
  requests[4].set_model("models/llama-3-1-70b");
  requests[4].set_offload(v1::OFFLOAD_MODE_AUTO);
  requests[4].set_offload_host("hardware/host-2x-amd-epyc-9004-ddr5-4800");
  requests[5].set_model("models/llama-3-1-70b");
  requests[5].add_hardware(testing::Shipped().hardware(0).name());
  requests[5].add_hardware(testing::Shipped().hardware(shipped_hardware - 1).name());
  requests[6] = requests[0];
  for (const v1::PlanInferenceRequest& request : requests) {
    SCOPED_TRACE(request.ShortDebugString());
    testing::Answer<v1::PlanInferenceResponse> heap;
    AnswerPlanInference(records, request, heap.done());
    ASSERT_TRUE(heap.result.has_value());
    ASSERT_TRUE(heap.result->ok()) << heap.result->status();
    const v1::PlanInferenceResponse& plain = **heap.result;
    EXPECT_EQ(plain.GetArena(), nullptr);
    const int plans = request.hardware_size() > 0 ? request.hardware_size() : shipped_hardware;
    EXPECT_EQ(plain.plans_size(), plans);
    const std::string expected = plain.SerializeAsString();
    if (request.offload() != v1::OFFLOAD_MODE_UNSPECIFIED) {
      // Offload's lines follow the plan's own (core/offload.cc): a plan
      // written over an earlier one keeps them.
      int with_offload = 0;
      for (const v1::HardwarePlan& plan : plain.plans()) {
        if (!plan.has_offload()) continue;
        ++with_offload;
        EXPECT_TRUE(std::any_of(
            plan.arithmetic().begin(), plan.arithmetic().end(),
            [](const std::string& line) { return absl::StartsWith(line, "offload ("); }))
            << plan.hardware();
      }
      EXPECT_GE(with_offload, 5);  // 7 of the shipped records: not a vacuous check
    }
    for (int round = 0; round < 2; ++round) {
      ReplyArena arena;
      v1::PlanInferenceResponse* answer = arena.Create<v1::PlanInferenceResponse>();
      ASSERT_EQ(answer->GetArena(), arena.arena());
      std::optional<absl::Status> done;
      AnswerPlanInferenceInto(records, request, answer,
                              [&done](const absl::Status& status) { done = status; });
      ASSERT_TRUE(done.has_value());
      ASSERT_TRUE(done->ok()) << *done;
      // Bytes, not message equality: what the client receives.
      EXPECT_EQ(answer->SerializeAsString(), expected) << "round " << round;
      EXPECT_EQ(answer->plans_size(), plans);
      // The pooled block holds the whole reply: the arena took no block of
      // its own (which would be a malloc per call again).
      // (About 165-183 KB used of the 512 KiB block for these requests.)
      EXPECT_GT(arena.arena()->SpaceUsed(), 0u);
      EXPECT_LE(arena.arena()->SpaceAllocated(), ReplyArena::kBlockBytes)
          << "used " << arena.arena()->SpaceUsed() << " B";
    }
  }
  // An answer that fails on the arena says why, as on the heap.
  v1::PlanInferenceRequest missing;
  missing.set_model("models/no-such-model");
  ReplyArena arena;
  std::optional<absl::Status> done;
  AnswerPlanInferenceInto(records, missing, arena.Create<v1::PlanInferenceResponse>(),
                          [&done](const absl::Status& status) { done = status; });
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->code(), absl::StatusCode::kNotFound) << *done;
}

// A model named by the request is planned on the source's own record when
// the source lends it (RecordSource::UseModel, the snapshot's), not on a
// copy read through FindModel (session 26): the reply's bytes must be the
// copy's, on the wire path the service takes (PlanWireReply) and on the
// message path, and every error the same, in the same order (the model's
// before the hardware's).
TEST(PreparedRecordsTest, PlanOnTheLentRecordIsThePlanOnItsCopy) {
  const auto fill = [](testing::FakeRecords* records) {
    for (const Model& model : testing::Shipped().models()) records->Add(model);
    for (const Hardware& hw : testing::Shipped().hardware()) records->Add(hw);
  };
  auto copied = std::make_shared<testing::FakeRecords>();
  auto lent = std::make_shared<testing::FakeRecords>();
  fill(copied.get());
  fill(lent.get());
  lent->set_lends_in_place(true);
  const int shipped_hardware = testing::Shipped().hardware_size();
  std::vector<v1::PlanInferenceRequest> requests(6);
  requests[0].set_model("Llama 3.1 8B");  // by display name, as the CLI sends it
  requests[1].set_model("models/llama-3-1-405b");
  requests[1].set_max_cards(1024);
  requests[1].set_objective(v1::PLAN_OBJECTIVE_CHEAPEST);
  requests[1].mutable_workload()->set_context_length_tokens(32768);
  requests[2].set_model("models/llama-3-1-70b");
  requests[2].set_runtime(v1::RUNTIME_VLLM);
  requests[3].set_model("models/llama-3-1-70b");
  requests[3].set_offload(v1::OFFLOAD_MODE_AUTO);
  requests[3].set_offload_host("hardware/host-2x-amd-epyc-9004-ddr5-4800");
  requests[4].set_model("models/llama-3-1-8b");
  requests[4].add_hardware(testing::Shipped().hardware(0).name());
  requests[4].add_hardware(testing::Shipped().hardware(shipped_hardware - 1).name());
  requests[5].set_model("models/llama-3-1-8b");
  requests[5].set_newer_models(true);  // reads the catalog again: a copy
  const auto answer = [](const std::shared_ptr<testing::FakeRecords>& records,
                         const v1::PlanInferenceRequest& request, bool wire) {
    ReplyArena arena;
    v1::PlanInferenceResponse* response = arena.Create<v1::PlanInferenceResponse>();
    PlanWireCards* cards = google::protobuf::Arena::Create<PlanWireCards>(arena.arena());
    std::optional<absl::Status> done;
    const auto set_done = [&done](const absl::Status& status) { done = status; };
    if (wire) {
      AnswerPlanInferenceInto(records, request, response, cards, set_done);
    } else {
      AnswerPlanInferenceInto(records, request, response, set_done);
    }
    EXPECT_TRUE(done.has_value());
    if (!done.has_value() || !done->ok()) {
      return absl::StatusOr<std::string>(done.value_or(absl::InternalError("no answer")));
    }
    return absl::StatusOr<std::string>(wire ? PlanWireReply(response, cards).SerializeAsString()
                                            : response->SerializeAsString());
  };
  for (const v1::PlanInferenceRequest& request : requests) {
    SCOPED_TRACE(request.ShortDebugString());
    for (const bool wire : {true, false}) {
      const int lent_before = lent->models_lent();
      const int reads_before = lent->model_reads();
      const absl::StatusOr<std::string> expected = answer(copied, request, wire);
      ASSERT_TRUE(expected.ok()) << expected.status();
      const absl::StatusOr<std::string> got = answer(lent, request, wire);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, *expected) << (wire ? "wire" : "message");
      EXPECT_GT(expected->size(), 1000u);
      if (request.newer_models()) {
        EXPECT_EQ(lent->models_lent(), lent_before);
        EXPECT_GT(lent->model_reads(), reads_before);
      } else {
        EXPECT_EQ(lent->models_lent(), lent_before + 1);
        EXPECT_EQ(lent->model_reads(), reads_before);  // no copy read
      }
    }
  }
  // Errors: the same status from both, the model's first.
  std::vector<v1::PlanInferenceRequest> failing(3);
  failing[0].set_model("models/no-such-model");
  failing[1].set_model("models/no-such-model");
  failing[1].add_hardware("hardware/no-such-card");
  failing[2].set_model("models/llama-3-1-8b");
  failing[2].add_hardware("hardware/no-such-card");
  for (const v1::PlanInferenceRequest& request : failing) {
    SCOPED_TRACE(request.ShortDebugString());
    const absl::StatusOr<std::string> expected = answer(copied, request, true);
    const absl::StatusOr<std::string> got = answer(lent, request, true);
    ASSERT_FALSE(expected.ok());
    EXPECT_EQ(expected.status().code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(got.status(), expected.status());
  }
  EXPECT_TRUE(
      absl::StrContains(answer(lent, failing[1], true).status().message(), "no-such-model"));
  EXPECT_TRUE(absl::StrContains(answer(lent, failing[2], true).status().message(), "no-such-card"));
}

TEST(PreparedRecordsTest, RankOrderIsTheOrderRankPlansMovesThePlansInto) {
  std::vector<DevicePlan> plans;
  for (int i = 0; i < 12; ++i) {
    DevicePlan plan{.name = absl::StrCat("hardware/card-", (i * 7) % 12)};
    plan.fits = i % 3 != 0;
    plan.cards = 1 + i % 4;
    if (i % 2 == 0) plan.decode_tokens_per_second_all = 100.0 * (i % 5);
    if (i % 4 == 1) plan.cost_usd_per_million_tokens = 0.5 * (i % 3);
    plans.push_back(plan);
  }
  for (const PlanObjective objective :
       {PlanObjective::kFewestCards, PlanObjective::kCheapest, PlanObjective::kFastest}) {
    const std::vector<int> order = RankOrder(objective, plans);
    // Over the first 7 plans only: the order of those 7 alone.
    std::vector<DevicePlan> first(plans.begin(), plans.begin() + 7);
    EXPECT_EQ(RankOrder(objective, 7, plans), RankOrder(objective, first));
    std::vector<DevicePlan> ranked = plans;
    RankPlans(objective, &ranked);
    ASSERT_EQ(order.size(), ranked.size());
    for (size_t i = 0; i < order.size(); ++i) {
      EXPECT_EQ(plans[order[i]].name, ranked[i].name) << i;
    }
  }
}

}  // namespace
}  // namespace modelatlas::estimator
