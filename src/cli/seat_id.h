// How the CLI names a seat: by its principal id (`local.reviewer`) or by its public name
// (`Code Reviewer` → `local.code_reviewer`, the id `shoal seat add` derives by default; in auth
// mode the owner is the person's own `u_…`, so `<owner>.code_reviewer`).
//
// Thread safety: a pure function.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

#include "wire/names.h"
#include "wire/principal.h"

namespace shoal::cli {

// `idOrName` as is when it parses as a principal id, else `<owner>.<name as a lower-case
// token>`. The result is not validated: the daemon refuses an id that does not parse.
inline std::string seatId(const std::string& idOrName, std::string_view owner = wire::kLocalOwner) {
  if (wire::parsePrincipal(idOrName).isOk()) return idOrName;
  std::string actor = wire::actorFromName(idOrName);
  for (char& c : actor)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::string(owner) + "." + actor;
}

}  // namespace shoal::cli
