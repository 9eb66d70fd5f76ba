#include "mesh/dedup_window.h"

namespace shoal::mesh {

bool DedupWindow::contains(std::string_view id) const {
  return !id.empty() && ids_.count(id) != 0;
}

void DedupWindow::insert(std::string_view id) {
  if (id.empty() || capacity_ == 0 || contains(id)) return;
  if (order_.size() == capacity_) {
    ids_.erase(order_.front());
    order_.pop_front();
  }
  // std::deque never moves its elements on push_back/pop_front, so the views stay valid.
  order_.emplace_back(id);
  ids_.insert(order_.back());
}

}  // namespace shoal::mesh
