// catalog-service: the records of AI models and hardware, over gRPC.
#include <csignal>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "catalog-service/catalog.h"
#include "catalog-service/dataset.h"
#include "catalog-service/metrics.h"
#include "catalog-service/service.h"
#include "catalog-service/store/change_follower.h"
#include "catalog-service/store/postgres_store.h"
#include "catalog-service/store/sqlite_store.h"
#include "common/server/logging.h"
#include "common/server/security.h"
#include "common/server/server.h"
#include "common/server/server_flags.h"

ABSL_FLAG(std::string, grpc_address, "0.0.0.0:50051",
          "gRPC listen address (host:port; port 0 = any free port)");
ABSL_FLAG(std::string, metrics_address, "0.0.0.0:9464",
          "Prometheus /metrics listen address (host:port; port 0 = any free port)");
ABSL_FLAG(std::string, store, "sqlite",
          "Storage backend: sqlite (embedded, one replica) or postgres (several replicas)");
ABSL_FLAG(std::string, sqlite_path, "modelatlas-catalog.db",
          "SQLite database file; created with the shipped dataset if it does not exist");
// 64 MiB: about 200,000 records of the generated benchmark catalog (about
// 335 bytes each, counted with the index), so a catalog of 100,000 is read
// from memory alone; 1,000,000 need 384 MiB (docs/BENCHMARKS.md, branch
// s13-getmodel). The default stays small: the budget is memory an operator
// grants the catalog, and the container's limit has to allow it.
ABSL_FLAG(int64_t, record_cache_bytes, int64_t{64} << 20,
          "Bytes of records kept in memory for reads, the index included (with PostgreSQL "
          "only under --postgres_record_cache); 0 = none");
ABSL_FLAG(bool, record_cache_preload, false,
          "Fill the record cache with the stored records before the catalog reports ready, "
          "until it is full (no eviction): for a --record_cache_bytes sized to hold the catalog");
ABSL_FLAG(bool, postgres_record_cache, false,
          "With --store=postgres: keep the record cache (--record_cache_bytes, "
          "--record_cache_preload) in front of the database too, and read the change log every "
          "--watch_poll_interval to forget the records other replicas wrote. A write through "
          "this replica is seen by it at once; a write through another replica within about "
          "one poll interval (bounded staleness), and at once after this replica has reported "
          "its revision (GetCatalogInfo, a List page, a Watch message); writes are checked in "
          "the database either way. While the change log cannot be read the cache is emptied at "
          "every poll. "
          "false = every read from the database");
ABSL_FLAG(int64_t, sqlite_mmap_bytes, 0,
          "Bytes of the SQLite file read through a memory map instead of read() copies "
          "(PRAGMA mmap_size; SQLite maps at most 0x7fff0000); mapped pages count in resident "
          "memory as file-backed (RssFile), the file's pages in the kernel's page cache; "
          "0 = none");
ABSL_FLAG(std::string, postgres_url, "",
          "PostgreSQL connection string (libpq: \"host=... dbname=...\" or postgresql://...); "
          "empty = the PG* environment variables");
ABSL_FLAG(int32_t, postgres_pool_size, 4, "PostgreSQL connections kept open");
ABSL_FLAG(absl::Duration, watch_progress_interval, absl::Seconds(10),
          "Longest a Watch stream stays silent: with no change for this long it sends a "
          "progress message with the current revision, so watchers can tell a quiet catalog "
          "from a lost one");
ABSL_FLAG(absl::Duration, watch_poll_interval, absl::Milliseconds(200),
          "How often Watch streams look for writes made by other replicas");
ABSL_FLAG(bool, load_shipped_dataset, true,
          "Load the shipped dataset into an empty catalog at start");
ABSL_FLAG(bool, refresh_shipped_dataset, true,
          "At start, replace the shipped records nobody changed with this binary's newer "
          "versions and add the records its dataset added (with --load_shipped_dataset; "
          "docs/IMPORT.md, \"Upgrades and the shipped dataset\")");
ABSL_FLAG(std::string, auth_tokens_file, "",
          "Bearer tokens, one \"TOKEN ROLE NAME\" per line (ROLE: reader or writer); when set "
          "(or --auth_client_roles_file), writes need the writer role");
