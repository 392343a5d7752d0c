// Generated model records for the benchmarks: as many as
// MODELATLAS_BENCH_MODELS says (default 100,000), spread like the catalog's.
#pragma once

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::bench {

inline int ModelCount() {
  const char* env = std::getenv("MODELATLAS_BENCH_MODELS");
  return env != nullptr ? std::atoi(env) : 100000;
}

// The id of generated record i ("gen-model-000042"); its name is "models/" + id.
inline std::string ModelId(int i) { return absl::StrFormat("gen-model-%06d", i); }

// A plausible record: numbers spread over orders of magnitude, a few lists
// and notes, an architecture on one in four.
inline common::v1::Model Generated(int i, std::mt19937_64& rng) {
  static const char* kDomains[] = {"Language", "Vision", "Speech", "Biology", "Games"};
  std::uniform_real_distribution<double> exponent(6, 12);
  common::v1::Model m;
  m.set_name("models/" + ModelId(i));
  m.set_display_name(absl::StrCat("Generated Model ", i));
  m.add_organizations(absl::StrCat("Lab ", i % 97));
  m.add_domains(kDomains[i % 5]);
  m.add_tasks("Language modeling/generation");
  m.set_parameters(std::pow(10.0, exponent(rng)));
  m.set_training_compute_flop(std::pow(10.0, exponent(rng) + 10));
  m.set_parameters_notes(absl::StrCat("Generated record ", i, " for benchmarks."));
  m.mutable_publication_date()->set_year(2015 + i % 11);
  m.mutable_publication_date()->set_month(1 + i % 12);
  m.mutable_publication_date()->set_day(1 + i % 28);
  m.set_accessibility(static_cast<common::v1::Accessibility>(1 + i % 6));
  if (i % 4 == 0) {
    auto* a = m.mutable_architecture();
    a->set_num_layers(32);
    a->set_hidden_size(4096);
    a->set_num_attention_heads(32);
    a->set_num_key_value_heads(8);
    a->set_intermediate_size(14336);
    a->set_vocab_size(128256);
  }
  m.mutable_provenance()->set_source("generated");
  return m;
}

}  // namespace modelatlas::bench
