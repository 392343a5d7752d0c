// Between the contracts (protobuf) and the formulas' plain structs.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "estimator-service/catalog/shared_records.h"
#include "estimator-service/core/architecture.h"
#include "estimator-service/core/device_memory.h"
#include "estimator-service/core/number_format.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/core/training_memory.h"
#include "estimator-service/core/workload.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/device_memory.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"
#include "modelatlas/estimator/v1/training.pb.h"

namespace modelatlas::estimator {

Architecture ToCoreArchitecture(const common::v1::Architecture& arch);

// INVALID_ARGUMENT naming each field (under `prefix`, e.g. "inline_model.architecture")
// that is negative or beyond any real model (layers, widths, heads, vocabulary, context,
// experts), so that no arithmetic on it can overflow.
absl::Status ValidateArchitecture(const common::v1::Architecture& arch, absl::string_view prefix);

// The request's format, or `fallback` when unspecified; INVALID_ARGUMENT
// naming `field` for a value this build does not know.
absl::StatusOr<NumberFormat> ToCoreNumberFormat(v1::NumberFormat format, NumberFormat fallback,
                                                const char* field);

// Whether a model's weights are published, from its accessibility and
// Epoch's "Open model weights?" flag; nullopt when neither is on record.
std::optional<bool> WeightsPublished(const common::v1::Model& model);

// A multimodal architecture's parts beside its language model, counted
// (core/encoders): vision/audio encoders and projectors, in order.
struct CountedEncoderPart {
  std::string kind;  // "vision_encoder", "projector", "audio_encoder"
  double parameters = 0;
  std::string arithmetic;
};
absl::StatusOr<std::vector<CountedEncoderPart>> CountEncoderParts(
    const common::v1::Architecture& arch, absl::string_view prefix = "architecture");
// Their sum, parameters (0 without parts or when they cannot be counted).
double EncoderPartsParameters(const common::v1::Architecture& arch);

// The parameter count of a record (the whole checkpoint: a multimodal
// model's encoders and projectors included): its figure, else the published count of
// its architecture, else a count from the architecture plus its encoder parts;
// FAILED_PRECONDITION when it has none of them. `architecture`, when given,
// is the record's architecture already converted (spares converting it again).
absl::StatusOr<double> ParametersOfModel(const common::v1::Model& model,
                                         const Architecture* architecture = nullptr);

// The parameters a record uses per token (compute per token, speed, the
// training-compute audit): its active_parameters; else, for a
// mixture-of-experts architecture, the count's active share of
// ParametersOfModel (DeepSeek-V3: 671e9 x 37.55e9 / 671.03e9); else
// ParametersOfModel. The errors of ParametersOfModel.
absl::StatusOr<double> ActiveParametersOfModel(const common::v1::Model& model,
                                               const Architecture* architecture = nullptr);

// The peak a device computes `format` at, FLOP/s: quantized formats
// dequantize to 16-bit and run on the FP16/BF16 tensor cores.
std::optional<double> PeakForFormat(const common::v1::PeakThroughput& peak, NumberFormat format);

// Each contract enum in its core form: unspecified takes the documented
// default; INVALID_ARGUMENT naming `field` for a value this build does not
// know (tests/estimator/enum_coverage_test.cc walks every value).
absl::StatusOr<PlanObjective> ToCorePlanObjective(v1::PlanObjective objective, const char* field);
absl::StatusOr<Optimizer> ToCoreOptimizer(v1::Optimizer optimizer, const char* field);
absl::StatusOr<Recompute> ToCoreRecompute(v1::Recompute recompute, const char* field);
absl::StatusOr<FineTuning> ToCoreFineTuning(v1::FineTuning fine_tuning, const char* field);
// UNSPECIFIED = Framework::kDefault (resolved by the core for the settings).
absl::StatusOr<Framework> ToCoreFramework(v1::TrainingFramework framework, const char* field);
v1::TrainingFramework ToProtoFramework(Framework framework);
// UNSPECIFIED = transformers' stock loss.
absl::StatusOr<LossImplementation> ToCoreLoss(v1::TrainingLoss loss, const char* field);
v1::TrainingLoss ToProtoLoss(LossImplementation loss);

// The contract's name of a core format.
v1::NumberFormat ToProtoNumberFormat(NumberFormat format);

// The request's workload figures as the core reads them, all but the two
// formats (which need their own checks: ResolveWorkload names a bad one).
WorkloadRequest WorkloadFiguresOf(const v1::InferenceWorkload& workload);
// The workload a request asks for, defaults resolved (core ResolveWorkload,
// the one place they are); INVALID_ARGUMENT naming each bad field (without
// a prefix: callers add theirs, e.g. "workload.").
absl::StatusOr<ResolvedWorkload> ResolveWorkload(const v1::InferenceWorkload& workload);

// The resolved workload as answers echo it: every field filled, and the
// one-line statement.
v1::ResolvedWorkload ToProto(const ResolvedWorkload& workload);
// The same written into `out` (empty; on the heap or an Arena), with no
// message of its own.
void ToProto(const ResolvedWorkload& workload, v1::ResolvedWorkload* out);

// FAILED_PRECONDITION naming the record and the field when a hardware
// record's figures are beyond any real device (memory, bandwidth, peaks:
// core/units.h): such a record is not planned, whatever the request.
absl::Status CheckDeviceFigures(const common::v1::Hardware& hardware);

// ValidateArchitecture of the model an answer is about. A catalog record
// (one with a resource name) that fails is the catalog's data, not the
// caller's request: FAILED_PRECONDITION naming the record; an inline model
// keeps INVALID_ARGUMENT with its field.
absl::Status ValidateModelArchitecture(const common::v1::Model& model, absl::string_view prefix);

// What one process can allocate on a hardware record's device: its driver
// figure, else the rule for its memory type (core/device_memory.h).
AllocatableMemory AllocatableMemoryOfRecord(const common::v1::Hardware& hardware);
void ToProto(const AllocatableMemory& memory, v1::DeviceMemory* out);

// A hardware record as a plan needs it, its peak taken for `format`, its
// capacity the allocatable one (AllocatableMemoryOfRecord).
DeviceSpec DeviceOf(const common::v1::Hardware& hardware, NumberFormat format);

// A hardware record as every plan over it reads it, prepared once per list
// of records (PreparedDevicesOf): whether its figures can be planned on
// (CheckDeviceFigures) and, when they can, DeviceOf in the default format
// (another format's peak is the request's: DeviceFor sets it).
struct PreparedDevice {
  absl::Status figures;
  // DeviceOf(hardware, kPreparedFormat): its peak the one for the default
  // weights format, so a plan in that format reads it as it is
  // (DeviceForPlan).
  static constexpr NumberFormat kPreparedFormat = ResolvedWorkload::kDefaultFormat;
  DeviceSpec device;
  // UsableCardOf(device) at the default memory utilization (the usable
  // memory per card and its sentence, the first line of every plan on it).
  UsableCard usable;
  // PeakForFormat of the record for each format up to kFp8Block, by the
  // format's value (a format appended later is computed per call).
  std::array<std::optional<double>, static_cast<size_t>(NumberFormat::kFp8Block) + 1> peak_flops;
  // The rank of the record's name among the list's names (equal names,
  // equal ranks; every record has one, a record not planned on too): the
  // plans are ordered by it (RankOrder) without comparing names.
  int name_rank = 0;
};
// One per record of `hardware`, in its order. Derived once per list
// (SharedRecords::Derive): for the snapshot's list of every accelerator, once
// per state of the hardware instead of on every plan (the checks by
// reflection and the conversion were a sixth of a plan over every
// accelerator, docs/BENCHMARKS.md).
std::shared_ptr<const std::vector<PreparedDevice>> PreparedDevicesOf(
    const SharedRecords<common::v1::Hardware>& hardware);
// DeviceOf(hardware, format) from the record's PreparedDevice: the same spec.
DeviceSpec DeviceFor(const PreparedDevice& prepared, const common::v1::Hardware& hardware,
                     NumberFormat format);
// The same into *device, reusing its strings' storage (one spec for every
// record of a plan over every accelerator).
void DeviceFor(const PreparedDevice& prepared, const common::v1::Hardware& hardware,
               NumberFormat format, DeviceSpec* device);
// The spec a plan in `format` reads, with `price_usd_per_hour` (the
// request's, when it gives one) replacing the record's: the prepared spec
// itself when it is that one (the default format, no price in the request),
// else DeviceFor written into *scratch. Copying each record's spec (its
// strings included) on every plan over every accelerator was 3.5% of its
// instructions (docs/BENCHMARKS.md, session 19).
const DeviceSpec& DeviceForPlan(const PreparedDevice& prepared,
                                const common::v1::Hardware& hardware, NumberFormat format,
                                const std::optional<double>& price_usd_per_hour,
                                DeviceSpec* scratch);
// ToProto of the device's AllocatableMemory (its allocatable_memory_bytes
// set), read from the spec without a copy.
void DeviceMemoryToProto(const DeviceSpec& device, v1::DeviceMemory* out);

}  // namespace modelatlas::estimator
