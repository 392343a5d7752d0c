#include "common/server/scrape_metrics.h"

namespace modelatlas {
namespace {

class FunctionCollectable : public prometheus::Collectable {
 public:
  explicit FunctionCollectable(std::function<std::vector<prometheus::MetricFamily>()> collect)
      : collect_(std::move(collect)) {}
  std::vector<prometheus::MetricFamily> Collect() const override { return collect_(); }

 private:
  std::function<std::vector<prometheus::MetricFamily>()> collect_;
};

}  // namespace

prometheus::MetricFamily SampleFamily(std::string name, std::string help,
                                      std::vector<std::pair<Labels, double>> samples,
                                      prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  for (auto& [labels, value] : samples) {
    prometheus::ClientMetric metric;
    for (const auto& [label, label_value] : labels) metric.label.push_back({label, label_value});
    if (type == prometheus::MetricType::Counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
    family.metric.push_back(std::move(metric));
  }
  return family;
}

std::shared_ptr<prometheus::Collectable> ScrapeTimeCollectable(
    std::function<std::vector<prometheus::MetricFamily>()> collect) {
  return std::make_shared<FunctionCollectable>(std::move(collect));
}

}  // namespace modelatlas
