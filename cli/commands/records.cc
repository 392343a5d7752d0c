// The catalog's records: models and hardware list and get, info and watch
// (create, update and delete are in record_writes.cc).
#include <algorithm>
#include <functional>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/command.h"
#include "cli/enum_spellings.h"
#include "cli/output.h"
#include "common/query/fields.h"
#include "common/status/suggest.h"

ABSL_FLAG(int32_t, page_size, 200, "Records fetched per call when listing");
ABSL_FLAG(std::string, order_by, "", "List order, e.g. 'parameters desc, display_name'");
ABSL_FLAG(int64_t, since, -1, "watch: start after this revision (-1 = from now)");
ABSL_FLAG(std::string, columns, "",
          "list: the columns to show, as field paths (`modelatlas fields models` lists them), "
          "e.g. 'name,parameters,training_compute_flop'; empty = the usual ones. Fields "
          "--order_by sorts by are always shown");

ABSL_FLAG(std::string, group_by, "",
          "summarize: the field whose values form the groups, e.g. organizations (a list "
          "counts a record in each of its values); empty = one group");
ABSL_FLAG(std::string, value_field, "",
          "summarize: a numeric field to sum, min and max per group, e.g. "
          "training_compute_flop");

namespace modelatlas::cli {
namespace {

namespace catalog_v1 = catalog::v1;
namespace common_v1 = common::v1;

// The columns a list shows: --columns (checked against the record's fields),
// else none (the usual table), then every field --order_by sorts by that is
// not shown yet, so a table always shows what it is sorted by.
absl::StatusOr<std::vector<std::string>> ListColumns(const google::protobuf::Descriptor* records) {
  const std::vector<std::string> known = query::QueryFieldPaths(records);
  std::vector<std::string> columns;
  for (absl::string_view column :
       absl::StrSplit(absl::GetFlag(FLAGS_columns), ',', absl::SkipWhitespace())) {
    const std::string path(absl::StripAsciiWhitespace(column));
    if (std::find(known.begin(), known.end(), path) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--columns: unknown field \"", path, "\"",
                                                     DidYouMean(path, known),
                                                     " (modelatlas fields lists them)"));
    }
    columns.push_back(path);
  }
  return columns;
}

// The fields of --order_by ("parameters desc, display_name").
std::vector<std::string> OrderByFields() {
  std::vector<std::string> fields;
  for (absl::string_view key :
       absl::StrSplit(absl::GetFlag(FLAGS_order_by), ',', absl::SkipWhitespace())) {
    std::vector<std::string> words =
        absl::StrSplit(absl::StripAsciiWhitespace(key), ' ', absl::SkipWhitespace());
    if (!words.empty()) fields.push_back(words[0]);
  }
  return fields;
}

// Prints `records` under `columns` (field paths).
template <typename Record>
void PrintColumns(const google::protobuf::RepeatedPtrField<Record>& records,
                  std::vector<std::string> columns) {
  std::vector<std::string> header;
  for (const std::string& column : columns) header.push_back(absl::AsciiStrToUpper(column));
  std::vector<std::vector<std::string>> rows;
  for (const Record& record : records) {
    std::vector<std::string> row;
    for (const std::string& column : columns) row.push_back(FieldPathText(record, column));
    rows.push_back(std::move(row));
  }
  PrintTable(header, rows, /*bounded=*/true);
}

// The --order_by fields not among `shown` (the usual columns' paths).
std::vector<std::string> SortColumnsNotShown(const std::vector<std::string>& shown) {
  std::vector<std::string> extra;
  for (const std::string& field : OrderByFields()) {
    if (std::find(shown.begin(), shown.end(), field) == shown.end()) extra.push_back(field);
  }
  return extra;
}

// Fetches every page of a List call.
template <typename Request, typename Response, typename Call>
grpc::Status ListAll(Call call, std::vector<Response>* pages) {
  Request request;
  request.set_page_size(absl::GetFlag(FLAGS_page_size));
  request.set_filter(absl::GetFlag(FLAGS_filter));
  request.set_order_by(absl::GetFlag(FLAGS_order_by));
  do {
    Response response;
    auto context = Session::NewContext();
    grpc::Status status = call(context.get(), request, &response);
    if (!status.ok()) return status;
    request.set_page_token(response.next_page_token());
    pages->push_back(std::move(response));
  } while (!request.page_token().empty());
  return grpc::Status::OK;
}

