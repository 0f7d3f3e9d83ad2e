// `cordon run` records into the history: the real binary with CORDON_HISTORY_PATH pointed
// at a temporary file; opting out; and a history that cannot be written, which must not
// change the run's output or exit status.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cordon/temp_dir.h"
#include "frontend/history.h"

extern char** environ;

namespace cordon::history {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
};

// The binary with its stdout/stderr in files (short outputs; no pipe to drain) and the
// environment of the test minus the history variables, plus `env`.
Ran run_cli(const fs::path& dir, const std::vector<std::string>& args,
            const std::vector<std::string>& env) {
  const fs::path out = dir / "out.txt";
  const fs::path err = dir / "err.txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<std::string> words{CORDON_CLI_BINARY};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var = *e;
    if (!var.starts_with(std::string(kPathEnv) + "=") &&
        !var.starts_with(std::string(kDisableEnv) + "=")) {
      vars.push_back(var);
    }
  }
  vars.insert(vars.end(), env.begin(), env.end());
  std::vector<char*> argv, envp;
  for (auto& word : words) argv.push_back(word.data());
  for (auto& var : vars) envp.push_back(var.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, CORDON_CLI_BINARY, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  Ran ran;
  EXPECT_EQ(rc, 0);
  if (rc != 0) return ran;
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  ran.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  ran.out = slurp(out);
  ran.err = slurp(err);
  return ran;
}

class CliHistory : public ::testing::Test {
 protected:
  fs::path db() const { return dir_.path() / "data" / "history.sqlite3"; }
  std::string db_env() const { return std::string(kPathEnv) + "=" + db().string(); }

  std::vector<RunSummary> rows() const {
    auto store = HistoryStore::open(db());
    EXPECT_TRUE(store) << store.error().describe();
    if (!store) return {};
    auto listed = store->list({});
    EXPECT_TRUE(listed);
    return listed ? *listed : std::vector<RunSummary>{};
  }

  TempDir dir_ = std::move(TempDir::create("cordon-cli-history-").value());
};

TEST_F(CliHistory, RecordsARunWithEnvNamesOnly) {
  const std::string secret = "value-that-must-not-be-kept-31337";
  const Ran ran = run_cli(dir_.path(),
                          {"run", "-b", "subprocess", "--env", "API_TOKEN=" + secret, "-c",
                           "printf 'hi\\377'; echo warn >&2; exit 3"},
                          {db_env()});
  EXPECT_EQ(ran.status, 3) << ran.err;
  EXPECT_EQ(ran.out, "hi\xff");
  EXPECT_EQ(ran.err.find("warning"), std::string::npos) << ran.err;

  const auto listed = rows();
  ASSERT_EQ(listed.size(), 1u);
  auto store = HistoryStore::open(db());
  ASSERT_TRUE(store);
  const auto record = store->get(listed[0].id);
  ASSERT_TRUE(record) << record.error().describe();
  EXPECT_EQ(record->source, "cli");
  EXPECT_EQ(record->backend, "subprocess");
  EXPECT_EQ(record->outcome, Outcome::kFailed);
  EXPECT_EQ(record->exit_code, 3);
  EXPECT_EQ(record->code, "printf 'hi\\377'; echo warn >&2; exit 3");
  EXPECT_EQ(record->stdout_data, "hi\xff");  // raw, not the JSON's U+FFFD
  EXPECT_EQ(record->stderr_data, "warn\n");
  EXPECT_EQ(record->env_names, std::vector<std::string>{"API_TOKEN"});
  // The default environment, in the columns the History filters on (schema 5).
  EXPECT_EQ(record->environment, (EnvironmentRef{.name = "host", .digest = ""}));
  EXPECT_EQ(listed[0].environment, record->environment);
  EXPECT_EQ(record->result.at("exit_code"), 3);
  EXPECT_EQ(record->result.at("stdout_lossy"), true);
  EXPECT_LE(record->started, record->finished);
  for (const auto& entry : fs::directory_iterator(db().parent_path())) {
    EXPECT_EQ(slurp(entry.path()).find(secret), std::string::npos) << entry.path();
  }
}

