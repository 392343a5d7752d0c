#include "web/catalog_pages.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "web/model_page.h"
#include "web/model_record.h"
#include "web/text.h"

namespace modelatlas::web {
namespace {

std::string Flops(bool has, double v) { return has ? Scientific(v) + " FLOP/s" : ""; }

int64_t DateKey(const google::type::Date& d) {
  return int64_t{d.year()} * 10000 + d.month() * 100 + d.day();
}

}  // namespace

Page HardwarePage(const Clients& clients, const std::string& id, const Params& params) {
  catalog::v1::GetHardwareRequest get;
  get.set_name("hardware/" + id);
  common::v1::Hardware h;
  {
    auto context = clients.Context();
    const grpc::Status status = clients.catalog->GetHardware(context.get(), get, &h);
    if (!status.ok()) return ErrorPage(status, "hardware", id);
  }
  Workload w = ReadWorkload(params);
  if (w.context == 0) w.context = 4096;
  const std::string domain = Param(params, "domain");
  const std::string order = Param(params, "order", "largest");
  std::string body = absl::StrCat("<h1>", Html(h.display_name()), "</h1>");
  const auto& p = h.peak();
  absl::StrAppend(
      &body,
      Section("record", "On record", "The card's figures as the catalog holds them.",
              absl::StrCat(
                  Item("Manufacturer", Html(h.manufacturer())),
                  Item("Also known as", Html(absl::StrJoin(h.aliases(), ", "))),
                  Item("Released", Html(DateText(h.release_date()))),
                  Item("Memory", h.has_memory_bytes() ? Bytes(h.memory_bytes()) : ""),
                  Item("Memory bandwidth", h.has_memory_bandwidth_bytes_per_second()
                                               ? Bytes(h.memory_bandwidth_bytes_per_second()) + "/s"
                                               : ""),
                  Item("Peak BF16/FP16 (tensor)",
                       Flops(p.has_tensor_fp16_bf16_flops(), p.tensor_fp16_bf16_flops())),
                  Item("Peak FP8", Flops(p.has_fp8_flops(), p.fp8_flops())),
                  Item("Peak FP32", Flops(p.has_fp32_flops(), p.fp32_flops())),
                  Item("Power (TDP)", h.has_tdp_watts() ? Watts(h.tdp_watts()) : ""),
                  Item("Launch price", h.has_release_price_usd() ? Usd(h.release_price_usd()) : ""),
                  Item("Cloud price", h.has_cloud_price_usd_per_chip_hour()
                                          ? Usd(h.cloud_price_usd_per_chip_hour()) + " per hour"
                                          : ""),
                  Item("Source", Html(h.provenance().source())),
                  Item("Record", absl::StrCat("<code>", Html(h.name()), "</code>"))),
              Note(h.provenance().notes())));
  estimator::v1::ListRunnableModelsRequest request;
  request.set_hardware(h.name());
  request.set_cards(w.cards);
  request.mutable_workload()->set_context_length_tokens(w.context);
  request.mutable_workload()->set_batch_size(w.batch);
  request.mutable_workload()->set_weight_format(w.weights);
  if (w.images.has_value()) request.mutable_workload()->set_images_per_sequence(*w.images);
  if (!domain.empty()) request.set_filter(absl::StrCat("domains:\"", FilterLiteral(domain), "\""));
  // The largest models that run first (the newest are sorted below).
  request.set_order(estimator::v1::RUNNABLE_ORDER_MOST_PARAMETERS);
  std::vector<estimator::v1::RunnableModel> rows;
  auto context = clients.Context();
  auto reader = clients.estimator->ListRunnableModels(context.get(), request);
  estimator::v1::ListRunnableModelsResponse chunk;
  std::string decode_bound_doubtful;
  while (reader->Read(&chunk)) {
    if (!chunk.decode_bound_doubtful().empty()) {
      decode_bound_doubtful = chunk.decode_bound_doubtful();
    }
    for (auto& r : *chunk.mutable_models()) rows.push_back(std::move(r));
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return ErrorPage(status, "hardware", id);
  std::map<std::string, google::type::Date> dates;
  if (order == "newest" && !rows.empty()) {
    catalog::v1::BatchGetModelsRequest batch;
    for (size_t i = 0; i < rows.size() && i < 1000; ++i) batch.add_names(rows[i].model());
    catalog::v1::BatchGetModelsResponse models;
    auto batch_context = clients.Context();
    if (clients.catalog->BatchGetModels(batch_context.get(), batch, &models).ok()) {
      for (const auto& m : models.models()) dates[m.name()] = m.publication_date();
    }
    std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
      return DateKey(dates[a.model()]) > DateKey(dates[b.model()]);
    });
  }
  std::string table;
  int kv_not_counted = 0;
  for (const auto& r : rows) {
    if (r.kv_cache_not_counted()) ++kv_not_counted;
    absl::StrAppend(
        &table, "<tr><td><a href=\"", Html(RecordPath(r.model())), "\">", Html(r.display_name()),
        "</a></td><td>", ShortCount(r.parameters()), "</td><td>", r.cards(), "</td><td>",
        Bytes(static_cast<double>(r.required_bytes_per_card())),
        r.kv_cache_not_counted()
            ? " <span class=\"kv-not-counted\">(weights and overhead only: no architecture on "
              "record, KV cache not counted)</span>"
            : "",
        r.weight_format_from_checkpoint()
            ? absl::StrCat(" <span class=\"as-published\">(weights ",
                           absl::AsciiStrToUpper(FormatName(r.weight_format())),
                           ", as published)</span>")
            : "",
        "</td><td>", Bytes(static_cast<double>(r.headroom_bytes_per_card())), "</td><td>",
        r.has_decode_tokens_per_second() ? Decimal(r.decode_tokens_per_second(), 1) : "—",
        "</td></tr>");
  }
  std::string filters =
      WorkloadForm(RecordPath(h.name()), w, true, {{"domain", domain}, {"order", order}});
  auto DomainLink = [&](const std::string& d) {
    return absl::StrCat("<a href=\"", Html(RecordPath(h.name())), "?order=", Html(UrlEncode(order)),
                        "&amp;domain=", Html(UrlEncode(d)), "&amp;context=", w.context,
                        "&amp;batch=", w.batch, "&amp;cards=", w.cards,
                        "&amp;weights=", FormatName(w.weights), "\">", d.empty() ? "any" : Html(d),
                        "</a>");
  };
  const std::string sort_links = absl::StrCat(
      "<p class=\"sort\">Sort: <a href=\"", Html(RecordPath(h.name())),
      "?order=largest&amp;domain=", Html(UrlEncode(domain)), "&amp;context=", w.context,
      "&amp;batch=", w.batch, "&amp;cards=", w.cards, "&amp;weights=", FormatName(w.weights),
      "\">largest first</a> · <a href=\"", Html(RecordPath(h.name())),
      "?order=newest&amp;domain=", Html(UrlEncode(domain)), "&amp;context=", w.context,
      "&amp;batch=", w.batch, "&amp;cards=", w.cards, "&amp;weights=", FormatName(w.weights),
      "\">newest first</a> · Domain: ", DomainLink("Language"), ", ", DomainLink("Vision"), ", ",
      DomainLink("Multimodal"), ", ", DomainLink(""), "</p>");
  absl::StrAppend(
      &body, "<section id=\"runs\"><h2>What it runs</h2><p class=\"assumed\">",
      Grouped(static_cast<double>(rows.size())), " models with published weights run on ", w.cards,
      " × ", Html(h.display_name()), " at ", Html(WorkloadText(w)),
      domain.empty() ? "" : absl::StrCat(", domain ", Html(domain)), ".",
      kv_not_counted > 0
          ? absl::StrCat(" ", kv_not_counted,
                         " of them have no architecture on record: their KV cache is not "
                         "counted, so they may not fit at this context.")
          : "",
      decode_bound_doubtful.empty() ? ""
                                    : absl::StrCat(" <span class=\"bandwidth-doubtful\">Decode: ",
                                                   Html(decode_bound_doubtful), ".</span>"),
      "</p>", filters, sort_links,
      "<table><thead><tr><th>Model</th><th>Parameters</th><th>Cards</th><th>Needs per card</th>"
      "<th>Headroom</th><th>Decode (tokens/s)</th></tr></thead><tbody>",
      table, "</tbody></table></section>",
      "<section><h2>The other direction</h2><p>Start from a model instead: "
      "<a href=\"/search\">search the models</a>.</p></section>");
  return {200, Layout(h.display_name(), body)};
}

