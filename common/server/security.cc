#include "common/server/security.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status/errors.h"

namespace modelatlas {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, absl::string_view flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidFieldError(flag, absl::StrCat("cannot read \"", path, "\""));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Equal lengths and equal bytes, in time independent of where they differ.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i % (b.empty() ? 1 : b.size())];
  return diff == 0 && !b.empty();
}

absl::StatusOr<Role> ParseRole(absl::string_view text, absl::string_view where) {
  if (text == "reader") return Role::kReader;
  if (text == "writer") return Role::kWriter;
  return absl::InvalidArgumentError(
      absl::StrCat(where, ": role must be reader or writer, got \"", text, "\""));
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsFiles& tls) {
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  if (tls.cert_file.empty() || tls.key_file.empty()) {
    return InvalidFieldError("tls_cert_file", "TLS needs both --tls_cert_file and --tls_key_file");
  }
  absl::StatusOr<std::string> cert = ReadFile(tls.cert_file, "tls_cert_file");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadFile(tls.key_file, "tls_key_file");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back({*key, *cert});
  if (!tls.ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadFile(tls.ca_file, "tls_client_ca_file");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsFiles& tls) {
  if (!tls.enabled()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  if (!tls.ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadFile(tls.ca_file, "tls_ca_file");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
  }
  if (!tls.cert_file.empty()) {
    absl::StatusOr<std::string> cert = ReadFile(tls.cert_file, "tls_cert_file");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFile(tls.key_file, "tls_key_file");
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *cert;
    options.pem_private_key = *key;
  }
  return grpc::SslCredentials(options);
}

absl::StatusOr<std::unique_ptr<Authorizer>> Authorizer::FromFiles(const std::string& tokens_file,
                                                                  const std::string& roles_file,
                                                                  bool protect_reads) {
  auto authorizer = std::make_unique<Authorizer>();
  authorizer->protect_reads_ = protect_reads;
  if (!tokens_file.empty()) {
    absl::StatusOr<std::string> text = ReadFile(tokens_file, "auth_tokens_file");
    if (!text.ok()) return text.status();
    int line_number = 0;
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      ++line_number;
      line = absl::StripAsciiWhitespace(line);
      if (line.empty() || absl::StartsWith(line, "#")) continue;
      std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
      const std::string where = absl::StrCat("--auth_tokens_file line ", line_number);
      if (fields.size() != 3) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": expected \"TOKEN ROLE NAME\""));
      }
      if (fields[0].size() < 16) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": tokens must be 16 characters or more"));
      }
      absl::StatusOr<Role> role = ParseRole(fields[1], where);
      if (!role.ok()) return role.status();
      authorizer->tokens_[std::string(fields[0])] = {std::string(fields[2]), *role};
    }
  }
  if (!roles_file.empty()) {
    absl::StatusOr<std::string> text = ReadFile(roles_file, "auth_client_roles_file");
    if (!text.ok()) return text.status();
    int line_number = 0;
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      ++line_number;
      line = absl::StripAsciiWhitespace(line);
      if (line.empty() || absl::StartsWith(line, "#")) continue;
      std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
      const std::string where = absl::StrCat("--auth_client_roles_file line ", line_number);
      if (fields.size() != 2) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": expected \"COMMON_NAME ROLE\""));
      }
      absl::StatusOr<Role> role = ParseRole(fields[1], where);
      if (!role.ok()) return role.status();
      authorizer->certificate_roles_[std::string(fields[0])] = *role;
    }
  }
  if (protect_reads && !authorizer->enabled()) {
    return InvalidFieldError("auth_protect_reads",
                             "needs --auth_tokens_file or --auth_client_roles_file");
  }
  return authorizer;
}

absl::Status Authorizer::Check(const grpc::ServerContextBase& context, Access access) const {
  if (!enabled() || (access == Access::kRead && !protect_reads_)) return absl::OkStatus();
  const Role needed = access == Access::kWrite ? Role::kWriter : Role::kReader;
  std::string who;
  Role role = Role::kNone;
  bool presented = false;
  // A verified client certificate (mutual TLS).
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    for (const auto& name : auth->FindPropertyValues("x509_common_name")) {
      presented = true;
      auto it = certificate_roles_.find(std::string(name.data(), name.size()));
      if (it != certificate_roles_.end() && it->second > role) {
        role = it->second;
        who = absl::StrCat("client certificate \"", std::string(name.data(), name.size()), "\"");
      }
    }
  }
  // A bearer token.
  const auto& metadata = context.client_metadata();
  auto header = metadata.find("authorization");
  if (header != metadata.end()) {
    presented = true;
    absl::string_view value(header->second.data(), header->second.size());
    // The scheme is case-insensitive (RFC 7235): "Bearer", "bearer", "BEARER".
    if (value.size() > 7 && absl::StartsWithIgnoreCase(value, "bearer ")) {
      value.remove_prefix(7);
      value = absl::StripLeadingAsciiWhitespace(value);
      for (const auto& [token, identity] : tokens_) {
        if (ConstantTimeEquals(value, token) && identity.role > role) {
          role = identity.role;
          who = absl::StrCat("token \"", identity.name, "\"");
        }
      }
    }
  }
  const char* what = access == Access::kWrite ? "writing to the catalog" : "reading the catalog";
  if (role == Role::kNone) {
    return WithReason(
        absl::UnauthenticatedError(absl::StrCat(
            what, " needs credentials: ",
            presented ? "the token or client certificate given is not known"
                      : "send \"authorization: Bearer <token>\" or a client certificate")),
        "CREDENTIALS_MISSING_OR_UNKNOWN");
  }
  if (role < needed) {
    return WithReason(absl::PermissionDeniedError(absl::StrCat(who, " has the reader role; ", what,
                                                               " needs the writer role")),
                      "ROLE_INSUFFICIENT");
  }
  return absl::OkStatus();
}

namespace {

class BearerTokenAdder : public grpc::experimental::Interceptor {
 public:
  explicit BearerTokenAdder(const std::string* header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"authorization", *header_});
    }
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class BearerTokenFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerTokenFactory(std::string token) : header_(absl::StrCat("Bearer ", token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* /*info*/) override {
    return new BearerTokenAdder(&header_);
  }

 private:
  std::string header_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface> BearerTokenInterceptor(
    std::string token) {
  return std::make_unique<BearerTokenFactory>(std::move(token));
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path, absl::string_view flag) {
  absl::StatusOr<std::string> text = ReadFile(path, flag);
  if (!text.ok()) return text.status();
  std::string token(absl::StripAsciiWhitespace(text->substr(0, text->find('\n'))));
  if (token.empty()) return InvalidFieldError(flag, absl::StrCat("\"", path, "\" is empty"));
  return token;
}

}  // namespace modelatlas
