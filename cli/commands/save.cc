// `models save`: records a model read from anywhere (a Hugging Face
// repository, a GGUF or safetensors file, a config.json) in the catalog: its
// architecture, its exact parameter count and where it came from. Importing
// the same source again changes nothing unless its revision did.
#include <cctype>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/model_source.h"
#include "cli/output.h"

namespace modelatlas::cli {
namespace {

namespace v1 = estimator::v1;

// "meta-llama/Llama-3.1-8B" -> "meta-llama-llama-3-1-8b" (AIP-122 ids).
std::string IdFor(const std::string& name) {
  std::string id;
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      id.push_back(static_cast<char>(std::tolower(u)));
    } else if (!id.empty() && id.back() != '-') {
      id.push_back('-');
    }
  }
  while (!id.empty() && id.back() == '-') id.pop_back();
  return id;
}

int Save(Session& session, const Arguments& args) {
  if (!AnyModelSourceFlag()) {
    return UsageError(
        "models save needs --hf=ORG/NAME[@REV], --gguf, --safetensors or --hf_config");
  }
  absl::StatusOr<v1::ModelSource> source = ModelSourceFromFlags({});
  if (!source.ok()) return UsageError(source.status().message());
  // The estimator reads the source (and fetches a repository), as for any question.
  v1::CountParametersRequest count;
  *count.mutable_model_source() = *source;
  v1::CountParametersResponse counted;
  {
    auto context = Session::NewContext();
    grpc::Status status = session.estimator().CountParameters(context.get(), count, &counted);
    if (!status.ok()) return session.EstimatorFailed(status);
  }
  const std::string display = source->has_hf_repo() ? source->hf_repo().id()
                              : !counted.display_name().empty()
                                  ? counted.display_name()
                                  : counted.architecture().model_type();
  const std::string id = args.empty() ? IdFor(display) : args[0];
  if (id.empty()) return UsageError("name the record: models save --hf=... ID");

  common::v1::Model record;
  record.set_display_name(display);
  *record.mutable_architecture() = counted.architecture();
  record.set_parameters(counted.has_tensor_parameters() ? counted.tensor_parameters()
                                                        : counted.total_parameters());
  record.set_open_model_weights(true);
  common::v1::Provenance* provenance = record.mutable_provenance();
  provenance->set_source(counted.source());
  if (!counted.source_url().empty()) provenance->add_urls(counted.source_url());
  provenance->set_notes(absl::StrCat(
      "saved by modelatlas models save",
      counted.source_revision().empty() ? ""
                                        : absl::StrCat("; revision ", counted.source_revision()),
      counted.has_tensor_parameters() ? "; parameters counted in the tensors"
                                      : "; parameters counted from the architecture"));

  const std::string name = absl::StrCat("models/", id);
  catalog::v1::GetModelRequest get;
  get.set_name(name);
  common::v1::Model stored;
  grpc::Status found;
  {
    auto context = Session::NewContext();
    found = session.catalog().GetModel(context.get(), get, &stored);
  }
  common::v1::Model written;
  if (found.ok()) {
    if (stored.provenance().source() == record.provenance().source()) {
      if (session.json()) {
        PrintJson(stored);
      } else {
        std::cout << "unchanged " << stored.name() << " (" << stored.provenance().source() << ")\n";
      }
      return EXIT_SUCCESS;
    }
    catalog::v1::UpdateModelRequest update;
    *update.mutable_model() = record;
    update.mutable_model()->set_name(stored.name());
    update.mutable_model()->set_etag(stored.etag());
    for (const char* path :
         {"display_name", "architecture", "parameters", "open_model_weights", "provenance"}) {
      update.mutable_update_mask()->add_paths(path);
    }
    auto context = Session::NewContext();
    grpc::Status status = session.catalog().UpdateModel(context.get(), update, &written);
    if (!status.ok()) return session.CatalogFailed(status);
  } else if (found.error_code() == grpc::StatusCode::NOT_FOUND) {
    catalog::v1::CreateModelRequest create;
    create.set_model_id(id);
    *create.mutable_model() = record;
    auto context = Session::NewContext();
    grpc::Status status = session.catalog().CreateModel(context.get(), create, &written);
    if (!status.ok()) return session.CatalogFailed(status);
  } else {
    return session.CatalogFailed(found);
  }
  if (session.json()) {
    PrintJson(written);
  } else {
    std::cout << (found.ok() ? "updated " : "saved ") << written.name() << " ("
              << written.provenance().source() << "), " << HumanCount(written.parameters())
              << " parameters\n";
  }
  return EXIT_SUCCESS;
}

}  // namespace

std::vector<Command> SaveCommands() {
  return {{{"models", "save"},
           "[ID]",
           "record a model read with --hf, --gguf, --safetensors or --hf_config in the catalog "
           "(again: unchanged unless its revision changed)",
           {"hf", "gguf", "mmproj", "safetensors", "hf_config"},
           "models save --hf=Qwen/Qwen2.5-7B-Instruct qwen2-5-7b-instruct",
           Save}};
}

}  // namespace modelatlas::cli