// A kind's usual table: its header, the field paths it shows, and a row.
template <typename Record>
struct UsualColumns {
  std::vector<std::string> header;
  std::vector<std::string> paths;
  std::function<std::vector<std::string>(const Record&)> row;
};

// `records` under --columns when given, else the usual table; either way
// followed by the --order_by fields not shown yet.
template <typename Record>
void PrintList(const google::protobuf::RepeatedPtrField<Record>& records,
               std::vector<std::string> columns, const UsualColumns<Record>& usual) {
  if (!columns.empty()) {
    for (const std::string& field : SortColumnsNotShown(columns)) columns.push_back(field);
    PrintColumns(records, columns);
    return;
  }
  const std::vector<std::string> extra = SortColumnsNotShown(usual.paths);
  std::vector<std::string> header = usual.header;
  for (const std::string& field : extra) header.push_back(absl::AsciiStrToUpper(field));
  std::vector<std::vector<std::string>> rows;
  for (const Record& record : records) {
    rows.push_back(usual.row(record));
    for (const std::string& field : extra) rows.back().push_back(FieldPathText(record, field));
  }
  PrintTable(header, rows, /*bounded=*/true);
}

int ListModels(Session& session, const Arguments&) {
  absl::StatusOr<std::vector<std::string>> columns = ListColumns(common_v1::Model::descriptor());
  if (!columns.ok()) return UsageError(columns.status().message());
  std::vector<catalog_v1::ListModelsResponse> pages;
  grpc::Status status = ListAll<catalog_v1::ListModelsRequest>(
      [&](grpc::ClientContext* c, const auto& r, auto* out) {
        return session.catalog().ListModels(c, r, out);
      },
      &pages);
  if (!status.ok()) return session.CatalogFailed(status);
  catalog_v1::ListModelsResponse all;
  for (const auto& page : pages) all.mutable_models()->MergeFrom(page.models());
  if (session.jsonl()) {  // one record per line
    JsonListPrinter lines(/*lines=*/true, std::cout);
    for (const auto& record : all.models()) lines.Add(record);
    return EXIT_SUCCESS;
  }
  if (session.json()) {
    all.set_catalog_revision(pages.back().catalog_revision());
    PrintJson(all);
    return EXIT_SUCCESS;
  }
  PrintList(all.models(), *std::move(columns),
            UsualColumns<common_v1::Model>{
                {"NAME", "DISPLAY NAME", "PARAMETERS", "DOMAIN", "ACCESSIBILITY"},
                {"name", "display_name", "parameters", "domains", "accessibility"},
                [](const common_v1::Model& model) {
                  const absl::string_view access =
                      Accessibilities().Spelling(model.accessibility());
                  return std::vector<std::string>{
                      model.name(), model.display_name(),
                      model.has_parameters() ? HumanCount(model.parameters()) : "-",
                      Joined(model.domains(), ","), access.empty() ? "-" : std::string(access)};
                }});
  return EXIT_SUCCESS;
}

int ListHardware(Session& session, const Arguments&) {
  absl::StatusOr<std::vector<std::string>> columns = ListColumns(common_v1::Hardware::descriptor());
  if (!columns.ok()) return UsageError(columns.status().message());
  std::vector<catalog_v1::ListHardwareResponse> pages;
  grpc::Status status = ListAll<catalog_v1::ListHardwareRequest>(
      [&](grpc::ClientContext* c, const auto& r, auto* out) {
        return session.catalog().ListHardware(c, r, out);
      },
      &pages);
  if (!status.ok()) return session.CatalogFailed(status);
  catalog_v1::ListHardwareResponse all;
  for (const auto& page : pages) all.mutable_hardware()->MergeFrom(page.hardware());
  if (session.jsonl()) {  // one record per line
    JsonListPrinter lines(/*lines=*/true, std::cout);
    for (const auto& record : all.hardware()) lines.Add(record);
    return EXIT_SUCCESS;
  }
  if (session.json()) {
    all.set_catalog_revision(pages.back().catalog_revision());
    PrintJson(all);
    return EXIT_SUCCESS;
  }
  PrintList(all.hardware(), *std::move(columns),
            UsualColumns<common_v1::Hardware>{
                {"NAME", "DISPLAY NAME", "MEMORY (GiB)", "BANDWIDTH (GB/s)", "FP16/BF16 (TFLOP/s)",
                 "TDP (W)"},
                {"name", "display_name", "memory_bytes", "memory_bandwidth_bytes_per_second",
                 "peak.tensor_fp16_bf16_flops", "tdp_watts"},
                [](const common_v1::Hardware& hw) {
                  return std::vector<std::string>{
                      hw.name(),
                      hw.display_name(),
                      OptionalFixed(hw.has_memory_bytes(), hw.memory_bytes(), 1, kBytesPerGib),
                      OptionalFixed(hw.has_memory_bandwidth_bytes_per_second(),
                                    hw.memory_bandwidth_bytes_per_second(), 0, 1e9),
                      OptionalFixed(hw.peak().has_tensor_fp16_bf16_flops(),
                                    hw.peak().tensor_fp16_bf16_flops(), 1, 1e12),
                      OptionalFixed(hw.has_tdp_watts(), hw.tdp_watts(), 0)};
                }});
  return EXIT_SUCCESS;
}

