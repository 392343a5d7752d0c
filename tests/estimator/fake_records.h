// Test doubles for the answer builders: an in-memory RecordSource and a few
// records (tests/estimator/answers_test.cc, overflow_test.cc).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/catalog/record_source.h"

namespace modelatlas::estimator::testing {

using common::v1::Hardware;
using common::v1::Model;

// Records held in memory, found by resource name or display name; every
// answer comes before the call returns.
class FakeRecords : public RecordSource {
 public:
  void Add(Model model) { models_.push_back(std::move(model)); }
  void Add(Hardware hardware) { hardware_.push_back(std::move(hardware)); }
  void set_whole_catalog(bool whole) { whole_catalog_ = whole; }
  // UseModel lends the record in place, as the snapshot does (off: false,
  // the caller reads a copy through FindModel).
  void set_lends_in_place(bool lends) { lends_in_place_ = lends; }
  int model_reads() const { return model_reads_; }
  int models_lent() const { return models_lent_; }

  bool UseModel(const std::string& name, const ModelUser& use) override {
    if (!lends_in_place_) return false;
    for (const Model& model : models_) {
      if (model.name() == name || model.display_name() == name) {
        ++models_lent_;
        use(model, kRevision, ValidateModelArchitecture(model, "architecture"));
        return true;
      }
    }
    return false;
  }

  void FindModel(const std::string& name, Done<Model> done) override {
    ++model_reads_;
    for (const Model& model : models_) {
      if (model.name() == name || model.display_name() == name) {
        Model found = model;
        found.set_revision(kRevision);
        return done(found);
      }
    }
    done(ResourceNotFoundError("Model", name));
  }
  void FindHardware(const std::vector<std::string>& names,
                    Done<SharedRecords<Hardware>> done) override {
    if (names.empty()) return done(hardware_);
    std::vector<Hardware> found;
    for (const std::string& name : names) {
      const Hardware* match = nullptr;
      for (const Hardware& hw : hardware_) {
        if (hw.name() == name || hw.display_name() == name) match = &hw;
      }
      if (match == nullptr) return done(ResourceNotFoundError("Hardware", name));
      found.push_back(*match);
    }
    done(std::move(found));
  }
  absl::Status ForEachModel(const ModelVisitor& visit) const override {
    if (!whole_catalog_) return absl::UnavailableError("not the whole catalog");
    for (const Model& model : models_) visit(model);
    return absl::OkStatus();
  }
  int64_t revision() const override { return kRevision; }

  static constexpr int64_t kRevision = 7;

 private:
  std::vector<Model> models_;
  std::vector<Hardware> hardware_;
  bool whole_catalog_ = true;
  bool lends_in_place_ = false;
  int model_reads_ = 0;
  int models_lent_ = 0;
};

inline Model Llama8B() {
  Model model;
  model.set_name("models/llama-3-1-8b");
  model.set_display_name("Llama 3.1 8B");
  model.set_parameters(8030261248);
  model.set_open_model_weights(true);
  common::v1::Architecture* a = model.mutable_architecture();
  a->set_num_layers(32);
  a->set_hidden_size(4096);
  a->set_num_attention_heads(32);
  a->set_num_key_value_heads(8);
  a->set_head_dim(128);
  a->set_intermediate_size(14336);
  a->set_gated_mlp(true);
  a->set_vocab_size(128256);
  a->set_max_context_length(131072);
  return model;
}

// GPT-2: a 1,024-token maximum context, below the default.
inline Model Gpt2() {
  Model model;
  model.set_name("models/gpt-2-124m");
  model.set_display_name("GPT-2 (124M)");
  model.set_parameters(124439808);
  model.set_open_model_weights(true);
  common::v1::Architecture* a = model.mutable_architecture();
  a->set_num_layers(12);
  a->set_hidden_size(768);
  a->set_num_attention_heads(12);
  a->set_intermediate_size(3072);
  a->set_vocab_size(50257);
  a->set_max_context_length(1024);
  return model;
}

inline Hardware H100() {
  Hardware hw;
  hw.set_name("hardware/h100");
  hw.set_display_name("H100");
  hw.set_manufacturer("NVIDIA");
  hw.set_memory_bytes(80.0 * (1 << 30));
  hw.set_memory_bandwidth_bytes_per_second(3.35e12);
  return hw;
}

inline std::shared_ptr<FakeRecords> Catalog() {
  auto records = std::make_shared<FakeRecords>();
  records->Add(Llama8B());
  records->Add(Gpt2());
  records->Add(H100());
  return records;
}

template <typename Response>
struct Answer {
  std::optional<absl::StatusOr<Response>> result;
  AnswerDone<Response> done() {
    return [this](absl::StatusOr<Response> r) { result = std::move(r); };
  }
};

}  // namespace modelatlas::estimator::testing
