#include "web/model_record.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "web/page.h"
#include "web/text.h"

namespace modelatlas::web {
namespace {

using common::v1::Model;

std::string Words(const std::string& full_name, absl::string_view prefix) {
  absl::string_view enum_name = full_name;
  absl::ConsumePrefix(&enum_name, prefix);
  std::string out = absl::AsciiStrToLower(absl::StrReplaceAll(enum_name, {{"_", " "}}));
  if (!out.empty()) out[0] = absl::ascii_toupper(out[0]);
  return out;
}

std::string List(const google::protobuf::RepeatedPtrField<std::string>& values) {
  return Html(absl::StrJoin(values, ", "));
}

std::string YesNo(bool has, bool value) { return has ? (value ? "Yes" : "No") : ""; }

std::string Sci(bool has, double v, const char* unit) {
  return has ? absl::StrCat(Scientific(v), " ", unit) : "";
}

std::string Links(const std::string& text) {
  std::vector<std::string> parts;
  for (absl::string_view url : absl::StrSplit(text, absl::ByAnyChar(" ,\n"), absl::SkipEmpty())) {
    parts.push_back(ExternalLink(std::string(url)));
  }
  return absl::StrJoin(parts, "<br>");
}

// The architecture's figures that decide memory and speed, when on record.
std::string ArchitectureItems(const common::v1::Architecture& a) {
  if (a.num_layers() == 0) return "";
  std::string shape =
      absl::StrCat(a.num_layers(), " layers, hidden size ", Grouped(a.hidden_size()), ", ",
                   a.num_attention_heads(), " attention heads");
  if (a.num_key_value_heads() > 0 && a.num_key_value_heads() != a.num_attention_heads()) {
    absl::StrAppend(&shape, " (", a.num_key_value_heads(), " key/value heads)");
  }
  if (a.kv_lora_rank() == 0 && a.v_head_dim() > 0 && a.head_dim() > 0 &&
      a.v_head_dim() != a.head_dim()) {
    // MiMo-V2-Flash: values narrower than queries and keys (both in the cache).
    absl::StrAppend(&shape, "; query and key heads of ", a.head_dim(), ", value heads of ",
                    a.v_head_dim());
  }
  if (a.global_head_dim() > 0 || a.num_global_key_value_heads() > 0) {
    // Gemma 4: the full-attention layers' own heads (the KV cache's other part).
    const int kv_heads = a.num_global_key_value_heads() > 0 ? a.num_global_key_value_heads()
                                                            : a.num_key_value_heads();
    const int head_dim = a.global_head_dim() > 0 ? a.global_head_dim() : a.head_dim();
    // Step-3.5-Flash: their own query heads too.
    absl::StrAppend(&shape, "; ",
                    a.num_global_attention_heads() > 0
                        ? absl::StrCat(a.num_global_attention_heads(), " attention heads and ")
                        : "",
                    kv_heads, " key/value heads of ", head_dim, " in its ",
                    a.num_layers() - a.num_sliding_window_layers(), " full-attention layers",
                    a.global_values_from_keys() ? " (values from the keys)" : "");
  }
  if (a.num_experts() > 0) {
    absl::StrAppend(&shape, ", ", a.num_experts(), " experts (", a.num_experts_per_token(),
                    " per token)");
  }
  if (a.layer_intermediate_sizes_size() > 0) {
    // Nemotron-NAS: its layers differ (only those with attention cache).
    const int without_mlp = static_cast<int>(
        std::count(a.layer_intermediate_sizes().begin(), a.layer_intermediate_sizes().end(), 0));
    absl::StrAppend(&shape, "; attention in ",
                    a.num_attention_layers() > 0 ? a.num_attention_layers() : a.num_layers(),
                    " of the layers, each layer's MLP of its own width (up to ",
                    Grouped(static_cast<double>(a.intermediate_size())), ")",
                    without_mlp > 0 ? absl::StrCat(", ", without_mlp, " without one") : "");
  }
  if (a.num_cross_attention_layers() > 0) {
    // Llama 3.2 Vision: these layers cache the image, not the text.
    absl::StrAppend(&shape, "; ", a.num_cross_attention_layers(),
                    " of the layers attend to an image (cross-attention, ",
                    Grouped(static_cast<double>(a.cross_attention_positions())),
                    " image positions cached per sequence)");
  }
  std::vector<std::string> parts;
  for (const common::v1::EncoderPart& part : a.encoder_parts()) {
    std::string kind = absl::StrReplaceAll(part.kind(), {{"_", " "}});
    if (std::find(parts.begin(), parts.end(), kind) == parts.end()) parts.push_back(kind);
  }
  if (!parts.empty()) absl::StrAppend(&shape, "; with its ", absl::StrJoin(parts, ", "));
  return absl::StrCat(
      Item("Architecture", Html(shape), a.source()),
      Item("Context length", a.max_context_length() > 0
                                 ? Grouped(static_cast<double>(a.max_context_length())) + " tokens"
                                 : ""),
      Item("Vocabulary",
           a.vocab_size() > 0 ? Grouped(static_cast<double>(a.vocab_size())) + " tokens" : ""));
}

}  // namespace

bool OpenWeights(const Model& m) {
  if (m.has_open_model_weights()) return m.open_model_weights();
  return m.accessibility() == common::v1::ACCESSIBILITY_OPEN_WEIGHTS_UNRESTRICTED ||
         m.accessibility() == common::v1::ACCESSIBILITY_OPEN_WEIGHTS_RESTRICTED_USE ||
         m.accessibility() == common::v1::ACCESSIBILITY_OPEN_WEIGHTS_NON_COMMERCIAL;
}

std::string AccessibilityText(common::v1::Accessibility a) {
  if (a == common::v1::ACCESSIBILITY_UNSPECIFIED) return "";
  return Words(common::v1::Accessibility_Name(a), "ACCESSIBILITY_");
}

std::string RecordSections(const Model& m) {
  std::string html = "<h2 class=\"part\">On record</h2>";
  absl::StrAppend(&html,
                  Section("origin", "Origin", "Who built the model, where, and when it came out.",
                          absl::StrCat(Item("Organisation", List(m.organizations())),
                                       Item("Organisation type", List(m.organization_categories())),
                                       Item("Country", List(m.countries())),
                                       Item("Published", Html(DateText(m.publication_date()))),
                                       Item("Authors", Html(m.authors())))));
  absl::StrAppend(
      &html, Section("purpose", "What it does",
                     "The fields and jobs it was built for; one model often carries several.",
                     absl::StrCat(Item("Domain", List(m.domains())), Item("Task", List(m.tasks())),
                                  Item("Approach", List(m.approaches())),
                                  Item("Numerical format", List(m.numerical_formats())),
                                  Item("Built on", List(m.base_models())))));
  // Epoch's "datapoints" are tokens for language models, other things elsewhere.
  const bool language =
      std::find(m.domains().begin(), m.domains().end(), "Language") != m.domains().end();
  const std::string unit = language ? "tokens" : "data points";
  std::string data;
  for (double d : m.training_dataset_size_datapoints()) {
    if (!data.empty()) data += "; ";
    data += Grouped(d) + " " + unit;
  }
  absl::StrAppend(
      &html,
      Section("size", "Size",
              "How big the model is and how much data it saw. The parameter count decides "
              "which cards can hold it.",
              absl::StrCat(Item("Parameters", m.has_parameters() ? ShortCount(m.parameters()) : "",
                                m.parameters_notes()),
                           Item("Training data", Html(data), m.dataset_size_notes()),
                           Item("Epochs", m.has_epochs() ? Decimal(m.epochs(), 2) : ""),
                           Item("Batch size", m.has_batch_size() ? Grouped(m.batch_size()) : "",
                                m.batch_size_notes()),
                           ArchitectureItems(m.architecture()))));
  std::vector<std::string> methods;
  for (int method : m.training_compute_estimation_methods()) {
    methods.push_back(
        Words(common::v1::EstimationMethod_Name(static_cast<common::v1::EstimationMethod>(method)),
              "ESTIMATION_METHOD_"));
  }
  std::string bounds;
  if (m.has_training_compute_lower_bound_flop() || m.has_training_compute_upper_bound_flop()) {
    bounds = absl::StrCat(Sci(m.has_training_compute_lower_bound_flop(),
                              m.training_compute_lower_bound_flop(), "FLOP"),
                          " to ",
                          Sci(m.has_training_compute_upper_bound_flop(),
                              m.training_compute_upper_bound_flop(), "FLOP"));
  }
  absl::StrAppend(
      &html,
      Section(
          "compute", "Training compute",
          "The arithmetic spent on training, in floating-point operations: what building it "
          "cost, not how fast it answers.",
          absl::StrCat(
              Item("Training compute",
                   Sci(m.has_training_compute_flop(), m.training_compute_flop(), "FLOP"),
                   m.training_compute_notes()),
              Item("How it was established", Html(absl::StrJoin(methods, ", "))),
              Item("Range", bounds),
              Item("Fine-tuning compute",
                   Sci(m.has_finetune_compute_flop(), m.finetune_compute_flop(), "FLOP"),
                   m.finetune_compute_notes()),
              Item("Post-training compute",
                   Sci(m.has_post_training_compute_flop(), m.post_training_compute_flop(), "FLOP"),
                   m.post_training_compute_notes()),
              Item("Training hardware", List(m.training_hardware())),
              Item("Chips", m.has_hardware_quantity() ? Grouped(m.hardware_quantity()) : ""),
              Item("Training time",
                   m.has_training_time_hours()
                       ? absl::StrCat(Grouped(m.training_time_hours()), " hours")
                       : "",
                   m.training_time_notes()),
              Item("Chip-hours",
                   m.has_training_chip_hours() ? Grouped(m.training_chip_hours()) : ""),
              Item("Utilization (MFU)",
                   m.has_hardware_utilization_mfu()
                       ? Decimal(m.hardware_utilization_mfu() * 100, 1) + "%"
                       : "",
                   m.utilization_notes()),
              Item("Power draw",
                   m.has_training_power_draw_watts() ? Watts(m.training_power_draw_watts()) : ""),
              Item("Compute cost (2023 USD)", m.has_training_compute_cost_2023_usd()
                                                  ? Usd(m.training_compute_cost_2023_usd())
                                                  : ""),
              Item("Cloud vendor", Html(m.training_cloud_compute_vendor())),
              Item("Data centre", Html(m.training_data_center())))));
  const std::string code =
      m.training_code_accessibility() == common::v1::CODE_ACCESSIBILITY_UNSPECIFIED
          ? ""
          : Words(common::v1::CodeAccessibility_Name(m.training_code_accessibility()),
                  "CODE_ACCESSIBILITY_");
  absl::StrAppend(
      &html, Section("availability", "Availability",
                     "Whether you can get the weights and run the model yourself: only then do the "
                     "hardware figures apply.",
                     absl::StrCat(Item("Weights", OpenWeights(m) ? "Published — downloadable"
                                                                 : "Closed — provider access only"),
                                  Item("Model access", Html(AccessibilityText(m.accessibility())),
                                       m.accessibility_notes()),
                                  Item("Training code", Html(code)))));
  absl::StrAppend(
      &html,
      Section(
          "classification", "How it is classified",
          "Why the source dataset tracks this model, and how sure it is of the entry.",
          absl::StrCat(
              Item("Frontier model", YesNo(m.has_frontier_model(), m.frontier_model())),
              Item("Foundation model", YesNo(m.has_foundation_model(), m.foundation_model())),
              Item("Why it is tracked", List(m.notability_criteria()),
                   m.notability_criteria_notes()),
              Item("Record confidence",
                   m.confidence() == common::v1::CONFIDENCE_UNSPECIFIED
                       ? ""
                       : Html(Words(common::v1::Confidence_Name(m.confidence()), "CONFIDENCE_"))),
              Item("Citations",
                   m.has_citations() ? Grouped(static_cast<double>(m.citations())) : ""),
              Item("Benchmark data", "", m.benchmark_data()))));
  std::string updated;
  if (m.has_last_modified_time()) {
    const absl::CivilDay day = absl::ToCivilDay(
        absl::FromUnixSeconds(m.last_modified_time().seconds()), absl::UTCTimeZone());
    google::type::Date date;
    date.set_year(static_cast<int>(day.year()));
    date.set_month(day.month());
    date.set_day(day.day());
    updated = DateText(date);
  }
  absl::StrAppend(
      &html,
      Section("sources", "Sources", "Where the record comes from and when it last changed.",
              absl::StrCat(Item("Reference", Html(m.reference())), Item("Link", Links(m.link())),
                           Item("Archived", Links(m.archived_links())),
                           Item("Source", Html(m.provenance().source()), m.provenance().notes()),
                           Item("Source links", Links(absl::StrJoin(m.provenance().urls(), " "))),
                           Item("Last updated", Html(updated)),
                           Item("Record", absl::StrCat("<code>", Html(m.name()), "</code>")))));
  return html;
}

std::string Narrative(const Model& m, const estimator::v1::PlanInferenceResponse* plan,
                      const std::string& workload_text) {
  const std::string name = Html(m.display_name());
  google::type::Date month = m.publication_date();
  month.set_day(0);
  std::string who = absl::StrCat(name, " was published");
  if (!m.organizations().empty()) absl::StrAppend(&who, " by ", List(m.organizations()));
  if (!m.countries().empty()) absl::StrAppend(&who, " (", List(m.countries()), ")");
  if (!DateText(month).empty()) absl::StrAppend(&who, " in ", Html(DateText(month)));
  absl::StrAppend(&who, ".");
  if (!m.organization_categories().empty()) {
    absl::StrAppend(&who, " It comes out of ",
                    Html(absl::AsciiStrToLower(absl::StrJoin(m.organization_categories(), ", "))),
                    ".");
  }
  if (!m.domains().empty()) {
    absl::StrAppend(&who, " It works in ", List(m.domains()),
                    m.tasks().empty() ? "" : absl::StrCat(", recorded for ", List(m.tasks())), ".");
  }
  std::string run;
  if (!OpenWeights(m)) {
    run =
        "Its weights were not published, so none of the memory or card figures on this site "
        "apply to it: there is nothing to download and run.";
  } else if (plan != nullptr && plan->memory().available()) {
    run = absl::StrCat("Its weights are published, so the figures above apply: at ",
                       Html(workload_text), " it needs ",
                       Bytes(static_cast<double>(plan->memory().total_bytes())),
                       " of memory, most of it the weights themselves.");
  }
  std::string built;
  if (m.has_training_compute_flop()) {
    built = absl::StrCat(
        "Training took about ", Scientific(m.training_compute_flop()), " FLOP",
        m.training_hardware().empty() ? "" : absl::StrCat(", on ", List(m.training_hardware())),
        ". That is what making it cost; it says nothing about how fast it "
        "answers, which depends on memory bandwidth.");
  }
  if (!m.training_dataset_size_datapoints().empty()) {
    const bool language =
        std::find(m.domains().begin(), m.domains().end(), "Language") != m.domains().end();
    absl::StrAppend(&built, built.empty() ? "" : " ", "It was trained on about ",
                    Grouped(m.training_dataset_size_datapoints(0)),
                    language ? " tokens." : " data points.");
  }
  std::string html = absl::StrCat("<section id=\"meaning\"><h2>What the numbers mean</h2>",
                                  "<h3>What this model is</h3><p>", who, "</p>");
  if (!run.empty()) absl::StrAppend(&html, "<p>", run, "</p>");
  if (!built.empty())
    absl::StrAppend(&html, "<h3>What went into building it</h3><p>", built, "</p>");
  return html + "</section>";
}

std::string Answers(const Model& m, const estimator::v1::PlanInferenceResponse* plan,
                    const std::string& workload_text) {
  const std::string name = Html(m.display_name());
  std::string html = absl::StrCat("<section id=\"answers\"><h2>", name, ": common questions</h2>");
  auto qa = [&](const std::string& q, const std::string& a) {
    if (!a.empty()) absl::StrAppend(&html, "<h3>", q, "</h3><p>", a, "</p>");
  };
  const std::string org = List(m.organizations());
  const std::string date = Html(DateText(m.publication_date()));
  qa(absl::StrCat("Who created ", name, "?"),
     org.empty()
         ? ""
         : absl::StrCat(name, " comes from ", org, date.empty() ? "" : ", published ", date, "."));
  qa(absl::StrCat("When was ", name, " released?"),
     date.empty() ? ""
                  : absl::StrCat(name, " was published on ", date,
                                 ". Newer models of the same size often do more with the same "
                                 "memory."));
  qa(absl::StrCat("What is ", name, " used for?"),
     m.tasks().empty()
         ? ""
         : absl::StrCat("It is recorded under ", List(m.domains()), " for ", List(m.tasks()), "."));
  qa(absl::StrCat("How many parameters does ", name, " have?"),
     m.has_parameters()
         ? absl::StrCat(name, " has ", ShortCount(m.parameters()), " parameters (",
                        Grouped(m.parameters()),
                        "). Memory to run it grows with this figure: about 2 GB per billion "
                        "in 16-bit formats, half that in 8-bit.")
         : "The record gives no parameter count.");
  qa(absl::StrCat("How much compute was used to train ", name, "?"),
     m.has_training_compute_flop()
         ? absl::StrCat("About ", Scientific(m.training_compute_flop()),
                        " FLOP. That is the cost of building it, and says nothing about its "
                        "speed once trained.")
         : "The record gives no training compute.");
  qa(absl::StrCat("Is ", name, " open source?"),
     OpenWeights(m)
         ? absl::StrCat("Its weights are published (", Html(AccessibilityText(m.accessibility())),
                        "), so you can download and run it; check the licence terms.")
         : absl::StrCat("No. The weights of ", name,
                        " have not been published; it is reachable only through "
                        "its provider, if at all."));
  std::string gpu;
  if (!OpenWeights(m)) {
    gpu = absl::StrCat("None: with the weights unpublished, no card can run ", name, ".");
  } else if (plan != nullptr && !plan->plans().empty() && plan->plans(0).fits()) {
    const auto& best = plan->plans(0);
    gpu = absl::StrCat("At ", Html(workload_text), ", it needs ",
                       Bytes(static_cast<double>(plan->memory().total_bytes())),
                       " of memory; the best fit is ", best.cards(), " × <a href=\"",
                       Html(RecordPath(best.hardware())), "\">", Html(best.display_name()),
                       "</a>. The plan above lists every card.");
  } else {
    gpu =
        "No card in the catalog holds it at this workload; try a smaller context or a "
        "4-bit format.";
  }
  qa(absl::StrCat("What GPU do I need to run ", name, "?"), gpu);
  absl::StrAppend(&html, "</section>");
  return html;
}

}  // namespace modelatlas::web
