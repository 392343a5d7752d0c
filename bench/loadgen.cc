// loadgen: drives any RPC of the ModelAtlas services (or the echo baseline)
// with a request given as JSON, closed-loop at a set concurrency or
// open-loop at a set rate, through gRPC's callback API; checks every
// response's status, counts errors by code, and reports QPS and latency
// percentiles.
//
//   loadgen --target=127.0.0.1:50052
//     --method=modelatlas.estimator.v1.EstimatorService/EstimateInferenceMemory
//     --request='{"model": "Llama 3.1 8B", "workload": {"context_length_tokens": 8192}}'
//     --concurrency=32 --duration=10s [--rate=5000] [--json]
//
// --vary=N makes N requests, "{i}" in --request replaced by 0 .. N-1, and
// gives each call one of them at random (many clients asking for many
// records); each run starts the random sequence afresh (--seed to replay one).
// --requests_file=FILE does the same with the requests of FILE, one JSON
// request per line (requests that differ in more than a number: many models,
// contexts and formats).
//
// Server-streaming methods (ListRunnableModels, ...) are driven too: a call
// is the whole stream, and the report adds messages, items (--count_field:
// the entries of a repeated field of each message) and bytes per second.
//
// Open loop measures latency from when each call was due, not when it was
// sent, so a stalled server cannot hide its queueing (coordinated omission).
//
// CPU per call over the measured window only (not the warm-up, the
// connections' setup or the drain after it): its own (getrusage) and, with
// --server_pid, the server's (/proc/PID/stat), so that a comparison of two
// servers can see whether the client did the same work for both. Context
// switches per call beside them, over the same window: on a machine whose
// cores the client and the server share, the side that waits for the other
// sleeps and is woken more often per call, which costs it CPU that no
// difference on the wire explains (docs/BENCHMARKS.md, session 16,
// branch s16-transport).
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"
#include "modelatlas/bench/v1/echo.grpc.pb.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50052", "Server address");
ABSL_FLAG(std::string, method, "", "Full method: package.Service/Method");
ABSL_FLAG(std::string, request, "{}", "The request in protobuf's JSON mapping");
ABSL_FLAG(int32_t, vary, 0,
          "Make this many requests, \"{i}\" in --request replaced by 0 .. N-1, and give each "
          "call one at random (0 = one request, as given)");
ABSL_FLAG(std::string, requests_file, "",
          "A file of requests, one in protobuf's JSON mapping per line (empty lines skipped): "
          "each call is given one of them at random, as with --vary (not with --vary or "
          "--request)");
ABSL_FLAG(uint64_t, seed, 0,
          "--vary: where the random sequence of requests starts (0 = a new random start "
          "per run, printed with the results). A fixed seed replays the same ids, which a "
          "server's cache then holds from the run before: a later run would measure hits "
          "that independent clients would not give it");
ABSL_FLAG(int32_t, concurrency, 32, "Closed loop: calls in flight");
ABSL_FLAG(double, rate, 0, "Open loop: calls per second (0 = closed loop)");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(10), "Measured time");
ABSL_FLAG(absl::Duration, warmup, absl::Seconds(1), "Unmeasured time before");
ABSL_FLAG(absl::Duration, deadline, absl::Seconds(5), "Deadline of each call");
ABSL_FLAG(int32_t, channels, 4, "Client channels (connections) the calls spread over");
ABSL_FLAG(bool, json, false, "Print one JSON line instead of text");
ABSL_FLAG(int32_t, server_pid, 0,
          "The server's process id: report its CPU time (user + system, all threads) per "
          "call over the measured window (0 = not measured)");
ABSL_FLAG(std::string, count_field, "",
          "Server-streaming methods: a repeated field of the response message whose entries "
          "are counted as items (e.g. models); empty = each message is one item");

namespace {

using Clock = std::chrono::steady_clock;

struct Results {
  std::mutex mutex;
  std::vector<double> latencies_us;
  std::map<std::string, int64_t> codes;
  bool measuring = false;
  // Size of an OK response, bytes (the last one seen; a stream's total).
  std::atomic<size_t> response_bytes{0};
  // OK responses while measuring and their bytes: the mean size, which a
  // baseline replying as many bytes is given (records drawn at random
  // differ in size; the last one is any of them).
  int64_t ok_responses = 0;
  int64_t ok_response_bytes = 0;
  // Server-streaming calls: messages, items and bytes received while measuring.
  std::atomic<int64_t> messages{0};
  std::atomic<int64_t> items{0};
  std::atomic<int64_t> stream_bytes{0};

