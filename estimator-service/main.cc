// estimator-service: what it takes to run or train a model, over gRPC.
#include <atomic>
#include <cstdlib>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/fetch/hf_hub.h"
#include "common/server/allocator.h"
#include "common/server/logging.h"
#include "common/server/scrape_metrics.h"
#include "common/server/security.h"
#include "common/server/server.h"
#include "common/server/server_flags.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/catalog/catalog_client.h"
#include "estimator-service/service.h"
#include "prometheus/counter.h"

ABSL_FLAG(std::string, grpc_address, "0.0.0.0:50052",
          "gRPC listen address (host:port; port 0 = any free port)");
ABSL_FLAG(std::string, metrics_address, "0.0.0.0:9465",
          "Prometheus /metrics listen address (host:port; port 0 = any free port)");
ABSL_FLAG(std::string, catalog_address, "localhost:50051",
          "Address of catalog-service (host:port, or a gRPC target such as dns:///catalog:50051)");
ABSL_FLAG(absl::Duration, catalog_timeout, absl::Seconds(5),
          "Longest a call to the catalog may take when the caller sets no shorter deadline");
ABSL_FLAG(bool, snapshot, true,
          "Keep an in-memory copy of the catalog, fresh through Watch (else call the catalog "
          "per request)");
ABSL_FLAG(absl::Duration, readiness_interval, absl::Seconds(2),
          "How often readiness checks that the catalog answers");
ABSL_FLAG(absl::Duration, snapshot_max_age, absl::Seconds(60),
          "Readiness is NOT_SERVING once the catalog snapshot has not heard from the catalog "
          "for this long (a following snapshot hears at least every --watch_progress_interval "
          "of the catalog, 10s by default)");
ABSL_FLAG(std::string, catalog_tls_ca_file, "",
          "PEM CA to verify the catalog's certificate: reach the catalog over TLS");
ABSL_FLAG(std::string, catalog_tls_cert_file, "",
          "PEM client certificate for the catalog (mutual TLS)");
ABSL_FLAG(std::string, catalog_tls_key_file, "", "PEM private key of --catalog_tls_cert_file");
ABSL_FLAG(std::string, catalog_token_file, "",
          "File holding a bearer token for the catalog (when its reads are protected)");

ABSL_FLAG(std::string, hf_endpoint, "",
          "Hugging Face Hub the estimator reads model repositories from (callers name only a "
          "repository id and revision); empty = $HF_ENDPOINT, else https://huggingface.co");
ABSL_FLAG(std::string, hf_token_file, "",
          "File holding the Hugging Face token for gated or private repositories (empty = "
          "$HF_TOKEN, $HF_TOKEN_PATH or $HF_HOME/token, as huggingface_hub)");
ABSL_FLAG(std::string, hf_cache_dir, "",
          "Hugging Face hub cache (models--org--name/...); empty = $HF_HUB_CACHE, "
          "$HF_HOME/hub or ~/.cache/huggingface/hub");
ABSL_FLAG(bool, hf_offline, false,
          "Read Hugging Face repositories from the cache only, never the network (also "
          "$HF_HUB_OFFLINE=1)");
ABSL_FLAG(int64_t, answer_cache_bytes, int64_t{16} << 20,
          "Memory for answers kept by request (memory estimates and plans, replied again to "
          "the same request bytes until the catalog changes), bytes; 0 = keep none");
ABSL_FLAG(int32_t, hf_fetch_threads, 2,
          "Threads fetching from the Hub (blocking I/O kept off the gRPC threads), 1..16");

