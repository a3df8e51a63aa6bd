// .te programs -> tensor expressions. Guide:
//   parse_te           lex -> parse_syntax -> Builder::run
//   Builder::run       statement by statement: constants, inputs, computes; then the outputs
//   Builder::compute   names, extents (declared or inferred from direct uses), bounds, te::compute
//   Builder::build     one expression: names resolved, types unified, literals folded, te/ir nodes built
// Literals stay untyped (Value::kInt / kFloat) until an operand, a declaration or a context gives them
// a type ("a literal adopts the other operand's type"), so `A[i] * 0.5` with A float64 keeps 0.5 exact.
// UserErrors from te/ir constructors are rethrown as ParseErrors at the construct being built.
#include "tessel/te/parser.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "parser_internal.h"
#include "tessel/ir/op.h"

namespace tessel::te {

ParseError::ParseError(const std::string& file, int line, int column, const std::string& message)
    : UserError(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": error: " + message),
      file_(file),
      line_(line),
      column_(column),
      message_(message) {}

namespace parse {
namespace {

using ir::DataType;

/** An expression being built: a typed Expr, or a literal whose type is not decided yet. */
struct Value {
  enum Kind { kExpr, kInt, kFloat } kind = kExpr;
  Expr e;
  int64_t i = 0;
  double f = 0;
  bool literal() const { return kind != kExpr; }
  static Value of(Expr x) {
    Value v;
    v.e = std::move(x);
    return v;
  }
  static Value int_lit(int64_t x) {
    Value v;
    v.kind = kInt;
    v.i = x;
    return v;
  }
  static Value float_lit(double x) {
    Value v;
    v.kind = kFloat;
    v.f = x;
    return v;
  }
};

std::string float_text(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.9g", d);
  return buf;
}
std::string lit_text(const Value& v) { return v.kind == Value::kInt ? std::to_string(v.i) : float_text(v.f); }

bool fits(DataType t, int64_t v) {
  if (t.is_int()) {
    if (t.bits >= 64) return true;
    int64_t lim = int64_t(1) << (t.bits - 1);
    return v >= -lim && v < lim;
  }
  if (t.is_uint()) {
    if (v < 0) return false;
    return t.bits >= 64 || v < (int64_t(1) << t.bits);
  }
  return false;
}

double max_finite(DataType t) {
  if (t.code == DataType::kBFloat) return 3.3895313892515355e38;
  if (t.bits == 16) return 65504.0;
  if (t.bits == 32) return double(std::numeric_limits<float>::max());
  return std::numeric_limits<double>::max();
}

struct TensorInfo {
  Tensor t;
  Loc loc;
  bool is_input = false;
  bool read = false;
  bool output = false;
  int chain = 0;  // expression depth summed along the longest chain of statements ending here
};

/** A direct use of an index variable as one index of a tensor: A[i, k] uses i in dimension 0. */
struct Use {
  std::string var;
  int64_t extent;  // of that dimension
  std::string tensor;
  size_t dim;
  Loc loc;
  bool guarded;  // inside an if_then_else branch or a reduction with `where`: not bounds-checked
};

struct Scope {
  std::map<std::string, Var> vars;  // index variables and reduction axes
  const std::string* self = nullptr;  // the tensor being defined
  const char* constant_context = nullptr;  // non-null: only constants allowed (what is being evaluated)
  int chain = 0;  // max chain depth of tensors read
};

class Builder {
 public:
  explicit Builder(const std::string& file) : file_(file) {}

  TeProgram run(const Program& prog) {
    for (const Statement& s : prog.statements) {
      if (s.kind == Statement::Kind::kConst) {
        define_const(s);
      } else if (s.kind == Statement::Kind::kInput) {
        define_input(s);
      } else {
        compute(s);
      }
    }
    if (computes_.empty())
      err(prog.end, "the program computes nothing (expected a statement such as C[i] = A[i] + 1)");
    TeProgram p;
    for (auto& name : inputs_) {
      const TensorInfo& ti = tensors_.at(name);
      if (!ti.read) err(ti.loc, "input " + name + " is never read");
      p.inputs.push_back(ti.t);
    }
    for (auto& name : computes_) {
      const TensorInfo& ti = tensors_.at(name);
      if (ti.output || !ti.read) p.outputs.push_back(ti.t);
    }
    return p;
  }

 private:
  [[noreturn]] void err(Loc l, const std::string& m) const { fail(file_, l, m); }

  /** Runs f (which builds te/ir nodes); a UserError it throws becomes a ParseError at l. */
  template <class F>
  auto guarded(Loc l, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const ParseError&) {
      throw;
    } catch (const UserError& e) {
      err(l, e.what());
    }
  }

