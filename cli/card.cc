#include "cli/card.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/civil_time.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/enum_spellings.h"
#include "cli/output.h"

namespace modelatlas::cli {
namespace {

using common::v1::Model;

void Section(std::ostream& out, const std::string& title) { out << "\n" << title << "\n"; }

void Field(std::ostream& out, const std::string& label, const std::string& value) {
  if (!value.empty()) out << "- " << label << ": " << value << "\n";
}

void Note(std::ostream& out, const std::string& note) {
  if (note.empty()) return;
  out << "    " << absl::StrReplaceAll(note, {{"\n", "\n    "}}) << "\n";
}

std::string List(const google::protobuf::RepeatedPtrField<std::string>& values) {
  return Joined(values, ", ");
}

// An enum value as words ("open weights unrestricted"), "" when unset.
template <typename Enum>
std::string Words(const Spellings<Enum>& table, Enum value) {
  return SpellingAsWords(table.Spelling(value));
}

std::string Number(bool has, double value, const char* unit = "") {
  return has ? absl::StrCat(absl::StrFormat("%.10g", value), unit) : "";
}

// A whole number with thousands separators (1,024 h); a fraction as is.
std::string Thousands(bool has, double value, const char* unit = "") {
  if (!has) return "";
  if (value != std::floor(value)) return Number(has, value, unit);
  return absl::StrCat(WithThousands(value), unit);
}

// What a dataset size counts: Epoch's "datapoints" are tokens for language
// models, and other things (images, frames, ...) elsewhere.
std::string DatapointUnit(const Model& m) {
  for (const std::string& domain : m.domains()) {
    if (domain == "Language") return "tokens";
  }
  return "datapoints";
}

}  // namespace

void PrintCard(const Model& m, const estimator::v1::PlanInferenceResponse* plan,
               std::ostream& out) {
  out << m.display_name() << "  (" << m.name() << ")\n";

  Section(out, "Origin");
  Field(out, "Organisation", List(m.organizations()));
  Field(out, "Organisation type", List(m.organization_categories()));
  Field(out, "Country", List(m.countries()));
  Field(out, "Published", HumanDateText(m.publication_date()));
  Field(out, "Authors", m.authors());

  Section(out, "What it does");
  Field(out, "Domain", List(m.domains()));
  Field(out, "Task", List(m.tasks()));
  Field(out, "Approach", List(m.approaches()));
  Field(out, "Numerical format", List(m.numerical_formats()));
  Field(out, "Base model", List(m.base_models()));

  Section(out, "Size");
  Field(out, "Parameters",
        m.has_parameters()
            ? absl::StrCat(WithThousands(m.parameters()), " (", HumanCount(m.parameters()), ")")
            : "");
  Note(out, m.parameters_notes());
  std::vector<std::string> sizes;
  for (double size : m.training_dataset_size_datapoints()) {
    sizes.push_back(absl::StrCat(WithThousands(size), " ", DatapointUnit(m)));
  }
  Field(out, "Training data", absl::StrJoin(sizes, " or "));
  Note(out, m.dataset_size_notes());
  Field(out, "Epochs", Number(m.has_epochs(), m.epochs()));
  Field(out, "Batch size", Number(m.has_batch_size(), m.batch_size()));
  Note(out, m.batch_size_notes());

  Section(out, "Training compute");
  Field(out, "Training compute",
        m.has_training_compute_flop() ? absl::StrCat(TimesTenTo(m.training_compute_flop()), " FLOP")
                                      : "");
  std::vector<std::string> methods;
  for (int method : m.training_compute_estimation_methods()) {
    methods.push_back(
        Words(EstimationMethods(), static_cast<common::v1::EstimationMethod>(method)));
  }
  Field(out, "How it was established", absl::StrJoin(methods, ", "));
  Note(out, m.training_compute_notes());

  Section(out, "The training run");
  Field(out, "Training hardware", List(m.training_hardware()));
  Field(out, "Chips used", Thousands(m.has_hardware_quantity(), m.hardware_quantity()));
  Field(out, "Chip-hours", Thousands(m.has_training_chip_hours(), m.training_chip_hours(), " h"));
  Field(out, "Wall-clock time",
        Thousands(m.has_training_time_hours(), m.training_time_hours(), " h"));
  Note(out, m.training_time_notes());
  Field(out, "Power draw",
        m.has_training_power_draw_watts() ? HumanPower(m.training_power_draw_watts()) : "");
  Field(out, "Compute cost",
        m.has_training_compute_cost_2023_usd()
            ? absl::StrCat(HumanUsd(m.training_compute_cost_2023_usd()), " (2023 dollars)")
            : "");
  Field(out, "Hardware utilization (MFU)",
        Number(m.has_hardware_utilization_mfu(), m.hardware_utilization_mfu()));
  Note(out, m.utilization_notes());

  Section(out, "Availability");
  Field(out, "Model access", Words(Accessibilities(), m.accessibility()));
  Field(out, "Training code", Words(CodeAccessibilities(), m.training_code_accessibility()));
  Note(out, m.accessibility_notes());

  Section(out, "How it is classified");
  Field(out, "Why it is tracked", List(m.notability_criteria()));
  Note(out, m.notability_criteria_notes());
  Field(out, "Record confidence", Words(Confidences(), m.confidence()));
  Field(out, "Citations", Thousands(m.has_citations(), m.citations()));
  Field(out, "Frontier model", m.has_frontier_model() && m.frontier_model() ? "yes" : "");
  Field(out, "Benchmark data", m.benchmark_data());

  if (m.has_architecture()) {
    const auto& a = m.architecture();
    Section(out, "Architecture");
    Field(out, "Layers", absl::StrCat(a.num_layers()));
    Field(out, "Hidden size", absl::StrCat(a.hidden_size()));
    Field(out, "Attention heads / KV heads",
          absl::StrCat(a.num_attention_heads(), " / ", a.num_key_value_heads()));
    Field(out, "MLP width", absl::StrCat(a.intermediate_size(), a.gated_mlp() ? " (gated)" : ""));
    if (a.num_experts() > 0) {
      Field(out, "Experts",
            absl::StrCat(a.num_experts(), ", ", a.num_experts_per_token(), " active per token"));
    }
    Field(out, "Vocabulary", absl::StrCat(a.vocab_size()));
    Field(out, "Context", absl::StrCat(a.max_context_length(), " tokens"));
  }

  Section(out, "Sources");
  Field(out, "Reference", m.reference());
  Field(out, "Link", m.link());
  Field(out, "Record source", m.provenance().source());
  if (m.has_last_modified_time()) {
    const absl::CivilDay day = absl::ToCivilDay(
        absl::FromUnixSeconds(m.last_modified_time().seconds()), absl::UTCTimeZone());
    Field(out, "Last updated", HumanDate(static_cast<int>(day.year()), day.month(), day.day()));
  }

  Section(out, "Hardware requirements");
  if (plan == nullptr || !plan->memory().available()) {
    out << (plan != nullptr ? plan->memory().no_estimate_reason() : std::string("no estimate"))
        << ". The weights for this model have not been published, so it cannot be run on your "
           "own hardware at any size; no graphics card changes that. To see what it would take "
           "if they were, ask again with --hypothetical.\n";
    return;
  }
  const auto& memory = plan->memory();
  out << absl::StrFormat("To run it in %s at the context asked for: %.2f GiB (%d bytes)\n",
                         "the requested format", memory.total_gib(), memory.total_bytes());
  for (const auto& line : memory.lines()) {
    out << "  " << line.component() << ": " << line.arithmetic() << "\n";
  }
  out << "Smallest setups (fewest cards):\n";
  int shown = 0;
  for (const auto& hw : plan->plans()) {
    if (!hw.fits() || shown == 8) break;
    out << absl::StrFormat("  %-36s %2d card%s, %s GiB headroom per card", hw.display_name(),
                           hw.cards(), hw.cards() == 1 ? " " : "s",
                           Gib(static_cast<double>(hw.headroom_bytes_per_card()), 1));
    if (!hw.speed_not_modelled().empty()) {
      out << ", speed not modelled (on-chip SRAM)";
    } else if (hw.has_decode_tokens_per_second()) {
      out << absl::StrFormat(", up to %.0f tokens/s", hw.decode_tokens_per_second());
      if (!hw.decode_bound_doubtful().empty()) out << " (bandwidth on record doubtful)";
    }
    out << "\n";
    ++shown;
  }
  if (shown == 0) out << "  none of the hardware on record fits it within 64 cards\n";
}

}  // namespace modelatlas::cli
