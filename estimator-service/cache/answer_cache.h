// Answers already given, by request: the serialized answer to the exact
// request bytes of a method, valid for the catalog revision it was computed
// at. The estimator's answers are pure functions of the request and the
// records at a revision, and the same questions come back (a model page's
// plan at the default workload, a dashboard's estimates), so an answer
// given once is replied from memory until the catalog changes.
//
// Bounded in bytes (keys and answers), least recently used first out;
// a change of revision makes every older entry a miss (and it is dropped
// when met). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace modelatlas::estimator {

class AnswerCache {
 public:
  // `capacity_bytes` 0 turns the cache off (every lookup misses, nothing is
  // kept).
  explicit AnswerCache(size_t capacity_bytes);

  AnswerCache(const AnswerCache&) = delete;
  AnswerCache& operator=(const AnswerCache&) = delete;

  // The answer to `request` of `method` computed at `revision`, or null.
  std::shared_ptr<const std::string> Find(absl::string_view method, absl::string_view request,
                                          int64_t revision);

  // Keeps `answer` (when it fits in the capacity at all).
  void Put(absl::string_view method, absl::string_view request, int64_t revision,
           std::shared_ptr<const std::string> answer);

  size_t capacity_bytes() const { return capacity_bytes_; }
  size_t size_bytes() const;
  size_t entries() const;
  int64_t hits() const;
  int64_t misses() const;

 private:
  struct Entry {
    std::string method;
    std::string request;
    int64_t revision = 0;
    std::shared_ptr<const std::string> answer;
  };
  using Order = std::list<Entry>;
  // An entry's key as views: Find looks the request's bytes up as they came
  // (a view into gRPC's slice) without building a key string per call.
  struct KeyRef {
    absl::string_view method;
    absl::string_view request;
    friend bool operator==(const KeyRef& a, const KeyRef& b) {
      return a.method == b.method && a.request == b.request;
    }
    template <typename H>
    friend H AbslHashValue(H h, const KeyRef& key) {
      // Each view is hashed with its length: ("ab", "c") and ("a", "bc") differ.
      return H::combine(std::move(h), key.method, key.request);
    }
  };

  static size_t Cost(const Entry& entry);
  void EraseLocked(Order::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t capacity_bytes_;
  mutable absl::Mutex mu_;
  Order order_ ABSL_GUARDED_BY(mu_);  // most recently used first
  // Keys are views into the entries' own strings (list nodes do not move).
  absl::flat_hash_map<KeyRef, Order::iterator> index_ ABSL_GUARDED_BY(mu_);
  size_t size_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace modelatlas::estimator