  // A finished call; `bytes`: its response's size (a stream's total) when OK.
  void Record(Clock::time_point due, const grpc::Status& status, size_t bytes) {
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - due).count();
    if (status.ok()) response_bytes = bytes;
    std::lock_guard<std::mutex> lock(mutex);
    if (!measuring) return;
    latencies_us.push_back(us);
    ++codes[absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()))];
    if (status.ok()) {
      ++ok_responses;
      ok_response_bytes += static_cast<int64_t>(bytes);
    }
  }
};

// CPU time, microseconds (user + system): this process's (getrusage), or a
// server's from /proc/PID/stat (all its threads; clock ticks), -1 if
// unreadable.
double OwnCpuMicros() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto micros = [](const timeval& t) { return t.tv_sec * 1e6 + t.tv_usec; };
  return micros(usage.ru_utime) + micros(usage.ru_stime);
}
double ProcessCpuMicros(int pid) {
  std::ifstream file(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // Fields after the command (in parentheses, which may hold spaces): state
  // is field 3, utime and stime fields 14 and 15 (proc(5)).
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
  if (fields.size() < 13) return -1;
  double ticks = 0;
  for (const size_t field : {11, 12}) {  // 14 and 15, counted from state (3)
    int64_t value = 0;
    if (!absl::SimpleAtoi(fields[field], &value)) return -1;
    ticks += static_cast<double>(value);
  }
  return ticks * 1e6 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Context switches (voluntary and involuntary), -1 if unreadable: this
// process's (getrusage sums them over all its threads), or a server's,
// summed over its threads' /proc/PID/task/TID/status (proc(5): the
// process's own status file counts its first thread only; a thread that
// exits within the window takes its count with it).
int64_t OwnContextSwitches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_nvcsw + usage.ru_nivcsw;
}
int64_t ProcessContextSwitches(int pid) {
  std::error_code error;
  std::filesystem::directory_iterator tasks(absl::StrCat("/proc/", pid, "/task"), error);
  if (error) return -1;
  int64_t total = 0;
  for (const std::filesystem::directory_entry& task : tasks) {
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      for (const absl::string_view key :
           {"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"}) {
        int64_t count = 0;
        if (absl::StartsWith(line, key) &&
            absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(line).substr(key.size())),
                             &count)) {
          total += count;
        }
      }
    }
  }
  return total;
}

// splitmix64's finalizer: a well-spread hash of a counter.
uint64_t Mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

// One server-streaming call driven as a bidirectional one (the wire is the
// same): the request, a half-close, then every message until the status.
class StreamCall : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  StreamCall(grpc::GenericStub* stub, const std::string& method, const grpc::ByteBuffer& request,
             const google::protobuf::Message* prototype,
             const google::protobuf::FieldDescriptor* count, Results* results,
             Clock::time_point due, std::function<void(grpc::Status)> done)
      : request_(request),
        prototype_(prototype),
        count_(count),
        results_(results),
        due_(due),
        done_(std::move(done)) {
    context_.set_deadline(std::chrono::system_clock::now() +
                          absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_deadline)));
    stub->PrepareBidiStreamingCall(&context_, method, grpc::StubOptions(), this);
    StartWrite(&request_, grpc::WriteOptions().set_last_message());
    StartRead(&message_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;
    const size_t bytes = message_.Length();
    total_bytes_ += bytes;
    int64_t items = 1;
    if (count_ != nullptr) {
      std::unique_ptr<google::protobuf::Message> parsed(prototype_->New());
      grpc::SerializationTraits<google::protobuf::Message>::Deserialize(&message_, parsed.get());
      items = parsed->GetReflection()->FieldSize(*parsed, count_);
    }
    if (Measuring()) {
      results_->messages.fetch_add(1);
      results_->items.fetch_add(items);
      results_->stream_bytes.fetch_add(static_cast<int64_t>(bytes));
    }
    message_.Clear();
    StartRead(&message_);
  }
  void OnDone(const grpc::Status& status) override {
    results_->Record(due_, status, total_bytes_);
    auto done = std::move(done_);
    delete this;
    done(status);
  }

 private:
  bool Measuring() {
    std::lock_guard<std::mutex> lock(results_->mutex);
    return results_->measuring;
  }

  grpc::ClientContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer message_;
  const google::protobuf::Message* prototype_;
  const google::protobuf::FieldDescriptor* count_;
  Results* results_;
  Clock::time_point due_;
  std::function<void(grpc::Status)> done_;
  size_t total_bytes_ = 0;
};

