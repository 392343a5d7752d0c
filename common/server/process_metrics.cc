#include "common/server/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "prometheus/metric_family.h"

namespace modelatlas {
namespace {

prometheus::MetricFamily Gauge(const std::string& name, const std::string& help, double value,
                               prometheus::MetricType type = prometheus::MetricType::Gauge) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(metric);
  return family;
}

double BootTimeSeconds() {
  std::ifstream stat("/proc/stat");
  std::string key;
  double value = 0;
  while (stat >> key) {
    if (key == "btime") {
      stat >> value;
      return value;
    }
  }
  return 0;
}

int CountOpenFds() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++count;
    closedir(dir);
    count -= 3;  // ".", ".." and the directory's own descriptor
  }
  return count;
}

class ProcessCollectable : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    std::ifstream stat_file("/proc/self/stat");
    std::string stat;
    std::getline(stat_file, stat);
    // Fields after the ")" that ends the command name; utime is field 14.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) return out;
    std::istringstream fields(stat.substr(close + 2));
    std::vector<std::string> f;
    for (std::string field; fields >> field;) f.push_back(field);
    if (f.size() < 22) return out;
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    // f[0] is field 3 (state): field n is f[n - 3].
    const double cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / ticks;
    const double start_seconds = BootTimeSeconds() + std::stod(f[19]) / ticks;
    const double virtual_bytes = std::stod(f[20]);
    const double resident_bytes = std::stod(f[21]) * page;
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);

    out.push_back(Gauge("process_cpu_seconds_total", "User and system CPU time, seconds.",
                        cpu_seconds, prometheus::MetricType::Counter));
    out.push_back(
        Gauge("process_resident_memory_bytes", "Resident memory, bytes.", resident_bytes));
    out.push_back(Gauge("process_virtual_memory_bytes", "Virtual memory, bytes.", virtual_bytes));
    out.push_back(Gauge("process_open_fds", "Open file descriptors.", CountOpenFds()));
    out.push_back(Gauge("process_max_fds", "Maximum open file descriptors.",
                        static_cast<double>(limit.rlim_cur)));
    out.push_back(Gauge("process_start_time_seconds",
                        "Start time of the process since the Unix epoch, seconds.", start_seconds));
    return out;
  }
};

}  // namespace

std::shared_ptr<prometheus::Collectable> ProcessMetricsCollectable() {
  return std::make_shared<ProcessCollectable>();
}

}  // namespace modelatlas
