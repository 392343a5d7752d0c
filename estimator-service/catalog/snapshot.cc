#include "estimator-service/catalog/snapshot.h"

#include <atomic>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/server/logging.h"
#include "common/status/resource_names.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/memory_answer.h"

namespace modelatlas::estimator {

namespace {
// Process-wide, so that no two states of any two snapshots share a number
// (tests run several snapshots one after another in one process).
uint64_t NextModelsGeneration() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
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
      records.models.Put(name, std::move(model));
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
      records.hardware.Put(name, std::move(hw));
    }
    hardware_request.set_page_token(page.next_page_token());
  } while (!hardware_request.page_token().empty());
  // Prepared before taking the lock: a moved RecordTable keeps its records
  // where they are, so what was prepared stays attached to them.
  PreparedRecords prepared;
  for (const auto& [name, model] : records.models.ordered()) Prepare(model, &prepared);
  absl::MutexLock lock(&mutex_);
  records_ = std::move(records);
  prepared_ = std::move(prepared);
  models_generation_ = NextModelsGeneration();
  ShareAllHardware();
  revision_ = revision;
  loaded_ = true;
  last_heard_ = absl::Now();
  MA_LOG_INFO("catalog snapshot loaded: %d models, %d hardware records at revision %d",
              records_.models.size(), records_.hardware.size(), revision_);
  return absl::OkStatus();
}

absl::Status CatalogSnapshot::Follow() {
  // The callback API, so that no thread of ours waits inside gRPC: a thread
  // blocked in a synchronous Read becomes one of gRPC's pollers and takes
  // the server's network work, handing each incoming call to another
  // thread (measured: a fifth of the estimator's samples under load were
  // on this thread).
  class Follower : public grpc::ClientReadReactor<catalog::v1::WatchResponse> {
   public:
    explicit Follower(CatalogSnapshot* snapshot) : snapshot_(snapshot) {}
    void Start(catalog::v1::CatalogService::Stub* stub, grpc::ClientContext* context,
               int64_t start_revision) {
      request_.set_start_revision(start_revision);
      stub->async()->Watch(context, &request_, this);
      StartRead(&message_);
      StartCall();
    }
    void OnReadDone(bool ok) override {
      if (!ok) return;  // the stream ended: OnDone follows
      snapshot_->Apply(message_);
      StartRead(&message_);
    }
    void OnDone(const grpc::Status& status) override {
      status_ = status;
      done_.Notify();
    }
    grpc::Status Wait() {
      done_.WaitForNotification();
      return status_;
    }

   private:
    CatalogSnapshot* snapshot_;
    catalog::v1::WatchRequest request_;
    catalog::v1::WatchResponse message_;
    grpc::Status status_;
    absl::Notification done_;
  };

  grpc::ClientContext context;
  int64_t start_revision = 0;
  {
    absl::MutexLock lock(&mutex_);
    start_revision = revision_;
    watch_context_ = &context;
  }
  if (stop_.HasBeenNotified()) context.TryCancel();
  Follower follower(this);
  follower.Start(stub_.get(), &context, start_revision);
  grpc::Status status = follower.Wait();
  absl::MutexLock lock(&mutex_);
  watch_context_ = nullptr;
  return absl::UnavailableError(absl::StrCat("watch stream from the catalog at ", address_,
                                             " ended: ", status.error_message()));
}

