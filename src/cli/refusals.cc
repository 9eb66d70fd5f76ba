#include "cli/refusals.h"

#include <array>

namespace shoal::cli {
namespace {

constexpr std::array kRefusals = {
    // Finding the mesh.
    Refusal{"no-mesh", "no local mesh is registered for the space on this machine",
            "start it with `shoal up` (add `--space NAME` for another space), or name a broker "
            "with `--server URL`"},
    Refusal{"mesh-not-up", "`shoal status` found no local mesh for the space",
            "start it with `shoal up`, or inspect another broker with `--server URL`"},
    Refusal{"mesh-not-running",
            "the space's registry entry names a supervisor that is gone (killed, or the machine "
            "restarted)",
            "`shoal up` starts the mesh again and replaces the stale entry"},
    Refusal{"unreachable", "the broker does not answer at the recorded address",
            "`shoal down && shoal up` restarts the local mesh; for `--server`, check the URL"},
    Refusal{"broker-auth-refused",
            "the broker refused the credential presented (none, or an nkey it does not list): "
            "the local mesh admits only its owner",
            "run the command as the user who ran `shoal up`; against another broker pass "
            "`--nkey FILE`"},
    Refusal{"auth-failed", "the broker refused the connection's credential",
            "use the mesh owner's account, or pass the broker's credential with `--nkey FILE`"},
    Refusal{"no-mesh-secret", "the mesh secret file named by the registry is missing",
            "`shoal down && shoal up` mints a new secret"},
    Refusal{"bad-mesh-secret", "the mesh secret file does not hold an nkey seed",
            "remove the file and run `shoal down && shoal up` for a new one"},
    Refusal{"secret-exposed",
            "a secret file (mesh secret, profile key) is readable or writable by other users, or "
            "belongs to another user",
            "`chmod 600` it, or better remove it and restart the mesh (`shoal down && shoal up`): "
            "treat it as leaked"},
    Refusal{"not-owner", "a Shoal directory belongs to another user",
            "use your own HOME / XDG directories; Shoal never keeps secrets in a directory "
            "someone else owns"},
    Refusal{"open-mode-off-loopback",
            "`shoal up --host` named an address beyond loopback, but open mode has one shared "
            "secret, no per-principal credentials and no TLS",
            "keep the default 127.0.0.1 (or another loopback address); a mesh shared between "
            "machines runs in auth mode: `shoal up --auth --host ADDR` (with TLS)"},
    Refusal{"tls-needs-auth",
            "`shoal up --tls` on a space in open mode: TLS is for a space shared beyond one "
            "machine, and open mode has one shared secret",
            "`shoal up --auth --tls` (or `--auth --host ADDR`, which always runs with TLS)"},
    Refusal{"space-is-open",
            "`shoal up --auth` on a space created in open mode: its messages live under the "
            "open account and the space would start empty in auth mode",
            "use another space (`--space NAME --auth`), or `shoal down` and remove the space's "
            "data directory to start it over in auth mode"},
    Refusal{"no-authority",
            "the space runs in auth mode but this machine does not hold its credential "
            "authority, so it cannot mint your credential",
            "run the command on the machine that ran `shoal up --auth`"},
    Refusal{"not-this-owner",
            "in auth mode a seat daemon runs, and the manager issues credentials for, the seats of "
            "the person who runs it only; the seat's id names another owner",
            "leave out `--id` (the default id is yours: `<your owner>.<name>`), or add the seat on "
            "the machine of the person it belongs to"},
    Refusal{"daemon-creds-missing", "`shoal daemon run` in auth mode found no daemon credential",
            "start the mesh with `shoal up --auth` (it mints the daemon's credential and runs the "
            "daemon; on that machine `shoal daemon run` mints its own), or pass `--creds`"},
    Refusal{"needs-authority-machine",
            "the command needs the space owner's history and traffic reads (seat events, watch) or "
            "channel registry "
            "writes (channels set, default), which only the machine holding the space's "
            "authority can mint; a joined machine has neither",
            "run the command on the machine that ran `shoal up --auth`"},
    Refusal{"daemon-credential-refused",
            "the broker refused the seat daemon's credential: it was revoked (`shoal creds "
            "revoke`) or has expired",
            "on the space's machine `shoal up` mints a new one for its own daemon; a joined "
            "machine needs a new `shoal invite` there and `shoal daemon join` here"},
    Refusal{
        "invite-needs-tls",
        "`shoal invite` on a space whose broker runs without TLS; an invite carries credentials",
        "restart the mesh with TLS: `shoal down && shoal up --auth --host ADDR` (or `--tls` on "
        "loopback)"},
    Refusal{"invite-needs-address",
            "`shoal invite` on a broker listening on a wildcard address (0.0.0.0), which names no "
            "address to dial",
            "start the mesh with `--host ADDR`, the address the other machines reach it on"},
    Refusal{
        "plaintext-link",
        "`shoal daemon join` was given a `cotal://` link; invites travel only as `cotals://` (TLS)",
        "ask for a new invite from a broker that requires TLS (`shoal up --auth --host ADDR`, then "
        "`shoal invite`)"},
    Refusal{"bad-join-link",
            "the join link is damaged or incomplete (a field does not match its alphabet)",
            "copy the whole link `shoal invite` printed, or pipe it: `shoal daemon join -`"},
    Refusal{"space-mismatch", "the join link invites to another space than `--space` names",
            "leave out `--space` (the link names its space), or use the link for that space"},
    Refusal{"invite-names-machine",
            "the invite was made for one machine name and `--machine` names another",
            "leave out `--machine`, or ask for an invite without `--machine`"},
    Refusal{"ca-mismatch",
            "the broker presented no certificate authority with the fingerprint the join link "
            "names: it is not the space's broker, or something stands between you",
            "check the address in the link; ask for a new invite; nothing was sent to that broker"},
    Refusal{"tls-not-offered", "the broker at the link's address does not require TLS",
            "the link is not from that broker; ask its admin for a new `shoal invite`"},
    Refusal{
        "invite-expired",
        "the broker refused the invite's bootstrap credential: the invite expired or was revoked",
        "ask for a new `shoal invite` on the space's machine (`--ttl` makes it last longer, up to "
        "7 days)"},
    Refusal{
        "invite-used",
        "the invite was already exchanged by another machine: an invite admits one machine once",
        "ask for a new `shoal invite`; if you did not use it, someone else has the link: revoke "
        "that machine (`shoal creds revoke <space>-daemon-<machine>`)"},
    Refusal{"space-not-joined", "this machine has not joined the space",
            "`shoal daemon join <link>` with a link from `shoal invite`"},
    Refusal{"plane-creds-missing",
            "`shoal serve` was given one plane's credential but runs both planes",
            "pass both `--manager-creds` and `--delivery-creds`, or `--planes` the one whose "
            "credential you have"},
    Refusal{"bad-creds",
            "a `.creds` file holds no user JWT, or one whose signature is not its issuer's",
            "mint it again (`shoal up --auth` renews the planes' and your own; `shoal creds mint` "
            "any other)"},
    Refusal{"permission-violation",
            "the broker refused a subject the credential's grants do not allow (auth mode)",
            "the message names the subject; in auth mode a seat, or a `shoal join` peer, may "
            "read and post only the channels its credential was minted for"},
    Refusal{"bad-space", "a space name is 1–64 letters, digits, `_` or `-`",
            "pick a name like `main` or `team-a` (`--space NAME`)"},
    Refusal{"no-home", "neither HOME nor XDG_DATA_HOME / XDG_STATE_HOME is an absolute path",
            "set HOME"},
    Refusal{"bad-mesh-record", "the mesh registry file is damaged",
            "`shoal down --force` removes it; then `shoal up`"},
    Refusal{"nats-server-missing", "nats-server is not installed",
            "`scripts/bootstrap` (or `apt install nats-server`)"},
    Refusal{"supervisor-exited", "the mesh supervisor exited before its broker was ready",
            "read the log tail printed with the error (a port or store problem)"},
    Refusal{"broker-not-ready", "the broker did not become ready in time",
            "see the supervisor and broker logs under `$XDG_STATE_HOME/shoal/logs`"},
    Refusal{"space-not-provisioned", "the space's streams and buckets do not exist on the broker",
            "start the mesh with `shoal up` (its manager plane provisions the space) or run "
            "`shoal serve`"},
    Refusal{"jetstream-off", "the broker does not offer JetStream",
            "start nats-server with `-js` (`shoal up` does)"},
    // The seat daemon.
    Refusal{"daemon-not-running", "no seat daemon answers on the space's control socket",
            "`shoal up` runs one (or `shoal daemon run` in a terminal)"},
    Refusal{"daemon-running", "a seat daemon already serves this space's control socket",
            "use it (`shoal daemon status`), or stop it first"},
    Refusal{"control-timeout", "the daemon did not answer in time",
            "retry with a larger `--timeout`; `shoal daemon status` shows what it is doing"},
    Refusal{"seat-exists", "a seat with that name (principal) is already registered",
            "use it (`shoal seat show NAME`), pick another name, or `shoal seat rm NAME` first"},
    Refusal{"unknown-seat", "no seat of that name or id is registered",
            "`shoal seat list` shows the seats"},
    Refusal{"stale-revision", "the seat changed since the revision you named",
            "read it again (`shoal seat show NAME`) and retry"},
    Refusal{"seat-not-running", "the seat has no running runtime for this operation",
            "`shoal seat start NAME`, then retry"},
    Refusal{"seat-busy", "the seat's runtime is in a turn", "retry once it is idle (`shoal ps`)"},
    Refusal{"seat-elsewhere", "the seat runs on another machine, whose daemon holds its journal",
            "run the command on that machine (`shoal seat show` names it)"},
    Refusal{"seat-has-messages",
            "`shoal seat move` found messages the seat still owns here (queued, inflight or "
            "awaiting their final hop)",
            "wait until `shoal ps` shows none for the seat, then move it"},
    Refusal{"bad-machine-name", "a machine name is 1-64 of [A-Za-z0-9_-]",
            "name the machine as its daemon reports it (`shoal daemon status`)"},
    Refusal{"machine-in-use",
            "another seat daemon (another home or host) already answers to this machine name in "
            "the space, or an invite without `--machine` was used to join under a name that is "
            "in use: two would run the same seats twice",
            "stop that daemon (the message names its host and pid), or start (or join) this one "
            "with its own `--machine NAME`"},
    Refusal{"runtime-missing", "the seat's runtime program is not installed or not on PATH",
            "install it (the message names how), or give its path after `--`"},
    Refusal{"missing-command", "an exec seat needs the program to run",
            "`shoal seat add NAME -- PROGRAM ARGS…`"},
    Refusal{"bad-cwd", "the seat's working directory does not exist or is not a directory",
            "create it, or add `--create-cwd` to `shoal seat add`"},
    Refusal{"cwd-in-use",
            "another seat already works in that directory (they would share one journal)",
            "give each seat its own `--cwd`"},
    Refusal{"bad-seat-name", "a seat name is 1 to 128 bytes of text without control characters",
            "choose another name"},
    Refusal{"unsealed-profile",
            "a stored seat profile carries no seal from this daemon: it was written before seals "
            "existed, or by someone other than the owner",
            "check its command with `shoal seat show NAME`; if it is yours, `shoal seat trust "
            "NAME` seals it"},
    Refusal{"forged-profile",
            "a stored seat profile's seal does not match its content: it was changed outside "
            "the daemon",
            "check it with `shoal seat show NAME`; `shoal seat rm NAME` and add it again"},
    Refusal{"foreign-profile", "the seat was sealed by another machine's daemon",
            "run it on that machine; it is never started here"},
    Refusal{"seat-kept-elsewhere",
            "the seat's profile is kept by another machine's daemon (each daemon writes only "
            "its own machine's records), or is an offer to this machine not yet taken",
            "change it on that machine; an offer to this one is taken with `shoal seat trust "
            "NAME`"},
    Refusal{"seat-is-here",
            "`shoal seat forget` names a seat this machine keeps: forget is for the seats of a "
            "machine that is gone",
            "`shoal seat rm NAME` (this machine's daemon removes its own records)"},
    Refusal{"seat-on-two-machines",
            "two machines both keep a record of the seat for themselves, so the manager issues "
            "its credential to neither (one principal runs on one machine)",
            "`shoal seat rm NAME` on the machine that should not run it"},
    Refusal{"principal-is-a-seat",
            "on a joined machine your commands run under a credential the manager issues for "
            "your person, and a seat of the space has your person's id, so it is refused",
            "rename or remove the seat that has your login as its name (`shoal seat rm NAME`)"},
    Refusal{"manager-not-serving", "no manager plane serves the space (not started yet, or down)",
            "`shoal up` runs one; a seat waiting for it opens by itself once it serves"},
    Refusal{"journal-location-conflict",
            "a seat's journal exists both in <cwd>/.daemon-state.json (the old place) and in "
            "<cwd>/.shoal/",
            "keep the current one (compare their contents) and remove the other"},
    Refusal{"compaction-unsupported", "the seat's runtime has no compaction on request",
            "compact codex or opencode seats"},
    Refusal{"interrupt-unsupported", "the seat's runtime cannot be interrupted (exec)",
            "stop its runtime with `shoal seat sleep`"},
    Refusal{"lock-held", "another daemon holds the seat's journal lock",
            "stop the other daemon, or give the seat its own `--cwd`"},
    // Sending and reading.
    Refusal{"unknown-peer", "no peer of that name or id is in the current roster",
            "`shoal endpoints` lists the peers; a principal id (`local.NAME`) is sent without a "
            "roster row"},
    Refusal{"ambiguous-name", "more than one peer has that name",
            "address it by its id (the message lists the candidates)"},
    Refusal{"presence-view-unpopulated",
            "the roster was not read in time, so a name cannot be checked",
            "retry with a larger `--timeout`, or address the peer by its id"},
    Refusal{"presence-view-stale", "the roster stopped updating, so a name cannot be checked",
            "check the broker (`shoal status`), or address the peer by its id"},
    Refusal{"bad-token", "a role, name or id holds characters a routing token cannot",
            "use letters, digits, `_` and `-`"},
    Refusal{"bad-wait", "`--wait` takes stored, surfaced or replied",
            "`shoal send dm NAME TEXT --wait replied`"},
    Refusal{"message-too-large",
            "a message's JSON may be at most 240 KiB (a seat keeps every message it owns in its "
            "journal)",
            "send a shorter text, or put the content in a file and send its path"},
    Refusal{"empty-text", "a message needs some text", "give the text to send"},
    Refusal{"mentions-need-a-channel", "only channel posts carry @mentions",
            "`shoal send msg CHANNEL TEXT --mention NAME`"},
    Refusal{"unknown-message", "no message with that id is in your inbox or the space's streams",
            "`shoal inbox --all` lists the ids"},
    Refusal{"ambiguous-id", "more than one message ends with the characters given",
            "give more of the id"},
    Refusal{"bad-message-id", "a message id (or its suffix) needs at least 6 characters",
            "copy the id `shoal inbox` shows"},
    Refusal{"durable-missing", "the principal has no DM durable on the broker yet",
            "it is made the first time the principal joins or a seat is added"},
    Refusal{"delivery-not-serving", "no delivery plane serves the space",
            "`shoal up` (or `shoal serve`) runs one"},
    Refusal{"join-refused", "the broker refused to subscribe to the channel",
            "in auth mode a credential reads only the channels it was minted for: a seat's "
            "person runs `shoal seat channels SEAT --add CHANNEL`, a `shoal join` peer starts "
            "again with `--channel CHANNEL`"},
    Refusal{"not-joined", "you are not a member of that channel",
            "join it first (`/join CHANNEL` in `shoal join`)"},
    // The command line itself.
    Refusal{"usage", "the command line does not parse", "`shoal help COMMAND` shows its usage"},
    Refusal{"unknown-command", "no command of that name",
            "`shoal help` lists the commands (a close match is suggested)"},
};

}  // namespace

std::span<const Refusal> refusals() {
  return kRefusals;
}

const Refusal* findRefusal(std::string_view reason) {
  for (const Refusal& r : kRefusals) {
    if (r.reason == reason) return &r;
  }
  return nullptr;
}

}  // namespace shoal::cli
