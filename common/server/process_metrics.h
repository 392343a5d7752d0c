// Process metrics in the standard Prometheus names (process_cpu_seconds_total,
// process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds, process_start_time_seconds), read from
// /proc at scrape time. prometheus-cpp 1.0 does not provide them.
#pragma once

#include <memory>

#include "prometheus/collectable.h"

namespace modelatlas {

std::shared_ptr<prometheus::Collectable> ProcessMetricsCollectable();

}  // namespace modelatlas
