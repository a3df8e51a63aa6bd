// IR-level GPU tests: what binding lowers to, where barriers go, launch inference and its errors,
// validity checks against device limits, schedule errors for illegal bindings, the bind step's JSON.
#include <nlohmann/json.hpp>

#include "gpu_test_util.h"
#include "tessel/ir/op.h"
#include "tessel/lower/gpu_kernel.h"
#include "tessel/ops/matmul.h"

using namespace tessel;
using namespace tessel::ir;
using gputest::build;

namespace {

Expr i32(int64_t v) { return IntImm::make(DataType::int32(), v); }
Stmt loop(Var v, int64_t n, Stmt body, ForKind k = ForKind::kSerial) {
  return For::make(v, i32(0), i32(n), k, std::move(body));
}
Buffer buf(const std::string& n, int64_t size, MemScope scope) {
  return make_buffer(n, DataType::float32(), {i32(size)}, {}, scope);
}
bool is_sync(const Stmt& s) {
  auto* e = s.as<Evaluate>();
  auto* c = e ? e->value.as<Call>() : nullptr;
  return c && c->op == Intrinsic::kSyncThreads;
}

// B[i] = 2 * A[i], A staged in shared memory per block of `per_block` elements, 256 threads.
schedule::Schedule staged_copy(te::Tensor& A, te::Tensor& B, int64_t n, int64_t per_block) {
  A = te::placeholder({int(n)}, DataType::float32(), "A");
  B = te::compute({int(n)}, [&](te::Var i) { return A(i) * 2.0f; }, "B");
  schedule::Schedule s({B});
  std::string as = s.cache_read("A", "shared", {"B"});
  auto [bo, bi] = s.split("B", "i", per_block);
  auto [r, tx] = s.split("B", bi, 256);
  s.bind("B", bo, "blockIdx.x");
  s.bind("B", tx, "threadIdx.x");
  s.compute_at(as, "B", bo);
  auto [fr, ftx] = s.split(as, s.leaf_names(as)[0], 256);
  s.bind(as, ftx, "threadIdx.x");
  return s;
}

}  // namespace

TEST_CASE("gpu ir: bound loops lower to thread-kind loops and special-register reads", "[gpu][ir]") {
  te::Tensor A = te::placeholder({1000}, DataType::float32(), "A");
  te::Tensor B = te::compute({1000}, [&](te::Var i) { return A(i) + 1.0f; }, "B");
  schedule::Schedule s({B});
  auto [bo, tx] = s.split("B", "i", 128);
  s.bind("B", bo, "blockIdx.x");
  s.bind("B", tx, "threadIdx.x");
  LoweredFunc f = lower::lower(s, {A, B}, "addone");
  std::string text = to_string(f);
  INFO(text);
  CHECK(text.find("blockIdx.x (i.o, 0, 8)") != std::string::npos);
  CHECK(text.find("threadIdx.x (i.i, 0, 128)") != std::string::npos);
  CHECK(text.find("B[((i.o * 128) + i.i)]") != std::string::npos);
  auto k = codegen::build_cuda(f);
  INFO(k.llvm_ir);
  CHECK(k.llvm_ir.find("@llvm.nvvm.read.ptx.sreg.tid.x()") != std::string::npos);
  CHECK(k.llvm_ir.find("@llvm.nvvm.read.ptx.sreg.ctaid.x()") != std::string::npos);
  CHECK(k.llvm_ir.find("ptr addrspace(1) noalias") != std::string::npos);
  CHECK(k.llvm_ir.find("!\"kernel\", i32 1") != std::string::npos);
  CHECK(k.llvm_ir.find("!\"maxntidx\", i32 128") != std::string::npos);
  CHECK(k.llvm_ir.find("@llvm.nvvm.barrier0") == std::string::npos);
  gputest::require_ptxas_accepts(k);
}

