// Message sizes every process agrees on, so that what a server accepts it
// can also send back, and every client can receive it: a record written
// through the API (a request up to kMaxRequestBytes) comes back in a Get, a
// List page, a Watch message or the estimator's snapshot load.
#pragma once

#include <cstdint>

namespace modelatlas {

// Largest request a server accepts, bytes (a record write, an import chunk).
inline constexpr int kMaxRequestBytes = 16 << 20;  // 16 MiB

// A page of records (List, Watch, Export) stops growing once it holds this
// many bytes; it always holds at least one record.
inline constexpr int64_t kMaxPageBytes = 8 << 20;  // 8 MiB

// Largest message any client of the project accepts, bytes: a full page
// plus one more record of the largest size, with room to spare.
inline constexpr int kMaxResponseBytes = 64 << 20;  // 64 MiB

static_assert(kMaxPageBytes + kMaxRequestBytes < kMaxResponseBytes,
              "a page that ends with the largest record must still reach every client");

}  // namespace modelatlas
