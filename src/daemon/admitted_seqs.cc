#include "daemon/admitted_seqs.h"

#include <boost/json.hpp>

namespace shoal::daemon {

void AdmittedSeqs::insert(uint64_t seq) {
  if (seq == 0 || contains(seq)) return;
  uint64_t lo = seq, hi = seq;
  auto next = runs_.upper_bound(seq);  // first run starting after seq
  if (next != runs_.end() && next->first == seq + 1) {
    hi = next->second;
    next = runs_.erase(next);
  }
  if (next != runs_.begin()) {
    auto prev = std::prev(next);
    if (prev->second + 1 == seq) {
      lo = prev->first;
      runs_.erase(prev);
    }
  }
  runs_[lo] = hi;
  while (runs_.size() > kMaxIntervals)
    runs_.erase(runs_.begin());
}

bool AdmittedSeqs::contains(uint64_t seq) const {
  auto it = runs_.upper_bound(seq);
  if (it == runs_.begin()) return false;
  --it;
  return seq >= it->first && seq <= it->second;
}

std::string AdmittedSeqs::toJson() const {
  boost::json::array runs;
  for (const auto& [lo, hi] : runs_)
    runs.push_back(boost::json::array{lo, hi});
  return boost::json::serialize(boost::json::object{{"seq", std::move(runs)}});
}

Result<AdmittedSeqs> AdmittedSeqs::fromJson(std::string_view json) {
  auto bad = [] {
    return dataLoss("bad-admitted-seqs", "the seat's admitted-DM section is damaged");
  };
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(json, ec);
  if (ec || !v.is_object()) return bad();
  const auto* seq = v.as_object().if_contains("seq");
  if (seq == nullptr || !seq->is_array()) return bad();
  AdmittedSeqs out;
  for (const auto& run : seq->as_array()) {
    if (!run.is_array() || run.as_array().size() != 2) return bad();
    const auto& a = run.as_array();
    if (!a[0].is_number() || !a[1].is_number()) return bad();
    uint64_t lo = a[0].to_number<uint64_t>(ec), hi = a[1].to_number<uint64_t>(ec);
    if (ec || lo == 0 || hi < lo) return bad();
    out.runs_[lo] = hi;
  }
  return out;
}

}  // namespace shoal::daemon
