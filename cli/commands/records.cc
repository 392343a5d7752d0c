// The catalog's records: models and hardware list/get/create/update/delete,
// info and watch.
#include <fstream>
#include <iostream>
#include <sstream>
#include <type_traits>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/command.h"
#include "cli/enum_spellings.h"
#include "cli/output.h"
#include "google/protobuf/util/json_util.h"

ABSL_FLAG(int32_t, page_size, 200, "Records fetched per call when listing");
ABSL_FLAG(std::string, order_by, "", "List order, e.g. 'parameters desc, display_name'");
ABSL_FLAG(std::string, file, "", "JSON file with the record (protobuf JSON mapping), - = stdin");
ABSL_FLAG(std::string, update_mask, "",
          "Comma-separated fields to update; * = whole record; empty = fields set in --file");
ABSL_FLAG(std::string, etag, "", "Only write if the record's etag is still this");
ABSL_FLAG(int64_t, since, -1, "watch: start after this revision (-1 = from now)");

namespace modelatlas::cli {
namespace {

namespace catalog_v1 = catalog::v1;
namespace common_v1 = common::v1;

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

int ListModels(Session& session, const Arguments&) {
  std::vector<catalog_v1::ListModelsResponse> pages;
  grpc::Status status = ListAll<catalog_v1::ListModelsRequest>(
      [&](grpc::ClientContext* c, const auto& r, auto* out) {
        return session.catalog().ListModels(c, r, out);
      },
      &pages);
  if (!status.ok()) return session.CatalogFailed(status);
  catalog_v1::ListModelsResponse all;
  for (const auto& page : pages) all.mutable_models()->MergeFrom(page.models());
  if (session.json()) {
    all.set_catalog_revision(pages.back().catalog_revision());
    PrintJson(all);
    return EXIT_SUCCESS;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& model : all.models()) {
    const absl::string_view access = Accessibilities().Spelling(model.accessibility());
    rows.push_back({model.name(), model.display_name(),
                    model.has_parameters() ? HumanCount(model.parameters()) : "-",
                    Joined(model.domains(), ","), access.empty() ? "-" : std::string(access)});
  }
  PrintTable({"NAME", "DISPLAY NAME", "PARAMETERS", "DOMAIN", "ACCESSIBILITY"}, rows);
  return EXIT_SUCCESS;
}

int ListHardware(Session& session, const Arguments&) {
  std::vector<catalog_v1::ListHardwareResponse> pages;
  grpc::Status status = ListAll<catalog_v1::ListHardwareRequest>(
      [&](grpc::ClientContext* c, const auto& r, auto* out) {
        return session.catalog().ListHardware(c, r, out);
      },
      &pages);
  if (!status.ok()) return session.CatalogFailed(status);
  catalog_v1::ListHardwareResponse all;
  for (const auto& page : pages) all.mutable_hardware()->MergeFrom(page.hardware());
  if (session.json()) {
    all.set_catalog_revision(pages.back().catalog_revision());
    PrintJson(all);
    return EXIT_SUCCESS;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& hw : all.hardware()) {
    rows.push_back({hw.name(), hw.display_name(),
                    OptionalFixed(hw.has_memory_bytes(), hw.memory_bytes(), 1, 1073741824.0),
                    OptionalFixed(hw.has_memory_bandwidth_bytes_per_second(),
                                  hw.memory_bandwidth_bytes_per_second(), 0, 1e9),
                    OptionalFixed(hw.peak().has_tensor_fp16_bf16_flops(),
                                  hw.peak().tensor_fp16_bf16_flops(), 1, 1e12),
                    OptionalFixed(hw.has_tdp_watts(), hw.tdp_watts(), 0)});
  }
  PrintTable({"NAME", "DISPLAY NAME", "MEMORY (GiB)", "BANDWIDTH (GB/s)", "FP16/BF16 (TFLOP/s)",
              "TDP (W)"},
             rows);
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
  PrintRecord(info, session.json());
  return EXIT_SUCCESS;
}

// Reads --file into a record; prints the problem and returns false on failure.
bool ReadRecordFile(google::protobuf::Message* record) {
  const std::string path = absl::GetFlag(FLAGS_file);
  if (path.empty()) {
    std::cerr << "modelatlas: --file is required (a JSON record, - for stdin)\n";
    return false;
  }
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path);
    if (!in) {
      std::cerr << "modelatlas: cannot read " << path << "\n";
      return false;
    }
    text << in.rdbuf();
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(text.str(), record, options);
  if (!status.ok()) {
    std::cerr << "modelatlas: " << path << " is not a valid record: " << status.message() << "\n";
    return false;
  }
  return true;
}

// The RPCs of one kind of record.
template <typename Record>
struct Rpcs;
template <>
struct Rpcs<common_v1::Model> {
  using Delete = catalog_v1::DeleteModelRequest;
  using Create = catalog_v1::CreateModelRequest;
  using Update = catalog_v1::UpdateModelRequest;
  static constexpr auto kDelete = &catalog_v1::CatalogService::Stub::DeleteModel;
  static constexpr auto kCreate = &catalog_v1::CatalogService::Stub::CreateModel;
  static constexpr auto kUpdate = &catalog_v1::CatalogService::Stub::UpdateModel;
  static void Set(Create& r, const std::string& id, const common_v1::Model& record) {
    r.set_model_id(id);
    *r.mutable_model() = record;
  }
  static common_v1::Model* Mutable(Update& r) { return r.mutable_model(); }
};
template <>
struct Rpcs<common_v1::Hardware> {
  using Delete = catalog_v1::DeleteHardwareRequest;
  using Create = catalog_v1::CreateHardwareRequest;
  using Update = catalog_v1::UpdateHardwareRequest;
  static constexpr auto kDelete = &catalog_v1::CatalogService::Stub::DeleteHardware;
  static constexpr auto kCreate = &catalog_v1::CatalogService::Stub::CreateHardware;
  static constexpr auto kUpdate = &catalog_v1::CatalogService::Stub::UpdateHardware;
  static void Set(Create& r, const std::string& id, const common_v1::Hardware& record) {
    r.set_hardware_id(id);
    *r.mutable_hardware() = record;
  }
  static common_v1::Hardware* Mutable(Update& r) { return r.mutable_hardware(); }
};

template <typename Record>
int Delete(Session& session, const Arguments& args) {
  typename Rpcs<Record>::Delete request;
  request.set_name(args[0]);
  request.set_etag(absl::GetFlag(FLAGS_etag));
  google::protobuf::Empty empty;
  auto context = Session::NewContext();
  grpc::Status status = (session.catalog().*Rpcs<Record>::kDelete)(context.get(), request, &empty);
  if (!status.ok()) return session.CatalogFailed(status);
  std::cout << "deleted " << args[0] << "\n";
  return EXIT_SUCCESS;
}

int Written(Session& session, const grpc::Status& status, const google::protobuf::Message& written,
            const std::string& verb, const std::string& name, const std::string& etag) {
  if (!status.ok()) return session.CatalogFailed(status);
  if (session.json()) {
    PrintJson(written);
  } else {
    std::cout << verb << " " << name << " (etag " << etag << ")\n";
  }
  return EXIT_SUCCESS;
}

template <typename Record>
int Create(Session& session, const Arguments& args) {
  Record record;
  if (!ReadRecordFile(&record)) return kExitFailure;
  typename Rpcs<Record>::Create request;
  Rpcs<Record>::Set(request, args[0], record);
  Record written;
  auto context = Session::NewContext();
  grpc::Status status =
      (session.catalog().*Rpcs<Record>::kCreate)(context.get(), request, &written);
  return Written(session, status, written, "created", written.name(), written.etag());
}

template <typename Record>
int Update(Session& session, const Arguments& args) {
  typename Rpcs<Record>::Update request;
  Record* record = Rpcs<Record>::Mutable(request);
  if (!ReadRecordFile(record)) return kExitFailure;
  record->set_name(args[0]);
  if (!absl::GetFlag(FLAGS_etag).empty()) record->set_etag(absl::GetFlag(FLAGS_etag));
  for (absl::string_view path :
       absl::StrSplit(absl::GetFlag(FLAGS_update_mask), ',', absl::SkipWhitespace())) {
    request.mutable_update_mask()->add_paths(std::string(absl::StripAsciiWhitespace(path)));
  }
  Record written;
  auto context = Session::NewContext();
  grpc::Status status =
      (session.catalog().*Rpcs<Record>::kUpdate)(context.get(), request, &written);
  return Written(session, status, written, "updated", written.name(), written.etag());
}

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
  CommandGroup group{"Records (the catalog)", {}};
  auto& c = group.commands;
  c.push_back({{"models", "list"},
               "",
               0,
               0,
               "every model record",
               {"filter", "order_by", "page_size"},
               "models list --filter='parameters > 1e9' --order_by='parameters desc'",
               ListModels});
  c.push_back({{"models", "get"},
               "NAME",
               1,
               1,
               "one model: models/ID, its name (\"megatron bert\") or an alias",
               {},
               "models get \"Llama 3.1 8B\"",
               GetModel});
  c.push_back({{"models", "create"},
               "ID",
               1,
               1,
               "create a model from a JSON file",
               {"file"},
               "models create tiny --file=tiny.json",
               Create<common_v1::Model>});
  c.push_back({{"models", "update"},
               "NAME",
               1,
               1,
               "update the fields in --update_mask (or set in --file)",
               {"file", "update_mask", "etag"},
               "models update models/tiny --file=f.json --update_mask=parameters",
               Update<common_v1::Model>});
  c.push_back({{"models", "delete"},
               "NAME",
               1,
               1,
               "delete a model (--etag guards edits)",
               {"etag"},
               "models delete models/tiny --etag=r2",
               Delete<common_v1::Model>});
  c.push_back({{"hardware", "list"},
               "",
               0,
               0,
               "every hardware record",
               {"filter", "order_by", "page_size"},
               "hardware list --filter='memory_bytes > 40e9'",
               ListHardware});
  c.push_back({{"hardware", "get"},
               "NAME",
               1,
               1,
               "one hardware record: hardware/ID, name or alias",
               {},
               "hardware get \"NVIDIA H100\"",
               GetHardware});
  c.push_back({{"hardware", "create"},
               "ID",
               1,
               1,
               "create a hardware record from a JSON file",
               {"file"},
               "hardware create my-gpu --file=gpu.json",
               Create<common_v1::Hardware>});
  c.push_back({{"hardware", "update"},
               "NAME",
               1,
               1,
               "update the fields in --update_mask (or set in --file)",
               {"file", "update_mask", "etag"},
               "hardware update hardware/my-gpu --file=f.json",
               Update<common_v1::Hardware>});
  c.push_back({{"hardware", "delete"},
               "NAME",
               1,
               1,
               "delete a hardware record",
               {"etag"},
               "hardware delete hardware/my-gpu",
               Delete<common_v1::Hardware>});
  c.push_back({{"info"}, "", 0, 0, "catalog revision and record counts", {}, "info", Info});
  c.push_back({{"watch"},
               "",
               0,
               0,
               "stream every change to the catalog",
               {"since"},
               "watch --since=0",
               Watch});
  return group;
}

}  // namespace modelatlas::cli
