// Every schedule primitive alone and in combination, on matmul, conv2d with padding, reductions and an
// elementwise chain, each checked against a plain C++ reference on random inputs.
#include <catch2/catch.hpp>

#include "tessel/ir/printer.h"
#include "tessel/lower/lower.h"
#include "workloads.h"

using namespace tessel;
using namespace tessel::testing;
using schedule::Schedule;

namespace {
void expect_ok(const Workload& w, const Schedule& s, uint64_t seed = 7) {
  std::string msg = check_schedule(w, s, seed);
  INFO(msg);
  CHECK(msg.empty());
}
Schedule sched(const Workload& w) { return Schedule({w.args.back()}); }
}  // namespace

TEST_CASE("default schedules compute the reference", "[correctness]") {
  for (auto w : {matmul(17, 23, 11), conv2d(3, 9, 7, 4, 3, 1), row_reduce(5, 37), elementwise_chain(13, 29)})
    expect_ok(w, sched(w));
}

TEST_CASE("split by factor, dividing and not dividing", "[correctness]") {
  auto w = matmul(24, 30, 20);
  for (int f : {1, 3, 4, 7, 24, 64}) {
    Schedule s = sched(w);
    s.split("C", "i", f);
    s.split("C", "k", f + 1);
    expect_ok(w, s);
  }
}

TEST_CASE("split by nparts", "[correctness]") {
  auto w = matmul(25, 13, 9);
  for (int n : {1, 2, 3, 5, 30}) {
    Schedule s = sched(w);
    s.split_nparts("C", "j", n);
    expect_ok(w, s);
  }
}

TEST_CASE("tile, reorder, fuse", "[correctness]") {
  auto w = matmul(33, 40, 17);
  Schedule s = sched(w);
  auto t = s.tile("C", "i", "j", 8, 16);
  s.reorder("C", {t[0], t[1], "k", t[2], t[3]});
  s.fuse("C", {t[0], t[1]});
  expect_ok(w, s);
  Schedule s2 = sched(w);
  s2.fuse("C", {"i", "j"});
  s2.split("C", "i.j.f", 7);
  expect_ok(w, s2);
  Schedule s3 = sched(w);
  s3.reorder("C", {"k", "j", "i"});
  expect_ok(w, s3);
}

TEST_CASE("vectorize, including tails and a fused vector loop", "[correctness]") {
  auto w = matmul(12, 37, 8);
  Schedule s = sched(w);
  auto [jo, ji] = s.split("C", "j", 8);
  s.reorder("C", {"i", jo, "k", ji});
  s.vectorize("C", ji);
  expect_ok(w, s);
  auto e = elementwise_chain(7, 19);
  Schedule s2 = sched(e);
  for (auto& n : inlinable_stages(e, s2)) s2.compute_inline(n);
  s2.fuse("D", {"i", "j"});
  auto [o, i] = s2.split("D", "i.j.f", 16);
  s2.vectorize("D", i);
  expect_ok(e, s2);
}

TEST_CASE("unroll and auto-unroll pragma", "[correctness]") {
  auto w = matmul(10, 12, 9);
  Schedule s = sched(w);
  auto [ko, ki] = s.split("C", "k", 4);
  s.unroll("C", ki);
  s.pragma("C", "i", "auto_unroll_max_step", 64);
  expect_ok(w, s);
}

TEST_CASE("parallel outer loops", "[correctness]") {
  auto w = matmul(31, 16, 8);
  Schedule s = sched(w);
  auto [io, ii] = s.split("C", "i", 4);
  s.parallel("C", io);
  expect_ok(w, s);
  auto c = conv2d(4, 10, 10, 6, 3, 1);
  Schedule s2 = sched(c);
  s2.parallel("O", "i");
  s2.compute_inline("Apad");
  expect_ok(c, s2);
}

TEST_CASE("compute_inline of elementwise producers (chain and padding)", "[correctness]") {
  auto e = elementwise_chain(9, 11);
  Schedule s = sched(e);
  s.compute_inline("T1");
  expect_ok(e, s);
  s.compute_inline("T2");
  expect_ok(e, s);
  auto c = conv2d(2, 6, 5, 3, 3, 2);
  Schedule s2 = sched(c);
  s2.compute_inline("Apad");
  expect_ok(c, s2);
}

TEST_CASE("compute_at and compute_root", "[correctness]") {
  auto c = conv2d(3, 12, 11, 4, 3, 1);
  Schedule s = sched(c);
  auto t = s.tile("O", "j", "l", 4, 5);
  s.compute_at("Apad", "O", t[1]);
  expect_ok(c, s);
  s.compute_root("Apad");
  expect_ok(c, s);
  auto r = row_reduce(6, 40);
  Schedule s2 = sched(r);
  s2.compute_at("Mx", "S", "i");
  expect_ok(r, s2);
  auto e = elementwise_chain(8, 12);
  Schedule s3 = sched(e);
  auto [jo, ji] = s3.split("D", "j", 5);
  s3.compute_at("T2", "D", jo);
  s3.compute_at("T1", "D", jo);
  expect_ok(e, s3);
}

TEST_CASE("cache_read into a local tile", "[correctness]") {
  auto w = matmul(20, 24, 18);
  Schedule s = sched(w);
  std::string al = s.cache_read("A", "local", {"C"});
  auto [ko, ki] = s.split("C", "k", 6);
  s.reorder("C", {ko, "i", "j", ki});
  s.compute_at(al, "C", "i");
  expect_ok(w, s);
}

