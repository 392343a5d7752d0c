// Writing the catalog's records: models and hardware create, update, delete.
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/command.h"
#include "cli/output.h"
#include "google/protobuf/util/json_util.h"

ABSL_FLAG(std::string, file, "", "JSON file with the record (protobuf JSON mapping), - = stdin");
ABSL_FLAG(std::string, update_mask, "",
          "Comma-separated fields to update; * = whole record; empty = fields set in --file");
ABSL_FLAG(std::string, etag, "", "Only write if the record's etag is still this");

namespace modelatlas::cli {
namespace {

namespace catalog_v1 = catalog::v1;
namespace common_v1 = common::v1;

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

// The three writes of one kind of record, with an example of each.
template <typename Record>
void AddWrites(absl::string_view kind, const absl::string_view (&examples)[3],
               std::vector<Command>* commands) {
  commands->push_back({{kind, "create"},
                       "ID",
                       "create a record from a JSON file (--file)",
                       {"file"},
                       examples[0],
                       Create<Record>});
  commands->push_back({{kind, "update"},
                       "NAME",
                       "update the fields in --update_mask (or set in --file)",
                       {"file", "update_mask", "etag"},
                       examples[1],
                       Update<Record>});
  commands->push_back({{kind, "delete"},
                       "NAME",
                       "delete a record (--etag guards against concurrent edits)",
                       {"etag"},
                       examples[2],
                       Delete<Record>});
}

}  // namespace

std::vector<Command> RecordWriteCommands() {
  std::vector<Command> commands;
  static constexpr absl::string_view kModels[] = {
      "models create tiny --file=tiny.json",
      "models update models/tiny --file=f.json --update_mask=parameters --etag=r2",
      "models delete models/tiny --etag=r3"};
  static constexpr absl::string_view kHardware[] = {"hardware create my-gpu --file=gpu.json",
                                                    "hardware update hardware/my-gpu --file=f.json",
                                                    "hardware delete hardware/my-gpu"};
  AddWrites<common_v1::Model>("models", kModels, &commands);
  AddWrites<common_v1::Hardware>("hardware", kHardware, &commands);
  for (Command& save : SaveCommands()) commands.push_back(std::move(save));
  return commands;
}

}  // namespace modelatlas::cli
