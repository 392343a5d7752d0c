// What every page shares: the clients of the two services, the query
// string, the layout around a page's body, definition lists, the workload
// form, and error pages (a 404 names what was asked for).
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"

namespace modelatlas::web {

using Params = std::multimap<std::string, std::string>;

struct Clients {
  std::unique_ptr<catalog::v1::CatalogService::Stub> catalog;
  std::unique_ptr<estimator::v1::EstimatorService::Stub> estimator;
  int timeout_ms = 10000;
  // A context with the call deadline.
  std::unique_ptr<grpc::ClientContext> Context() const;
};

struct Page {
  int status = 200;
  std::string html;
};

// The first value of `key`, or `fallback`.
std::string Param(const Params& params, const std::string& key, const std::string& fallback = "");

// The whole document: head (title, the CSS and JS assets), header with the
// search box, `body_html`, footer.
std::string Layout(const std::string& title, const std::string& body_html);

// <dt>label</dt><dd>value</dd>, nothing when value_html is empty.
std::string Item(const std::string& label, const std::string& value_html);
// The same with the figure's note (escaped) under its value; shown with "—"
// when only the note is on record.
std::string Item(const std::string& label, const std::string& value_html, const std::string& note);
// A section with a heading, a one-line purpose and a <dl> of items (none
// when all are empty).
std::string Section(const std::string& id, const std::string& title, const std::string& purpose,
                    const std::string& items_html, const std::string& extra_html = "");
// A note under a figure, escaped; nothing when empty.
std::string Note(const std::string& text);
// A link to an http(s) URL (escaped); other text is shown as text.
std::string ExternalLink(const std::string& url, const std::string& text = "");
// "/models/llama-2-7b" for "models/llama-2-7b".
std::string RecordPath(const std::string& resource_name);
// The id part of a resource name ("llama-2-7b").
std::string RecordId(const std::string& resource_name);

// The serving workload a page assumes, read from (and written back to) the
// query string: ?context=4096&batch=1&weights=bf16&cards=1.
struct Workload {
  int64_t context = 0;  // 0 = the page's default
  int32_t batch = 1;
  // Unspecified ("published" in the query string): the model's published
  // checkpoint format where its record names a quantized one, else BF16.
  estimator::v1::NumberFormat weights = estimator::v1::NUMBER_FORMAT_UNSPECIFIED;
  int32_t cards = 1;
  // Images per sequence in a cross-attention cache (Llama 3.2 Vision), 0 to
  // 1,000; nullopt = the estimator's default (1), which the page states.
  std::optional<int32_t> images;
  // The form asks for images (the model has cross-attention layers).
  bool images_asked = false;
  std::string problem;  // a parameter that could not be used, explained
};
Workload ReadWorkload(const Params& params);
// "bf16" for NUMBER_FORMAT_BF16; "published" for NUMBER_FORMAT_UNSPECIFIED.
std::string FormatName(estimator::v1::NumberFormat format);
// "4,096-token context, batch 1, weights BF16, KV cache BF16"
// `resolved`: the estimator's echo of the workload it sized, when there is
// one: an unspecified weight format is then named as resolved (with "the
// published checkpoint's format" when it came from the record).
std::string WorkloadText(const Workload& w,
                         const estimator::v1::ResolvedWorkload* resolved = nullptr);
// The GET form that changes the workload; `hidden` holds other state
// (name=value pairs kept in the URL).
std::string WorkloadForm(const std::string& action, const Workload& w, bool with_cards,
                         const std::map<std::string, std::string>& hidden);

// A page for a failed call: 404 naming `asked` for NOT_FOUND, 400 for bad
// input, 503 when a service is unreachable.
Page ErrorPage(const grpc::Status& status, const std::string& kind, const std::string& asked);

}  // namespace modelatlas::web
