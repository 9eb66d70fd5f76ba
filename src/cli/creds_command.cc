// `shoal creds mint|list|revoke`: the space admin's credentials by hand, on the machine that
// holds the space's authority (auth mode; docs/security.md).
//
//   shoal creds mint NAME [--profile agent|observer|admin] [--post C]... [--read P]...
//                         [--role R] [--ttl SECONDS] --out FILE [--json]
//       mints a credential into FILE (created 0600; an existing file is refused) and records
//       it in the authority's ledger. An agent NAME is a principal `o.a`, or an actor under your
//       own owner; its lifecycle uid (named by its rail grants) and inbox are printed.
//   shoal creds list [--json]
//       the ledger: name, profile, user key, expiry and state (valid, expired, revoked).
//   shoal creds revoke USERKEY|NAME [--json]
//       revokes every credential of that user issued up to now and pushes the account's new
//       claims to the running broker, which then refuses the user and closes its connections.
//
// Thread safety: CLI thread only.
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/ids.h"
#include "cli/command.h"
#include "cli/output.h"
#include "planes/grants.h"
#include "supervisor/auth_mode.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/mesh_record.h"
#include "supervisor/user_identity.h"
#include "wire/principal.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct CredsArgs {
  std::string space = "main";
  std::string name;
  std::string profile = "agent";
  std::vector<std::string> post;
  std::vector<std::string> read;
  std::string role;
  int64_t ttlSeconds = 86'400;
  std::string out;
  bool json = false;
};

// The space's authority on this machine, or `no-authority` naming where it lives.
Result<planes::CredentialAuthority> authorityOf(const supervisor::MeshPaths& paths) {
  if (!supervisor::spaceUsesAuth(paths)) {
    return failedPrecondition("no-authority",
                              "space " + paths.space +
                                  " has no credential authority on this machine (start it in "
                                  "auth mode with `shoal up --auth`)");
  }
  return supervisor::openAuthority(paths);
}

// The space's paths and its authority on this machine, opened together for each command.
struct Authority {
  supervisor::MeshPaths paths;
  std::optional<planes::CredentialAuthority> keys;
};

Result<Authority> openSpaceAuthority(const std::string& space) {
  Authority out;
  SHOAL_ASSIGN_OR_RETURN(out.paths, supervisor::MeshPaths::resolve(space));
  SHOAL_ASSIGN_OR_RETURN(out.keys, authorityOf(out.paths));
  return out;
}

// An agent's principal: `o.a` as given, or an actor under the admin's own owner.
Result<wire::Principal> agentPrincipal(const supervisor::MeshPaths& paths,
                                       const std::string& name) {
  if (name.find('.') != std::string::npos) return wire::parsePrincipal(name);
  SHOAL_ASSIGN_OR_RETURN(supervisor::UserIdentity me,
                         supervisor::ensureUserIdentity(paths.secretsDir));
  wire::Principal p{me.owner, name};
  SHOAL_RETURN_IF_ERROR(wire::validatePrincipal(p));
  return p;
}

struct Minted {
  std::vector<planes::GrantRow> rows;
  std::string name;
  std::string uid;
  std::string connId;
};

Result<Minted> rowsFor(const supervisor::MeshPaths& paths, const CredsArgs& args) {
  Minted m;
  SHOAL_ASSIGN_OR_RETURN(std::string token, newLifecycleUid());
  m.connId = "ibx" + args.profile.substr(0, 3) + token;
  if (args.profile == "agent") {
    planes::AgentScope scope;
    scope.space = paths.space;
    SHOAL_ASSIGN_OR_RETURN(scope.principal, agentPrincipal(paths, args.name));
    SHOAL_ASSIGN_OR_RETURN(m.uid, newLifecycleUid());
    scope.lifecycleUid = m.uid;
    scope.connId = m.connId;
    scope.readChannels = args.read;
    scope.postChannels = args.post;
    if (!args.role.empty()) scope.role = args.role;
    SHOAL_ASSIGN_OR_RETURN(m.rows, planes::agentGrants(scope));
    m.name = scope.principal.dotForm();
    return m;
  }
  if (args.profile != "observer" && args.profile != "admin") {
    return invalidArgument("bad-profile",
                           "--profile is agent, observer or admin, not '" + args.profile + "'");
  }
  if (!args.post.empty() || !args.read.empty() || !args.role.empty()) {
    return invalidArgument("bad-profile",
                           "--post, --read and --role shape an agent credential only");
  }
  const planes::ReaderScope scope{paths.space, m.connId};
  SHOAL_ASSIGN_OR_RETURN(m.rows, args.profile == "observer" ? planes::observerGrants(scope)
                                                            : planes::adminGrants(scope));
  m.name = args.name;
  return m;
}

