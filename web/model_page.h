// /models/{id}: the verdict first (no estimate for closed weights, else
// what it takes to run it, for a stated workload), the plan over every card
// with a memory picture, the workload form, the full record, the training
// arithmetic as the estimator recomputes it, common questions, and the way
// to the card pages.
#pragma once

#include <string>

#include "web/page.h"

namespace modelatlas::web {

Page ModelPage(const Clients& clients, const std::string& id, const Params& params);

// The inline SVG: a bar per memory component against each card's usable
// memory (up to four cards from the plan).
std::string MemoryPicture(const estimator::v1::PlanInferenceResponse& plan);

// The plan table (at most `rows` rows), each card linking to its page and
// to the detailed plan.
std::string PlanTable(const estimator::v1::PlanInferenceResponse& plan, const std::string& model,
                      const std::string& query, int rows);

}  // namespace modelatlas::web
