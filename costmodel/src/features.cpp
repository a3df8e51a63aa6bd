// Per-store program features (layout: features.h offsets, docs/costmodel.md indices).
//
// Guide:
//   extraction_ir     trace -> Schedule -> build_loop_nest, simplify, storage_flatten, simplify (loop kinds
//                     kept: vectorize/unroll are read from For kinds, cheaper than copying the bodies out)
//   FeatureVisitor    walks the statements keeping the loop stack (extent, kind), the auto-unroll pragma,
//                     guards and allocations; at each Store it builds one row:
//     count_expr      arithmetic by kind and the buffer accesses of the stored value and indices
//     analyze_access  index coefficients per enclosing loop (affine part) -> bytes, unique bytes, cache
//                     lines, reuse (innermost loop the index does not depend on), innermost stride,
//                     stride between consecutive threadIdx.x (GPU coalescing)
//     cache_features  traffic into three cache sizes from the distinct bytes per loop level; the
//                     accumulator tile and its micro-kernel intensity (version 4)
//   finish            program-level values (GPU launch and occupancy: gpu_features.cpp), per-FLOP
//                     normalization, log2(1 + x) of magnitudes; flags and fractions stay as they are
#include "tessel/costmodel/features.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "gpu_features.h"
#include "tessel/ir/functor.h"
#include "tessel/ir/simplify.h"
#include "tessel/lower/build_loop_nest.h"
#include "tessel/lower/storage_flatten.h"
#include "tessel/schedule/schedule.h"
#include "tessel/support/error.h"

namespace tessel::costmodel {

namespace {

using namespace ir;

constexpr double kCacheLine = 64;
// Per-FLOP counts are scaled by this before log2(1 + x) so that their range stays resolved.
constexpr double kPerFlopScale = 1024;

// Indices inside groups (docs/costmodel.md lists them with the absolute index).
enum Compute {
  kFloatAddSub,
  kFloatMul,
  kFloatDiv,
  kFloatMad,
  kFloatMath,
  kFloatCmp,
  kIntAddSub,
  kIntMul,
  kIntDivMod,
  kIntCmp,
  kBoolOp,
  kSelect,
  kCastOp,
  kLoads,
  kComputeCount
};
enum Loop {
  kNumLoops,
  kOuterProd,
  kInnerExtent,
  kSerialNum,
  kVecNum,
  kVecProd,
  kVecLen,
  kVecPos,
  kUnrollNum,
  kUnrollProd,
  kUnrollLen,
  kUnrollPos,
  kParNum,
  kParProd,
  kParLen,
  kParPos,
  kAutoUnroll,
  kIsAccumulate,
  kGuards,
  kPredicated,
  kLoopCount
};
enum Buf {
  kPresent,
  kIsRead,
  kIsWrite,
  kBytes,
  kUniqueBytes,
  kLines,
  kUniqueLines,
  kReuseCt,
  kReuseDisIter,
  kReuseDisBytes,
  kStride,
  kIsLocal
};
static_assert(kComputeCount == kLoopOffset - kComputeOffset);
static_assert(kLoopCount == kBufferOffset - kLoopOffset);
static_assert(kBufferOffset + kFeatureBufferSlots * kFeaturesPerBuffer == kIntensityOffset);
static_assert(kGpuFeatureCount == kGpuFeatures);

const char* const kComputeNames[] = {"float_addsub", "float_mul",  "float_div", "float_mad",  "float_math",
                                     "float_cmp",    "int_addsub", "int_mul",   "int_divmod", "int_cmp",
                                     "bool_op",      "select",     "cast",      "loads"};
const char* const kLoopNames[] = {"num_loops",  "outer_prod",  "inner_extent",  "serial_num", "vec_num",
                                  "vec_prod",   "vec_len",     "vec_pos",       "unroll_num", "unroll_prod",
                                  "unroll_len", "unroll_pos",  "par_num",       "par_prod",   "par_len",
                                  "par_pos",    "auto_unroll", "is_accumulate", "guards",     "predicated"};
const char* const kBufNames[] = {"present",        "is_read",         "is_write",     "bytes",
                                 "unique_bytes",   "lines",           "unique_lines", "reuse_ct",
                                 "reuse_dis_iter", "reuse_dis_bytes", "stride",       "is_local"};
enum Cache { kTrafficL1, kTrafficL2, kTrafficL3, kAccTileBytes, kTileIntensity, kCacheCount };
static_assert(kCacheCount == kCacheFeatures);
const char* const kCacheNames[] = {"traffic_l1", "traffic_l2", "traffic_l3", "acc_tile_bytes", "tile_intensity"};
// Cache capacities of the traffic estimates (typical x86 L1d, L2 per core, L3 share).
constexpr double kCacheBytes[] = {32 * 1024.0, 1024 * 1024.0, 32 * 1024 * 1024.0};
const char* const kTailNames[] = {"flops_per_byte", "flops_per_unique_byte", "flops",          "num_allocs",
                                  "alloc_bytes",    "store_buffer_bytes",    "store_to_local", "program_stores",
                                  "program_flops",  "program_loops"};

struct LoopInfo {
  const VarNode* var;
  double extent;
  ForKind kind;
};

/** What one store does to one buffer (accesses of the store's statement merged). */
struct Access {
  const BufferNode* buffer = nullptr;
  bool read = false, write = false;
  double bytes = 0, unique_bytes = 0, lines = 0, unique_lines = 0;
  double reuse_ct = 0, reuse_dis_iter = 0, reuse_dis_bytes = 0, stride = 0;
  double tx_stride = 0;             // |elements between neighbouring threadIdx.x| (0: no thread loop or same element)
  double uncoalesced_bytes = 0;     // bytes accessed with tx_stride above the contiguous elements per thread
  std::vector<double> level_bytes;  // unique bytes touched inside loop level i (i = 0 outermost .. lanes)
  int reuse_loop = -1;              // innermost loop (extent > 1) the index does not depend on; -1: none
};

double const_elements(const BufferNode& b) {
  double n = 1;
  for (auto& e : b.shape) {
    const int64_t* v = as_const_int(e);
    if (!v) return -1;
    n *= double(*v);
  }
  return n;
}

/** Operands of a binary node (null pair for other kinds). */
std::pair<const Expr*, const Expr*> operands(const Expr& e) {
  switch (e.kind()) {
#define TESSEL_BIN(K) \
  case ExprKind::K:   \
    return {&e.as<ir::K>()->a, &e.as<ir::K>()->b};
    TESSEL_BIN(Add)
    TESSEL_BIN(Sub) TESSEL_BIN(Mul) TESSEL_BIN(Div) TESSEL_BIN(Mod) TESSEL_BIN(Min) TESSEL_BIN(Max) TESSEL_BIN(EQ)
        TESSEL_BIN(NE) TESSEL_BIN(LT) TESSEL_BIN(LE) TESSEL_BIN(And) TESSEL_BIN(Or)
#undef TESSEL_BIN
            default : return {nullptr, nullptr};
  }
}

class FeatureVisitor : public IRVisitor {
 public:
  std::vector<std::vector<float>> rows;

