// PlanInference's cards (repeated HardwarePlan plans = 2) written to the wire
// by hand from the plans themselves (issue 22 point 1, docs/BENCHMARKS.md,
// branch s12-plan). A plan over every accelerator is 258 cards and about
// 1,550 strings: building a HardwarePlan per card (4 singular strings copied
// into new std::strings, every line pointed at) and having protobuf
// serialize it (sizes, then a UTF-8 pass over every proto3 string) was about
// a quarter of the call. Here each card's fields are written in field-number
// order, as protobuf's generated code writes them (proto3: a scalar at 0 and
// an empty string are omitted; `optional` fields are written when set), so
// the bytes are the message path's byte for byte
// (PlanWireTest, PreparedRecordsTest.WirePlanIsTheMessagePlanByteForByte...).
// The message path (CardToMessage) stays for the CLI, the web front, JSON
// and every caller on the heap.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "estimator-service/answers/conversions.h"
#include "estimator-service/core/offload.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/core/runtime_fit.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace google::protobuf {
class Arena;
}

namespace modelatlas::estimator {

// What a card of a plan over many records is made of, by position into
// `plans` (the position of its hardware record in the list planned on).
// Filled by PlanInferenceInto; read by CardToMessage (the message path) and
// PlanWireReply (the wire path).
struct PlanWireCards {
  // The plans, position = record (owned elsewhere: on the service's arena,
  // pooled from reply to reply; PlanInferenceInto's own on the heap).
  std::vector<DevicePlan>* plans = nullptr;
  // Positions into *plans, best first: the order of the reply's cards.
  std::vector<int> order;
  // By position: the USD per card-hour used (the request's, else the
  // record's), absent when neither gives one.
  std::vector<std::optional<double>> prices;
  // Where every price came from (RECORD or REQUEST).
  v1::PriceSource price_source = v1::PRICE_SOURCE_UNSPECIFIED;
  // By position: the records' prepared devices (device_memory, when the
  // record's figures are usable and it states allocatable memory).
  std::shared_ptr<const std::vector<PreparedDevice>> prepared;
  // The runtime's fit of the best fitting plans, by hardware name.
  std::map<std::string, RuntimeFit> runtime_fits;
  // The offload request every plan with offload was planned with.
  std::optional<OffloadRequest> offload;
};

// The message path: card `index` (a position into *cards.plans) written into
// `out` (empty). The plan's strings are moved into `out` when `arena` is
// null; on an arena the lines are pointed at (the pooled plans outlive the
// reply) and the singular strings copied. Either way the plan is not read
// again as it was.
void CardToMessage(PlanWireCards& cards, int index, google::protobuf::Arena* arena,
                   v1::HardwarePlan* out);

// Bytes of card `index` as a HardwarePlan message body (without its tag and
// length), and the body written at `target` (exactly that many bytes;
// returns the end). The plan is only read.
size_t CardWireSize(const PlanWireCards& cards, int index);
uint8_t* WriteCardWire(const PlanWireCards& cards, int index, uint8_t* target);
// An upper bound on CardWireSize, from the card's text sizes and a constant
// for its scalar fields; not for a card with offload or a runtime fit.
size_t CardWireBound(const PlanWireCards& cards, int index);

// A PlanInferenceResponse whose cards are `cards` (written by hand) and
// whose other fields are `rest`'s (serialized by protobuf; rest has no
// plans). It offers the three calls the service makes of a reply message,
// with the same meaning: ByteSizeLong (and caches the sizes),
// SerializeWithCachedSizesToArray, SerializeAsString.
class PlanWireReply {
 public:
  // Both must outlive this, unchanged; cards may be null (no plans).
  PlanWireReply(const v1::PlanInferenceResponse* rest, const PlanWireCards* cards)
      : rest_(rest), cards_(cards) {}

  size_t ByteSizeLong() const;
  uint8_t* SerializeWithCachedSizesToArray(uint8_t* target) const;
  std::string SerializeAsString() const;

  // One walk over the cards instead of two (sizing every card's fields was
  // a twentieth of a plan over every accelerator, docs/BENCHMARKS.md,
  // session 20): UpperBoundBytes is at least the reply's size, from each
  // card's text sizes (CardWireBound), or 0 when the reply must be sized
  // exactly (offload, runtime fits: ByteSizeLong then). SerializeWithinBound
  // writes the reply's bytes (ByteSizeLong's, the same) at `target`, which
  // has UpperBoundBytes() bytes, and returns their end. The service writes
  // into a slice of the bound and keeps what was written.
  size_t UpperBoundBytes() const;
  uint8_t* SerializeWithinBound(uint8_t* target) const;

 private:
  const v1::PlanInferenceResponse* rest_;
  const PlanWireCards* cards_;
  // From ByteSizeLong: each card's body size, in order (from
  // UpperBoundBytes: its bound); the whole size.
  mutable std::vector<uint32_t> card_sizes_;
  // From ByteSizeLong: each record's device_memory field (100) as bytes,
  // by position (empty where a card has none); null when cards_ has no
  // prepared records.
  mutable std::shared_ptr<const std::vector<std::string>> device_memory_;
  mutable size_t rest_size_ = 0;
  mutable size_t total_ = 0;
};

}  // namespace modelatlas::estimator