  void check_new_name(const std::string& name, Loc l, const char* what) {
    auto it = defined_.find(name);
    if (it != defined_.end())
      err(l, std::string(what) + " '" + name + "' is already defined (line " + std::to_string(it->second.line) + ")");
  }

  // ---- constants, inputs, shapes --------------------------------------------------------------------

  void define_const(const Statement& s) {
    check_new_name(s.name, s.name_loc, "constant");
    Scope sc;
    sc.constant_context = "a constant";
    Value v = build(*s.value, sc);
    if (!v.literal()) err(s.value->loc, "const " + s.name + " must be a constant number");
    consts_[s.name] = v;
    defined_[s.name] = s.name_loc;
  }

  /** Evaluates a constant integer expression (shape extent, range bound). */
  int64_t const_int(const Ast& a, const char* what) {
    Scope sc;
    sc.constant_context = what;
    Value v = build(a, sc);
    if (v.kind == Value::kFloat) err(a.loc, std::string(what) + " must be an integer, got " + lit_text(v));
    if (v.kind != Value::kInt) err(a.loc, std::string(what) + " must be a constant integer");
    return v.i;
  }

  std::vector<int64_t> shape_of(const Statement& s) {
    if (int(s.shape.size()) > kMaxDims)
      err(s.shape[kMaxDims]->loc, "too many dimensions (the limit is " + std::to_string(kMaxDims) + ")");
    std::vector<int64_t> ext;
    int64_t total = 1;
    for (size_t d = 0; d < s.shape.size(); ++d) {
      int64_t e = const_int(*s.shape[d], "a shape extent");
      if (e <= 0)
        err(s.shape[d]->loc, "extent of dimension " + std::to_string(d) + " of " + s.name + " must be > 0, got " +
                                  std::to_string(e));
      if (e > kMaxElements / total)
        err(s.shape[d]->loc, "tensor " + s.name + " is too large (more than " + std::to_string(kMaxElements) +
                                  " elements)");
      total *= e;
      ext.push_back(e);
    }
    return ext;
  }

  static std::vector<Expr> shape_exprs(const std::vector<int64_t>& ext) {
    std::vector<Expr> v;
    for (int64_t e : ext) v.push_back(ir::IntImm::make(DataType::int32(), e));
    return v;
  }

  void define_input(const Statement& s) {
    check_new_name(s.name, s.name_loc, "tensor");
    std::vector<int64_t> ext = shape_of(s);
    TensorInfo ti;
    ti.t = guarded(s.loc, [&] { return placeholder(shape_exprs(ext), s.dtype, s.name); });
    ti.loc = s.name_loc;
    ti.is_input = true;
    tensors_[s.name] = ti;
    defined_[s.name] = s.name_loc;
    inputs_.push_back(s.name);
  }

  // ---- compute statements -----------------------------------------------------------------------------

  /** Records direct uses of `vars` as tensor indices inside a (walking the tree). */
  void collect_uses(const Ast& a, const std::map<std::string, bool>& vars, bool guarded_ctx, const std::string& self,
                    std::vector<Use>* uses) {
    if (a.kind == Ast::Kind::kRead) {
      const auto& shape = check_read(a, self, vars)->second.t.shape();
      for (size_t d = 0; d < a.args.size(); ++d) {
        const Ast& ix = *a.args[d];
        if (ix.kind == Ast::Kind::kName && vars.count(ix.name))
          uses->push_back({ix.name, *ir::as_const_int(shape[d]), a.name, d, ix.loc, guarded_ctx});
      }
    }
    bool ite = a.kind == Ast::Kind::kCall && a.name == "if_then_else";
    for (size_t c = 0; c < a.args.size(); ++c) {
      bool g = guarded_ctx || (ite && c > 0) || (a.kind == Ast::Kind::kReduce && a.where);
      collect_uses(*a.args[c], vars, g, self, uses);
    }
    if (a.where) collect_uses(*a.where, vars, guarded_ctx, self, uses);
  }

  /** The tensor a read names, with the errors a read can have before its indices are built. */
  std::map<std::string, TensorInfo>::iterator check_read(const Ast& a, const std::string& self,
                                                         const std::map<std::string, bool>& vars) {
    if (a.name == self)
      err(a.loc, "tensor " + a.name + " cannot read itself (a statement reads only tensors defined before it)");
    auto it = tensors_.find(a.name);
    if (it == tensors_.end()) {
      if (consts_.count(a.name) || vars.count(a.name)) err(a.loc, "'" + a.name + "' is not a tensor");
      err(a.loc, "unknown tensor '" + a.name + "'");
    }
    if (it->second.t.ndim() != a.args.size())
      err(a.loc, "tensor " + a.name + " has " + std::to_string(it->second.t.ndim()) +
                     " dimensions but is indexed with " + std::to_string(a.args.size()));
    return it;
  }