ABSL_FLAG(std::string, auth_client_roles_file, "",
          "Client certificate roles, one \"COMMON_NAME ROLE\" per line (with mutual TLS)");
ABSL_FLAG(std::string, import_spool_dir, "",
          "Directory of the temporary files import uploads are spooled to as they arrive (unnamed: "
          "nothing is left behind); empty = the directory of --sqlite_path with SQLite, $TMPDIR "
          "(else /tmp) with PostgreSQL");
ABSL_FLAG(int64_t, transfer_memory_limit_bytes, int64_t{512} << 20,
          "Bytes that import uploads in progress and exports not yet read may hold together "
          "(one import file may reach 256 MiB); beyond it a transfer is refused with "
          "RESOURCE_EXHAUSTED. 0 = no limit");
ABSL_FLAG(bool, auth_protect_reads, false, "Reads need the reader or writer role too");

namespace {

const std::vector<std::string> kFlagNames = {"grpc_address",
                                             "metrics_address",
                                             "store",
                                             "sqlite_path",
                                             "postgres_url",
                                             "postgres_pool_size",
                                             "watch_poll_interval",
                                             "watch_progress_interval",
                                             "load_shipped_dataset",
                                             "refresh_shipped_dataset",
                                             "auth_tokens_file",
                                             "auth_client_roles_file",
                                             "auth_protect_reads",
                                             "record_cache_bytes",
                                             "record_cache_preload",
                                             "postgres_record_cache",
                                             "sqlite_mmap_bytes"};

void LogShippedRefresh(const modelatlas::catalog::ShippedDatasetRefresh& refresh) {
  if (refresh.already_current) {
    MA_LOG_INFO(
        "shipped dataset: catalog refreshed to version %d before, this binary's %d: "
        "nothing to refresh",
        refresh.catalog_version, refresh.binary_version);
    return;
  }
  if (!refresh.holds_shipped) {
    MA_LOG_INFO("the catalog holds no record of the shipped dataset: none refreshed");
    return;
  }
  MA_LOG_INFO(
      "shipped dataset: catalog at version %d, this binary's %d; %d records refreshed, %d added, "
      "%d current (%d at a newer version), %d deleted here and not created again, %d changed "
      "here and kept",
      refresh.catalog_version, refresh.binary_version, refresh.refreshed, refresh.added,
      refresh.current, refresh.newer, refresh.not_recreated, refresh.kept_changed);
  if (refresh.kept_changed > 0) {
    MA_LOG_INFO(
        "shipped records changed here and kept (this binary ships newer versions; `modelatlas "
        "import catalog-service/data/dataset.json` would write them over the changes): %s%s",
        absl::StrJoin(refresh.kept_changed_names, ", ").c_str(),
        refresh.kept_changed > static_cast<int>(refresh.kept_changed_names.size()) ? ", ..." : "");
  }
}

// --import_spool_dir, or where the store is: a disk the operator sized for
// the catalog rather than a /tmp that may be memory (tmpfs).
std::string ImportSpoolDirectory() {
  std::string directory = absl::GetFlag(FLAGS_import_spool_dir);
  if (!directory.empty()) return directory;
  if (absl::GetFlag(FLAGS_store) != "sqlite") return modelatlas::catalog::DefaultSpoolDirectory();
  const std::string path = absl::GetFlag(FLAGS_sqlite_path);
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

absl::StatusOr<std::unique_ptr<modelatlas::catalog::CatalogStore>> OpenStore() {
  using namespace modelatlas::catalog;
  const std::string backend = absl::GetFlag(FLAGS_store);
  if (backend == "sqlite") {
    const std::string path = absl::GetFlag(FLAGS_sqlite_path);
    const int64_t mmap_bytes = absl::GetFlag(FLAGS_sqlite_mmap_bytes);
    if (mmap_bytes < 0) return absl::InvalidArgumentError("--sqlite_mmap_bytes must be >= 0");
    auto store = SqliteStore::Open(path, 0, mmap_bytes);
    if (!store.ok()) return store.status();
    MA_LOG_INFO("opened SQLite store %s (schema version %d)", path, (*store)->schema_version());
    return std::unique_ptr<CatalogStore>(*std::move(store));
  }
  if (backend == "postgres") {
    auto store = PostgresStore::Open(absl::GetFlag(FLAGS_postgres_url),
                                     absl::GetFlag(FLAGS_postgres_pool_size));
    if (!store.ok()) return store.status();
    MA_LOG_INFO("opened PostgreSQL store (schema version %d)", (*store)->schema_version());
    return std::unique_ptr<CatalogStore>(*std::move(store));
  }
  return absl::InvalidArgumentError("--store must be sqlite or postgres, got \"" + backend + "\"");
}

int Fail(const absl::Status& status) {
  MA_LOG_ERROR("%s", status.ToString());
  return EXIT_FAILURE;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace modelatlas;
  ServerOptions options = BootstrapServer(argc, argv,
                                          {.program = "catalog-service",
                                           .usage = "Serves the ModelAtlas catalog over gRPC.",
                                           .env_prefix = "MODELATLAS_CATALOG_",
                                           .flag_names = kFlagNames});
  options.grpc_address = absl::GetFlag(FLAGS_grpc_address);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  if (absl::GetFlag(FLAGS_watch_poll_interval) <= absl::ZeroDuration()) {
    ExitWithFlagError("catalog-service", "--watch_poll_interval must be positive");
  }
  if (absl::GetFlag(FLAGS_watch_progress_interval) <= absl::ZeroDuration()) {
    ExitWithFlagError("catalog-service", "--watch_progress_interval must be positive");
  }
  const int64_t transfer_limit = absl::GetFlag(FLAGS_transfer_memory_limit_bytes);
  if (transfer_limit < 0) {
    ExitWithFlagError("catalog-service", "--transfer_memory_limit_bytes must be >= 0");
  }
  // Outlives the server: transfers release their bytes when they end.
  ByteBudget transfer_budget(transfer_limit, "--transfer_memory_limit_bytes");
  ServerRunner runner(std::move(options));
  auto store = OpenStore();
  if (!store.ok()) return Fail(store.status());
  auto store_metrics =
      std::make_shared<catalog::StoreMetrics>(runner.registry(), (*store)->backend());
  // The store's metrics time the database; the cache sits in front of them.
  std::unique_ptr<catalog::CatalogStore> instrumented =
      catalog::InstrumentStore(*std::move(store), store_metrics);
  const int64_t cache_bytes = absl::GetFlag(FLAGS_record_cache_bytes);
  if (cache_bytes < 0) {
    return Fail(absl::InvalidArgumentError("--record_cache_bytes must be >= 0"));
  }
  const bool on_postgres = instrumented->backend() == "postgres";
  const bool postgres_cache = absl::GetFlag(FLAGS_postgres_record_cache);
  if (postgres_cache && !on_postgres) {
    MA_LOG_WARNING("--postgres_record_cache has no effect: the store is not PostgreSQL");
  }
  catalog::CachedStore* record_cache = nullptr;
  // With PostgreSQL: the revision the change follower starts after, read
  // before anything is read into the cache, so no write since is missed.
  int64_t follow_after_revision = 0;
  if (cache_bytes > 0 && (!on_postgres || postgres_cache)) {
    auto cached = std::make_unique<catalog::CachedStore>(std::move(instrumented),
                                                         static_cast<size_t>(cache_bytes));
    if (on_postgres) {
      absl::StatusOr<int64_t> revision = cached->Revision();
      if (!revision.ok()) return Fail(revision.status());
      follow_after_revision = *revision;
    }
    record_cache = cached.get();
    runner.AddCollectable(catalog::RecordCacheCollectable(cached.get()));
    instrumented = std::move(cached);
  } else if (absl::GetFlag(FLAGS_record_cache_preload)) {
    MA_LOG_WARNING("--record_cache_preload has no effect: there is no record cache (%s)",
                   cache_bytes == 0 ? "--record_cache_bytes=0"
                                    : "the store is PostgreSQL without --postgres_record_cache");
  }
  catalog::Catalog catalog(std::move(instrumented));
  // Declared after the catalog, which owns the cache: stopped (joined) first.
  std::unique_ptr<catalog::ChangeFollower> change_follower;
  if (record_cache != nullptr && on_postgres) {
    change_follower = std::make_unique<catalog::ChangeFollower>(
        record_cache, follow_after_revision, absl::GetFlag(FLAGS_watch_poll_interval));
    change_follower->Start();
    MA_LOG_INFO("record cache on PostgreSQL: following the change log after revision %lld",
                static_cast<long long>(follow_after_revision));
  }
  catalog::ImportMetrics import_metrics(runner.registry());
  runner.AddCollectable(catalog::CatalogStateCollectable(&catalog));

  if (absl::GetFlag(FLAGS_load_shipped_dataset)) {
    auto loaded = catalog::LoadShippedDatasetIfEmpty(catalog);
    if (!loaded.ok()) return Fail(loaded.status());
    if (loaded->loaded) {
      MA_LOG_INFO("loaded the shipped dataset: %d models, %d hardware records", loaded->models,
                  loaded->hardware);
    } else if (absl::GetFlag(FLAGS_refresh_shipped_dataset)) {
      auto refreshed = catalog::RefreshShippedRecordsOnStart(catalog);
      if (!refreshed.ok()) return Fail(refreshed.status());
      LogShippedRefresh(*refreshed);
    }
  }

  auto authorizer = Authorizer::FromFiles(absl::GetFlag(FLAGS_auth_tokens_file),
                                          absl::GetFlag(FLAGS_auth_client_roles_file),
                                          absl::GetFlag(FLAGS_auth_protect_reads));
  if (!authorizer.ok()) return Fail(authorizer.status());
  if ((*authorizer)->enabled()) {
    MA_LOG_INFO("writes need the writer role%s",
                absl::GetFlag(FLAGS_auth_protect_reads) ? "; reads the reader role" : "");
  }
  catalog::CatalogServiceImpl service(
      &catalog, absl::GetFlag(FLAGS_watch_poll_interval),
      [&import_metrics](const catalog::v1::ImportReport& report) { import_metrics.Record(report); },
      authorizer->get(), runner.call_limiter());
  service.SetWatchProgressInterval(absl::GetFlag(FLAGS_watch_progress_interval));
  service.SetTransferBudget(&transfer_budget);
  service.SetImportSpoolDirectory(ImportSpoolDirectory());
  runner.OnShutdown([&service] { service.StopStreams(); });
  runner.AddService(&service, catalog::v1::CatalogService::service_full_name());
  if (absl::Status started = runner.Start(); !started.ok()) return Fail(started);
  // A database an older binary wrote gets its new columns filled here, in
  // batches with progress in the log, while the server is live but not
  // ready (minutes at a million models), rather than in the first List that
  // needs them; a List arriving meanwhile is answered without them.
  // SIGTERM and SIGINT are blocked until WaitForShutdownSignal takes them:
  // one pending stops the fill between batches, and the shutdown follows.
  const auto shutdown_pending = [] {
    sigset_t pending;
    sigpending(&pending);
    return sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1;
  };
  absl::Status filled = catalog.FillOrderValues(nullptr, shutdown_pending);
  if (!filled.ok() && !absl::IsCancelled(filled)) return Fail(filled);
  if (filled.ok() && record_cache != nullptr && absl::GetFlag(FLAGS_record_cache_preload)) {
    const absl::Time start = absl::Now();
    absl::StatusOr<int64_t> kept = record_cache->Preload(shutdown_pending);
    if (!kept.ok()) return Fail(kept.status());
    MA_LOG_INFO("record cache preloaded: %lld records, %.1f MiB, in %.1f s",
                static_cast<long long>(*kept), record_cache->stats().bytes / 1048576.0,
                absl::ToDoubleSeconds(absl::Now() - start));
  }
  // The store is open and current: the catalog is ready.
  if (filled.ok()) runner.SetReady(true);
  runner.WaitForShutdownSignal();
  return EXIT_SUCCESS;
}