  void finish() {
    for (size_t i = 0; i < rows.size(); ++i) {
      float* g = &rows[i][kGpuOffset];
      if (!gpu_) {
        std::fill(g, g + kGpuFeatures, 0.0f);  // CPU program: the GPU group stays zero
        continue;
      }
      double threads = 1;  // threads of the block that run the store (a shorter thread loop is guarded)
      for (size_t d = 0; d < 3; ++d) {
        double b = double(launch_.block[d]);
        threads *= row_threads_[i][d] >= 0 ? std::min(row_threads_[i][d], b) : b;
      }
      g[kGpuThreadShare] = float(threads);
      fill_gpu_program_features(launch_, fetch_stores_, compute_stores_, pipelined_, g);
    }
    double program_flops = 0;
    for (auto& r : rows) program_flops += r[kIntensityOffset + 2];
    // Counts that grow with the size of the computation are taken per FLOP of the program (version 2):
    // "cache lines per FLOP" means the same for a small and a large workload, so what is learned on
    // some workloads carries over to others. The program's FLOPs stay as one absolute feature.
    double per = program_flops > 0 ? 1.0 / program_flops : 1.0;
    for (auto& r : rows) {
      for (int i = 0; i < kFeatureLength; ++i)
        if (is_work_count(i)) r[i] = float(r[i] * per * kPerFlopScale);
      r[kOtherOffset + 0] = float(rows.size());
      r[kOtherOffset + 1] = float(program_flops);
      r[kOtherOffset + 2] = float(num_loops_total_);
      for (int i = 0; i < kFeatureLength; ++i) {
        if (is_unscaled(i)) continue;
        r[i] = float(std::log2(1.0 + std::max(0.0f, r[i])));
      }
    }
  }

 protected:
  void visit_(const For* op) override {
    const int64_t* e = as_const_int(op->extent);
    loops_.push_back({op->var.get(), e ? double(std::max<int64_t>(*e, 0)) : 1.0, op->for_kind});
    ++num_loops_total_;
    if (is_gpu_bound(op->for_kind)) {  // the launch shape, as lower::infer_gpu_launch derives it
      gpu_ = true;
      auto& dim = (is_block_bound(op->for_kind) ? launch_.grid : launch_.block)[size_t(gpu_dim(op->for_kind))];
      dim = std::max(dim, int64_t(loops_.back().extent));
    }
    visit(op->body);
    loops_.pop_back();
  }
  void visit_(const AttrStmt* op) override {
    const int64_t* v = as_const_int(op->value);
    bool unroll = op->key == "pragma_auto_unroll_max_step" && v;
    if (op->key == "pragma_software_pipeline" && v && *v) pipelined_ = true;
    if (op->key == "pragma_min_blocks_per_sm" && v) launch_.min_blocks_per_sm = std::max(launch_.min_blocks_per_sm, *v);
    if (unroll) auto_unroll_.push_back({double(*v), loops_.size()});
    visit(op->body);
    if (unroll) auto_unroll_.pop_back();
  }
  void visit_(const IfThenElse* op) override {
    ++guards_;
    visit(op->then_case);
    if (op->else_case.defined()) visit(op->else_case);
    --guards_;
  }
  void visit_(const Allocate* op) override {
    const BufferNode& b = *op->buffer;
    double bytes = std::max(0.0, const_elements(b)) * b.dtype.bytes_per_lane() * b.dtype.lanes;
    if (b.scope == MemScope::kShared) launch_.shared_bytes += (int64_t(bytes) + 15) / 16 * 16;
    if (b.scope == MemScope::kLocal) launch_.local_bytes += int64_t(bytes);
    allocs_.push_back(op->buffer.get());
    visit(op->body);
    allocs_.pop_back();
  }
  void visit_(const Store* op) override { add_row(op->buffer.get(), op->value, {op->index}, op->predicate.defined()); }
  void visit_(const BufferStore* op) override { add_row(op->buffer.get(), op->value, op->indices, false); }