  /** The extent of `var` from its direct uses; errors when there is none or they disagree. */
  int64_t infer_extent(const std::string& var, Loc l, const std::vector<Use>& uses, const std::string& none_msg) {
    const Use* first = nullptr;
    for (const Use& u : uses) {
      if (u.var != var) continue;
      if (!first) {
        first = &u;
      } else if (u.extent != first->extent) {
        err(u.loc, "conflicting extents for index '" + var + "': " + std::to_string(first->extent) + " (dimension " +
                       std::to_string(first->dim) + " of " + first->tensor + ") vs " + std::to_string(u.extent) +
                       " (dimension " + std::to_string(u.dim) + " of " + u.tensor + "); declare the range");
      }
    }
    if (!first) err(l, none_msg);
    return first->extent;
  }

  /** An index used directly must stay inside the dimension it indexes. */
  void check_bounds(const std::string& var, int64_t lo, int64_t hi, const std::vector<Use>& uses) {
    for (const Use& u : uses) {
      if (u.var != var || u.guarded) continue;
      if (lo < 0 || hi > u.extent)
        err(u.loc, "index '" + var + "' ranges over " + std::to_string(lo) + ".." + std::to_string(hi) +
                       " but dimension " + std::to_string(u.dim) + " of " + u.tensor + " has extent " +
                       std::to_string(u.extent));
    }
  }

  /** Reports a reduction anywhere below the top of a statement's body. */
  void check_no_nested_reduce(const Ast& a) {
    for (auto& c : a.args) {
      if (c->kind == Ast::Kind::kReduce)
        err(c->loc, "a reduction (" + c->name +
                        ") must be the whole right-hand side of a statement; compute it as its own tensor");
      check_no_nested_reduce(*c);
    }
    if (a.where) check_no_nested_reduce(*a.where);
    for (auto& ax : a.axes) {
      if (ax.lo) check_no_nested_reduce(*ax.lo);
      if (ax.hi) check_no_nested_reduce(*ax.hi);
    }
  }

