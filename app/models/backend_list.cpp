#include "backend_list.h"

#include <QObject>
#include <algorithm>

#include "cordon/capabilities.h"

namespace cordon::inspector {

QString BackendItem::label() const {
  return unisolated ? QObject::tr("%1 (no isolation)").arg(name) : name;
}

BackendList::BackendList() = default;

std::vector<BackendItem> BackendList::items() const {
  std::vector<BackendItem> items;
  for (const frontend::BackendCandidate& candidate : catalog_.candidates()) {
    const bool unisolated =
        candidate.available && std::ranges::none_of(kIsolationAspects, [&](Aspect aspect) {
          return candidate.capabilities.level(aspect) != Enforcement::kNone;
        });
    items.push_back({QString::fromStdString(candidate.name),
                     QString::fromStdString(candidate.version), candidate.available,
                     QString::fromStdString(candidate.reason), unisolated});
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