TEST_F(CliHistory, RecordsTimeoutsAndEveryRun) {
  const Ran timed_out =
      run_cli(dir_.path(), {"run", "-b", "subprocess", "-t", "200ms", "-c", "sleep 5"}, {db_env()});
  EXPECT_EQ(timed_out.status, 124);
  const Ran json =
      run_cli(dir_.path(), {"run", "-b", "subprocess", "--json", "-c", "echo x"}, {db_env()});
  EXPECT_EQ(json.status, 0);
  EXPECT_TRUE(nlohmann::json::accept(json.out)) << json.out;
  const auto listed = rows();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1].outcome, Outcome::kTimedOut);
  EXPECT_EQ(listed[1].first_line, "sleep 5");
  EXPECT_EQ(listed[0].outcome, Outcome::kOk);
}

TEST_F(CliHistory, OptOutByFlagAndByEnvironment) {
  EXPECT_EQ(
      run_cli(dir_.path(), {"run", "-b", "subprocess", "--no-history", "-c", "true"}, {db_env()})
          .status,
      0);
  EXPECT_EQ(run_cli(dir_.path(), {"run", "-b", "subprocess", "-c", "true"},
                    {db_env(), std::string(kDisableEnv) + "=1"})
                .status,
            0);
  EXPECT_FALSE(fs::exists(db())) << "nothing recorded, not even an empty file";
  EXPECT_EQ(run_cli(dir_.path(), {"run", "-b", "subprocess", "-c", "true"}, {db_env()}).status, 0);
  EXPECT_EQ(rows().size(), 1u);
}

TEST_F(CliHistory, CorruptHistoryWarnsOnceAndChangesNothing) {
  fs::create_directories(db().parent_path());
  {
    std::ofstream(db(), std::ios::binary) << std::string(4096, 'z');
  }
  const Ran ran =
      run_cli(dir_.path(), {"run", "-b", "subprocess", "-c", "echo still ran; exit 5"}, {db_env()});
  EXPECT_EQ(ran.status, 5);
  EXPECT_EQ(ran.out, "still ran\n");
  const auto first = ran.err.find("cordon: warning: run not recorded in history:");
  ASSERT_NE(first, std::string::npos) << ran.err;
  const auto line_end = ran.err.find('\n', first);
  EXPECT_EQ(ran.err.find("history", line_end), std::string::npos) << "one line: " << ran.err;
  EXPECT_NE(ran.err.find(db().string()), std::string::npos) << ran.err;
  EXPECT_EQ(slurp(db()), std::string(4096, 'z'));

  // --json keeps stdout to the one result object; the warning goes to stderr.
  const Ran json =
      run_cli(dir_.path(), {"run", "-b", "subprocess", "--json", "-c", "exit 2"}, {db_env()});
  EXPECT_EQ(json.status, 2);
  ASSERT_TRUE(nlohmann::json::accept(json.out)) << json.out;
  EXPECT_EQ(nlohmann::json::parse(json.out).at("exit_code"), 2);
  EXPECT_NE(json.err.find("not recorded"), std::string::npos) << json.err;
}

TEST_F(CliHistory, UnwritableHistoryWarnsAndChangesNothing) {
  {
    std::ofstream(dir_.path() / "data") << "a file where the directory should be";
  }
  const Ran ran = run_cli(dir_.path(), {"run", "-b", "subprocess", "-c", "echo ok"}, {db_env()});
  EXPECT_EQ(ran.status, 0);
  EXPECT_EQ(ran.out, "ok\n");
  EXPECT_NE(ran.err.find("warning: run not recorded in history"), std::string::npos) << ran.err;
}

}  // namespace
}  // namespace cordon::history