  void compute(const Statement& s) {
    check_new_name(s.name, s.name_loc, "tensor");
    if (int(s.indices.size()) > kMaxDims)
      err(s.index_locs[kMaxDims], "too many dimensions (the limit is " + std::to_string(kMaxDims) + ")");
    std::map<std::string, bool> vars;  // LHS indices and reduction axes
    for (size_t d = 0; d < s.indices.size(); ++d) {
      const std::string& n = s.indices[d];
      if (vars.count(n)) err(s.index_locs[d], "index '" + n + "' appears twice on the left-hand side");
      if (defined_.count(n) || n == s.name)
        err(s.index_locs[d], "index '" + n + "' has the name of a tensor or constant; choose another name");
      vars[n] = true;
    }
    const Ast& body = *s.value;
    const Ast* red = body.kind == Ast::Kind::kReduce ? &body : nullptr;
    check_no_nested_reduce(body);
    if (red) {
      for (auto& ax : red->axes) {
        if (vars.count(ax.name))
          err(ax.loc, "reduction axis '" + ax.name + "' has the name of another index; choose another name");
        if (defined_.count(ax.name) || ax.name == s.name)
          err(ax.loc, "reduction axis '" + ax.name + "' has the name of a tensor or constant; choose another name");
        vars[ax.name] = false;
      }
    }
    std::vector<Use> uses;
    collect_uses(body, vars, false, s.name, &uses);

    // Output shape: declared, or inferred per index.
    std::vector<int64_t> ext;
    if (s.has_shape) {
      ext = shape_of(s);
      if (ext.size() != s.indices.size())
        err(s.shape.empty() ? s.type_loc : s.shape[0]->loc,
            "the declared shape of " + s.name + " has " + std::to_string(ext.size()) +
                " dimension(s) but the left-hand side names " + std::to_string(s.indices.size()) + " index(es)");
    } else {
      int64_t total = 1;
      for (size_t d = 0; d < s.indices.size(); ++d) {
        int64_t e = infer_extent(s.indices[d], s.index_locs[d], uses,
                                 "cannot infer the extent of index '" + s.indices[d] +
                                     "' (declare the output shape, e.g. " + s.name + "[...]: float32[...])");
        if (e > kMaxElements / total)
          err(s.name_loc, "tensor " + s.name + " is too large (more than " + std::to_string(kMaxElements) +
                              " elements)");
        total *= e;
        ext.push_back(e);
      }
    }
    for (size_t d = 0; d < s.indices.size(); ++d) check_bounds(s.indices[d], 0, ext[d], uses);

    // Reduction axes: explicit ranges or inferred.
    std::vector<IterVar> raxes;
    if (red) {
      for (auto& ax : red->axes) {
        int64_t lo = 0, hi = 0;
        if (ax.hi) {
          lo = const_int(*ax.lo, "a range bound");
          hi = const_int(*ax.hi, "a range bound");
          if (hi <= lo)
            err(ax.loc, "the range " + std::to_string(lo) + ".." + std::to_string(hi) + " of axis " + ax.name +
                            " is empty");
          if (lo < std::numeric_limits<int32_t>::min() || hi > kMaxElements)
            err(ax.loc, "the range of axis " + ax.name + " does not fit in int32");
        } else {
          hi = infer_extent(ax.name, ax.loc, uses,
                            "reduction axis " + ax.name +
                                " has no extent: use it to index a declared tensor or give " + red->name + "(..., " +
                                ax.name + ": 0..16)");
        }
        check_bounds(ax.name, lo, hi, uses);
        raxes.push_back(guarded(ax.loc, [&] {
          return reduce_axis(ir::IntImm::make(DataType::int32(), lo), ir::IntImm::make(DataType::int32(), hi - lo),
                             ax.name);
        }));
      }
    }

    Scope sc;
    sc.self = &s.name;
    for (auto& ax : raxes) sc.vars[ax->var.name()] = ax->var;
    TensorInfo ti;
    ti.t = guarded(s.name_loc, [&] {
      return te::compute(
          shape_exprs(ext),
          [&](const std::vector<Var>& v) {
            for (size_t d = 0; d < v.size(); ++d) sc.vars[s.indices[d]] = v[d];
            return red ? reduction(*red, raxes, s, sc) : top_value(body, s, sc);
          },
          s.name, s.indices);
    });
    if (s.has_type && ti.t.dtype() != s.dtype)
      err(body.loc, "type mismatch: " + s.name + " is declared " + s.dtype.to_string() + " but its value is " +
                        ti.t.dtype().to_string() + " (cast it: " + s.dtype.to_string() + "(...))");
    ti.loc = s.name_loc;
    ti.output = s.output;
    ti.chain = sc.chain + body.depth + 8;
    if (ti.chain > kMaxChainDepth)
      err(s.loc, "the computation is nested too deeply (statements reading statements, " + std::to_string(ti.chain) +
                     " levels with their expressions; the limit is " + std::to_string(kMaxChainDepth) + ")");
    tensors_[s.name] = ti;
    defined_[s.name] = s.name_loc;
    computes_.push_back(s.name);
  }

  /** The value of a statement body; a bare literal takes the declared type. */
  Expr top_value(const Ast& a, const Statement& s, Scope& sc) {
    Value v = build(a, sc);
    if (v.literal()) return s.has_type ? adopt(v, s.dtype, a.loc, "the value of " + s.name) : materialize(v, a.loc);
    return v.e;
  }

  Expr reduction(const Ast& r, const std::vector<IterVar>& axes, const Statement& s, Scope& sc) {
    Expr src = top_value(*r.args[0], s, sc);
    if (src.dtype().is_bool())
      err(r.args[0]->loc, r.name + " needs a numeric operand, got bool (cast it, e.g. int32(...))");
    Expr cond;
    if (r.where) {
      Value c = build(*r.where, sc);
      if (c.literal() || !c.e.dtype().is_bool())
        err(r.where->loc, "the 'where' condition of " + r.name + " must be bool, got " + type_text(c));
      cond = c.e;
    }
    return guarded(r.loc, [&] {
      if (r.name == "sum") return te::sum(src, axes, cond);
      if (r.name == "prod") return te::prod(src, axes, cond);
      if (r.name == "max_reduce") return te::reduce_max(src, axes, cond);
      return te::reduce_min(src, axes, cond);
    });
  }

  // ---- types -----------------------------------------------------------------------------------------

  static std::string type_text(const Value& v) {
    if (v.kind == Value::kInt) return "integer constant " + lit_text(v);
    if (v.kind == Value::kFloat) return "floating-point constant " + lit_text(v);
    return v.e.dtype().to_string();
  }

