// An immutable list of catalog records that answers share instead of copy.
// The snapshot hands every answer over the whole catalog's hardware the same
// list (copying 257 hardware records cost 40% of a PlanInference call,
// docs/BENCHMARKS.md); a list built for one answer (from the remote catalog,
// a test's fake) is moved in. Reads like a const std::vector. No gRPC.
#pragma once

#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace modelatlas::estimator {

template <typename T>
class SharedRecords {
 public:
  using const_iterator = typename std::vector<T>::const_iterator;

  SharedRecords() : records_(std::make_shared<const std::vector<T>>()) {}
  // Implicit: a list built for one answer becomes the shared one.
  SharedRecords(std::vector<T> records)  // NOLINT(google-explicit-constructor)
      : records_(std::make_shared<const std::vector<T>>(std::move(records))) {}
  SharedRecords(std::initializer_list<T> records)  // NOLINT(google-explicit-constructor)
      : SharedRecords(std::vector<T>(records)) {}
  explicit SharedRecords(std::shared_ptr<const std::vector<T>> records)
      : records_(records != nullptr ? std::move(records)
                                    : std::make_shared<const std::vector<T>>()) {}

  const_iterator begin() const { return records_->begin(); }
  const_iterator end() const { return records_->end(); }
  size_t size() const { return records_->size(); }
  bool empty() const { return records_->empty(); }
  const T& front() const { return records_->front(); }
  const T& operator[](size_t i) const { return (*records_)[i]; }
  const std::vector<T>& vector() const { return *records_; }

 private:
  std::shared_ptr<const std::vector<T>> records_;
};

}  // namespace modelatlas::estimator