TEST_CASE("gpu ir: a thread loop shorter than the launch is guarded", "[gpu][ir]") {
  // Two sibling thread loops: 64 and 32 threads; the launch has 64, the second loop is guarded.
  Buffer A = buf("A", 64, MemScope::kGlobal), B = buf("B", 64, MemScope::kGlobal);
  Var t1("t1"), t2("t2");
  Stmt body = Seq::make({loop(t1, 64, Store::make(B, Load::make(A, t1), t1), ForKind::kThreadIdxX),
                         loop(t2, 32, Store::make(B, Load::make(A, t2) * 2.0f, t2), ForKind::kThreadIdxX)});
  LoweredFunc f{"guarded", {A, B}, body};
  auto k = codegen::build_cuda(f);
  CHECK(k.launch.block[0] == 64);
  INFO(k.llvm_ir);
  CHECK(k.llvm_ir.find("icmp ult i32 %0, 32") != std::string::npos);  // tid.x < 32
  gputest::require_ptxas_accepts(k);
}

TEST_CASE("gpu ir: barriers after shared writes, before rewrites in the next iteration", "[gpu][ir]") {
  Buffer S = buf("S", 64, MemScope::kShared), L = buf("L", 1, MemScope::kLocal), G = buf("G", 4096, MemScope::kGlobal);
  Var ko("ko"), t("t"), t2("t2"), j("j");
  Stmt fetch = loop(t2, 64, Store::make(S, Load::make(G, ko * 64 + t2), t2), ForKind::kThreadIdxX);
  Stmt use = loop(j, 64, Store::make(L, Load::make(L, i32(0)) + Load::make(S, j), i32(0)));
  Stmt body = loop(t, 64, Allocate::make(L, loop(ko, 64, Allocate::make(S, Seq::make({fetch, use})))),
                   ForKind::kThreadIdxX);
  Stmt out = lower::insert_gpu_barriers(body);
  INFO(to_string(out));
  // t { L { ko { sync; S { fetch; sync; use } } } }
  auto* ko_loop = out.as<For>()->body.as<Allocate>()->body.as<For>();
  REQUIRE(ko_loop);
  auto* seq = ko_loop->body.as<Seq>();
  REQUIRE(seq);
  REQUIRE(seq->seq.size() == 2);
  CHECK(is_sync(seq->seq[0]));  // the next iteration's fetch waits for this iteration's readers
  auto* inner = seq->seq[1].as<Allocate>()->body.as<Seq>();
  REQUIRE(inner);
  REQUIRE(inner->seq.size() == 3);
  CHECK(is_sync(inner->seq[1]));  // readers wait for the fetch
  // Each thread's own slot (index = the thread variable): no barrier between its write and read; but a
  // read of other threads' slots needs one, and so does the own-slot pattern on a 2-D block.
  {
    Buffer R = buf("R", 64, MemScope::kShared);
    Var tt("tt"), jj("jj"), ty("ty");
    Stmt own = loop(tt, 64,
                    Allocate::make(R, Seq::make({Store::make(R, Load::make(G, tt), tt),
                                                 Store::make(G, Load::make(R, tt) * 2.0f, tt)})),
                    ForKind::kThreadIdxX);
    Stmt o1 = lower::insert_gpu_barriers(own);
    INFO(to_string(o1));
    CHECK(to_string(o1).find("sync_threads") == std::string::npos);
    Stmt others = loop(tt, 64,
                       Allocate::make(R, Seq::make({Store::make(R, Load::make(G, tt), tt),
                                                    loop(jj, 64, Store::make(G, Load::make(R, jj), tt))})),
                       ForKind::kThreadIdxX);
    CHECK(to_string(lower::insert_gpu_barriers(others)).find("sync_threads") != std::string::npos);
    Stmt two_d = loop(ty, 2, own, ForKind::kThreadIdxY);  // threads (x, 0) and (x, 1) share slot x
    CHECK(to_string(lower::insert_gpu_barriers(two_d)).find("sync_threads") != std::string::npos);
  }
  // Without shared memory nothing changes (the same node comes back).
  Stmt plain = loop(t, 64, Store::make(G, Load::make(G, t) + 1.0f, t), ForKind::kThreadIdxX);
  CHECK(lower::insert_gpu_barriers(plain).same_as(plain));
  // The launch: 64 threads, 256 bytes of shared memory, 4 bytes of local memory.
  auto launch = lower::infer_gpu_launch(out);
  CHECK(launch.block[0] == 64);
  CHECK(launch.shared_bytes == 256);
  CHECK(launch.local_bytes == 4);
}