  /** Gives a literal the type t (range-checked); a typed value is returned as is. */
  Expr adopt(const Value& v, DataType t, Loc l, const std::string& ctx) {
    if (!v.literal()) return v.e;
    if (t.is_bool() || !t.is_scalar() || t.is_handle())
      err(l, "type mismatch: " + t.to_string() + " vs " + type_text(v) + " in " + ctx);
    if (t.is_float()) {
      double d = v.kind == Value::kInt ? double(v.i) : v.f;
      if (std::isfinite(d) && std::fabs(d) > max_finite(t))
        err(l, "constant " + lit_text(v) + " is out of range for " + t.to_string());
      return ir::FloatImm::make(t, d);
    }
    if (v.kind == Value::kFloat)
      err(l, "type mismatch: " + t.to_string() + " vs " + type_text(v) + " in " + ctx +
                 " (write an integer, or cast the other operand)");
    if (!fits(t, v.i)) err(l, "constant " + lit_text(v) + " does not fit in " + t.to_string());
    return ir::IntImm::make(t, v.i);
  }

  /** The type a literal takes when nothing else decides: int32 (int64 when needed) or float32. */
  static DataType default_type(const Value& v) {
    if (v.kind == Value::kFloat) return DataType::float32();
    return fits(DataType::int32(), v.i) ? DataType::int32() : DataType::int64();
  }
  Expr materialize(const Value& v, Loc l) { return adopt(v, default_type(v), l, "a constant"); }

  /** Brings operands to one type: typed operands must agree; literals adopt it. */
  std::vector<Expr> unify(const std::vector<Value>& vs, Loc l, const std::string& ctx, bool prefer_float = false) {
    const Value* typed = nullptr;
    for (const Value& v : vs) {
      if (v.literal()) continue;
      if (!typed) {
        typed = &v;
      } else if (v.e.dtype() != typed->e.dtype()) {
        err(l, "type mismatch: " + typed->e.dtype().to_string() + " vs " + v.e.dtype().to_string() + " in " + ctx +
                   " (insert a cast, e.g. " + typed->e.dtype().to_string() + "(...))");
      }
    }
    DataType t;
    if (typed) {
      t = typed->e.dtype();
    } else {
      bool any_float = false, all_int32 = true;
      for (const Value& v : vs) {
        any_float |= v.kind == Value::kFloat;
        all_int32 &= v.kind != Value::kInt || fits(DataType::int32(), v.i);
      }
      t = any_float || prefer_float ? DataType::float32() : all_int32 ? DataType::int32() : DataType::int64();
    }
    std::vector<Expr> out;
    for (const Value& v : vs) out.push_back(adopt(v, t, l, ctx));
    return out;
  }

  // ---- expressions -----------------------------------------------------------------------------------

  // build() is the only recursive function: it evaluates the operands in its own small frame and hands
  // them to out-of-line functions (check_node before, finish_* after), so deep expressions cost little
  // stack per level.
  Value build(const Ast& a, Scope& sc) {
    switch (a.kind) {
      case Ast::Kind::kInt: return Value::int_lit(a.ival);
      case Ast::Kind::kFloat: return Value::float_lit(a.fval);
      case Ast::Kind::kBool: return Value::of(ir::IntImm::make(DataType::boolean(), a.ival));
      case Ast::Kind::kName: return name(a, sc);
      case Ast::Kind::kReduce: nested_reduce(a);
      default: break;
    }
    check_node(a, sc);
    std::vector<Value> v;
    v.reserve(a.args.size());
    for (auto& c : a.args) v.push_back(build(*c, sc));
    return finish(a, v, sc);
  }

  [[noreturn, gnu::noinline]] void nested_reduce(const Ast& a) {
    err(a.loc, "a reduction (" + a.name +
                   ") must be the whole right-hand side of a statement; compute it as its own tensor");
  }

  [[gnu::noinline]] Value name(const Ast& a, Scope& sc) {
    auto c = consts_.find(a.name);
    if (c != consts_.end()) return c->second;
    if (sc.constant_context) {
      if (tensors_.count(a.name))
        err(a.loc, std::string(sc.constant_context) + " must be constant; '" + a.name + "' is a tensor");
      err(a.loc, "unknown constant '" + a.name + "' in " + sc.constant_context);
    }
    auto v = sc.vars.find(a.name);
    if (v != sc.vars.end()) return Value::of(v->second);
    if (tensors_.count(a.name) || (sc.self && *sc.self == a.name))
      err(a.loc, "tensor " + a.name + " must be indexed: " + a.name + "[...]");
    err(a.loc, "unknown name '" + a.name + "'");
  }

