// readRosterOnce: one look at a space's roster, for one-shot readers (`shoal endpoints`).
//
// Opens the presence bucket, runs a RosterView until its initial snapshot completes or
// `timeout` passes, and returns what the view holds then. The snapshot carries the view's
// state: a view that did not become current is returned as such (rows are last-known / partial
// and `view.condition` says why), never as a complete roster.
//
// Errors: kNotFound (reason `space-not-provisioned`) when the presence bucket does not exist,
// naming `shoal up` / `shoal serve`; transport errors as they come.
//
// Thread safety: blocks the calling thread; runs the view on a private event loop.
#pragma once

#include <chrono>
#include <string_view>

#include "base/result.h"
#include "mesh/roster_view.h"
#include "transport/connection.h"

namespace shoal::mesh {

Result<RosterSnapshot> readRosterOnce(transport::Connection& conn, std::string_view space,
                                      std::chrono::milliseconds timeout);

}  // namespace shoal::mesh
