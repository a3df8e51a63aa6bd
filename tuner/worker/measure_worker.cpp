// The measurement loop of tessel-worker (see measure_worker.h, docs/measurement.md).
//   MeasureWorker::handle_line  parse a line; malformed or newer-version requests -> protocol errors
//   MeasureWorker::measure      load candidate, poison outputs, check run, compare with the reference,
//                               warmup, timed repeats (early abort, cache flush), compare again
//   MeasureWorker::reference    inputs from the seed and reference outputs, cached per workload key
//   compare_outputs             float: |a-b| <= rtol * (1 + |b|); integers: exact
//   run_stdio_worker            the line loop of `tessel-worker --stdio`
#include "measure_worker.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <ostream>
#include <sstream>

#include "fatal_signals.h"
#include "gpu_measure.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/runtime/thread_pool.h"
#include "tessel/support/error.h"
#include "worker_internal.h"

namespace tessel::tuner {
namespace {

using runtime::DType;
using runtime::NDArray;
using clock_type = std::chrono::steady_clock;
using PackedFn = int32_t (*)(void* const*);

/** A dlopen'ed library, closed when destroyed. */
struct Library {
  void* handle = nullptr;
  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library() {
    if (handle) dlclose(handle);
  }
  /** Loads path and finds function; throws Fail(kind) naming `what` otherwise. */
  PackedFn open(const std::string& path, const std::string& function, const std::string& what,
                const std::string& kind) {
    handle = dlopen(path.c_str(), RTLD_LOCAL | RTLD_NOW);
    if (!handle) {
      const char* e = dlerror();
      throw Fail{kind, "cannot load the " + what + " '" + path + "': " + (e ? e : "dlopen failed")};
    }
    dlerror();
    void* sym = dlsym(handle, function.c_str());
    if (!sym) throw Fail{kind, "the " + what + " '" + path + "' has no symbol '" + function + "'"};
    return reinterpret_cast<PackedFn>(sym);
  }
};

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

bool is_float(DType t) { return is_float_dtype(t); }

/** Inputs: floats uniform in [-1, 1), signed integers in [-8, 8), unsigned in [0, 16), bool 0/1. */
void fill_input(NDArray& a, uint64_t seed) {
  DType t = a.dtype();
  if (is_float(t) || t.code == DType::kBool)
    a.fill_random(seed, -1.0, 1.0);
  else if (t.code == DType::kInt)
    a.fill_random(seed, -8.0, 8.0);
  else
    a.fill_random(seed, 0.0, 16.0);
}

/** Outputs are poisoned before a checked run: NaN bytes for floats, 0xAB for integers. */
void poison(NDArray& a) { a.fill_bytes(poison_byte(a.dtype())); }

std::string index_string(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t e = std::max<int64_t>(shape[d], 1);
    idx[d] = flat % e;
    flat /= e;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

/** Bytes written between repeats to evict the caches: 2x the last-level cache, 8..512 MiB. */
size_t flush_bytes() {
  long llc = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  if (llc <= 0) llc = 32l << 20;
  return std::clamp<size_t>(size_t(llc) * 2, size_t(8) << 20, size_t(512) << 20);
}

void flush_cache() {
  static std::vector<unsigned char> buf(flush_bytes());
  static unsigned char v = 0;
  std::memset(buf.data(), ++v, buf.size());
  asm volatile("" : : "r"(buf.data()) : "memory");  // keep the stores
}

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

WorkerResponse protocol_error(int64_t id, const std::string& msg) {
  WorkerResponse r;
  r.id = id;
  r.error_kind = "worker_lost";
  r.message = "protocol error: " + msg;
  r.protocol_error = true;
  return r;
}

}  // namespace

bool is_float_dtype(DType t) { return t.code == DType::kFloat || t.code == DType::kBFloat; }

uint8_t poison_byte(DType t) { return is_float_dtype(t) ? 0xFF : 0xAB; }

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

std::string compare_outputs(const NDArray& got, const NDArray& want, const std::string& name) {
  DType t = want.dtype();
  int64_t n = want.num_elements(), bad = 0, first = -1;
  // 16-bit floats keep ~3 decimal digits, so a reordered reduction may differ by more than 1e-3.
  double rtol = is_float(t) && t.bits == 16 ? 1e-2 : 1e-3;
  if (is_float(t)) {
    for (int64_t i = 0; i < n; ++i) {
      double a = got.get(i), b = want.get(i);
      bool ok = std::isnan(b)   ? std::isnan(a)
                : std::isinf(b) ? a == b
                                : std::fabs(a - b) <= rtol * (1 + std::fabs(b));  // false for NaN a
      if (!ok && bad++ == 0) first = i;
    }
  } else {
    int w = t.bytes();
    auto* pa = static_cast<const unsigned char*>(got.data());
    auto* pb = static_cast<const unsigned char*>(want.data());
    for (int64_t i = 0; i < n; ++i)
      if (std::memcmp(pa + i * w, pb + i * w, size_t(w)) != 0 && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  std::string msg = "output " + name + index_string(first, want.shape()) + " = " + fmt(got.get(first)) +
                    " but the reference gives " + fmt(want.get(first));
  if (is_float(t)) msg += " (tolerance " + fmt(rtol) + " x (1 + |reference|))";
  msg += "; " + std::to_string(bad) + " of " + std::to_string(n) + " elements differ";
  return msg;
}

struct MeasureWorker::Reference {
  std::string cache_key;
  std::vector<NDArray> inputs;   // pristine inputs, in argument order of the inputs
  std::vector<NDArray> outputs;  // reference outputs, in argument order of the outputs
};

MeasureWorker::MeasureWorker() : MeasureWorker(Params{}) {}
MeasureWorker::MeasureWorker(Params p) : params_(p) {}
MeasureWorker::~MeasureWorker() = default;

WorkerResponse MeasureWorker::handle_line(const std::string& line) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const std::exception& e) {
    return protocol_error(-1, std::string("the request is not valid JSON: ") + e.what());
  }
  int64_t id = -1;
  if (j.is_object()) {
    if (auto it = j.find("id"); it != j.end() && it->is_number_integer()) id = it->get<int64_t>();
    if (auto it = j.find("version");
        it != j.end() && it->is_number_integer() && it->get<int64_t>() > kWorkerProtocolVersion)
      return protocol_error(id, "request version " + std::to_string(it->get<int64_t>()) +
                                    " is newer than this worker's protocol version " +
                                    std::to_string(kWorkerProtocolVersion) + "; update tessel-worker");
  }
  WorkerRequest r;
  try {
    r = WorkerRequest::from_json(j);
  } catch (const std::exception& e) {
    return protocol_error(id, e.what());
  }
  return handle(r);
}

WorkerResponse MeasureWorker::handle(const WorkerRequest& r) {
  if (r.version < 1 || r.version > kWorkerProtocolVersion)
    return protocol_error(r.id, "unsupported request version " + std::to_string(r.version) + " (this worker speaks " +
                                    std::to_string(kWorkerProtocolVersion) + ")");
  WorkerResponse resp;
  resp.id = r.id;
  try {
    if (r.op == "ping") {
      resp.message = "pong";
    } else if (r.op == "exit") {
      resp.message = "bye";
      exit_requested_ = true;
    } else if (r.op == "measure") {
      resp = measure(r);
    } else {
      return protocol_error(r.id, "unknown op '" + r.op + "' (expected measure, ping or exit)");
    }
  } catch (const Fail& f) {
    resp.error_kind = f.kind;
    resp.message = f.message;
    resp.fatal = f.fatal;
    resp.times.clear();
  } catch (const std::invalid_argument& e) {
    return protocol_error(r.id, e.what());
  } catch (const UserError& e) {
    return protocol_error(r.id, e.what());
  } catch (const std::bad_alloc&) {
    resp.error_kind = "out_of_memory";
    resp.message = "the worker cannot allocate the arguments";
    resp.times.clear();
  } catch (const std::exception& e) {
    resp.error_kind = "worker_lost";
    resp.message = std::string("worker internal error: ") + e.what();
    resp.times.clear();
  }
  return resp;
}

const MeasureWorker::Reference& MeasureWorker::reference(const WorkerRequest& r, uint64_t seed, double timeout_s) {
  std::string key = r.ref_key + "|seed=" + std::to_string(seed);
  for (auto& a : r.args) {
    key += "|" + a.dtype + (a.output ? ":out[" : ":in[");
    for (int64_t d : a.shape) key += std::to_string(d) + ",";
    key += "]";
  }
  for (auto it = refs_.begin(); it != refs_.end(); ++it) {
    if ((*it)->cache_key != key) continue;
    refs_.splice(refs_.begin(), refs_, it);  // most recently used first
    return *refs_.front();
  }
  auto ref = std::make_unique<Reference>();
  ref->cache_key = key;
  std::vector<void*> ptrs;
  for (size_t i = 0; i < r.args.size(); ++i) {
    const WorkerArg& a = r.args[i];
    NDArray arr(a.shape, DType::parse(a.dtype));
    if (a.output) {
      poison(arr);
      ref->outputs.push_back(std::move(arr));
      ptrs.push_back(ref->outputs.back().data());
    } else {
      fill_input(arr, splitmix64(seed * 1000003 + i));
      ref->inputs.push_back(std::move(arr));
      ptrs.push_back(ref->inputs.back().data());
    }
  }
  if (ref->outputs.empty()) throw std::invalid_argument("measure request: no argument is marked as an output");
  if (r.ref_artifact_kind == "ptx") {  // a GPU reference reads its inputs from device copies
    std::vector<NDArray*> host;
    size_t in_k = 0, out_k = 0;
    for (auto& a : r.args) host.push_back(a.output ? &ref->outputs[out_k++] : &ref->inputs[in_k++]);
    {
      FatalPhase phase(r.id, 1);
      gpu_run_reference(r, host, timeout_s);
    }
    refs_.push_front(std::move(ref));
    while (refs_.size() > std::max<size_t>(params_.reference_cache_entries, 1)) refs_.pop_back();
    return *refs_.front();
  }
  // The inputs are copied for the reference run, so a reference that writes its inputs changes nothing.
  std::vector<NDArray> scratch;
  scratch.reserve(ref->inputs.size());
  size_t k = 0;
  for (size_t i = 0; i < r.args.size(); ++i)
    if (!r.args[i].output) {
      scratch.push_back(ref->inputs[k++].copy());
      ptrs[i] = scratch.back().data();
    }
  Library lib;
  PackedFn fn = lib.open(r.ref_artifact, r.ref_function, "reference", "worker_lost");
  int32_t rc;
  {
    FatalPhase phase(r.id, 1);
    rc = fn(ptrs.data());
  }
  if (rc != 0) throw Fail{"worker_lost", "the reference returned status " + std::to_string(rc)};
  refs_.push_front(std::move(ref));
  while (refs_.size() > std::max<size_t>(params_.reference_cache_entries, 1)) refs_.pop_back();
  return *refs_.front();
}

WorkerResponse MeasureWorker::measure(const WorkerRequest& r) {
  WorkerTiming opt = WorkerTiming::from_json(r.options);
  if (opt.threads != threads_) {
    runtime::set_num_threads(opt.threads);  // generated code binds to this pool (see docs/measurement.md)
    threads_ = opt.threads;
  }
  const Reference& ref = reference(r, opt.seed, opt.run_timeout_s);
  if (r.artifact_kind == "ptx") {
    std::vector<const NDArray*> inputs, outputs;
    for (auto& a : ref.inputs) inputs.push_back(&a);
    for (auto& a : ref.outputs) outputs.push_back(&a);
    FatalPhase phase(r.id, 2);
    return gpu_measure(r, opt, inputs, outputs);
  }

  // Arguments: fresh copies of the inputs, poisoned outputs.
  std::vector<NDArray> args;
  std::vector<void*> ptrs;
  std::vector<size_t> out_pos;
  size_t in_k = 0;
  for (size_t i = 0; i < r.args.size(); ++i) {
    if (r.args[i].output) {
      args.emplace_back(r.args[i].shape, DType::parse(r.args[i].dtype));
      poison(args.back());
      out_pos.push_back(i);
    } else {
      args.push_back(ref.inputs[in_k++].copy());
    }
  }
  for (auto& a : args) ptrs.push_back(a.data());
  auto check = [&](const char* when) {
    for (size_t k = 0; k < out_pos.size(); ++k) {
      std::string name = r.args[out_pos[k]].name;
      if (name.empty()) name.append("#").append(std::to_string(out_pos[k]));
      std::string m = compare_outputs(args[out_pos[k]], ref.outputs[k], name);
      if (!m.empty()) throw Fail{"wrong_answer", m + when};
    }
  };

  Library lib;
  FatalPhase phase(r.id, 2);
  PackedFn fn = lib.open(r.artifact, r.function, "candidate", "runtime_error");
  auto call = [&] {
    errno = 0;  // an ENOMEM seen by the crash handler then comes from this run
    int32_t rc = fn(ptrs.data());
    if (rc != 0) throw Fail{"runtime_error", "the candidate returned status " + std::to_string(rc)};
  };

  auto t_start = clock_type::now();
  call();  // checked run on poisoned outputs
  check("");
  for (int i = 0; i < opt.warmup; ++i) call();

  WorkerResponse resp = timed_repeats(
      r, opt,
      [&] {
        if (opt.flush_cache) flush_cache();
        auto t0 = clock_type::now();
        call();
        return seconds_since(t0);
      },
      [&] { return seconds_since(t_start); });
  if (resp.error_kind == "none") check(" (after the timed runs: the candidate's results vary between runs)");
  return resp;
}

WorkerResponse timed_repeats(const WorkerRequest& r, const WorkerTiming& opt, const std::function<double()>& run_once,
                             const std::function<double()>& elapsed_s) {
  WorkerResponse resp;
  resp.id = r.id;
  double total = 0;
  while (int(resp.times.size()) < opt.max_repeats &&
         (int(resp.times.size()) < opt.min_repeats || total < opt.min_time_s)) {
    if (!resp.times.empty() && elapsed_s() > 0.5 * opt.run_timeout_s) break;  // stay well inside the timeout
    double t = run_once();
    resp.times.push_back(t);
    total += t;
    if (resp.times.size() == 1 && r.best_so_far_s > 0 && opt.early_abort_ratio > 0 &&
        t > opt.early_abort_ratio * r.best_so_far_s) {
      resp.error_kind = "early_aborted";
      resp.message = "first timed run took " + fmt(t) + " s, more than " + fmt(opt.early_abort_ratio) +
                     " x the best so far (" + fmt(r.best_so_far_s) + " s)";
      return resp;
    }
  }
  return resp;
}

int run_stdio_worker(MeasureWorker& worker, std::istream& in, std::ostream& out) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank lines are ignored
    WorkerResponse resp = worker.handle_line(line);
    out << resp.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    out.flush();
    if (resp.fatal) std::_Exit(4);  // a GPU context a kernel broke (or one still running): never reuse it
    if (worker.exit_requested()) break;
  }
  return 0;
}

}  // namespace tessel::tuner
