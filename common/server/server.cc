#include "common/server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/server/logging.h"
#include "common/server/metrics_exposer.h"
#include "common/server/process_metrics.h"
#include "common/server/request_parsing.h"

namespace modelatlas {

ServerRunner::ServerRunner(ServerOptions options)
    : options_(std::move(options)),
      registry_(std::make_shared<prometheus::Registry>()),
      server_metrics_(*registry_, "server"),
      call_limiter_(options_.program, options_.max_concurrent_calls, *registry_) {
  collectables_.push_back(call_limiter_.InFlightCollectable());
}

ServerRunner::~ServerRunner() { ShutdownNow(); }

void ServerRunner::PrepareProcess() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void ServerRunner::AddService(grpc::Service* service, absl::string_view full_name) {
  readiness_names_.emplace_back(full_name);
  call_limiter_.CountService(full_name);
  const auto* descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(std::string(full_name));
  if (descriptor == nullptr) {
    services_.push_back(service);
    return;
  }
  server_metrics_.RegisterService(*descriptor);
  // Bytes that are not a request answer INVALID_ARGUMENT, not UNIMPLEMENTED.
  guarded_services_.push_back(GuardRequestParsing(service, *descriptor));
  services_.push_back(guarded_services_.back().get());
}

void ServerRunner::AddCollectable(std::shared_ptr<prometheus::Collectable> collectable) {
  collectables_.push_back(std::move(collectable));
}

absl::Status ServerRunner::Start() {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(options_.tls);
  if (!credentials.ok()) return credentials.status();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options_.grpc_address, *credentials, &grpc_port_);
  builder.SetMaxReceiveMessageSize(options_.max_receive_message_bytes);
  builder.AddChannelArgument(
      GRPC_ARG_MAX_CONNECTION_AGE_MS,
      static_cast<int>(absl::ToInt64Milliseconds(options_.max_connection_age)));
  if (options_.max_concurrent_streams_per_connection > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                               options_.max_concurrent_streams_per_connection);
  }
  if (options_.grpc_memory_limit_bytes > 0) {
    grpc::ResourceQuota quota(options_.program);
    quota.Resize(static_cast<size_t>(options_.grpc_memory_limit_bytes));
    builder.SetResourceQuota(quota);
  }
  for (grpc::Service* service : services_) builder.RegisterService(service);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(server_metrics_.ServerInterceptorFactory());
  interceptors.push_back(call_limiter_.InterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));

  server_ = builder.BuildAndStart();
  if (server_ == nullptr || grpc_port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen for gRPC on ", options_.grpc_address,
                                               " (address in use or invalid?)"));
  }
  auto* health = server_->GetHealthCheckService();
  health->SetServingStatus("", true);
  health->SetServingStatus(kLivenessService, true);
  SetReady(false);

  try {
    exposer_ = std::make_unique<prometheus::Exposer>(options_.metrics_address);
  } catch (const std::exception& e) {
    ShutdownNow();
    return absl::UnavailableError(
        absl::StrCat("cannot listen for metrics on ", options_.metrics_address, ": ", e.what()));
  }
  exposer_->RegisterCollectable(registry_);
  process_metrics_ = ProcessMetricsCollectable();
  exposer_->RegisterCollectable(process_metrics_);
  for (const auto& collectable : collectables_) exposer_->RegisterCollectable(collectable);
  const std::vector<int> ports = exposer_->GetListeningPorts();
  metrics_port_ = ports.empty() ? 0 : ports.front();

  MA_LOG_INFO(
      "serving gRPC%s on port %d (%s), metrics on port %d (%s)/metrics",
      options_.tls.enabled() ? (options_.tls.ca_file.empty() ? " (TLS)" : " (mutual TLS)") : "",
      grpc_port_, options_.grpc_address, metrics_port_, options_.metrics_address);
  return WritePortFile();
}

void ServerRunner::SetReady(bool ready) {
  // Once shutdown has begun, nothing turns readiness back on.
  if (server_ == nullptr || (ready && stopped_)) return;
  if (ready_.exchange(ready) != ready || !ready) {
    auto* health = server_->GetHealthCheckService();
    health->SetServingStatus(kReadinessService, ready);
    for (const std::string& name : readiness_names_) health->SetServingStatus(name, ready);
  }
}

absl::Status ServerRunner::WritePortFile() const {
  if (options_.port_file.empty()) return absl::OkStatus();
  const std::string temp = options_.port_file + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << "grpc_port=" << grpc_port_ << "\nmetrics_port=" << metrics_port_ << "\n";
    if (!out.good()) return absl::UnavailableError("cannot write port file " + temp);
  }
  if (std::rename(temp.c_str(), options_.port_file.c_str()) != 0) {
    return absl::UnavailableError("cannot write port file " + options_.port_file);
  }
  return absl::OkStatus();
}

void ServerRunner::WaitForShutdownSignal() {
  // A helper thread turns a signal into a shutdown request; Shutdown() from
  // elsewhere wakes it with SIGTERM to itself.
  std::thread signal_thread([this] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int signal_number = 0;
    sigwait(&set, &signal_number);
    if (!shutdown_requested_.HasBeenNotified()) {
      MA_LOG_INFO("received %s: shutting down", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
      shutdown_requested_.Notify();
    }
  });
  shutdown_requested_.WaitForNotification();
  signal_thread.detach();
  ShutdownNow();
}

void ServerRunner::Shutdown() {
  if (!shutdown_requested_.HasBeenNotified()) shutdown_requested_.Notify();
}

void ServerRunner::ShutdownNow() {
  if (server_ == nullptr || stopped_.exchange(true)) return;
  SetReady(false);
  if (options_.readiness_drain > absl::ZeroDuration()) {
    MA_LOG_INFO("readiness off; draining for %s", absl::FormatDuration(options_.readiness_drain));
    absl::SleepFor(options_.readiness_drain);
  }
  server_->GetHealthCheckService()->SetServingStatus(kLivenessService, false);
  for (const std::function<void()>& end_streams : on_shutdown_) end_streams();
  const auto deadline =
      std::chrono::system_clock::now() + absl::ToChronoMilliseconds(options_.shutdown_deadline);
  server_->Shutdown(deadline);
  server_->Wait();
  MA_LOG_DEBUG("gRPC server drained");
  // Not exposer_.reset(): that alone waits up to 2 s (metrics_exposer.h).
  StopExposer(std::move(exposer_), options_.metrics_address);
  MA_LOG_INFO("stopped");
}

}  // namespace modelatlas
