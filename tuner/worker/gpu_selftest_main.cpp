// tessel-gpu-selftest: checks the worker's GPU path on a machine with a CUDA device, and times PTX
// kernels through it. Without a driver it prints why and exits 0 ("skipped"), or 1 with --require-gpu.
//   1. the reference kernels (naive PTX, tests/gpu/selftest_kernels.cu) against C++ on the CPU
//   2. tessel-worker --stdio processes: good candidates pass, a wrong / partly unwritten output is
//      wrong_answer, a refused launch launch_error, bad PTX compile_error, and the worker still answers;
//      an illegal address is a fatal runtime_error and a kernel that never ends a fatal run_timeout,
//      after which the worker exits (code 4) instead of reusing the broken context
//   3. --bench: times the tiled matmul (1024, 2048, 4096), softmax, row sum, conv2d NHWC and vector add
//      through the worker (L2 flushed between repeats) and prints a table; --json FILE writes it.
//   4. --measure DIR: the generated kernels listed in DIR/manifest.json (bench/gpu/gen_codegen_kernels.cpp),
//      each checked against a naive reference kernel of this binary and timed; --measure-json FILE.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cuda_driver.h"
#include "gpu_measure.h"
#include "tessel/support/version.h"
#include "worker_internal.h"

extern "C" const char* tessel_selftest_ptx();  // embedded tests/gpu/selftest_kernels.ptx

extern char** environ;

