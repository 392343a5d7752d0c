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

#include "absl/synchronization/mutex.h"

namespace modelatlas::estimator {

template <typename T>
class SharedRecords {
 public:
  using const_iterator = typename std::vector<T>::const_iterator;

  SharedRecords() : shared_(std::make_shared<const Shared>(std::vector<T>())) {}
  // Implicit: a list built for one answer becomes the shared one.
  SharedRecords(std::vector<T> records)  // NOLINT(google-explicit-constructor)
      : shared_(std::make_shared<const Shared>(std::move(records))) {}
  SharedRecords(std::initializer_list<T> records)  // NOLINT(google-explicit-constructor)
      : SharedRecords(std::vector<T>(records)) {}

  const_iterator begin() const { return shared_->records.begin(); }
  const_iterator end() const { return shared_->records.end(); }
  size_t size() const { return shared_->records.size(); }
  bool empty() const { return shared_->records.empty(); }
  const T& front() const { return shared_->records.front(); }
  const T& operator[](size_t i) const { return shared_->records[i]; }
  const std::vector<T>& vector() const { return shared_->records; }

  // A value derived from the whole list (each record's checks, its figures
  // converted for the formulas): `make(vector())` runs for the first caller,
  // and every copy of this list gets the same result afterwards. The
  // snapshot's list lives until the records change, so what is derived from
  // it is computed once per state of the records, not once per call. One
  // kind of derived value per list is kept; another kind is computed each
  // time it is asked for.
  template <typename Derived, typename Make>
  std::shared_ptr<const Derived> Derive(Make make) const {
    const void* tag = TagOf<Derived>();
    {
      absl::MutexLock lock(&shared_->mutex);
      if (shared_->derived_tag == tag) {
        return std::static_pointer_cast<const Derived>(shared_->derived);
      }
    }
    // Computed without the lock: two first callers may both compute it
    // (the same value); the first one stored is the one kept.
    auto derived = std::make_shared<const Derived>(make(shared_->records));
    absl::MutexLock lock(&shared_->mutex);
    if (shared_->derived_tag == nullptr) {
      shared_->derived_tag = tag;
      shared_->derived = derived;
    } else if (shared_->derived_tag == tag) {
      return std::static_pointer_cast<const Derived>(shared_->derived);
    }
    return derived;
  }

 private:
  struct Shared {
    explicit Shared(std::vector<T> r) : records(std::move(r)) {}
    const std::vector<T> records;
    mutable absl::Mutex mutex;
    // Which kind of value `derived` holds (TagOf), null before the first.
    mutable const void* derived_tag ABSL_GUARDED_BY(mutex) = nullptr;
    mutable std::shared_ptr<const void> derived ABSL_GUARDED_BY(mutex);
  };
  // One address per derived type.
  template <typename Derived>
  static const void* TagOf() {
    static const char tag = 0;
    return &tag;
  }

  std::shared_ptr<const Shared> shared_;
};

}  // namespace modelatlas::estimator
