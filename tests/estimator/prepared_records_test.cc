// What the estimator checks and converts once per state of its snapshot
// instead of on every call (issue 22 point 1): a catalog model's
// architecture check, made when the record is loaded or changed, and each
// hardware record's figure check and conversion, made once per shared list.
// Each must equal what the per-call path computes, errors included.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>

#include <atomic>

#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/catalog/shared_records.h"
#include "estimator-service/catalog/snapshot.h"
#include "tests/estimator/fake_records.h"

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
  for (size_t i = 0; i < list.size(); ++i) {
    const Hardware& hw = list[i];
    EXPECT_EQ((*prepared)[i].figures, CheckDeviceFigures(hw)) << hw.name();
    if (!(*prepared)[i].figures.ok()) continue;
    for (const NumberFormat format :
         {NumberFormat::kBf16, NumberFormat::kFp8, NumberFormat::kInt4, NumberFormat::kGgufQ4KM}) {
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
    }
  }
  EXPECT_FALSE((*prepared)[1].figures.ok());
}

}  // namespace
}  // namespace modelatlas::estimator