class Driver {
 public:
  // `streamed_response` set: the method is server-streaming, its messages of
  // that type (with `count`, a repeated field counted as items, or null).
  Driver(std::vector<std::unique_ptr<grpc::GenericStub>> stubs, std::string method,
         std::vector<grpc::ByteBuffer> requests, uint64_t seed, Results* results,
         const google::protobuf::Message* streamed_response = nullptr,
         const google::protobuf::FieldDescriptor* count = nullptr)
      : stubs_(std::move(stubs)),
        method_("/" + method),
        requests_(std::move(requests)),
        seed_(seed),
        results_(results),
        streamed_response_(streamed_response),
        count_(count) {}

  // Starts one call; `then` runs when it completes.
  void Call(Clock::time_point due, std::function<void()> then) {
    auto* context = new grpc::ClientContext;
    context->set_deadline(std::chrono::system_clock::now() +
                          absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_deadline)));
    auto* response = new grpc::ByteBuffer;
    in_flight_.fetch_add(1);
    const uint64_t call = next_.fetch_add(1);
    grpc::GenericStub& stub = *stubs_[call % stubs_.size()];
    // Each call picks a request at random (a hash of its number), as
    // independent clients would.
    const grpc::ByteBuffer& request = requests_[Mix(seed_ + call) % requests_.size()];
    if (streamed_response_ != nullptr) {
      delete context;
      delete response;
      new StreamCall(&stub, method_, request, streamed_response_, count_, results_, due,
                     [this, then](const grpc::Status&) {
                       in_flight_.fetch_sub(1);
                       if (then) then();
                     });
      return;
    }
    stub.UnaryCall(context, method_, grpc::StubOptions(), &request, response,
                   [this, context, response, due, then](grpc::Status status) {
                     results_->Record(due, status, response->Length());
                     delete response;
                     delete context;
                     in_flight_.fetch_sub(1);
                     if (then) then();
                   });
  }
  int64_t in_flight() const { return in_flight_.load(); }

 private:
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs_;
  std::string method_;
  std::vector<grpc::ByteBuffer> requests_;
  const uint64_t seed_;
  Results* results_;
  const google::protobuf::Message* streamed_response_;
  const google::protobuf::FieldDescriptor* count_;
  std::atomic<int64_t> in_flight_{0};
  std::atomic<uint64_t> next_{0};
};

