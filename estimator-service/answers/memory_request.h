// The common EstimateInferenceMemoryRequest (a catalog model by name, a
// workload, maybe hypothetical) read straight from its wire bytes, without
// building the request message: protobuf's parse of it was a tenth of the
// computed estimate's own instructions (a new heap string for the oneof's
// model name on every call; docs/BENCHMARKS.md, session 15). Any request
// with another field, a field twice, or a name that is not plain ASCII is
// declined and parsed by protobuf instead, so this reader never needs to
// agree with protobuf on anything but the plainest bytes
// (tests/estimator/memory_answer_test.cc holds the two equal).
#pragma once

#include "absl/strings/string_view.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {

// Fields 1 (model), 11 (workload) and 8 (hypothetical) of an
// EstimateInferenceMemoryRequest.
struct CatalogMemoryRequest {
  // A view into the bytes read: valid while they are.
  absl::string_view model;
  // Reused from read to read (its fields are scalars: no allocation); every
  // field is set by each read, as a fresh parse would leave it.
  v1::InferenceWorkload workload;
  bool hypothetical = false;
};

// Reads `bytes` into `out` when they hold field 1 (model) once, and at
// most field 11 (workload, of scalar fields only, read by hand too) once and field 8
// (hypothetical), nothing else, every field with its own wire type and the
// model name ASCII: then true, and `out` is what protobuf's parse gives for
// those fields. Otherwise false (`out` unspecified): parse with protobuf.
bool ReadCatalogMemoryRequest(absl::string_view bytes, CatalogMemoryRequest* out);

}  // namespace modelatlas::estimator
