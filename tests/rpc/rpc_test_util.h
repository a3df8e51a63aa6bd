// Helpers of the RPC tests: tracker and worker processes on 127.0.0.1 with ephemeral ports (read back
// from --port-file), polled with generous timeouts so a loaded 2-core machine does not make them flaky.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tessel/rpc/rpc.h"

extern char** environ;

namespace rpctest {

namespace fs = std::filesystem;

/** Polls cond every 50 ms for up to timeout_s; true once it held. */
inline bool poll_until(const std::function<bool()>& cond, double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return cond();
}

/** A fresh directory under the temp dir for one test. */
inline std::string test_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("tessel_test_rpc_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

/** A server process (tracker or worker) whose output goes to a log file; SIGKILLed when destroyed. */
class Server {
 public:
  Server(std::vector<std::string> argv, const std::string& dir, const std::string& name)
      : argv_(std::move(argv)), port_file_(dir + "/" + name + ".port"), log_(dir + "/" + name + ".log") {}
  ~Server() { stop(SIGKILL); }

  /** Starts the process (adding --port-file) and waits for its port; false when it never listened. */
  bool start(double timeout_s = 60) {
    fs::remove(port_file_);
    std::vector<std::string> a = argv_;
    a.push_back("--port-file");
    a.push_back(port_file_);
    std::vector<char*> args;
    for (auto& s : a) args.push_back(const_cast<char*>(s.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    int rc = posix_spawn(&pid_, a[0].c_str(), &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return false;
    return poll_until(
        [&] {
          std::ifstream is(port_file_);
          return bool(is >> port_) && port_ > 0;
        },
        timeout_s);
  }
  /** Sends sig; for SIGKILL/SIGTERM also reaps the process. */
  void stop(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    if (sig == SIGKILL || sig == SIGTERM) {
      int st;
      waitpid(pid_, &st, 0);
      pid_ = -1;
    }
  }
  void signal(int sig) { kill(pid_, sig); }
  bool running() const { return pid_ > 0 && kill(pid_, 0) == 0; }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const {
    std::ifstream is(log_);
    return std::string(std::istreambuf_iterator<char>(is), {});
  }
  /** The flag list it was started with (to restart on the same port, replace --listen). */
  std::vector<std::string>& argv() { return argv_; }

 private:
  std::vector<std::string> argv_;
  std::string port_file_, log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

/** The row of key in the tracker's status (zeros when absent or unreachable). */
inline tessel::rpc::KeyStatus key_status(const std::string& tracker, const tessel::rpc::Security& sec,
                                         const std::string& key) {
  try {
    for (auto& k : tessel::rpc::tracker_status(tracker, sec, 5))
      if (k.key == key) return k;
  } catch (const std::exception&) {
  }
  tessel::rpc::KeyStatus none;
  none.key = key;
  return none;
}

}  // namespace rpctest
