// The .te syntax: tokens -> statements with expression trees (no names resolved, no types checked).
//   program := { stmt? (NEWLINE | ';') }
//   stmt    := 'const' NAME '=' expr
//            | 'input' NAME ':' DTYPE '[' expr {',' expr} ']'
//            | ['output'] NAME '[' NAME {',' NAME} ']' [':' DTYPE ['[' expr {',' expr} ']']] '=' expr
//   expr    := or;  or := and {'||' and};  and := cmp {'&&' cmp};  cmp := add [CMP add]
//   add     := mul {('+'|'-') mul};  mul := unary {('*'|'/'|'%') unary};  unary := ('-'|'!') unary | primary
//   primary := INT | FLOAT | true | false | inf | '(' expr ')' | NAME | NAME '[' [expr {',' expr}] ']'
//            | DTYPE '(' expr ')' | cast '<' DTYPE '>' '(' expr ')' | FUNC '(' [expr {',' expr}] ')'
//            | REDUCER '(' expr {',' NAME [':' expr '..' expr]} [',' where expr] ')'
// Recursion is bounded by kMaxNesting and tree height by kMaxExprDepth.
#include <algorithm>
#include <limits>

#include "parser_internal.h"

namespace tessel::te::parse {

namespace {

class SyntaxParser {
 public:
  SyntaxParser(const std::vector<Token>& toks, const std::string& file) : t_(toks), file_(file) {}

  Program run() {
    Program prog;
    while (true) {
      while (at(Tok::kNewline) || at(Tok::kSemicolon)) ++p_;
      if (at(Tok::kEnd)) break;
      prog.statements.push_back(statement());
      if (!at(Tok::kNewline) && !at(Tok::kSemicolon) && !at(Tok::kEnd))
        error_expected("end of line after the statement");
    }
    prog.end = cur().loc;
    return prog;
  }

 private:
  const Token& cur() const { return t_[p_]; }
  bool at(Tok k) const { return cur().kind == k; }
  bool at_word(const char* w) const { return at(Tok::kIdent) && cur().text == w; }

  std::string describe(const Token& t) const {
    switch (t.kind) {
      case Tok::kIdent: return "'" + clip(t.text) + "'";
      case Tok::kInt:
      case Tok::kFloat: return "number " + clip(t.text);
      default: return tok_name(t.kind);
    }
  }
  static std::string clip(const std::string& s) { return s.size() > 40 ? s.substr(0, 40) + "..." : s; }

  [[noreturn]] void error_expected(const std::string& what) const {
    fail(file_, cur().loc, "expected " + what + ", found " + describe(cur()));
  }
  void expect(Tok k, const std::string& what) {
    if (!at(k)) error_expected(what);
    ++p_;
  }
  /** A new name (tensor, index, axis, constant): an identifier that is not a reserved word. */
  std::string new_name(const char* what, Loc* loc) {
    if (!at(Tok::kIdent)) error_expected(what);
    if (is_reserved(cur().text))
      fail(file_, cur().loc, "'" + cur().text + "' is a reserved word and cannot be used as " + what);
    *loc = cur().loc;
    return t_[p_++].text;
  }
  ir::DataType dtype(const char* context) {
    ir::DataType t;
    if (!at(Tok::kIdent)) error_expected(std::string("an element type ") + context);
    if (!dtype_from_name(cur().text, &t))
      fail(file_, cur().loc,
           "unknown element type '" + clip(cur().text) +
               "' (expected float32, float64, float16, bfloat16, int8, uint8, int16, uint16, int32, uint32, "
               "int64, uint64 or bool)");
    ++p_;
    return t;
  }

  Statement statement() {
    Statement s;
    s.loc = cur().loc;
    if (at_word("const")) {
      ++p_;
      s.kind = Statement::Kind::kConst;
      s.name = new_name("a constant name", &s.name_loc);
      expect(Tok::kAssign, "'=' after const " + s.name);
      s.value = expr();
      return s;
    }
    if (at_word("input")) {
      ++p_;
      s.kind = Statement::Kind::kInput;
      s.name = new_name("an input name", &s.name_loc);
      expect(Tok::kColon, "':' and an element type after input " + s.name);
      s.type_loc = cur().loc;
      s.dtype = dtype("after ':'");
      s.has_type = true;
      expect(Tok::kLBracket, "'[' and the shape of input " + s.name);
      s.has_shape = true;
      s.shape = expr_list(Tok::kRBracket, "']' after the shape");
      return s;
    }
    if (at_word("output")) {
      ++p_;
      s.output = true;
    }
    s.kind = Statement::Kind::kCompute;
    if (!at(Tok::kIdent)) error_expected("a statement (const, input, or TENSOR[indices] = expression)");
    s.name = new_name("a tensor name", &s.name_loc);
    expect(Tok::kLBracket, "'[' and index names after " + s.name);
    if (at(Tok::kRBracket)) fail(file_, cur().loc, "tensor " + s.name + " needs at least one index");
    while (true) {
      Loc l;
      s.indices.push_back(new_name("an index name", &l));
      s.index_locs.push_back(l);
      if (at(Tok::kComma)) {
        ++p_;
        continue;
      }
      if (!at(Tok::kRBracket)) error_expected("']' after index list");
      ++p_;
      break;
    }
    if (at(Tok::kColon)) {
      ++p_;
      s.type_loc = cur().loc;
      s.dtype = dtype("after ':'");
      s.has_type = true;
      if (at(Tok::kLBracket)) {
        ++p_;
        s.has_shape = true;
        s.shape = expr_list(Tok::kRBracket, "']' after the shape");
      }
    }
    expect(Tok::kAssign, "'=' after " + s.name + "[...]");
    s.value = expr();
    return s;
  }