Page PlanPage(const Clients& clients, const Params& params) {
  const std::string model = Param(params, "model");
  const std::string hardware = Param(params, "hardware");
  Workload w = ReadWorkload(params);
  if (w.context == 0) w.context = 4096;
  // The model is not known before the plan: images asked in the address
  // stay in the form (a model page links here with them).
  w.images_asked = w.images.has_value();
  std::string body = "<h1>Plan a model on your hardware</h1>";
  absl::StrAppend(&body, "<form class=\"workload\" method=\"get\" action=\"/plan\">",
                  "<label>Model <input name=\"model\" value=\"", Html(model), "\"></label>",
                  "<label>Hardware <input name=\"hardware\" value=\"", Html(hardware),
                  "\" placeholder=\"every card\"></label>",
                  "<input type=\"hidden\" name=\"context\" value=\"", w.context, "\">",
                  "<button>Plan</button></form>");
  if (model.empty()) return {200, Layout("Plan", body)};
  absl::StrAppend(&body,
                  WorkloadForm("/plan", w, false, {{"model", model}, {"hardware", hardware}}));
  estimator::v1::PlanInferenceRequest request;
  request.set_model(model.find('/') == std::string::npos ? "models/" + model : model);
  request.mutable_workload()->set_context_length_tokens(w.context);
  request.mutable_workload()->set_batch_size(w.batch);
  request.mutable_workload()->set_weight_format(w.weights);
  if (w.images.has_value()) request.mutable_workload()->set_images_per_sequence(*w.images);
  if (!hardware.empty()) request.add_hardware(hardware);
  estimator::v1::PlanInferenceResponse plan;
  auto context = clients.Context();
  grpc::Status status = clients.estimator->PlanInference(context.get(), request, &plan);
  if (status.error_code() == grpc::NOT_FOUND && model.find('/') == std::string::npos) {
    request.set_model(model);  // a display name
    auto retry = clients.Context();
    status = clients.estimator->PlanInference(retry.get(), request, &plan);
  }
  if (!status.ok()) {
    const bool hardware_missing = status.error_message().find("hardware") != std::string::npos;
    return ErrorPage(status, hardware_missing ? "hardware" : "model",
                     hardware_missing && !hardware.empty() ? hardware : model);
  }
  const auto& memory = plan.memory();
  absl::StrAppend(&body, "<h2><a href=\"", Html(RecordPath(memory.model())), "\">",
                  Html(memory.display_name()), "</a></h2><p class=\"assumed\">Assumed workload: ",
                  Html(WorkloadText(w, memory.has_workload() ? &memory.workload() : nullptr)),
                  ".</p>");
  if (!memory.available()) {
    absl::StrAppend(&body, "<div class=\"verdict closed\"><p class=\"big\">",
                    Html(memory.no_estimate_reason()), "</p></div>");
    return {200, Layout("Plan", body)};
  }
  std::string lines;
  for (const auto& line : memory.lines()) {
    absl::StrAppend(&lines, Item(line.component(),
                                 absl::StrCat(Bytes(static_cast<double>(line.bytes())), " <code>",
                                              Html(line.arithmetic()), "</code>")));
  }
  absl::StrAppend(&body, MemoryPicture(plan), "<dl>", lines, "</dl>",
                  PlanTable(plan, RecordId(memory.model()),
                            absl::StrCat("&context=", w.context, "&batch=", w.batch,
                                         "&weights=", FormatName(w.weights)),
                            1000));
  if (plan.plans_size() == 1) {
    absl::StrAppend(&body, "<h3>The arithmetic</h3><ul class=\"arithmetic\">");
    for (const auto& a : plan.plans(0).arithmetic()) {
      absl::StrAppend(&body, "<li><code>", Html(a), "</code></li>");
    }
    absl::StrAppend(&body, "</ul>");
  }
  return {200, Layout("Plan: " + memory.display_name(), body)};
}