namespace {

using namespace tessel::tuner;
using nlohmann::json;
using tessel::runtime::NDArray;

int g_failures = 0;

void expect(bool ok, const std::string& what) {
  std::cout << (ok ? "  ok    " : "  FAIL  ") << what << "\n";
  if (!ok) ++g_failures;
}

json launch(const std::string& entry, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block) {
  return {{"kind", "ptx"}, {"entry", entry}, {"grid", grid}, {"block", block}, {"shared_bytes", 0}};
}

/** A measure request: PTX candidate and PTX reference from the same module. */
WorkerRequest request(int64_t id, const std::string& ptx, const std::string& key, std::vector<WorkerArg> args,
                      json cand, json ref) {
  WorkerRequest r;
  r.id = id;
  r.op = "measure";
  r.artifact = ptx;
  r.artifact_kind = "ptx";
  r.function = cand["entry"];
  r.launch = cand;
  r.ref_artifact = ptx;
  r.ref_artifact_kind = "ptx";
  r.ref_function = ref["entry"];
  r.ref_launch = ref;
  r.ref_key = key;
  r.args = std::move(args);
  r.options = {{"warmup", 2}, {"min_repeats", 5},    {"max_repeats", 50},  {"min_time_s", 0.05},
               {"seed", 11},  {"flush_cache", true}, {"run_timeout_s", 20}};
  return r;
}

std::vector<WorkerArg> matmul_args(int64_t s) {
  return {{"A", {s, s}, "float32", false}, {"B", {s, s}, "float32", false}, {"C", {s, s}, "float32", true}};
}
std::vector<WorkerArg> vec_args() {
  int64_t n = 1 << 20;
  return {{"A", {n}, "float32", false}, {"B", {n}, "float32", false}, {"C", {n}, "float32", true}};
}

struct WorkerRun {
  std::vector<WorkerResponse> responses;
  int exit_status = -1;
  bool killed = false;
};

/** Runs `worker --stdio` on the request lines (stdin from a file), waits at most timeout_s. */
WorkerRun run_worker(const std::string& worker, const std::string& dir, const std::vector<WorkerRequest>& reqs,
                     double timeout_s) {
  static int n = 0;
  std::string in_path = dir + "/req" + std::to_string(n) + ".jsonl",
              out_path = dir + "/resp" + std::to_string(n++) + ".jsonl";
  {
    std::ofstream in(in_path);
    for (auto& r : reqs) in << r.to_json().dump() << "\n";
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // With the address-space limit the tuner's LocalRunner gives its workers (MeasureOptions::memory_limit_mb).
  std::vector<char*> argv = {const_cast<char*>(worker.c_str()), const_cast<char*>("--stdio"),
                             const_cast<char*>("--memory-limit-mb"), const_cast<char*>("8192"), nullptr};
  pid_t pid = 0;
  WorkerRun run;
  if (posix_spawn(&pid, worker.c_str(), &fa, nullptr, argv.data(), environ) != 0) {
    std::cout << "  cannot start " << worker << ": " << std::strerror(errno) << "\n";
    return run;
  }
  posix_spawn_file_actions_destroy(&fa);
  auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      run.killed = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  std::ifstream out(out_path);
  for (std::string line; std::getline(out, line);) {
    try {
      run.responses.push_back(WorkerResponse::from_json(json::parse(line)));
    } catch (const std::exception& e) {
      std::cout << "  worker wrote a line that is no response: " << line.substr(0, 200) << "\n";
    }
  }
  return run;
}

const WorkerResponse* find(const WorkerRun& run, int64_t id) {
  for (auto& r : run.responses)
    if (r.id == id) return &r;
  return nullptr;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// ---- 1. the reference kernels against the CPU ----------------------------------------------------------

/** Runs a PTX kernel once on random inputs through gpu_run_reference and compares with cpu(). */
void check_kernel(const std::string& ptx, const std::string& name, std::vector<WorkerArg> args, json desc,
                  const std::function<void(std::vector<NDArray*>&, std::vector<NDArray>&)>& cpu) {
  WorkerRequest r;
  r.ref_artifact = ptx;
  r.ref_artifact_kind = "ptx";
  r.ref_function = desc["entry"];
  r.ref_launch = desc;
  r.args = args;
  std::vector<NDArray> arrays, want;
  for (size_t i = 0; i < args.size(); ++i) {
    arrays.emplace_back(args[i].shape, tessel::runtime::DType::parse(args[i].dtype));
    if (args[i].output) {
      arrays.back().fill_bytes(0xFF);
      want.emplace_back(args[i].shape, tessel::runtime::DType::parse(args[i].dtype));
    } else {
      arrays.back().fill_random(1234 + i, -1, 1);
    }
  }
  std::vector<NDArray*> ptrs;
  for (auto& a : arrays) ptrs.push_back(&a);
  try {
    gpu_run_reference(r, ptrs, 20);
  } catch (const Fail& f) {
    expect(false, name + ": " + f.kind + ": " + f.message);
    return;
  }
  cpu(ptrs, want);
  std::string msg;
  size_t k = 0;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].output) msg += compare_outputs(arrays[i], want[k++], args[i].name);
  expect(msg.empty(), name + " matches the CPU" + (msg.empty() ? "" : ": " + msg));
}

void check_references(const std::string& ptx) {
  std::cout << "reference kernels against the CPU:\n";
  auto mm = [](int s) {
    return [s](std::vector<NDArray*>& a, std::vector<NDArray>& w) {
      auto *A = a[0]->data_as<float>(), *B = a[1]->data_as<float>();
      auto* C = w[0].data_as<float>();
      for (int i = 0; i < s; ++i)
        for (int j = 0; j < s; ++j) {
          double acc = 0;
          for (int k = 0; k < s; ++k) acc += double(A[i * s + k]) * B[k * s + j];
          C[i * s + j] = float(acc);
        }
    };
  };
  check_kernel(ptx, "matmul_naive_128", matmul_args(128), launch("matmul_naive_128", {8, 8, 1}, {16, 16, 1}), mm(128));
  check_kernel(ptx, "matmul_tiled_128", matmul_args(128), launch("matmul_tiled_128", {1, 1, 1}, {256, 1, 1}), mm(128));
  check_kernel(ptx, "vecadd_1m", vec_args(), launch("vecadd_1m", {4096, 1, 1}, {256, 1, 1}),
               [](std::vector<NDArray*>& a, std::vector<NDArray>& w) {
                 for (int i = 0; i < (1 << 20); ++i)
                   w[0].data_as<float>()[i] = a[0]->data_as<float>()[i] + a[1]->data_as<float>()[i];
               });
  check_kernel(ptx, "softmax_64x1000", {{"X", {64, 1000}, "float32", false}, {"Y", {64, 1000}, "float32", true}},
               launch("softmax_64x1000", {64, 1, 1}, {256, 1, 1}),
               [](std::vector<NDArray*>& a, std::vector<NDArray>& w) {
                 auto* X = a[0]->data_as<float>();
                 auto* Y = w[0].data_as<float>();
                 for (int i = 0; i < 64; ++i) {
                   double m = -INFINITY, s = 0;
                   for (int j = 0; j < 1000; ++j) m = std::max(m, double(X[i * 1000 + j]));
                   for (int j = 0; j < 1000; ++j) s += std::exp(X[i * 1000 + j] - m);
                   for (int j = 0; j < 1000; ++j) Y[i * 1000 + j] = float(std::exp(X[i * 1000 + j] - m) / s);
                 }
               });
  check_kernel(ptx, "rowsum_64x1024", {{"X", {64, 1024}, "float32", false}, {"Y", {64}, "float32", true}},
               launch("rowsum_64x1024", {64, 1, 1}, {256, 1, 1}),
               [](std::vector<NDArray*>& a, std::vector<NDArray>& w) {
                 for (int i = 0; i < 64; ++i) {
                   double s = 0;
                   for (int j = 0; j < 1024; ++j) s += a[0]->data_as<float>()[i * 1024 + j];
                   w[0].data_as<float>()[i] = float(s);
                 }
               });
  check_kernel(ptx, "conv3x3_nhwc_n2_8_16",
               {{"In", {2, 8, 8, 16}, "float32", false},
                {"W", {3, 3, 16, 16}, "float32", false},
                {"Out", {2, 8, 8, 16}, "float32", true}},
               launch("conv3x3_nhwc_n2_8_16", {1, 2 * 8 * 8, 1}, {16, 1, 1}),
               [](std::vector<NDArray*>& a, std::vector<NDArray>& w) {
                 auto *In = a[0]->data_as<float>(), *Wt = a[1]->data_as<float>();
                 auto* Out = w[0].data_as<float>();
                 for (int n = 0; n < 2; ++n)
                   for (int y = 0; y < 8; ++y)
                     for (int x = 0; x < 8; ++x)
                       for (int co = 0; co < 16; ++co) {
                         double s = 0;
                         for (int kh = 0; kh < 3; ++kh)
                           for (int kw = 0; kw < 3; ++kw) {
                             int iy = y + kh - 1, ix = x + kw - 1;
                             if (iy < 0 || iy >= 8 || ix < 0 || ix >= 8) continue;
                             for (int ci = 0; ci < 16; ++ci)
                               s += double(In[((n * 8 + iy) * 8 + ix) * 16 + ci]) *
                                    Wt[((kh * 3 + kw) * 16 + ci) * 16 + co];
                           }
                         Out[((n * 8 + y) * 8 + x) * 16 + co] = float(s);
                       }
               });
}

// ---- 2. outcomes through the worker process ------------------------------------------------------------

void check_outcomes(const std::string& worker, const std::string& dir, const std::string& ptx) {
  std::cout << "tessel-worker outcomes:\n";
  json vec_ref = launch("vecadd_1m", {4096, 1, 1}, {256, 1, 1});
  std::vector<WorkerRequest> reqs;
  reqs.push_back(request(1, ptx, "vecadd", vec_args(), vec_ref, vec_ref));
  reqs.push_back(
      request(2, ptx, "vecadd", vec_args(), launch("bad_wrong_vecadd_1m", {4096, 1, 1}, {256, 1, 1}), vec_ref));
  reqs.push_back(
      request(3, ptx, "vecadd", vec_args(), launch("bad_nowrite_vecadd_1m", {4096, 1, 1}, {256, 1, 1}), vec_ref));
  reqs.push_back(
      request(4, ptx, "vecadd", vec_args(), launch("bad_small_blocks", {1024, 1, 1}, {1024, 1, 1}), vec_ref));
  reqs.push_back(request(5, ptx, "vecadd", vec_args(), launch("no_such_kernel", {1, 1, 1}, {1, 1, 1}), vec_ref));
  WorkerRequest badptx = request(6, dir + "/broken.ptx", "vecadd", vec_args(), vec_ref, vec_ref);
  badptx.ref_artifact = ptx;
  { std::ofstream(dir + "/broken.ptx") << ".version 8.0\n.target sm_90\n.address_size 64\nthis is not ptx\n"; }
  reqs.push_back(badptx);
  reqs.push_back(request(7, ptx, "matmul1024", matmul_args(1024), launch("matmul_tiled_1024", {8, 8, 1}, {256, 1, 1}),
                         launch("matmul_naive_1024", {64, 64, 1}, {16, 16, 1})));
  reqs.push_back(request(8, ptx, "vecadd", vec_args(), launch("vecadd_1m", {4096, 1, 1}, {2048, 1, 1}), vec_ref));
  WorkerRequest ping;
  ping.id = 9;
  ping.op = "ping";
  reqs.push_back(ping);
  WorkerRun run = run_worker(worker, dir, reqs, 120);
  auto kind_of = [&](int64_t id) {
    const WorkerResponse* r = find(run, id);
    return r ? r->error_kind : std::string("(no response)");
  };
  auto msg_of = [&](int64_t id) {
    const WorkerResponse* r = find(run, id);
    return r ? r->message.substr(0, 160) : std::string();
  };
  expect(kind_of(1) == "none" && find(run, 1)->times.size() >= 5, "vecadd passes and is timed: " + kind_of(1));
  expect(kind_of(2) == "wrong_answer", "one wrong element is wrong_answer: " + msg_of(2));
  expect(kind_of(3) == "wrong_answer", "an unwritten element is wrong_answer: " + msg_of(3));
  expect(kind_of(4) == "launch_error", "1024 threads for a 128-thread kernel is launch_error: " + msg_of(4));
  expect(kind_of(5) == "compile_error", "a missing kernel is compile_error: " + msg_of(5));
  expect(kind_of(6) == "compile_error", "PTX the driver rejects is compile_error: " + msg_of(6));
  expect(kind_of(7) == "none", "tiled matmul 1024 matches the naive reference: " + kind_of(7) + " " + msg_of(7));
  expect(kind_of(8) == "launch_error", "a block of 2048 threads is launch_error: " + msg_of(8));
  expect(kind_of(9) == "none" && msg_of(9) == "pong", "the worker still answers a ping");
  expect(run.exit_status == 0 && !run.killed, "the worker exits normally at end of input");

  WorkerRequest ill =
      request(1, ptx, "vecadd", vec_args(), launch("bad_illegal_address", {1, 1, 1}, {32, 1, 1}), vec_ref);
  ping.id = 2;
  run = run_worker(worker, dir, {ill, ping}, 60);
  const WorkerResponse* r = find(run, 1);
  expect(r && r->error_kind == "runtime_error" && r->fatal,
         "an illegal address is a fatal runtime_error: " + msg_of(1));
  expect(!find(run, 2) && run.exit_status == 4,
         "then the worker exits (code 4) instead of serving: status " + std::to_string(run.exit_status));

  WorkerRequest hang = request(1, ptx, "vecadd", vec_args(), launch("bad_hang", {1, 1, 1}, {1, 1, 1}), vec_ref);
  hang.options["run_timeout_s"] = 2;
  run = run_worker(worker, dir, {hang, ping}, 60);
  r = find(run, 1);
  expect(r && r->error_kind == "run_timeout" && r->fatal,
         "a kernel that never ends is a fatal run_timeout: " + msg_of(1));
  expect(!run.killed && run.exit_status == 4, "then the worker exits by itself (code 4): status " +
                                                  std::to_string(run.exit_status) +
                                                  (run.killed ? " (had to be killed)" : ""));
}

// ---- 3. timings -----------------------------------------------------------------------------------------

void bench(const std::string& worker, const std::string& dir, const std::string& ptx, const std::string& json_path) {
  struct Case {
    std::string name;
    WorkerRequest req;
    double flop, bytes;
  };
  std::vector<Case> cases;
  int64_t id = 1;
  for (int s : {1024, 2048, 4096}) {
    std::string n = std::to_string(s);
    uint32_t t = uint32_t(s / 128), g = uint32_t(s / 16);
    cases.push_back(
        {"matmul_" + n,
         request(id++, ptx, "matmul" + n, matmul_args(s), launch("matmul_tiled_" + n, {t, t, 1}, {256, 1, 1}),
                 launch("matmul_naive_" + n, {g, g, 1}, {16, 16, 1})),
         2.0 * s * s * s, 3.0 * 4 * s * s});
  }
  json sm = launch("softmax_4096x4096", {4096, 1, 1}, {256, 1, 1});
  cases.push_back({"softmax_4096x4096",
                   request(id++, ptx, "softmax",
                           {{"X", {4096, 4096}, "float32", false}, {"Y", {4096, 4096}, "float32", true}}, sm, sm),
                   5.0 * 4096 * 4096, 2.0 * 4 * 4096 * 4096});
  json rs = launch("rowsum_4096x4096", {4096, 1, 1}, {256, 1, 1});
  cases.push_back(
      {"rowsum_4096x4096",
       request(id++, ptx, "rowsum", {{"X", {4096, 4096}, "float32", false}, {"Y", {4096}, "float32", true}}, rs, rs),
       1.0 * 4096 * 4096, 4.0 * 4096 * 4097});
  json cv = launch("conv3x3_nhwc_n1_56_64", {1, 56 * 56, 1}, {64, 1, 1});
  cases.push_back({"conv2d_nhwc_n1_56x56_64_3x3",
                   request(id++, ptx, "conv",
                           {{"In", {1, 56, 56, 64}, "float32", false},
                            {"W", {3, 3, 64, 64}, "float32", false},
                            {"Out", {1, 56, 56, 64}, "float32", true}},
                           cv, cv),
                   2.0 * 56 * 56 * 64 * 64 * 9, 4.0 * (2 * 56 * 56 * 64 + 9 * 64 * 64)});
  json va = launch("vecadd_1m", {4096, 1, 1}, {256, 1, 1});
  cases.push_back({"vecadd_1m", request(id++, ptx, "vecadd", vec_args(), va, va), 1.0 * (1 << 20), 12.0 * (1 << 20)});
  std::vector<WorkerRequest> reqs;
  for (auto& c : cases) reqs.push_back(c.req);
  WorkerRun run = run_worker(worker, dir, reqs, 300);
  std::cout << "timings through tessel-worker (hand-written CUDA stand-ins, L2 flushed, median):\n";
  std::printf("  %-30s %10s %10s %10s %s\n", "kernel", "ms", "GFLOP/s", "GB/s", "outcome");
  json out = json::array();
  for (auto& c : cases) {
    const WorkerResponse* r = find(run, c.req.id);
    std::string kind = r ? r->error_kind : "(no response)";
    double t = r && kind == "none" ? median(r->times) : NAN;
    std::printf("  %-30s %10.4f %10.1f %10.1f %s\n", c.name.c_str(), t * 1e3, c.flop / t * 1e-9, c.bytes / t * 1e-9,
                kind == "none" ? "checked" : (kind + ": " + (r ? r->message.substr(0, 120) : "")).c_str());
    expect(kind == "none", c.name + " checked against its reference and timed");
    out.push_back({{"name", c.name},
                   {"median_s", r && kind == "none" ? json(t) : json(nullptr)},
                   {"error_kind", kind},
                   {"repeats", r ? r->times.size() : 0},
                   {"flop", c.flop},
                   {"bytes", c.bytes}});
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(1) << "\n";
}

// ---- 4. --measure DIR: generated kernels listed in DIR/manifest.json --------------------------------------

/** Each manifest entry {name, group, ptx, args, reference (a launch of the selftest PTX), flop, bytes} is
 *  measured through tessel-worker (launch read from the .json beside its .ptx); prints the best per group. */
void measure_dir(const std::string& worker, const std::string& dir, const std::string& tmp, const std::string& ptx,
                 const std::string& json_path) {
  json manifest;
  try {
    manifest = json::parse(std::ifstream(dir + "/manifest.json"));
  } catch (const std::exception& e) {
    expect(false, "cannot read " + dir + "/manifest.json: " + e.what());
    return;
  }
  std::vector<WorkerRequest> reqs;
  int64_t id = 1;
  for (auto& m : manifest) {
    WorkerRequest r;
    r.id = id++;
    r.op = "measure";
    r.artifact = dir + "/" + m["ptx"].get<std::string>();
    r.artifact_kind = "ptx";
    r.function = m["name"];
    r.ref_artifact = ptx;
    r.ref_artifact_kind = "ptx";
    r.ref_launch = m["reference"];
    r.ref_function = m["reference"]["entry"];
    r.ref_key = m["group"];
    for (auto& a : m["args"])
      r.args.push_back({a["name"], a["shape"].get<std::vector<int64_t>>(), a["dtype"], a["output"]});
    r.options = {{"warmup", 3},         {"min_repeats", 10},   {"max_repeats", 200}, {"min_time_s", 0.1},
                 {"flush_cache", true}, {"run_timeout_s", 60}, {"seed", 21}};
    reqs.push_back(std::move(r));
  }
  WorkerRun run = run_worker(worker, tmp, reqs, 540);
  std::cout << "generated kernels through tessel-worker (" << dir << ", L2 flushed, median):\n";
  std::printf("  %-28s %-28s %10s %10s %10s %s\n", "group", "kernel", "ms", "GFLOP/s", "GB/s", "outcome");
  json out = json::array();
  for (size_t i = 0; i < manifest.size(); ++i) {
    auto& m = manifest[i];
    const WorkerResponse* r = find(run, reqs[i].id);
    std::string kind = r ? r->error_kind : "(no response)";
    double t = r && kind == "none" ? median(r->times) : NAN;
    double flop = m["flop"], bytes = m["bytes"];
    std::printf("  %-28s %-28s %10.4f %10.1f %10.1f %s\n", m["group"].get<std::string>().c_str(),
                m["name"].get<std::string>().c_str(), t * 1e3, flop / t * 1e-9, bytes / t * 1e-9,
                kind == "none" ? "checked" : (kind + ": " + (r ? r->message.substr(0, 140) : "")).c_str());
    expect(kind == "none", m["name"].get<std::string>() + " checked against the naive reference and timed");
    out.push_back({{"name", m["name"]},
                   {"group", m["group"]},
                   {"median_s", kind == "none" ? json(t) : json(nullptr)},
                   {"error_kind", kind},
                   {"message", r ? r->message : ""},
                   {"repeats", r ? r->times.size() : 0},
                   {"flop", flop},
                   {"bytes", bytes}});
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(1) << "\n";
}

std::string exe_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, size_t(n));
  return p.substr(0, p.rfind('/'));
}

}  // namespace