  /** Errors found before the operands are built: unknown tensors and functions, arity, constness. */
  [[gnu::noinline]] void check_node(const Ast& a, Scope& sc) {
    if (a.kind == Ast::Kind::kRead) {
      if (sc.constant_context)
        err(a.loc, std::string(sc.constant_context) + " must be constant; it cannot read tensor " + a.name);
      std::map<std::string, bool> vars;
      for (auto& v : sc.vars) vars[v.first] = true;
      check_read(a, sc.self ? *sc.self : std::string(), vars);
    } else if (a.kind == Ast::Kind::kCall) {
      const std::string& fn = a.name;
      ir::Intrinsic op;
      if (float_intrinsic(fn, &op)) {
        arity(a, op == ir::Intrinsic::kPow ? 2 : op == ir::Intrinsic::kFma ? 3 : 1);
      } else if (fn == "abs") {
        arity(a, 1);
      } else if (fn == "min" || fn == "max") {
        arity(a, 2, size_t(-1));
      } else if (fn == "select" || fn == "if_then_else") {
        arity(a, 3);
      } else {
        if (tensors_.count(fn)) err(a.loc, "tensor " + fn + " is indexed with [ ], not ( ): " + fn + "[...]");
        err(a.loc, "unknown function '" + fn +
                       "' (expected exp, log, sqrt, tanh, erf, sigmoid, pow, abs, floor, ceil, fma, min, max, "
                       "select, if_then_else, a type such as float32(x), or a reduction sum, prod, max_reduce, "
                       "min_reduce)");
      }
      if (sc.constant_context && fn != "min" && fn != "max")
        err(a.loc, std::string(sc.constant_context) + " must be constant; it cannot call " + fn);
    }
  }

  [[gnu::noinline]] Value finish(const Ast& a, const std::vector<Value>& v, Scope& sc) {
    switch (a.kind) {
      case Ast::Kind::kRead: return finish_read(a, v, sc);
      case Ast::Kind::kUnary: return finish_unary(a, v[0]);
      case Ast::Kind::kBinary: return finish_binary(a, v[0], v[1]);
      case Ast::Kind::kCall: return finish_call(a, v);
      case Ast::Kind::kCast: return finish_cast(a, v[0], sc);
      default: break;
    }
    err(a.loc, "internal: unexpected syntax node");
  }

  Value finish_read(const Ast& a, const std::vector<Value>& vals, Scope& sc) {
    TensorInfo& ti = tensors_.at(a.name);
    std::vector<Expr> idx;
    for (size_t d = 0; d < vals.size(); ++d) {
      const Value& v = vals[d];
      Loc l = a.args[d]->loc;
      if (v.literal()) {
        idx.push_back(adopt(v, DataType::int32(), l, "index " + std::to_string(d) + " of " + a.name));
      } else {
        if (!v.e.dtype().is_integer())
          err(l, "index " + std::to_string(d) + " of " + a.name + " must be an integer, got " +
                     v.e.dtype().to_string());
        idx.push_back(v.e);
      }
    }
    ti.read = true;
    sc.chain = std::max(sc.chain, ti.chain);
    return Value::of(guarded(a.loc, [&] { return ti.t(idx); }));
  }

  Value finish_unary(const Ast& a, const Value& v) {
    if (a.op == Tok::kMinus) {
      if (v.kind == Value::kInt) {
        if (v.i == std::numeric_limits<int64_t>::min()) err(a.loc, "integer overflow in a constant expression");
        return Value::int_lit(-v.i);
      }
      if (v.kind == Value::kFloat) return Value::float_lit(-v.f);
      if (v.e.dtype().is_bool()) err(a.loc, "unary '-' needs a number, got bool");
      return Value::of(guarded(a.loc, [&] { return -v.e; }));
    }
    if (v.literal() || !v.e.dtype().is_bool()) err(a.loc, "'!' needs a bool operand, got " + type_text(v));
    return Value::of(guarded(a.loc, [&] { return !v.e; }));
  }

