#include "frontend/session_registry.h"

#include <algorithm>
#include <ranges>
#include <type_traits>
#include <utility>

#include "cordon/random_hex.h"

namespace cordon::frontend {

namespace {

// "{}" in `pattern` replaced by each argument in turn (no std::format in this toolchain).
std::string as_text(std::string_view text) { return std::string(text); }
template <typename Int>
  requires std::is_integral_v<Int>
std::string as_text(Int n) {
  return std::to_string(n);
}
template <typename... Args>
std::string fmt(std::string_view pattern, const Args&... args) {
  const std::string parts[] = {as_text(args)...};
  std::string out;
  for (const std::string& part : parts) {
    const std::size_t at = pattern.find("{}");
    out += pattern.substr(0, at);
    out += part;
    pattern.remove_prefix(at + 2);
  }
  out += pattern;
  return out;
}

constexpr std::size_t kIdBytes = 16;  // 128 bits
// How often a queued call looks at its cancel token: a waiter only, never a running call.
constexpr auto kCancelCheck = std::chrono::milliseconds(50);

std::string short_id(std::string_view id) { return fmt("{}…", id.substr(0, 8)); }

std::unexpected<Error> no_such_session() { return fail(ErrorCode::kNotFound, "no such session"); }

// Relative, and no ".." component: the backend checks again, on the real tree.
Status check_relative(std::string_view path) {
  if (path.starts_with('/')) {
    return fail(ErrorCode::kInvalidArgument,
                fmt("{}: a workspace path is relative to the workspace", path));
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    if (path.substr(start, end - start) == "..") {
      return fail(ErrorCode::kInvalidArgument, fmt("{}: \"..\" leads outside the workspace", path));
    }
    start = end + 1;
  }
  return {};
}

}  // namespace

std::string duration_text(std::chrono::milliseconds d) {
  using std::chrono::duration_cast;
  const auto ms = d.count();
  if (ms < 1000 || ms % 1000 != 0) return fmt("{} ms", ms);
  const auto s = ms / 1000;
  if (s < 60 || s % 60 != 0) return fmt("{} s", s);
  const auto min = s / 60;
  if (min < 60 || min % 60 != 0) return fmt("{} min", min);
  return fmt("{} h", min / 60);
}

struct SessionRegistry::Entry {
  std::string id;
  std::string owner;
  std::string backend;
  std::string environment;
  std::unique_ptr<BackendSession> session;
  Clock::time_point opened;
  Clock::time_point last_used;
  std::int64_t calls = 0;
  bool busy = false;                 // its turn is taken
  std::size_t waiting = 0;           // calls queued for a turn
  std::optional<std::string> ended;  // why, once it ended while busy or queued
};

class SessionRegistry::Turn {
 public:
  Turn(SessionRegistry* registry, std::shared_ptr<Entry> entry)
      : registry_(registry), entry_(std::move(entry)) {}
  Turn(Turn&& other) noexcept
      : registry_(std::exchange(other.registry_, nullptr)), entry_(std::move(other.entry_)) {}
  Turn(const Turn&) = delete;
  Turn& operator=(const Turn&) = delete;
  Turn& operator=(Turn&&) = delete;
  ~Turn() {
    if (registry_ != nullptr) registry_->give_back(entry_, true);
  }
  [[nodiscard]] Entry& entry() const { return *entry_; }
  [[nodiscard]] BackendSession& session() const { return *entry_->session; }
  [[nodiscard]] const std::shared_ptr<Entry>& entry_ptr() const { return entry_; }

