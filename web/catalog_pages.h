// The pages that start from the catalog rather than from one model:
// /hardware/{id} (the record and every model it runs), /plan (a model on
// the hardware people choose), /search and the home page.
#pragma once

#include <string>

#include "web/page.h"

namespace modelatlas::web {

Page HardwarePage(const Clients& clients, const std::string& id, const Params& params);
Page PlanPage(const Clients& clients, const Params& params);
Page SearchPage(const Clients& clients, const Params& params);
Page HomePage(const Clients& clients);
// A 404 for a path no page answers to.
Page NoSuchPage(const std::string& path);

}  // namespace modelatlas::web
