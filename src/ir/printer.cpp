// IR printer: infix expressions, indented statements.
#include "tessel/ir/printer.h"

#include <iomanip>
#include <sstream>

#include "tessel/ir/functor.h"

namespace tessel::ir {

namespace {

class Printer : public IRVisitor {
 public:
  explicit Printer(std::ostream& os) : os_(os) {}
  using IRVisitor::visit;

  void visit(const Expr& e) override {
    if (!e.defined()) {
      os_ << "<undef>";
      return;
    }
    IRVisitor::visit(e);
  }
  void visit(const Stmt& s) override {
    if (!s.defined()) return;
    IRVisitor::visit(s);
  }

 protected:
  void indent() { os_ << std::string(indent_ * 2, ' '); }
  void bin(const Expr& a, const char* op, const Expr& b) {
    os_ << "(";
    visit(a);
    os_ << " " << op << " ";
    visit(b);
    os_ << ")";
  }
  void list(const std::vector<Expr>& es) {
    for (size_t i = 0; i < es.size(); ++i) {
      if (i) os_ << ", ";
      visit(es[i]);
    }
  }

  void visit_(const IntImm* op) override {
    if (op->dtype.is_bool()) {
      os_ << (op->value ? "true" : "false");
    } else {
      os_ << op->value;
      if (op->dtype != DataType::int32()) os_ << "_" << op->dtype;
    }
  }
  void visit_(const FloatImm* op) override {
    std::ostringstream s;
    s << std::setprecision(9) << op->value;
    std::string t = s.str();
    if (t.find_first_of(".eni") == std::string::npos) t += ".0";
    os_ << t;
    if (op->dtype != DataType::float32()) os_ << "_" << op->dtype;
  }
  void visit_(const VarNode* op) override { os_ << op->name; }
  void visit_(const Add* op) override { bin(op->a, "+", op->b); }
  void visit_(const Sub* op) override { bin(op->a, "-", op->b); }
  void visit_(const Mul* op) override { bin(op->a, "*", op->b); }
  void visit_(const Div* op) override { bin(op->a, "/", op->b); }
  void visit_(const Mod* op) override { bin(op->a, "%", op->b); }
  void visit_(const EQ* op) override { bin(op->a, "==", op->b); }
  void visit_(const NE* op) override { bin(op->a, "!=", op->b); }
  void visit_(const LT* op) override { bin(op->a, "<", op->b); }
  void visit_(const LE* op) override { bin(op->a, "<=", op->b); }
  void visit_(const And* op) override { bin(op->a, "&&", op->b); }
  void visit_(const Or* op) override { bin(op->a, "||", op->b); }
  void visit_(const Min* op) override { call("min", {op->a, op->b}); }
  void visit_(const Max* op) override { call("max", {op->a, op->b}); }
  void visit_(const Not* op) override {
    os_ << "!";
    visit(op->a);
  }
  void visit_(const Select* op) override { call("select", {op->cond, op->true_value, op->false_value}); }
  void visit_(const Cast* op) override { call(op->dtype.to_string().c_str(), {op->value}); }
  void visit_(const Call* op) override { call(intrinsic_name(op->op), op->args); }
  void visit_(const TensorRead* op) override {
    os_ << op->producer->name() << "[";
    list(op->indices);
    os_ << "]";
  }
  void visit_(const Reduce* op) override {
    os_ << reduce_kind_name(op->op) << "(";
    visit(op->source);
    os_ << ", axis=[";
    for (size_t i = 0; i < op->axes.size(); ++i) {
      if (i) os_ << ", ";
      os_ << op->axes[i]->var.name() << ":[";
      visit(op->axes[i]->min);
      os_ << ", ";
      visit(op->axes[i]->extent);
      os_ << ")";
    }
    os_ << "]";
    if (op->condition.defined()) {
      os_ << ", where=";
      visit(op->condition);
    }
    os_ << ")";
  }
  void visit_(const BufferLoad* op) override {
    os_ << op->buffer->name << "[";
    list(op->indices);
    os_ << "]";
  }
  void visit_(const Load* op) override {
    os_ << op->buffer->name << "[";
    visit(op->index);
    os_ << "]";
    if (op->predicate.defined()) {
      os_ << " if ";
      visit(op->predicate);
    }
  }
  void visit_(const Ramp* op) override {
    os_ << "ramp(";
    visit(op->base);
    os_ << ", ";
    visit(op->stride);
    os_ << ", " << op->lanes << ")";
  }
  void visit_(const Broadcast* op) override {
    os_ << "x" << op->lanes << "(";
    visit(op->value);
    os_ << ")";
  }
  void visit_(const Let* op) override {
    os_ << "(let " << op->var.name() << " = ";
    visit(op->value);
    os_ << " in ";
    visit(op->body);
    os_ << ")";
  }