  /** Folds + - * / % min max of two literals (integers exactly, with overflow checks). */
  Value fold(const std::string& op, const Value& a, const Value& b, Loc l) {
    if (a.kind == Value::kInt && b.kind == Value::kInt) {
      int64_t x = a.i, y = b.i, r = 0;
      bool ovf = false;
      if (op == "+") {
        ovf = __builtin_add_overflow(x, y, &r);
      } else if (op == "-") {
        ovf = __builtin_sub_overflow(x, y, &r);
      } else if (op == "*") {
        ovf = __builtin_mul_overflow(x, y, &r);
      } else if (op == "/" || op == "%") {
        if (y == 0) err(l, "integer division by zero");
        if (op == "/") {
          if (x == std::numeric_limits<int64_t>::min() && y == -1) {
            ovf = true;
          } else {
            r = x / y;
            if ((x % y != 0) && ((x < 0) != (y < 0))) --r;
          }
        } else {
          r = y == -1 ? 0 : x % y;
          if (r != 0 && ((r < 0) != (y < 0))) r += y;
        }
      } else if (op == "min") {
        r = std::min(x, y);
      } else {
        r = std::max(x, y);
      }
      if (ovf) err(l, "integer overflow in a constant expression");
      return Value::int_lit(r);
    }
    double x = a.kind == Value::kInt ? double(a.i) : a.f, y = b.kind == Value::kInt ? double(b.i) : b.f, r;
    if (op == "+") r = x + y;
    else if (op == "-") r = x - y;
    else if (op == "*") r = x * y;
    else if (op == "/") r = x / y;
    else if (op == "%") r = x - std::floor(x / y) * y;
    else if (op == "min") r = std::min(x, y);
    else r = std::max(x, y);
    if (std::isnan(r)) err(l, "the constant expression is not a number (NaN)");
    return Value::float_lit(r);
  }

  Value finish_binary(const Ast& a, const Value& x, const Value& y) {
    std::string op = tok_name(a.op);
    std::string sym = op.substr(1, op.size() - 2);  // '+' -> +
    bool arith = a.op == Tok::kPlus || a.op == Tok::kMinus || a.op == Tok::kStar || a.op == Tok::kSlash ||
                 a.op == Tok::kPercent;
    if (arith && x.literal() && y.literal()) return fold(sym, x, y, a.loc);
    if (a.op == Tok::kAndAnd || a.op == Tok::kOrOr) {
      for (const Value* v : {&x, &y})
        if (v->literal() || !v->e.dtype().is_bool()) err(a.loc, op + " needs bool operands, got " + type_text(*v));
    }
    std::vector<Expr> e = unify({x, y}, a.loc, op);
    DataType t = e[0].dtype();
    if (arith && t.is_bool()) err(a.loc, op + " needs numbers, got bool");
    if ((a.op == Tok::kSlash || a.op == Tok::kPercent) && t.is_integer()) {
      if (const int64_t* c = ir::as_const_int(e[1]); c && *c == 0) err(a.loc, "integer division by zero");
    }
    return Value::of(guarded(a.loc, [&]() -> Expr {
      switch (a.op) {
        case Tok::kPlus: return e[0] + e[1];
        case Tok::kMinus: return e[0] - e[1];
        case Tok::kStar: return e[0] * e[1];
        case Tok::kSlash: return e[0] / e[1];
        case Tok::kPercent: return e[0] % e[1];
        case Tok::kEq: return ir::eq(e[0], e[1]);
        case Tok::kNe: return ir::ne(e[0], e[1]);
        case Tok::kLt: return e[0] < e[1];
        case Tok::kLe: return e[0] <= e[1];
        case Tok::kGt: return e[0] > e[1];
        case Tok::kGe: return e[0] >= e[1];
        case Tok::kAndAnd: return e[0] && e[1];
        case Tok::kOrOr: return e[0] || e[1];
        default: break;
      }
      err(a.loc, "internal: unknown operator " + op);
    }));
  }

  static bool float_intrinsic(const std::string& fn, ir::Intrinsic* op) {
    static const std::map<std::string, ir::Intrinsic> fns = {
        {"exp", ir::Intrinsic::kExp},     {"log", ir::Intrinsic::kLog},   {"sqrt", ir::Intrinsic::kSqrt},
        {"tanh", ir::Intrinsic::kTanh},   {"erf", ir::Intrinsic::kErf},   {"sigmoid", ir::Intrinsic::kSigmoid},
        {"floor", ir::Intrinsic::kFloor}, {"ceil", ir::Intrinsic::kCeil}, {"pow", ir::Intrinsic::kPow},
        {"fma", ir::Intrinsic::kFma}};
    auto it = fns.find(fn);
    if (it == fns.end()) return false;
    *op = it->second;
    return true;
  }

  void arity(const Ast& a, size_t lo, size_t hi = 0) {
    if (hi == 0) hi = lo;
    size_t n = a.args.size();
    if (n >= lo && n <= hi) return;
    std::string want = lo == hi ? std::to_string(lo) : "at least " + std::to_string(lo);
    err(a.loc, a.name + " takes " + want + " argument" + (lo == 1 && hi == 1 ? "" : "s") + ", got " +
                   std::to_string(n));
  }

