// Transport security and authorization, shared by both servers, the
// estimator's catalog client and the CLI.
//
// TLS: a server with a certificate and key serves TLS; with a client CA as
// well it requires and verifies client certificates (mutual TLS). Clients
// verify the server against a CA and may present their own certificate.
//
// Authorization (catalog writes, optionally reads): a caller is identified
// by a bearer token ("authorization: Bearer <token>" metadata) from a tokens
// file, or by the common name of its verified client certificate from a
// roles file. Each identity has a role: "reader" or "writer". Tokens are
// compared in constant time and never logged.
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_interceptor.h>

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace modelatlas {

struct TlsFiles {
  std::string cert_file;  // PEM certificate chain
  std::string key_file;   // PEM private key
  std::string ca_file;    // PEM CA: servers verify clients with it, clients the server
  bool enabled() const { return !cert_file.empty() || !ca_file.empty(); }
};

// Insecure credentials when `tls` is empty; TLS, or mutual TLS when
// tls.ca_file is set. INVALID_ARGUMENT naming the flag for a missing file
// or a certificate without its key.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const TlsFiles& tls);
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsFiles& tls);

enum class Role { kNone = 0, kReader = 1, kWriter = 2 };
enum class Access { kRead, kWrite };

class Authorizer {
 public:
  // No tokens and no certificate roles: everyone may do everything.
  Authorizer() = default;

  // Reads "TOKEN ROLE NAME" lines (ROLE: reader or writer; # comments) and
  // "COMMON_NAME ROLE" lines for client certificates; either path may be
  // empty. `protect_reads`: reads need a reader or writer identity too.
  static absl::StatusOr<std::unique_ptr<Authorizer>> FromFiles(const std::string& tokens_file,
                                                               const std::string& roles_file,
                                                               bool protect_reads);

  // OK, UNAUTHENTICATED (no or unknown credentials) or PERMISSION_DENIED
  // (a known identity without the role), naming who was refused and why,
  // never the token.
  absl::Status Check(const grpc::ServerContextBase& context, Access access) const;

  bool enabled() const { return !tokens_.empty() || !certificate_roles_.empty(); }

 private:
  struct Identity {
    std::string name;
    Role role = Role::kNone;
  };
  std::map<std::string, Identity> tokens_;         // token -> identity
  std::map<std::string, Role> certificate_roles_;  // common name -> role
  bool protect_reads_ = false;
};

// Client side: an interceptor adding "authorization: Bearer <token>" to every
// call of a channel (plain metadata, so it also works without TLS on loopback).
std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface> BearerTokenInterceptor(
    std::string token);

// The first line of a token file, trimmed; INVALID_ARGUMENT naming `flag`.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path, absl::string_view flag);

}  // namespace modelatlas