  /** Comma-separated expressions up to and including `close` (which must follow at least one). */
  std::vector<AstPtr> expr_list(Tok close, const std::string& what) {
    std::vector<AstPtr> v;
    if (at(close)) error_expected("an expression");
    while (true) {
      v.push_back(expr());
      if (at(Tok::kComma)) {
        ++p_;
        continue;
      }
      expect(close, what);
      return v;
    }
  }

  struct DepthGuard {
    SyntaxParser* p;
    explicit DepthGuard(SyntaxParser* sp) : p(sp) {
      if (++p->depth_ > kMaxNesting)
        fail(p->file_, p->cur().loc,
             "expression is nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
    }
    ~DepthGuard() { --p->depth_; }
  };

  AstPtr node(Ast::Kind k, Loc l) { return std::make_unique<Ast>(k, l); }
  AstPtr finish(AstPtr n) {
    int d = 0;
    for (auto& a : n->args) d = std::max(d, a->depth);
    for (auto& ax : n->axes) {
      if (ax.lo) d = std::max(d, ax.lo->depth);
      if (ax.hi) d = std::max(d, ax.hi->depth);
    }
    if (n->where) d = std::max(d, n->where->depth);
    n->depth = d + 1;
    if (n->depth > kMaxExprDepth)
      fail(file_, n->loc,
           "expression is too deep (more than " + std::to_string(kMaxExprDepth) +
               " levels); split it into several statements");
    return n;
  }
  AstPtr binary(Tok op, Loc l, AstPtr a, AstPtr b) {
    auto n = node(Ast::Kind::kBinary, l);
    n->op = op;
    n->args.push_back(std::move(a));
    n->args.push_back(std::move(b));
    return finish(std::move(n));
  }

  AstPtr expr() {
    DepthGuard g(this);
    auto a = and_expr();
    while (at(Tok::kOrOr)) {
      Loc l = cur().loc;
      ++p_;
      a = binary(Tok::kOrOr, l, std::move(a), and_expr());
    }
    return a;
  }
  AstPtr and_expr() {
    auto a = cmp_expr();
    while (at(Tok::kAndAnd)) {
      Loc l = cur().loc;
      ++p_;
      a = binary(Tok::kAndAnd, l, std::move(a), cmp_expr());
    }
    return a;
  }
  static bool is_cmp(Tok k) {
    return k == Tok::kEq || k == Tok::kNe || k == Tok::kLt || k == Tok::kLe || k == Tok::kGt || k == Tok::kGe;
  }
  AstPtr cmp_expr() {
    auto a = add_expr();
    if (is_cmp(cur().kind)) {
      Tok op = cur().kind;
      Loc l = cur().loc;
      ++p_;
      a = binary(op, l, std::move(a), add_expr());
      if (is_cmp(cur().kind))
        fail(file_, cur().loc, "comparisons do not chain (a < b < c); combine them with &&");
    }
    return a;
  }
  AstPtr add_expr() {
    auto a = mul_expr();
    while (at(Tok::kPlus) || at(Tok::kMinus)) {
      Tok op = cur().kind;
      Loc l = cur().loc;
      ++p_;
      a = binary(op, l, std::move(a), mul_expr());
    }
    return a;
  }
  AstPtr mul_expr() {
    auto a = unary();
    while (at(Tok::kStar) || at(Tok::kSlash) || at(Tok::kPercent)) {
      Tok op = cur().kind;
      Loc l = cur().loc;
      ++p_;
      a = binary(op, l, std::move(a), unary());
    }
    return a;
  }
  AstPtr unary() {
    if (at(Tok::kMinus) || at(Tok::kNot)) {
      DepthGuard g(this);
      auto n = node(Ast::Kind::kUnary, cur().loc);
      n->op = cur().kind;
      ++p_;
      n->args.push_back(unary());
      return finish(std::move(n));
    }
    return primary();
  }