absl::StatusOr<grpc::ByteBuffer> BuildRequest(const std::string& method, const std::string& json) {
  const std::string dotted = absl::StrReplaceAll(method, {{"/", "."}});
  const auto* descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(dotted);
  if (descriptor == nullptr) {
    return absl::InvalidArgumentError("--method: no method " + method + " in the linked contracts");
  }
  std::unique_ptr<google::protobuf::Message> message(
      google::protobuf::MessageFactory::generated_factory()
          ->GetPrototype(descriptor->input_type())
          ->New());
  auto status = google::protobuf::util::JsonStringToMessage(json, message.get());
  if (!status.ok()) {
    return absl::InvalidArgumentError("--request: " + std::string(status.message()));
  }
  const std::string bytes = message->SerializeAsString();
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// The requests calls are given: --request as is, --vary's N of it, or the
// lines of --requests_file.
absl::StatusOr<std::vector<grpc::ByteBuffer>> BuildRequests(const std::string& method) {
  const int vary = absl::GetFlag(FLAGS_vary);
  const std::string file = absl::GetFlag(FLAGS_requests_file);
  std::vector<grpc::ByteBuffer> requests;
  if (!file.empty()) {
    if (vary > 0) return absl::InvalidArgumentError("--requests_file: not with --vary");
    std::ifstream in(file);
    if (!in) return absl::NotFoundError("--requests_file: cannot read " + file);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (absl::StripAsciiWhitespace(line).empty()) continue;
      absl::StatusOr<grpc::ByteBuffer> request = BuildRequest(method, line);
      if (!request.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, " line ", number, ": ", request.status().message()));
      }
      requests.push_back(*std::move(request));
    }
    if (requests.empty())
      return absl::InvalidArgumentError("--requests_file: no request in " + file);
    return requests;
  }
  for (int i = 0; i < std::max(1, vary); ++i) {
    const std::string json =
        vary > 0 ? absl::StrReplaceAll(absl::GetFlag(FLAGS_request), {{"{i}", absl::StrCat(i)}})
                 : absl::GetFlag(FLAGS_request);
    absl::StatusOr<grpc::ByteBuffer> request = BuildRequest(method, json);
    if (!request.ok()) return request.status();
    requests.push_back(*std::move(request));
  }
  return requests;
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * sorted.size()))];
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // As in the servers (ServerRunner::PrepareProcess): Debian's abseil checks
  // every lock for deadlock cycles unless told not to.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // The contracts are linked so their descriptors are in the generated pool.
  (void)modelatlas::bench::v1::EchoRequest::descriptor();
  (void)modelatlas::catalog::v1::GetModelRequest::descriptor();
  (void)modelatlas::estimator::v1::EstimateInferenceMemoryRequest::descriptor();
  const std::string method = absl::GetFlag(FLAGS_method);
  absl::StatusOr<std::vector<grpc::ByteBuffer>> requests = BuildRequests(method);
  if (!requests.ok()) {
    std::fprintf(stderr, "loadgen: %s\n", std::string(requests.status().message()).c_str());
    return 2;
  }
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  for (int i = 0; i < std::max(1, absl::GetFlag(FLAGS_channels)); ++i) {
    grpc::ChannelArguments args;
    args.SetInt("modelatlas.loadgen.channel", i);  // distinct channels, distinct connections
    stubs.push_back(std::make_unique<grpc::GenericStub>(grpc::CreateCustomChannel(
        absl::GetFlag(FLAGS_target), grpc::InsecureChannelCredentials(), args)));
  }
  Results results;
  const auto* method_descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(
          absl::StrReplaceAll(method, {{"/", "."}}));
  const google::protobuf::Message* streamed_response = nullptr;
  const google::protobuf::FieldDescriptor* counted_field = nullptr;
  if (method_descriptor->client_streaming()) {
    std::fprintf(stderr,
                 "loadgen: %s streams its requests; only unary and server-streaming "
                 "methods are driven\n",
                 method.c_str());
    return 2;
  }
  if (method_descriptor->server_streaming()) {
    streamed_response = google::protobuf::MessageFactory::generated_factory()->GetPrototype(
        method_descriptor->output_type());
    if (const std::string field = absl::GetFlag(FLAGS_count_field); !field.empty()) {
      counted_field = method_descriptor->output_type()->FindFieldByName(field);
      if (counted_field == nullptr || !counted_field->is_repeated()) {
        std::fprintf(stderr, "loadgen: --count_field: %s has no repeated field %s\n",
                     method_descriptor->output_type()->full_name().c_str(), field.c_str());
        return 2;
      }
    }
  }
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  if (seed == 0) seed = (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  Driver driver(std::move(stubs), method, *std::move(requests), seed, &results, streamed_response,
                counted_field);
  std::atomic<bool> stop{false};
  const double rate = absl::GetFlag(FLAGS_rate);
  const absl::Duration warmup = absl::GetFlag(FLAGS_warmup);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);

  std::function<void()> loop;
  if (rate <= 0) {
    // Closed loop: each slot issues its next call when the last completes.
    loop = [&] {
      if (!stop) driver.Call(Clock::now(), loop);
    };
    for (int i = 0; i < absl::GetFlag(FLAGS_concurrency); ++i) driver.Call(Clock::now(), loop);
  }
  std::thread pacer;
  if (rate > 0) {
    pacer = std::thread([&] {
      const auto interval = std::chrono::duration<double>(1.0 / rate);
      auto due = Clock::now();
      while (!stop) {
        due += std::chrono::duration_cast<Clock::duration>(interval);
        std::this_thread::sleep_until(due);
        if (driver.in_flight() < 100000) driver.Call(due, nullptr);
      }
    });
  }
  std::this_thread::sleep_for(absl::ToChronoMilliseconds(warmup));
  const int server_pid = absl::GetFlag(FLAGS_server_pid);
  // The server's threads' status files are read before the window opens, so
  // that reading them is not counted in the client's own CPU per call.
  const int64_t server_switches_before = server_pid > 0 ? ProcessContextSwitches(server_pid) : -1;
  const int64_t own_switches_before = OwnContextSwitches();
  const double own_cpu_before = OwnCpuMicros();
  const double server_cpu_before = server_pid > 0 ? ProcessCpuMicros(server_pid) : -1;
  {
    std::lock_guard<std::mutex> lock(results.mutex);
    results.measuring = true;
  }
  const auto begin = Clock::now();
  std::this_thread::sleep_for(absl::ToChronoMilliseconds(duration));
  {
    std::lock_guard<std::mutex> lock(results.mutex);
    results.measuring = false;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  const double own_cpu_us = OwnCpuMicros() - own_cpu_before;
  const double server_cpu_after = server_pid > 0 ? ProcessCpuMicros(server_pid) : -1;
  const int64_t own_switches = OwnContextSwitches() - own_switches_before;
  const int64_t server_switches_after = server_pid > 0 ? ProcessContextSwitches(server_pid) : -1;
  stop = true;
  if (pacer.joinable()) pacer.join();
  while (driver.in_flight() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  std::lock_guard<std::mutex> lock(results.mutex);
  std::sort(results.latencies_us.begin(), results.latencies_us.end());
  const double qps = results.latencies_us.size() / seconds;
  int64_t errors = 0;
  std::string codes;
  for (const auto& [code, count] : results.codes) {
    if (code != "OK") errors += count;
    codes += absl::StrFormat("%s\"%s\": %d", codes.empty() ? "" : ", ", code, count);
  }
  const auto& l = results.latencies_us;
  const double calls = static_cast<double>(std::max<size_t>(1, l.size()));
  const double mean_bytes = static_cast<double>(results.ok_response_bytes) /
                            static_cast<double>(std::max<int64_t>(1, results.ok_responses));
  std::string cpu = absl::StrFormat(
      ", \"client_cpu_us_per_call\": %.2f, \"client_context_switches_per_call\": %.3f",
      own_cpu_us / calls, static_cast<double>(own_switches) / calls);
  if (server_cpu_before >= 0 && server_cpu_after >= 0) {
    absl::StrAppendFormat(&cpu, ", \"server_cpu_us_per_call\": %.2f",
                          (server_cpu_after - server_cpu_before) / calls);
  }
  const bool server_switches_read = server_switches_before >= 0 && server_switches_after >= 0;
  if (server_switches_read) {
    absl::StrAppendFormat(
        &cpu, ", \"server_context_switches_per_call\": %.3f",
        static_cast<double>(server_switches_after - server_switches_before) / calls);
  }
  const std::string streamed =
      streamed_response == nullptr
          ? ""
          : absl::StrFormat(
                ", \"messages_per_s\": %.1f, \"items_per_s\": %.1f, "
                "\"stream_bytes_per_s\": %.1f",
                results.messages.load() / seconds, results.items.load() / seconds,
                results.stream_bytes.load() / seconds);
  if (absl::GetFlag(FLAGS_json)) {
    std::printf(
        "{\"method\": \"%s\", \"mode\": \"%s\", \"qps\": %.1f, \"calls\": %zu, \"errors\": %lld, "
        "\"codes\": {%s}, \"p50_us\": %.1f, \"p90_us\": %.1f, \"p99_us\": %.1f, \"p999_us\": "
        "%.1f, \"response_bytes\": %zu, \"response_bytes_mean\": %.1f, \"seed\": %llu%s%s}\n",
        method.c_str(), rate > 0 ? "open" : "closed", qps, l.size(), static_cast<long long>(errors),
        codes.c_str(), Percentile(l, 0.5), Percentile(l, 0.9), Percentile(l, 0.99),
        Percentile(l, 0.999), results.response_bytes.load(), mean_bytes,
        static_cast<unsigned long long>(seed), cpu.c_str(), streamed.c_str());
  } else {
    if (streamed_response != nullptr) {
      std::printf("stream: %.0f messages/s, %.0f items/s, %.1f MB/s\n",
                  results.messages.load() / seconds, results.items.load() / seconds,
                  results.stream_bytes.load() / seconds / 1e6);
    }
    std::printf("%s (%s loop): %.0f calls/s over %.1f s, %lld errors {%s}\n", method.c_str(),
                rate > 0 ? "open" : "closed", qps, seconds, static_cast<long long>(errors),
                codes.c_str());
    std::printf("latency: p50 %.0f us, p90 %.0f us, p99 %.0f us, p99.9 %.0f us\n",
                Percentile(l, 0.5), Percentile(l, 0.9), Percentile(l, 0.99), Percentile(l, 0.999));
    std::printf("responses: %.1f bytes on average; CPU per call: client %.2f us", mean_bytes,
                own_cpu_us / calls);
    if (server_cpu_before >= 0 && server_cpu_after >= 0) {
      std::printf(", server %.2f us", (server_cpu_after - server_cpu_before) / calls);
    }
    std::printf("\ncontext switches per call: client %.3f",
                static_cast<double>(own_switches) / calls);
    if (server_switches_read) {
      std::printf(", server %.3f",
                  static_cast<double>(server_switches_after - server_switches_before) / calls);
    }
    std::printf("\n");
  }
  return errors > 0 ? 1 : 0;
}
