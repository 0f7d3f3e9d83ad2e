#include "backend_list.h"

#include <QObject>
#include <algorithm>

#include "cordon/capabilities.h"

namespace cordon::inspector {

QString BackendItem::label() const {
  return unisolated ? QObject::tr("%1 (no isolation)").arg(name) : name;
}

BackendList::BackendList()
    : catalog_({}, {}, {}, frontend::BackendCatalog::Variants::kList),
      software_(environment::describe(environment::Selection{
          .name = environment::kHostName, .digest = "", .root = "", .inventory = std::nullopt})) {}

BackendOptions BackendList::options_for(const environment::Selection& environment) {
  BackendOptions options;
  environment::show_in(environment, options);
  return options;
}

BackendList::BackendList(const environment::Selection& environment)
    : catalog_({}, {}, options_for(environment), frontend::BackendCatalog::Variants::kList),
      environment_{.name = environment.name, .digest = environment.digest},
      software_(environment::describe(environment)) {}

QStringList BackendList::environment_names() {
  QStringList names{QString::fromLatin1(environment::kHostName)};
  auto dir = environment::Store::default_dir();
  if (!dir) return names;
  auto listed = environment::Store(*dir).list();
  if (!listed) return names;
  for (const environment::Environment& e : *listed) names << QString::fromStdString(e.name);
  return names;
}

Result<BackendListPtr> BackendList::in_environment(const BackendListPtr& host,
                                                   const QString& name) {
  if (name.isEmpty() || name == QLatin1String(environment::kHostName)) return host;
  auto selection = environment::select(name.toStdString(), std::nullopt);
  if (!selection) return std::unexpected(selection.error());
  return std::make_shared<const BackendList>(*selection);
}

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

EnvironmentLists::EnvironmentLists(BackendListPtr host)
    : host_(std::move(host)), names_(BackendList::environment_names()) {}

bool EnvironmentLists::refresh() {
  QStringList names = BackendList::environment_names();
  std::erase_if(made_, [](const auto& entry) {
    const auto now = environment::select(entry.first.toStdString(), std::nullopt);
    return !now || now->digest != entry.second->environment().digest;
  });
  if (names == names_) return false;
  names_ = std::move(names);
  return true;
}

Result<BackendListPtr> EnvironmentLists::in(const QString& name) {
  if (auto found = made_.find(name); found != made_.end()) return found->second;
  Result<BackendListPtr> made = BackendList::in_environment(host_, name);
  // The host's list is the tabs' own: not kept here twice.
  if (made && *made != host_) made_.emplace(name, *made);
  return made;
}

}  // namespace cordon::inspector
