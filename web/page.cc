#include "web/page.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "web/text.h"

namespace modelatlas::web {

std::unique_ptr<grpc::ClientContext> Clients::Context() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  return context;
}

std::string Param(const Params& params, const std::string& key, const std::string& fallback) {
  auto it = params.find(key);
  return it == params.end() ? fallback : it->second;
}

std::string Layout(const std::string& title, const std::string& body_html) {
  return absl::StrCat(
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>",
      Html(title),
      " · ModelAtlas</title><link rel=\"stylesheet\" href=\"/static/site.css\">"
      "<link rel=\"icon\" href=\"/favicon.ico\" type=\"image/svg+xml\">"
      "<script src=\"/static/site.js\" defer></script></head><body>"
      "<header><a class=\"brand\" href=\"/\">ModelAtlas</a>"
      "<form class=\"find\" action=\"/search\" method=\"get\" role=\"search\">"
      "<input type=\"search\" name=\"q\" placeholder=\"Find a model\" aria-label=\"Find a model\">"
      "<button>Search</button></form>"
      "<nav><a href=\"/search?kind=hardware\">Hardware</a> <a href=\"/plan\">Plan</a></nav>"
      "</header><main>",
      body_html,
      "</main><footer>Records from the ModelAtlas catalog; estimates from its estimator. "
      "The same data as JSON: <a href=\"/v1/models\">/v1/models</a>.</footer></body></html>\n");
}

std::string Item(const std::string& label, const std::string& value_html) {
  if (value_html.empty()) return "";
  return absl::StrCat("<dt>", Html(label), "</dt><dd>", value_html, "</dd>");
}

std::string Item(const std::string& label, const std::string& value_html, const std::string& note) {
  if (value_html.empty() && note.empty()) return "";
  return absl::StrCat("<dt>", Html(label), "</dt><dd>", value_html.empty() ? "—" : value_html,
                      Note(note), "</dd>");
}

std::string Section(const std::string& id, const std::string& title, const std::string& purpose,
                    const std::string& items_html, const std::string& extra_html) {
  if (items_html.empty() && extra_html.empty()) return "";
  return absl::StrCat("<section id=\"", Html(id), "\"><h2>", Html(title), "</h2><p class=\"why\">",
                      Html(purpose), "</p>",
                      items_html.empty() ? "" : absl::StrCat("<dl>", items_html, "</dl>"),
                      extra_html, "</section>");
}

std::string Note(const std::string& text) {
  if (text.empty()) return "";
  return absl::StrCat("<p class=\"note\">", Html(text), "</p>");
}

std::string ExternalLink(const std::string& url, const std::string& text) {
  const std::string shown = text.empty() ? url : text;
  if (absl::StartsWithIgnoreCase(url, "https://") || absl::StartsWithIgnoreCase(url, "http://")) {
    return absl::StrCat("<a href=\"", Html(url), "\" rel=\"noopener noreferrer nofollow\">",
                        Html(shown), "</a>");
  }
  return Html(shown);
}

std::string RecordId(const std::string& resource_name) {
  const size_t slash = resource_name.find('/');
  return slash == std::string::npos ? resource_name : resource_name.substr(slash + 1);
}

std::string RecordPath(const std::string& resource_name) {
  const size_t slash = resource_name.find('/');
  if (slash == std::string::npos) return "/";
  return absl::StrCat("/", resource_name.substr(0, slash), "/",
                      UrlEncode(resource_name.substr(slash + 1)));
}

std::string FormatName(estimator::v1::NumberFormat format) {
  if (format == estimator::v1::NUMBER_FORMAT_UNSPECIFIED) return "published";
  absl::string_view name = estimator::v1::NumberFormat_Name(format);
  absl::ConsumePrefix(&name, "NUMBER_FORMAT_");
  return absl::AsciiStrToLower(name);
}

Workload ReadWorkload(const Params& params) {
  Workload w;
  const std::string context = Param(params, "context");
  if (!context.empty() &&
      (!absl::SimpleAtoi(context, &w.context) || w.context < 1 || w.context > 10'000'000)) {
    w.problem = "context must be a whole number of tokens from 1 to 10,000,000";
    w.context = 0;
  }
  const std::string batch = Param(params, "batch");
  if (!batch.empty() && (!absl::SimpleAtoi(batch, &w.batch) || w.batch < 1 || w.batch > 4096)) {
    w.problem = "batch must be a whole number from 1 to 4,096";
    w.batch = 1;
  }
  const std::string cards = Param(params, "cards");
  if (!cards.empty() && (!absl::SimpleAtoi(cards, &w.cards) || w.cards < 1 || w.cards > 1024 ||
                         (w.cards & (w.cards - 1)) != 0)) {
    w.problem = "cards must be a power of two from 1 to 1,024";
    w.cards = 1;
  }
  const std::string images = Param(params, "images");
  int32_t image_count = 0;
  if (!images.empty()) {
    if (absl::SimpleAtoi(images, &image_count) && image_count >= 0 && image_count <= 1000) {
      w.images = image_count;
    } else {
      w.problem = "images must be a whole number from 0 to 1,000";
    }
  }
  const std::string weights = Param(params, "weights");
  if (!weights.empty() && weights != "published") {
    estimator::v1::NumberFormat format;
    if (estimator::v1::NumberFormat_Parse("NUMBER_FORMAT_" + absl::AsciiStrToUpper(weights),
                                          &format) &&
        format != estimator::v1::NUMBER_FORMAT_UNSPECIFIED) {
      w.weights = format;
    } else {
      w.problem = "weights must be one of the listed formats";
    }
  }
  return w;
}