int GetModel(Session& session, const Arguments& args) {
  catalog_v1::GetModelRequest request;
  request.set_name(args[0]);
  common_v1::Model model;
  auto context = Session::NewContext();
  grpc::Status status = session.catalog().GetModel(context.get(), request, &model);
  if (!status.ok()) return session.CatalogFailed(status);
  PrintRecord(model, session.json());
  return EXIT_SUCCESS;
}

int GetHardware(Session& session, const Arguments& args) {
  catalog_v1::GetHardwareRequest request;
  request.set_name(args[0]);
  common_v1::Hardware hardware;
  auto context = Session::NewContext();
  grpc::Status status = session.catalog().GetHardware(context.get(), request, &hardware);
  if (!status.ok()) return session.CatalogFailed(status);
  PrintRecord(hardware, session.json());
  return EXIT_SUCCESS;
}

int Info(Session& session, const Arguments&) {
  catalog_v1::CatalogInfo info;
  auto context = Session::NewContext();
  grpc::Status status = session.catalog().GetCatalogInfo(context.get(), {}, &info);
  if (!status.ok()) return session.CatalogFailed(status);
  if (session.json()) {
    PrintRecord(info, true);
    return EXIT_SUCCESS;
  }
  catalog_v1::CatalogInfo counts = info;
  counts.clear_credits();
  PrintRecord(counts, false);
  for (const auto& credit : info.credits()) {
    std::cout << "data: " << credit.source() << " (" << credit.license() << "), " << credit.what()
              << ": " << absl::StrJoin(credit.urls(), ", ") << "\n";
  }
  return EXIT_SUCCESS;
}

// `models summarize`, `hardware summarize`: counts per group, and the
// value field's sum, minimum and maximum.
void PrintSummary(const catalog_v1::Summary& summary, absl::string_view records) {
  const std::string group_header =
      summary.group_by().empty() ? "GROUP" : absl::AsciiStrToUpper(summary.group_by());
  std::vector<std::string> header = {group_header, absl::AsciiStrToUpper(records)};
  const bool values = !summary.value_field().empty();
  if (values) {
    const std::string field = absl::AsciiStrToUpper(summary.value_field());
    for (const char* what : {"WITH ", "SUM ", "MIN ", "MAX "}) header.push_back(what + field);
  }
  std::vector<std::vector<std::string>> rows;
  for (const catalog_v1::SummaryGroup& group : summary.groups()) {
    std::vector<std::string> row = {
        group.value().empty() ? (summary.group_by().empty() ? "all" : "(not set)") : group.value(),
        absl::StrCat(group.record_count())};
    if (values) {
      row.push_back(absl::StrCat(group.value_count()));
      row.push_back(group.has_value_sum() ? Scientific(group.value_sum()) : "-");
      row.push_back(group.has_value_min() ? Scientific(group.value_min()) : "-");
      row.push_back(group.has_value_max() ? Scientific(group.value_max()) : "-");
    }
    rows.push_back(std::move(row));
  }
  PrintTable(header, rows, /*bounded=*/true);
  std::cout << summary.record_count() << " " << records << " matched in " << summary.groups_size()
            << " groups";
  if (!summary.group_by().empty()) {
    std::cout << " (a record with several " << summary.group_by() << " counts in each)";
  }
  std::cout << "; catalog revision " << summary.catalog_revision() << "\n";
}

