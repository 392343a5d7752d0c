#include "catalog-service/catalog.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <variant>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "catalog-service/page_token.h"
#include "catalog-service/record_codec.h"
#include "catalog-service/validation.h"
#include "common/query/filter.h"
#include "common/server/logging.h"
#include "common/server/message_limits.h"
#include "common/status/errors.h"
#include "common/status/resource_names.h"
#include "common/status/suggest.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/field_mask_util.h"

namespace modelatlas::catalog {
namespace {

using google::protobuf::util::FieldMaskUtil;
using internal::FromStored;
using internal::ToStoredBytes;
using internal::ToWrite;
using internal::Traits;

// The revision an etag stands for; 0 for no etag.
absl::StatusOr<int64_t> ParseEtag(absl::string_view etag, absl::string_view field) {
  if (etag.empty()) return 0;
  int64_t revision = 0;
  if (!absl::ConsumePrefix(&etag, "r") || !absl::SimpleAtoi(etag, &revision) || revision <= 0) {
    return InvalidFieldError(field, "is not an etag this service issued (read the record again)");
  }
  return revision;
}

// "architecture.num_layers": identifiers joined by single dots.
bool IsFieldPath(absl::string_view path) {
  if (path.empty()) return false;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    if (part.empty() || !(absl::ascii_islower(part[0]) || part[0] == '_')) return false;
    for (char c : part) {
      if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '_') return false;
    }
  }
  return true;
}

// LookupKey as it was before it kept non-ASCII characters: ASCII letters
// and digits only.
std::string AsciiLookupKey(absl::string_view text) {
  std::string key;
  for (char c : text) {
    if (absl::ascii_isalnum(c)) key.push_back(absl::ascii_tolower(c));
  }
  return key;
}

template <typename Record>
absl::Status NotFound(absl::string_view name) {
  return ResourceNotFoundError(Traits<Record>::kTypeName, name);
}

// Records a NOT_FOUND scans for names to suggest: a bound on what a wrong
// name can cost.
constexpr int kMaxSuggestionScan = 20000;

// NOT_FOUND for `name` with "did you mean" the closest display names: those
// containing what was asked for (ignoring case and punctuation: "H100" ->
// "NVIDIA H100 SXM5 80GB"), else those within a small edit distance of it
// or of the id. The status keeps ResourceNotFoundError's details.
template <typename Record>
absl::Status NotFoundSuggesting(CatalogStore& store, absl::string_view name) {
  absl::Status status = NotFound<Record>(name);
  std::string wanted(name);
  if (std::optional<std::string> id = ResourceIdFromName(name, Traits<Record>::kCollection)) {
    wanted = *id;
  }
  const std::string wanted_key = AsciiLookupKey(wanted);
  std::vector<std::string> containing;
  std::vector<std::string> candidates;
  std::string after;
  for (int scanned = 0; scanned < kMaxSuggestionScan;) {
    absl::StatusOr<std::vector<StoredRecord>> page =
        store.List(Traits<Record>::kKind, after, Catalog::kMaxPageSize);
    if (!page.ok()) return status;  // the suggestion is a courtesy; NOT_FOUND stands
    for (const StoredRecord& record : *page) {
      if (wanted_key.size() >= 2 && containing.size() < 3 &&
          absl::StrContains(AsciiLookupKey(record.display_name), wanted_key)) {
        containing.push_back(record.display_name);
      }
      candidates.push_back(record.display_name);
      candidates.push_back(record.id);
    }
    scanned += static_cast<int>(page->size());
    if (page->size() < static_cast<size_t>(Catalog::kMaxPageSize)) break;
    after = page->back().id;
  }
  std::string suggestion;
  if (!containing.empty()) {
    suggestion = absl::StrCat("; did you mean \"", absl::StrJoin(containing, "\" or \""), "\"?");
  } else {
    suggestion = DidYouMean(wanted, candidates);
  }
  if (suggestion.empty()) return status;
  absl::Status suggested(status.code(), absl::StrCat(status.message(), suggestion));
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    suggested.SetPayload(url, payload);
  });
  return suggested;
}

std::string QueryFingerprint(absl::string_view collection, const ListQuery& query) {
  return absl::StrCat(collection, "\x1f", query.filter, "\x1f", query.order_by);
}

// The order column an order_by reads through the store's index: one key,
// a field of the record itself that has a column (OrderColumn).
std::optional<OrderColumn> IndexedColumn(const std::vector<query::OrderKey>& order) {
  if (order.size() != 1 || order[0].path.size() != 1) return std::nullopt;
  for (int i = 0; i < kOrderColumnCount; ++i) {
    if (order[0].path[0]->name() == OrderColumnField(static_cast<OrderColumn>(i))) {
      return static_cast<OrderColumn>(i);
    }
  }
  return std::nullopt;
}

// The filter's tests a store can apply to its columns (ColumnTest): its
// AND-ed comparisons of the order columns' numbers and dates, and its text
// tests on the lists the filter text holds. A store reading only what
// passes them returns every record the filter accepts; the filter is still
// evaluated on each. At most kMaxColumnTests: more narrow little further.
constexpr size_t kMaxColumnTests = 8;
std::vector<ColumnTest> ColumnTestsOf(const query::Filter& filter) {
  std::vector<ColumnTest> tests;
  for (query::Filter::NecessaryTest& test : filter.NecessaryTests()) {
    if (tests.size() == kMaxColumnTests) break;
    using Op = query::Filter::NecessaryTest::Op;
    if (test.op == Op::kContains) {
      for (absl::string_view field : internal::kFilterTextFields) {
        if (test.field == field) {
          if (field == "domains" && tests.size() + 1 < kMaxColumnTests) {
            // Also as a domain test: a store with a row per domain walks it.
            tests.push_back({kDomainsValue, ColumnTest::Op::kContains, test.text});
          }
          tests.push_back({kFilterTextValue, ColumnTest::Op::kContains, std::move(test.text)});
          break;
        }
      }
      continue;
    }
    for (int i = 0; i < kOrderColumnCount; ++i) {
      const auto column = static_cast<OrderColumn>(i);
      if (column == OrderColumn::kDisplayName || test.field != OrderColumnField(column)) continue;
      static const std::map<Op, ColumnTest::Op> kOps = {
          {Op::kLess, ColumnTest::Op::kLess},
          {Op::kLessOrEqual, ColumnTest::Op::kLessOrEqual},
          {Op::kEqual, ColumnTest::Op::kEqual},
          {Op::kGreaterOrEqual, ColumnTest::Op::kGreaterOrEqual},
          {Op::kGreater, ColumnTest::Op::kGreater}};
      tests.push_back({i, kOps.at(test.op), test.number});
    }
  }
  return tests;
}