 private:
  static bool is_work_count(int i) {
    if (i >= kComputeOffset && i < kLoopOffset) return true;
    if (i == kLoopOffset + kOuterProd || i == kIntensityOffset + 2) return true;
    if (i >= kCacheOffset + kTrafficL1 && i <= kCacheOffset + kTrafficL3) return true;
    if (i >= kBufferOffset && i < kIntensityOffset) {
      int k = (i - kBufferOffset) % kFeaturesPerBuffer;
      return k == kBytes || k == kUniqueBytes || k == kLines || k == kUniqueLines;
    }
    return false;
  }
  // Flags (0/1) and fractions: not log-scaled.
  static bool is_unscaled(int i) {
    if (i == kLoopOffset + kIsAccumulate || i == kLoopOffset + kPredicated || i == kAllocOffset + 3) return true;
    if (i >= kGpuOffset && i < kGpuOffset + kGpuFeatures) return gpu_feature_is_unscaled(i - kGpuOffset);
    if (i >= kBufferOffset && i < kIntensityOffset) {
      int k = (i - kBufferOffset) % kFeaturesPerBuffer;
      return k == kPresent || k == kIsRead || k == kIsWrite || k == kIsLocal;
    }
    return false;
  }

  int loop_depth(const VarNode* v) const {
    for (int i = int(loops_.size()) - 1; i >= 0; --i)
      if (loops_[i].var == v) return i;
    return -1;
  }

  // Adds scale * (coefficient of each loop var in e) into c; sets *nonlin for non-affine parts (their
  // variables still count as dependencies). Ramp strides go to the lane pseudo-loop c[loops_.size()].
  void coeffs(const Expr& e, int64_t scale, std::vector<int64_t>& c, bool* nonlin) const {
    switch (e.kind()) {
      case ExprKind::IntImm:
      case ExprKind::FloatImm:
        return;
      case ExprKind::Var: {
        int d = loop_depth(static_cast<const VarNode*>(e.get()));
        if (d >= 0) c[d] += scale;
        return;
      }
      case ExprKind::Add: {
        auto* n = e.as<ir::Add>();
        coeffs(n->a, scale, c, nonlin);
        coeffs(n->b, scale, c, nonlin);
        return;
      }
      case ExprKind::Sub: {
        auto* n = e.as<ir::Sub>();
        coeffs(n->a, scale, c, nonlin);
        coeffs(n->b, -scale, c, nonlin);
        return;
      }
      case ExprKind::Mul: {
        auto* n = e.as<ir::Mul>();
        if (const int64_t* k = as_const_int(n->b)) return coeffs(n->a, scale * *k, c, nonlin);
        if (const int64_t* k = as_const_int(n->a)) return coeffs(n->b, scale * *k, c, nonlin);
        break;
      }
      case ExprKind::Div: {
        auto* n = e.as<ir::Div>();
        *nonlin = true;
        const int64_t* k = as_const_int(n->b);
        int64_t s = k && *k != 0 ? scale / *k : scale;
        return coeffs(n->a, s != 0 ? s : (scale >= 0 ? 1 : -1), c, nonlin);
      }
      case ExprKind::Ramp: {
        auto* n = e.as<ir::Ramp>();
        coeffs(n->base, scale, c, nonlin);
        const int64_t* s = as_const_int(n->stride);
        c[loops_.size()] += scale * (s ? *s : 1);
        if (!s) *nonlin = true;
        return;
      }
      case ExprKind::Broadcast:
        return coeffs(e.as<ir::Broadcast>()->value, scale, c, nonlin);
      default:
        break;
    }
    // Anything else (mod, min/max, select, loads, lets): dependencies only.
    *nonlin = true;
    post_order_visit(e, [&](const Expr& x) {
      if (auto* v = x.as<VarNode>()) {
        int d = loop_depth(v);
        if (d >= 0 && c[d] == 0) c[d] = scale;
      }
    });
  }

  bool in_thread_x() const {
    for (auto& l : loops_)
      if (l.kind == ForKind::kThreadIdxX) return true;
    return false;
  }

