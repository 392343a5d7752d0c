#include "estimator-service/cache/answer_cache.h"

#include <utility>

namespace modelatlas::estimator {

AnswerCache::AnswerCache(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}

size_t AnswerCache::Cost(const Entry& entry) {
  // The key (method, a separator byte, the request) and answer bytes, and
  // about 128 bytes of list node, map slot and shared string overhead.
  return entry.method.size() + 1 + entry.request.size() + entry.answer->size() + 128;
}

void AnswerCache::EraseLocked(Order::iterator it) {
  size_bytes_ -= Cost(*it);
  index_.erase(KeyRef{it->method, it->request});
  order_.erase(it);
}

std::shared_ptr<const std::string> AnswerCache::Find(absl::string_view method,
                                                     absl::string_view request, int64_t revision) {
  if (capacity_bytes_ == 0) return nullptr;
  absl::MutexLock lock(&mu_);
  auto found = index_.find(KeyRef{method, request});
  if (found == index_.end()) {
    ++misses_;
    return nullptr;
  }
  if (found->second->revision != revision) {
    // Computed from records that have changed since: never replied again.
    EraseLocked(found->second);
    ++misses_;
    return nullptr;
  }
  order_.splice(order_.begin(), order_, found->second);
  ++hits_;
  return found->second->answer;
}

void AnswerCache::Put(absl::string_view method, absl::string_view request, int64_t revision,
                      std::shared_ptr<const std::string> answer) {
  if (capacity_bytes_ == 0 || answer == nullptr) return;
  Entry entry{std::string(method), std::string(request), revision, std::move(answer)};
  const size_t cost = Cost(entry);
  if (cost > capacity_bytes_) return;
  absl::MutexLock lock(&mu_);
  if (auto found = index_.find(KeyRef{entry.method, entry.request}); found != index_.end()) {
    EraseLocked(found->second);
  }
  while (size_bytes_ + cost > capacity_bytes_ && !order_.empty()) {
    EraseLocked(std::prev(order_.end()));
  }
  order_.push_front(std::move(entry));
  index_.emplace(KeyRef{order_.front().method, order_.front().request}, order_.begin());
  size_bytes_ += cost;
}

size_t AnswerCache::size_bytes() const {
  absl::MutexLock lock(&mu_);
  return size_bytes_;
}

size_t AnswerCache::entries() const {
  absl::MutexLock lock(&mu_);
  return order_.size();
}

int64_t AnswerCache::hits() const {
  absl::MutexLock lock(&mu_);
  return hits_;
}

int64_t AnswerCache::misses() const {
  absl::MutexLock lock(&mu_);
  return misses_;
}

}  // namespace modelatlas::estimator