Page SearchPage(const Clients& clients, const Params& params) {
  const std::string q = Param(params, "q");
  const std::string filter = Param(params, "filter");
  const std::string order_by = Param(params, "order_by");
  const std::string kind = Param(params, "kind", "models");
  const std::string token = Param(params, "page_token");
  std::string combined = q.empty() ? "" : absl::StrCat("display_name:\"", FilterLiteral(q), "\"");
  if (!filter.empty()) {
    combined = combined.empty() ? filter : absl::StrCat(combined, " AND (", filter, ")");
  }
  std::string body = absl::StrCat(
      "<h1>Search the catalog</h1><form class=\"search\" method=\"get\" action=\"/search\">"
      "<label>Name <input name=\"q\" value=\"",
      Html(q), "\"></label>", "<label>Filter <input name=\"filter\" value=\"", Html(filter),
      "\" placeholder='parameters &gt; 1e9 AND domains:\"Language\"'></label>",
      "<label>Order <input name=\"order_by\" value=\"", Html(order_by),
      "\" placeholder=\"parameters desc\"></label><label>Kind <select name=\"kind\">",
      "<option value=\"models\"", kind == "hardware" ? "" : " selected", ">Models</option>",
      "<option value=\"hardware\"", kind == "hardware" ? " selected" : "",
      ">Hardware</option></select></label><button>Search</button></form>");
  std::string rows, next;
  grpc::Status status;
  auto context = clients.Context();
  if (kind == "hardware") {
    catalog::v1::ListHardwareRequest request;
    request.set_filter(combined), request.set_order_by(order_by), request.set_page_token(token);
    request.set_page_size(100);
    catalog::v1::ListHardwareResponse response;
    status = clients.catalog->ListHardware(context.get(), request, &response);
    for (const auto& h : response.hardware()) {
      absl::StrAppend(&rows, "<tr><td><a href=\"", Html(RecordPath(h.name())), "\">",
                      Html(h.display_name()), "</a></td><td>", Html(h.manufacturer()), "</td><td>",
                      h.has_memory_bytes() ? Bytes(h.memory_bytes()) : "", "</td><td>",
                      Html(DateText(h.release_date())), "</td></tr>");
    }
    next = response.next_page_token();
  } else {
    catalog::v1::ListModelsRequest request;
    request.set_filter(combined), request.set_order_by(order_by), request.set_page_token(token);
    request.set_page_size(100);
    catalog::v1::ListModelsResponse response;
    status = clients.catalog->ListModels(context.get(), request, &response);
    for (const auto& m : response.models()) {
      absl::StrAppend(&rows, "<tr><td><a href=\"", Html(RecordPath(m.name())), "\">",
                      Html(m.display_name()), "</a></td><td>",
                      Html(absl::StrJoin(m.organizations(), ", ")), "</td><td>",
                      m.has_parameters() ? ShortCount(m.parameters()) : "", "</td><td>",
                      Html(DateText(m.publication_date())), "</td><td>",
                      OpenWeights(m) ? "Open weights" : "Closed", "</td></tr>");
    }
    next = response.next_page_token();
  }
  if (!status.ok()) {
    Page page = ErrorPage(status, kind == "hardware" ? "hardware" : "model", q);
    if (page.status == 404) page.status = 200;
    return page;
  }
  absl::StrAppend(&body, "<table><tbody>",
                  rows.empty() ? "<tr><td>Nothing matches.</td></tr>" : rows, "</tbody></table>");
  if (!next.empty()) {
    absl::StrAppend(&body, "<p><a href=\"/search?q=", Html(UrlEncode(q)),
                    "&amp;filter=", Html(UrlEncode(filter)),
                    "&amp;order_by=", Html(UrlEncode(order_by)),
                    "&amp;kind=", Html(UrlEncode(kind)), "&amp;page_token=", Html(UrlEncode(next)),
                    "\">Next page</a></p>");
  }
  return {200, Layout("Search", body)};
}

