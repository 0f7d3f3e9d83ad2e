// The thin adapter between the GUI and Backend::run(): the run happens on a worker thread
// (WorkerThread), output and state reach the GUI thread batched every few tens of ms
// (never one queued signal per chunk: a flood must not drown the event loop), Cancel
// trips the core's CancelSource, and the finished run is recorded in the history from
// the worker thread so the GUI never waits on the database.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "backend_list.h"
#include "cordon/request.h"
#include "cordon/result.h"
#include "cordon/session.h"
#include "frontend/session_info.h"
#include "worker_thread.h"

namespace cordon::inspector {

class RunController : public QObject {
  Q_OBJECT

 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;  // cancels a run in progress and waits for it (bounded)
  RunController(const RunController&) = delete;
  RunController& operator=(const RunController&) = delete;

  // Where finished runs are recorded; unset records nothing.
  void set_history_path(std::optional<std::filesystem::path> path);

  // Starts `request` on the backend named `backend`. False (and nothing started) when a
  // run is in progress or the backend is unavailable. With sessions kept
  // (set_keep_session), the run is a call of the session on that backend, opened by the
  // first call with that call's options (cordon/session.h); a call on another backend, or
  // on the same name in another environment (another BackendList), closes the session
  // first: a call never reaches a session its backend did not open.
  bool start(BackendListPtr backends, const QString& backend, RunRequest request);

  // Sessions (issue #41): calls keep one sandbox, its files and a python interpreter.
  // Turning it off closes the session. A backend that holds no sessions fails the call
  // with its reason (a sandbox error), and nothing is kept.
  void set_keep_session(bool keep);
  [[nodiscard]] bool keeps_session() const { return keep_session_; }
  // The open session's id ("" when none) and the calls it ran. Between runs only.
  [[nodiscard]] QString session_id() const;
  [[nodiscard]] qint64 session_calls() const;
  // The backend and the environment the open session is on ("" when none).
  [[nodiscard]] QString session_backend() const;
  [[nodiscard]] QString session_environment() const;
  // What the open session holds now (its age, idle time and the backend's stats); unset
  // without a session or while a call runs (the worker has the session then).
  [[nodiscard]] std::optional<frontend::SessionInfo> session_info();
  // A fresh interpreter, files kept; the reason when it could not. Between runs only.
  [[nodiscard]] Status reset_session();
  // Ends the session: everything in it is gone. Between runs only.
  void close_session();
  // The session's workspace, for its panel; empty without a session. Between runs only.
  [[nodiscard]] std::vector<WorkspaceEntry> session_files();
  void cancel();
  [[nodiscard]] bool running() const;
  [[nodiscard]] qint64 elapsed_ms() const;

 signals:
  void state_changed(const QString& state);          // preparing, running, stopping, finished
  void output(int stream, const QByteArray& chunk);  // 0 stdout, 1 stderr
  void tick(qint64 elapsed_ms);
  // The sandbox's use while the code runs, where the backend can measure: -1 = not
  // measured (ResourceSample, batched like output).
  void sample(qint64 elapsed_ms, qint64 memory_bytes, qint64 cpu_usec);
  void finished(const cordon::RunResult& result);
  // The run was not recorded; one line saying why (the run itself is unaffected).
  void history_error(const QString& message);

 private slots:
  void on_finished();  // the worker's done slot (WorkerThread)

 private:
  void drain();
  struct Shared;
  struct Session;
  // A call of `session` on the worker thread, the session opened first when it is not.
  static RunResult run_in_session(Backend& backend, Session& session, const RunRequest& request,
                                  Shared& shared);

  std::shared_ptr<Shared> shared_;
  std::shared_ptr<Session> session_;  // the open session, when calls keep one
  bool keep_session_ = false;
  std::optional<std::filesystem::path> history_path_;
  BackendListPtr backends_;  // keeps the plugin alive while its run is going
  QTimer poll_;
  QElapsedTimer elapsed_;
  QString last_state_;
  WorkerThread worker_;  // last: joined before the members above go
};

}  // namespace cordon::inspector