  // Elements between the index e at neighbouring values of the loops selected by is_var (a threadIdx.x:
  // neighbouring threads of a warp): unlike coeffs, a division by a constant larger than the step keeps
  // the quotient (0) and a modulo keeps the step. Other non-affine uses of those loops count as 32 apart.
  template <class IsVar>
  int64_t local_stride(const Expr& e, IsVar is_var) const {
    auto selected = [&](const VarNode* v) {
      int d = loop_depth(v);
      return d >= 0 && is_var(loops_[size_t(d)]);
    };
    switch (e.kind()) {
      case ExprKind::Var:
        return selected(static_cast<const VarNode*>(e.get())) ? 1 : 0;
      case ExprKind::IntImm:
        return 0;
      case ExprKind::Add:
        return local_stride(e.as<ir::Add>()->a, is_var) + local_stride(e.as<ir::Add>()->b, is_var);
      case ExprKind::Sub:
        return local_stride(e.as<ir::Sub>()->a, is_var) - local_stride(e.as<ir::Sub>()->b, is_var);
      case ExprKind::Mul: {
        auto* m = e.as<ir::Mul>();
        if (const int64_t* k = as_const_int(m->b)) return local_stride(m->a, is_var) * *k;
        if (const int64_t* k = as_const_int(m->a)) return local_stride(m->b, is_var) * *k;
        break;
      }
      case ExprKind::Div:
      case ExprKind::Mod: {
        auto [a, b] = operands(e);
        const int64_t* k = as_const_int(*b);
        if (!k || *k == 0) break;
        int64_t step = local_stride(*a, is_var);
        if (e.kind() == ExprKind::Mod) return step % *k;
        return std::llabs(step) < std::llabs(*k) ? 0 : step / *k;
      }
      case ExprKind::Ramp:
        return local_stride(e.as<ir::Ramp>()->base, is_var);
      case ExprKind::Broadcast:
        return local_stride(e.as<ir::Broadcast>()->value, is_var);
      default:
        break;
    }
    bool uses = false;
    post_order_visit(e, [&](const Expr& x) {
      if (auto* v = x.as<VarNode>()) uses |= selected(v);
    });
    return uses ? 32 : 0;
  }

  // One access of `lanes` elements per execution: its coefficients give bytes, region, lines, reuse.
  void analyze_access(const BufferNode* b, const std::vector<Expr>& indices, int lanes, bool write) {
    size_t n = loops_.size();
    std::vector<int64_t> c(n + 1, 0);
    bool nonlin = false;
    // Multi-dimensional indices (BufferStore/BufferLoad) flattened row-major.
    int64_t dim_stride = 1;
    for (int d = int(indices.size()) - 1; d >= 0; --d) {
      coeffs(indices[d], dim_stride, c, &nonlin);
      const int64_t* ext = d < int(b->shape.size()) ? as_const_int(b->shape[d]) : nullptr;
      dim_stride *= ext ? *ext : 1;
    }
    // Effective loops: the loop stack plus the vector lanes as the innermost pseudo-loop.
    std::vector<double> ext(n + 1);
    for (size_t i = 0; i < n; ++i) ext[i] = loops_[i].extent;
    ext[n] = lanes;
    if (lanes <= 1) c[n] = 0;
    double eb = b->dtype.bytes_per_lane();
    double trip = 1;
    for (double x : ext) trip *= x;
    double elements = const_elements(*b);
    auto region = [&](size_t from) {  // distinct elements touched by loops [from, n]
      double prod = 1, span = 1;
      for (size_t i = from; i <= n; ++i)
        if (c[i] != 0) {
          prod *= ext[i];
          span += double(std::llabs(c[i])) * (ext[i] - 1);
        }
      double u = nonlin ? prod : std::min(prod, span);
      return elements > 0 ? std::min(u, elements) : u;
    };
    Access a;
    a.buffer = b;
    (write ? a.write : a.read) = true;
    a.bytes = trip * eb;
    double unique = region(0);
    a.unique_bytes = unique * eb;
    int inner = -1;  // innermost effective loop the index depends on
    for (int i = int(n); i >= 0; --i)
      if (c[i] != 0) {
        inner = i;
        break;
      }
    double step_bytes = inner >= 0 ? std::min(double(std::llabs(c[inner])) * eb, kCacheLine) : 0;
    if (inner < 0) {
      a.lines = 1;
    } else {
      double outer = 1;
      for (int i = 0; i < inner; ++i) outer *= ext[i];
      a.lines = outer * std::ceil(ext[inner] * step_bytes / kCacheLine);
    }
    double ul = step_bytes >= kCacheLine ? unique : std::ceil(a.unique_bytes / kCacheLine);
    a.unique_lines = std::min(a.lines, std::max(1.0, ul));
    a.stride = double(std::llabs(c[n] != 0 ? c[n] : (n > 0 ? c[n - 1] : 0)));
    a.level_bytes.resize(n + 1);
    for (size_t i = 0; i <= n; ++i) a.level_bytes[i] = region(i) * eb;
    if (in_thread_x()) {
      auto flat_stride = [&](auto is_var) {
        int64_t st = 0, dim = 1;
        for (int d = int(indices.size()) - 1; d >= 0; --d) {
          st += local_stride(indices[d], is_var) * dim;
          const int64_t* e = d < int(b->shape.size()) ? as_const_int(b->shape[d]) : nullptr;
          dim *= e ? *e : 1;
        }
        return st;
      };
      // Loops bound to threadIdx.x at several levels all read the same register.
      a.tx_stride = double(std::llabs(flat_stride([](const LoopInfo& l) { return l.kind == ForKind::kThreadIdxX; })));
      // Contiguous elements per thread: the lanes, or an innermost vectorized loop of unit stride.
      double width = std::max(1, lanes);
      const LoopInfo* inner = n > 0 ? &loops_[n - 1] : nullptr;
      if (inner && inner->kind == ForKind::kVectorized &&
          std::llabs(flat_stride([&](const LoopInfo& l) { return &l == inner; })) == 1)
        width = std::max(width, inner->extent);
      if (a.tx_stride > width) a.uncoalesced_bytes = a.bytes;
    }
    for (int i = int(n) - 1; i >= 0; --i)
      if (c[i] == 0 && ext[i] > 1) {
        a.reuse_ct = ext[i];
        a.reuse_dis_iter = 1;
        for (size_t j = size_t(i) + 1; j <= n; ++j) a.reuse_dis_iter *= ext[j];
        a.reuse_dis_bytes = region(size_t(i) + 1) * eb;
        a.reuse_loop = i;
        break;
      }
    merge(a);
  }

