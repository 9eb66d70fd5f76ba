#include "planes/fanout_jobs.h"

#include <chrono>

namespace shoal::planes {
namespace {

bool finished(JobState s) {
  return s == JobState::kDelivered || s == JobState::kFailed || s == JobState::kSuppressed;
}

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string_view jobStateName(JobState state) {
  switch (state) {
    case JobState::kLeased:
      return "leased";
    case JobState::kDelivered:
      return "delivered";
    case JobState::kRetry:
      return "retry";
    case JobState::kFailed:
      return "failed";
    case JobState::kSuppressed:
      return "suppressed";
  }
  return "?";
}

void FanoutJobs::update(const FanoutJob& job) {
  std::lock_guard lock(mu_);
  auto old = jobs_.find(job.key);
  const bool wasFinished = old != jobs_.end() && finished(old->second.state);
  auto [it, inserted] = jobs_.insert_or_assign(job.key, job);
  it->second.updatedMs = nowMs();
  if (inserted) order_.push_back(job.key);
  if (finished(job.state) && !wasFinished) ++totals_[std::string(jobStateName(job.state))];
  // Forget the oldest finished jobs beyond capacity; unfinished ones stay.
  size_t scanned = 0;
  while (jobs_.size() > capacity_ && scanned < order_.size()) {
    const std::string key = order_.front();
    order_.pop_front();
    auto j = jobs_.find(key);
    if (j != jobs_.end() && !finished(j->second.state)) {
      order_.push_back(key);
      ++scanned;
      continue;
    }
    if (j != jobs_.end()) jobs_.erase(j);
  }
}

std::vector<FanoutJob> FanoutJobs::snapshot() const {
  std::lock_guard lock(mu_);
  std::vector<FanoutJob> out;
  out.reserve(jobs_.size());
  for (const auto& key : order_) {
    if (auto j = jobs_.find(key); j != jobs_.end()) out.push_back(j->second);
  }
  return out;
}

std::map<std::string, uint64_t> FanoutJobs::totals() const {
  std::lock_guard lock(mu_);
  auto out = totals_;
  for (const auto& [key, job] : jobs_) {
    if (!finished(job.state)) ++out[std::string(jobStateName(job.state))];
  }
  return out;
}

void FanoutJobs::countReader(uint64_t ReaderCounters::*field) {
  std::lock_guard lock(mu_);
  ++(reader_.*field);
}

ReaderCounters FanoutJobs::reader() const {
  std::lock_guard lock(mu_);
  return reader_;
}

}  // namespace shoal::planes
