#include "tests/e2e/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace dictlog::testing {

std::string RunfilePath(const std::string& path) {
  const char* dir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (dir == nullptr) return path;
  return absl::StrCat(dir, "/", workspace == nullptr ? "dictlog" : workspace, "/", path);
}

ServerProcess::ServerProcess(std::string binary, std::string data_dir,
                             std::vector<std::string> extra_flags)
    : binary_(std::move(binary)),
      data_dir_(std::move(data_dir)),
      extra_flags_(std::move(extra_flags)) {}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Kill();
}

absl::Status ServerProcess::Spawn(const std::string& stdout_path) {
  if (pid_ > 0) return absl::FailedPreconditionError("already running");
  std::remove(PortFile().c_str());
  std::vector<std::string> args = {binary_, "--listen=127.0.0.1:0",
                                   "--data_dir=" + data_dir_, "--port_file=" + PortFile()};
  args.insert(args.end(), extra_flags_.begin(), extra_flags_.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!stdout_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  const int spawned =
      posix_spawn(&pid_, binary_.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    pid_ = -1;
    return absl::InternalError(absl::StrCat("cannot start ", binary_));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ServerProcess::Start() {
  if (absl::Status spawned = Spawn(); !spawned.ok()) return spawned;
  const std::string port_file = PortFile();
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    std::ifstream in(port_file);
    int port = 0;
    if (in >> port && port > 0) {
      address_ = absl::StrCat("127.0.0.1:", port);
      return address_;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError(absl::StrCat("dictlogd exited early, status ", status));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  Kill();
  return absl::DeadlineExceededError("dictlogd did not start serving within 30 s");
}

absl::StatusOr<int> ServerProcess::Stop() {
  if (absl::Status status = Terminate(); !status.ok()) return status;
  return WaitForExit();
}

absl::Status ServerProcess::Terminate() {
  if (pid_ <= 0) return absl::FailedPreconditionError("not running");
  kill(pid_, SIGTERM);
  return absl::OkStatus();
}

absl::StatusOr<int> ServerProcess::WaitForExit() {
  if (pid_ <= 0) return absl::FailedPreconditionError("not running");
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  if (!WIFEXITED(status)) return absl::InternalError("dictlogd did not exit normally");
  return WEXITSTATUS(status);
}

void ServerProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace dictlog::testing
