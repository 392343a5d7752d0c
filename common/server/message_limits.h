// Message sizes every process agrees on, so that what a server accepts it
// can also send back, and every client can receive it: a record written
// through the API (a request up to kMaxRequestBytes) comes back in a Get, a
// Watch message or the estimator's snapshot load.
#pragma once

#include <cstdint>

namespace modelatlas {

// Largest request a server accepts, bytes (a record write, an import chunk).
inline constexpr int kMaxRequestBytes = 16 << 20;  // 16 MiB

// Largest message any client of the project accepts, bytes: well above a
// record of the largest size, above a Watch message (which stops taking
// changes at 256 KiB of records, Catalog::kMaxWatchMessageBytes) and above a
// List page (kMaxListPageBytes of records, or one record alone).
inline constexpr int kMaxResponseBytes = 64 << 20;  // 64 MiB

// A List page stops taking records once the next one would bring its
// records past this many bytes (serialized, with their framing); a page
// always holds at least one record, so it is at most
// max(kMaxListPageBytes, one record of at most kMaxRequestBytes) long.
inline constexpr int kMaxListPageBytes = 4 << 20;  // 4 MiB

static_assert(kMaxListPageBytes < kMaxResponseBytes && kMaxRequestBytes < kMaxResponseBytes,
              "a List page reaches every client");
static_assert(2 * kMaxRequestBytes < kMaxResponseBytes,
              "a response holding the largest record, with room to spare, reaches every client");

}  // namespace modelatlas
