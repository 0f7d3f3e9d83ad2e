// The backends of this host for the inspector: the CLI's catalog (plugins discovered,
// each created and probed once), shared by every tab and kept alive by each run.
#pragma once

#include <QString>
#include <memory>
#include <vector>

#include "frontend/backend_catalog.h"

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

class BackendList {
 public:
  BackendList();
  [[nodiscard]] std::vector<BackendItem> items() const;
  // Null when there is no such backend or it is unavailable.
  [[nodiscard]] Backend* backend(const QString& name) const;

 private:
  frontend::BackendCatalog catalog_;
};

using BackendListPtr = std::shared_ptr<const BackendList>;

}  // namespace cordon::inspector
