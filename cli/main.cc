// modelatlas: the command-line client of catalog-service and estimator-service.
//
//   modelatlas models list | models get NAME
//   modelatlas hardware list | hardware get NAME
//   modelatlas info
//   modelatlas estimate memory MODEL [--weights=bf16] [--kv_cache=bf16]
//                                    [--context=TOKENS] [--batch=N] [--hypothetical]
//
// Tables for people by default, --json for scripts. Exit codes: 0 success,
// 1 the call failed (the message names what), 2 the command line is wrong.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "cli/card.h"
#include "cli/output.h"
#include "cli/training.h"
#include "cli/transfer.h"
#include "common/server/channels.h"
#include "common/server/config.h"
#include "common/server/security.h"
#include "google/protobuf/util/json_util.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"

ABSL_FLAG(std::string, catalog, "localhost:50051", "catalog-service address (host:port)");
ABSL_FLAG(std::string, estimator, "localhost:50052", "estimator-service address (host:port)");
ABSL_FLAG(std::string, token_file, "",
          "File holding a bearer token for the catalog (the MODELATLAS_TOKEN environment "
          "variable works too)");
ABSL_FLAG(std::string, tls_ca_file, "", "PEM CA to verify the servers' certificates (TLS)");
ABSL_FLAG(std::string, tls_cert_file, "", "PEM client certificate (mutual TLS)");
ABSL_FLAG(std::string, tls_key_file, "", "PEM private key of --tls_cert_file");
ABSL_FLAG(bool, json, false, "Print JSON (protobuf's JSON mapping) instead of tables");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(10), "Deadline of each call");
ABSL_FLAG(int32_t, page_size, 200, "Records fetched per call when listing");
ABSL_FLAG(std::string, weights, "bf16", "Weight format: fp32, fp16, bf16, fp8, int8, int4");
ABSL_FLAG(std::string, kv_cache, "bf16", "KV-cache format: fp32, fp16, bf16, fp8, int8, int4");
ABSL_FLAG(int64_t, context, 0, "Tokens in the KV cache per sequence (0 = the model's maximum)");
ABSL_FLAG(int32_t, batch, 1, "Sequences served at once");
ABSL_FLAG(std::optional<int64_t>, overhead_bytes, std::nullopt,
          "Runtime overhead, bytes (default: the estimator's, 1 GiB)");
ABSL_FLAG(std::string, filter, "",
          "List filter (AIP-160), e.g. 'parameters > 1e9 AND domains:\"Language\"'");
ABSL_FLAG(std::string, order_by, "", "List order, e.g. 'parameters desc, display_name'");
ABSL_FLAG(std::string, file, "", "JSON file with the record (protobuf JSON mapping), - = stdin");
ABSL_FLAG(std::string, update_mask, "",
          "Comma-separated fields to update; * = whole record; empty = fields set in --file");
ABSL_FLAG(std::string, etag, "", "Only write if the record's etag is still this");
ABSL_FLAG(int64_t, since, -1, "watch: start after this revision (-1 = from now)");
ABSL_FLAG(std::string, hardware, "",
          "plan: comma-separated hardware names or aliases (empty = every catalog record)");
ABSL_FLAG(std::string, objective, "fewest-cards", "plan: fewest-cards, cheapest or fastest");
ABSL_FLAG(int64_t, prompt, 1000, "plan: prompt tokens for the time to first token");
ABSL_FLAG(int32_t, max_cards, 64, "plan: most cards to consider (a power of two)");
ABSL_FLAG(int32_t, cards, 1, "runnable: cards of the hardware (a power of two)");
ABSL_FLAG(int32_t, group_size, 0, "GPTQ/AWQ quantization group size (0 = 128)");
ABSL_FLAG(std::string, hf_config, "", "count: a Hugging Face config.json file instead of MODEL");
ABSL_FLAG(std::string, format, "",
          "import/export: epoch-models-csv, epoch-hardware-csv, hf-config, llm-analysis-gpu, "
          "gpu-poor or json (import: empty = detect; export: empty = json)");
ABSL_FLAG(bool, dry_run, false, "import: report what would change and write nothing");
ABSL_FLAG(bool, atomic, false, "import: the whole file in one transaction, or nothing");
ABSL_FLAG(std::string, model, "", "import of a config.json: the model whose architecture it sets");
ABSL_FLAG(std::string, output, "", "export: write to this file instead of stdout");
ABSL_FLAG(bool, hypothetical, false,
          "Estimate even when the weights are not published (the answer says so)");

