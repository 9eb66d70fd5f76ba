#include "mesh/operator_identity.h"

#include <climits>
#include <cstdlib>

#include <pwd.h>
#include <unistd.h>

namespace shoal::mesh {

OperatorIdentity localOperator() {
  std::string login;
  if (const char* user = std::getenv("USER"); user != nullptr && *user != '\0') {
    login = user;
  } else if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_name != nullptr) {
    login = pw->pw_name;
  } else {
    login = "uid" + std::to_string(::getuid());
  }
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  OperatorIdentity id;
  id.principal = wire::Principal{std::string(wire::kLocalOwner), wire::actorFromName(login)};
  id.displayName = login + "@" + (host[0] != '\0' ? std::string(host) : std::string("localhost"));
  return id;
}

OperatorIdentity operatorOwnedBy(const std::string& owner) {
  OperatorIdentity id = localOperator();
  id.principal.owner = owner;
  return id;
}

}  // namespace shoal::mesh
