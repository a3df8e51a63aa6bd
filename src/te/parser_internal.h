// Private to the .te parser: tokens (lexer.cpp), the syntax tree (parser_syntax.cpp builds it,
// parser.cpp turns it into tensors) and the limits that keep any input from crashing or hanging.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessel/ir/dtype.h"
#include "tessel/te/parser.h"

namespace tessel::te::parse {

// Limits (documented in docs/te-format.md).
constexpr size_t kMaxInputBytes = size_t(1) << 20;  // 1 MiB of text
constexpr int kMaxNesting = 256;                    // parentheses, calls, unary operators
constexpr int kMaxExprDepth = 512;                  // depth of one statement's expression tree
constexpr int kMaxChainDepth = 16384;               // expression depth summed along a chain of statements
constexpr int kMaxDims = 32;                        // dimensions of a tensor, axes of a reduction
constexpr int64_t kMaxElements = (int64_t(1) << 31) - 1;  // elements of one tensor

struct Loc {
  int line = 1, col = 1;
};

/** Throws ParseError at loc. */
[[noreturn]] void fail(const std::string& file, Loc loc, const std::string& message);

enum class Tok : uint8_t {
  kEnd, kNewline, kIdent, kInt, kFloat,
  kLBracket, kRBracket, kLParen, kRParen, kComma, kColon, kSemicolon, kAssign, kDotDot,
  kEq, kNe, kLt, kLe, kGt, kGe, kAndAnd, kOrOr, kNot, kPlus, kMinus, kStar, kSlash, kPercent,
};
/** How a token kind is spelled in messages: "']'", "end of line", "a name". */
const char* tok_name(Tok t);

struct Token {
  Tok kind = Tok::kEnd;
  Loc loc;
  std::string text;  // identifier text, or the spelling of a number
  int64_t ival = 0;
  double fval = 0;
};

/** Splits text into tokens. Newlines inside () and [] are dropped (implicit line joining); `#` starts a
 *  comment. Throws ParseError for unknown characters and numbers out of range. Ends with kEnd. */
std::vector<Token> lex(const std::string& text, const std::string& file);

/** A node of an expression as written (before names are resolved and types checked). */
struct Ast;
using AstPtr = std::unique_ptr<Ast>;

struct AxisSpec {  // a reduction axis: `k` or `k: lo..hi`
  std::string name;
  Loc loc;
  AstPtr lo, hi;  // null: the range is inferred
};

struct Ast {
  enum class Kind : uint8_t { kInt, kFloat, kBool, kName, kRead, kUnary, kBinary, kCall, kCast, kReduce };
  Kind kind;
  Loc loc;
  std::string name;   // kName: the name; kRead: the tensor; kCall: the function; kReduce: sum/prod/...
  Tok op = Tok::kEnd; // kUnary / kBinary
  int64_t ival = 0;   // kInt; kBool (0/1)
  double fval = 0;    // kFloat
  ir::DataType type;  // kCast
  std::vector<AstPtr> args;  // operands, indices, call arguments, cast operand, reduction source
  std::vector<AxisSpec> axes;  // kReduce
  AstPtr where;                // kReduce: optional condition
  int depth = 1;               // height of this subtree
  Ast(Kind k, Loc l) : kind(k), loc(l) {}
};

/** One line of a program. */
struct Statement {
  enum class Kind : uint8_t { kConst, kInput, kCompute };
  Kind kind = Kind::kCompute;
  Loc loc;                // start of the statement
  std::string name;
  Loc name_loc;
  bool output = false;    // marked `output`
  std::vector<std::string> indices;  // compute: left-hand index names
  std::vector<Loc> index_locs;
  bool has_type = false;  // `: dtype` given
  ir::DataType dtype;
  Loc type_loc;
  bool has_shape = false; // `[extents]` given (always for inputs)
  std::vector<AstPtr> shape;
  AstPtr value;           // const value or compute body
};

struct Program {
  std::vector<Statement> statements;
  Loc end;  // where the text ends
};

/** Parses tokens into statements (syntax only). Throws ParseError. */
Program parse_syntax(const std::vector<Token>& tokens, const std::string& file);

/** The element types .te accepts by name (scalar types of ir::DataType), or false. */
bool dtype_from_name(const std::string& name, ir::DataType* out);
/** Words that cannot name a tensor, index or constant. */
bool is_reserved(const std::string& name);
/** Reduction functions: sum, prod, max_reduce, min_reduce. */
bool is_reducer(const std::string& name);

}  // namespace tessel::te::parse