namespace {

using modelatlas::BalancedChannelArguments;
using modelatlas::ChannelTarget;
using modelatlas::catalog::v1::CatalogService;
using modelatlas::estimator::v1::EstimatorService;
namespace cli = modelatlas::cli;
namespace common_v1 = modelatlas::common::v1;
namespace catalog_v1 = modelatlas::catalog::v1;
namespace estimator_v1 = modelatlas::estimator::v1;

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

constexpr char kUsage[] = R"(usage: modelatlas [flags] COMMAND

Commands (KIND is models or hardware):
  KIND list                   every record (--filter, --order_by)
  KIND get NAME               one record: models/ID, its name ("megatron bert") or an alias
  KIND create ID --file=F     create a record from a JSON file
  KIND update NAME --file=F   update the fields in --update_mask (or set in F)
  KIND delete NAME            delete a record (--etag to guard against concurrent edits)
  info                        catalog revision and record counts
  watch                       stream every change to the catalog (--since=REVISION)
  estimate memory MODEL       memory to run MODEL (--weights, --kv_cache,
                              --context, --batch, --overhead_bytes, --hypothetical)
  plan MODEL                  which hardware runs MODEL, how many cards, how fast, what it
                              costs (--hardware, --objective, --prompt, and the above)
  count MODEL                 parameter count with its breakdown (or --hf_config=FILE)
  runnable HARDWARE           every catalog model that runs on HARDWARE (--cards, --weights,
                              --context, --batch, --filter)
  card MODEL                  the model's page: every recorded field with its notes, then
                              the hardware it needs
  estimate compute [MODEL]    training compute, chip-hours, power, energy and cost, from the
                              record and its hardware (--steps, --tokens_per_step,
                              --dataset_tokens, --epochs, --chips, --hours, --chip_hours,
                              --hardware, --precision, --utilization, --price replace them)
  estimate training-memory MODEL   memory per device to train (--optimizer, --zero, --dp,
                              --tp, --pp, --ep, --sp, --sequence_length, --micro_batch,
                              --recompute, --offload_optimizer, --finetune=lora|qlora)
  plan training MODEL --hardware=NAME   the fewest devices that train MODEL, and how
  audit [MODEL]               recompute a record's figures from its inputs (--tolerance);
                              no MODEL audits the catalog (--filter, --disagreements_only)
  import FILE                 import Epoch AI CSVs, a config.json (--model), GPU spec JSON or
                              an export (--format, --dry_run, --atomic); prints the report
  export                      write the catalog as JSON or Epoch's CSV layout (--format,
                              --filter, --output)

Flags: --catalog=HOST:PORT --estimator=HOST:PORT --json --timeout=10s
Environment: MODELATLAS_CATALOG and MODELATLAS_ESTIMATOR set the addresses.
Run "modelatlas --help" for every flag.)";

int UsageError(const std::string& message) {
  std::cerr << "modelatlas: " << message << "\n\n" << kUsage << "\n";
  return kExitUsage;
}

std::unique_ptr<grpc::ClientContext> NewContext() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_timeout)));
  return context;
}

std::string Joined(const google::protobuf::RepeatedPtrField<std::string>& values) {
  return absl::StrJoin(values, ",");
}

std::string AccessibilityText(common_v1::Accessibility accessibility) {
  if (accessibility == common_v1::ACCESSIBILITY_UNSPECIFIED) return "-";
  std::string name = common_v1::Accessibility_Name(accessibility);
  return absl::AsciiStrToLower(name.substr(std::string("ACCESSIBILITY_").size()));
}

class Cli {
 public:
  Cli()
      : catalog_address_(absl::GetFlag(FLAGS_catalog)),
        estimator_address_(absl::GetFlag(FLAGS_estimator)),
        json_(absl::GetFlag(FLAGS_json)) {}

