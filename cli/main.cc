// modelatlas: the command-line client of catalog-service and estimator-service.
//
// The commands, by concern; each entry in cli/commands/*.cc names its words,
// arguments, flags, an example and its handler. `modelatlas help` and
// `modelatlas COMMAND --help` are generated from this table (cli/dispatch.h).
#include "cli/command.h"
#include "cli/dispatch.h"

int main(int argc, char** argv) {
  namespace cli = modelatlas::cli;
  const cli::CommandTable table = {
      cli::RecordCommands(),     // models/hardware list|get|create|update|delete, info, watch
      cli::InferenceCommands(),  // estimate memory, plan, count, runnable, card
      cli::LimitCommands(),      // max-context, max-batch, best-format (the inverse questions)
      cli::TrainingCommands(),   // estimate compute|training-memory, plan training, audit
      cli::TransferCommands(),   // import, export
      cli::ReferenceCommands(),  // fields, values
  };
  return cli::RunCli(table, argc, argv);
}
