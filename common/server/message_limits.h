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
// record of the largest size, and above a Watch message (which stops taking
// changes at 256 KiB of records, Catalog::kMaxWatchMessageBytes). List pages
// are bounded in records (1,000), not yet in bytes: a page of several
// records near the request limit can still exceed this (issue 16, point 5).
inline constexpr int kMaxResponseBytes = 64 << 20;  // 64 MiB

static_assert(2 * kMaxRequestBytes < kMaxResponseBytes,
              "a response holding the largest record, with room to spare, reaches every client");

}  // namespace modelatlas