Page HomePage(const Clients& clients) {
  catalog::v1::ListModelsRequest request;
  request.set_filter("open_model_weights = true");
  request.set_order_by("parameters desc");
  request.set_page_size(1000);
  catalog::v1::ListModelsResponse response;
  auto context = clients.Context();
  const grpc::Status status = clients.catalog->ListModels(context.get(), request, &response);
  if (!status.ok()) return ErrorPage(status, "model", "");
  std::string rows;
  for (const auto& m : response.models()) {
    absl::StrAppend(&rows, "<li><a href=\"", Html(RecordPath(m.name())), "\">",
                    Html(m.display_name()), "</a> <span class=\"why\">",
                    m.has_parameters() ? ShortCount(m.parameters()) : "", "</span></li>");
  }
  return {200,
          Layout("What it takes to run an AI model",
                 absl::StrCat(
                     "<h1>What does it take to run it?</h1><p>Pick a model to see which "
                     "cards hold it, how fast and at what cost, with the arithmetic; or "
                     "start from a card you have on its <a href=\"/search?kind=hardware\">"
                     "hardware page</a>. Closed models are on record too: "
                     "<a href=\"/search\">search every model</a>.</p>"
                     "<h2>Models with published weights, largest first</h2><ul class=\"models\">",
                     rows, "</ul>"))};
}

Page NoSuchPage(const std::string& path) {
  return {404, Layout("Not found", absl::StrCat("<h1>Nothing at “", Html(path),
                                                "”</h1><p><a href=\"/search\">Search the "
                                                "catalog</a>.</p>"))};
}

}  // namespace modelatlas::web