 private:
  SessionRegistry* registry_;
  std::shared_ptr<Entry> entry_;
};

SessionRegistry::SessionRegistry(SessionRegistryOptions options)
    : options_(options), expirer_([this] { expiry_loop(); }) {}

SessionRegistry::~SessionRegistry() {
  std::vector<std::unique_ptr<BackendSession>> doomed;
  {
    std::unique_lock lock(mu_);
    stopping_ = true;
    while (!live_.empty()) {
      auto entry = live_.begin()->second;
      if (auto s = end_locked(entry, SessionEnd::kKilled)) doomed.push_back(std::move(s));
    }
    changed_.notify_all();
    expiry_.notify_all();
    // Calls that run destroy their entry's session when they return; queued calls leave.
    changed_.wait(lock, [this] { return busy_ == 0 && queued_ == 0; });
  }
  expirer_.join();
  doomed.clear();
}

Result<std::string> SessionRegistry::open(Backend& backend, const SessionOptions& options,
                                          std::string owner) {
  {
    const std::scoped_lock lock(mu_);
    if (live_.size() >= options_.max_sessions) {
      return fail(ErrorCode::kUnavailable, fmt("{} sessions are open, the most this server holds "
                                               "(--max-sessions); close one first",
                                               live_.size()));
    }
  }
  auto id = random_hex(kIdBytes);
  if (!id) return std::unexpected(id.error());
  auto session = backend.open_session(options);
  if (!session) return std::unexpected(session.error());
  auto entry = std::make_shared<Entry>();
  entry->id = *id;
  entry->owner = std::move(owner);
  entry->backend = backend_label(backend.name(), backend.variant());
  entry->environment =
      options.base.environment ? options.base.environment->name : std::string("host");
  entry->session = std::move(*session);
  entry->opened = entry->last_used = Clock::now();
  std::unique_ptr<BackendSession> surplus;
  {
    const std::scoped_lock lock(mu_);
    // Checked again: opening ran unlocked, and others may have opened meanwhile.
    if (live_.size() < options_.max_sessions && !stopping_) {
      live_.emplace(entry->id, entry);
      expiry_.notify_all();
      return entry->id;
    }
    surplus = std::move(entry->session);
  }
  surplus.reset();
  return fail(ErrorCode::kUnavailable, fmt("{} sessions are open, the most this server holds "
                                           "(--max-sessions); close one first",
                                           options_.max_sessions));
}

Result<std::shared_ptr<SessionRegistry::Entry>> SessionRegistry::find_locked(
    std::string_view id, std::string_view owner) const {
  if (auto it = live_.find(id); it != live_.end() && it->second->owner == owner) {
    return it->second;
  }
  // Newest first: an id is never reused, but the list is searched the cheap way round.
  for (const Ended& ended : ended_ | std::views::reverse) {
    if (ended.id == id && ended.owner == owner) {
      return fail(ErrorCode::kNotFound, ended.message);
    }
  }
  return no_such_session();
}

Result<SessionRegistry::Turn> SessionRegistry::take_turn(std::string_view id,
                                                         std::string_view owner,
                                                         const CancelToken& cancel) {
  std::unique_lock lock(mu_);
  auto found = find_locked(id, owner);
  if (!found) return std::unexpected(found.error());
  auto entry = *found;
  if (entry->busy) {
    if (entry->waiting >= options_.max_waiting) {
      return fail(ErrorCode::kUnavailable,
                  fmt("session {} is busy: a call runs and {} more wait, the most a "
                      "session queues; try again when one has returned",
                      short_id(entry->id), options_.max_waiting));
    }
    ++entry->waiting;
    ++queued_;
    while (entry->busy && !entry->ended && !cancel.cancelled()) {
      changed_.wait_for(lock, kCancelCheck);
    }
    --entry->waiting;
    --queued_;
    if (stopping_) changed_.notify_all();  // the destructor waits for the queue to empty
    if (entry->ended) return fail(ErrorCode::kNotFound, *entry->ended);
    if (entry->busy) {
      return fail(ErrorCode::kUnavailable,
                  fmt("cancelled while waiting for session {}: nothing ran", short_id(entry->id)));
    }
  }
  entry->busy = true;
  ++busy_;
  return Turn(this, std::move(entry));
}

void SessionRegistry::give_back(const std::shared_ptr<Entry>& entry, bool used) {
  std::unique_ptr<BackendSession> doomed;
  {
    const std::scoped_lock lock(mu_);
    entry->busy = false;
    if (used) entry->last_used = Clock::now();
    // Ended while busy: this thread closes it.
    if (entry->ended) doomed = std::move(entry->session);
    if (!doomed) {
      --busy_;
      changed_.notify_all();
      expiry_.notify_all();
      return;
    }
  }
  doomed.reset();  // not under the lock: closing a sandbox takes time
  const std::scoped_lock lock(mu_);
  --busy_;  // only now: the registry's destructor waits until every session is closed
  changed_.notify_all();
}

std::unique_ptr<BackendSession> SessionRegistry::end_locked(const std::shared_ptr<Entry>& entry,
                                                            SessionEnd why,
                                                            std::string_view detail) {
  std::string message;
  const std::string id = short_id(entry->id);
  switch (why) {
    case SessionEnd::kClosed:
      message = fmt("session {} was closed", id);
      break;
    case SessionEnd::kIdle:
      message = fmt("session {} ended after {} idle", id, duration_text(options_.idle_timeout));
      break;
    case SessionEnd::kMaxAge:
      message =
          fmt("session {} ended at its maximum age of {}", id, duration_text(options_.max_age));
      break;
    case SessionEnd::kOwnerGone:
      message = fmt("session {} ended with the client session that opened it", id);
      break;
    case SessionEnd::kKilled:
      message = fmt("session {} was killed: the server shut down", id);
      break;
    case SessionEnd::kOom:
    case SessionEnd::kLost:
      message = fmt("session {} {}", id, detail);
      break;
  }
  live_.erase(entry->id);
  ended_.push_back(Ended{entry->id, entry->owner, message});
  while (ended_.size() > options_.ended_remembered) ended_.pop_front();
  entry->ended = std::move(message);
  changed_.notify_all();
  if (entry->busy) return nullptr;
  return std::move(entry->session);
}

Result<RunResult> SessionRegistry::run(std::string_view id, std::string_view owner,
                                       const RunRequest& request, const CancelToken& cancel,
                                       RunObserver* observer) {
  auto turn = take_turn(id, owner, cancel);
  if (!turn) return std::unexpected(turn.error());
  std::int64_t index = 0;
  {
    const std::scoped_lock lock(mu_);
    index = ++turn->entry().calls;
  }
  RunResult result = turn->session().run(request, cancel, observer);
  result.session = SessionCallRef{turn->entry().id, index};
  // A session whose sandbox died ends now, with why: every later call would fail, and it
  // would hold a place under the cap until it went idle. The Turn closes it.
  if (const std::optional<SessionLoss> loss = turn->session().loss()) {
    const std::scoped_lock lock(mu_);
    (void)end_locked(turn->entry_ptr(), loss->oom ? SessionEnd::kOom : SessionEnd::kLost,
                     loss->words());
  }
  return result;
}

Status SessionRegistry::reset(std::string_view id, std::string_view owner) {
  auto turn = take_turn(id, owner, CancelToken());
  if (!turn) return std::unexpected(turn.error());
  return turn->session().reset();
}

Status SessionRegistry::close(std::string_view id, std::string_view owner) {
  std::unique_ptr<BackendSession> doomed;
  {
    const std::scoped_lock lock(mu_);
    auto found = find_locked(id, owner);
    if (!found) return std::unexpected(found.error());
    doomed = end_locked(*found, SessionEnd::kClosed);
  }
  return {};
}

void SessionRegistry::close_owner(std::string_view owner) {
  std::vector<std::unique_ptr<BackendSession>> doomed;
  {
    const std::scoped_lock lock(mu_);
    std::vector<std::shared_ptr<Entry>> theirs;
    for (const auto& [id, entry] : live_) {
      if (entry->owner == owner) theirs.push_back(entry);
    }
    for (const auto& entry : theirs) {
      if (auto s = end_locked(entry, SessionEnd::kOwnerGone)) doomed.push_back(std::move(s));
    }
  }
}

SessionInfo SessionRegistry::info_locked(const Entry& entry, Clock::time_point now) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  SessionInfo info;
  info.id = entry.id;
  info.backend = entry.backend;
  info.environment = entry.environment;
  info.age = duration_cast<milliseconds>(now - entry.opened);
  info.idle = entry.busy ? milliseconds(0) : duration_cast<milliseconds>(now - entry.last_used);
  info.calls = entry.calls;
  info.busy = entry.busy;
  info.waiting = entry.waiting;
  return info;
}