void CatalogSnapshot::Apply(const catalog::v1::WatchResponse& message) {
  absl::MutexLock lock(&mutex_);
  bool hardware_changed = false;
  bool models_changed = false;
  for (const auto& change : message.changes()) {
    if (change.revision() <= revision_) continue;  // already in the loaded state
    const bool is_model = change.has_model() || absl::StartsWith(change.name(), "models/");
    hardware_changed |= !is_model;
    models_changed |= is_model;
    if (is_model) {
      // A replaced record stays at its address (RecordTable::Put): what was
      // prepared from it is dropped here and prepared again below.
      if (const common::v1::Model* old = records_.models.FindByName(change.name())) {
        prepared_.erase(old);
      }
    }
    if (change.type() == catalog::v1::CHANGE_TYPE_DELETED ||
        (!change.has_model() && !change.has_hardware())) {
      if (is_model) {
        records_.models.Erase(change.name());
      } else {
        records_.hardware.Erase(change.name());
      }
    } else if (change.has_model()) {
      records_.models.Put(change.name(), change.model());
      Prepare(*records_.models.FindByName(change.name()), &prepared_);
    } else {
      records_.hardware.Put(change.name(), change.hardware());
    }
  }
  if (hardware_changed) ShareAllHardware();
  if (models_changed) models_generation_ = NextModelsGeneration();
  revision_ = std::max(revision_, message.revision());
  last_heard_ = absl::Now();
}

PreparedRecord PrepareRecord(const common::v1::Model& model) {
  PreparedRecord prepared;
  prepared.architecture_check = ValidateModelArchitecture(model, "architecture");
  if (model.has_architecture()) {
    prepared.architecture = ToCoreArchitecture(model.architecture());
    prepared.weights = std::make_unique<const PreparedWeights>();
  }
  // The parts of an answer that SizeForModelAnswer (answers/inference.cc)
  // sets from the record alone, for the records it answers with no warning.
  const std::optional<bool> published = WeightsPublished(model);
  if (prepared.architecture_check.ok() && prepared.architecture.has_value() &&
      model.architecture().encoder_parts_size() == 0 && published.value_or(false) &&
      !model.name().empty()) {
    absl::StatusOr<double> parameters = ParametersOfModel(model, &*prepared.architecture);
    if (parameters.ok()) {
      prepared.parameters = *parameters;
      if (model.has_active_parameters()) prepared.active_parameters = model.active_parameters();
      prepared.answer_head =
          EncodeRecordAnswerHead(model.name(), model.display_name(), prepared.parameters);
      prepared.answer_source =
          EncodeRecordAnswerSource(absl::StrCat("catalog record ", model.name()));
    }
  }
  return prepared;
}

void CatalogSnapshot::Prepare(const common::v1::Model& model, PreparedRecords* prepared) {
  PreparedRecord made = PrepareRecord(model);
  if (made.architecture_check.ok() && !made.architecture.has_value()) return;
  (*prepared)[&model] = std::make_unique<const PreparedRecord>(std::move(made));
}

const PreparedRecord& CatalogSnapshot::PreparedOf(const common::v1::Model* model) const {
  static const PreparedRecord* const kNothing = new PreparedRecord();
  auto found = prepared_.find(model);
  return found == prepared_.end() ? *kNothing : *found->second;
}

void CatalogSnapshot::MarkLoadedForTest() {
  absl::MutexLock lock(&mutex_);
  loaded_ = true;
  last_heard_ = absl::Now();
}

