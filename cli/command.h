// A CLI command is a table entry: its words, what it does, its arguments, the
// flags it reads, an example and its handler. The help (`modelatlas help`,
// `modelatlas COMMAND --help`) and the dispatch are both generated from the
// table (cli/dispatch.h), so the two cannot drift apart.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"

// Flags more than one concern reads (defined in cli/session.cc).
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(bool, jsonl);
ABSL_DECLARE_FLAG(absl::Duration, timeout);
ABSL_DECLARE_FLAG(std::string, filter);
ABSL_DECLARE_FLAG(std::string, hardware);

namespace modelatlas::cli {

inline constexpr int kExitFailure = 1;  // the call failed
inline constexpr int kExitUsage = 2;    // the command line is wrong

// The connections and settings every handler uses.
class Session {
 public:
  Session();

  catalog::v1::CatalogService::Stub& catalog();
  estimator::v1::EstimatorService::Stub& estimator();
  // --json or --jsonl: print JSON.
  bool json() const { return json_; }
  // --jsonl: lists and streams one compact object per line.
  bool jsonl() const { return jsonl_; }

  // A context with the --timeout deadline (or `timeout`).
  static std::unique_ptr<grpc::ClientContext> NewContext();
  static std::unique_ptr<grpc::ClientContext> NewContext(absl::Duration timeout);

  // Print why a call failed and return kExitFailure.
  int CatalogFailed(const grpc::Status& status) const;
  int EstimatorFailed(const grpc::Status& status) const;

 private:
  std::string catalog_address_;
  std::string estimator_address_;
  bool json_;
  bool jsonl_;
  std::unique_ptr<catalog::v1::CatalogService::Stub> catalog_stub_;
  std::unique_ptr<estimator::v1::EstimatorService::Stub> estimator_stub_;
};

// Prints "modelatlas: MESSAGE" on stderr and returns kExitUsage.
int UsageError(absl::string_view message);

using Arguments = std::vector<std::string>;
using Handler = int (*)(Session& session, const Arguments& args);

// An entry of the table, in this order:
//   {words}, arguments, summary, {flags}, example, handler.
struct Command {
  std::vector<absl::string_view> words;  // {"estimate", "memory"}
  // The positional arguments after the words, as the usage shows them:
  // "MODEL", "[MODEL]" (optional), "" (none). The dispatch takes the
  // argument count from it, so the help cannot promise other arguments.
  absl::string_view arguments;
  absl::string_view summary;             // one line
  std::vector<absl::string_view> flags;  // names of the flags it reads, without --
  absl::string_view example;             // what follows "modelatlas"
  Handler run;
};

struct CommandGroup {
  absl::string_view title;  // "Records", "Inference", ...
  std::vector<Command> commands;
};

// The commands of each concern (cli/commands/*.cc).
CommandGroup RecordCommands();
CommandGroup InferenceCommands();
CommandGroup TrainingCommands();
CommandGroup TransferCommands();
CommandGroup ReferenceCommands();
CommandGroup LimitCommands();  // commands/limits.cc: max-context, max-batch, best-format
// Parts of a group kept in a file of their own.
std::vector<Command> RecordWriteCommands();      // commands/record_writes.cc
std::vector<Command> TrainingComputeCommands();  // commands/training_compute.cc
std::vector<Command> SaveCommands();             // commands/save.cc
std::vector<Command> MatrixCommands();           // commands/matrix.cc: export matrix
// `plan training --hf=...` (no MODEL): the dispatch reads "training" as the
// MODEL of `plan` (a model may be named so); `plan` hands it over here when
// a model source flag is given (commands/training.cc).
int PlanTrainingFromSourceFlags(Session& session);

}  // namespace modelatlas::cli