  void merge(const Access& a) {
    for (auto& m : accesses_)
      if (m.buffer == a.buffer) {
        m.read |= a.read;
        m.write |= a.write;
        m.bytes += a.bytes;
        m.unique_bytes = std::max(m.unique_bytes, a.unique_bytes);
        m.lines += a.lines;
        m.unique_lines = std::max(m.unique_lines, a.unique_lines);
        m.reuse_ct = std::max(m.reuse_ct, a.reuse_ct);
        m.reuse_dis_iter = std::max(m.reuse_dis_iter, a.reuse_dis_iter);
        m.reuse_dis_bytes = std::max(m.reuse_dis_bytes, a.reuse_dis_bytes);
        m.reuse_loop = std::max(m.reuse_loop, a.reuse_loop);
        m.tx_stride = std::max(m.tx_stride, a.tx_stride);
        m.uncoalesced_bytes += a.uncoalesced_bytes;
        for (size_t i = 0; i < m.level_bytes.size() && i < a.level_bytes.size(); ++i)
          m.level_bytes[i] = std::max(m.level_bytes[i], a.level_bytes[i]);
        return;
      }
    accesses_.push_back(a);
  }

  // Counts operations of e (per execution, vector lanes included) into ops_ and records its loads.
  void count_expr(const Expr& e) {
    const ExprNode* n = e.get();
    double lanes = n->dtype.lanes;
    bool fl = n->dtype.is_float();
    auto kids2 = [&](const Expr& a, const Expr& b) {
      count_expr(a);
      count_expr(b);
    };
    switch (n->kind) {
      case ExprKind::Add:
      case ExprKind::Sub: {
        auto [a, b] = operands(e);
        if (fl && (a->kind() == ExprKind::Mul || b->kind() == ExprKind::Mul)) ops_[kFloatMad] += lanes;
        ops_[fl ? kFloatAddSub : kIntAddSub] += lanes;
        return kids2(*a, *b);
      }
      case ExprKind::Mul: {
        auto* b = e.as<ir::Mul>();
        ops_[fl ? kFloatMul : kIntMul] += lanes;
        return kids2(b->a, b->b);
      }
      case ExprKind::Div:
      case ExprKind::Mod: {
        auto [a, b] = operands(e);
        ops_[fl ? kFloatDiv : kIntDivMod] += lanes;
        return kids2(*a, *b);
      }
      case ExprKind::Min:
      case ExprKind::Max:
      case ExprKind::EQ:
      case ExprKind::NE:
      case ExprKind::LT:
      case ExprKind::LE: {
        auto [a, b] = operands(e);
        ops_[a->dtype().is_float() ? kFloatCmp : kIntCmp] += lanes;
        return kids2(*a, *b);
      }
      case ExprKind::And:
      case ExprKind::Or: {
        auto [a, b] = operands(e);
        ops_[kBoolOp] += lanes;
        return kids2(*a, *b);
      }
      case ExprKind::Not:
        ops_[kBoolOp] += lanes;
        return count_expr(e.as<ir::Not>()->a);
      case ExprKind::Select: {
        auto* s = e.as<ir::Select>();
        ops_[kSelect] += lanes;
        count_expr(s->cond);
        return kids2(s->true_value, s->false_value);
      }
      case ExprKind::Cast:
        ops_[kCastOp] += lanes;
        return count_expr(e.as<ir::Cast>()->value);
      case ExprKind::Call: {
        auto* c = e.as<ir::Call>();
        if (c->op == Intrinsic::kIfThenElse)
          ops_[kSelect] += lanes;
        else if (c->op == Intrinsic::kFma)
          ops_[kFloatMad] += lanes, ops_[kFloatAddSub] += lanes, ops_[kFloatMul] += lanes;
        else if (c->op != Intrinsic::kPrefetch)
          ops_[fl ? kFloatMath : kIntMul] += lanes;
        for (auto& a : c->args) count_expr(a);
        return;
      }
      case ExprKind::Load: {
        auto* l = e.as<ir::Load>();
        ops_[kLoads] += lanes;
        if (l->buffer.get() == store_buffer_) accumulate_ = true;
        analyze_access(l->buffer.get(), {l->index}, int(lanes), false);
        count_expr(l->index);
        if (l->predicate.defined()) count_expr(l->predicate);
        return;
      }
      case ExprKind::BufferLoad: {
        auto* l = e.as<ir::BufferLoad>();
        ops_[kLoads] += lanes;
        if (l->buffer.get() == store_buffer_) accumulate_ = true;
        analyze_access(l->buffer.get(), l->indices, int(lanes), false);
        for (auto& i : l->indices) count_expr(i);
        return;
      }
      case ExprKind::Ramp: {
        auto* r = e.as<ir::Ramp>();
        ops_[kIntAddSub] += lanes;  // base + lane * stride
        return kids2(r->base, r->stride);
      }
      case ExprKind::Broadcast:
        return count_expr(e.as<ir::Broadcast>()->value);
      case ExprKind::Let: {
        auto* l = e.as<ir::Let>();
        return kids2(l->value, l->body);
      }
      default:
        return;  // constants, variables (TensorRead/Reduce do not survive lowering)
    }
  }