  void visit_(const For* op) override {
    indent();
    os_ << for_kind_name(op->for_kind) << " (" << op->var.name() << ", ";
    visit(op->min);
    os_ << ", ";
    visit(op->extent);
    os_ << ") {\n";
    ++indent_;
    visit(op->body);
    --indent_;
    indent();
    os_ << "}\n";
  }
  void visit_(const BufferStore* op) override {
    indent();
    os_ << op->buffer->name << "[";
    list(op->indices);
    os_ << "] = ";
    visit(op->value);
    os_ << "\n";
  }
  void visit_(const Store* op) override {
    indent();
    os_ << op->buffer->name << "[";
    visit(op->index);
    os_ << "] = ";
    visit(op->value);
    if (op->predicate.defined()) {
      os_ << " if ";
      visit(op->predicate);
    }
    os_ << "\n";
  }
  void visit_(const Allocate* op) override {
    indent();
    os_ << "allocate " << op->buffer->name << "[" << op->buffer->dtype << " * ";
    for (size_t i = 0; i < op->buffer->shape.size(); ++i) {
      if (i) os_ << " * ";
      visit(op->buffer->shape[i]);
    }
    os_ << "], " << scope_name(op->buffer->scope) << "\n";
    visit(op->body);
  }
  void visit_(const Seq* op) override {
    for (auto& s : op->seq) visit(s);
  }
  void visit_(const IfThenElse* op) override {
    indent();
    os_ << "if (";
    visit(op->cond);
    os_ << ") {\n";
    ++indent_;
    visit(op->then_case);
    --indent_;
    if (op->else_case.defined()) {
      indent();
      os_ << "} else {\n";
      ++indent_;
      visit(op->else_case);
      --indent_;
    }
    indent();
    os_ << "}\n";
  }
  void visit_(const Evaluate* op) override {
    indent();
    visit(op->value);
    os_ << "\n";
  }
  void visit_(const LetStmt* op) override {
    indent();
    os_ << "let " << op->var.name() << " = ";
    visit(op->value);
    os_ << "\n";
    visit(op->body);
  }
  void visit_(const AttrStmt* op) override {
    indent();
    os_ << "// attr " << op->key << " = ";
    visit(op->value);
    os_ << "\n";
    visit(op->body);
  }

 private:
  void call(const char* name, const std::vector<Expr>& args) {
    os_ << name << "(";
    list(args);
    os_ << ")";
  }
  std::ostream& os_;
  int indent_ = 0;
};

}  // namespace

std::string to_string(const Expr& e) {
  std::ostringstream os;
  Printer(os).visit(e);
  return os.str();
}
std::string to_string(const Stmt& s) {
  std::ostringstream os;
  Printer(os).visit(s);
  return os.str();
}
std::string to_string(const LoweredFunc& f) {
  std::ostringstream os;
  os << "func " << f.name << "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (i) os << ", ";
    os << f.params[i]->name << ": " << f.params[i]->dtype << "[";
    for (size_t d = 0; d < f.params[i]->shape.size(); ++d) {
      if (d) os << ", ";
      os << to_string(f.params[i]->shape[d]);
    }
    os << "]";
  }
  os << ") {\n" << to_string(f.body) << "}\n";
  return os.str();
}
std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << to_string(e); }
std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << to_string(s); }

}  // namespace tessel::ir