namespace {

const std::vector<std::string> kFlagNames = {
    "grpc_address",         "metrics_address",    "catalog_address",     "catalog_timeout",
    "readiness_interval",   "snapshot",           "catalog_tls_ca_file", "catalog_tls_cert_file",
    "catalog_tls_key_file", "catalog_token_file", "hf_endpoint",         "hf_token_file",
    "hf_cache_dir",         "hf_offline",         "hf_fetch_threads",    "snapshot_max_age",
    "answer_cache_bytes"};

// Keeps readiness equal to EstimatorReadiness (the catalog answers and the
// snapshot, when kept, is loaded and no older than `max_age`), checking
// every interval; logs each change with its reason.
void WatchCatalog(modelatlas::estimator::CatalogClient* catalog,
                  const modelatlas::estimator::CatalogSnapshot* snapshot,
                  modelatlas::ServerRunner* runner, absl::Duration interval, absl::Duration max_age,
                  absl::Notification* stop) {
  bool was_ready = false;
  do {
    auto info = catalog->GetCatalogInfo(std::max(interval, absl::Seconds(1)));
    const absl::Status ready =
        modelatlas::estimator::EstimatorReadiness(info.status(), snapshot, max_age);
    if (ready.ok() != was_ready) {
      if (ready.ok()) {
        MA_LOG_INFO("catalog at %s answers (revision %d, %d models): ready", catalog->address(),
                    info->revision(), info->model_count());
      } else {
        MA_LOG_WARNING("catalog at %s: %s: not ready", catalog->address(),
                       std::string(ready.message()));
      }
    }
    runner->SetReady(ready.ok());
    was_ready = ready.ok();
  } while (!stop->WaitForNotificationWithTimeout(interval));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace modelatlas;
  ServerOptions options = BootstrapServer(argc, argv,
                                          {.program = "estimator-service",
                                           .usage = "Serves ModelAtlas estimates over gRPC.",
                                           .env_prefix = "MODELATLAS_ESTIMATOR_",
                                           .flag_names = kFlagNames});
  options.grpc_address = absl::GetFlag(FLAGS_grpc_address);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  // A plan over every accelerator builds and frees a 0.3 MB reply and a few
  // thousand strings per call: keep the freed heap for the next call instead
  // of faulting it back in (common/server/allocator.h; took a computed plan's
  // CPU per call to 0.8x, docs/BENCHMARKS.md, issue 22 point 1).
  KeepHeapForLargeReplies();
  // A GGUF header sent by `--gguf` holds the vocabulary: ~8 MiB for a 128k
  // vocabulary, more for larger ones.
  options.max_receive_message_bytes = std::max(options.max_receive_message_bytes, 64 << 20);
  for (const char* flag : {"catalog_timeout", "readiness_interval", "snapshot_max_age"}) {
    const absl::Duration value =
        std::string(flag) == "catalog_timeout"      ? absl::GetFlag(FLAGS_catalog_timeout)
        : std::string(flag) == "readiness_interval" ? absl::GetFlag(FLAGS_readiness_interval)
                                                    : absl::GetFlag(FLAGS_snapshot_max_age);
    if (value <= absl::ZeroDuration()) {
      ExitWithFlagError("estimator-service", absl::StrCat("--", flag, " must be positive"));
    }
  }
  {
    HfHubOptions hub = HfHubOptions::FromEnvironment();
    if (!absl::GetFlag(FLAGS_hf_endpoint).empty()) hub.endpoint = absl::GetFlag(FLAGS_hf_endpoint);
    while (!hub.endpoint.empty() && hub.endpoint.back() == '/') hub.endpoint.pop_back();
    if (!absl::StartsWith(hub.endpoint, "http://") && !absl::StartsWith(hub.endpoint, "https://")) {
      ExitWithFlagError("estimator-service", "--hf_endpoint must be an http:// or https:// URL");
    }
    if (!absl::GetFlag(FLAGS_hf_token_file).empty()) {
      absl::StatusOr<std::string> token =
          ReadTokenFile(absl::GetFlag(FLAGS_hf_token_file), "hf_token_file");
      if (!token.ok()) ExitWithFlagError("estimator-service", token.status().ToString());
      hub.token = *token;
    }
    if (!absl::GetFlag(FLAGS_hf_cache_dir).empty())
      hub.cache_dir = absl::GetFlag(FLAGS_hf_cache_dir);
    if (absl::GetFlag(FLAGS_hf_offline)) hub.offline = true;
    const int threads = absl::GetFlag(FLAGS_hf_fetch_threads);
    if (threads < 1 || threads > 16) {
      ExitWithFlagError("estimator-service", "--hf_fetch_threads must be in 1..16");
    }
    MA_LOG_INFO("Hugging Face repositories from %s%s", hub.endpoint,
                hub.offline ? " (offline: cache only)" : "");
    estimator::ConfigureHub(std::move(hub), threads);
  }
  ServerRunner runner(std::move(options));
  GrpcMetrics client_metrics(runner.registry(), "client");
  client_metrics.RegisterService(
      *google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          catalog::v1::CatalogService::service_full_name()));
  estimator::CatalogConnection connection;
  {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = MakeChannelCredentials(
        {absl::GetFlag(FLAGS_catalog_tls_cert_file), absl::GetFlag(FLAGS_catalog_tls_key_file),
         absl::GetFlag(FLAGS_catalog_tls_ca_file)});
    if (!credentials.ok()) {
      MA_LOG_ERROR("%s", credentials.status().ToString());
      return EXIT_FAILURE;
    }
    connection.credentials = *credentials;
    if (!absl::GetFlag(FLAGS_catalog_token_file).empty()) {
      absl::StatusOr<std::string> token =
          ReadTokenFile(absl::GetFlag(FLAGS_catalog_token_file), "catalog_token_file");
      if (!token.ok()) {
        MA_LOG_ERROR("%s", token.status().ToString());
        return EXIT_FAILURE;
      }
      connection.token = *token;
    }
  }
  estimator::CatalogClient catalog(absl::GetFlag(FLAGS_catalog_address), &client_metrics,
                                   absl::GetFlag(FLAGS_catalog_timeout), connection);
  std::unique_ptr<estimator::CatalogSnapshot> snapshot;
  if (absl::GetFlag(FLAGS_snapshot)) {
    snapshot = std::make_unique<estimator::CatalogSnapshot>(catalog.channel(), catalog.address());
    snapshot->Start();
  }
  auto& estimates = prometheus::BuildCounter()
                        .Name("modelatlas_estimator_estimates_total")
                        .Help("Requests answered, by kind of estimate.")
                        .Register(runner.registry());
  // Resolved once: Family::Add locks and hashes the labels on every call.
  absl::flat_hash_map<std::string, prometheus::Counter*> estimates_by_kind;
  for (const char* kind :
       {"inference_memory", "plan_inference", "count_parameters", "runnable_models",
        "training_compute", "training_memory", "plan_training", "audit_model", "audit_catalog",
        "max_context", "max_batch", "best_weight_format", "fit_matrix"}) {
    estimates_by_kind[kind] = &estimates.Add({{"kind", kind}});
  }
  const absl::Duration snapshot_max_age = absl::GetFlag(FLAGS_snapshot_max_age);
  runner.AddCollectable(ScrapeTimeCollectable([snapshot = snapshot.get(), snapshot_max_age] {
    std::vector<prometheus::MetricFamily> families;
    if (snapshot == nullptr) return families;
    const bool loaded = snapshot->loaded();
    families.push_back(SampleFamily("modelatlas_estimator_snapshot_loaded",
                                    "1 once the catalog snapshot has loaded.",
                                    {{{}, loaded ? 1.0 : 0.0}}));
    families.push_back(SampleFamily("modelatlas_estimator_snapshot_revision",
                                    "Catalog revision the snapshot reflects.",
                                    {{{}, static_cast<double>(snapshot->revision())}}));
    if (loaded) {
      const absl::Time last_heard = snapshot->last_heard();
      const absl::Duration age = absl::Now() - last_heard;
      families.push_back(
          SampleFamily("modelatlas_estimator_snapshot_age_seconds",
                       "Time since the snapshot last heard from the catalog, seconds.",
                       {{{}, absl::ToDoubleSeconds(age)}}));
      families.push_back(SampleFamily(
          "modelatlas_estimator_snapshot_last_sync_timestamp_seconds",
          "When the snapshot last heard from the catalog (a load or a Watch message), Unix "
          "seconds.",
          {{{}, absl::ToDoubleSeconds(last_heard - absl::UnixEpoch())}}));
      families.push_back(SampleFamily(
          "modelatlas_estimator_snapshot_stale",
          "1 while the snapshot is older than --snapshot_max_age (readiness NOT_SERVING).",
          {{{}, age > snapshot_max_age ? 1.0 : 0.0}}));
    }
    families.push_back(
        SampleFamily("modelatlas_estimator_snapshot_records", "Records in the catalog snapshot.",
                     {{{{"kind", "model"}}, static_cast<double>(snapshot->model_count())},
                      {{{"kind", "hardware"}}, static_cast<double>(snapshot->hardware_count())}}));
    return families;
  }));
  const int64_t answer_cache_bytes = absl::GetFlag(FLAGS_answer_cache_bytes);
  if (answer_cache_bytes < 0) {
    ExitWithFlagError("estimator-service", "--answer_cache_bytes must be 0 (off) or more");
  }
  estimator::AnswerCache answers(static_cast<size_t>(answer_cache_bytes));
  runner.AddCollectable(ScrapeTimeCollectable([&answers] {
    return std::vector<prometheus::MetricFamily>{
        SampleFamily("modelatlas_estimator_answer_cache_hits_total",
                     "Memory estimates and plans replied from kept answers.",
                     {{{}, static_cast<double>(answers.hits())}}, prometheus::MetricType::Counter),
        SampleFamily("modelatlas_estimator_answer_cache_misses_total",
                     "Memory estimates and plans computed (no kept answer for the request at "
                     "the snapshot's revision).",
                     {{{}, static_cast<double>(answers.misses())}},
                     prometheus::MetricType::Counter),
        SampleFamily("modelatlas_estimator_answer_cache_bytes",
                     "Bytes of kept answers (and their keys), at most --answer_cache_bytes.",
                     {{{}, static_cast<double>(answers.size_bytes())}})};
  }));
  estimator::EstimatorServiceImpl service(
      &catalog, snapshot.get(),
      [&estimates, &estimates_by_kind](const char* kind) {
        // The service names kinds with string literals: each is found by its
        // address in this thread's short list, and by its name (hashed) only
        // the first time (the name's lookup was 200-300 instructions of
        // every computed estimate: docs/BENCHMARKS.md, session 15).
        constexpr size_t kRemembered = 32;  // more kinds than the service has
        thread_local std::vector<std::pair<const char*, prometheus::Counter*>> remembered;
        for (const auto& [address, counter] : remembered) {
          if (address == kind) return counter->Increment();
        }
        auto known = estimates_by_kind.find(kind);
        prometheus::Counter& counter =
            known != estimates_by_kind.end() ? *known->second : estimates.Add({{"kind", kind}});
        if (remembered.size() < kRemembered) remembered.emplace_back(kind, &counter);
        counter.Increment();
      },
      runner.call_limiter(), &answers);
  runner.AddService(&service, estimator::v1::EstimatorService::service_full_name());
  if (absl::Status started = runner.Start(); !started.ok()) {
    MA_LOG_ERROR("%s", started.ToString());
    return EXIT_FAILURE;
  }
  MA_LOG_INFO("reading the catalog at %s", catalog.address());

  absl::Notification stop_watching;
  std::thread watcher(WatchCatalog, &catalog, snapshot.get(), &runner,
                      absl::GetFlag(FLAGS_readiness_interval), snapshot_max_age, &stop_watching);
  runner.WaitForShutdownSignal();
  stop_watching.Notify();
  watcher.join();
  if (snapshot != nullptr) snapshot->Stop();
  return EXIT_SUCCESS;
}