  Value finish_call(const Ast& a, const std::vector<Value>& args) {
    const std::string& fn = a.name;
    if (fn == "min" || fn == "max") {
      Value acc = args[0];
      for (size_t k = 1; k < args.size(); ++k) {
        const Value& b = args[k];
        if (acc.literal() && b.literal()) {
          acc = fold(fn, acc, b, a.loc);
          continue;
        }
        std::vector<Expr> e = unify({acc, b}, a.loc, fn);
        if (e[0].dtype().is_bool()) err(a.loc, fn + " needs numbers, got bool");
        acc = Value::of(guarded(a.loc, [&] { return fn == "min" ? ir::min(e[0], e[1]) : ir::max(e[0], e[1]); }));
      }
      return acc;
    }
    if (fn == "select" || fn == "if_then_else") {
      const Value& c = args[0];
      if (c.literal() || !c.e.dtype().is_bool())
        err(a.args[0]->loc, "the condition of " + fn + " must be bool, got " + type_text(c));
      std::vector<Expr> e = unify({args[1], args[2]}, a.loc, fn);
      return Value::of(guarded(a.loc, [&] {
        return fn == "select" ? ir::select(c.e, e[0], e[1]) : ir::if_then_else(c.e, e[0], e[1]);
      }));
    }
    if (fn == "abs") {
      Expr x = args[0].literal() ? materialize(args[0], a.args[0]->loc) : args[0].e;
      if (x.dtype().is_bool()) err(a.loc, "abs needs a number, got bool");
      return Value::of(guarded(a.loc, [&] { return ir::abs(x); }));
    }
    ir::Intrinsic op = ir::Intrinsic::kExp;
    float_intrinsic(fn, &op);
    std::vector<Expr> e = unify(args, a.loc, fn, /*prefer_float=*/true);
    if (!e[0].dtype().is_float())
      err(a.loc, fn + " needs float arguments, got " + e[0].dtype().to_string() + " (cast it: float32(...))");
    return Value::of(guarded(a.loc, [&]() -> Expr {
      if (op == ir::Intrinsic::kPow) return ir::pow(e[0], e[1]);
      if (op == ir::Intrinsic::kFma) return ir::fma(e[0], e[1], e[2]);
      return ir::Call::make(op, {e[0]});
    }));
  }

  /** T(x): a literal becomes a constant of type T (a cast folded); anything else a Cast node. */
  Value finish_cast(const Ast& a, const Value& v, Scope& sc) {
    DataType t = a.type;
    if (v.literal()) {
      if (sc.constant_context) err(a.loc, std::string(sc.constant_context) + " must be an untyped constant");
      if (t.is_bool()) {
        bool b = v.kind == Value::kInt ? v.i != 0 : v.f != 0;
        return Value::of(ir::IntImm::make(t, b));
      }
      if (t.is_float()) return Value::of(adopt(v, t, a.loc, "a cast"));
      if (v.kind == Value::kInt) return Value::of(ir::IntImm::make(t, v.i));  // wraps like a cast
      double d = std::trunc(v.f);
      if (!(d >= -9.2233720368547758e18 && d < 9.2233720368547758e18) || !fits(t, int64_t(d)))
        err(a.loc, "constant " + lit_text(v) + " does not fit in " + t.to_string());
      return Value::of(ir::IntImm::make(t, int64_t(d)));
    }
    return Value::of(guarded(a.loc, [&] { return ir::cast(t, v.e); }));
  }

  const std::string& file_;
  std::map<std::string, Loc> defined_;  // every constant and tensor name
  std::map<std::string, Value> consts_;
  std::map<std::string, TensorInfo> tensors_;
  std::vector<std::string> inputs_, computes_;
};

}  // namespace
}  // namespace parse

TeProgram parse_te(const std::string& text, const std::string& filename) {
  parse::Program prog = parse::parse_syntax(parse::lex(text, filename), filename);
  return parse::Builder(filename).run(prog);
}

TeProgram parse_te_file(const std::string& path) {
  std::error_code ec;
  TESSEL_CHECK(!std::filesystem::is_directory(path, ec)) << "cannot read " << path << ": it is a directory";
  std::ifstream in(path, std::ios::binary);
  TESSEL_CHECK(in.is_open()) << "cannot read " << path;
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, size_t(in.gcount()));
    if (text.size() > parse::kMaxInputBytes)
      parse::fail(path, parse::Loc{}, "input is too large (more than " + std::to_string(parse::kMaxInputBytes) +
                                          " bytes)");
  }
  TESSEL_CHECK(in.eof()) << "cannot read " << path;
  return parse_te(text, path);
}

}  // namespace tessel::te
