// The echo baseline's reply size (bench/echo_server.cc): a response of
// EchoRequest.response_bytes bytes on the wire, as the measured service's
// reply is (loadgen reports a reply's serialized bytes), not that many bytes
// of payload plus the field's tag and length. And the CPU time it may be
// told to spend per call (--cpu_ns_per_call).
#pragma once

#include <time.h>

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

// The calling thread's CPU time so far, nanoseconds.
inline int64_t ThreadCpuNanos() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// Spends at least `ns` nanoseconds of the calling thread's CPU time (not of
// wall time: a thread preempted on a loaded machine would spend less), so
// that echo can cost a service's server CPU per call while sending the same
// bytes. The clock is read every few hundred additions.
inline void SpendThreadCpu(int64_t ns) {
  if (ns <= 0) return;
  const int64_t until = ThreadCpuNanos() + ns;
  volatile uint64_t sink = 0;
  while (ThreadCpuNanos() < until) {
    for (uint64_t i = 0; i < 256; ++i) sink = sink + i;
  }
}

}  // namespace modelatlas::bench