  void add_row(const BufferNode* buf, const Expr& value, const std::vector<Expr>& indices, bool predicated) {
    std::fill(std::begin(ops_), std::end(ops_), 0.0);
    accesses_.clear();
    store_buffer_ = buf;
    accumulate_ = false;
    int lanes = value.dtype().lanes;
    count_expr(value);
    for (auto& i : indices) count_expr(i);
    analyze_access(buf, indices, lanes, true);

    std::vector<float> r(kFeatureLength, 0.0f);
    double trip = 1;
    for (auto& l : loops_) trip *= l.extent;
    for (int i = 0; i < kComputeCount; ++i) r[kComputeOffset + i] = float(ops_[i] * trip);

    float* L = &r[kLoopOffset];
    int depth = int(loops_.size());
    L[kNumLoops] = float(depth);
    L[kOuterProd] = float(trip * lanes);
    L[kInnerExtent] = depth ? float(loops_.back().extent) : 1.0f;
    double vec_prod = 1, unroll_prod = 1, par_prod = 1;
    for (int i = 0; i < depth; ++i) {
      const LoopInfo& l = loops_[i];
      switch (l.kind) {
        case ForKind::kSerial:
          L[kSerialNum] += 1;
          break;
        case ForKind::kVectorized:
          L[kVecNum] += 1, vec_prod *= l.extent, L[kVecLen] = float(l.extent), L[kVecPos] = float(depth - 1 - i);
          break;
        case ForKind::kUnrolled:
          L[kUnrollNum] += 1, unroll_prod *= l.extent, L[kUnrollLen] = float(l.extent);
          L[kUnrollPos] = float(depth - 1 - i);
          break;
        default:  // loops bound to GPU blocks/threads also count as parallel loops (and have the GPU group)
        case ForKind::kParallel:
          if (L[kParNum] == 0) L[kParLen] = float(l.extent), L[kParPos] = float(i);
          L[kParNum] += 1, par_prod *= l.extent;
          break;
      }
    }
    if (lanes > 1) L[kVecNum] += 1, vec_prod *= lanes, L[kVecLen] = float(lanes), L[kVecPos] = 0;
    // Loops the unroll pass will copy out under pragma_auto_unroll_max_step (innermost serial loops whose
    // unrolled size, vector loops counting as one statement, stays within the step) count as unrolled.
    if (!auto_unroll_.empty()) {
      auto [max_step, from] = auto_unroll_.back();
      double steps = 1;
      for (int i = depth - 1; i >= int(from); --i) {
        const LoopInfo& l = loops_[i];
        if (l.kind == ForKind::kVectorized) continue;
        if (l.kind == ForKind::kUnrolled) {
          steps *= l.extent;
          continue;
        }
        if (l.kind != ForKind::kSerial || steps * l.extent > max_step) break;
        steps *= l.extent;
        if (L[kUnrollNum] == 0) L[kUnrollLen] = float(l.extent), L[kUnrollPos] = float(depth - 1 - i);
        L[kUnrollNum] += 1, unroll_prod *= l.extent;
      }
    }
    L[kVecProd] = L[kVecNum] > 0 ? float(vec_prod) : 0.0f;
    L[kUnrollProd] = L[kUnrollNum] > 0 ? float(unroll_prod) : 0.0f;
    L[kParProd] = L[kParNum] > 0 ? float(par_prod) : 0.0f;
    L[kAutoUnroll] = auto_unroll_.empty() ? 0.0f : float(auto_unroll_.back().first);
    L[kIsAccumulate] = accumulate_ ? 1.0f : 0.0f;
    L[kGuards] = float(guards_);
    L[kPredicated] = predicated ? 1.0f : 0.0f;

    std::sort(accesses_.begin(), accesses_.end(), [](const Access& a, const Access& b) {
      if (a.bytes != b.bytes) return a.bytes > b.bytes;
      return a.buffer->name < b.buffer->name;  // deterministic slots on ties
    });
    double total_bytes = 0, total_unique = 0;
    for (auto& a : accesses_) total_bytes += a.bytes, total_unique += a.unique_bytes;
    for (int s = 0; s < kFeatureBufferSlots && s < int(accesses_.size()); ++s) {
      const Access& a = accesses_[s];
      float* B = &r[kBufferOffset + s * kFeaturesPerBuffer];
      B[kPresent] = 1;
      B[kIsRead] = a.read;
      B[kIsWrite] = a.write;
      B[kBytes] = float(a.bytes);
      B[kUniqueBytes] = float(a.unique_bytes);
      B[kLines] = float(a.lines);
      B[kUniqueLines] = float(a.unique_lines);
      B[kReuseCt] = float(a.reuse_ct);
      B[kReuseDisIter] = float(a.reuse_dis_iter);
      B[kReuseDisBytes] = float(a.reuse_dis_bytes);
      B[kStride] = float(a.stride);
      B[kIsLocal] = a.buffer->scope != MemScope::kGlobal;
    }
    double flops = (ops_[kFloatAddSub] + ops_[kFloatMul] + ops_[kFloatDiv] + ops_[kFloatMath] + ops_[kFloatCmp]) * trip;
    r[kIntensityOffset + 0] = float(flops / std::max(1.0, total_bytes));
    r[kIntensityOffset + 1] = float(flops / std::max(1.0, total_unique));
    r[kIntensityOffset + 2] = float(flops);
    double alloc_bytes = 0;
    for (auto* b : allocs_) alloc_bytes += std::max(0.0, const_elements(*b)) * b->dtype.bytes_per_lane();
    r[kAllocOffset + 0] = float(allocs_.size());
    r[kAllocOffset + 1] = float(alloc_bytes);
    r[kAllocOffset + 2] = float(std::max(0.0, const_elements(*buf)) * buf->dtype.bytes_per_lane());
    r[kAllocOffset + 3] = buf->scope != MemScope::kGlobal ? 1.0f : 0.0f;
    intensity_curve(flops / std::max(1.0, trip), &r[kCurveOffset]);
    cache_features(buf, flops / std::max(1.0, trip), &r[kCacheOffset]);
    gpu_store_features(*buf, lanes, &r[kGpuOffset]);
    rows.push_back(std::move(r));
  }

