// libFuzzer target: the estimator's request handlers on arbitrary request
// messages (the bytes are a serialized request, as gRPC would deliver it):
// inference memory, parameter counting, training memory and compute,
// inference plans over the shipped hardware, training plans, and the audit
// of an arbitrary (catalog-valid) model record. Each case checks first what
// the handler checks before calling the same function.
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog-service/dataset.h"
#include "catalog-service/validation.h"
#include "estimator-service/answers/audit.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/training.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace modelatlas;
  if (size < 1) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  static const std::vector<common::v1::Hardware>* hardware = [] {
    auto dataset = catalog::ShippedDataset();
    return new std::vector<common::v1::Hardware>(dataset->hardware().begin(),
                                                 dataset->hardware().end());
  }();
  switch (data[0] % 7) {
    case 0: {
      estimator::v1::EstimateInferenceMemoryRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      common::v1::Model model;
      model.set_display_name("fuzz");
      *model.mutable_architecture() = request.inline_model().architecture();
      if (request.inline_model().has_parameters()) {
        model.set_parameters(request.inline_model().parameters());
      }
      (void)estimator::EstimateMemoryForModel(model, request);
      break;
    }
    case 1: {
      estimator::v1::CountParametersRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      (void)estimator::CountParametersOf(request.architecture(), request);
      break;
    }
    case 2: {
      estimator::v1::EstimateTrainingMemoryRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      common::v1::Model model;
      *model.mutable_architecture() = request.model().architecture();
      model.set_parameters(1e9);
      (void)estimator::EstimateTrainingMemoryFor(model, request.settings());
      break;
    }
    case 3: {
      estimator::v1::EstimateTrainingComputeRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      (void)estimator::EstimateTrainingComputeFor(nullptr, nullptr, request);
      break;
    }
    case 4: {
      estimator::v1::PlanInferenceRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      if (!estimator::ValidatePlanRequest(request).ok()) return 0;
      common::v1::Model model;
      model.set_display_name("fuzz");
      *model.mutable_architecture() = request.inline_model().architecture();
      if (request.inline_model().has_parameters()) {
        model.set_parameters(request.inline_model().parameters());
      }
      (void)estimator::PlanInferenceFor(model, *hardware, request);
      break;
    }
    case 5: {
      estimator::v1::PlanTrainingRequest request;
      if (!request.ParseFromString(bytes) || hardware->empty()) return 0;
      if (!estimator::ValidateArchitecture(request.model().architecture(), "model.architecture")
               .ok()) {
        return 0;
      }
      common::v1::Model model;
      model.set_display_name("fuzz");
      *model.mutable_architecture() = request.model().architecture();
      const auto& device = (*hardware)[request.max_devices() % hardware->size()];
      (void)estimator::PlanTrainingFor(model, device, request);
      break;
    }
    default: {
      // A record as the catalog would hold it: only what its validation accepts.
      common::v1::Model model;
      if (!model.ParseFromString(bytes)) return 0;
      FieldViolations violations;
      catalog::ValidateModel(model, "", &violations);
      if (!violations.ToStatus().ok()) return 0;
      (void)estimator::AuditRecord(
          model,
          [](const std::string& name) -> std::optional<common::v1::Hardware> {
            for (const auto& device : *hardware) {
              if (device.display_name() == name || device.name() == name) return device;
            }
            return std::nullopt;
          },
          0.1);
      break;
    }
  }
  return 0;
}
