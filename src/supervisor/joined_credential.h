// The person's command credential on a joined machine (docs/multi-machine.md). A machine that
// joined a space by invite (space_join.h) holds no authority, so it cannot mint the person's
// agent-profile credential the way the authority's machine does (auth_mode.h cliCredential).
// Instead its daemon credential asks the manager on the credential rail for one, marked as the
// person's (mesh/credential_rail.h IssueRequest::person): the agent profile of
// `<owner>.<login>` — the owner who invited the machine — with a fresh key and inbox, its
// lifecycle from peer_uid.h, reading and posting to exactly the channels the command names,
// for 15 minutes. It is kept in `<secrets>/<space>-joined/cli.creds` (0600) and reused while it
// has five more minutes, unless a command names channels to post to.
//
// Thread safety: a free function over the file system and one broker connection.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "supervisor/auth_mode.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/space_join.h"

namespace shoal::supervisor {

// The credential file while it is valid, else a fresh one from the manager. Errors: the
// daemon credential's or the broker's (`daemon-credential-refused` for a revoked machine),
// `manager-not-serving`, and the manager's refusals (`principal-is-a-seat`, `no-authority`).
Result<CliCredential> joinedPersonCredential(const MeshPaths& paths, const JoinedSpace& joined,
                                             const std::vector<std::string>& postChannels);

// The person's mail reader on a joined machine (`shoal inbox|read|reply`, `history --dm`): asked
// of the manager the same way (`"mailbox": true`: planes/grants.h mailboxGrants, their own DMs
// only), kept in `<secrets>/<space>-joined/mailbox.creds` (0600) while it has five more minutes.
Result<CliCredential> joinedMailboxCredential(const MeshPaths& paths, const JoinedSpace& joined);

}  // namespace shoal::supervisor
