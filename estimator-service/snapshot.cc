#include "estimator-service/snapshot.h"

#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/resource_names.h"

namespace modelatlas::estimator {
namespace {

std::optional<std::string> Unique(
    const absl::flat_hash_map<std::string, std::vector<std::string>>& keys,
    absl::string_view name) {
  auto it = keys.find(LookupKey(name));
  if (it == keys.end() || it->second.size() != 1) return std::nullopt;
  return it->second.front();
}

}  // namespace

CatalogSnapshot::CatalogSnapshot(std::shared_ptr<grpc::Channel> channel, std::string address)
    : address_(std::move(address)), stub_(catalog::v1::CatalogService::NewStub(channel)) {}

CatalogSnapshot::~CatalogSnapshot() { Stop(); }

void CatalogSnapshot::Start() {
  thread_ = std::thread([this] { Run(); });
}

void CatalogSnapshot::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  {
    absl::MutexLock lock(&mutex_);
    if (watch_context_ != nullptr) watch_context_->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

void CatalogSnapshot::Run() {
  std::mt19937 rng(std::random_device{}());
  absl::Duration backoff = absl::Milliseconds(200);
  while (!stop_.HasBeenNotified()) {
    absl::Status status = LoadAll();
    if (status.ok()) {
      backoff = absl::Milliseconds(200);
      status = Follow();  // returns when the stream ends
    }
    if (stop_.HasBeenNotified()) break;
    MA_LOG_WARNING("catalog snapshot: %s; retrying in %s", status.ToString(),
                   absl::FormatDuration(backoff));
    // Exponential backoff with full jitter, capped at 5 s.
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    stop_.WaitForNotificationWithTimeout(backoff * jitter(rng));
    backoff = std::min(backoff * 2, absl::Seconds(5));
  }
}

absl::Status CatalogSnapshot::LoadAll() {
  Records records;
  int64_t revision = -1;
  catalog::v1::ListModelsRequest models_request;
  models_request.set_page_size(1000);
  do {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    catalog::v1::ListModelsResponse page;
    grpc::Status status = stub_->ListModels(&context, models_request, &page);
    if (!status.ok()) {
      return absl::UnavailableError(absl::StrCat("cannot list models from the catalog at ",
                                                 address_, ": ", status.error_message()));
    }
    // The revision before the first page: changes after it are replayed by Watch.
    if (revision < 0) revision = page.catalog_revision();
    for (auto& model : *page.mutable_models()) {
      std::string name = model.name();
      records.models.emplace(std::move(name), std::move(model));
    }
    models_request.set_page_token(page.next_page_token());
  } while (!models_request.page_token().empty());
  catalog::v1::ListHardwareRequest hardware_request;
  hardware_request.set_page_size(1000);
  do {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    catalog::v1::ListHardwareResponse page;
    grpc::Status status = stub_->ListHardware(&context, hardware_request, &page);
    if (!status.ok()) {
      return absl::UnavailableError(absl::StrCat("cannot list hardware from the catalog at ",
                                                 address_, ": ", status.error_message()));
    }
    for (auto& hw : *page.mutable_hardware()) {
      std::string name = hw.name();
      records.hardware.emplace(std::move(name), std::move(hw));
    }
    hardware_request.set_page_token(page.next_page_token());
  } while (!hardware_request.page_token().empty());
  Index(records);
  absl::MutexLock lock(&mutex_);
  records_ = std::move(records);
  revision_ = revision;
  loaded_ = true;
  last_heard_ = absl::Now();
  MA_LOG_INFO("catalog snapshot loaded: %d models, %d hardware records at revision %d",
              records_.models.size(), records_.hardware.size(), revision_);
  return absl::OkStatus();
}

absl::Status CatalogSnapshot::Follow() {
  grpc::ClientContext context;
  catalog::v1::WatchRequest request;
  {
    absl::MutexLock lock(&mutex_);
    request.set_start_revision(revision_);
    watch_context_ = &context;
  }
  if (stop_.HasBeenNotified()) context.TryCancel();
  auto reader = stub_->Watch(&context, request);
  catalog::v1::WatchResponse message;
  while (reader->Read(&message)) Apply(message);
  grpc::Status status = reader->Finish();
  absl::MutexLock lock(&mutex_);
  watch_context_ = nullptr;
  return absl::UnavailableError(absl::StrCat("watch stream from the catalog at ", address_,
                                             " ended: ", status.error_message()));
}

void CatalogSnapshot::Apply(const catalog::v1::WatchResponse& message) {
  absl::MutexLock lock(&mutex_);
  bool changed = false;
  for (const auto& change : message.changes()) {
    if (change.revision() <= revision_) continue;  // already in the loaded state
    changed = true;
    const bool is_model = change.has_model() || absl::StartsWith(change.name(), "models/");
    if (change.type() == catalog::v1::CHANGE_TYPE_DELETED ||
        (!change.has_model() && !change.has_hardware())) {
      if (is_model) {
        records_.models.erase(change.name());
      } else {
        records_.hardware.erase(change.name());
      }
    } else if (change.has_model()) {
      records_.models[change.name()] = change.model();
    } else {
      records_.hardware[change.name()] = change.hardware();
    }
  }
  if (changed) Index(records_);
  revision_ = std::max(revision_, message.revision());
  last_heard_ = absl::Now();
}

void CatalogSnapshot::Index(Records& records) {
  records.model_keys.clear();
  records.hardware_keys.clear();
  for (const auto& [name, model] : records.models) {
    records.model_keys[LookupKey(model.display_name())].push_back(name);
  }
  for (const auto& [name, hw] : records.hardware) {
    records.hardware_keys[LookupKey(hw.display_name())].push_back(name);
    for (const std::string& alias : hw.aliases()) {
      auto& names = records.hardware_keys[LookupKey(alias)];
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
}

bool CatalogSnapshot::loaded() const {
  absl::MutexLock lock(&mutex_);
  return loaded_;
}

int64_t CatalogSnapshot::revision() const {
  absl::MutexLock lock(&mutex_);
  return revision_;
}

absl::Duration CatalogSnapshot::age() const {
  absl::MutexLock lock(&mutex_);
  return absl::Now() - last_heard_;
}

size_t CatalogSnapshot::model_count() const {
  absl::MutexLock lock(&mutex_);
  return records_.models.size();
}

size_t CatalogSnapshot::hardware_count() const {
  absl::MutexLock lock(&mutex_);
  return records_.hardware.size();
}

std::optional<common::v1::Model> CatalogSnapshot::FindModel(absl::string_view name) const {
  absl::ReaderMutexLock lock(&mutex_);
  auto it = records_.models.find(std::string(name));
  if (it != records_.models.end()) return it->second;
  if (absl::StartsWith(name, "models/")) return std::nullopt;
  std::optional<std::string> resolved = Unique(records_.model_keys, name);
  if (!resolved.has_value()) return std::nullopt;
  return records_.models.at(*resolved);
}

std::optional<common::v1::Hardware> CatalogSnapshot::FindHardware(absl::string_view name) const {
  absl::ReaderMutexLock lock(&mutex_);
  auto it = records_.hardware.find(std::string(name));
  if (it != records_.hardware.end()) return it->second;
  std::optional<std::string> resolved = Unique(records_.hardware_keys, name);
  if (!resolved.has_value()) return std::nullopt;
  return records_.hardware.at(*resolved);
}

std::vector<common::v1::Hardware> CatalogSnapshot::AllHardware() const {
  absl::ReaderMutexLock lock(&mutex_);
  std::vector<common::v1::Hardware> out;
  out.reserve(records_.hardware.size());
  for (const auto& [name, hw] : records_.hardware) out.push_back(hw);
  return out;
}

void CatalogSnapshot::ForEachModel(
    const std::function<void(const common::v1::Model&)>& visit) const {
  absl::ReaderMutexLock lock(&mutex_);
  for (const auto& [name, model] : records_.models) visit(model);
}

bool CatalogSnapshot::WaitUntilLoaded(absl::Duration timeout) const {
  absl::MutexLock lock(&mutex_);
  auto is_loaded = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return loaded_; };
  return mutex_.AwaitWithTimeout(absl::Condition(&is_loaded), timeout);
}

}  // namespace modelatlas::estimator
