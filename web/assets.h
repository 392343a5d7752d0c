// The static assets, embedded in the binary: one stylesheet, one script.
// Pages work without the script; it only submits the workload form when a
// select changes.
#pragma once

#include <string_view>

namespace modelatlas::web {

extern const std::string_view kSiteCss;
extern const std::string_view kSiteJs;
extern const std::string_view kIconSvg;

}  // namespace modelatlas::web