int runMint(const CredsArgs& args) {
  constexpr std::string_view what = "shoal creds mint";
  auto opened = openSpaceAuthority(args.space);
  if (!opened.isOk()) return printFailure(what, opened.status());
  const supervisor::MeshPaths* paths = &opened->paths;
  planes::CredentialAuthority* authority = &*opened->keys;
  auto minted = rowsFor(*paths, args);
  if (!minted.isOk()) return printFailure(what, minted.status(), 2);
  auto user = authority->mint(minted->name, minted->rows, std::chrono::seconds(args.ttlSeconds));
  if (!user.isOk()) return printFailure(what, user.status());
  // A credential is a secret: created owner-only, never over an existing file.
  FileSystem& fs = FileSystem::posix();
  auto file = fs.openForWrite(args.out, CreateMode::kExclusive);
  if (!file.isOk()) return printFailure(what, file.status().withContext("creating " + args.out));
  Status written = (*file)->append(user->creds);
  if (written.isOk()) written = (*file)->sync();
  if (written.isOk()) written = (*file)->close();
  if (!written.isOk()) return printFailure(what, written);
  const int64_t now = Clock::real().wallMs() / 1000;
  Status recorded =
      authority->recordIssued({user->userKey, minted->name, args.profile, now, user->expiresAt});
  if (!recorded.isOk()) return printFailure(what, recorded);
  const std::string inbox = "_INBOX_" + minted->connId;
  if (args.json) {
    printResult(json::object{{"userKey", user->userKey},
                             {"name", minted->name},
                             {"profile", args.profile},
                             {"file", args.out},
                             {"expiresAt", user->expiresAt},
                             {"inboxPrefix", inbox},
                             {"lifecycleUid", minted->uid}});
    return 0;
  }
  printOk(fmt::format("{} credential for {} in {} (user {}), valid {} h", args.profile,
                      minted->name, args.out, user->userKey, args.ttlSeconds / 3600));
  printDetail("its connections must use the reply inbox prefix " + inbox);
  if (!minted->uid.empty()) printDetail("its lifecycle uid (the rails name it): " + minted->uid);
  printDetail("revoke it with `shoal creds revoke " + user->userKey + "`");
  return 0;
}

std::string stateOf(const planes::CredentialAuthority& authority, const planes::IssuedCredential& c,
                    int64_t now) {
  if (authority.isRevoked(c.userKey)) return "revoked";
  return c.expiresAt <= now ? "expired" : "valid";
}

int runList(const CredsArgs& args) {
  constexpr std::string_view what = "shoal creds list";
  auto opened = openSpaceAuthority(args.space);
  if (!opened.isOk()) return printFailure(what, opened.status());
  const supervisor::MeshPaths* paths = &opened->paths;
  planes::CredentialAuthority* authority = &*opened->keys;
  auto issued = authority->issued();
  if (!issued.isOk()) return printFailure(what, issued.status());
  const int64_t now = Clock::real().wallMs() / 1000;
  if (args.json) {
    json::array rows;
    for (const auto& c : *issued) {
      rows.push_back(json::object{{"userKey", c.userKey},
                                  {"name", c.name},
                                  {"profile", c.profile},
                                  {"issuedAt", c.issuedAt},
                                  {"expiresAt", c.expiresAt},
                                  {"state", stateOf(*authority, c, now)}});
    }
    printResult(std::move(rows), "credentials");
    return 0;
  }
  printOk(
      fmt::format("{} credential(s) minted by hand for space {}", issued->size(), paths->space));
  for (const auto& c : *issued) {
    printDetail(fmt::format("{:<8} {:<9} {} {} (expires in {} min)", stateOf(*authority, c, now),
                            c.profile, c.name, c.userKey,
                            std::max<int64_t>(c.expiresAt - now, 0) / 60));
  }
  return 0;
}