  int Run(const std::vector<std::string>& args) {
    if (args.empty()) return UsageError("no command given");
    const std::string& noun = args[0];
    const std::string verb = args.size() > 1 ? args[1] : "";
    if (noun == "models" && verb == "list" && args.size() == 2) return ListModels();
    if (noun == "models" && verb == "get" && args.size() == 3) return GetModel(args[2]);
    if (noun == "hardware" && verb == "list" && args.size() == 2) return ListHardware();
    if (noun == "hardware" && verb == "get" && args.size() == 3) return GetHardware(args[2]);
    if ((noun == "models" || noun == "hardware") && args.size() == 3 &&
        (verb == "create" || verb == "update" || verb == "delete")) {
      return noun == "models" ? Write<common_v1::Model>(verb, args[2])
                              : Write<common_v1::Hardware>(verb, args[2]);
    }
    if (noun == "info" && args.size() == 1) return Info();
    if (noun == "watch" && args.size() == 1) return Watch();
    if (noun == "estimate" && verb == "memory" && args.size() == 3) return EstimateMemory(args[2]);
    if (noun == "estimate" && verb == "compute" && args.size() <= 3) {
      return cli::EstimateCompute(estimator(), estimator_address_, args.size() == 3 ? args[2] : "",
                                  json_);
    }
    if (noun == "estimate" && verb == "training-memory" && args.size() == 3) {
      return cli::EstimateTrainingMemory(estimator(), estimator_address_, args[2], json_);
    }
    if (noun == "plan" && verb == "training" && args.size() == 3) {
      return cli::PlanTraining(estimator(), estimator_address_, args[2], json_);
    }
    if (noun == "audit" && args.size() <= 2) {
      return cli::Audit(estimator(), estimator_address_, args.size() == 2 ? args[1] : "", json_);
    }
    if (noun == "plan" && args.size() == 2) return Plan(args[1]);
    if (noun == "runnable" && args.size() == 2) return Runnable(args[1]);
    if (noun == "card" && args.size() == 2) return Card(args[1]);
    if (noun == "count" && args.size() <= 2) return Count(args.size() == 2 ? args[1] : "");
    if (noun == "import" && args.size() == 2) return Import(args[1]);
    if (noun == "export" && args.size() == 1) return Export();
    return UsageError(absl::StrCat("unknown command \"", absl::StrJoin(args, " "), "\""));
  }

