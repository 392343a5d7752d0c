// A List's filter terms on stored columns (the order columns' numbers and
// dates, the lists of the filter text) run in SQL (ColumnTest, schema 4), so
// a page does not read and reject every record in the catalog process. The
// semantics must not move: every filter here gives, on every store, the
// records the C++ evaluator (query::Filter::Matches, query::OrderedBefore)
// picks from the whole catalog, in its order, page after page; and a
// database of schema 3 is upgraded and filled in.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "catalog-service/record_codec.h"
#include "catalog-service/store/migrations.h"
#include "common/query/filter.h"
#include "tests/catalog/catalog_on_store.h"
#include "tests/catalog/old_schema.h"

namespace modelatlas::catalog {
namespace {

using common::v1::Model;

// Unset numbers and dates, zero, ties, lists in mixed case with several
// elements, so each rule of the filter shows: an unset field passes no
// comparison, `:` on a list is "an element contains, ignoring case", `=` is
// exact.
v1::Dataset Models(int count) {
  static const char* kDomains[] = {"Language", "Vision", "Speech", "Multimodal", "vision"};
  static const char* kTasks[] = {"Language modeling", "Image classification", "Chat",
                                 "Speech recognition"};
  static const char* kOrgs[] = {"Lab 3", "LAB 30", "Google DeepMind", "Meta AI"};
  static const char* kCountries[] = {"United States of America", "United Kingdom", "China"};
  static const char* kCategories[] = {"Industry", "Academia"};
  v1::Dataset dataset;
  for (int i = 0; i < count; ++i) {
    const int n = (i * 53) % count;  // ids not in insertion order
    char id[16];
    std::snprintf(id, sizeof(id), "p-%04d", n);
    Model* m = dataset.add_models();
    m->set_name(absl::StrCat("models/", id));
    m->set_display_name(absl::StrCat(n % 3 == 0 ? "Model " : "Net ", n));
    m->mutable_provenance()->set_source("test");
    if (n % 6 != 5) m->add_domains(kDomains[n % 5]);
    if (n % 4 == 1) m->add_domains(kDomains[(n / 4) % 5]);
    if (n % 3 != 2) m->add_tasks(kTasks[n % 4]);
    if (n % 5 != 4) m->add_organizations(kOrgs[n % 4]);
    if (n % 2 == 0) m->add_countries(kCountries[n % 3]);
    if (n % 7 == 3) m->add_organization_categories(kCategories[n % 2]);
    if (n % 9 != 0) m->set_parameters(((n * 13) % 17) * 1e9);  // 0 included, ties
    if (n % 4 != 0) m->set_training_compute_flop((n % 6) * 1.5e22);
    if (n % 5 != 0) {
      m->mutable_publication_date()->set_year(2019 + n % 5);
      m->mutable_publication_date()->set_month(1 + n % 12);
      m->mutable_publication_date()->set_day(1 + n % 28);
    }
  }
  return dataset;
}

const char* kFilters[] = {
    "",
    "parameters > 1e10",
    "parameters >= 5e9 AND domains:\"vision\"",
    "parameters > 1e11 AND domains:\"Vision\"",
    "domains = \"Vision\"",
    "domains = \"vision\"",
    "domains:\"VIS\"",
    "domains = \"Vis*\"",
    "domains:\"ion\" AND tasks:\"language\"",
    "tasks:\"language\" AND publication_date < \"2021-06-01\"",
    "publication_date >= \"2022-01-01\"",
    "publication_date = \"2021-03-04\"",
    "organizations:\"lab 3\"",
    "organizations = \"Lab 3\"",
    "organization_categories:\"academia\" AND parameters <= 8e9",
    "countries:\"united\" AND training_compute_flop >= 3e22",
    "training_compute_flop <= 3e22 AND parameters:4e9",
    "training_compute_flop = 0",
    "parameters = 0",
    "parameters != 0",
    "parameters < 3e9",
    "NOT parameters > 1e9",
    "parameters > 1e10 OR domains:\"Speech\"",
    "(parameters > 2e9 AND domains:\"Vision\") AND countries:\"united\"",
    "parameters > 2e9 AND parameters < 9e9 AND publication_date > \"2020-01-01\"",
    "\"net\" AND parameters < 6e9",
    "training_compute_flop:* AND domains:\"multi\"",
    "domains:\"\"",
    // Schema 5 walks one domain's rows of model_domains: a text in two
    // domains ("speech", "vision") is left to the filter text, one in none
    // matches nothing, two domain terms walk the first and test the second.
    "domains:\"s\"",
    "domains:\"robot\"",
    "domains:\"vision\" AND domains:\"language\"",
    "domains:\"ision\" AND parameters > 5e9 AND tasks:\"chat\"",
    "domains:\"speech\" AND training_compute_flop < 5e22 AND publication_date > \"2020-03-01\"",
};

const char* kOrders[] = {"",
                         "parameters desc",
                         "parameters",
                         "publication_date",
                         "publication_date desc",
                         "training_compute_flop desc",
                         "display_name",
                         "publication_date desc, name"};

// Every name of a listing, page after page.
std::vector<std::string> AllPages(Catalog& catalog, const std::string& filter,
                                  const std::string& order_by, int page_size) {
  std::vector<std::string> names;
  ListQuery query;
  query.filter = filter;
  query.order_by = order_by;
  query.page_size = page_size;
  for (int pages = 0; pages < 2000; ++pages) {
    absl::StatusOr<Page<Model>> page = catalog.List<Model>(query);
    EXPECT_TRUE(page.ok()) << page.status() << " for " << filter << " / " << order_by;
    if (!page.ok()) break;
    for (const auto& model : page->records) names.push_back(model.name());
    if (page->next_page_token.empty()) break;
    query.page_token = page->next_page_token;
  }
  return names;
}

// The C++ evaluator's answer: every record of the catalog (an unfiltered,
// unordered walk, which pushes nothing), filtered by Filter::Matches and
// sorted by OrderedBefore (ties keep id order, as the store's order does).
std::vector<std::string> Evaluated(Catalog& catalog, const std::string& filter,
                                   const std::string& order_by) {
  ListQuery all;
  all.page_size = Catalog::kMaxPageSize;
  std::vector<Model> records;
  for (int pages = 0; pages < 2000; ++pages) {
    absl::StatusOr<Page<Model>> page = catalog.List<Model>(all);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) break;
    for (auto& model : page->records) records.push_back(std::move(model));
    if (page->next_page_token.empty()) break;
    all.page_token = page->next_page_token;
  }
  absl::StatusOr<query::Filter> parsed = query::Filter::Parse(filter, Model::descriptor());
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<std::vector<query::OrderKey>> keys =
      query::ParseOrderBy(order_by, Model::descriptor());
  EXPECT_TRUE(keys.ok()) << keys.status();
  if (!parsed.ok() || !keys.ok()) return {};
  std::vector<Model> matches;
  for (Model& model : records) {
    if (parsed->Matches(model)) matches.push_back(std::move(model));
  }
  std::stable_sort(matches.begin(), matches.end(), [&](const Model& a, const Model& b) {
    return query::OrderedBefore(a, b, *keys);
  });
  std::vector<std::string> names;
  for (const Model& model : matches) names.push_back(model.name());
  return names;
}

void ExpectSameAsEvaluated(Catalog& catalog, std::vector<int> page_sizes = {7, 1000}) {
  for (const char* filter : kFilters) {
    for (const char* order : kOrders) {
      const std::vector<std::string> expected = Evaluated(catalog, filter, order);
      for (int page_size : page_sizes) {
        EXPECT_EQ(AllPages(catalog, filter, order, page_size), expected)
            << "filter " << filter << ", order_by " << order << ", page_size " << page_size;
      }
    }
  }
}

// Models(count)'s kind of values as a file of Epoch's columns, for imports:
// unset cells, ties, zero, lists of two domains in mixed case.
std::string ModelsCsv(int count) {
  static const char* kDomains[] = {"Language", "Vision", "Speech", "Multimodal", "vision"};
  static const char* kTasks[] = {"Language modeling", "Image classification", "Chat",
                                 "Speech recognition"};
  static const char* kOrgs[] = {"Lab 3", "LAB 30", "Google DeepMind", "Meta AI"};
  static const char* kCountries[] = {"United States of America", "United Kingdom", "China"};
  std::string csv =
      "Model,Domain,Task,Organization,Country (of organization),Parameters,"
      "Training compute (FLOP),Publication date\n";
  for (int i = 0; i < count; ++i) {
    const int n = (i * 53) % count;
    std::string domains = n % 6 != 5 ? kDomains[n % 5] : "";
    if (n % 4 == 1) absl::StrAppend(&domains, domains.empty() ? "" : ",", kDomains[(n / 4) % 5]);
    absl::StrAppend(&csv, n % 3 == 0 ? "Model " : "Net ", n, ",\"", domains, "\",",
                    n % 3 != 2 ? kTasks[n % 4] : "", ",", n % 5 != 4 ? kOrgs[n % 4] : "", ",",
                    n % 2 == 0 ? kCountries[n % 3] : "", ",",
                    n % 9 != 0 ? absl::StrCat((n * 13) % 17, "e9") : "", ",",
                    n % 4 != 0 ? absl::StrCat((n % 6) * 15, "e21") : "", ",");
    if (n % 5 != 0) {
      absl::StrAppend(&csv, 2019 + n % 5, "-", absl::Dec(1 + n % 12, absl::kZeroPad2), "-",
                      absl::Dec(1 + n % 28, absl::kZeroPad2));
    }
    absl::StrAppend(&csv, "\n");
  }
  return csv;
}

// The filters are not vacuous: some match nothing, none match all but "".
TEST(FilterPushdownDataTest, FiltersSelectPartOfTheCatalog) {
  const v1::Dataset dataset = Models(400);
  int empty = 0;
  for (const char* filter : kFilters) {
    absl::StatusOr<query::Filter> parsed = query::Filter::Parse(filter, Model::descriptor());
    ASSERT_TRUE(parsed.ok()) << parsed.status() << " " << filter;
    int matched = 0;
    for (const Model& model : dataset.models()) matched += parsed->Matches(model) ? 1 : 0;
    if (std::string(filter).empty()) continue;
    EXPECT_LT(matched, dataset.models_size()) << filter;
    if (matched == 0) ++empty;
  }
  EXPECT_LE(empty, 3);
}

// What is pushed: the AND-ed comparisons of singular numbers and dates and
// the text tests on lists; never a term under OR or NOT, a glob or !=.
TEST(FilterPushdownDataTest, NecessaryTestsAreTheTopLevelConjuncts) {
  using Op = query::Filter::NecessaryTest::Op;
  auto tests = [](const char* text) {
    absl::StatusOr<query::Filter> f = query::Filter::Parse(text, Model::descriptor());
    EXPECT_TRUE(f.ok()) << f.status();
    return f.ok() ? f->NecessaryTests() : std::vector<query::Filter::NecessaryTest>{};
  };
  auto pushed = tests(
      "parameters > 1e11 AND domains:\"Vision\" AND publication_date <= "
      "\"2024-02-03\"");
  ASSERT_EQ(pushed.size(), 3u);
  EXPECT_EQ(pushed[0].field, "parameters");
  EXPECT_EQ(pushed[0].op, Op::kGreater);
  EXPECT_EQ(pushed[0].number, 1e11);
  EXPECT_EQ(pushed[1].field, "domains");
  EXPECT_EQ(pushed[1].op, Op::kContains);
  EXPECT_EQ(pushed[1].text, "vision");
  EXPECT_EQ(pushed[2].op, Op::kLessOrEqual);
  EXPECT_EQ(pushed[2].number, 20240203);
  EXPECT_EQ(tests("domains = \"Vision\"")[0].text, "vision");
  EXPECT_TRUE(tests("parameters > 1e9 OR domains:\"Vision\"").empty());
  EXPECT_TRUE(tests("NOT parameters > 1e9").empty());
  EXPECT_TRUE(tests("parameters != 0").empty());
  EXPECT_TRUE(tests("domains = \"Vis*\"").empty());
  EXPECT_TRUE(tests("display_name:\"llama\"").empty());
  EXPECT_EQ(tests("(parameters > 1e9 AND domains:\"a\") AND tasks:\"b\"").size(), 3u);
}

// Runs `run_steps` (a store operation in steps: it takes a callback told
// each step's duration and returns a status) on a thread while this one
// reads models bulk-0 .. bulk-(models-1) one after another, a different one
// each time (not in a record cache): how long the steps and the reads took.
struct ReadsDuringSteps {
  int steps = 0;
  absl::Duration longest_step;
  int reads = 0;
  absl::Duration longest_read;
};

template <typename RunSteps>
ReadsDuringSteps ReadWhileStepsRun(CatalogStore& store, int models, RunSteps run_steps) {
  ReadsDuringSteps out;
  std::atomic<bool> running{true};
  std::thread steps([&] {
    EXPECT_TRUE(run_steps([&](absl::Duration step) {
                  out.longest_step = std::max(out.longest_step, step);
                  ++out.steps;
                }).ok());
    running = false;
  });
  while (running) {
    const absl::Time start = absl::Now();
    EXPECT_TRUE(store.Get(RecordKind::kModel, absl::StrCat("bulk-", out.reads * 37 % models)).ok());
    out.longest_read = std::max(out.longest_read, absl::Now() - start);
    ++out.reads;
  }
  steps.join();
  return out;
}

class FilterPushdownTest : public CatalogOnStoreTest {};

TEST_P(FilterPushdownTest, PushedFiltersGiveWhatTheEvaluatorGives) {
  ASSERT_TRUE(catalog_->CreateAll(Models(400)).ok());
  ExpectSameAsEvaluated(*catalog_);
}

// Writes keep the columns current: a model updated into (and out of) a
// filter's range moves with it.
TEST_P(FilterPushdownTest, UpdatesMoveARecordInAndOutOfAPushedFilter) {
  ASSERT_TRUE(catalog_->CreateAll(Models(60)).ok());
  absl::StatusOr<Model> model = catalog_->Get<Model>("models/p-0009");
  ASSERT_TRUE(model.ok()) << model.status();
  model->set_parameters(5e12);
  model->clear_domains();
  model->add_domains("Robotics");
  ASSERT_TRUE(catalog_->Update(*model, {"parameters", "domains"}).ok());
  const std::vector<std::string> big =
      AllPages(*catalog_, "parameters > 1e12 AND domains:\"robot\"", "parameters desc", 10);
  EXPECT_EQ(big, std::vector<std::string>{"models/p-0009"});
  model = catalog_->Get<Model>("models/p-0009");
  ASSERT_TRUE(model.ok());
  model->clear_parameters();
  ASSERT_TRUE(catalog_->Update(*model, {"parameters"}).ok());
  EXPECT_TRUE(AllPages(*catalog_, "parameters > 1e12", "", 10).empty());
  ExpectSameAsEvaluated(*catalog_);
}

// A deleted model leaves its domain's walk (its model_domains rows go with it).
TEST_P(FilterPushdownTest, DeletedModelsLeaveTheDomainWalk) {
  ASSERT_TRUE(catalog_->CreateAll(Models(60)).ok());
  const std::vector<std::string> before = AllPages(*catalog_, "domains:\"speech\"", "", 100);
  ASSERT_GE(before.size(), 2u);
  ASSERT_TRUE(catalog_->Delete<Model>(before[0], "").ok());
  std::vector<std::string> expected(before.begin() + 1, before.end());
  EXPECT_EQ(AllPages(*catalog_, "domains:\"speech\"", "", 100), expected);
  EXPECT_EQ(AllPages(*catalog_, "domains:\"speech\"", "parameters desc", 100).size(),
            Evaluated(*catalog_, "domains:\"speech\"", "parameters desc").size());
  ExpectSameAsEvaluated(*catalog_);
}

// A filter's shape (its pushed terms' fields and operators) is prepared once
// and kept (SQLite's filter statements): listed again with other numbers, in
// any order and page size, it gives the records those numbers select.
TEST_P(FilterPushdownTest, AKeptFilterShapeWithOtherNumbersSelectsItsOwnRecords) {
  ASSERT_TRUE(catalog_->CreateAll(Models(200)).ok());
  std::set<std::vector<std::string>> answers;
  for (const char* bound : {"0", "3e9", "8e9", "1.2e10", "3e9", "2e11"}) {
    for (const char* order : {"", "parameters desc", "publication_date", "display_name"}) {
      const std::string filter = absl::StrCat("parameters > ", bound, " AND domains:\"vision\"");
      const std::vector<std::string> expected = Evaluated(*catalog_, filter, order);
      EXPECT_EQ(AllPages(*catalog_, filter, order, 7), expected) << filter << " / " << order;
      EXPECT_EQ(AllPages(*catalog_, filter, order, 1000), expected) << filter << " / " << order;
      answers.insert(expected);
    }
  }
  EXPECT_GE(answers.size(), 5u);  // the numbers select different records
}

// More shapes than SQLite keeps prepared (kMaxFilterStatements, 128): two
// comparisons of the three numeric fields with each operator, 225 shapes,
// each walked in the order of its first field. Beyond the kept ones a
// statement is prepared per call, with the same answers.
TEST_P(FilterPushdownTest, MoreFilterShapesThanAreKeptListAsTheEvaluatorSays) {
  ASSERT_TRUE(catalog_->CreateAll(Models(60)).ok());
  const std::vector<std::pair<const char*, const char*>> fields = {
      {"parameters", "5e9"},
      {"training_compute_flop", "3e22"},
      {"publication_date", "\"2021-01-01\""}};
  const char* ops[] = {"<", "<=", "=", ">=", ">"};
  int shapes = 0;
  for (const auto& [first_field, first_value] : fields) {
    for (const char* first_op : ops) {
      for (const auto& [second_field, second_value] : fields) {
        for (const char* second_op : ops) {
          const std::string filter =
              absl::StrCat(first_field, " ", first_op, " ", first_value, " AND ", second_field, " ",
                           second_op, " ", second_value, " AND domains:\"speech\"");
          const std::string order = absl::StrCat(first_field, " desc");
          EXPECT_EQ(AllPages(*catalog_, filter, order, 1000), Evaluated(*catalog_, filter, order))
              << filter;
          ++shapes;
        }
      }
    }
  }
  EXPECT_EQ(shapes, 225);
}

// SQLite keeps the list of distinct domains between lists until a write
// adds or removes domain rows: a domain first stored after a list is
// walked by the next one, one whose last model goes matches nothing again,
// and a second domain containing the text turns the walk into the text test.
TEST_P(FilterPushdownTest, ListsSeeDomainsWrittenSinceTheLastList) {
  ASSERT_TRUE(catalog_->CreateAll(Models(60)).ok());
  const std::string filter = "domains:\"robot\"";
  EXPECT_TRUE(AllPages(*catalog_, filter, "parameters desc", 10).empty());
  Model arm;
  arm.set_display_name("Arm");
  arm.add_domains("Robotics");
  arm.set_parameters(2e9);
  arm.mutable_provenance()->set_source("test");
  ASSERT_TRUE(catalog_->Create<Model>("arm", arm).ok());
  EXPECT_EQ(AllPages(*catalog_, filter, "parameters desc", 10),
            std::vector<std::string>{"models/arm"});
  EXPECT_EQ(AllPages(*catalog_, filter, "", 10), std::vector<std::string>{"models/arm"});
  Model hand = arm;
  hand.set_display_name("Hand");
  hand.clear_domains();
  hand.add_domains("Robot hands");
  hand.set_parameters(3e9);
  ASSERT_TRUE(catalog_->Create<Model>("hand", hand).ok());
  const std::vector<std::string> both = {"models/hand", "models/arm"};
  EXPECT_EQ(AllPages(*catalog_, filter, "parameters desc", 10), both);
  EXPECT_EQ(AllPages(*catalog_, filter, "parameters desc", 10),
            Evaluated(*catalog_, filter, "parameters desc"));
  ASSERT_TRUE(catalog_->Delete<Model>("models/hand", "").ok());
  ASSERT_TRUE(catalog_->Delete<Model>("models/arm", "").ok());
  EXPECT_TRUE(AllPages(*catalog_, filter, "parameters desc", 10).empty());
  EXPECT_TRUE(AllPages(*catalog_, filter, "", 10).empty());
  ExpectSameAsEvaluated(*catalog_);
}

// An import defers each model's domain rows (BatchWrite::defer_derived_rows)
// to its end (Catalog::FillDeferredRows). While they wait, every list gives
// what the evaluator gives (domain filters test the filter text); after the
// fill too, with nothing left waiting. Deferred creates, and deferred
// updates that move a model to other domains (its old rows must go at once).
TEST_P(FilterPushdownTest, ModelsWhoseDomainRowsWaitListAsTheEvaluatorSays) {
  const v1::Dataset dataset = Models(400);
  v1::Dataset first;
  for (int i = 0; i < 300; ++i) *first.add_models() = dataset.models(i);
  ASSERT_TRUE(catalog_->CreateAll(first).ok());
  std::vector<BatchWrite> writes;
  for (int i = 0; i < 400; i += 3) {
    Model model = dataset.models(i);
    if (i < 300) {
      absl::StatusOr<Model> stored = catalog_->Get<Model>(model.name());
      ASSERT_TRUE(stored.ok()) << stored.status();
      model = *stored;
      model.clear_domains();
      model.add_domains(i % 2 == 0 ? "Robotics" : "Speech");
    }
    absl::StatusOr<RecordWrite> write = internal::ToWrite(model);
    ASSERT_TRUE(write.ok()) << write.status();
    BatchWrite batch_write;
    batch_write.operation =
        i < 300 ? BatchWrite::Operation::kUpdate : BatchWrite::Operation::kCreate;
    batch_write.record = *std::move(write);
    batch_write.defer_derived_rows = true;
    writes.push_back(std::move(batch_write));
  }
  ASSERT_TRUE(store_->Write(writes).ok());
  if (BackendOf(GetParam()) == "sqlite") {
    EXPECT_FALSE(store_->RecordsWithoutOrderValues(RecordKind::kModel, 10)->empty());
  }
  ExpectSameAsEvaluated(*catalog_);
  EXPECT_EQ(AllPages(*catalog_, "domains:\"robot\"", "parameters desc", 10),
            Evaluated(*catalog_, "domains:\"robot\"", "parameters desc"));
  EXPECT_FALSE(AllPages(*catalog_, "domains:\"robot\"", "", 10).empty());

  int batches = 0;
  ASSERT_TRUE(catalog_->FillDeferredRows([&](absl::Duration) { ++batches; }).ok());
  EXPECT_GE(batches, 1);
  EXPECT_TRUE(store_->RecordsWithoutOrderValues(RecordKind::kModel, 10)->empty());
  ExpectSameAsEvaluated(*catalog_);
}

// The import's end step (FillDeferredRows) writes kFillBatch models per
// transaction: a read issued meanwhile waits for one batch at most, not for
// every deferred row (branch s10-domains wrote them in one transaction: a
// GetModel waited 28.7 s at a million models). A probe reads a model in a
// loop while the fill runs; its longest wait is compared with the fill's
// longest batch.
TEST_P(FilterPushdownTest, AReadDuringTheImportsEndStepWaitsForOneBatchAtMost) {
  if (BackendOf(GetParam()) != "sqlite") GTEST_SKIP() << "only SQLite defers rows";
  constexpr int kModels = 30 * Catalog::kFillBatch;
  std::vector<BatchWrite> writes;
  for (int i = 0; i < kModels; ++i) {
    Model model;
    model.set_name(absl::StrCat("models/bulk-", i));
    model.set_display_name(absl::StrCat("Bulk ", i));
    model.add_domains(i % 2 == 0 ? "Vision" : "Language");
    model.set_parameters((i * 7919 % 1000) * 1e9);
    model.mutable_provenance()->set_source("test");
    absl::StatusOr<RecordWrite> write = internal::ToWrite(model);
    ASSERT_TRUE(write.ok()) << write.status();
    BatchWrite batch_write;
    batch_write.record = *std::move(write);
    batch_write.defer_derived_rows = true;
    writes.push_back(std::move(batch_write));
    if (writes.size() == 2000) {
      ASSERT_TRUE(store_->Write(writes).ok());
      writes.clear();
    }
  }
  const ReadsDuringSteps fill = ReadWhileStepsRun(
      *store_, kModels, [&](auto on_batch) { return catalog_->FillDeferredRows(on_batch); });
  std::printf("fill: %d batches, longest %.1f ms; %d reads meanwhile, longest wait %.1f ms\n",
              fill.steps, absl::ToDoubleMilliseconds(fill.longest_step), fill.reads,
              absl::ToDoubleMilliseconds(fill.longest_read));
  EXPECT_GE(fill.steps, 30);
  EXPECT_GE(fill.reads, 3);
  // A batch or two (neither SQLite's lock nor the store's mutex is fair, and a
  // loaded machine deschedules either thread) at most: far from the whole
  // fill of 30 batches, which one transaction at the end would make a read
  // wait for (branch s10-domains: 28.7 s at 1,000,000 models).
  EXPECT_LE(fill.longest_read, 4 * fill.longest_step + absl::Milliseconds(100));
  EXPECT_TRUE(store_->RecordsWithoutOrderValues(RecordKind::kModel, 10)->empty());
  EXPECT_EQ(AllPages(*catalog_, "domains:\"vision\" AND parameters > 5e11", "parameters desc", 50),
            Evaluated(*catalog_, "domains:\"vision\" AND parameters > 5e11", "parameters desc"));
}

// An import that fails or is cancelled after some chunks were written leaves
// the store consistent: what it wrote gets its rows (the end step runs
// whatever ended the import) and lists give what the evaluator gives.
TEST_P(FilterPushdownTest, ACancelledImportLeavesListsAsTheEvaluatorSays) {
  std::string csv = "Model,Domain,Parameters,Publication date\n";
  for (int row = 1; row <= 4100; ++row) {
    absl::StrAppend(&csv, "Model ", row, ",", row % 3 == 0 ? "Vision" : "Language", ",",
                    row * 7919 % 1000, "e9,2020-01-", row % 2 == 0 ? "10" : "20", "\n");
  }
  int asked = 0;
  absl::StatusOr<v1::ImportReport> report =
      catalog_->ImportFile(csv, {}, [&asked] { return ++asked > 1; });
  EXPECT_EQ(report.status().code(), absl::StatusCode::kCancelled) << report.status();
  EXPECT_EQ(catalog_->Info()->model_count(), 2000);
  EXPECT_TRUE(store_->RecordsWithoutOrderValues(RecordKind::kModel, 10)->empty());
  for (const char* filter : {"domains:\"vision\"", "domains:\"language\" AND parameters > 5e11"}) {
    for (const char* order : {"", "parameters desc", "publication_date"}) {
      EXPECT_EQ(AllPages(*catalog_, filter, order, 100), Evaluated(*catalog_, filter, order))
          << filter << " / " << order;
    }
  }
  // The rest imported: every model with its rows.
  ASSERT_TRUE(catalog_->ImportFile(csv, {}).ok());
  EXPECT_EQ(catalog_->Info()->model_count(), 4100);
  EXPECT_TRUE(store_->RecordsWithoutOrderValues(RecordKind::kModel, 10)->empty());
  EXPECT_EQ(AllPages(*catalog_, "domains:\"vision\"", "parameters desc", 100),
            Evaluated(*catalog_, "domains:\"vision\"", "parameters desc"));
}

// A file much larger than the store is loaded in bulk (SQLite drops its
// eight order indexes, PostgreSQL its four, and rebuilds them after the last
// chunk, each by one sort; SQLite's domain rows are written with their
// records). Lists between
// chunks, with the indexes gone, and after give what the evaluator gives;
// the report is the one an import that keeps the indexes gives; a file no
// larger than the store is not loaded in bulk.
TEST_P(FilterPushdownTest, ABulkImportListsAsTheEvaluatorSaysDuringAndAfter) {
  ASSERT_TRUE(catalog_->CreateAll(Models(60)).ok());
  int steps = 0;
  catalog_->SetBulkLoadForTesting(1000, [&](absl::Duration) { ++steps; });
  const std::string csv = ModelsCsv(4100);  // three of ImportFile's chunks of 2,000 rows
  int chunks = 0;
  absl::StatusOr<v1::ImportReport> report = catalog_->ImportFile(csv, {}, [&] {
    if (++chunks == 2) {  // the first chunk written, the second not yet
      EXPECT_GT(catalog_->Info()->model_count(), 2000);
      EXPECT_LT(catalog_->Info()->model_count(), 4000);
      for (const char* filter :
           {"", "parameters > 1e10", "parameters > 1e11 AND domains:\"Vision\"",
            "domains:\"speech\" AND training_compute_flop < 5e22", "domains:\"s\"",
            "publication_date >= \"2022-01-01\""}) {
        for (const char* order : {"", "parameters desc", "publication_date", "display_name"}) {
          EXPECT_EQ(AllPages(*catalog_, filter, order, 500), Evaluated(*catalog_, filter, order))
              << "during the import: filter " << filter << ", order_by " << order;
        }
      }
    }
    return false;
  });
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(chunks, 3);
  EXPECT_EQ(steps, BackendOf(GetParam()) == "sqlite" ? 8 : 4);  // one per order index
  EXPECT_TRUE(store_->RecordsWithoutOrderValues(RecordKind::kModel, 10)->empty());

  auto reference_store = SqliteStore::Open(":memory:");
  ASSERT_TRUE(reference_store.ok()) << reference_store.status();
  Catalog reference(*std::move(reference_store));  // default threshold: not in bulk
  ASSERT_TRUE(reference.CreateAll(Models(60)).ok());
  absl::StatusOr<v1::ImportReport> expected = reference.ImportFile(csv, {});
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_GT(expected->created(), 4000);
  v1::ImportReport got = *report;
  got.clear_revision();
  expected->clear_revision();
  EXPECT_EQ(got.SerializeAsString(), expected->SerializeAsString())
      << got.ShortDebugString().substr(0, 2000) << "\nvs\n"
      << expected->ShortDebugString().substr(0, 2000);

  ExpectSameAsEvaluated(*catalog_, {500});
  // The store now holds as many records as the file has rows: no bulk load.
  absl::StatusOr<v1::ImportReport> again = catalog_->ImportFile(csv, {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->unchanged(), report->created() + report->updated() + report->unchanged());
  EXPECT_EQ(steps, BackendOf(GetParam()) == "sqlite" ? 8 : 4);
}

INSTANTIATE_TEST_SUITE_P(Stores, FilterPushdownTest,
                         ::testing::Values("sqlite", "sqlite_cached", "postgres"));

// --- A database written by the previous binary (schema 3: order columns, no
// filter text): upgraded to 4, its records get their text on the first
// filtered list, and until then a NULL text lets every test through.
TEST(FilterPushdownMigrationTest, SqliteFileOfSchema3IsUpgradedAndFilled) {
  const std::string path =
      ::testing::TempDir() + "/filter_pushdown_test_" + std::to_string(getpid()) + ".db";
  auto remove = [&] {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  };
  remove();
  {
    // The previous binary's schema, with records written through it: open
    // a store of migrations 1 to 3 only by writing them, then the rows.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const std::string setup = OldSchemaSql(3);
    ASSERT_EQ(sqlite3_exec(db, setup.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_stmt* insert = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "INSERT INTO records (kind, id, display_name, payload, revision, "
                                 "order_parameters, order_publication_date) "
                                 "VALUES ('model', ?, ?, ?, 1, ?, ?)",
                                 -1, &insert, nullptr),
              SQLITE_OK);
    const v1::Dataset dataset = Models(200);
    for (const Model& model : dataset.models()) {
      Model stored = model;
      const std::string payload = stored.SerializeAsString();
      sqlite3_bind_text(insert, 1, model.name().substr(7).c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert, 2, model.display_name().c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_blob(insert, 3, payload.data(), static_cast<int>(payload.size()),
                        SQLITE_TRANSIENT);
      if (model.has_parameters()) sqlite3_bind_double(insert, 4, model.parameters());
      if (model.has_publication_date()) {
        const auto& d = model.publication_date();
        sqlite3_bind_double(insert, 5, d.year() * 10000 + d.month() * 100 + d.day());
      }
      ASSERT_EQ(sqlite3_step(insert), SQLITE_DONE) << sqlite3_errmsg(db);
      sqlite3_reset(insert);
      sqlite3_clear_bindings(insert);
    }
    sqlite3_finalize(insert);
    // Schema 3 had filled its order values.
    ASSERT_EQ(sqlite3_exec(db, "DELETE FROM order_values_pending", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ((*store)->schema_version(), SqliteMigrations().back().version);
    EXPECT_FALSE((*store)->RecordsWithoutOrderValues(RecordKind::kModel, 10)->empty());
    Catalog catalog(*std::move(store));
    ExpectSameAsEvaluated(catalog);
  }
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_TRUE((*store)->RecordsWithoutOrderValues(RecordKind::kModel, 10)->empty());
    Catalog catalog(*std::move(store));
    ExpectSameAsEvaluated(catalog);
  }
  {
    // Every record got its text (no NULL left to let tests through).
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* count = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT COUNT(*), SUM(filter_text IS NULL), "
                                 "SUM(instr(filter_text, 'vision') > 0) FROM records",
                                 -1, &count, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(count), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(count, 0), 200);
    EXPECT_EQ(sqlite3_column_int(count, 1), 0);
    EXPECT_GT(sqlite3_column_int(count, 2), 0);
    sqlite3_finalize(count);
    sqlite3_close(db);
  }
  remove();
}

// --- A database of schema 4 (filter text, no domain rows): upgraded to 5,
// its models wait for their domain rows, which FillOrderValues (run by
// catalog-service at startup, before it reports ready) writes in batches; a
// List made while the fill runs does not wait for it and gives the
// evaluator's answer, and so does every list afterwards, through the rows.
TEST(FilterPushdownMigrationTest, SqliteFileOfSchema4GetsDomainRowsWithoutBlockingLists) {
  const std::string path =
      ::testing::TempDir() + "/filter_pushdown_test_4_" + std::to_string(getpid()) + ".db";
  auto remove = [&] {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  };
  remove();
  const v1::Dataset dataset = Models(1200);  // two batches of the fill
  int64_t domain_rows = 0;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const std::string setup = OldSchemaSql(4);
    ASSERT_EQ(sqlite3_exec(db, setup.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_stmt* insert = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "INSERT INTO records (kind, id, display_name, payload, revision, "
                                 "order_parameters, order_training_compute_flop, "
                                 "order_publication_date, order_display_name, filter_text) "
                                 "VALUES ('model', ?, ?, ?, 1, ?, ?, ?, ?, ?)",
                                 -1, &insert, nullptr),
              SQLITE_OK);
    for (const Model& model : dataset.models()) {
      const std::string payload = model.SerializeAsString();
      // The values schema 4 wrote: the order columns and the filter text.
      const OrderValues values = internal::OrderValuesOf(model);
      sqlite3_bind_text(insert, 1, model.name().substr(7).c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert, 2, model.display_name().c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_blob(insert, 3, payload.data(), static_cast<int>(payload.size()),
                        SQLITE_TRANSIENT);
      for (int i = 0; i <= kFilterTextValue; ++i) {
        if (const auto* number = std::get_if<double>(&values[i])) {
          sqlite3_bind_double(insert, 4 + i, *number);
        } else if (const auto* text = std::get_if<std::string>(&values[i])) {
          sqlite3_bind_text(insert, 4 + i, text->c_str(), -1, SQLITE_TRANSIENT);
        }
      }
      ASSERT_EQ(sqlite3_step(insert), SQLITE_DONE) << sqlite3_errmsg(db);
      sqlite3_reset(insert);
      sqlite3_clear_bindings(insert);
      std::set<std::string> domains;
      for (const std::string& domain : model.domains()) {
        domains.insert(absl::AsciiStrToLower(domain));
      }
      domain_rows += static_cast<int64_t>(domains.size());
    }
    sqlite3_finalize(insert);
    sqlite3_close(db);
  }
  ASSERT_GT(domain_rows, 0);
  const char* kFilter = "parameters > 5e9 AND domains:\"vision\"";
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ((*store)->schema_version(), SqliteMigrations().back().version);
    EXPECT_FALSE((*store)->RecordsWithoutOrderValues(RecordKind::kModel, 10)->empty());
    Catalog catalog(*std::move(store));
    // Unordered, unfiltered walks need no filled columns.
    const std::vector<std::string> by_date = Evaluated(catalog, kFilter, "publication_date desc");
    const std::vector<std::string> by_id = Evaluated(catalog, kFilter, "");
    ASSERT_FALSE(by_date.empty());
    // A shutdown between batches stops the fill; what it wrote stays.
    absl::Status stopped = catalog.FillOrderValues(nullptr, [] { return true; });
    EXPECT_TRUE(absl::IsCancelled(stopped)) << stopped;
    std::vector<int64_t> progress;
    absl::Status filled = catalog.FillOrderValues([&](int64_t so_far) {
      progress.push_back(so_far);
      // The fill holds its lock here: these lists would wait forever if
      // they waited for it.
      EXPECT_EQ(AllPages(catalog, kFilter, "publication_date desc", 7), by_date);
      EXPECT_EQ(AllPages(catalog, kFilter, "", 7), by_id);
    });
    ASSERT_TRUE(filled.ok()) << filled;
    ASSERT_GE(progress.size(), 1u);  // after each batch: the second, after the stop
    EXPECT_EQ(progress[0], 200);
    ExpectSameAsEvaluated(catalog);
  }
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_TRUE((*store)->RecordsWithoutOrderValues(RecordKind::kModel, 10)->empty());
  }
  {
    // One row per model and distinct lower-case domain, with its values.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* count = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT COUNT(*), SUM(d.order_parameters IS r.order_parameters "
                                 "AND d.order_publication_date IS r.order_publication_date) "
                                 "FROM model_domains d JOIN records r "
                                 "ON r.kind = 'model' AND r.id = d.id",
                                 -1, &count, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(count), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int64(count, 0), domain_rows);
    EXPECT_EQ(sqlite3_column_int64(count, 1), domain_rows);
    sqlite3_finalize(count);
    sqlite3_close(db);
  }
  remove();
}

