#include "backend_list.h"

namespace cordon::inspector {

BackendList::BackendList() = default;

std::vector<BackendItem> BackendList::items() const {
  std::vector<BackendItem> items;
  for (const frontend::BackendCandidate& candidate : catalog_.candidates()) {
    items.push_back({QString::fromStdString(candidate.name),
                     QString::fromStdString(candidate.version), candidate.available,
                     QString::fromStdString(candidate.reason)});
  }
  return items;
}

Backend* BackendList::backend(const QString& name) const {
  for (const frontend::BackendCandidate& candidate : catalog_.candidates()) {
    if (candidate.name == name.toStdString() && candidate.available) {
      return catalog_.backend(candidate.name);
    }
  }
  return nullptr;
}

}  // namespace cordon::inspector
