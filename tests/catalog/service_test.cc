// CatalogService over gRPC, in process, with the shipped dataset, on each
// store: SQLite (in memory) and PostgreSQL (a throw-away database).
#include "catalog-service/service.h"

#include <dirent.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "catalog-service/dataset.h"
#include "google/protobuf/util/message_differencer.h"
#include "tests/catalog/catalog_on_store.h"
#include "tests/testing/grpc_testing.h"

namespace modelatlas::catalog {
namespace {

using testing::DecodeDetails;
using testing::FindDetail;

class CatalogServiceTest : public CatalogOnStoreTest {
 protected:
  void SetUp() override {
    CatalogOnStoreTest::SetUp();
    if (catalog_ == nullptr) return;  // skipped or failed
    ASSERT_TRUE(catalog_->LoadIfEmpty(*ShippedDataset()).ok());
    service_ = std::make_unique<CatalogServiceImpl>(catalog_.get());
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::CatalogService::NewStub(server_->InProcessChannel({}));
  }
  void TearDown() override {
    if (server_) server_->Shutdown(testing::DeadlineFromNow(1000));
    server_.reset();
    CatalogOnStoreTest::TearDown();
  }

  std::unique_ptr<CatalogServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::CatalogService::Stub> stub_;
};

TEST_P(CatalogServiceTest, GetModelByDisplayName) {
  grpc::ClientContext context;
  v1::GetModelRequest request;
  request.set_name("megatron bert");
  common::v1::Model model;
  ASSERT_TRUE(stub_->GetModel(&context, request, &model).ok());
  EXPECT_EQ(model.name(), "models/megatron-bert");
  EXPECT_EQ(model.display_name(), "Megatron-BERT");
  EXPECT_DOUBLE_EQ(model.training_chip_hours(), 191488);
  EXPECT_FALSE(model.etag().empty());
}

TEST_P(CatalogServiceTest, UnknownModelIsNotFoundWithResourceInfo) {
  grpc::ClientContext context;
  v1::GetModelRequest request;
  request.set_name("models/no-such-model");
  common::v1::Model model;
  const grpc::Status status = stub_->GetModel(&context, request, &model);
  ASSERT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  // The name asked for, then perhaps the closest names ("; did you mean ...").
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "Model \"models/no-such-model\" not found"))
      << status.error_message();
  google::rpc::ResourceInfo resource;
  ASSERT_TRUE(FindDetail(DecodeDetails(status), &resource));
  EXPECT_EQ(resource.resource_name(), "models/no-such-model");
  google::rpc::ErrorInfo info;
  ASSERT_TRUE(FindDetail(DecodeDetails(status), &info));
  EXPECT_EQ(info.reason(), "RESOURCE_NOT_FOUND");
}

// GetModel and GetHardware read their request from raw bytes (they reply with
// the stored record's bytes): bytes that are not a request are refused with
// INVALID_ARGUMENT naming the message, and the server goes on answering.
TEST_P(CatalogServiceTest, GetModelRefusesBytesThatAreNotARequest) {
  grpc::GenericStub generic(server_->InProcessChannel({}));
  for (const char* method : {"/modelatlas.catalog.v1.CatalogService/GetModel",
                             "/modelatlas.catalog.v1.CatalogService/GetHardware"}) {
    // Field 1 (name) declared as a 100-byte string, with 3 bytes following.
    const std::string garbage(
        "\x0a\x64"
        "abc",
        5);
    grpc::Slice slice(garbage);
    grpc::ByteBuffer request(&slice, 1), response;
    grpc::ClientContext context;
    grpc::Status status;
    absl::Notification done;
    generic.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                      [&](grpc::Status s) {
                        status = std::move(s);
                        done.Notify();
                      });
    done.WaitForNotification();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_NE(status.error_message().find("request: not a valid modelatlas.catalog.v1.Get"),
              std::string::npos)
        << status.error_message();
  }
  grpc::ClientContext context;
  v1::GetHardwareRequest request;
  request.set_name("hardware/nvidia-h100-sxm5-80gb");
  common::v1::Hardware card;
  const grpc::Status status = stub_->GetHardware(&context, request, &card);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(card.memory_bytes(), 0);
  EXPECT_FALSE(card.etag().empty());
}

TEST_P(CatalogServiceTest, ListModelsPagesThroughEverything) {
  v1::ListModelsRequest request;
  request.set_page_size(2);
  int total = 0;
  do {
    grpc::ClientContext context;
    v1::ListModelsResponse response;
    ASSERT_TRUE(stub_->ListModels(&context, request, &response).ok());
    EXPECT_LE(response.models_size(), 2);
    EXPECT_EQ(response.catalog_revision(), 1);
    total += response.models_size();
    request.set_page_token(response.next_page_token());
  } while (!request.page_token().empty());
  EXPECT_EQ(total, ShippedDataset()->models_size());
}