namespace {
// Finds each needle after the previous one (from `from`); the position of the last, or npos when one is
// missing or out of order.
size_t find_in_order(const std::string& text, size_t from, const std::vector<std::string>& needles) {
  size_t at = from;
  for (auto& n : needles) {
    at = text.find(n, at);
    if (at == std::string::npos) return at;
    at += 1;
  }
  return at - 1;
}

// The 64 x 64 x 32 matmul with 32 x 32 x 8 blocks of 4 x 4 per thread (and what `more` sets), lowered and
// checked as a kernel: its launch and the kernel's IR text.
std::string matmul_kernel_ir(const std::function<void(ops::MatmulGpuParams&)>& more, lower::GpuLaunch* launch,
                             LoweredFunc* lowered = nullptr) {
  auto w = testing::matmul(64, 64, 32);
  ops::MatmulGpuParams p;
  p.bm = p.bn = 32, p.bk = 8, p.tm = p.tn = 4, p.vec = 4;
  more(p);
  LoweredFunc f = lower::lower(ops::schedule_matmul_gpu(w.args.back(), p), w.args, "mm");
  LoweredFunc d;
  REQUIRE(codegen::validate_gpu_kernel(f, {}, launch, &d).is_ok());
  if (lowered) *lowered = f;
  return to_string(d);
}

}  // namespace

TEST_CASE("gpu ir: barrier placement in the matmul schedule", "[gpu][ir]") {
  lower::GpuLaunch launch;
  std::string text = matmul_kernel_ir([](ops::MatmulGpuParams&) {}, &launch);
  INFO(text);
  // In the k.o loop: sync, A.shared fetch, B.shared fetch, sync, then the unrolled products.
  size_t ko = text.find("for (k.o, 0, 4)");
  REQUIRE(ko != std::string::npos);
  size_t end = find_in_order(text, ko, {"sync_threads()", "A.shared[", "B.shared[", "sync_threads()",
                                        "C.local[0] = (C.local[0] +"});
  CHECK(end != std::string::npos);
  CHECK(text.find("sync_threads()", text.rfind("sync_threads()", end) + 1) == std::string::npos);  // two barriers
  CHECK((launch.block == std::array<int64_t, 3>{8, 8, 1}));
}

TEST_CASE("gpu ir: software_pipeline stages the next tile around the compute", "[gpu][ir]") {
  lower::GpuLaunch launch;
  LoweredFunc f;
  std::string text = matmul_kernel_ir([](ops::MatmulGpuParams& p) { p.pipeline = true, p.min_blocks_per_sm = 3; },
                                      &launch, &f);
  CHECK(launch.min_blocks_per_sm == 3);
  INFO(text);
  // Prologue fetch of tile 0, then per k.o: sync, staged loads of tile k.o + 1 (registers), the products,
  // sync, the staged values stored to shared memory.
  size_t pro = text.find("A.shared[");
  size_t ko = text.find("for (k.o, 0, 4)");
  REQUIRE(ko != std::string::npos);
  CHECK(pro < ko);
  size_t end = find_in_order(text, ko, {"sync_threads()", "A.shared.stage[", "C.local[0] = (C.local[0] +",
                                        "sync_threads()", "] = A.shared.stage["});
  CHECK(end != std::string::npos);
  CHECK(text.find("sync_threads()", end) == std::string::npos);
  CHECK(text.find("(k.o < 3)") != std::string::npos);  // the last iteration fetches nothing
  auto k = codegen::build_cuda(f);
  gputest::require_ptxas_accepts(k);
  CHECK(k.ptx.find(".minnctapersm 3") != std::string::npos);
}

TEST_CASE("gpu ir: virtual threads share one k loop and one fetch, each with its own accumulators", "[gpu][ir]") {
  lower::GpuLaunch launch;
  std::string text = matmul_kernel_ir([](ops::MatmulGpuParams& p) { p.vt = 2; }, &launch);
  INFO(text);
  CHECK((launch.block == std::array<int64_t, 3>{8, 8, 1}));  // 32/4 threads per dimension, as without vt
  CHECK(text.find("virtual_thread") == std::string::npos);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("for (k.o, 0, 4)") == 1);   // one reduction loop, not one per virtual thread
  CHECK(count("A.shared[") > 0);
  CHECK(count("allocate C.local[float32 * 16]") == 1);  // 2 x 2 virtual threads of 2 x 2 accumulators
  // Thread (ty, tx) owns rows ty*2 + {0, 1} and 16 + ty*2 + {0, 1}: the second virtual thread's
  // products read A.shared 16 rows (16 * 8 floats) further on.
  CHECK(text.find("+ 128)]") != std::string::npos);
  // The fetch is not repeated per virtual thread: two barriers per k.o iteration, as without them.
  size_t ko = text.find("for (k.o, 0, 4)");
  size_t first = text.find("sync_threads()", ko);
  size_t second = text.find("sync_threads()", first + 1);
  REQUIRE(second != std::string::npos);
  CHECK(text.find("sync_threads()", second + 1) == std::string::npos);
}