std::string WorkloadText(const Workload& w, const estimator::v1::ResolvedWorkload* resolved) {
  std::string weights;
  if (w.weights != estimator::v1::NUMBER_FORMAT_UNSPECIFIED) {
    weights = absl::AsciiStrToUpper(FormatName(w.weights));
  } else if (resolved != nullptr &&
             resolved->workload().weight_format() != estimator::v1::NUMBER_FORMAT_UNSPECIFIED) {
    weights = absl::StrCat(
        absl::AsciiStrToUpper(FormatName(resolved->workload().weight_format())),
        resolved->weight_format_from_checkpoint() ? " (the published checkpoint's format)"
        : resolved->checkpoint_quantization_not_sized()
            ? " (the default: the published checkpoint is quantized in a way not sized here, "
              "so its weights are likely smaller)"
            : " (the default: no quantized checkpoint on record)");
  } else {
    weights = "as published (the checkpoint's format where quantized, else BF16)";
  }
  // The images a cross-attention cache was sized for, as the estimator
  // echoed them (present only where they size one, or when asked).
  std::string images;
  if (resolved != nullptr && resolved->workload().has_images_per_sequence()) {
    const int32_t count = resolved->workload().images_per_sequence();
    images = absl::StrCat(", ", count, count == 1 ? " image" : " images", " per sequence",
                          resolved->images_per_sequence_defaulted() ? " (the default)" : "");
  }
  return absl::StrCat(Grouped(static_cast<double>(w.context)), "-token context", images, ", batch ",
                      Grouped(w.batch), ", weights ", weights, ", KV cache BF16");
}

std::string WorkloadForm(const std::string& action, const Workload& w, bool with_cards,
                         const std::map<std::string, std::string>& hidden) {
  std::string html =
      absl::StrCat("<form class=\"workload\" method=\"get\" action=\"", Html(action), "\">");
  for (const auto& [name, value] : hidden) {
    absl::StrAppend(&html, "<input type=\"hidden\" name=\"", Html(name), "\" value=\"", Html(value),
                    "\">");
  }
  absl::StrAppend(&html,
                  "<label>Context (tokens) <input name=\"context\" type=\"number\" min=\"1\" "
                  "value=\"",
                  w.context, "\"></label>",
                  "<label>Batch <input name=\"batch\" type=\"number\" min=\"1\" value=\"", w.batch,
                  "\"></label>");
  if (with_cards) {
    absl::StrAppend(&html, "<label>Cards <input name=\"cards\" type=\"number\" min=\"1\" value=\"",
                    w.cards, "\"></label>");
  }
  if (w.images_asked) {
    absl::StrAppend(&html,
                    "<label>Images per sequence <input name=\"images\" type=\"number\" "
                    "min=\"0\" max=\"1000\" value=\"",
                    w.images.value_or(1), "\"></label>");
  }
  absl::StrAppend(&html, "<label>Weights <select name=\"weights\">");
  const auto* formats = estimator::v1::NumberFormat_descriptor();
  for (int i = 0; i < formats->value_count(); ++i) {
    const auto format = static_cast<estimator::v1::NumberFormat>(formats->value(i)->number());
    const bool published = format == estimator::v1::NUMBER_FORMAT_UNSPECIFIED;
    absl::StrAppend(
        &html, "<option value=\"", FormatName(format), "\"", format == w.weights ? " selected" : "",
        ">", published ? "As published" : absl::AsciiStrToUpper(FormatName(format)), "</option>");
  }
  absl::StrAppend(&html, "</select></label><button>Update</button></form>");
  if (!w.problem.empty()) absl::StrAppend(&html, "<p class=\"problem\">", Html(w.problem), "</p>");
  return html;
}

Page ErrorPage(const grpc::Status& status, const std::string& kind, const std::string& asked) {
  Page page;
  std::string title;
  std::string text;
  if (status.error_code() == grpc::NOT_FOUND) {
    page.status = 404;
    title = absl::StrCat("No ", kind, " called “", asked, "”");
    text = absl::StrCat("Nothing on record answers to “", asked,
                        "”. Search the catalog for a similar name.");
  } else if (status.error_code() == grpc::INVALID_ARGUMENT ||
             status.error_code() == grpc::FAILED_PRECONDITION) {
    page.status = 400;
    title = "That request cannot be answered";
    text = status.error_message();
  } else {
    page.status = status.error_code() == grpc::DEADLINE_EXCEEDED ? 504 : 503;
    title = "A service did not answer";
    text = status.error_message();
  }
  page.html = Layout(title, absl::StrCat("<h1>", Html(title), "</h1><p>", Html(text),
                                         "</p><p><a href=\"/search?q=", UrlEncode(asked),
                                         "\">Search for “", Html(asked), "”</a></p>"));
  return page;
}

}  // namespace modelatlas::web