TEST_P(CatalogServiceTest, NegativePageSizeIsABadRequestNamingTheField) {
  grpc::ClientContext context;
  v1::ListHardwareRequest request;
  request.set_page_size(-5);
  v1::ListHardwareResponse response;
  const grpc::Status status = stub_->ListHardware(&context, request, &response);
  ASSERT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  google::rpc::BadRequest bad_request;
  ASSERT_TRUE(FindDetail(DecodeDetails(status), &bad_request));
  ASSERT_EQ(bad_request.field_violations_size(), 1);
  EXPECT_EQ(bad_request.field_violations(0).field(), "page_size");
}

TEST_P(CatalogServiceTest, HardwareByAliasAndCatalogInfo) {
  grpc::ClientContext context;
  v1::GetHardwareRequest request;
  request.set_name("NVIDIA V100");
  common::v1::Hardware hardware;
  ASSERT_TRUE(stub_->GetHardware(&context, request, &hardware).ok());
  EXPECT_EQ(hardware.name(), "hardware/nvidia-v100-sxm2-32gb");
  EXPECT_DOUBLE_EQ(hardware.tdp_watts(), 300);

  grpc::ClientContext info_context;
  v1::CatalogInfo info;
  ASSERT_TRUE(stub_->GetCatalogInfo(&info_context, {}, &info).ok());
  EXPECT_EQ(info.revision(), 1);
  EXPECT_EQ(info.model_count(), ShippedDataset()->models_size());
  EXPECT_EQ(info.hardware_count(), ShippedDataset()->hardware_size());
  EXPECT_EQ(info.store(), BackendOf(GetParam()));
}