Result<SessionInfo> SessionRegistry::stats(std::string_view id, std::string_view owner) {
  std::shared_ptr<Entry> entry;
  SessionInfo info;
  {
    const std::scoped_lock lock(mu_);
    auto found = find_locked(id, owner);
    if (!found) return std::unexpected(found.error());
    entry = *found;
    info = info_locked(*entry, Clock::now());
    if (entry->busy) return info;
    // Its turn, without waiting and without counting as use: stats() is the backend's.
    entry->busy = true;
    ++busy_;
  }
  info.stats = entry->session->stats();
  give_back(entry, false);
  return info;
}

bool SessionRegistry::holds(std::string_view id, std::string_view owner) const {
  const std::scoped_lock lock(mu_);
  const auto it = live_.find(id);
  return it != live_.end() && it->second->owner == owner;
}

std::vector<SessionInfo> SessionRegistry::list(std::string_view owner) {
  std::vector<std::string> ids;
  {
    const std::scoped_lock lock(mu_);
    for (const auto& [id, entry] : live_) {
      if (entry->owner == owner) ids.push_back(id);
    }
  }
  std::vector<SessionInfo> out;
  for (const std::string& id : ids) {
    if (auto info = stats(id, owner)) out.push_back(std::move(*info));
  }
  return out;
}