 private:
  // A channel with the TLS files and token the flags give (exits on a bad file).
  static std::shared_ptr<grpc::Channel> Channel(const std::string& address) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        modelatlas::MakeChannelCredentials({absl::GetFlag(FLAGS_tls_cert_file),
                                            absl::GetFlag(FLAGS_tls_key_file),
                                            absl::GetFlag(FLAGS_tls_ca_file)});
    if (!credentials.ok()) {
      std::cerr << "modelatlas: " << credentials.status().message() << "\n";
      std::exit(kExitUsage);
    }
    std::string token;
    if (const char* env = std::getenv("MODELATLAS_TOKEN"); env != nullptr) token = env;
    if (!absl::GetFlag(FLAGS_token_file).empty()) {
      absl::StatusOr<std::string> from_file =
          modelatlas::ReadTokenFile(absl::GetFlag(FLAGS_token_file), "token_file");
      if (!from_file.ok()) {
        std::cerr << "modelatlas: " << from_file.status().message() << "\n";
        std::exit(kExitUsage);
      }
      token = *from_file;
    }
    std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
        interceptors;
    if (!token.empty()) interceptors.push_back(modelatlas::BearerTokenInterceptor(token));
    return grpc::experimental::CreateCustomChannelWithInterceptors(
        ChannelTarget(address), *credentials, BalancedChannelArguments(), std::move(interceptors));
  }

  CatalogService::Stub& catalog() {
    if (!catalog_stub_) {
      catalog_stub_ = CatalogService::NewStub(Channel(catalog_address_));
    }
    return *catalog_stub_;
  }

  EstimatorService::Stub& estimator() {
    if (!estimator_stub_) {
      estimator_stub_ = EstimatorService::NewStub(Channel(estimator_address_));
    }
    return *estimator_stub_;
  }

  int CatalogFailed(const grpc::Status& status) {
    return cli::CallFailed(status, "catalog-service", catalog_address_);
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
      auto context = NewContext();
      grpc::Status status = call(context.get(), request, &response);
      if (!status.ok()) return status;
      request.set_page_token(response.next_page_token());
      pages->push_back(std::move(response));
    } while (!request.page_token().empty());
    return grpc::Status::OK;
  }

  int ListModels() {
    std::vector<catalog_v1::ListModelsResponse> pages;
    grpc::Status status = ListAll<catalog_v1::ListModelsRequest>(
        [this](grpc::ClientContext* c, const catalog_v1::ListModelsRequest& r,
               catalog_v1::ListModelsResponse* out) { return catalog().ListModels(c, r, out); },
        &pages);
    if (!status.ok()) return CatalogFailed(status);
    std::vector<std::vector<std::string>> rows;
    catalog_v1::ListModelsResponse all;
    for (const auto& page : pages) {
      for (const auto& model : page.models()) {
        if (json_) {
          *all.add_models() = model;
          continue;
        }
        rows.push_back({model.name(), model.display_name(),
                        model.has_parameters() ? cli::HumanCount(model.parameters()) : "-",
                        Joined(model.domains()), AccessibilityText(model.accessibility())});
      }
    }
    if (json_) {
      all.set_catalog_revision(pages.back().catalog_revision());
      std::cout << cli::ToJson(all) << "\n";
    } else {
      cli::PrintTable({"NAME", "DISPLAY NAME", "PARAMETERS", "DOMAIN", "ACCESSIBILITY"}, rows);
    }
    return EXIT_SUCCESS;
  }

  int ListHardware() {
    std::vector<catalog_v1::ListHardwareResponse> pages;
    grpc::Status status = ListAll<catalog_v1::ListHardwareRequest>(
        [this](grpc::ClientContext* c, const catalog_v1::ListHardwareRequest& r,
               catalog_v1::ListHardwareResponse* out) { return catalog().ListHardware(c, r, out); },
        &pages);
    if (!status.ok()) return CatalogFailed(status);
    std::vector<std::vector<std::string>> rows;
    catalog_v1::ListHardwareResponse all;
    auto optional_figure = [](bool has, double value, double scale, const char* format) {
      return has ? absl::StrFormat(format, value / scale) : std::string("-");
    };
    for (const auto& page : pages) {
      for (const auto& hw : page.hardware()) {
        if (json_) {
          *all.add_hardware() = hw;
          continue;
        }
        rows.push_back(
            {hw.name(), hw.display_name(),
             optional_figure(hw.has_memory_bytes(), hw.memory_bytes(), 1073741824.0, "%.1f"),
             optional_figure(hw.has_memory_bandwidth_bytes_per_second(),
                             hw.memory_bandwidth_bytes_per_second(), 1e9, "%.0f"),
             optional_figure(hw.peak().has_tensor_fp16_bf16_flops(),
                             hw.peak().tensor_fp16_bf16_flops(), 1e12, "%.1f"),
             optional_figure(hw.has_tdp_watts(), hw.tdp_watts(), 1, "%.0f")});
      }
    }
    if (json_) {
      all.set_catalog_revision(pages.back().catalog_revision());
      std::cout << cli::ToJson(all) << "\n";
    } else {
      cli::PrintTable({"NAME", "DISPLAY NAME", "MEMORY (GiB)", "BANDWIDTH (GB/s)",
                       "FP16/BF16 (TFLOP/s)", "TDP (W)"},
                      rows);
    }
    return EXIT_SUCCESS;
  }

  int GetModel(const std::string& name) {
    catalog_v1::GetModelRequest request;
    request.set_name(name);
    common_v1::Model model;
    auto context = NewContext();
    grpc::Status status = catalog().GetModel(context.get(), request, &model);
    if (!status.ok()) return CatalogFailed(status);
    PrintRecord(model);
    return EXIT_SUCCESS;
  }

  int GetHardware(const std::string& name) {
    catalog_v1::GetHardwareRequest request;
    request.set_name(name);
    common_v1::Hardware hardware;
    auto context = NewContext();
    grpc::Status status = catalog().GetHardware(context.get(), request, &hardware);
    if (!status.ok()) return CatalogFailed(status);
    PrintRecord(hardware);
    return EXIT_SUCCESS;
  }

  int Info() {
    catalog_v1::CatalogInfo info;
    auto context = NewContext();
    grpc::Status status = catalog().GetCatalogInfo(context.get(), {}, &info);
    if (!status.ok()) return CatalogFailed(status);
    PrintRecord(info);
    return EXIT_SUCCESS;
  }

  void PrintRecord(const google::protobuf::Message& message) {
    if (json_) {
      std::cout << cli::ToJson(message) << "\n";
    } else {
      cli::PrintFields(message);
    }
  }

  // Reads --file into a record; prints the problem and returns false on failure.
  template <typename Record>
  bool ReadRecordFile(Record* record) {
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

  // create / update / delete of a model or hardware record.
  template <typename Record>
  int Write(const std::string& verb, const std::string& name) {
    constexpr bool kModel = std::is_same_v<Record, common_v1::Model>;
    auto context = NewContext();
    grpc::Status status;
    Record written;
    if (verb == "delete") {
      google::protobuf::Empty empty;
      if constexpr (kModel) {
        catalog_v1::DeleteModelRequest request;
        request.set_name(name);
        request.set_etag(absl::GetFlag(FLAGS_etag));
        status = catalog().DeleteModel(context.get(), request, &empty);
      } else {
        catalog_v1::DeleteHardwareRequest request;
        request.set_name(name);
        request.set_etag(absl::GetFlag(FLAGS_etag));
        status = catalog().DeleteHardware(context.get(), request, &empty);
      }
      if (!status.ok()) return CatalogFailed(status);
      std::cout << "deleted " << name << "\n";
      return EXIT_SUCCESS;
    }
    Record record;
    if (!ReadRecordFile(&record)) return kExitFailure;
    if (verb == "create") {
      if constexpr (kModel) {
        catalog_v1::CreateModelRequest request;
        request.set_model_id(name);
        *request.mutable_model() = record;
        status = catalog().CreateModel(context.get(), request, &written);
      } else {
        catalog_v1::CreateHardwareRequest request;
        request.set_hardware_id(name);
        *request.mutable_hardware() = record;
        status = catalog().CreateHardware(context.get(), request, &written);
      }
    } else {
      record.set_name(name);
      if (!absl::GetFlag(FLAGS_etag).empty()) record.set_etag(absl::GetFlag(FLAGS_etag));
      google::protobuf::FieldMask mask;
      for (absl::string_view path :
           absl::StrSplit(absl::GetFlag(FLAGS_update_mask), ',', absl::SkipWhitespace())) {
        mask.add_paths(std::string(absl::StripAsciiWhitespace(path)));
      }
      if constexpr (kModel) {
        catalog_v1::UpdateModelRequest request;
        *request.mutable_model() = record;
        *request.mutable_update_mask() = mask;
        status = catalog().UpdateModel(context.get(), request, &written);
      } else {
        catalog_v1::UpdateHardwareRequest request;
        *request.mutable_hardware() = record;
        *request.mutable_update_mask() = mask;
        status = catalog().UpdateHardware(context.get(), request, &written);
      }
    }
    if (!status.ok()) return CatalogFailed(status);
    if (json_) {
      std::cout << cli::ToJson(written) << "\n";
    } else {
      std::cout << (verb == "create" ? "created " : "updated ") << written.name() << " (etag "
                << written.etag() << ")\n";
    }
    return EXIT_SUCCESS;
  }

  int Watch() {
    catalog_v1::WatchRequest request;
    int64_t since = absl::GetFlag(FLAGS_since);
    if (since < 0) {
      catalog_v1::CatalogInfo info;
      auto info_context = NewContext();
      grpc::Status status = catalog().GetCatalogInfo(info_context.get(), {}, &info);
      if (!status.ok()) return CatalogFailed(status);
      since = info.revision();
    }
    request.set_start_revision(since);
    grpc::ClientContext context;  // no deadline: runs until interrupted
    auto reader = catalog().Watch(&context, request);
    catalog_v1::WatchResponse message;
    while (reader->Read(&message)) {
      for (const auto& change : message.changes()) {
        if (json_) {
          std::cout << cli::ToJson(change) << "\n";
        } else {
          std::string type = catalog_v1::ChangeType_Name(change.type());
          std::cout << "r" << change.revision() << " "
                    << absl::AsciiStrToLower(type.substr(std::string("CHANGE_TYPE_").size())) << " "
                    << change.name() << "\n";
        }
      }
      std::cout.flush();
    }
    grpc::Status status = reader->Finish();
    if (!status.ok()) return CatalogFailed(status);
    return EXIT_SUCCESS;
  }

  static std::optional<estimator_v1::NumberFormat> ParseFormat(const std::string& text) {
    std::string upper = "NUMBER_FORMAT_" + absl::AsciiStrToUpper(text);
    for (char& c : upper) {
      if (c == '-') c = '_';  // "gguf-q4_k_m" -> GGUF_Q4_K_M
    }
    estimator_v1::NumberFormat format;
    if (!estimator_v1::NumberFormat_Parse(upper, &format) ||
        format == estimator_v1::NUMBER_FORMAT_UNSPECIFIED) {
      return std::nullopt;
    }
    return format;
  }

  // The workload flags, shared by `estimate memory` and `plan`; false on a bad flag.
  bool BuildWorkload(const std::string& model,
                     estimator_v1::EstimateInferenceMemoryRequest* request, int* exit_code) {
    request->set_model(model);
    const auto weights = ParseFormat(absl::GetFlag(FLAGS_weights));
    if (!weights) {
      *exit_code = UsageError(
          "--weights must be fp32, fp16, bf16, fp8, int8, int4, gptq-int4, awq-int4, "
          "gptq-int8, nf4, nf4-double-quant, gguf-q2_k, gguf-q3_k, gguf-q4_0, gguf-q4_k, "
          "gguf-q5_k, gguf-q6_k, gguf-q8_0, gguf-q3_k_m, gguf-q4_k_m or gguf-q5_k_m");
      return false;
    }
    const auto kv_cache = ParseFormat(absl::GetFlag(FLAGS_kv_cache));
    if (!kv_cache) {
      *exit_code = UsageError("--kv_cache must be fp32, fp16, bf16, fp8, int8 or int4");
      return false;
    }
    request->set_weight_format(*weights);
    request->set_kv_cache_format(*kv_cache);
    request->set_context_length_tokens(absl::GetFlag(FLAGS_context));
    request->set_batch_size(absl::GetFlag(FLAGS_batch));
    request->set_quantization_group_size(absl::GetFlag(FLAGS_group_size));
    if (auto overhead = absl::GetFlag(FLAGS_overhead_bytes)) request->set_overhead_bytes(*overhead);
    request->set_hypothetical(absl::GetFlag(FLAGS_hypothetical));
    return true;
  }

  int Plan(const std::string& model) {
    estimator_v1::PlanInferenceRequest request;
    int exit_code = 0;
    if (!BuildWorkload(model, request.mutable_workload(), &exit_code)) return exit_code;
    for (absl::string_view name :
         absl::StrSplit(absl::GetFlag(FLAGS_hardware), ',', absl::SkipWhitespace())) {
      request.add_hardware(std::string(absl::StripAsciiWhitespace(name)));
    }
    const std::string objective = absl::GetFlag(FLAGS_objective);
    if (objective == "cheapest") {
      request.set_objective(estimator_v1::PLAN_OBJECTIVE_CHEAPEST);
    } else if (objective == "fastest") {
      request.set_objective(estimator_v1::PLAN_OBJECTIVE_FASTEST);
    } else if (objective == "fewest-cards") {
      request.set_objective(estimator_v1::PLAN_OBJECTIVE_FEWEST_CARDS);
    } else {
      return UsageError("--objective must be fewest-cards, cheapest or fastest");
    }
    request.set_prompt_tokens(absl::GetFlag(FLAGS_prompt));
    request.set_max_cards(absl::GetFlag(FLAGS_max_cards));
    estimator_v1::PlanInferenceResponse response;
    auto context = NewContext();
    grpc::Status status = estimator().PlanInference(context.get(), request, &response);
    if (!status.ok()) return cli::CallFailed(status, "estimator-service", estimator_address_);
    if (json_) {
      std::cout << cli::ToJson(response) << "\n";
      return EXIT_SUCCESS;
    }
    const auto& memory = response.memory();
    std::cout << memory.display_name() << ": " << absl::StrFormat("%.2f", memory.total_gib())
              << " GiB to run (" << memory.total_bytes() << " bytes)\n";
    if (!memory.available()) {
      std::cout << memory.no_estimate_reason() << "\n";
      return EXIT_SUCCESS;
    }
    auto optional = [](bool has, double value, const char* format) {
      return has ? absl::StrFormat(format, value) : std::string("-");
    };
    std::vector<std::vector<std::string>> rows;
    for (const auto& plan : response.plans()) {
      rows.push_back(
          {plan.hardware(), plan.fits() ? absl::StrCat(plan.cards()) : "no fit",
           absl::StrFormat("%.1f", plan.required_bytes_per_card() / 1073741824.0),
           absl::StrFormat("%.1f", plan.headroom_bytes_per_card() / 1073741824.0),
           optional(plan.has_decode_tokens_per_second(), plan.decode_tokens_per_second(), "%.0f"),
           optional(plan.has_prefill_tokens_per_second(), plan.prefill_tokens_per_second(), "%.0f"),
           optional(plan.has_time_to_first_token_seconds(), plan.time_to_first_token_seconds(),
                    "%.3f"),
           optional(plan.has_cost_usd_per_million_tokens(), plan.cost_usd_per_million_tokens(),
                    "%.2f")});
    }
    cli::PrintTable({"HARDWARE", "CARDS", "GiB/CARD", "HEADROOM GiB", "DECODE tok/s",
                     "PREFILL tok/s", "TTFT s", "$/M tokens"},
                    rows);
    std::cout << "(bounds: decode from memory bandwidth, prefill from peak compute x 0.5; "
                 "--json shows the arithmetic)\n";
    return EXIT_SUCCESS;
  }

  int Runnable(const std::string& hardware) {
    estimator_v1::EstimateInferenceMemoryRequest workload;
    int exit_code = 0;
    if (!BuildWorkload("", &workload, &exit_code)) return exit_code;
    estimator_v1::ListRunnableModelsRequest request;
    request.set_hardware(hardware);
    request.set_cards(absl::GetFlag(FLAGS_cards));
    request.set_weight_format(workload.weight_format());
    request.set_kv_cache_format(workload.kv_cache_format());
    request.set_context_length_tokens(workload.context_length_tokens());
    request.set_batch_size(workload.batch_size());
    request.set_filter(absl::GetFlag(FLAGS_filter));
    request.set_hypothetical(workload.hypothetical());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_timeout)));
    auto reader = estimator().ListRunnableModels(&context, request);
    estimator_v1::ListRunnableModelsResponse message;
    std::vector<std::vector<std::string>> rows;
    while (reader->Read(&message)) {
      for (const estimator_v1::RunnableModel& model : message.models()) {
        if (json_) {
          std::cout << cli::ToJson(model) << "\n";
          continue;
        }
        rows.push_back({model.model(), cli::HumanCount(model.parameters()),
                        absl::StrCat(model.cards()),
                        absl::StrFormat("%.1f", model.headroom_bytes_per_card() / 1073741824.0),
                        model.has_decode_tokens_per_second()
                            ? absl::StrFormat("%.0f", model.decode_tokens_per_second())
                            : "-"});
      }
    }
    grpc::Status status = reader->Finish();
    if (!status.ok()) return cli::CallFailed(status, "estimator-service", estimator_address_);
    if (!json_) {
      cli::PrintTable({"MODEL", "PARAMETERS", "CARDS", "HEADROOM GiB", "DECODE tok/s"}, rows);
      std::cout << rows.size() << " models run on " << hardware << "\n";
    }
    return EXIT_SUCCESS;
  }

  int Card(const std::string& name) {
    catalog_v1::GetModelRequest get;
    get.set_name(name);
    common_v1::Model model;
    {
      auto context = NewContext();
      grpc::Status status = catalog().GetModel(context.get(), get, &model);
      if (!status.ok()) return CatalogFailed(status);
    }
    estimator_v1::PlanInferenceRequest request;
    int exit_code = 0;
    if (!BuildWorkload(model.name(), request.mutable_workload(), &exit_code)) return exit_code;
    if (request.workload().context_length_tokens() == 0) {
      request.mutable_workload()->set_context_length_tokens(4096);
    }
    estimator_v1::PlanInferenceResponse plan;
    auto context = NewContext();
    grpc::Status status = estimator().PlanInference(context.get(), request, &plan);
    const bool planned = status.ok();
    if (!planned && status.error_code() != grpc::StatusCode::FAILED_PRECONDITION) {
      return cli::CallFailed(status, "estimator-service", estimator_address_);
    }
    cli::PrintCard(model, planned ? &plan : nullptr, std::cout);
    return EXIT_SUCCESS;
  }

  int Count(const std::string& model) {
    estimator_v1::CountParametersRequest request;
    const std::string path = absl::GetFlag(FLAGS_hf_config);
    if (!path.empty()) {
      std::ifstream in(path);
      if (!in) {
        std::cerr << "modelatlas: cannot read " << path << "\n";
        return kExitFailure;
      }
      std::stringstream text;
      text << in.rdbuf();
      request.set_hf_config_json(text.str());
    } else if (!model.empty()) {
      request.set_model(model);
    } else {
      return UsageError("count needs MODEL or --hf_config=FILE");
    }
    estimator_v1::CountParametersResponse response;
    auto context = NewContext();
    grpc::Status status = estimator().CountParameters(context.get(), request, &response);
    if (!status.ok()) return cli::CallFailed(status, "estimator-service", estimator_address_);
    if (json_) {
      std::cout << cli::ToJson(response) << "\n";
      return EXIT_SUCCESS;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& part : response.components()) {
      rows.push_back({part.name(), absl::StrFormat("%.0f", part.parameters()), part.arithmetic()});
    }
    rows.push_back({"total", absl::StrFormat("%.0f", response.total_parameters()), ""});
    rows.push_back({"active per token", absl::StrFormat("%.0f", response.active_parameters()), ""});
    cli::PrintTable({"COMPONENT", "PARAMETERS", "ARITHMETIC"}, rows);
    return EXIT_SUCCESS;
  }

  int EstimateMemory(const std::string& model) {
    estimator_v1::EstimateInferenceMemoryRequest request;
    int exit_code = 0;
    if (!BuildWorkload(model, &request, &exit_code)) return exit_code;

    estimator_v1::EstimateInferenceMemoryResponse response;
    auto context = NewContext();
    grpc::Status status = estimator().EstimateInferenceMemory(context.get(), request, &response);
    if (!status.ok()) return cli::CallFailed(status, "estimator-service", estimator_address_);
    if (json_) {
      std::cout << cli::ToJson(response) << "\n";
      return EXIT_SUCCESS;
    }
    std::cout << response.display_name();
    if (!response.model().empty()) std::cout << " (" << response.model() << ")";
    std::cout << "\n";
    if (!response.available()) {
      std::cout << response.no_estimate_reason() << "\n";
      return EXIT_SUCCESS;
    }
    if (response.hypothetical()) std::cout << "HYPOTHETICAL: weights not published\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& line : response.lines()) {
      rows.push_back({line.component(), absl::StrCat(line.bytes()),
                      absl::StrFormat("%.2f", line.bytes() / 1073741824.0), line.arithmetic()});
    }
    rows.push_back({"total", absl::StrCat(response.total_bytes()),
                    absl::StrFormat("%.2f", response.total_gib()),
                    absl::StrFormat("= %.2f GB (1 GB = 1e9 bytes)", response.total_gb())});
    cli::PrintTable({"COMPONENT", "BYTES", "GiB", "ARITHMETIC"}, rows);
    for (const auto& warning : response.warnings()) std::cout << "note: " << warning << "\n";
    return EXIT_SUCCESS;
  }

  // Imports and exports take longer than one lookup: at least five minutes.
  static absl::Duration TransferTimeout() {
    return std::max(absl::GetFlag(FLAGS_timeout), absl::Minutes(5));
  }

  int Import(const std::string& path) {
    absl::StatusOr<catalog_v1::FileFormat> format =
        cli::ParseFileFormat(absl::GetFlag(FLAGS_format));
    if (!format.ok()) return UsageError(std::string(format.status().message()));
    if (!std::ifstream(path)) {
      std::cerr << "modelatlas: cannot read " << path << "\n";
      return kExitFailure;
    }
    catalog_v1::ImportOptions options;
    options.set_format(*format);
    options.set_source_name(std::string(path.substr(path.find_last_of('/') + 1)));
    options.set_dry_run(absl::GetFlag(FLAGS_dry_run));
    options.set_atomic(absl::GetFlag(FLAGS_atomic));
    options.set_model(absl::GetFlag(FLAGS_model));
    catalog_v1::ImportRecordsResponse response;
    const bool progress = !json_ && isatty(STDERR_FILENO);
    grpc::Status status =
        cli::ImportFile(catalog(), path, options, TransferTimeout(), progress, &response);
    if (!status.ok()) return CatalogFailed(status);
    if (json_) {
      std::cout << cli::ToJson(response.report()) << "\n";
    } else {
      cli::PrintImportReport(response.report(), std::cout);
    }
    return EXIT_SUCCESS;
  }

  int Export() {
    absl::StatusOr<catalog_v1::FileFormat> format =
        cli::ParseFileFormat(absl::GetFlag(FLAGS_format));
    if (!format.ok()) return UsageError(std::string(format.status().message()));
    catalog_v1::ExportRecordsRequest request;
    request.set_format(*format);
    request.set_filter(absl::GetFlag(FLAGS_filter));
    const std::string path = absl::GetFlag(FLAGS_output);
    std::ofstream file;
    if (!path.empty()) {
      file.open(path, std::ios::binary | std::ios::trunc);
      if (!file) {
        std::cerr << "modelatlas: cannot write " << path << "\n";
        return kExitFailure;
      }
    }
    int64_t records = 0;
    grpc::Status status = cli::ExportFile(catalog(), request, TransferTimeout(),
                                          path.empty() ? std::cout : file, &records);
    if (!status.ok()) return CatalogFailed(status);
    if (!path.empty()) std::cerr << "export: " << records << " records written to " << path << "\n";
    return EXIT_SUCCESS;
  }

  std::string catalog_address_;
  std::string estimator_address_;
  bool json_;
  std::unique_ptr<CatalogService::Stub> catalog_stub_;
  std::unique_ptr<EstimatorService::Stub> estimator_stub_;
};

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  // MODELATLAS_CATALOG / MODELATLAS_ESTIMATOR give the addresses; flags win.
  std::vector<std::string> args =
      modelatlas::ParseFlagsWithEnvironment(argc, argv, "MODELATLAS_", {"catalog", "estimator"});
  args.erase(args.begin());  // program name
  return Cli().Run(args);
}
