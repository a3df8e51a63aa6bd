// Fatal-signal reporting of the measurement worker. When a candidate (or the reference) crashes the
// worker, the handler writes one last response line for the request being measured, so the tuner
// learns the signal and whether memory ran out, then the signal kills the process as usual. Only
// async-signal-safe calls (open/read/write/close, sigaction, raise) are made in the handler.
#include "fatal_signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "measure_worker.h"

namespace tessel::tuner {
namespace {

std::atomic<int64_t> g_request_id{-1};
std::atomic<int> g_phase{0};  // 0 idle, 1 reference, 2 candidate
int g_fd = -1;
int64_t g_limit_bytes = 0;
alignas(16) char g_altstack[64 * 1024];

struct Buf {
  char data[1024];
  size_t n = 0;
  void put(const char* s) {
    while (*s && n + 1 < sizeof(data)) data[n++] = *s++;
  }
  void put_int(int64_t v) {
    char tmp[24];
    int k = 0;
    bool neg = v < 0;
    uint64_t u = neg ? uint64_t(0) - uint64_t(v) : uint64_t(v);
    do {
      tmp[k++] = char('0' + u % 10);
      u /= 10;
    } while (u);
    if (neg) tmp[k++] = '-';
    while (k > 0 && n + 1 < sizeof(data)) data[n++] = tmp[--k];
  }
};

const char* signal_abbrev(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    default:
      return "signal";
  }
}

/** Address space in use (VmSize) in bytes from /proc/self/statm, or -1. */
int64_t address_space_bytes() {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char b[64];
  ssize_t n = read(fd, b, sizeof(b) - 1);
  close(fd);
  if (n <= 0) return -1;
  int64_t pages = 0;
  for (ssize_t i = 0; i < n && b[i] >= '0' && b[i] <= '9'; ++i) pages = pages * 10 + (b[i] - '0');
  return pages * int64_t(sysconf(_SC_PAGESIZE));  // sysconf(_SC_PAGESIZE) reads a cached value
}

void on_fatal_signal(int sig, siginfo_t*, void*) {
  int saved_errno = errno;
  int phase = g_phase.load();
  if (phase != 0 && g_fd >= 0) {
    int64_t vm = address_space_bytes();
    bool oom = saved_errno == ENOMEM || (g_limit_bytes > 0 && vm >= 0 && vm >= g_limit_bytes - g_limit_bytes / 8);
    Buf b;
    b.put("{\"version\":");
    b.put_int(kWorkerProtocolVersion);
    b.put(",\"id\":");
    b.put_int(g_request_id.load());
    b.put(",\"error_kind\":\"");
    b.put(phase == 1 ? "worker_lost" : oom ? "out_of_memory" : "runtime_error");
    b.put("\",\"message\":\"worker died with signal ");
    b.put_int(sig);
    b.put(" (");
    b.put(signal_abbrev(sig));
    b.put(phase == 1 ? ") while running the reference" : ") while running the candidate");
    if (oom) {
      b.put(" after running out of memory (");
      if (saved_errno == ENOMEM) b.put("allocation failed with ENOMEM; ");
      b.put("address space in use ");
      b.put_int(vm >> 20);
      b.put(" MiB");
      if (g_limit_bytes > 0) {
        b.put(" of the ");
        b.put_int(g_limit_bytes >> 20);
        b.put(" MiB limit");
      }
      b.put(")");
    }
    b.put("\",\"times\":[],\"fatal\":true}\n");
    size_t off = 0;
    while (off < b.n) {
      ssize_t w = write(g_fd, b.data + off, b.n - off);
      if (w <= 0) break;
      off += size_t(w);
    }
  }
  // Die of the same signal: restore the default action and re-raise (delivered when we return).
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
  raise(sig);
}

}  // namespace

void install_fatal_signal_handlers(int fd, int64_t memory_limit_bytes) {
  g_fd = fd;
  g_limit_bytes = memory_limit_bytes;
  stack_t ss;
  std::memset(&ss, 0, sizeof(ss));
  ss.ss_sp = g_altstack;
  ss.ss_size = sizeof(g_altstack);
  sigaltstack(&ss, nullptr);  // the main thread's stack overflows are reported too
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = &on_fatal_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
}

FatalPhase::FatalPhase(int64_t request_id, int phase) {
  g_request_id.store(request_id);
  g_phase.store(phase);
}

FatalPhase::~FatalPhase() {
  g_phase.store(0);
  g_request_id.store(-1);
}

}  // namespace tessel::tuner