  // Bytes moved into a cache of each capacity: the accesses inside the outermost loop level whose distinct
  // bytes fit are loaded once per execution of that level (a capacity model without conflicts or
  // sharing between stores). Then the accumulator: the distinct bytes of the stored buffer inside the
  // innermost loop its index does not depend on (the register or local tile the reduction keeps), and
  // the FLOPs per distinct byte inside one iteration of that loop (loads per FMA of the micro-kernel).
  void cache_features(const BufferNode* buf, double flops_per_iter, float* out) const {
    size_t n = loops_.size();
    std::vector<double> fp(n + 1, 0.0), execs(n + 1, 1.0);
    for (auto& a : accesses_)
      for (size_t i = 0; i <= n && i < a.level_bytes.size(); ++i) fp[i] += a.level_bytes[i];
    for (size_t i = 1; i <= n; ++i) execs[i] = execs[i - 1] * loops_[i - 1].extent;
    for (int c = 0; c < 3; ++c) {
      size_t i = 0;
      while (i < n && fp[i] > kCacheBytes[c]) ++i;
      out[kTrafficL1 + c] = float(execs[i] * fp[i]);
    }
    for (auto& a : accesses_) {
      if (a.buffer != buf || a.reuse_loop < 0) continue;
      size_t in = size_t(a.reuse_loop) + 1;
      double f = flops_per_iter;
      for (size_t i = in; i < n; ++i) f *= loops_[i].extent;
      out[kAccTileBytes] = float(a.reuse_dis_bytes);
      out[kTileIntensity] = float(f / std::max(1.0, fp[in]));
    }
  }

  // The per-store part of the GPU group (raw; finish adds the program's launch or zeroes the group).
  void gpu_store_features(const BufferNode& buf, int lanes, float* g) {
    g[kGpuStoreShared] = buf.scope == MemScope::kShared;
    g[kGpuStoreLocal] = buf.scope == MemScope::kLocal;
    g[kGpuStoreGlobal] = buf.scope == MemScope::kGlobal;
    (buf.scope == MemScope::kShared ? fetch_stores_ : compute_stores_) += 1;
    std::array<double, 3> threads{-1, -1, -1};  // per dimension the innermost (shortest) enclosing thread loop
    double work = lanes;
    for (auto& l : loops_) {
      if (is_thread_bound(l.kind)) threads[size_t(gpu_dim(l.kind))] = l.extent;
      if (!is_gpu_bound(l.kind)) work *= l.extent;
    }
    row_threads_.push_back(threads);
    g[kGpuWorkPerThread] = float(work);
    double global_bytes = 0, uncoalesced = 0;
    for (auto& a : accesses_) {
      if (a.buffer->scope == MemScope::kShared) {
        g[kGpuSharedTxStride] = std::max(g[kGpuSharedTxStride], float(a.tx_stride));
      } else if (a.buffer->scope == MemScope::kGlobal) {
        g[kGpuGlobalTxStride] = std::max(g[kGpuGlobalTxStride], float(a.tx_stride));
        global_bytes += a.bytes, uncoalesced += a.uncoalesced_bytes;
      }
    }
    g[kGpuUncoalesced] = global_bytes > 0 ? float(uncoalesced / global_bytes) : 0.0f;
  }

