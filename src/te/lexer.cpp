// The .te lexer: text -> tokens with line:column, plus the tables of reserved words and type names.
// Newlines end statements except inside () and [] (Python-style implicit line joining).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "parser_internal.h"

namespace tessel::te::parse {

void fail(const std::string& file, Loc loc, const std::string& message) {
  throw ParseError(file, loc.line, loc.col, message);
}

const char* tok_name(Tok t) {
  switch (t) {
    case Tok::kEnd: return "end of file";
    case Tok::kNewline: return "end of line";
    case Tok::kIdent: return "a name";
    case Tok::kInt: return "an integer";
    case Tok::kFloat: return "a number";
    case Tok::kLBracket: return "'['";
    case Tok::kRBracket: return "']'";
    case Tok::kLParen: return "'('";
    case Tok::kRParen: return "')'";
    case Tok::kComma: return "','";
    case Tok::kColon: return "':'";
    case Tok::kSemicolon: return "';'";
    case Tok::kAssign: return "'='";
    case Tok::kDotDot: return "'..'";
    case Tok::kEq: return "'=='";
    case Tok::kNe: return "'!='";
    case Tok::kLt: return "'<'";
    case Tok::kLe: return "'<='";
    case Tok::kGt: return "'>'";
    case Tok::kGe: return "'>='";
    case Tok::kAndAnd: return "'&&'";
    case Tok::kOrOr: return "'||'";
    case Tok::kNot: return "'!'";
    case Tok::kPlus: return "'+'";
    case Tok::kMinus: return "'-'";
    case Tok::kStar: return "'*'";
    case Tok::kSlash: return "'/'";
    case Tok::kPercent: return "'%'";
  }
  return "?";
}

bool dtype_from_name(const std::string& name, ir::DataType* out) {
  using ir::DataType;
  struct Entry {
    const char* name;
    DataType t;
  };
  static const Entry table[] = {
      {"float32", DataType::float32()},  {"float64", DataType::float64()},
      {"float16", DataType::float16()},  {"bfloat16", DataType::bfloat16()},
      {"int8", DataType::int8()},        {"uint8", DataType::uint8()},
      {"int16", DataType(DataType::kInt, 16)},  {"uint16", DataType(DataType::kUInt, 16)},
      {"int32", DataType::int32()},      {"uint32", DataType(DataType::kUInt, 32)},
      {"int64", DataType::int64()},      {"uint64", DataType(DataType::kUInt, 64)},
      {"bool", DataType::boolean()}};
  for (const auto& e : table) {
    if (name == e.name) {
      if (out) *out = e.t;
      return true;
    }
  }
  return false;
}

bool is_reserved(const std::string& name) {
  static const char* words[] = {"input", "output", "const", "where", "true", "false", "inf", "cast"};
  for (const char* w : words)
    if (name == w) return true;
  return dtype_from_name(name, nullptr);
}

bool is_reducer(const std::string& name) {
  return name == "sum" || name == "prod" || name == "max_reduce" || name == "min_reduce";
}

namespace {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

std::string describe_char(unsigned char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + char(c) + "'";
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%02X", unsigned(c));
  return std::string("byte ") + buf;
}

class Lexer {
 public:
  Lexer(const std::string& text, const std::string& file) : s_(text), file_(file) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    int depth = 0;  // open ( and [: newlines inside are dropped
    while (true) {
      skip_blanks();
      Token t;
      t.loc = loc();
      if (p_ >= s_.size()) {
        t.kind = Tok::kEnd;
        out.push_back(t);
        return out;
      }
      char c = s_[p_];
      if (c == '\n') {
        advance(1);
        if (depth == 0 && (out.empty() || out.back().kind != Tok::kNewline)) {
          t.kind = Tok::kNewline;
          out.push_back(t);
        }
        continue;
      }
      if (is_ident_start(c)) {
        size_t b = p_;
        while (p_ < s_.size() && is_ident_char(s_[p_])) advance(1);
        t.kind = Tok::kIdent;
        t.text = s_.substr(b, p_ - b);
        out.push_back(std::move(t));
        continue;
      }
      if (is_digit(c)) {
        out.push_back(number());
        continue;
      }
      t.kind = punct(&depth);
      out.push_back(t);
    }
  }