TEST_CASE("gpu validity: too many threads, too much shared memory are rejected with a reason", "[gpu][validity]") {
  te::Tensor A = te::placeholder({1 << 16}, DataType::float32(), "A");
  te::Tensor B = te::compute({1 << 16}, [&](te::Var i) { return A(i) + 1.0f; }, "B");
  schedule::Schedule s({B});
  auto [bo, tx] = s.split("B", "i", 2048);
  s.bind("B", bo, "blockIdx.x");
  s.bind("B", tx, "threadIdx.x");
  LoweredFunc f = lower::lower(s, {A, B}, "too_many_threads");
  Status st = codegen::validate_gpu_kernel(f);
  CHECK_FALSE(st.is_ok());
  CHECK_THAT(st.message(), Catch::Contains("2048 threads"));
  CHECK_THROWS_WITH(codegen::build_cuda(f), Catch::Contains("invalid GPU kernel too_many_threads") &&
                                                Catch::Contains("over the limit of 1024"));

  // 64 KB of shared memory per block: over the 48 KB static limit, so it becomes dynamic shared memory.
  te::Tensor A2, B2;
  auto s2 = staged_copy(A2, B2, 1 << 16, 1 << 14);
  auto k = codegen::build_cuda(lower::lower(s2, {A2, B2}, "big_shared"));
  CHECK(k.launch.shared_bytes == 65536);
  CHECK(k.artifact.first().shared_bytes == 65536);
  CHECK(k.artifact.first().static_shared_bytes == 0);
  CHECK(k.ptx.find(".extern .shared") != std::string::npos);
  gputest::require_ptxas_accepts(k);
  gputest::require_cpu_semantics(
      testing::Workload{"staged_copy", {A2, B2}, 1,
                        [](std::vector<runtime::NDArray*>& t) {
                          for (int64_t i = 0; i < t[0]->num_elements(); ++i) t[1]->set(i, 2 * t[0]->get(i));
                        },
                        1e-6},
      s2);

  // 256 KB: over the 227 KB opt-in limit.
  te::Tensor A3, B3;
  auto s3 = staged_copy(A3, B3, 1 << 17, 1 << 16);
  LoweredFunc f3 = lower::lower(s3, {A3, B3}, "huge_shared");
  Status st3 = codegen::validate_gpu_kernel(f3);
  CHECK_THAT(st3.message(), Catch::Contains("262144 bytes of shared memory per block exceed the limit of 232448"));
  CHECK_THROWS_WITH(codegen::build_cuda(f3), Catch::Contains("invalid GPU kernel huge_shared"));

  // Registers, when ptxas reports them: build_cuda(..., assemble) fills them in and checks the limit.
  if (gputest::have_ptxas()) {
    te::Tensor A4, B4;
    auto s4 = staged_copy(A4, B4, 1 << 12, 1 << 10);
    LoweredFunc f4 = lower::lower(s4, {A4, B4}, "regs");
    auto k4 = codegen::build_cuda(f4, codegen::Target::cuda(), {}, /*assemble=*/true);
    CHECK(k4.registers > 0);
    CHECK(k4.artifact.first().registers == k4.registers);
    CHECK(codegen::to_json(k4.artifact)["registers"] == k4.registers);
    lower::GpuLimits tight;
    tight.max_registers_per_thread = 2;
    CHECK_THROWS_WITH(codegen::build_cuda(f4, codegen::Target::cuda(), tight, true),
                      Catch::Contains("invalid GPU kernel regs") && Catch::Contains("registers per thread exceed the limit of 2"));
  }
  lower::GpuLaunch l;
  l.block = {1024, 1, 1};
  CHECK_THAT(lower::check_gpu_launch(l, {}, 128).message(), Catch::Contains("65536 registers"));
  CHECK(lower::check_gpu_launch(l, {}, 64).is_ok());
}

