// A child process spoken to line by line: its stdin and stdout are one end of a Unix socket pair (so a
// write to a dead child gives EPIPE, never SIGPIPE), its stderr is inherited. Used by LocalRunner to
// drive `tessel-worker --stdio` (through WorkerChild, shared with the RPC worker).
#pragma once
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace tessel::tuner {

class Subprocess {
 public:
  /** Starts argv[0] (a path) with argv. Throws UserError when it cannot be started. */
  static std::unique_ptr<Subprocess> spawn(const std::vector<std::string>& argv);
  /** Kills (SIGKILL) and reaps the child if it still runs. */
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  /** Writes line + '\n'. False when the child closed its end (it died). */
  bool write_line(const std::string& line);
  enum class Read { kLine, kTimeout, kEof };
  /** Reads one line (without '\n') waiting at most timeout_s. */
  Read read_line(std::string* line, double timeout_s);
  /** Sends SIGKILL (if not yet reaped) and reaps; returns the wait status. */
  int kill_and_wait();
  /** Waits up to timeout_s for the child to exit, then kills it; returns the wait status. */
  int wait(double timeout_s);
  /** True while the child has not exited (checked with waitpid WNOHANG). */
  bool running();
  pid_t pid() const { return pid_; }
  /** "exited with status 3", "killed by signal 11 (SIGSEGV)". */
  static std::string describe_status(int status);

 private:
  Subprocess() = default;
  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string buf_;  // bytes read past the last returned line
};

/** "SIGSEGV" for 11, etc.; "signal N" when unknown. */
std::string signal_name(int sig);

}  // namespace tessel::tuner
