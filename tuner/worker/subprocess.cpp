// Subprocess: posix_spawn with a socket pair as the child's stdin/stdout; poll-based line reads.
#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "tessel/support/error.h"

extern char** environ;

namespace tessel::tuner {

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::unique_ptr<Subprocess> Subprocess::spawn(const std::vector<std::string>& argv) {
  TESSEL_CHECK(!argv.empty()) << "Subprocess::spawn: empty command";
  int sv[2];
  TESSEL_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0)
      << "cannot create a socket pair for '" << argv[0] << "': " << std::strerror(errno);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], STDIN_FILENO);  // dup2 clears close-on-exec
  posix_spawn_file_actions_adddup2(&fa, sv[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    TESSEL_CHECK(false) << "cannot start '" << argv[0] << "': " << std::strerror(rc);
  }
  std::unique_ptr<Subprocess> p(new Subprocess());
  p->pid_ = pid;
  p->fd_ = sv[0];
  return p;
}

Subprocess::~Subprocess() {
  if (fd_ >= 0) close(fd_);
  if (!reaped_) kill_and_wait();
}

bool Subprocess::write_line(const std::string& line) {
  std::string data = line + "\n";
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += size_t(n);
  }
  return true;
}

Subprocess::Read Subprocess::read_line(std::string* line, double timeout_s) {
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
  for (;;) {
    if (size_t nl = buf_.find('\n'); nl != std::string::npos) {
      *line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return Read::kLine;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) return Read::kTimeout;
    pollfd p{fd_, POLLIN, 0};
    int r = poll(&p, 1, int(std::min<long long>(left, 1 << 30)));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return Read::kTimeout;
    char chunk[65536];
    ssize_t n = read(fd_, chunk, sizeof(chunk));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return Read::kEof;
    buf_.append(chunk, size_t(n));
  }
}

int Subprocess::kill_and_wait() {
  if (reaped_) return status_;
  kill(pid_, SIGKILL);
  while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return status_;
}

int Subprocess::wait(double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!reaped_) {
    pid_t r = waitpid(pid_, &status_, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      reaped_ = true;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return kill_and_wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return status_;
}

bool Subprocess::running() {
  if (reaped_) return false;
  pid_t r = waitpid(pid_, &status_, WNOHANG);
  if (r == pid_ || (r < 0 && errno != EINTR)) reaped_ = true;
  return !reaped_;
}

std::string Subprocess::describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "died with signal " + std::to_string(WTERMSIG(status)) + " (" + signal_name(WTERMSIG(status)) + ")";
  return "ended with wait status " + std::to_string(status);
}

}  // namespace tessel::tuner
