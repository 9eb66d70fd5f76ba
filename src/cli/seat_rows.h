// Reading the daemon's seat rows (the control socket's `status`): which seats should run and
// do not, in words. Shared by `shoal status`, `shoal daemon status` and `make run`'s checks.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <boost/json/array.hpp>

namespace shoal::cli {

struct SeatTrouble {
  std::string name;
  std::string note;  // why, as the daemon says (its `openFailure`, or the row's note)
};

// Seats whose desired state is running or sleeping but that are not open (a failed or pending
// open, an unsealed profile) or are parked after crashing.
std::vector<SeatTrouble> seatsNotRunning(const boost::json::array& seats);

// `! N seat(s) not running:` and one detail line per seat; nothing when all run.
void printSeatTrouble(const std::vector<SeatTrouble>& trouble);

}  // namespace shoal::cli