TEST_CASE("gpu launch errors: unbound, parallel, several root nests, barrier under a guard", "[gpu][error]") {
  te::Tensor A = te::placeholder({64}, DataType::float32(), "A");
  te::Tensor B = te::compute({64}, [&](te::Var i) { return A(i) + 1.0f; }, "B");
  {
    schedule::Schedule s({B});
    CHECK_THROWS_WITH(codegen::build_cuda(lower::lower(s, {A, B}, "unbound")),
                      Catch::Contains("no loop is bound to blockIdx or threadIdx"));
  }
  {
    schedule::Schedule s({B});
    auto [o, i] = s.split("B", "i", 8);
    s.parallel("B", o);
    s.bind("B", i, "threadIdx.x");
    CHECK_THROWS_WITH(codegen::build_cuda(lower::lower(s, {A, B}, "par")), Catch::Contains("parallel loops"));
  }
  {
    te::Tensor T = te::compute({64}, [&](te::Var i) { return A(i) * 3.0f; }, "T");
    te::Tensor C = te::compute({64}, [&](te::Var i) { return T(63 - i); }, "C");
    schedule::Schedule s({C});
    s.bind("T", "i", "threadIdx.x");
    s.bind("C", "i", "threadIdx.x");
    CHECK_THROWS_WITH(codegen::build_cuda(lower::lower(s, {A, C}, "two")),
                      Catch::Contains("stage T is an intermediate in global memory"));
    schedule::Schedule s2({T, C});  // both outputs, both over blocks: C would read T written by other blocks
    s2.bind("T", "i", "blockIdx.x");
    s2.bind("C", "i", "blockIdx.x");
    CHECK_THROWS_WITH(codegen::build_cuda(lower::lower(s2, {A, T, C}, "two_outputs")),
                      Catch::Contains("2 loop nests at the root, bound to blocks"));
  }
  {
    Buffer S = buf("S", 64, MemScope::kShared), G = buf("G", 64, MemScope::kGlobal);
    Var t("t"), t2("t2"), u("u");
    Stmt fill = loop(t2, 32, Store::make(S, Load::make(G, t2), t2), ForKind::kThreadIdxX);
    Stmt use = Store::make(G, Load::make(S, 31 - t), t);
    Stmt first = loop(t, 32, Allocate::make(S, Seq::make({fill, use})), ForKind::kThreadIdxX);
    Stmt other = loop(u, 64, Store::make(G, Load::make(G, u) + 1.0f, u), ForKind::kThreadIdxX);
    Stmt body = lower::insert_gpu_barriers(Seq::make({first, other}));
    CHECK_THROWS_WITH(lower::infer_gpu_launch(body), Catch::Contains("which not every thread of the block reaches"));
  }
}

