// How the CLI spells proto enums: one table per enum, each value with its
// spelling on the command line (and in tables) and a one-line description.
// Flag help, the error for a bad value and printed values are generated from
// these tables; tests/cli/enum_spellings_test.cc checks every table against
// its enum's descriptor, so a value added to a proto needs a spelling here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/generated_enum_reflection.h"
#include "modelatlas/catalog/v1/catalog_service.pb.h"
#include "modelatlas/catalog/v1/import_export.pb.h"
#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"
#include "modelatlas/estimator/v1/training.pb.h"

namespace modelatlas::cli {

struct EnumSpelling {
  int value;
  absl::string_view spelling;
  absl::string_view description;
};

// The spellings of one proto enum, by value number (see Spellings<Enum>).
class EnumSpellings {
 public:
  // `noun` names a value in errors: "--weights: unknown format \"q4\"".
  EnumSpellings(const google::protobuf::EnumDescriptor* descriptor, absl::string_view noun,
                std::vector<EnumSpelling> entries);

  const google::protobuf::EnumDescriptor* descriptor() const { return descriptor_; }
  const std::vector<EnumSpelling>& entries() const { return entries_; }

  // Any case; '-' and '_' are the same ("GPTQ_INT4" is gptq-int4).
  std::optional<int> ParseNumber(absl::string_view text) const;
  // The spelling of `value`, or "" when it has none.
  absl::string_view SpellingOf(int value) const;
  // "fp32, fp16, bf16".
  std::string Accepted() const;
  // "--weights: unknown format \"q4\"; accepted: fp32, fp16, ...".
  std::string UnknownError(absl::string_view flag, absl::string_view text) const;
  // One line per value: "  fp32              32-bit float, 4 bytes per element".
  std::string Described(absl::string_view indent) const;

 private:
  const google::protobuf::EnumDescriptor* descriptor_;
  std::string noun_;
  std::vector<EnumSpelling> entries_;
};

// Typed access to the table of `Enum`.
template <typename Enum>
class Spellings : public EnumSpellings {
 public:
  Spellings(absl::string_view noun, std::vector<EnumSpelling> entries)
      : EnumSpellings(google::protobuf::GetEnumDescriptor<Enum>(), noun, std::move(entries)) {}

  std::optional<Enum> Parse(absl::string_view text) const {
    std::optional<int> number = ParseNumber(text);
    if (!number) return std::nullopt;
    return static_cast<Enum>(*number);
  }
  absl::string_view Spelling(Enum value) const { return SpellingOf(static_cast<int>(value)); }
  // The value of --`flag`=`text`, or InvalidArgument with UnknownError.
  absl::StatusOr<Enum> ParseFlag(absl::string_view flag, absl::string_view text) const {
    std::optional<Enum> value = Parse(text);
    if (!value) return absl::InvalidArgumentError(UnknownError(flag, text));
    return *value;
  }
};

// The inference workload: --weights, --kv_cache.
const Spellings<estimator::v1::NumberFormat>& NumberFormats();
// plan --objective.
const Spellings<estimator::v1::PlanObjective>& PlanObjectives();
// runnable --order.
const Spellings<estimator::v1::RunnableOrder>& RunnableOrders();
// plan --runtime.
const Spellings<estimator::v1::Runtime>& Runtimes();
// plan --offload.
const Spellings<estimator::v1::OffloadMode>& OffloadModes();
// Where a plan's price came from (printed, not a flag).
const Spellings<estimator::v1::PriceSource>& PriceSources();
// Training: --optimizer, --recompute, --finetune.
const Spellings<estimator::v1::Optimizer>& Optimizers();
const Spellings<estimator::v1::Recompute>& Recomputes();
const Spellings<estimator::v1::TrainingFramework>& TrainingFrameworks();
const Spellings<estimator::v1::TrainingLoss>& TrainingLosses();
const Spellings<estimator::v1::FineTuning>& FineTunings();
const Spellings<estimator::v1::AuditVerdict>& AuditVerdicts();
// Catalog enums in the output of list, card and watch.
const Spellings<common::v1::Accessibility>& Accessibilities();
const Spellings<common::v1::CodeAccessibility>& CodeAccessibilities();
const Spellings<common::v1::Confidence>& Confidences();
const Spellings<common::v1::EstimationMethod>& EstimationMethods();
const Spellings<catalog::v1::ChangeType>& ChangeTypes();
// import/export --format (the empty spelling is FILE_FORMAT_UNSPECIFIED:
// detect on import, json on export) and the outcome of each imported row.
const Spellings<catalog::v1::FileFormat>& FileFormats();
const Spellings<catalog::v1::ImportOutcome>& ImportOutcomes();

// Every table above.
std::vector<const EnumSpellings*> AllEnumSpellings();

// Every table as Markdown: a section per enum with its flags, then each
// value's spelling, proto name and meaning. docs/VALUES.md is this text
// (tests/cli checks that it is current; `modelatlas values` prints it).
std::string EnumValuesMarkdown();

// The help text of a flag taking an enum: "Weight format: fp32, fp16, ...".
std::string EnumFlagHelp(absl::string_view what, const EnumSpellings& spellings);

// The table of the enum an enum flag takes ("weights", "objective"...), or
// null when `flag` takes no enum.
const EnumSpellings* EnumOfFlag(absl::string_view flag);

}  // namespace modelatlas::cli