TEST_P(CatalogServiceTest, CreateUpdateDeleteOverGrpcWithStaleEtagAborted) {
  v1::CreateModelRequest create;
  create.set_model_id("new-model");
  create.mutable_model()->set_display_name("New Model");
  create.mutable_model()->set_parameters(1e9);
  create.mutable_model()->mutable_provenance()->set_source("test");
  common::v1::Model created;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->CreateModel(&context, create, &created).ok());
  }
  EXPECT_EQ(created.name(), "models/new-model");
  {
    grpc::ClientContext context;
    common::v1::Model again;
    EXPECT_EQ(stub_->CreateModel(&context, create, &again).error_code(),
              grpc::StatusCode::ALREADY_EXISTS);
  }
  v1::UpdateModelRequest update;
  *update.mutable_model() = created;
  update.mutable_model()->set_parameters(2e9);
  update.mutable_update_mask()->add_paths("parameters");
  common::v1::Model updated;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->UpdateModel(&context, update, &updated).ok());
  }
  EXPECT_EQ(updated.parameters(), 2e9);
  {
    grpc::ClientContext context;  // same etag again: now stale
    common::v1::Model ignored;
    const grpc::Status stale = stub_->UpdateModel(&context, update, &ignored);
    EXPECT_EQ(stale.error_code(), grpc::StatusCode::ABORTED);
    google::rpc::ErrorInfo info;
    ASSERT_TRUE(FindDetail(DecodeDetails(stale), &info));
    EXPECT_EQ(info.reason(), "ETAG_MISMATCH");
  }
  v1::DeleteModelRequest remove;
  remove.set_name("models/new-model");
  remove.set_etag(updated.etag());
  google::protobuf::Empty empty;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->DeleteModel(&context, remove, &empty).ok());
  }
  grpc::ClientContext context;
  v1::GetModelRequest get;
  get.set_name("models/new-model");
  common::v1::Model gone;
  EXPECT_EQ(stub_->GetModel(&context, get, &gone).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_P(CatalogServiceTest, FilteredListAndBatchGet) {
  grpc::ClientContext context;
  v1::ListModelsRequest request;
  request.set_filter("architecture.num_layers:* AND parameters > 5e9");
  request.set_order_by("parameters desc");
  v1::ListModelsResponse response;
  ASSERT_TRUE(stub_->ListModels(&context, request, &response).ok());
  ASSERT_GE(response.models_size(), 2);
  for (const auto& model : response.models()) EXPECT_GT(model.parameters(), 5e9);
  EXPECT_GE(response.models(0).parameters(), response.models(1).parameters());

  grpc::ClientContext bad_context;
  request.set_filter("parameters >");
  const grpc::Status bad = stub_->ListModels(&bad_context, request, &response);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  grpc::ClientContext batch_context;
  v1::BatchGetHardwareRequest batch;
  batch.add_names("NVIDIA V100");
  batch.add_names("hardware/nvidia-t4");
  v1::BatchGetHardwareResponse hardware;
  ASSERT_TRUE(stub_->BatchGetHardware(&batch_context, batch, &hardware).ok());
  ASSERT_EQ(hardware.hardware_size(), 2);
  EXPECT_EQ(hardware.hardware(1).name(), "hardware/nvidia-t4");
}

TEST_P(CatalogServiceTest, WatchStreamsTheRevisionThenEachWrite) {
  grpc::ClientContext context;
  context.set_deadline(testing::DeadlineFromNow(20000));
  v1::WatchRequest request;
  request.set_start_revision(1);  // after the shipped dataset
  auto reader = stub_->Watch(&context, request);
  v1::WatchResponse first;
  ASSERT_TRUE(reader->Read(&first));
  EXPECT_EQ(first.revision(), 1);
  EXPECT_EQ(first.changes_size(), 0);

  v1::CreateHardwareRequest create;
  create.set_hardware_id("test-chip");
  create.mutable_hardware()->set_display_name("Test Chip");
  create.mutable_hardware()->mutable_provenance()->set_source("test");
  {
    grpc::ClientContext create_context;
    common::v1::Hardware created;
    ASSERT_TRUE(stub_->CreateHardware(&create_context, create, &created).ok());
  }
  v1::WatchResponse next;
  ASSERT_TRUE(reader->Read(&next));
  EXPECT_EQ(next.revision(), 2);
  ASSERT_EQ(next.changes_size(), 1);
  EXPECT_EQ(next.changes(0).name(), "hardware/test-chip");
  EXPECT_EQ(next.changes(0).type(), v1::CHANGE_TYPE_CREATED);
  EXPECT_EQ(next.changes(0).hardware().display_name(), "Test Chip");
  context.TryCancel();
  v1::WatchResponse ignored;
  while (reader->Read(&ignored)) {
  }
  reader->Finish().IgnoreError();
}

// Sends `content` in chunks of `chunk_bytes`, the options in the first message.
grpc::Status StreamImport(v1::CatalogService::Stub& stub, const std::string& content,
                          size_t chunk_bytes, const v1::ImportOptions& options,
                          v1::ImportRecordsResponse* response) {
  grpc::ClientContext context;
  auto writer = stub.ImportRecords(&context, response);
  for (size_t offset = 0; offset < content.size() || offset == 0; offset += chunk_bytes) {
    v1::ImportRecordsRequest request;
    if (offset == 0) *request.mutable_options() = options;
    request.set_data(content.substr(offset, chunk_bytes));
    if (!writer->Write(request)) break;
  }
  writer->WritesDone();
  return writer->Finish();
}

TEST_P(CatalogServiceTest, ImportStreamsAFileInChunksAndReportsEachRow) {
  const std::string file =
      "Model,Parameters,Training hardware\n"
      "Streamed One,1000,NVIDIA A100\n"
      "\"Streamed, Two\",2000,\n"
      "Broken,lots,\n";
  v1::ImportOptions options;
  options.set_source_name("test.csv");
  v1::ImportRecordsResponse response;
  // Chunks of 7 bytes split rows, cells and quoted commas.
  ASSERT_TRUE(StreamImport(*stub_, file, 7, options, &response).ok());
  const v1::ImportReport& report = response.report();
  EXPECT_EQ(report.rows_read(), 3);
  EXPECT_EQ(report.created(), 2);
  EXPECT_EQ(report.rejected(), 1);
  EXPECT_EQ(report.rejections(0).column(), "Parameters");
  EXPECT_EQ(report.hardware_linking().resolved(), 1);

  grpc::ClientContext context;
  v1::GetModelRequest get;
  get.set_name("Streamed, Two");
  common::v1::Model model;
  ASSERT_TRUE(stub_->GetModel(&context, get, &model).ok());
  EXPECT_EQ(model.parameters(), 2000);
  EXPECT_EQ(model.provenance().source(), "Epoch AI, test.csv");

  v1::ImportRecordsResponse again;
  ASSERT_TRUE(StreamImport(*stub_, file, 1 << 20, options, &again).ok());
  EXPECT_EQ(again.report().unchanged(), 2);
}

TEST_P(CatalogServiceTest, ImportWithoutOptionsOrWithAnUnknownFileIsInvalid) {
  v1::ImportRecordsResponse response;
  {
    grpc::ClientContext context;
    auto writer = stub_->ImportRecords(&context, &response);
    v1::ImportRecordsRequest request;
    request.set_data("Model\nX\n");
    writer->Write(request);
    writer->WritesDone();
    const grpc::Status status = writer->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("options"), std::string::npos) << status.error_message();
  }
  const grpc::Status unknown = StreamImport(*stub_, "a,b\n1,2\n", 100, {}, &response);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::ClientContext context;
  v1::CatalogInfo info;
  ASSERT_TRUE(stub_->GetCatalogInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.revision(), 1) << "a refused import wrote";
}