Result<std::vector<WorkspaceEntry>> SessionRegistry::list_files(std::string_view id,
                                                                std::string_view owner,
                                                                std::string_view dir) {
  if (!dir.empty()) {
    if (auto ok = check_relative(dir); !ok) return std::unexpected(ok.error());
  }
  auto turn = take_turn(id, owner, CancelToken());
  if (!turn) return std::unexpected(turn.error());
  return turn->session().list_files(dir);
}

Result<std::string> SessionRegistry::read_file(std::string_view id, std::string_view owner,
                                               std::string_view path, std::uint64_t max_bytes) {
  if (auto ok = check_relative(path); !ok) return std::unexpected(ok.error());
  auto turn = take_turn(id, owner, CancelToken());
  if (!turn) return std::unexpected(turn.error());
  return turn->session().read_file(path, std::min(max_bytes, options_.max_read_bytes));
}

Status SessionRegistry::write_file(std::string_view id, std::string_view owner,
                                   std::string_view path, std::string_view bytes) {
  if (auto ok = check_relative(path); !ok) return std::unexpected(ok.error());
  if (bytes.size() > options_.max_write_bytes) {
    return fail(ErrorCode::kInvalidArgument,
                fmt("{}: {} bytes, over the {} bytes a write may carry", path, bytes.size(),
                    options_.max_write_bytes));
  }
  auto turn = take_turn(id, owner, CancelToken());
  if (!turn) return std::unexpected(turn.error());
  return turn->session().write_file(path, bytes);
}

void SessionRegistry::expiry_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto now = Clock::now();
    std::optional<Clock::time_point> next;
    std::vector<std::pair<std::shared_ptr<Entry>, SessionEnd>> due;
    for (const auto& [id, entry] : live_) {
      // A call that runs is never cut short here: the session ends once it returns.
      if (entry->busy) continue;
      const auto idle_at = entry->last_used + options_.idle_timeout;
      const auto age_at = entry->opened + options_.max_age;
      if (age_at <= now) {
        due.emplace_back(entry, SessionEnd::kMaxAge);
      } else if (idle_at <= now) {
        due.emplace_back(entry, SessionEnd::kIdle);
      } else {
        const auto at = std::min(idle_at, age_at);
        if (!next || at < *next) next = at;
      }
    }
    if (!due.empty()) {
      std::vector<std::unique_ptr<BackendSession>> doomed;
      for (const auto& [entry, why] : due) {
        if (auto s = end_locked(entry, why)) doomed.push_back(std::move(s));
      }
      lock.unlock();
      doomed.clear();  // closing a sandbox takes time: not under the lock
      lock.lock();
      continue;
    }
    if (next) {
      expiry_.wait_until(lock, *next);
    } else {
      expiry_.wait(lock);
    }
  }
}

}  // namespace cordon::frontend