  // FLOPs over unique bytes inside each loop level (innermost first), sampled at kCurvePoints evenly
  // spaced log2(FLOPs) by linear interpolation. flops_per_iter: FLOPs of one execution of the store.
  void intensity_curve(double flops_per_iter, float* out) const {
    size_t n = loops_.size();
    std::vector<double> x, y;  // per level, innermost (i = n: the statement itself) to outermost (0)
    double f = flops_per_iter;
    for (int i = int(n); i >= 0; --i) {
      if (i < int(n)) f *= loops_[size_t(i)].extent;
      double bytes = 0;
      for (auto& a : accesses_) bytes += size_t(i) < a.level_bytes.size() ? a.level_bytes[size_t(i)] : 0;
      x.push_back(std::log2(1 + f));
      y.push_back(f / std::max(1.0, bytes));
    }
    for (int k = 0; k < kCurvePoints; ++k) {
      double t = x.front() + (x.back() - x.front()) * k / (kCurvePoints - 1);
      size_t j = 0;
      while (j + 1 < x.size() && x[j + 1] < t) ++j;
      double v = y[j];
      if (j + 1 < x.size() && x[j + 1] > x[j]) v = y[j] + (y[j + 1] - y[j]) * std::min(1.0, (t - x[j]) / (x[j + 1] - x[j]));
      out[k] = float(v);
    }
  }

  std::vector<LoopInfo> loops_;
  std::vector<std::pair<double, size_t>> auto_unroll_;  // (max step, loop depth at the pragma)
  std::vector<const BufferNode*> allocs_;
  int guards_ = 0;
  int num_loops_total_ = 0;
  double ops_[kComputeCount] = {};
  std::vector<Access> accesses_;
  const BufferNode* store_buffer_ = nullptr;
  bool accumulate_ = false;
  // GPU: any loop bound to blockIdx/threadIdx, the launch shape and memory, store counts by kind, and per row
  // the extents of the enclosing thread loops (-1: none in that dimension).
  bool gpu_ = false;
  lower::GpuLaunch launch_;
  bool pipelined_ = false;
  int fetch_stores_ = 0, compute_stores_ = 0;
  std::vector<std::array<double, 3>> row_threads_;
};

}  // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (auto* s : kComputeNames) n.push_back(s);
    for (auto* s : kLoopNames) n.push_back(s);
    for (int b = 0; b < kFeatureBufferSlots; ++b)
      for (auto* s : kBufNames) n.push_back("buf" + std::to_string(b) + "." + s);
    for (auto* s : kTailNames) n.push_back(s);
    for (int k = 0; k < kCurvePoints; ++k) n.push_back("ai_curve" + std::to_string(k));
    for (auto* s : kGpuFeatureNames) n.push_back(s);
    for (auto* s : kCacheNames) n.push_back(s);
    TESSEL_ICHECK(int(n.size()) == kFeatureLength) << n.size();
    return n;
  }();
  return names;
}

std::vector<std::vector<float>> extract_features(const ir::LoweredFunc& f) {
  FeatureVisitor v;
  if (f.body.defined()) v.visit(f.body);
  v.finish();
  return std::move(v.rows);
}

ir::LoweredFunc extraction_ir(const workload::Workload& w, const std::vector<schedule::Step>& trace) {
  schedule::Schedule s(w.outputs);
  Status st = s.apply_all(trace);
  TESSEL_CHECK(st.is_ok()) << "cannot extract features of workload " << w.name << ": " << st.message();
  ir::LoweredFunc f;
  f.name = "features";
  ir::Stmt body = lower::build_loop_nest(s, w.args(), &f.params);
  body = ir::simplify(body);
  body = lower::storage_flatten(body);
  f.body = ir::simplify(body);
  return f;
}

std::vector<std::vector<float>> extract_features(const workload::Workload& w,
                                                 const std::vector<schedule::Step>& trace) {
  try {
    return extract_features(extraction_ir(w, trace));
  } catch (const std::exception&) {
    return {};  // invalid schedule: the models score it last
  }
}

double cache_traffic_per_flop(const std::vector<std::vector<float>>& rows, int level) {
  TESSEL_ICHECK(level >= 0 && level < 3) << "cache level " << level;
  double bytes = 0;
  for (auto& r : rows)
    if (r.size() == size_t(kFeatureLength))
      bytes += (std::exp2(double(r[size_t(kCacheOffset + kTrafficL1 + level)])) - 1.0) / kPerFlopScale;
  return bytes;
}

std::vector<float> sum_features(const std::vector<std::vector<float>>& rows) {
  std::vector<float> s(kFeatureLength, 0.0f);
  for (auto& r : rows)
    for (int i = 0; i < kFeatureLength && i < int(r.size()); ++i) s[i] += r[i];
  return s;
}

}  // namespace tessel::costmodel