// Descriptors of this process open on files in `directory`: a spool has no
// name, but /proc shows where it is ("DIR/#123 (deleted)").
int OpenFilesIn(const std::string& directory) {
  int open = 0;
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return -1;
  while (dirent* entry = readdir(fds)) {
    char target[4096];
    const std::string link = absl::StrCat("/proc/self/fd/", entry->d_name);
    const ssize_t size = readlink(link.c_str(), target, sizeof(target) - 1);
    if (size > 0 && absl::StartsWith(absl::string_view(target, size), directory + "/")) ++open;
  }
  closedir(fds);
  return open;
}

// Polls until OpenFilesIn(directory) is `expected` (the server closes a
// spool when the call's reactor is done, just after the client's Finish).
int WaitForOpenFilesIn(const std::string& directory, int expected) {
  int open = OpenFilesIn(directory);
  for (int i = 0; i < 500 && open != expected; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
    open = OpenFilesIn(directory);
  }
  return open;
}

class ImportSpoolServiceTest : public CatalogServiceTest {
 protected:
  void SetUp() override {
    CatalogServiceTest::SetUp();
    if (service_ == nullptr) return;
    spool_directory_ = absl::StrCat(DefaultSpoolDirectory(), "/service-spool-test-XXXXXX");
    ASSERT_NE(mkdtemp(spool_directory_.data()), nullptr);
    service_->SetImportSpoolDirectory(spool_directory_);
  }
  void TearDown() override {
    CatalogServiceTest::TearDown();
    if (!spool_directory_.empty()) rmdir(spool_directory_.c_str());
  }
  int64_t Revision() {
    grpc::ClientContext context;
    v1::CatalogInfo info;
    EXPECT_TRUE(stub_->GetCatalogInfo(&context, {}, &info).ok());
    return info.revision();
  }
  std::string spool_directory_;
};

// `rows` rows with quoted cells (a comma, a doubled quote, a line break).
std::string QuotedCsv(int rows) {
  std::string csv = "Model,Organization,Parameters,Notes\n";
  for (int row = 1; row <= rows; ++row) {
    absl::StrAppend(&csv, "\"Spooled ", row, ", v", row % 3, "\",Lab ", row % 7, ",", row,
                    "e6,\"a \"\"note\"\"\nover two lines\"\n");
  }
  return csv;
}

TEST_P(ImportSpoolServiceTest, AFileInManyMessagesGivesTheReportAndRecordsOfTheFileInMemory) {
  const std::string csv = QuotedCsv(4500) + "Bad,Lab,seven,\n";
  v1::ImportOptions options;
  options.set_source_name("spooled.csv");
  options.set_full_report(true);
  v1::ImportOptions dry_run = options;
  dry_run.set_dry_run(true);
  absl::StatusOr<v1::ImportReport> in_memory = catalog_->ImportFile(csv, dry_run);
  ASSERT_TRUE(in_memory.ok()) << in_memory.status();
  const int64_t models_before = catalog_->Info()->model_count();

  // 1,000-byte messages: rows, quoted cells and the 2,000-row chunks all
  // fall across messages.
  v1::ImportRecordsResponse response;
  const grpc::Status status = StreamImport(*stub_, csv, 1000, options, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  v1::ImportReport streamed = response.report();
  EXPECT_TRUE(streamed.committed());
  EXPECT_EQ(streamed.created(), 4500);
  EXPECT_EQ(streamed.rejected(), 1);
  for (v1::ImportReport* report : {&*in_memory, &streamed}) {
    report->clear_dry_run();
    report->clear_committed();
    report->clear_revision();
  }
  std::string difference;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&difference);
  EXPECT_TRUE(differencer.Compare(*in_memory, streamed)) << difference;

  EXPECT_EQ(catalog_->Info()->model_count(), models_before + 4500);
  absl::StatusOr<common::v1::Model> model = catalog_->Get<common::v1::Model>("Spooled 4321, v1");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->parameters(), 4321e6);
  EXPECT_EQ(model->organizations(0), "Lab 2");
  EXPECT_EQ(model->provenance().source(), "Epoch AI, spooled.csv");
  EXPECT_EQ(WaitForOpenFilesIn(spool_directory_, 0), 0) << "the spool outlived the import";
}