// --- Bulk loads on SQLite (SqliteStore::BeginBulkLoad, EndBulkLoad).

// The names and texts of the indexes in a SQLite file.
std::map<std::string, std::string> IndexesOf(const std::string& path) {
  std::map<std::string, std::string> indexes;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND "
                               "sql IS NOT NULL",
                               -1, &stmt, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    indexes[reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))] =
        reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return indexes;
}

// A process killed during a bulk load (after the indexes were dropped, before
// they were rebuilt) leaves a file without them: the next open creates them
// again, with the texts the migrations gave them, and lists give what the
// evaluator gives.
TEST(BulkLoadTest, IndexesACrashLeftDroppedAreCreatedAtTheNextOpen) {
  const std::string path =
      ::testing::TempDir() + "/bulk_load_test_" + std::to_string(getpid()) + ".db";
  auto remove = [&] {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  };
  remove();
  const v1::Dataset dataset = Models(400);
  v1::Dataset first;
  v1::Dataset second;
  for (int i = 0; i < dataset.models_size(); ++i) {
    *(i < 200 ? first.add_models() : second.add_models()) = dataset.models(i);
  }
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    Catalog catalog(*std::move(store));
    ASSERT_TRUE(catalog.CreateAll(first).ok());
  }
  const std::map<std::string, std::string> fresh = IndexesOf(path);
  for (const ReadIndex& index : SqliteReadIndexes()) {
    ASSERT_TRUE(fresh.count(index.name)) << index.name;
  }
  // A child process begins a bulk load, writes, and dies without ending it
  // (no close: the WAL is left as a kill leaves it).
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto store = SqliteStore::Open(path);
    if (!store.ok()) _exit(1);
    CatalogStore* raw = store->get();
    Catalog catalog(*std::move(store));
    absl::StatusOr<bool> began = raw->BeginBulkLoad();
    if (!began.ok() || !*began) _exit(2);
    if (!catalog.CreateAll(second).ok()) _exit(3);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  {
    const std::map<std::string, std::string> crashed = IndexesOf(path);
    for (const ReadIndex& index : SqliteReadIndexes()) {
      EXPECT_FALSE(crashed.count(index.name)) << index.name << " was not dropped";
    }
  }
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    Catalog catalog(*std::move(store));
    EXPECT_EQ(catalog.Info()->model_count(), 400);
    ExpectSameAsEvaluated(catalog, {7, 1000});
  }
  EXPECT_EQ(IndexesOf(path), fresh);
  remove();
}