  AstPtr primary() {
    const Token& t = cur();
    switch (t.kind) {
      case Tok::kInt: {
        auto n = node(Ast::Kind::kInt, t.loc);
        n->ival = t.ival;
        ++p_;
        return n;
      }
      case Tok::kFloat: {
        auto n = node(Ast::Kind::kFloat, t.loc);
        n->fval = t.fval;
        ++p_;
        return n;
      }
      case Tok::kLParen: {
        ++p_;
        auto e = expr();
        expect(Tok::kRParen, "')'");
        return e;
      }
      case Tok::kIdent: break;
      default: error_expected("an expression");
    }
    Loc l = t.loc;
    std::string name = t.text;
    ++p_;
    if (name == "true" || name == "false") {
      auto n = node(Ast::Kind::kBool, l);
      n->ival = name == "true";
      return n;
    }
    if (name == "inf") {
      auto n = node(Ast::Kind::kFloat, l);
      n->fval = std::numeric_limits<double>::infinity();
      return n;
    }
    ir::DataType cast_type;
    if (name == "cast") {  // cast<dtype>(e)
      expect(Tok::kLt, "'<' after cast (cast<float32>(x))");
      cast_type = dtype("in cast<...>");
      expect(Tok::kGt, "'>' after the type in cast<...>");
      return cast_call(l, cast_type, "cast<" + cast_type.to_string() + ">");
    }
    if (dtype_from_name(name, &cast_type)) return cast_call(l, cast_type, name);
    if (name == "input" || name == "output" || name == "const" || name == "where")
      fail(file_, l, "'" + name + "' is a reserved word and cannot be used in an expression");
    if (at(Tok::kLBracket)) {  // (each index is an expr(), which counts the nesting)
      ++p_;
      auto n = node(Ast::Kind::kRead, l);
      n->name = name;
      if (at(Tok::kRBracket)) fail(file_, cur().loc, "tensor " + name + " must be indexed with at least one index");
      n->args = expr_list(Tok::kRBracket, "']' after index list");
      return finish(std::move(n));
    }
    if (at(Tok::kLParen)) {
      ++p_;
      if (is_reducer(name)) return reduction(l, name);
      auto n = node(Ast::Kind::kCall, l);
      n->name = name;
      if (at(Tok::kRParen)) {
        ++p_;
      } else {
        n->args = expr_list(Tok::kRParen, "')' after the arguments of " + name);
      }
      return finish(std::move(n));
    }
    auto n = node(Ast::Kind::kName, l);
    n->name = name;
    return n;
  }

  AstPtr cast_call(Loc l, ir::DataType t, const std::string& spelled) {
    expect(Tok::kLParen, "'(' after " + spelled + " (a cast is written " + spelled + "(x))");
    auto n = node(Ast::Kind::kCast, l);
    n->type = t;
    n->args.push_back(expr());
    expect(Tok::kRParen, "')' after the operand of " + spelled);
    return finish(std::move(n));
  }

  // After REDUCER '(' : source, axes, optional where.
  AstPtr reduction(Loc l, const std::string& name) {
    auto n = node(Ast::Kind::kReduce, l);
    n->name = name;
    if (at(Tok::kRParen)) error_expected("an expression to reduce");
    n->args.push_back(expr());
    if (!at(Tok::kComma))
      error_expected("',' and the reduction axes after the operand of " + name + " (e.g. " + name + "(A[i, k], k))");
    while (at(Tok::kComma)) {
      ++p_;
      if (at_word("where")) {
        if (n->axes.empty()) fail(file_, cur().loc, name + " needs at least one reduction axis before 'where'");
        ++p_;
        n->where = expr();
        break;
      }
      AxisSpec ax;
      ax.name = new_name("a reduction axis name", &ax.loc);
      if (at(Tok::kColon)) {
        ++p_;
        ax.lo = expr();
        expect(Tok::kDotDot, "'..' in the range of axis " + ax.name + " (k: 0..16)");
        ax.hi = expr();
      }
      n->axes.push_back(std::move(ax));
      if (int(n->axes.size()) > kMaxDims)
        fail(file_, n->axes.back().loc, "too many reduction axes (the limit is " + std::to_string(kMaxDims) + ")");
    }
    expect(Tok::kRParen, "')' after the reduction axes of " + name);
    return finish(std::move(n));
  }

  const std::vector<Token>& t_;
  const std::string& file_;
  size_t p_ = 0;
  int depth_ = 0;
};

}  // namespace

Program parse_syntax(const std::vector<Token>& tokens, const std::string& file) {
  return SyntaxParser(tokens, file).run();
}

}  // namespace tessel::te::parse
