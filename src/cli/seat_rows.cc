#include "cli/seat_rows.h"

#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/output.h"

namespace shoal::cli {

namespace json = boost::json;

std::vector<SeatTrouble> seatsNotRunning(const json::array& seats) {
  std::vector<SeatTrouble> out;
  for (const auto& v : seats) {
    if (!v.is_object()) continue;
    const json::object& s = v.as_object();
    auto text = [&](const char* key) {
      const json::value* f = s.if_contains(key);
      return f != nullptr && f->is_string() ? std::string(f->as_string()) : std::string();
    };
    const std::string desired = text("desired");
    const std::string state = text("state");
    const bool notOpen = desired != "stopped" && state == "stopped";
    const json::value* journal = s.if_contains("journal");
    const bool poisoned = journal != nullptr && journal->is_object();
    if (!notOpen && state != "parked" && !poisoned) continue;
    std::string note = text("note");
    if (poisoned) {
      const json::object& j = journal->as_object();
      const json::value* poison = j.if_contains("poisoned");
      note = fmt::format(
          "journal poisoned since {} ({}); free disk space — the daemon reopens the "
          "seat by itself",
          formatClock(j.at("since").to_number<int64_t>()),
          poison != nullptr && poison->is_string() ? std::string(poison->as_string())
                                                   : std::string("a failed write"));
    }
    if (const json::value* f = s.if_contains("openFailure"); f != nullptr && f->is_object()) {
      const json::object& o = f->as_object();
      note = fmt::format("{} ({}); retrying in {} s, attempt {}",
                         std::string(o.at("message").as_string()),
                         std::string(o.at("reason").as_string()),
                         (o.at("retryInMs").to_number<int64_t>() + 999) / 1000,
                         o.at("attempts").to_number<int64_t>());
    }
    out.push_back(SeatTrouble{text("name"), note.empty() ? state : note});
  }
  return out;
}

void printSeatTrouble(const std::vector<SeatTrouble>& trouble) {
  if (trouble.empty()) return;
  printNote(fmt::format("{} seat{} not running:", trouble.size(), trouble.size() == 1 ? "" : "s"));
  for (const auto& t : trouble)
    printDetail(t.name + " — " + t.note);
}

}  // namespace shoal::cli