int main(int argc, char** argv) {
  bool do_bench = false, require_gpu = false;
  std::string worker = exe_dir() + "/tessel-worker", json_path, ptx_path, measure, measure_json;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--bench")
      do_bench = true;
    else if (a == "--require-gpu")
      require_gpu = true;
    else if (a == "--worker" && i + 1 < argc)
      worker = argv[++i];
    else if (a == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else if (a == "--ptx" && i + 1 < argc)
      ptx_path = argv[++i];
    else if (a == "--measure" && i + 1 < argc)
      measure = argv[++i];
    else if (a == "--measure-json" && i + 1 < argc)
      measure_json = argv[++i];
    else if (a == "--version") {
      std::cout << "tessel-gpu-selftest " << tessel::version() << "\n";
      return 0;
    } else {
      std::cout << "Usage: tessel-gpu-selftest [--bench] [--json FILE] [--measure DIR [--measure-json FILE]] "
                   "[--require-gpu]\n"
                   "                           [--worker PATH] [--ptx FILE]\n";
      return a == "--help" ? 0 : 2;
    }
  }
  std::string why;
  if (!gpu::cuda_available(&why)) {
    std::cout << "tessel-gpu-selftest: skipped: " << why << "\n";
    return require_gpu ? 1 : 0;
  }
#if TESSEL_HAVE_CUDA_H
  auto* d = gpu::CudaDriver::get(nullptr);
  const auto& dev = d->device(0);
  std::cout << "device 0: " << dev.name << ", sm_" << dev.sm_major << dev.sm_minor << ", " << dev.multiprocessors
            << " SMs, L2 " << (dev.l2_bytes >> 20) << " MiB, driver API " << d->driver_version() << "\n";
#endif
  char tmpl[] = "/tmp/tessel-gpu-selftest-XXXXXX";
  std::string dir = mkdtemp(tmpl) ? tmpl : "/tmp";
  std::string ptx = dir + "/selftest_kernels.ptx";
  if (!ptx_path.empty())
    ptx = ptx_path;
  else
    std::ofstream(ptx) << tessel_selftest_ptx();
  check_references(ptx);
  check_outcomes(worker, dir, ptx);
  if (do_bench) bench(worker, dir, ptx, json_path);
  if (!measure.empty()) measure_dir(worker, measure, dir, ptx, measure_json);
  std::cout << (g_failures ? "FAILED: " + std::to_string(g_failures) + " check(s)\n" : "all GPU checks passed\n");
  return g_failures ? 1 : 0;
}
