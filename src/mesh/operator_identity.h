// The principal of the person at the command line (docs/architecture.md, Conventions): in open
// dev mode `local.<login>`, the login sanitised to an actor token, with display name
// `<login>@<host>`; in auth mode `<owner>.<login>`, the owner derived from the key the person
// holds (supervisor/user_identity.h). A one-shot sender: it has no roster row and no durables
// of its own.
//
// Thread safety: reads the environment and the password database; call from one thread.
#pragma once

#include <string>

#include "wire/principal.h"

namespace shoal::mesh {

struct OperatorIdentity {
  wire::Principal principal;
  std::string displayName;  // "<login>@<host>"
};

OperatorIdentity localOperator();
// The same person under an authenticated owner token (`u_…`).
OperatorIdentity operatorOwnedBy(const std::string& owner);

}  // namespace shoal::mesh