template <typename Request, typename Call>
int Summarize(Session& session, absl::string_view records, Call call) {
  Request request;
  request.set_filter(absl::GetFlag(FLAGS_filter));
  request.set_group_by(absl::GetFlag(FLAGS_group_by));
  request.set_value_field(absl::GetFlag(FLAGS_value_field));
  catalog_v1::Summary summary;
  auto context = Session::NewContext();
  grpc::Status status = call(context.get(), request, &summary);
  if (!status.ok()) return session.CatalogFailed(status);
  if (session.json()) {
    PrintJson(summary);
  } else {
    PrintSummary(summary, records);
  }
  return EXIT_SUCCESS;
}

int SummarizeModels(Session& session, const Arguments&) {
  return Summarize<catalog_v1::SummarizeModelsRequest>(
      session, "models", [&](grpc::ClientContext* c, const auto& r, auto* out) {
        return session.catalog().SummarizeModels(c, r, out);
      });
}

int SummarizeHardware(Session& session, const Arguments&) {
  return Summarize<catalog_v1::SummarizeHardwareRequest>(
      session, "hardware", [&](grpc::ClientContext* c, const auto& r, auto* out) {
        return session.catalog().SummarizeHardware(c, r, out);
      });
}

// Reads --file into a record; prints the problem and returns false on failure.
int Watch(Session& session, const Arguments&) {
  catalog_v1::WatchRequest request;
  int64_t since = absl::GetFlag(FLAGS_since);
  if (since < 0) {
    catalog_v1::CatalogInfo info;
    auto info_context = Session::NewContext();
    grpc::Status status = session.catalog().GetCatalogInfo(info_context.get(), {}, &info);
    if (!status.ok()) return session.CatalogFailed(status);
    since = info.revision();
  }
  request.set_start_revision(since);
  // A stream without end: --json and --jsonl both print JSON Lines, one
  // compact change per line.
  if (session.json()) SetJsonLines(true);
  grpc::ClientContext context;  // no deadline: runs until interrupted
  auto reader = session.catalog().Watch(&context, request);
  catalog_v1::WatchResponse message;
  while (reader->Read(&message)) {
    for (const auto& change : message.changes()) {
      if (session.json()) {
        PrintJson(change);
      } else {
        std::cout << "r" << change.revision() << " " << ChangeTypes().Spelling(change.type()) << " "
                  << change.name() << "\n";
      }
    }
    std::cout.flush();
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return session.CatalogFailed(status);
  return EXIT_SUCCESS;
}

}  // namespace

CommandGroup RecordCommands() {
  CommandGroup group{"Records (the catalog)",
                     {
                         {{"models", "list"},
                          "",
                          "every model record",
                          {"filter", "order_by", "columns", "page_size"},
                          "models list --filter='parameters > 1e9' --order_by='parameters desc' "
                          "--columns=display_name,parameters,publication_date",
                          ListModels},
                         {{"models", "get"},
                          "NAME",
                          "one model: models/ID, its name (\"megatron bert\") or an alias",
                          {},
                          "models get \"Llama 3.1 8B\"",
                          GetModel},
                         {{"models", "summarize"},
                          "",
                          "count models per value of a field (and sum/min/max of a number)",
                          {"filter", "group_by", "value_field"},
                          "models summarize --filter='training_hardware:\"A100\"' "
                          "--group_by=organizations --value_field=training_compute_flop",
                          SummarizeModels},
                         {{"hardware", "list"},
                          "",
                          "every hardware record",
                          {"filter", "order_by", "columns", "page_size"},
                          "hardware list --filter='memory_bytes > 40e9'",
                          ListHardware},
                         {{"hardware", "get"},
                          "NAME",
                          "one hardware record: hardware/ID, name or alias",
                          {},
                          "hardware get \"NVIDIA H100\"",
                          GetHardware},
                         {{"hardware", "summarize"},
                          "",
                          "count hardware records per value of a field",
                          {"filter", "group_by", "value_field"},
                          "hardware summarize --group_by=manufacturer --value_field=memory_bytes",
                          SummarizeHardware},
                         {{"info"}, "", "catalog revision and record counts", {}, "info", Info},
                         {{"watch"},
                          "",
                          "stream every change to the catalog (--json: JSON Lines)",
                          {"since"},
                          "watch --since=0",
                          Watch},
                     }};
  for (Command& write : RecordWriteCommands()) group.commands.push_back(std::move(write));
  return group;
}

}  // namespace modelatlas::cli