void CatalogSnapshot::ShareAllHardware() {
  std::vector<common::v1::Hardware> all;
  all.reserve(records_.hardware.size());
  for (const auto& [name, hw] : records_.hardware.ordered()) all.push_back(hw);
  all_hardware_ = SharedRecords<common::v1::Hardware>(std::move(all));
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

CatalogSnapshot::Sync CatalogSnapshot::sync() const {
  absl::MutexLock lock(&mutex_);
  return {revision_, last_heard_, loaded_};
}

absl::Time CatalogSnapshot::last_heard() const {
  absl::MutexLock lock(&mutex_);
  return last_heard_;
}

absl::Status EstimatorReadiness(const absl::Status& catalog_answers,
                                const CatalogSnapshot* snapshot, absl::Duration max_age) {
  if (!catalog_answers.ok()) {
    return absl::UnavailableError(
        absl::StrCat("the catalog does not answer: ", catalog_answers.message()));
  }
  if (snapshot == nullptr) return absl::OkStatus();
  if (!snapshot->loaded()) return absl::UnavailableError("the catalog snapshot is not loaded yet");
  if (const absl::Duration age = snapshot->age(); age > max_age) {
    return absl::UnavailableError(
        absl::StrCat("the catalog snapshot last heard from the catalog ",
                     absl::FormatDuration(absl::Trunc(age, absl::Milliseconds(100))),
                     " ago (revision ", snapshot->revision(), "), more than --snapshot_max_age ",
                     absl::FormatDuration(max_age), ": it is not following the catalog"));
  }
  return absl::OkStatus();
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
  std::optional<common::v1::Model> found;
  UseModel(name, [&found](const common::v1::Model& model, int64_t, const absl::Status&) {
    found = model;
  });
  return found;
}

bool CatalogSnapshot::UseModel(
    absl::string_view name,
    const std::function<void(const common::v1::Model&, int64_t revision,
                             const absl::Status& architecture_check)>& use) const {
  absl::ReaderMutexLock lock(&mutex_);
  const common::v1::Model* model = FindModelLocked(name);
  if (model == nullptr) return false;
  use(*model, revision_, PreparedOf(model).architecture_check);
  return true;
}

bool CatalogSnapshot::UsePreparedModel(absl::string_view name,
                                       absl::FunctionRef<void(const UsedModel&)> use) const {
  absl::ReaderMutexLock lock(&mutex_);
  if (!loaded_) return false;
  const common::v1::Model* model = FindModelLocked(name);
  if (model == nullptr) return false;
  use(UsedModel{*model, PreparedOf(model), Sync{revision_, last_heard_, loaded_}});
  return true;
}

const common::v1::Model* CatalogSnapshot::FindModelLocked(absl::string_view name) const {
  // A resource name is looked up as one, never as a display name; any other
  // name cannot be a resource name (every record's starts with "models/"),
  // so its lookup goes straight to the display names and aliases.
  return absl::StartsWith(name, "models/") ? records_.models.FindByName(name)
                                           : records_.models.FindByKey(name);
}

std::optional<common::v1::Hardware> CatalogSnapshot::FindHardware(absl::string_view name) const {
  absl::ReaderMutexLock lock(&mutex_);
  const common::v1::Hardware* hardware = records_.hardware.Find(name);
  if (hardware == nullptr) return std::nullopt;
  return *hardware;
}

SharedRecords<common::v1::Hardware> CatalogSnapshot::AllHardware() const {
  absl::ReaderMutexLock lock(&mutex_);
  return all_hardware_;
}

void CatalogSnapshot::ForEachModel(
    const std::function<void(const common::v1::Model&)>& visit) const {
  absl::ReaderMutexLock lock(&mutex_);
  for (const auto& [name, model] : records_.models.ordered()) visit(model);
}

void CatalogSnapshot::ForEachModelIndexed(
    const std::function<void(const common::v1::Model&, size_t)>& visit,
    uint64_t* generation) const {
  absl::ReaderMutexLock lock(&mutex_);
  *generation = models_generation_;
  std::shared_ptr<const std::vector<const common::v1::Model*>> ordered;
  {
    absl::MutexLock ordered_lock(&ordered_mutex_);
    if (ordered_ == nullptr || ordered_generation_ != models_generation_) {
      auto list = std::make_shared<std::vector<const common::v1::Model*>>();
      list->reserve(records_.models.size());
      for (const auto& [name, model] : records_.models.ordered()) list->push_back(&model);
      ordered_ = std::move(list);
      ordered_generation_ = models_generation_;
    }
    ordered = ordered_;
  }
  // The records cannot change while the reader lock is held.
  for (size_t index = 0; index < ordered->size(); ++index) visit(*(*ordered)[index], index);
}

bool CatalogSnapshot::WaitUntilLoaded(absl::Duration timeout) const {
  absl::MutexLock lock(&mutex_);
  auto is_loaded = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return loaded_; };
  return mutex_.AwaitWithTimeout(absl::Condition(&is_loaded), timeout);
}

}  // namespace modelatlas::estimator