// A page token's position in an indexed order: "o", the value's type (n: no
// value, d: a number, s: text), the id, a separator (ids never hold it), then
// the value (a number as its 64 bits in hex, so it comes back exact).
std::string EncodeSeek(const OrderSeek& seek) {
  if (const auto* number = std::get_if<double>(&seek.value)) {
    uint64_t bits = 0;
    std::memcpy(&bits, number, sizeof bits);
    return absl::StrCat("od", seek.id, "\x1f", absl::Hex(bits, absl::kZeroPad16));
  }
  if (const auto* text = std::get_if<std::string>(&seek.value)) {
    return absl::StrCat("os", seek.id, "\x1f", *text);
  }
  return absl::StrCat("on", seek.id, "\x1f");
}

std::optional<OrderSeek> DecodeSeek(absl::string_view text) {
  if (text.size() < 2 || text[0] != 'o') return std::nullopt;
  const char type = text[1];
  text.remove_prefix(2);
  const size_t separator = text.find('\x1f');
  if (separator == absl::string_view::npos) return std::nullopt;
  OrderSeek seek;
  seek.start = false;
  seek.id = std::string(text.substr(0, separator));
  const absl::string_view value = text.substr(separator + 1);
  if (!IsValidResourceId(seek.id)) return std::nullopt;
  switch (type) {
    case 'n':
      if (!value.empty()) return std::nullopt;
      return seek;
    case 's':
      seek.value = std::string(value);
      return seek;
    case 'd': {
      if (value.size() != 16) return std::nullopt;
      uint64_t bits = 0;
      for (char c : value) {
        int digit = absl::ascii_isdigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
        if (digit < 0) return std::nullopt;
        bits = bits << 4 | static_cast<uint64_t>(digit);
      }
      double number = 0;
      std::memcpy(&number, &bits, sizeof number);
      seek.value = number;
      return seek;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

Catalog::Catalog(std::unique_ptr<CatalogStore> store) : store_(std::move(store)) {}

void Catalog::ReportUnreadable(RecordKind kind, absl::string_view id, const absl::Status& status) {
  unreadable_records_.fetch_add(1, std::memory_order_relaxed);
  MA_LOG_ERROR("%s \"%s\" is left out of a list: %s", RecordKindName(kind), ValidUtf8(id),
               status.ToString());
}

void Catalog::NotifyWrite() {
  absl::MutexLock lock(&write_mutex_);
  ++writes_;
  write_signal_.SignalAll();
}

template <typename Record>
absl::StatusOr<std::string> Catalog::ResolveId(absl::string_view name) {
  constexpr absl::string_view collection = Traits<Record>::kCollection;
  if (name.empty()) return InvalidFieldError("name", "required");
  std::optional<std::string> id = ResourceIdFromName(name, collection);
  if (id.has_value()) return *std::move(id);  // moved: one allocation less per GetModel
  if (absl::StartsWith(name, absl::StrCat(collection, "/"))) {
    return InvalidFieldError(
        "name", absl::StrCat("\"", QuoteInput(name),
                             "\" is not a valid resource name: the id must be lower-case letters, "
                             "digits and hyphens (AIP-122)"));
  }
  // Not a resource name: a display name or alias, ignoring case and punctuation.
  absl::StatusOr<std::vector<std::string>> ids = FindIdsByName<Record>(name);
  if (!ids.ok()) return ids.status();
  if (ids->empty() && IsValidResourceId(name)) {
    // A bare id ("nvidia-v100-sxm2-16gb" for hardware/nvidia-v100-sxm2-16gb),
    // which need not spell the display name.
    if (store_->Get(Traits<Record>::kKind, name).ok()) return std::string(name);
  }
  if (ids->empty()) return NotFoundSuggesting<Record>(*store_, name);
  if (ids->size() > 1) {
    // Names that differ only in punctuation ("Llama 3.1 8B", "Llama 3.1-8B")
    // are told apart by the exact spelling.
    std::optional<std::string> exact = ExactMatch<Record>(*ids, name);
    if (exact.has_value()) return *exact;
    std::vector<std::string> names;
    for (const std::string& candidate : *ids) names.push_back(ResourceName(collection, candidate));
    return WithReason(absl::FailedPreconditionError(
                          absl::StrCat("\"", QuoteInput(name), "\" matches several records: ",
                                       absl::StrJoin(names, ", "), "; ask by resource name")),
                      "AMBIGUOUS_NAME");
  }
  return ids->front();
}

absl::StatusOr<StoredRecord> Catalog::GetThrough(const ImportLookups* lookups, RecordKind kind,
                                                 const std::string& id) {
  if (lookups != nullptr && lookups->kind == kind) {
    auto found = lookups->records.find(id);
    if (found != lookups->records.end()) {
      if (!found->second.has_value()) {
        return absl::NotFoundError(absl::StrCat(RecordKindName(kind), " ", id));
      }
      return *found->second;
    }
  }
  return store_->Get(kind, id);
}

absl::StatusOr<std::vector<std::string>> Catalog::FindIdsThrough(const ImportLookups* lookups,
                                                                 RecordKind kind,
                                                                 const std::string& key) {
  if (lookups != nullptr && lookups->kind == kind) {
    auto found = lookups->ids_by_key.find(key);
    if (found != lookups->ids_by_key.end()) return found->second;
  }
  return store_->FindIdsByLookupKey(kind, key);
}

template <typename Record>
absl::StatusOr<std::vector<std::string>> Catalog::FindIdsByName(absl::string_view name,
                                                                const ImportLookups* lookups) {
  constexpr RecordKind kind = Traits<Record>::kKind;
  const std::string key = LookupKey(name);
  // No record is named so (their names are UTF-8), and PostgreSQL refuses such text.
  if (InvalidUtf8Offset(key) != absl::string_view::npos) return std::vector<std::string>{};
  absl::StatusOr<std::vector<std::string>> found = FindIdsThrough(lookups, kind, key);
  if (!found.ok()) return found.status();
  std::vector<std::string> candidates = *std::move(found);
  // Records written before lookup keys kept non-ASCII characters are stored
  // under their ASCII-only key ("悟道 2.0" under "20"): found by it too, then
  // checked below against their key of today.
  const std::string legacy = AsciiLookupKey(name);
  if (legacy != key) {
    absl::StatusOr<std::vector<std::string>> more = FindIdsThrough(lookups, kind, legacy);
    if (!more.ok()) return more.status();
    candidates.insert(candidates.end(), more->begin(), more->end());
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  }
  std::vector<std::string> ids;
  for (const std::string& id : candidates) {
    absl::StatusOr<StoredRecord> stored = GetThrough(lookups, kind, id);
    if (absl::IsNotFound(stored.status())) continue;
    if (!stored.ok()) return stored.status();
    absl::StatusOr<Record> record = FromStored<Record>(*stored);
    if (!record.ok()) continue;
    // A name of no letter or digit ("???") matches only itself, exactly.
    bool matches = false;
    if (key.empty()) {
      matches = record->display_name() == name;
      if constexpr (std::is_same_v<Record, Hardware>) {
        for (const std::string& alias : record->aliases()) matches = matches || alias == name;
      }
    } else {
      for (const std::string& own : Traits<Record>::LookupKeys(*record)) {
        matches = matches || own == key;
      }
    }
    if (matches) ids.push_back(id);
  }
  return ids;
}

template <typename Record>
std::optional<std::string> Catalog::ExactMatch(const std::vector<std::string>& ids,
                                               absl::string_view name) {
  std::optional<std::string> match;
  for (const std::string& id : ids) {
    absl::StatusOr<StoredRecord> stored = store_->Get(Traits<Record>::kKind, id);
    if (!stored.ok()) continue;
    absl::StatusOr<Record> record = FromStored<Record>(*stored);
    if (!record.ok()) continue;
    bool exact = record->display_name() == name;
    if constexpr (std::is_same_v<Record, Hardware>) {
      for (const std::string& alias : record->aliases()) exact = exact || alias == name;
    }
    if (!exact) continue;
    if (match.has_value()) return std::nullopt;  // still ambiguous
    match = id;
  }
  return match;
}

template <typename Record>
absl::StatusOr<StoredRecord> Catalog::GetStored(absl::string_view name) {
  absl::StatusOr<std::string> id = ResolveId<Record>(name);
  if (!id.ok()) return id.status();
  absl::StatusOr<StoredRecord> stored = store_->Get(Traits<Record>::kKind, *id);
  if (absl::IsNotFound(stored.status())) return NotFoundSuggesting<Record>(*store_, name);
  return stored;
}

template <typename Record>
absl::StatusOr<Record> Catalog::Get(absl::string_view name) {
  absl::StatusOr<StoredRecord> stored = GetStored<Record>(name);
  if (!stored.ok()) return stored.status();
  return FromStored<Record>(*stored);
}

template <typename Record>
absl::StatusOr<std::vector<Record>> Catalog::GetExisting(const std::vector<std::string>& ids) {
  absl::StatusOr<std::vector<StoredRecord>> stored = store_->GetMany(Traits<Record>::kKind, ids);
  if (!stored.ok()) return stored.status();
  std::vector<Record> records;
  records.reserve(stored->size());
  for (const StoredRecord& one : *stored) {
    absl::StatusOr<Record> record = FromStored<Record>(one);
    if (!record.ok()) return record.status();
    records.push_back(*std::move(record));
  }
  return records;
}

std::string RecordReply::ToString() const { return absl::StrCat(payload(), tail_bytes()); }

template <typename Record>
absl::StatusOr<std::string> Catalog::GetSerialized(absl::string_view name) {
  absl::StatusOr<RecordReply> reply = GetReply<Record>(name);
  if (!reply.ok()) return reply.status();
  return reply->ToString();
}

template <typename Record>
absl::StatusOr<RecordReply> Catalog::GetReply(absl::string_view name) {
  constexpr RecordKind kind = Traits<Record>::kKind;
  // A resource name's id is read in place (no copy, ResourceIdFromName's
  // test); other names are resolved.
  constexpr absl::string_view collection = Traits<Record>::kCollection;
  absl::string_view id;
  std::string resolved;
  if (name.size() > collection.size() + 1 && absl::StartsWith(name, collection) &&
      name[collection.size()] == '/' && IsValidResourceId(name.substr(collection.size() + 1))) {
    id = name.substr(collection.size() + 1);
  } else {
    absl::StatusOr<std::string> found = ResolveId<Record>(name);
    if (!found.ok()) return found.status();
    resolved = *std::move(found);
    id = resolved;
  }
  absl::StatusOr<SharedRecord> shared = store_->GetShared(kind, id);
  if (absl::IsNotFound(shared.status())) return NotFoundSuggesting<Record>(*store_, name);
  if (!shared.ok()) return shared.status();
  // A corrupt payload is DATA_LOSS here too, as in Get: each revision of a
  // record is parsed once to know. A cached block remembers it was parsed;
  // a block just read from the store is looked up in readable_payloads_.
  if (!shared->payload_checked()) {
    const absl::string_view payload = shared->payload();
    if (!readable_payloads_->Contains(kind, shared->id(), shared->revision(), payload.size())) {
      if (!internal::PayloadParses<Record>(payload)) {
        return internal::CorruptPayloadError(shared->id());
      }
      readable_payloads_->Add(kind, shared->id(), shared->revision(), payload.size());
    }
    shared->MarkPayloadChecked();
  }
  RecordReply reply;
  static_assert(internal::kMaxReplyTailBytes <= std::tuple_size_v<decltype(reply.tail)>);
  reply.tail_size = internal::WriteReplyTail<Record>(shared->revision(), reply.tail.data());
  reply.record = *std::move(shared);
  return reply;
}

template <typename Record>
absl::StatusOr<Page<Record>> Catalog::BatchGet(const std::vector<std::string>& names) {
  if (names.size() > static_cast<size_t>(kMaxBatchGet)) {
    return InvalidFieldError("names",
                             absl::StrCat("at most ", kMaxBatchGet, " names, got ", names.size()));
  }
  Page<Record> page;
  absl::StatusOr<int64_t> revision = store_->Revision();
  if (!revision.ok()) return revision.status();
  page.revision = *revision;
  for (size_t i = 0; i < names.size(); ++i) {
    absl::StatusOr<Record> record = Get<Record>(names[i]);
    if (absl::IsInvalidArgument(record.status())) {
      return InvalidFieldError(absl::StrCat("names[", i, "]"), record.status().message());
    }
    if (!record.ok()) return record.status();
    page.records.push_back(*std::move(record));
  }
  return page;
}

template <typename Record>
absl::StatusOr<Page<Record>> Catalog::List(const ListQuery& query) {
  constexpr absl::string_view collection = Traits<Record>::kCollection;
  absl::StatusOr<int> size = EffectivePageSize(query.page_size, kDefaultPageSize, kMaxPageSize);
  if (!size.ok()) return size.status();
  const auto* descriptor = Record::descriptor();
  absl::StatusOr<query::Filter> filter = query::Filter::Parse(query.filter, descriptor);
  if (!filter.ok()) return filter.status();
  absl::StatusOr<std::vector<query::OrderKey>> order =
      query::ParseOrderBy(query.order_by, descriptor);
  if (!order.ok()) return order.status();

  const std::string fingerprint = QueryFingerprint(collection, query);
  PageCursor cursor{"", fingerprint};
  if (!query.page_token.empty()) {
    absl::StatusOr<PageCursor> decoded = DecodePageToken(query.page_token, fingerprint);
    if (!decoded.ok()) return decoded.status();
    cursor = *std::move(decoded);
  }
  absl::StatusOr<int64_t> revision = store_->Revision();
  if (!revision.ok()) return revision.status();
  Page<Record> page;
  page.revision = *revision;

  // Ordered by one field the store indexes: read in that order from the
  // cursor, keeping what the filter accepts, until the page is full. The
  // same records in the same order as the sort below (the store keeps the
  // values query::OrderValueOf gives), without reading every record.
  if constexpr (Traits<Record>::kKind == RecordKind::kModel) {
    const std::optional<OrderColumn> column = IndexedColumn(*order);
    if (column.has_value() && store_->orders_in_store()) {
      absl::StatusOr<bool> ready = OrderValuesReady();
      if (!ready.ok()) return ready.status();
      // A page token of this path is a position, of the one below an
      // offset: while the fill runs, an ordered list is answered below and
      // its tokens stay valid only until the fill ends (INVALID_ARGUMENT).
      if (*ready) {
        return ListInStoreOrder<Record>(query, *size, *filter, *column, (*order)[0].descending,
                                        cursor, fingerprint, std::move(page));
      }
    }
  }

  // Scans in id order from the cursor, keeping what the filter accepts.
  // Without order_by the cursor is the last id returned, so pages stay right
  // while records are added or removed; with order_by every match is sorted
  // and the cursor is a position.
  const bool ordered = !order->empty();
  // Models: the store skips what the filter's column tests reject (their
  // columns must be filled first, as for an ordered page); a page then
  // needs few more rows than it shows (see ListInStoreOrder).
  std::vector<ColumnTest> tests;
  if constexpr (Traits<Record>::kKind == RecordKind::kModel) {
    if (store_->orders_in_store()) tests = ColumnTestsOf(*filter);
    if (!tests.empty()) {
      absl::StatusOr<bool> ready = OrderValuesReady();
      if (!ready.ok()) return ready.status();
      if (!*ready) tests.clear();  // filled meanwhile: every record is read
    }
  }
  int batch = tests.empty() || ordered ? std::max(*size + 1, 256) : *size + 1;
  std::vector<Record> matches;
  std::string after = ordered ? "" : cursor.after_id;
  while (ordered || static_cast<int>(matches.size()) <= *size) {
    absl::StatusOr<std::vector<StoredRecord>> stored =
        store_->ListWhere(Traits<Record>::kKind, after, batch, tests);
    if (!stored.ok()) return stored.status();
    // A scan of the whole catalog (a filter matching little, an order_by)
    // can be long: it stops when nobody waits for it any more.
    if (query.abandoned && query.abandoned()) {
      return absl::CancelledError("the caller cancelled the list or its deadline passed");
    }
    for (const StoredRecord& one : *stored) {
      absl::StatusOr<Record> record = FromStored<Record>(one);
      if (!record.ok()) {
        // One bad record must not take every page (and export, and the
        // estimator's load) down with it: the rest is served.
        ReportUnreadable(Traits<Record>::kKind, one.id, record.status());
        continue;
      }
      if (filter->Matches(*record)) matches.push_back(*std::move(record));
      if (!ordered && static_cast<int>(matches.size()) > *size) break;
    }
    if (static_cast<int>(stored->size()) < batch) break;
    after = stored->back().id;
    batch = std::max(batch, std::min(batch * 2, 256));  // the filter rejected some
  }

  size_t begin = 0;
  if (ordered) {
    std::stable_sort(matches.begin(), matches.end(), [&](const Record& a, const Record& b) {
      return query::OrderedBefore(a, b, *order);
    });
    if (!cursor.after_id.empty() && !absl::SimpleAtoi(cursor.after_id, &begin)) {
      return InvalidFieldError("page_token", "not a page token issued by this service");
    }
    begin = std::min(begin, matches.size());
  }
  // At most `size` records, and no more bytes than kMaxListPageBytes (a
  // record and its framing in the response: a tag and a length of at most
  // 5 bytes), at least one record: the next page starts where this one stops.
  const size_t most = std::min(matches.size(), begin + static_cast<size_t>(*size));
  size_t end = begin;
  size_t page_bytes = 0;
  while (end < most) {
    const size_t bytes = matches[end].ByteSizeLong() + 6;
    if (end > begin && page_bytes + bytes > static_cast<size_t>(kMaxListPageBytes)) break;
    page_bytes += bytes;
    page.records.push_back(std::move(matches[end++]));
  }
  if (end < matches.size()) {
    const std::string next =
        ordered ? absl::StrCat(end) : *ResourceIdFromName(page.records.back().name(), collection);
    page.next_page_token = EncodePageToken({next, fingerprint});
  }
  return page;
}

template <typename Record>
absl::StatusOr<Page<Record>> Catalog::ListInStoreOrder(
    const ListQuery& query, int size, const query::Filter& filter, OrderColumn column,
    bool descending, const PageCursor& cursor, const std::string& fingerprint, Page<Record> page) {
  OrderSeek seek;
  if (!cursor.after_id.empty()) {
    std::optional<OrderSeek> decoded = DecodeSeek(cursor.after_id);
    if (!decoded.has_value()) {
      return InvalidFieldError("page_token", "not a page token issued by this service");
    }
    seek = *std::move(decoded);
  }
  // The store reads only records that pass the filter's column tests: a
  // page no longer reads (and decodes) every record until it has its
  // matches. Skipped records fail the filter, so the position after the
  // last one read is still where the next page starts. When the tests are
  // the whole filter, every record returned matches: a batch of 256 would
  // make the store find five times the matches a page of 50 needs. When the
  // filter rejects some, the batches grow again.
  const std::vector<ColumnTest> tests = ColumnTestsOf(filter);
  int batch = tests.empty() ? std::max(size + 1, 256) : size + 1;
  std::vector<Record> matches;
  std::vector<OrderSeek> positions;  // where each match is in the order
  while (static_cast<int>(matches.size()) <= size) {
    absl::StatusOr<std::vector<OrderedRecord>> stored =
        store_->ListOrderedWhere(Traits<Record>::kKind, column, descending, seek, batch, tests);
    if (!stored.ok()) return stored.status();
    if (query.abandoned && query.abandoned()) {
      return absl::CancelledError("the caller cancelled the list or its deadline passed");
    }
    for (OrderedRecord& one : *stored) {
      seek = OrderSeek{false, std::move(one.value), one.record.id};
      absl::StatusOr<Record> record = FromStored<Record>(one.record);
      if (!record.ok()) {
        ReportUnreadable(Traits<Record>::kKind, one.record.id, record.status());
        continue;
      }
      if (!filter.Matches(*record)) continue;
      matches.push_back(*std::move(record));
      positions.push_back(seek);
      if (static_cast<int>(matches.size()) > size) break;
    }
    if (static_cast<int>(stored->size()) < batch) break;
    batch = std::max(batch, std::min(batch * 2, 256));
  }
  // As the other paths: at most `size` records and kMaxListPageBytes.
  const size_t most = std::min(matches.size(), static_cast<size_t>(size));
  size_t end = 0;
  size_t page_bytes = 0;
  while (end < most) {
    const size_t bytes = matches[end].ByteSizeLong() + 6;
    if (end > 0 && page_bytes + bytes > static_cast<size_t>(kMaxListPageBytes)) break;
    page_bytes += bytes;
    page.records.push_back(std::move(matches[end++]));
  }
  if (end < matches.size()) {
    page.next_page_token = EncodePageToken({EncodeSeek(positions[end - 1]), fingerprint});
  }
  return page;
}

absl::StatusOr<bool> Catalog::OrderValuesReady() {
  if (order_values_filled_.load(std::memory_order_acquire)) return true;
  if (!fill_mutex_.TryLock()) return false;  // the startup fill runs
  fill_mutex_.Unlock();
  if (absl::Status s = FillOrderValues(); !s.ok()) return s;
  return true;
}

absl::Status Catalog::FillOrderValues(const std::function<void(int64_t filled)>& progress,
                                      const std::function<bool()>& stop) {
  if (order_values_filled_.load(std::memory_order_acquire)) return absl::OkStatus();
  absl::MutexLock lock(&fill_mutex_);
  if (order_values_filled_.load(std::memory_order_relaxed)) return absl::OkStatus();
  const absl::Time start = absl::Now();
  absl::Time logged = start;
  // Records an older binary wrote (migration 3 lists them) get the values
  // of their payloads, a batch per transaction; a record that cannot be read
  // keeps none (it is left out of lists anyway).
  int64_t filled = 0;
  for (RecordKind kind : {RecordKind::kModel, RecordKind::kHardware}) {
    while (true) {
      absl::StatusOr<int> batch = FillOrderValuesBatch(kind);
      if (!batch.ok()) return batch.status();
      const bool done = *batch < kFillBatch;
      filled += *batch;
      if (progress) progress(filled);
      if (absl::Now() - logged >= absl::Seconds(10)) {
        logged = absl::Now();
        MA_LOG_INFO("filling the order columns of stored records: %lld so far, %.0f s",
                    static_cast<long long>(filled), absl::ToDoubleSeconds(logged - start));
      }
      if (done) break;
      if (stop && stop()) {
        MA_LOG_INFO("filling the order columns stopped after %lld records; the next start goes on",
                    static_cast<long long>(filled));
        return absl::CancelledError("the fill of the order columns was stopped");
      }
    }
  }
  if (filled > 0)
    MA_LOG_INFO("order columns filled for %lld stored records in %.1f s",
                static_cast<long long>(filled), absl::ToDoubleSeconds(absl::Now() - start));
  order_values_filled_.store(true, std::memory_order_release);
  return absl::OkStatus();
}

absl::StatusOr<int> Catalog::FillOrderValuesBatch(RecordKind kind) {
  absl::StatusOr<std::vector<StoredRecord>> pending =
      store_->RecordsWithoutOrderValues(kind, kFillBatch);
  if (!pending.ok()) return pending.status();
  std::vector<std::pair<StoredRecord, OrderValues>> values;
  values.reserve(pending->size());
  for (StoredRecord& stored : *pending) {
    OrderValues order_values;
    if (kind == RecordKind::kModel) {
      absl::StatusOr<Model> model = FromStored<Model>(stored);
      if (model.ok()) order_values = internal::OrderValuesOf(*model);
    }
    values.emplace_back(std::move(stored), std::move(order_values));
  }
  const int count = static_cast<int>(values.size());
  if (absl::Status s = store_->SetOrderValues(kind, values, count < kFillBatch); !s.ok()) return s;
  return count;
}

absl::Status Catalog::FillDeferredRows(const std::function<void(absl::Duration)>& batch_done) {
  // One fill at a time (two imports ending together would fill the same
  // rows twice); Lists and reads go on between its batches.
  absl::MutexLock lock(&deferred_fill_mutex_);
  const absl::Time start = absl::Now();
  absl::Time logged = start;
  int64_t filled = 0;
  while (true) {
    const absl::Time batch_start = absl::Now();
    absl::StatusOr<int> batch = FillOrderValuesBatch(RecordKind::kModel);
    if (!batch.ok()) return batch.status();
    if (batch_done) batch_done(absl::Now() - batch_start);
    filled += *batch;
    // An entry whose record changed meanwhile stays and is read again, so
    // the fill ends on an empty batch rather than a short one.
    if (*batch == 0) break;
    if (absl::Now() - logged >= absl::Seconds(10)) {
      logged = absl::Now();
      MA_LOG_INFO("writing the domain rows an import deferred: %lld so far, %.0f s",
                  static_cast<long long>(filled), absl::ToDoubleSeconds(logged - start));
    }
  }
  if (filled >= 10 * kFillBatch) {
    MA_LOG_INFO("domain rows written for %lld imported models in %.1f s",
                static_cast<long long>(filled), absl::ToDoubleSeconds(absl::Now() - start));
  }
  return absl::OkStatus();
}

template <typename Record>
absl::StatusOr<Record> Catalog::Create(absl::string_view id, Record record) {
  constexpr absl::string_view collection = Traits<Record>::kCollection;
  if (!IsValidResourceId(id)) {
    const std::string field =
        absl::StrCat(Traits<Record>::kKind == RecordKind::kModel ? "model" : "hardware", "_id");
    return InvalidFieldError(
        field, absl::StrCat("\"", QuoteInput(id),
                            "\" is not a valid id: 1 to 63 lower-case letters, digits and "
                            "hyphens, starting with a letter (AIP-122)"));
  }
  record.set_name(ResourceName(collection, id));
  // Fields this binary does not know would be stored unchecked and unbounded.
  record.DiscardUnknownFields();
  FieldViolations violations;
  Traits<Record>::Validate(
      record, Traits<Record>::kKind == RecordKind::kModel ? "model" : "hardware", &violations);
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;
  absl::StatusOr<RecordWrite> write = ToWrite(record);
  if (!write.ok()) return write.status();
  absl::StatusOr<int64_t> revision = store_->Insert({*write});
  if (!revision.ok()) return revision.status();
  NotifyWrite();
  return Get<Record>(record.name());
}

template <typename Record>
absl::StatusOr<Record> Catalog::UpdateOnce(const Record& request,
                                           const std::vector<std::string>& mask_paths) {
  const std::string field = Traits<Record>::kKind == RecordKind::kModel ? "model" : "hardware";
  // Fields this binary does not know would be stored unchecked and unbounded.
  Record input = request;
  input.DiscardUnknownFields();
  {
    FieldViolations violations;
    for (size_t i = 0; i < mask_paths.size(); ++i) {
      if (!IsFieldPath(mask_paths[i]) && !(mask_paths[i] == "*" && mask_paths.size() == 1)) {
        violations.Add(
            "update_mask",
            absl::StrCat("paths[", i, "] \"", QuoteInput(mask_paths[i]),
                         "\" is not a field path (names of lower-case letters, digits "
                         "and underscores joined by dots; \"*\" alone for every field)"));
      }
    }
    if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;
  }
  std::optional<std::string> id = ResourceIdFromName(input.name(), Traits<Record>::kCollection);
  if (!id.has_value()) {
    return InvalidFieldError(absl::StrCat(field, ".name"),
                             absl::StrCat("must be a resource name \"", Traits<Record>::kCollection,
                                          "/{id}\", got \"", QuoteInput(input.name()), "\""));
  }
  absl::StatusOr<int64_t> expected = ParseEtag(input.etag(), absl::StrCat(field, ".etag"));
  if (!expected.ok()) return expected.status();
  absl::StatusOr<Record> current = Get<Record>(input.name());
  if (!current.ok()) return current.status();
  if (*expected != 0 && *expected != current->revision()) {
    return StaleEtagError(Traits<Record>::kKind, *id, *expected, current->revision());
  }

  Record updated = *current;
  const bool replace_all = mask_paths.size() == 1 && mask_paths[0] == "*";
  if (replace_all) {
    updated = input;
  } else {
    google::protobuf::FieldMask mask;
    if (mask_paths.empty()) {
      // AIP-134: no mask means every field the request sets.
      std::vector<const google::protobuf::FieldDescriptor*> set_fields;
      input.GetReflection()->ListFields(input, &set_fields);
      for (const auto* f : set_fields) mask.add_paths(f->name());
    } else {
      for (const std::string& path : mask_paths) mask.add_paths(path);
    }
    FieldViolations violations;
    for (const std::string& path : mask.paths()) {
      if (path == "name" || path == "etag" || path == "revision") {
        if (!mask_paths.empty()) {
          violations.Add("update_mask",
                         absl::StrCat("\"", QuoteInput(path), "\" cannot be updated"));
        }
      } else if (!FieldMaskUtil::GetFieldDescriptors(Record::descriptor(), path, nullptr)) {
        violations.Add("update_mask", absl::StrCat("unknown field \"", QuoteInput(path), "\""));
      }
    }
    if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;
    google::protobuf::FieldMask writable;
    for (const std::string& path : mask.paths()) {
      if (path != "name" && path != "etag" && path != "revision") writable.add_paths(path);
    }
    FieldMaskUtil::MergeOptions options;
    options.set_replace_message_fields(true);
    options.set_replace_repeated_fields(true);
    FieldMaskUtil::MergeMessageTo(input, writable, options, &updated);
  }
  updated.set_name(current->name());

  FieldViolations violations;
  Traits<Record>::Validate(updated, field, &violations);
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;
  absl::StatusOr<RecordWrite> write = ToWrite(updated);
  if (!write.ok()) return write.status();
  // The revision read above must still be current when the write commits.
  absl::StatusOr<int64_t> revision = store_->Update(*write, current->revision());
  if (absl::IsNotFound(revision.status())) return NotFound<Record>(input.name());
  if (!revision.ok()) return revision.status();
  NotifyWrite();
  return Get<Record>(current->name());
}

template <typename Record>
absl::StatusOr<Record> Catalog::Update(const Record& record,
                                       const std::vector<std::string>& mask_paths) {
  // Without an etag the caller asked for no conflict check, so a concurrent
  // write between our read and our write is retried rather than reported.
  constexpr int kAttempts = 5;
  absl::StatusOr<Record> result;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    result = UpdateOnce(record, mask_paths);
    if (!absl::IsAborted(result.status()) || !record.etag().empty()) break;
  }
  return result;
}

template <typename Record>
absl::StatusOr<int64_t> Catalog::Delete(absl::string_view name, absl::string_view etag) {
  std::optional<std::string> id = ResourceIdFromName(name, Traits<Record>::kCollection);
  if (!id.has_value()) {
    return InvalidFieldError("name",
                             absl::StrCat("must be a resource name \"", Traits<Record>::kCollection,
                                          "/{id}\", got \"", QuoteInput(name), "\""));
  }
  absl::StatusOr<int64_t> expected = ParseEtag(etag, "etag");
  if (!expected.ok()) return expected.status();
  absl::StatusOr<int64_t> revision = store_->Delete(Traits<Record>::kKind, *id, *expected);
  if (absl::IsNotFound(revision.status())) return NotFound<Record>(name);
  if (!revision.ok()) return revision.status();
  NotifyWrite();
  return revision;
}

absl::StatusOr<v1::CatalogInfo> Catalog::Info() {
  v1::CatalogInfo info;
  absl::StatusOr<int64_t> revision = store_->Revision();
  if (!revision.ok()) return revision.status();
  absl::StatusOr<int64_t> models = store_->Count(RecordKind::kModel);
  if (!models.ok()) return models.status();
  absl::StatusOr<int64_t> hardware = store_->Count(RecordKind::kHardware);
  if (!hardware.ok()) return hardware.status();
  absl::StatusOr<int32_t> shipped_version = store_->ShippedDatasetVersion();
  if (!shipped_version.ok()) return shipped_version.status();
  info.set_shipped_dataset_version(*shipped_version);
  info.set_revision(*revision);
  info.set_model_count(*models);
  info.set_hardware_count(*hardware);
  info.set_schema_version(store_->schema_version());
  info.set_store(std::string(store_->backend()));
  // The shipped dataset's facts (numbers, names, dates, organizations,
  // categories, hardware links; no free text) come from Epoch AI's data,
  // whose licence (CC BY 4.0) asks for credit wherever they are shown.
  v1::DataCredit* models_credit = info.add_credits();
  models_credit->set_source("Epoch AI");
  models_credit->set_what("the facts of the shipped models (\"Data on AI Models\")");
  models_credit->set_license("CC BY 4.0");
  models_credit->add_urls("https://epoch.ai/data/ai-models");
  v1::DataCredit* hardware_credit = info.add_credits();
  hardware_credit->set_source("Epoch AI");
  hardware_credit->set_what(
      "the facts of the shipped hardware records (\"Machine Learning Hardware\"), with the "
      "curated specifications");
  hardware_credit->set_license("CC BY 4.0");
  hardware_credit->add_urls("https://epoch.ai/data/machine-learning-hardware");
  return info;
}

absl::StatusOr<v1::WatchResponse> Catalog::WaitForChanges(int64_t after_revision, int limit,
                                                          absl::Duration timeout,
                                                          absl::Duration poll_interval) {
  ChangePosition position{after_revision};
  return WaitForChangesAfter(&position, limit, timeout, poll_interval);
}

absl::StatusOr<v1::WatchResponse> Catalog::WaitForChangesAfter(ChangePosition* position, int limit,
                                                               absl::Duration timeout,
                                                               absl::Duration poll_interval,
                                                               const std::function<bool()>& stop) {
  const absl::Time deadline = absl::Now() + timeout;
  limit = std::max(limit, 1);
  while (true) {
    int64_t writes_seen = 0;
    {
      absl::MutexLock lock(&write_mutex_);
      writes_seen = writes_;
    }
    // Read before the changes: every change up to it is then in the log, so
    // an empty page means nothing happened between the position and it.
    absl::StatusOr<int64_t> current = store_->Revision();
    if (!current.ok()) return current.status();
    // One more than asked: tells whether the last revision returned is whole.
    absl::StatusOr<std::vector<Change>> changes = store_->ChangesAfter(*position, limit + 1);
    if (!changes.ok()) return changes.status();
    if (!changes->empty() || absl::Now() >= deadline || (stop && stop())) {
      // The last revision wholly delivered before this message.
      const int64_t completed = position->id.empty() ? position->revision : position->revision - 1;
      v1::WatchResponse response;
      // At most `limit` changes and about kMaxWatchMessageBytes of records
      // (at least one change): what a stream holds per watcher is bounded.
      size_t taken = 0;
      size_t bytes = 0;
      const size_t most = std::min(changes->size(), static_cast<size_t>(limit));
      for (; taken < most && (taken == 0 || bytes < kMaxWatchMessageBytes); ++taken) {
        const Change& change = (*changes)[taken];
        auto* out = response.add_changes();
        out->set_revision(change.revision);
        const absl::string_view collection =
            change.kind == RecordKind::kModel ? kModelsCollection : kHardwareCollection;
        out->set_name(ResourceName(collection, change.id));
        out->set_type(change.operation == "create"   ? v1::CHANGE_TYPE_CREATED
                      : change.operation == "update" ? v1::CHANGE_TYPE_UPDATED
                                                     : v1::CHANGE_TYPE_DELETED);
        if (out->type() != v1::CHANGE_TYPE_DELETED) {
          absl::StatusOr<StoredRecord> stored = store_->Get(change.kind, change.id);
          if (stored.ok() && change.kind == RecordKind::kModel) {
            auto record = FromStored<Model>(*stored);
            if (record.ok()) *out->mutable_model() = *std::move(record);
          } else if (stored.ok()) {
            auto record = FromStored<Hardware>(*stored);
            if (record.ok()) *out->mutable_hardware() = *std::move(record);
          }
        }
        bytes += out->ByteSizeLong();
      }
      // The revision of the first change after this message, 0 when none.
      const int64_t next_revision = taken < changes->size() ? (*changes)[taken].revision : 0;
      changes->resize(taken);
      if (changes->empty()) {
        *position = ChangePosition{std::max(completed, *current)};
        response.set_revision(position->revision);
      } else {
        const Change& last = changes->back();
        // Cut inside a revision when the change after the page shares it.
        if (next_revision == last.revision) {
          *position = PositionAfter(last);
          response.set_revision(std::max(completed, last.revision - 1));
        } else {
          *position = ChangePosition{last.revision};
          response.set_revision(last.revision);
        }
      }
      return response;
    }
    absl::MutexLock lock(&write_mutex_);
    const absl::Time wake = std::min(deadline, absl::Now() + poll_interval);
    while (writes_ == writes_seen && absl::Now() < wake) {
      write_signal_.WaitWithDeadline(&write_mutex_, wake);
    }
  }
}

absl::StatusOr<int64_t> Catalog::CreateAll(const v1::Dataset& dataset) {
  return WriteAll(dataset, /*replace_by_revision=*/false);
}

absl::StatusOr<int64_t> Catalog::ReplaceOrCreateAll(const v1::Dataset& dataset) {
  return WriteAll(dataset, /*replace_by_revision=*/true);
}

absl::StatusOr<int64_t> Catalog::WriteAll(const v1::Dataset& dataset, bool replace_by_revision) {
  FieldViolations violations;
  for (int i = 0; i < dataset.models_size(); ++i) {
    ValidateModel(dataset.models(i), absl::StrCat("models[", i, "]"), &violations);
  }
  for (int i = 0; i < dataset.hardware_size(); ++i) {
    ValidateHardware(dataset.hardware(i), absl::StrCat("hardware[", i, "]"), &violations);
  }
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;

  std::vector<BatchWrite> writes;
  const auto add = [&writes, replace_by_revision](const auto& record) -> absl::Status {
    absl::StatusOr<RecordWrite> write = ToWrite(record);
    if (!write.ok()) return write.status();
    BatchWrite& batch = writes.emplace_back();
    batch.record = *std::move(write);
    if (replace_by_revision && record.revision() != 0) {
      batch.operation = BatchWrite::Operation::kUpdate;
      batch.expected_revision = record.revision();
    }
    return absl::OkStatus();
  };
  for (const Model& model : dataset.models()) {
    if (absl::Status added = add(model); !added.ok()) return added;
  }
  for (const Hardware& hardware : dataset.hardware()) {
    if (absl::Status added = add(hardware); !added.ok()) return added;
  }
  absl::StatusOr<int64_t> revision = store_->Write(writes);
  if (revision.ok()) NotifyWrite();
  return revision;
}

absl::StatusOr<bool> Catalog::LoadIfEmpty(const v1::Dataset& dataset) {
  absl::StatusOr<v1::CatalogInfo> info = Info();
  if (!info.ok()) return info.status();
  if (info->model_count() + info->hardware_count() > 0) return false;
  absl::StatusOr<int64_t> revision = CreateAll(dataset);
  // Another replica sharing the store loaded it first.
  if (absl::IsAlreadyExists(revision.status())) return false;
  if (!revision.ok()) return revision.status();
  return true;
}

// The two kinds of record.
template absl::StatusOr<std::vector<std::string>> Catalog::FindIdsByName<Model>(
    absl::string_view, const ImportLookups*);
template absl::StatusOr<std::vector<std::string>> Catalog::FindIdsByName<Hardware>(
    absl::string_view, const ImportLookups*);
template absl::StatusOr<Model> Catalog::Get<Model>(absl::string_view);
template absl::StatusOr<std::string> Catalog::GetSerialized<Model>(absl::string_view);
template absl::StatusOr<std::string> Catalog::GetSerialized<Hardware>(absl::string_view);
template absl::StatusOr<RecordReply> Catalog::GetReply<Model>(absl::string_view);
template absl::StatusOr<RecordReply> Catalog::GetReply<Hardware>(absl::string_view);
template absl::StatusOr<Hardware> Catalog::Get<Hardware>(absl::string_view);
template absl::StatusOr<std::vector<Model>> Catalog::GetExisting<Model>(
    const std::vector<std::string>&);
template absl::StatusOr<std::vector<Hardware>> Catalog::GetExisting<Hardware>(
    const std::vector<std::string>&);
template absl::StatusOr<Page<Model>> Catalog::BatchGet<Model>(const std::vector<std::string>&);
template absl::StatusOr<Page<Hardware>> Catalog::BatchGet<Hardware>(
    const std::vector<std::string>&);
template absl::StatusOr<Page<Model>> Catalog::List<Model>(const ListQuery&);
template absl::StatusOr<Page<Hardware>> Catalog::List<Hardware>(const ListQuery&);
template absl::StatusOr<Model> Catalog::Create<Model>(absl::string_view, Model);
template absl::StatusOr<Hardware> Catalog::Create<Hardware>(absl::string_view, Hardware);
template absl::StatusOr<Model> Catalog::Update<Model>(const Model&,
                                                      const std::vector<std::string>&);
template absl::StatusOr<Hardware> Catalog::Update<Hardware>(const Hardware&,
                                                            const std::vector<std::string>&);
template absl::StatusOr<int64_t> Catalog::Delete<Model>(absl::string_view, absl::string_view);
template absl::StatusOr<int64_t> Catalog::Delete<Hardware>(absl::string_view, absl::string_view);

}  // namespace modelatlas::catalog
