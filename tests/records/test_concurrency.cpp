// Several processes writing one database at once, and writers killed with SIGKILL mid-write: nothing
// committed is lost, nothing fails on a busy lock, the file stays intact.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <set>
#include <thread>

#include "records_test_util.h"

using namespace tessel;
using namespace tessel::records;
using tessel::test::make_record;
using tessel::test::TempDir;

namespace {

/** Forks a child that runs f and exits 0 (1 and a message on an exception). */
template <class F>
pid_t spawn(F&& f) {
  std::cout.flush();
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int rc = 0;
    try {
      f();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child %d: %s\n", int(getpid()), e.what());
      rc = 1;
    }
    _exit(rc);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string integrity_check(const std::string& path) {
  if (std::system("command -v sqlite3 >/dev/null 2>&1") != 0) return "ok";
  FILE* p = popen(("sqlite3 -readonly '" + path + "' 'PRAGMA integrity_check'").c_str(), "r");
  std::string out;
  char buf[256];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  if (p) pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

TEST_CASE("four processes add 200 records each to one database", "[records][concurrency]") {
  TempDir dir;
  std::string path = dir.file("shared.db");
  std::string host = test::host_target();
  (void)records::host_fingerprint();  // computed before forking
  constexpr int kProcs = 4, kEach = 200;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p)
    kids.push_back(spawn([&, p] {
      auto db = open_database(path);  // the first ones create the file concurrently
      for (int i = 0; i < kEach; ++i) db->add_record(make_record(host, 1 + p * 1000 + i, {1e-3 + 1e-6 * i}));
    }));
  for (pid_t k : kids) CHECK(wait_exit(k) == 0);
  auto db = open_database(path);
  CHECK(db->stats().records == kProcs * kEach);
  auto hashes = db->trace_hashes(test::small_matmul().key, host);
  CHECK(std::set<std::string>(hashes.begin(), hashes.end()).size() == size_t(kProcs * kEach));
  for (int p = 0; p < kProcs; ++p)
    CHECK(db->has_record(test::small_matmul().key, host, trace_hash(test::split_trace(1 + p * 1000 + kEach - 1))));
  CHECK(integrity_check(path) == "ok");
}

TEST_CASE("writers killed with SIGKILL lose nothing they committed", "[records][concurrency]") {
  TempDir dir;
  std::string path = dir.file("killed.db");
  std::string host = test::host_target();
  (void)records::host_fingerprint();
  open_database(path);  // created up front so every round appends to the same file
  std::mt19937 rng(std::random_device{}());
  std::set<int64_t> committed;
  int64_t next_factor = 1;
  for (int round = 0; round < 6; ++round) {
    constexpr int kWriters = 2;
    int fds[kWriters][2];
    pid_t kids[kWriters];
    for (int w = 0; w < kWriters; ++w) {
      REQUIRE(pipe(fds[w]) == 0);
      int64_t base = next_factor;
      next_factor += 1000000;
      int out = fds[w][1];
      kids[w] = spawn([&, base, out] {
        auto db = open_database(path);
        for (int64_t i = 0;; ++i) {
          TuningRecord r = make_record(host, base + i, {1e-3});
          r.error_message = std::string(size_t(i % 7) * 300, 'x');  // records of varying size
          if (i % 7) r.error_kind = MeasureErrorKind::kRunTimeout, r.run_times_s.clear();
          int64_t id = db->add_record(r);
          std::string line = std::to_string(id) + "\n";  // after commit; < PIPE_BUF: atomic
          if (write(out, line.data(), line.size()) != ssize_t(line.size())) return;
        }
      });
      close(fds[w][1]);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30 + rng() % 250));
    for (int w = 0; w < kWriters; ++w) {
      kill(kids[w], SIGKILL);
      CHECK(wait_exit(kids[w]) == 128 + SIGKILL);
      std::string got;
      char buf[4096];
      for (ssize_t n; (n = read(fds[w][0], buf, sizeof buf)) > 0;) got.append(buf, size_t(n));
      close(fds[w][0]);
      std::stringstream ss(got);
      for (std::string l; std::getline(ss, l);) committed.insert(std::stoll(l));
    }
    // Every committed record is there; the file opens (quick_check) and passes integrity_check.
    auto db = open_database(path);
    int64_t missing = 0;
    for (int64_t id : committed) missing += !db->record(id).has_value();
    CHECK(missing == 0);
    CHECK(db->stats().records >= int64_t(committed.size()));
    db.reset();
    CHECK(integrity_check(path) == "ok");
  }
  INFO("committed records seen: " << committed.size());
  CHECK(committed.size() > 6);
}