TEST_P(ImportSpoolServiceTest, AFileRefusedAsAWholeWritesNothingAndLeavesNoSpool) {
  const int64_t revision = Revision();
  // A quote that never closes, in the file's very last bytes.
  const std::string csv = QuotedCsv(3000) + "\"Open,Lab,1,";
  v1::ImportRecordsResponse response;
  const grpc::Status status = StreamImport(*stub_, csv, 4096, {}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("never closed"), std::string::npos)
      << status.error_message();
  EXPECT_EQ(Revision(), revision) << "a file refused as a whole wrote";
  EXPECT_EQ(WaitForOpenFilesIn(spool_directory_, 0), 0);
}

TEST_P(ImportSpoolServiceTest, ACancelledUploadWritesNothingAndLeavesNoSpool) {
  const int64_t revision = Revision();
  v1::ImportRecordsResponse response;
  grpc::ClientContext context;
  auto writer = stub_->ImportRecords(&context, &response);
  v1::ImportRecordsRequest request;
  *request.mutable_options() = v1::ImportOptions();
  request.set_data(QuotedCsv(100));
  ASSERT_TRUE(writer->Write(request));
  // The spool is there while the upload is: the check below can see one.
  EXPECT_EQ(WaitForOpenFilesIn(spool_directory_, 1), 1);
  context.TryCancel();
  EXPECT_EQ(writer->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(WaitForOpenFilesIn(spool_directory_, 0), 0) << "a cancelled upload's spool stayed";
  EXPECT_EQ(Revision(), revision);
}

TEST_P(ImportSpoolServiceTest, ASpoolDirectoryThatCannotBeWrittenIsAClearErrorAndWritesNothing) {
  const int64_t revision = Revision();
  service_->SetImportSpoolDirectory(spool_directory_ + "/missing");
  v1::ImportRecordsResponse response;
  const grpc::Status status = StreamImport(*stub_, QuotedCsv(10), 100, {}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_NE(status.error_message().find(spool_directory_ + "/missing"), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("nothing was written"), std::string::npos);
  EXPECT_EQ(Revision(), revision);
}

TEST_P(CatalogServiceTest, ExportStreamsEpochCsvAndJson) {
  v1::ExportRecordsRequest request;
  request.set_format(v1::FILE_FORMAT_EPOCH_MODELS_CSV);
  request.set_filter("display_name = \"Megatron-BERT\"");
  std::string csv;
  int64_t count = 0;
  {
    grpc::ClientContext context;
    auto reader = stub_->ExportRecords(&context, request);
    v1::ExportRecordsResponse chunk;
    while (reader->Read(&chunk)) {
      csv += chunk.data();
      count += chunk.record_count();
    }
    ASSERT_TRUE(reader->Finish().ok());
  }
  EXPECT_EQ(count, 1);
  EXPECT_EQ(csv.rfind("Model,Domain,Task,Organization,", 0), 0u) << csv.substr(0, 100);
  EXPECT_NE(csv.find("Megatron-BERT,Language,"), std::string::npos) << csv;

  // The JSON export holds every record and reads back as the same catalog.
  request.Clear();
  std::string json;
  {
    grpc::ClientContext context;
    auto reader = stub_->ExportRecords(&context, request);
    v1::ExportRecordsResponse chunk;
    while (reader->Read(&chunk)) json += chunk.data();
    ASSERT_TRUE(reader->Finish().ok());
  }
  v1::ImportRecordsResponse response;
  ASSERT_TRUE(StreamImport(*stub_, json, 4096, {}, &response).ok());
  EXPECT_EQ(response.report().format(), v1::FILE_FORMAT_CATALOG_JSON);
  EXPECT_EQ(response.report().rows_read(), response.report().unchanged());
  EXPECT_GT(response.report().unchanged(), 90);

  request.set_filter("parameters > 1");
  grpc::ClientContext context;
  auto reader = stub_->ExportRecords(&context, request);
  v1::ExportRecordsResponse chunk;
  while (reader->Read(&chunk)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

INSTANTIATE_TEST_SUITE_P(Stores, CatalogServiceTest,
                         ::testing::Values("sqlite", "sqlite_cached", "postgres"),
                         [](const auto& test_info) { return test_info.param; });
INSTANTIATE_TEST_SUITE_P(Stores, ImportSpoolServiceTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& test_info) { return test_info.param; });

}  // namespace
}  // namespace modelatlas::catalog