TEST_CASE("gpu schedule errors: illegal bindings give clear messages", "[gpu][error]") {
  auto w = testing::matmul(64, 64, 64);
  const te::Tensor& C = w.args.back();
  auto status = [&](const std::function<void(schedule::Schedule&)>& prep, const schedule::Step& step) {
    schedule::Schedule s({C});
    prep(s);
    return s.apply(step).message();
  };
  auto none = [](schedule::Schedule&) {};
  CHECK_THAT(status(none, schedule::BindStep{"C", "k", "threadIdx.x"}), Catch::Contains("cross-thread reduction"));
  CHECK_THAT(status(none, schedule::BindStep{"C", "i", "threadIdx.w"}), Catch::Contains("unknown thread tag"));
  CHECK_THAT(status(none, schedule::BindStep{"C", "q", "threadIdx.x"}), Catch::Contains("not a loop of this stage"));
  CHECK_THAT(status([](schedule::Schedule& s) { s.bind("C", "i", "threadIdx.x"); },
                    schedule::BindStep{"C", "j", "threadIdx.x"}),
             Catch::Contains("threadIdx.x is already bound to loop i"));
  CHECK_THAT(status([](schedule::Schedule& s) { s.bind("C", "i", "threadIdx.x"); },
                    schedule::BindStep{"C", "j", "blockIdx.x"}),
             Catch::Contains("block loops must enclose thread loops"));
  CHECK_THAT(status([](schedule::Schedule& s) { s.unroll("C", "j"); }, schedule::BindStep{"C", "j", "threadIdx.x"}),
             Catch::Contains("already annotated unroll"));
  CHECK_THAT(status([](schedule::Schedule& s) { s.bind("C", "i", "threadIdx.x"); }, schedule::SplitStep{"C", "i", 4}),
             Catch::Contains("cannot split an annotated loop"));
  // A local stage may not bind thread indices (one copy per thread); only shared stages do.
  CHECK_THAT(status(
                 [](schedule::Schedule& s) {
                   std::string cl = s.cache_write("C", "local");
                   s.bind("C", "i", "blockIdx.x");
                   s.compute_at(cl, "C", "i");
                 },
                 schedule::BindStep{"C.local", "j", "threadIdx.y"}),
             Catch::Contains("the stage has local scope (one copy per thread)"));
  CHECK_THAT(status(
                 [](schedule::Schedule& s) {
                   std::string cl = s.cache_write("C", "local");
                   s.bind("C", "i", "threadIdx.x");
                   s.compute_at(cl, "C", "i");
                 },
                 schedule::BindStep{"C.local", "i", "threadIdx.x"}),
             Catch::Contains("only a shared-memory stage"));
  CHECK_THAT(status(
                 [](schedule::Schedule& s) {
                   std::string cl = s.cache_write("C", "local");
                   s.bind("C", "i", "threadIdx.x");
                   s.compute_at(cl, "C", "i");
                 },
                 schedule::BindStep{"C.local", "i", "blockIdx.x"}),
             Catch::Contains("block loops must enclose thread loops"));
  // Two stages bound to one blockIdx with different extents.
  te::Tensor A = te::placeholder({64}, DataType::float32(), "A");
  te::Tensor T = te::compute({64}, [&](te::Var i) { return A(i) * 3.0f; }, "T");
  te::Tensor D = te::compute({32}, [&](te::Var i) { return T(i * 2); }, "D");
  schedule::Schedule s({D});
  s.bind("T", "i", "blockIdx.x");
  CHECK_THAT(s.apply(schedule::BindStep{"D", "i", "blockIdx.x"}).message(), Catch::Contains("one kernel has one grid"));
}

TEST_CASE("gpu trace: bind steps round-trip through JSON, old traces still parse", "[gpu][trace]") {
  std::vector<schedule::Step> steps{schedule::SplitStep{"C", "i", 32}, schedule::BindStep{"C", "i.o", "blockIdx.x"},
                                    schedule::CacheReadStep{"A", "shared", {"C"}}};
  nlohmann::json j = schedule::trace_to_json(steps);
  CHECK(j["steps"][1]["kind"] == "bind");
  CHECK(j["steps"][1]["thread_tag"] == "blockIdx.x");
  auto back = schedule::trace_from_json(j);
  REQUIRE(back.size() == 3);
  auto* b = std::get_if<schedule::BindStep>(&back[1]);
  REQUIRE(b);
  CHECK(b->axis == "i.o");
  CHECK(schedule::step_to_string(back[1]) == "bind(axis=\"i.o\", stage=\"C\", thread_tag=\"blockIdx.x\")");
  auto old = nlohmann::json::parse(R"({"version":1,"steps":[{"kind":"split","stage":"C","axis":"i","factor":4,"nparts":false}]})");
  CHECK(schedule::trace_from_json(old).size() == 1);
}

TEST_CASE("gpu target: parse and print cuda targets", "[gpu][target]") {
  auto t = codegen::Target::parse("cuda");
  CHECK(t.is_cuda());
  CHECK(t.triple == "nvptx64-nvidia-cuda");
  CHECK(t.cpu == "sm_90");
  CHECK(t.to_string() == "cuda -arch=sm_90");
  CHECK(codegen::Target::parse("cuda -arch=sm_80").cpu == "sm_80");
  CHECK(codegen::Target::parse(t.to_string()) == t);
  CHECK_THROWS_WITH(codegen::Target::parse("cuda -arch=90"), Catch::Contains("not of the form sm_XX"));
  CHECK_THROWS_WITH(codegen::Target::parse("cuda -foo"), Catch::Contains("unknown option"));
  CHECK_FALSE(codegen::Target::host().is_cuda());
}