// A create of `model` for CatalogStore::Write.
BatchWrite CreateOf(const Model& model) {
  absl::StatusOr<RecordWrite> write = internal::ToWrite(model);
  EXPECT_TRUE(write.ok()) << write.status();
  BatchWrite batch_write;
  if (write.ok()) batch_write.record = *std::move(write);
  return batch_write;
}

// EndBulkLoad creates one index per step and releases the store between
// steps: a read issued meanwhile waits for one step at most, not for all
// eight (one statement building every index would hold the store for all).
TEST(BulkLoadTest, AReadDuringTheIndexRebuildWaitsForOneIndexAtMost) {
  auto opened = SqliteStore::Open(":memory:");
  ASSERT_TRUE(opened.ok()) << opened.status();
  CatalogStore* store = opened->get();
  Catalog catalog(*std::move(opened));
  ASSERT_TRUE(store->BeginBulkLoad().value());
  constexpr int kModels = 40000;
  std::vector<BatchWrite> writes;
  for (int i = 0; i < kModels; ++i) {
    Model model;
    model.set_name(absl::StrCat("models/bulk-", i));
    model.set_display_name(absl::StrCat("Bulk ", i));
    model.add_domains(i % 2 == 0 ? "Vision" : "Language");
    model.set_parameters((i * 7919 % 1000) * 1e9);
    model.mutable_publication_date()->set_year(2015 + i % 10);
    model.mutable_provenance()->set_source("test");
    writes.push_back(CreateOf(model));
    if (writes.size() == 2000) {
      ASSERT_TRUE(store->Write(writes).ok());
      writes.clear();
    }
  }
  const ReadsDuringSteps rebuild =
      ReadWhileStepsRun(*store, kModels, [&](auto on_step) { return store->EndBulkLoad(on_step); });
  std::printf("rebuild: %d indexes, longest %.1f ms; %d reads meanwhile, longest wait %.1f ms\n",
              rebuild.steps, absl::ToDoubleMilliseconds(rebuild.longest_step), rebuild.reads,
              absl::ToDoubleMilliseconds(rebuild.longest_read));
  EXPECT_EQ(rebuild.steps, 8);
  EXPECT_GE(rebuild.reads, 3);
  // A step or two (the mutex is not fair, and a loaded machine deschedules
  // either thread), far from the eight.
  EXPECT_LE(rebuild.longest_read, 2 * rebuild.longest_step + absl::Milliseconds(100));
  const char* kFilter = "domains:\"vision\" AND parameters > 5e11";
  EXPECT_EQ(AllPages(catalog, kFilter, "parameters desc", 50),
            Evaluated(catalog, kFilter, "parameters desc"));
  EXPECT_EQ(AllPages(catalog, "", "publication_date desc", 1000).size(), size_t{kModels});
}

// With no store call waiting, the rebuild goes from one index to the next
// at once: the pause between steps is for calls that queued behind one.
TEST(BulkLoadTest, ARebuildThatNoCallWaitsForDoesNotPause) {
  auto opened = SqliteStore::Open(":memory:");
  ASSERT_TRUE(opened.ok()) << opened.status();
  SqliteStore& store = **opened;
  ASSERT_TRUE(store.BeginBulkLoad().value());
  std::vector<BatchWrite> writes;
  for (int i = 0; i < 500; ++i) {
    Model model;
    model.set_name(absl::StrCat("models/quiet-", i));
    model.set_display_name(absl::StrCat("Quiet ", i));
    model.set_parameters(i * 1e9);
    model.mutable_provenance()->set_source("test");
    writes.push_back(CreateOf(model));
  }
  ASSERT_TRUE(store.Write(writes).ok());
  int steps = 0;
  ASSERT_TRUE(store.EndBulkLoad([&](absl::Duration) { ++steps; }).ok());
  EXPECT_EQ(steps, 8);
  EXPECT_EQ(store.rebuild_pauses(), 0);
}

}  // namespace
}  // namespace modelatlas::catalog
