// ServerProcess (tests only): runs the real dictlogd binary as a child process on
// 127.0.0.1 port 0 with a given data directory, and stops or kills it.
//
// Not thread-safe: one test thread drives it.
#ifndef DICTLOG_TESTS_E2E_SERVER_PROCESS_H_
#define DICTLOG_TESTS_E2E_SERVER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace dictlog::testing {

class ServerProcess {
 public:
  // `binary`: path to dictlogd; `data_dir`: its --data_dir; `extra_flags` are passed on.
  ServerProcess(std::string binary, std::string data_dir,
                std::vector<std::string> extra_flags = {});
  ~ServerProcess();  // Kills the server if it still runs.

  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts the server and waits (up to 30 s) until it serves. Returns the address.
  absl::StatusOr<std::string> Start();
  // Starts the server and returns at once, its stdout going to `stdout_path` (empty:
  // this process's stdout); for tests that watch it start (its log names its ports).
  // address() stays empty.
  absl::Status Spawn(const std::string& stdout_path = "");
  // SIGTERM, then waits for exit; returns the exit status (0 expected).
  absl::StatusOr<int> Stop();
  // SIGKILL, then reaps the process.
  void Kill();
  // Sends SIGTERM and returns at once (Stop's first half).
  absl::Status Terminate();
  // Waits for the server to exit; returns its exit status (Stop's second half).
  absl::StatusOr<int> WaitForExit();

  const std::string& address() const { return address_; }
  // The server's process id while it runs (e.g. to read /proc/<pid>/status); -1 if not.
  pid_t pid() const { return pid_; }

 private:
  std::string PortFile() const { return data_dir_ + ".port"; }

  const std::string binary_;
  const std::string data_dir_;
  const std::vector<std::string> extra_flags_;
  pid_t pid_ = -1;
  std::string address_;
};

// Path of a runfile given its workspace-relative path (e.g. "server/daemon/dictlogd").
std::string RunfilePath(const std::string& path);

}  // namespace dictlog::testing

#endif  // DICTLOG_TESTS_E2E_SERVER_PROCESS_H_