 private:
  Loc loc() const { return {line_, col_}; }
  void advance(size_t n) {
    for (size_t i = 0; i < n && p_ < s_.size(); ++i, ++p_) {
      if (s_[p_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
    }
  }
  char peek(size_t off = 0) const { return p_ + off < s_.size() ? s_[p_ + off] : '\0'; }

  void skip_blanks() {
    while (p_ < s_.size()) {
      char c = s_[p_];
      if (c == ' ' || c == '\t' || c == '\r') {
        advance(1);
      } else if (c == '#') {
        while (p_ < s_.size() && s_[p_] != '\n') advance(1);
      } else {
        return;
      }
    }
  }

  Token number() {
    Token t;
    t.loc = loc();
    size_t b = p_;
    while (is_digit(peek())) advance(1);
    bool is_float = false;
    if (peek() == '.' && is_digit(peek(1))) {  // "0..16" is 0, .., 16
      is_float = true;
      advance(1);
      while (is_digit(peek())) advance(1);
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
      is_float = true;
      advance(2);
      while (is_digit(peek())) advance(1);
    }
    t.text = s_.substr(b, p_ - b);
    if (is_ident_char(peek()) || (peek() == '.' && peek(1) != '.')) {
      size_t e = p_;
      while (e < s_.size() && (is_ident_char(s_[e]) || s_[e] == '.') && e - b < 40) ++e;
      fail(file_, t.loc, "invalid number '" + s_.substr(b, e - b) + "'");
    }
    if (is_float) {
      t.kind = Tok::kFloat;
      errno = 0;
      t.fval = std::strtod(t.text.c_str(), nullptr);
      if (errno == ERANGE && (t.fval > 1.0 || t.fval < -1.0))
        fail(file_, t.loc, "number " + t.text + " is out of range");
      return t;
    }
    t.kind = Tok::kInt;
    uint64_t v = 0;
    for (char d : t.text) {
      uint64_t digit = uint64_t(d - '0');
      if (v > (uint64_t(std::numeric_limits<int64_t>::max()) - digit) / 10)
        fail(file_, t.loc, "integer " + t.text.substr(0, 40) + (t.text.size() > 40 ? "..." : "") +
                               " is too large (the limit is 9223372036854775807)");
      v = v * 10 + digit;
    }
    t.ival = int64_t(v);
    return t;
  }

  Tok punct(int* depth) {
    Loc l = loc();
    char c = s_[p_], n = peek(1);
    auto two = [&](Tok t) {
      advance(2);
      return t;
    };
    auto one = [&](Tok t) {
      advance(1);
      return t;
    };
    switch (c) {
      case '[': ++*depth; return one(Tok::kLBracket);
      case '(': ++*depth; return one(Tok::kLParen);
      case ']': if (*depth > 0) --*depth; return one(Tok::kRBracket);
      case ')': if (*depth > 0) --*depth; return one(Tok::kRParen);
      case ',': return one(Tok::kComma);
      case ':': return one(Tok::kColon);
      case ';': return one(Tok::kSemicolon);
      case '+': return one(Tok::kPlus);
      case '-': return one(Tok::kMinus);
      case '*': return one(Tok::kStar);
      case '/': return one(Tok::kSlash);
      case '%': return one(Tok::kPercent);
      case '=': return n == '=' ? two(Tok::kEq) : one(Tok::kAssign);
      case '!': return n == '=' ? two(Tok::kNe) : one(Tok::kNot);
      case '<': return n == '=' ? two(Tok::kLe) : one(Tok::kLt);
      case '>': return n == '=' ? two(Tok::kGe) : one(Tok::kGt);
      case '&':
        if (n == '&') return two(Tok::kAndAnd);
        fail(file_, l, "unexpected character '&' (did you mean '&&'?)");
      case '|':
        if (n == '|') return two(Tok::kOrOr);
        fail(file_, l, "unexpected character '|' (did you mean '||'?)");
      case '.':
        if (n == '.') return two(Tok::kDotDot);
        fail(file_, l, "unexpected character '.' (a range is written lo..hi, a number 0.5)");
      default: break;
    }
    fail(file_, l, "unexpected character " + describe_char(static_cast<unsigned char>(c)));
  }

  const std::string& s_;
  const std::string& file_;
  size_t p_ = 0;
  int line_ = 1, col_ = 1;
};

}  // namespace

std::vector<Token> lex(const std::string& text, const std::string& file) {
  if (text.size() > kMaxInputBytes)
    fail(file, Loc{}, "input is too large (" + std::to_string(text.size()) + " bytes; the limit is " +
                          std::to_string(kMaxInputBytes) + ")");
  return Lexer(text, file).run();
}

}  // namespace tessel::te::parse
