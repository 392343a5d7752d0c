// The echo baseline's reply size (bench/echo_server.cc): a response of
// EchoRequest.response_bytes bytes on the wire, as the measured service's
// reply is (loadgen reports a reply's serialized bytes), not that many bytes
// of payload plus the field's tag and length.
#pragma once

#include <cstddef>
#include <cstdint>

#include "google/protobuf/io/coded_stream.h"

namespace modelatlas::bench {

// The payload length whose EchoResponse serializes to `response_bytes`: the
// payload field's tag (1 byte) and its length's varint come out of it. Where
// no length gives exactly that (the varint grows by a byte: 130 bytes would
// need 127 of payload and a 1-byte length or 128 and a 2-byte one), one byte
// fewer. 0 below 3 bytes: an empty payload is not on the wire (proto3), so
// the reply is then empty.
inline size_t PayloadBytesFor(int32_t response_bytes) {
  if (response_bytes < 3) return 0;
  const auto total = static_cast<size_t>(response_bytes);
  size_t payload = total - 2;  // a 1-byte tag and at least a 1-byte length
  while (1 + google::protobuf::io::CodedOutputStream::VarintSize32(static_cast<uint32_t>(payload)) +
             payload >
         total) {
    --payload;
  }
  return payload;
}

}  // namespace modelatlas::bench