TEST_CASE("cache_write: register-blocked matmul", "[correctness]") {
  auto w = matmul(37, 45, 19);
  Schedule s = sched(w);
  std::string cl = s.cache_write("C", "local");
  auto t = s.tile("C", "i", "j", 4, 16);
  s.vectorize("C", t[3]);
  s.compute_at(cl, "C", t[1]);
  auto [ko, ki] = s.split(cl, "k", 4);
  s.reorder(cl, {ko, ki, "i", "j"});
  s.unroll(cl, "i");
  s.vectorize(cl, "j");
  expect_ok(w, s);
}

TEST_CASE("software_pipeline: staged fetches into shared tiles compute the reference", "[correctness]") {
  // The pass is target-independent IR: on the CPU, "shared" buffers are ordinary memory, so the
  // pipelined loop (prologue, next tile's loads staged before the compute, stored after) can be run.
  for (auto [M, N, K, bk] : {std::tuple{32, 40, 48, 4}, std::tuple{20, 24, 50, 4}, std::tuple{16, 16, 4, 4}}) {
    auto w = matmul(M, N, K);
    Schedule s = sched(w);
    std::string cl = s.cache_write("C", "local");
    std::string as = s.cache_read("A", "shared", {cl});
    std::string bs = s.cache_read("B", "shared", {cl});
    auto t = s.tile("C", "i", "j", 8, 8);
    s.compute_at(cl, "C", t[1]);
    auto [ko, ki] = s.split(cl, "k", bk);  // K = 50: a guarded last tile; 8x4 + 4x8 staged elements (no thread loops on the CPU)
    s.reorder(cl, {ko, ki, "i", "j"});
    s.compute_at(as, cl, ko);
    s.compute_at(bs, cl, ko);
    s.pragma(cl, ko, "software_pipeline", 1);
    auto text = ir::to_string(lower::lower(s, w.args, "mm").body);
    INFO(M << "x" << N << "x" << K << "\n" << text);
    // K = 4: one k tile, nothing to overlap, the loop stays as it was.
    CHECK((text.find("A.shared.stage") != std::string::npos) == (K > bk));
    expect_ok(w, s);
  }
}

TEST_CASE("rfactor of a reduction", "[correctness]") {
  auto r = row_reduce(4, 53);
  Schedule s = sched(r);
  auto [ko, ki] = s.split("S", "k2", 8);
  std::string rf = s.rfactor("S", ki);
  s.reorder(rf, {"k2.o", "i"});  // S.rf loops: k2.i (now data-parallel), k2.o, i
  s.vectorize(rf, "i");
  expect_ok(r, s);
  auto w = matmul(5, 6, 40);
  Schedule s2 = sched(w);
  s2.rfactor("C", "k");
  expect_ok(w, s2);
  Schedule s3 = sched(w);
  auto [o, i] = s3.split("C", "k", 7);
  s3.rfactor("C", o);
  expect_ok(w, s3);
}

TEST_CASE("storage_align pads an intermediate buffer", "[correctness]") {
  auto c = conv2d(3, 8, 8, 2, 3, 1);
  Schedule s = sched(c);
  s.storage_align("Apad", 1, 16, 1);
  expect_ok(c, s);
  auto w = matmul(16, 16, 16);
  Schedule s2 = sched(w);
  std::string bl = s2.cache_read("B", "local", {"C"});
  s2.storage_align(bl, 0, 8, 3);
  expect_ok(w, s2);
}

TEST_CASE("a combined conv2d schedule", "[correctness]") {
  auto c = conv2d(8, 14, 14, 16, 3, 1);
  Schedule s = sched(c);
  std::string ol = s.cache_write("O", "local");
  auto [fo, fi] = s.split("O", "i", 4);
  auto [yo, yi] = s.split("O", "j", 2);
  auto [xo, xi] = s.split("O", "l", 8);
  s.reorder("O", {fo, yo, xo, fi, yi, xi});
  s.parallel("O", fo);
  s.vectorize("O", xi);
  s.compute_at(ol, "O", xo);
  s.compute_at("Apad", "O", yo);
  s.reorder(ol, {"rc", "ry", "rx", "i", "j", "l"});
  s.vectorize(ol, "l");
  s.unroll(ol, "rx");
  expect_ok(c, s);
}

TEST_CASE("transform_layout packs an operand into blocked panels", "[correctness]") {
  auto w = matmul(19, 37, 23);
  Schedule s = sched(w);
  std::string bp = s.cache_read("B", "global", {"C"});
  s.transform_layout(bp, 1, 8);  // B.global[k][j] stored as [j/8][k][j%8] (37 is not a multiple of 8)
  auto [jo, ji] = s.split(bp, "j", 8);
  s.reorder(bp, {jo, "i", ji});
  s.vectorize(bp, ji);
  auto [cjo, cji] = s.split("C", "j", 8);
  s.reorder("C", {cjo, "i", "k", cji});
  s.vectorize("C", cji);
  expect_ok(w, s);
  auto c = conv2d(3, 9, 8, 5, 3, 1);
  Schedule s2 = sched(c);
  s2.transform_layout("Apad", 0, 2);  // channels blocked by 2 (3 is not a multiple)
  expect_ok(c, s2);
}
