// libFuzzer target: the estimator's request handlers on arbitrary request
// messages (the bytes are a serialized request, as gRPC would deliver it):
// inference memory, parameter counting, training memory and compute.
#include <cstddef>
#include <cstdint>
#include <string>

#include "estimator-service/service.h"
#include "estimator-service/training.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace modelatlas;
  if (size < 1) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
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
    default: {
      estimator::v1::EstimateTrainingComputeRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      (void)estimator::EstimateTrainingComputeFor(nullptr, nullptr, request);
      break;
    }
  }
  return 0;
}
