#include "web/model_page.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "web/model_record.h"
#include "web/text.h"

namespace modelatlas::web {
namespace {

using estimator::v1::PlanInferenceResponse;

std::string ComponentName(const std::string& component) {
  std::string s = absl::StrReplaceAll(component, {{"_", " "}});
  if (s == "kv cache") return "KV cache";
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

// The card with the least usable memory that holds the model alone, or null.
const estimator::v1::HardwarePlan* SmallestSingleCard(const PlanInferenceResponse& plan) {
  const estimator::v1::HardwarePlan* smallest = nullptr;
  for (const auto& p : plan.plans()) {
    if (p.fits_on_one_card() &&
        (smallest == nullptr || p.usable_bytes_per_card() < smallest->usable_bytes_per_card())) {
      smallest = &p;
    }
  }
  return smallest;
}

std::string Verdict(const common::v1::Model& m, const PlanInferenceResponse* plan,
                    const std::string& workload) {
  if (!OpenWeights(m)) {
    return "<div class=\"verdict closed\"><p class=\"big\">No estimate: weights not "
           "published</p><p>The weights of this model have not been released, so it cannot run "
           "on your own hardware at any size, whatever the card. Only its provider can run "
           "it.</p></div>";
  }
  if (plan == nullptr || !plan->memory().available()) {
    return absl::StrCat("<div class=\"verdict\"><p class=\"big\">No estimate</p><p>",
                        Html(plan == nullptr ? "The estimator did not answer."
                                             : plan->memory().no_estimate_reason()),
                        "</p></div>");
  }
  int fitting = 0;
  for (const auto& p : plan->plans()) fitting += p.fits() ? 1 : 0;
  std::string html = absl::StrCat(
      "<div class=\"verdict open\"><p class=\"big\">Needs ",
      Bytes(static_cast<double>(plan->memory().total_bytes())), " of memory to run</p>",
      "<p class=\"assumed\">Assumed workload: ", Html(workload), ".</p>");
  // The smallest single card that holds it, and the fastest plan (the
  // estimator ranks fewest cards, then fastest).
  const estimator::v1::HardwarePlan* smallest = SmallestSingleCard(*plan);
  auto card = [](const estimator::v1::HardwarePlan& p) {
    return absl::StrCat("<a href=\"", Html(RecordPath(p.hardware())), "\">", Html(p.display_name()),
                        "</a>");
  };
  if (smallest != nullptr) {
    absl::StrAppend(&html, "<p>Smallest card that holds it alone: <strong>", card(*smallest),
                    "</strong> (", Bytes(static_cast<double>(smallest->usable_bytes_per_card())),
                    " usable). Fastest: ", plan->plans(0).cards(), " × ", card(plan->plans(0)),
                    ". ", fitting, " of ", plan->plans_size(),
                    " cards on record run it, some several at a time.</p>");
  } else if (fitting > 0) {
    const auto& best = plan->plans(0);
    absl::StrAppend(&html, "<p>No single card holds it; the fewest: <strong>", best.cards(), " × ",
                    card(best), "</strong>. ", fitting, " of ", plan->plans_size(),
                    " cards on record run it, several at a time.</p>");
  } else {
    absl::StrAppend(&html, "<p>No card on record holds it at this workload.</p>");
  }
  return html + "</div>";
}

// Newer open-weight models of about the same size (half to one and a half
// times the parameters) that run on the same card, as many of them, at the
// same workload in no more memory per card: what the seed pages advise
// looking at. The estimator selects them with the plan
// (PlanInferenceRequest.newer_models, estimator-service/answers/
// newer_models.cc: the one selection the CLI's card shows too), on its
// reference card (the smallest that holds the model alone, else the fewest
// cards); most parameters first, then the name.
std::string NewerModels(const common::v1::Model& m, const PlanInferenceResponse& plan) {
  if (!plan.has_newer_models() || plan.newer_models().hardware().empty()) return "";
  const estimator::v1::NewerModels& newer = plan.newer_models();
  const auto& date = m.publication_date();
  std::string intro = absl::StrCat(
      m.domains().empty() ? "Open-weight models"
                          : absl::StrCat(Html(m.domains(0)), " models: open-weight models"),
      " published after ", Html(DateText(date)), " with ", ShortCount(m.parameters() * 0.5), " to ",
      ShortCount(m.parameters() * 1.5), " parameters that run on ", newer.cards(), " × ",
      Html(newer.display_name()), " at the same workload in no more memory per card (",
      Bytes(static_cast<double>(newer.required_bytes_per_card())), "), largest first.");
  if (newer.models().empty()) {
    return absl::StrCat("<h3>Newer models of the same size</h3><p class=\"why\">", intro,
                        " None on record.</p>");
  }
  std::string table =
      "<table><thead><tr><th>Model</th><th>Parameters</th><th>Needs per card</th>"
      "</tr></thead><tbody>";
  for (int i = 0; i < newer.models_size() && i < 8; ++i) {
    const estimator::v1::RunnableModel& row = newer.models(i);
    absl::StrAppend(&table, "<tr><td><a href=\"", Html(RecordPath(row.model())), "\">",
                    Html(row.display_name()), "</a></td><td>", ShortCount(row.parameters()),
                    "</td><td>", Bytes(static_cast<double>(row.required_bytes_per_card())),
                    row.kv_cache_not_counted()
                        ? " <span class=\"kv-not-counted\">(weights and overhead only: no "
                          "architecture on record, KV cache not counted)</span>"
                        : "",
                    "</td></tr>");
  }
  absl::StrAppend(&table, "</tbody></table>");
  return absl::StrCat("<h3>Newer models of the same size</h3><p class=\"why\">", intro, "</p>",
                      table);
}

std::string TrainingArithmetic(const Clients& clients, const common::v1::Model& m) {
  estimator::v1::EstimateTrainingComputeRequest request;
  request.set_model(m.name());
  estimator::v1::EstimateTrainingComputeResponse response;
  auto context = clients.Context();
  const grpc::Status status =
      clients.estimator->EstimateTrainingCompute(context.get(), request, &response);
  if (!status.ok() || response.figures().empty()) {
    return Section("arithmetic", "The training arithmetic, recomputed",
                   "The estimator's own figures from the record's inputs.", "",
                   Note(status.ok() ? "The record lacks the inputs to recompute anything."
                                    : "Not recomputed: " + status.error_message()));
  }
  std::string rows;
  for (const auto& f : response.figures()) {
    const std::string value = f.unit() == "FLOP"  ? Scientific(f.value()) + " FLOP"
                              : f.unit() == "W"   ? Watts(f.value())
                              : f.unit() == "USD" ? Usd(f.value())
                                                  : Grouped(f.value()) + " " + f.unit();
    absl::StrAppend(&rows, "<tr><th scope=\"row\">", Html(ComponentName(f.name())), "</th><td>",
                    Html(value), "</td><td><code>", Html(f.arithmetic()), "</code></td></tr>");
  }
  return Section(
      "arithmetic", "The training arithmetic, recomputed",
      "The estimator redoes the record's sums from its inputs: 6 FLOP per parameter "
      "per token, and chips × peak × time × utilization.",
      "",
      absl::StrCat("<table><thead><tr><th>Figure</th><th>Value</th><th>How</th></tr>"
                   "</thead><tbody>",
                   rows, "</tbody></table>",
                   Note(response.method().empty() ? "" : "Method: " + response.method())));
}

}  // namespace

std::string MemoryPicture(const PlanInferenceResponse& plan) {
  const auto& memory = plan.memory();
  const double total = static_cast<double>(memory.total_bytes());
  // The cards that say most: the largest one a single card of which cannot
  // hold the model, and the three smallest that can.
  std::vector<const estimator::v1::HardwarePlan*> by_memory;
  for (const auto& p : plan.plans()) by_memory.push_back(&p);
  std::sort(by_memory.begin(), by_memory.end(), [](const auto* a, const auto* b) {
    return a->usable_bytes_per_card() < b->usable_bytes_per_card();
  });
  std::vector<const estimator::v1::HardwarePlan*> cards;
  const estimator::v1::HardwarePlan* short_of = nullptr;
  for (const auto* p : by_memory) {
    if (static_cast<double>(p->usable_bytes_per_card()) < total) {
      short_of = p;
    } else if (cards.size() < 3) {
      cards.push_back(p);
    }
  }
  if (short_of != nullptr) cards.insert(cards.begin(), short_of);
  double scale = total;
  for (const auto* p : cards) {
    scale = std::max(scale, static_cast<double>(p->usable_bytes_per_card()));
  }
  if (scale <= 0) return "";
  scale *= 1.05;
  const int rows = memory.lines_size() + 1 + static_cast<int>(cards.size());
  const int left = 200, width = 360, row = 24, top = 6;
  const int height = top * 2 + rows * row;
  auto w = [&](double bytes) { return std::max(1, static_cast<int>(bytes / scale * width)); };
  std::string svg =
      absl::StrCat("<figure><svg class=\"memory\" viewBox=\"0 0 720 ", height,
                   "\" width=\"720\" height=\"", height,
                   "\" role=\"img\" aria-labelledby=\"memtitle\"><title id=\"memtitle\">Memory by "
                   "component against each card's usable memory</title>");
  static const char* const kColours[] = {"#3b6ea8", "#d08a2e", "#5a9e5a", "#8c6bb1", "#b0505a"};
  double stacked = 0;
  int r = 0;
  auto bar = [&](const std::string& label, double x0, double bytes, const std::string& fill,
                 const std::string& stroke, const std::string& value) {
    const int y = top + r++ * row;
    absl::StrAppend(&svg, "<text x=\"0\" y=\"", y + 15, "\">", Html(label), "</text><rect x=\"",
                    left + static_cast<int>(x0 / scale * width), "\" y=\"", y + 3, "\" width=\"",
                    w(bytes), "\" height=\"16\" fill=\"", fill, "\" stroke=\"", stroke,
                    "\"><title>", Html(label), ": ", Html(value), "</title></rect><text x=\"",
                    left + static_cast<int>((x0 + bytes) / scale * width) + 6, "\" y=\"", y + 15,
                    "\" class=\"value\">", Html(value), "</text>");
  };
  for (int i = 0; i < memory.lines_size(); ++i) {
    const double bytes = static_cast<double>(memory.lines(i).bytes());
    bar(ComponentName(memory.lines(i).component()), stacked, bytes, kColours[i % 5], "none",
        Bytes(bytes));
    stacked += bytes;
  }
  bar("Total needed", 0, total, "#333", "none", Bytes(total));
  for (const auto* p : cards) {
    std::string name = p->display_name();
    if (name.size() > 28) name = name.substr(0, 27) + "…";
    const double usable = static_cast<double>(p->usable_bytes_per_card());
    bar(name, 0, usable, usable >= total ? "#e3efe3" : "#f6e0e0",
        usable >= total ? "#2d7a3e" : "#a33",
        absl::StrCat(Bytes(usable), usable >= total ? " usable" : ": one card is too small"));
  }
  const int line_x = left + static_cast<int>(total / scale * width);
  absl::StrAppend(&svg, "<line x1=\"", line_x, "\" y1=\"", top, "\" x2=\"", line_x, "\" y2=\"",
                  height - top, "\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>");
  return svg +
         "</svg><figcaption>The coloured bars are the parts of the memory the model needs, "
         "end to end; the outlined bars are what a serving engine may use on one card; the "
         "dashed line is the total needed.</figcaption></figure>";
}

// After a figure resting on a bandwidth that is doubtful on its record
// (HardwarePlan.decode_bound_doubtful): a mark, the reason on hover.
std::string DoubtfulMark(const estimator::v1::HardwarePlan& p) {
  if (p.decode_bound_doubtful().empty()) return "";
  return absl::StrCat(" <span class=\"bandwidth-doubtful\" title=\"",
                      Html(p.decode_bound_doubtful()), "\">(doubtful)</span>");
}

std::string PlanTable(const PlanInferenceResponse& plan, const std::string& model,
                      const std::string& query, int rows) {
  std::string html =
      "<table class=\"plan\"><thead><tr><th>Card</th><th>Runs it?</th><th>Cards</th>"
      "<th>Needs per card</th><th>Usable per card</th><th>Headroom</th>"
      "<th>Decode (tokens/s)</th><th>First token</th><th>Cost per million tokens</th>"
      "</tr></thead><tbody>";
  int n = 0;
  for (const auto& p : plan.plans()) {
    if (n++ == rows) break;
    const std::string plan_link = absl::StrCat(
        "/plan?model=", UrlEncode(model), "&hardware=", UrlEncode(RecordId(p.hardware())), query);
    absl::StrAppend(
        &html, "<tr class=\"", p.fits() ? "fits" : "nofit", "\"><td><a href=\"",
        Html(RecordPath(p.hardware())), "\">", Html(p.display_name()), "</a></td><td>",
        p.fits() ? "Yes" : absl::StrCat("No", p.reason().empty() ? "" : ": ", Html(p.reason())),
        "</td><td>", p.fits() ? absl::StrCat(p.cards()) : "—", "</td><td>",
        Bytes(static_cast<double>(p.required_bytes_per_card())), "</td><td>",
        Bytes(static_cast<double>(p.usable_bytes_per_card())), "</td><td>",
        Bytes(static_cast<double>(p.headroom_bytes_per_card())), "</td><td>",
        !p.speed_not_modelled().empty() ? std::string("not modelled (on-chip SRAM)")
        : p.has_decode_tokens_per_second()
            ? absl::StrCat(Decimal(p.decode_tokens_per_second(), 1), DoubtfulMark(p))
            : std::string("—"),
        "</td><td>",
        p.has_time_to_first_token_seconds()
            ? Decimal(p.time_to_first_token_seconds() * 1000, 0) + " ms"
            : "—",
        "</td><td>",
        p.has_cost_usd_per_million_tokens()
            ? absl::StrCat(Usd(p.cost_usd_per_million_tokens()), DoubtfulMark(p))
            : "—",
        " <a class=\"detail\" href=\"", Html(plan_link), "\">details</a></td></tr>");
  }
  return html + "</tbody></table>";
}

Page ModelPage(const Clients& clients, const std::string& id, const Params& params) {
  catalog::v1::GetModelRequest get;
  get.set_name("models/" + id);
  common::v1::Model m;
  {
    auto context = clients.Context();
    const grpc::Status status = clients.catalog->GetModel(context.get(), get, &m);
    if (!status.ok()) return ErrorPage(status, "model", id);
  }
  Workload w = ReadWorkload(params);
  if (w.context == 0) {
    const int64_t max_context = m.architecture().max_context_length();
    w.context = max_context > 0 ? std::min<int64_t>(max_context, 4096) : 4096;
  }
  w.images_asked = m.architecture().num_cross_attention_layers() > 0;
  std::string workload = WorkloadText(w);
  const std::string query =
      absl::StrCat("&context=", w.context, "&batch=", w.batch, "&weights=", FormatName(w.weights),
                   w.images.has_value() ? absl::StrCat("&images=", *w.images) : "");
  estimator::v1::PlanInferenceResponse plan;
  bool planned = false;
  std::string plan_error;
  if (OpenWeights(m)) {
    estimator::v1::PlanInferenceRequest request;
    request.set_model(m.name());
    request.mutable_workload()->set_context_length_tokens(w.context);
    request.mutable_workload()->set_batch_size(w.batch);
    request.mutable_workload()->set_weight_format(w.weights);
    if (w.images.has_value()) request.mutable_workload()->set_images_per_sequence(*w.images);
    // The newer models of the same size come with the plan (one selection,
    // the estimator's).
    request.set_newer_models(true);
    auto context = clients.Context();
    const grpc::Status status = clients.estimator->PlanInference(context.get(), request, &plan);
    planned = status.ok();
    if (!planned) plan_error = status.error_message();
    // The format the estimator sized, named (the checkpoint's or the default).
    if (planned && plan.memory().has_workload()) {
      workload = WorkloadText(w, &plan.memory().workload());
    }
  }
  std::string body = absl::StrCat("<h1>", Html(m.display_name()), "</h1>");
  if (!m.organizations().empty() || m.has_publication_date()) {
    absl::StrAppend(&body, "<p class=\"sub\">", Html(absl::StrJoin(m.organizations(), ", ")),
                    m.has_publication_date() ? " · " : "", Html(DateText(m.publication_date())),
                    "</p>");
  }
  absl::StrAppend(&body, Verdict(m, planned ? &plan : nullptr, workload));
  if (!plan_error.empty()) absl::StrAppend(&body, Note("The estimator said: " + plan_error));
  if (OpenWeights(m)) {
    absl::StrAppend(&body, "<section id=\"run\"><h2>What it takes to run it</h2>",
                    "<p class=\"why\">Change the workload; the page re-plans and its address "
                    "keeps the choice.</p>",
                    WorkloadForm(RecordPath(m.name()), w, false, {}));
    if (planned && plan.memory().available()) {
      std::string lines;
      for (const auto& line : plan.memory().lines()) {
        absl::StrAppend(&lines, Item(ComponentName(line.component()),
                                     absl::StrCat(Bytes(static_cast<double>(line.bytes())),
                                                  " <code>", Html(line.arithmetic()), "</code>")));
      }
      absl::StrAppend(&body, MemoryPicture(plan), "<dl>", lines, "</dl>");
      for (const auto& warning : plan.memory().warnings()) absl::StrAppend(&body, Note(warning));
      absl::StrAppend(&body, "<h3>Which cards run it</h3>", PlanTable(plan, id, query, 20));
      absl::StrAppend(&body, NewerModels(m, plan));
    }
    absl::StrAppend(&body, "</section>");
  }
  absl::StrAppend(&body, RecordSections(m), TrainingArithmetic(clients, m),
                  Narrative(m, planned ? &plan : nullptr, workload),
                  Answers(m, planned ? &plan : nullptr, workload));
  absl::StrAppend(&body,
                  "<section id=\"other-direction\"><h2>The other direction</h2><p>This page "
                  "starts from the model. If you own a card, start from it instead and see "
                  "every model it runs: <a href=\"/search?kind=hardware\">all cards</a>",
                  planned && !plan.plans().empty()
                      ? absl::StrCat(", or <a href=\"", Html(RecordPath(plan.plans(0).hardware())),
                                     "\">", Html(plan.plans(0).display_name()), "</a>")
                      : "",
                  ".</p></section>");
  return {200, Layout(m.display_name(), body)};
}

}  // namespace modelatlas::web
