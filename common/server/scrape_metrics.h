// Metrics computed when Prometheus scrapes, from state the process already
// keeps (record counts, revisions, ages), instead of gauges updated on
// every change.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace modelatlas {

using Labels = std::map<std::string, std::string>;

// One family with a sample per label set; gauge unless `type` says otherwise.
prometheus::MetricFamily SampleFamily(std::string name, std::string help,
                                      std::vector<std::pair<Labels, double>> samples,
                                      prometheus::MetricType type = prometheus::MetricType::Gauge);

// A collectable whose families `collect` computes at each scrape.
std::shared_ptr<prometheus::Collectable> ScrapeTimeCollectable(
    std::function<std::vector<prometheus::MetricFamily>()> collect);

}  // namespace modelatlas
