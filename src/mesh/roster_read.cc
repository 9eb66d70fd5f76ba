#include "mesh/roster_read.h"

#include <future>
#include <memory>
#include <string>

#include "base/executor.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "wire/names.h"

namespace shoal::mesh {

Result<RosterSnapshot> readRosterOnce(transport::Connection& conn, std::string_view space,
                                      std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(auto js, transport::JetStream::create(conn));
  SHOAL_ASSIGN_OR_RETURN(const std::string bucket,
                         wire::bucketName(wire::Bucket::kPresence, space));
  auto kv = transport::KeyValue::openBucket(js, bucket);
  if (!kv.isOk()) {
    if (kv.status().code() == StatusCode::kNotFound) {
      return notFound("space-not-provisioned",
                      "space `" + std::string(space) + "` has no presence bucket (" + bucket +
                          "); start the mesh with `shoal up` (or run `shoal serve`)");
    }
    return kv.status();
  }

  EventLoopThread loop;
  KvPresenceWatchSource source(*kv);
  auto view = std::make_unique<RosterView>(loop, source);
  std::promise<Result<RosterSnapshot>> outcome;
  loop.post([&] {
    Status started = view->start();
    if (!started.isOk()) {
      outcome.set_value(started);
      return;
    }
    view->waitForPresenceSnapshot(timeout, [&](Result<RosterSnapshot> snap) {
      // A timeout is not an error for a reader: report what the view holds, labelled.
      outcome.set_value(snap.isOk() ? std::move(snap) : Result<RosterSnapshot>(view->snapshot()));
    });
  });
  Result<RosterSnapshot> result = outcome.get_future().get();
  std::promise<void> stopped;
  loop.post([&] {
    view->stop();
    view.reset();
    stopped.set_value();
  });
  stopped.get_future().get();
  loop.stop();
  return result;
}

}  // namespace shoal::mesh
