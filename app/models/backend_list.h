// The backends of this host for the inspector: the CLI's catalog (plugins discovered,
// each created and probed once), shared by every tab and kept alive by each run.
#pragma once

#include <QString>
#include <QStringList>
#include <map>
#include <memory>
#include <vector>

#include "cordon/request.h"
#include "frontend/backend_catalog.h"
#include "frontend/environment.h"

namespace cordon::inspector {

struct BackendItem {
  QString name;
  QString version;
  bool available = false;
  QString reason;  // why not, for the tooltip of a disabled entry
  // Enforces none of the isolation aspects (network, filesystem, ...), not even in part:
  // the code runs as the user, so every list says so next to its name.
  bool unisolated = false;

  // "subprocess (no isolation)", "namespace": the name as lists show it.
  [[nodiscard]] QString label() const;
};

class BackendList;
using BackendListPtr = std::shared_ptr<const BackendList>;

class BackendList {
 public:
  BackendList();  // the host's own /usr (the "host" environment)
  // The same plugins, each created to show `environment` (frontend/environment.h) as the
  // sandbox's /usr: the CLI's --environment. A backend that cannot (subprocess) is listed
  // unavailable with its reason.
  explicit BackendList(const environment::Selection& environment);
  [[nodiscard]] std::vector<BackendItem> items() const;
  // Null when there is no such backend or it is unavailable.
  [[nodiscard]] Backend* backend(const QString& name) const;
  // What each run's Result records (RunRequest::environment).
  [[nodiscard]] const EnvironmentRef& environment() const { return environment_; }
  // What a tool description says of the environment (environment::describe()).
  [[nodiscard]] const std::string& software() const { return software_; }

  // "host", then the stored environments by name (`cordon environment list`).
  [[nodiscard]] static QStringList environment_names();
  // `host` for "host"; else a list made for the stored environment `name`, or why not.
  [[nodiscard]] static Result<BackendListPtr> in_environment(const BackendListPtr& host,
                                                             const QString& name);

 private:
  static BackendOptions options_for(const environment::Selection& environment);

  frontend::BackendCatalog catalog_;
  EnvironmentRef environment_{.name = environment::kHostName, .digest = ""};
  std::string software_;
};

// The backend lists of the environments a tab offers: each made once, when first used, and
// kept while its environment stays the same. The store is read again by refresh() (the tabs
// call it when shown and when the window is activated: `cordon environment add|rm` may have
// run meanwhile); a list whose environment was removed, or removed and added again with
// other contents, is dropped then, so no run is made on a tree that is gone.
class EnvironmentLists {
 public:
  explicit EnvironmentLists(BackendListPtr host);
  // "host", then the stored environments, as of the last refresh.
  [[nodiscard]] const QStringList& names() const { return names_; }
  // Re-reads the store. True when the names changed.
  bool refresh();
  // The host's list for "host", else the stored environment `name`'s, or why not.
  [[nodiscard]] Result<BackendListPtr> in(const QString& name);

 private:
  BackendListPtr host_;
  QStringList names_;
  std::map<QString, BackendListPtr> made_;
};

}  // namespace cordon::inspector