int runRevoke(const CredsArgs& args) {
  constexpr std::string_view what = "shoal creds revoke";
  auto opened = openSpaceAuthority(args.space);
  if (!opened.isOk()) return printFailure(what, opened.status());
  const supervisor::MeshPaths* paths = &opened->paths;
  planes::CredentialAuthority* authority = &*opened->keys;
  auto issued = authority->issued();
  if (!issued.isOk()) return printFailure(what, issued.status());
  // An actor alone names the admin's own principal of that actor, as `mint` does.
  std::string fullName = args.name;
  if (auto p = agentPrincipal(*paths, args.name); p.isOk()) fullName = p->dotForm();
  std::vector<std::string> keys;
  for (const auto& c : *issued) {
    if (c.userKey == args.name || c.name == args.name || c.name == fullName)
      keys.push_back(c.userKey);
  }
  if (keys.empty()) keys.push_back(args.name);  // a user key minted elsewhere
  for (const auto& key : keys) {
    if (Status st = authority->revoke(key); !st.isOk()) return printFailure(what, st, 2);
  }
  auto record = supervisor::readMeshRecord(FileSystem::posix(), paths->registryFile);
  Status pushed =
      record.isOk() ? supervisor::pushAccountClaims(*authority, *paths, record->url, record->caFile)
                    : unavailable("mesh-not-up",
                                  "the mesh is not up; the broker learns the "
                                  "revocation when `shoal up` starts it");
  if (args.json) {
    json::array revoked;
    for (const auto& k : keys)
      revoked.push_back(json::value(k));
    json::object out{{"revoked", std::move(revoked)}, {"pushed", pushed.isOk()}};
    if (!pushed.isOk()) out["pushError"] = errorObject(pushed);
    printResult(std::move(out));
    return 0;
  }
  for (const auto& k : keys)
    printOk("revoked " + k);
  if (pushed.isOk()) {
    printOk("the broker refuses them from now on (its connections are closed)");
  } else {
    printNote("not pushed to the broker: " + pushed.toString());
  }
  return 0;
}

}  // namespace

void registerCredsCommands(CLI::App& app, CommandResult& result) {
  auto mint = std::make_shared<CredsArgs>();
  auto list = std::make_shared<CredsArgs>();
  auto revoke = std::make_shared<CredsArgs>();
  CLI::App* creds = app.add_subcommand(
      "creds", "auth mode: mint, list and revoke credentials (on the authority's machine)");
  creds->require_subcommand(1);

  CLI::App* m = creds->add_subcommand("mint", "mint a credential into a new owner-only file");
  m->add_option("name", mint->name, "an agent's principal (o.a) or actor; a label otherwise")
      ->required();
  m->add_option("--profile", mint->profile, "agent, observer or admin")->capture_default_str();
  m->add_option("--post", mint->post, "agent: a channel it may post to (repeatable)");
  m->add_option("--read", mint->read, "agent: a channel pattern it may read (repeatable)");
  m->add_option("--role", mint->role, "agent: the role whose work it takes");
  m->add_option("--ttl", mint->ttlSeconds, "seconds it stays valid")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{60}, int64_t{30} * 86'400));
  m->add_option("--out", mint->out, "the file to create (0600; never overwritten)")->required();
  m->add_option("--space", mint->space, "space name")->capture_default_str();
  m->add_flag("--json", mint->json, "machine-readable output");
  m->callback([mint, &result] { result.exitCode = runMint(*mint); });

  CLI::App* l = creds->add_subcommand("list", "the credentials minted by hand, and their state");
  l->add_option("--space", list->space, "space name")->capture_default_str();
  l->add_flag("--json", list->json, "machine-readable output");
  l->callback([list, &result] { result.exitCode = runList(*list); });

  CLI::App* r = creds->add_subcommand(
      "revoke", "revoke a user's credentials and tell the running broker at once");
  r->add_option("who", revoke->name, "the user key (U…) or the name it was minted for")->required();
  r->add_option("--space", revoke->space, "space name")->capture_default_str();
  r->add_flag("--json", revoke->json, "machine-readable output");
  r->callback([revoke, &result] { result.exitCode = runRevoke(*revoke); });
}

}  // namespace shoal::cli
