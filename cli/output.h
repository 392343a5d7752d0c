// How the CLI prints: aligned tables and field listings for people, JSON for
// scripts.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>
#include <vector>

#include "google/protobuf/message.h"

namespace modelatlas::cli {

// Prints rows under a header, each column as wide as its widest cell.
void PrintTable(const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows);

// Prints every set field of a record as "path: value", nested messages
// flattened ("architecture.num_layers: 32"), multi-line text indented.
void PrintFields(const google::protobuf::Message& message);

// The message in protobuf's JSON mapping, with proto field names.
std::string ToJson(const google::protobuf::Message& message);

// Reports a failed call on stderr (what was called, where, and why) and
// returns exit code 1.
int CallFailed(const grpc::Status& status, const std::string& service, const std::string& address);

// 8030261248 -> "8.03B", 395000000 -> "395M".
std::string HumanCount(double value);

}  // namespace modelatlas::cli
