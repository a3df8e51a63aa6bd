// print_te: a tensor-expression DAG -> canonical .te text (docs/te-format.md).
// Every statement is printed with its dtype, its shape and explicit reduction ranges, so nothing is left
// to inference. Constants are printed so that the parser gives them back their exact type and value:
// a constant next to a typed operand is printed bare (it adopts that operand's type, as the parser
// does); elsewhere it is bare when its type is the one the parser would pick (int32, int64 when needed,
// float32), else written as a typed constant `int64(5)`. Where the parser would fold two constants
// (2 + 3), the first one is printed typed so the node is kept.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "parser_internal.h"
#include "tessel/ir/expr.h"
#include "tessel/te/parser.h"

namespace tessel::te {

namespace {

using ir::DataType;
using ir::Expr;

enum Prec { kOr = 1, kAnd, kCmp, kAdd, kMul, kUnary, kPrimary };
enum class Lit { kAuto, kBare, kTyped };

bool is_lit(const Expr& e) { return (e.as<ir::IntImm>() && !e.dtype().is_bool()) || e.as<ir::FloatImm>(); }

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return !parse::is_reserved(s);
}

/** The type the parser gives a group of constants with nothing else to adopt. */
DataType group_default(const std::vector<Expr>& es) {
  bool all_int32 = true;
  for (auto& e : es) {
    if (e.as<ir::FloatImm>()) return DataType::float32();
    if (auto* i = e.as<ir::IntImm>()) all_int32 &= i->value >= INT32_MIN && i->value <= INT32_MAX;
  }
  return all_int32 ? DataType::int32() : DataType::int64();
}

std::string float_text(const ir::FloatImm* f) {
  double v = f->value;
  TESSEL_CHECK(!std::isnan(v)) << "print_te: a NaN constant cannot be written in .te";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  bool f32 = f->dtype.bits == 32 && f->dtype.code == DataType::kFloat;
  char buf[48];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, v);
    double back = std::strtod(buf, nullptr);
    if (f32 ? float(back) == float(v) : back == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string int_text(const ir::IntImm* i) {
  if (i->dtype.is_bool()) return i->value ? "true" : "false";
  if (i->value == INT64_MIN) return "(-9223372036854775807 - 1)";
  return std::to_string(i->value);
}

class Printer {
 public:
  std::string run(const TeProgram& p) {
    std::vector<Tensor> outputs = p.outputs;
    TESSEL_CHECK(!outputs.empty()) << "print_te: the program has no outputs";
    std::vector<Operation> order = topo_order(outputs);
    std::unordered_set<const OperationNode*> read, is_output;
    std::set<std::string> names;
    for (auto& t : outputs) is_output.insert(t.op().get());
    for (auto& op : order) {
      TESSEL_CHECK(is_identifier(op->name())) << "print_te: tensor name '" << op->name()
                                              << "' is not a .te identifier (or is a reserved word)";
      TESSEL_CHECK(names.insert(op->name()).second) << "print_te: two tensors are named " << op->name();
      if (auto* c = as_compute(op))
        for (auto& in : c->inputs()) read.insert(in.get());
    }
    std::ostringstream os;
    // Inputs: the program's, in order, then any other placeholder the outputs read.
    std::vector<Operation> inputs;
    std::unordered_set<const OperationNode*> seen;
    for (auto& t : p.inputs) {
      TESSEL_CHECK(t.defined() && t.op()->kind == OperationNode::Kind::kPlaceholder)
          << "print_te: input " << (t.defined() ? t.name() : "?") << " is not a placeholder";
      if (seen.insert(t.op().get()).second) inputs.push_back(t.op());
    }
    for (auto& op : order)
      if (op->kind == OperationNode::Kind::kPlaceholder && seen.insert(op.get()).second) inputs.push_back(op);
    for (auto& op : inputs) {
      TESSEL_CHECK(is_identifier(op->name())) << "print_te: tensor name '" << op->name() << "' is not a .te identifier";
      os << "input " << op->name() << ": " << type_name(op->dtype()) << shape_text(op->shape(), op->name()) << "\n";
    }
    for (auto& op : order) {
      auto* c = as_compute(op);
      if (!c) continue;
      statement(os, *c, is_output.count(op.get()) && read.count(op.get()), names);
    }
    return os.str();
  }

 private:
  static std::string type_name(DataType t) {
    TESSEL_CHECK(t.is_scalar() && !t.is_handle()) << "print_te: type " << t << " cannot be written in .te";
    return t.to_string();
  }
  static int64_t const_extent(const Expr& e, const std::string& what) {
    const int64_t* c = ir::as_const_int(e);
    TESSEL_CHECK(c) << "print_te: " << what << " is not a constant";
    return *c;
  }
  static std::string shape_text(const std::vector<Expr>& shape, const std::string& name) {
    std::string s = "[";
    for (size_t d = 0; d < shape.size(); ++d)
      s += (d ? ", " : "") + std::to_string(const_extent(shape[d], "the shape of " + name));
    return s + "]";
  }

  /** A fresh identifier for var v (its own name unless taken or invalid). */
  void name_var(const ir::Var& v, std::set<std::string>& taken, const std::set<std::string>& tensor_names) {
    std::string base = is_identifier(v.name()) ? v.name() : "v";
    std::string n = base;
    for (int k = 1; taken.count(n) || tensor_names.count(n); ++k) n = base + "_" + std::to_string(k);
    taken.insert(n);
    vars_[v.get()] = n;
  }

  void statement(std::ostream& os, const ComputeOp& c, bool mark_output, const std::set<std::string>& tensor_names) {
    vars_.clear();
    std::set<std::string> taken;
    for (auto& ax : c.axis) name_var(ax->var, taken, tensor_names);
    for (auto& ax : c.reduce_axis) name_var(ax->var, taken, tensor_names);
    if (mark_output) os << "output ";
    os << c.name() << "[";
    for (size_t d = 0; d < c.axis.size(); ++d) os << (d ? ", " : "") << vars_.at(c.axis[d]->var.get());
    os << "]: " << type_name(c.dtype()) << shape_text(c.shape(), c.name()) << " = ";
    if (auto* r = c.reduce()) {
      static const char* names[] = {"sum", "max_reduce", "min_reduce", "prod"};  // ReduceKind order
      os << names[int(r->op)] << "(" << expr(r->source, 0, Lit::kBare);
      for (auto& ax : r->axes) {
        int64_t lo = const_extent(ax->min, "a reduction range"), n = const_extent(ax->extent, "a reduction range");
        os << ", " << vars_.at(ax->var.get()) << ": " << lo << ".." << lo + n;
      }
      if (r->condition.defined()) os << ", where " << expr(r->condition, 0);
      os << ")";
    } else {
      os << expr(c.body, 0, Lit::kBare);
    }
    os << "\n";
  }

  std::string literal(const Expr& e, Lit mode) {
    std::string bare = e.as<ir::IntImm>() ? int_text(e.as<ir::IntImm>()) : float_text(e.as<ir::FloatImm>());
    if (mode == Lit::kBare || (mode == Lit::kAuto && e.dtype() == group_default({e}))) return bare;
    return type_name(e.dtype()) + "(" + bare + ")";
  }

  /** Operands that the parser unifies: literal modes so each comes back with its type. */
  static std::vector<Lit> group_modes(const std::vector<Expr>& es, bool folds) {
    std::vector<Lit> m(es.size(), Lit::kBare);
    bool all_lit = true;
    for (auto& e : es) all_lit &= is_lit(e);
    if (!all_lit) return m;  // literals adopt the typed operand's type
    bool all_default = true;
    DataType d = group_default(es);
    for (auto& e : es) all_default &= e.dtype() == d;
    if (folds || !all_default) m[0] = Lit::kTyped;  // the rest adopt the first one's type
    return m;
  }

  static std::string paren(const std::string& s, int own, int want) { return own < want ? "(" + s + ")" : s; }

  /** How one node prints: its operands (with the precedence and literal mode each needs) and the text
   *  around them. */
  struct Layout {
    enum Form { kLeaf, kInfix, kPrefix, kCall, kIndex } form = kLeaf;
    std::string text;  // leaf text, operator, function or tensor name
    int prec = kPrimary;
    std::vector<Expr> kids;
    std::vector<int> want;
    std::vector<Lit> mode;
    void add(const Expr& e, int w, Lit m = Lit::kAuto) {
      kids.push_back(e);
      want.push_back(w);
      mode.push_back(m);
    }
    void add_group(const std::vector<Expr>& es, bool folds) {
      std::vector<Lit> m = group_modes(es, folds);
      for (size_t k = 0; k < es.size(); ++k) add(es[k], 0, m[k]);
    }
  };

  template <class Node>
  static Layout infix(const Node* n, const char* op, int p, bool folds, bool chains = true) {
    Layout l;
    l.form = Layout::kInfix;
    l.text = op;
    l.prec = p;
    std::vector<Lit> m = group_modes({n->a, n->b}, folds);
    l.add(n->a, chains ? p : p + 1, m[0]);
    l.add(n->b, p + 1, m[1]);
    return l;
  }
  static Layout call(const std::string& fn) {
    Layout l;
    l.form = Layout::kCall;
    l.text = fn;
    return l;
  }

  // expr() is the only recursive function; it keeps a small frame (layout and assemble are out of line).
  std::string expr(const Expr& e, int want, Lit mode = Lit::kAuto) {
    Layout l = layout(e, mode);
    std::vector<std::string> parts;
    parts.reserve(l.kids.size());
    for (size_t k = 0; k < l.kids.size(); ++k) parts.push_back(expr(l.kids[k], l.want[k], l.mode[k]));
    return assemble(l, parts, want);
  }

  [[gnu::noinline]] static std::string assemble(const Layout& l, const std::vector<std::string>& parts, int want) {
    std::string s;
    switch (l.form) {
      case Layout::kLeaf: s = l.text; break;
      case Layout::kInfix: s = parts[0] + " " + l.text + " " + parts[1]; break;
      case Layout::kPrefix: s = l.text + parts[0]; break;
      case Layout::kCall:
      case Layout::kIndex:
        s = l.text + (l.form == Layout::kCall ? "(" : "[");
        for (size_t k = 0; k < parts.size(); ++k) {
          if (k) s += ", ";
          s += parts[k];
        }
        s += l.form == Layout::kCall ? ")" : "]";
        break;
    }
    return paren(s, l.prec, want);
  }

  [[gnu::noinline]] Layout layout(const Expr& e, Lit mode) {
    TESSEL_CHECK(e.defined()) << "print_te: undefined expression";
    TESSEL_CHECK(e.dtype().is_scalar()) << "print_te: vector expressions cannot be written in .te";
    using K = ir::ExprKind;
    Layout l;
    switch (e.kind()) {
      case K::IntImm:
      case K::FloatImm:
        l.text = is_lit(e) ? literal(e, mode) : int_text(e.as<ir::IntImm>());
        l.prec = l.text[0] == '-' ? kUnary : kPrimary;
        return l;
      case K::Var: {
        auto it = vars_.find(e.as<ir::VarNode>());
        TESSEL_CHECK(it != vars_.end()) << "print_te: variable " << e.as<ir::VarNode>()->name
                                        << " is not an axis of the statement that uses it";
        l.text = it->second;
        return l;
      }
      case K::Add: return infix(e.as<ir::Add>(), "+", kAdd, true);
      case K::Sub: {
        auto* s = e.as<ir::Sub>();
        bool zero = (s->a.as<ir::IntImm>() && s->a.as<ir::IntImm>()->value == 0) ||
                    (s->a.as<ir::FloatImm>() && s->a.as<ir::FloatImm>()->value == 0 &&
                     !std::signbit(s->a.as<ir::FloatImm>()->value));
        if (!zero || is_lit(s->b)) return infix(s, "-", kAdd, true);
        l.form = Layout::kPrefix;  // 0 - x, as the parser builds -x
        l.text = "-";
        l.prec = kUnary;
        l.add(s->b, kUnary);
        return l;
      }
      case K::Mul: return infix(e.as<ir::Mul>(), "*", kMul, true);
      case K::Div: return infix(e.as<ir::Div>(), "/", kMul, true);
      case K::Mod: return infix(e.as<ir::Mod>(), "%", kMul, true);
      case K::EQ: return infix(e.as<ir::EQ>(), "==", kCmp, false, false);
      case K::NE: return infix(e.as<ir::NE>(), "!=", kCmp, false, false);
      case K::LT: return infix(e.as<ir::LT>(), "<", kCmp, false, false);
      case K::LE: return infix(e.as<ir::LE>(), "<=", kCmp, false, false);
      case K::And: return infix(e.as<ir::And>(), "&&", kAnd, false);
      case K::Or: return infix(e.as<ir::Or>(), "||", kOr, false);
      case K::Not:
        l.form = Layout::kPrefix;
        l.text = "!";
        l.prec = kUnary;
        l.add(e.as<ir::Not>()->a, kUnary);
        return l;
      case K::Min:
        l = call("min");
        l.add_group({e.as<ir::Min>()->a, e.as<ir::Min>()->b}, true);
        return l;
      case K::Max:
        l = call("max");
        l.add_group({e.as<ir::Max>()->a, e.as<ir::Max>()->b}, true);
        return l;
      case K::Select: {
        auto* s = e.as<ir::Select>();
        l = call("select");
        l.add(s->cond, 0);
        l.add_group({s->true_value, s->false_value}, false);
        return l;
      }
      case K::Cast: {
        auto* c = e.as<ir::Cast>();
        l = call(type_name(c->dtype));
        l.add(c->value, 0, Lit::kTyped);  // a bare literal would be folded into a constant
        return l;
      }
      case K::Call: {
        auto* c = e.as<ir::Call>();
        TESSEL_CHECK(c->op != ir::Intrinsic::kPrefetch) << "print_te: prefetch cannot be written in .te";
        l = call(ir::intrinsic_name(c->op));
        if (c->op == ir::Intrinsic::kIfThenElse) {
          l.add(c->args[0], 0);
          l.add_group({c->args[1], c->args[2]}, false);
        } else {
          l.add_group(c->args, false);
        }
        return l;
      }
      case K::TensorRead: {
        auto* r = e.as<ir::TensorRead>();
        l.form = Layout::kIndex;
        l.text = r->producer->name();
        for (auto& i : r->indices) l.add(i, 0);
        return l;
      }
      case K::Reduce:
        TESSEL_CHECK(false) << "print_te: a reduction inside an expression cannot be written in .te";
        break;
      default:
        TESSEL_CHECK(false) << "print_te: " << ir::kind_name(e.kind()) << " nodes cannot be written in .te";
    }
    return l;
  }

  std::unordered_map<const ir::VarNode*, std::string> vars_;
};

}  // namespace

std::string print_te(const TeProgram& p) { return Printer().run(p); }

}  // namespace tessel::te
