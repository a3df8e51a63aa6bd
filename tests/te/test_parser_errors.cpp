// .te errors: each mistake gives FILE:LINE:COL and its own message (never a crash, never another
// exception type); limits on size and nesting hold.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "tessel/te/parser.h"

using namespace tessel;

namespace {

struct Case {
  const char* text;
  int line, col;
  const char* message;  // a part of the message
};

void expect_error(const std::string& text, int line, int col, const std::string& message) {
  INFO("input:\n" << text.substr(0, 300));
  try {
    te::parse_te(text, "bad.te");
    FAIL("no error");
  } catch (const te::ParseError& e) {
    INFO("what(): " << e.what());
    CHECK(e.file() == "bad.te");
    CHECK(e.line() == line);
    CHECK(e.column() == col);
    CHECK_THAT(std::string(e.what()),
               Catch::StartsWith("bad.te:" + std::to_string(line) + ":" + std::to_string(col) + ": error: "));
    CHECK_THAT(e.message(), Catch::Contains(message));
  }
}

const Case kCases[] = {
    // syntax
    {"input A: float32[4]\nB[i] = A[i] @ 2\n", 2, 13, "unexpected character '@'"},
    {"input A: float32[4, 4]\nB[i, j = A[i, j]\n", 2, 8, "expected ']' after index list, found '='"},
    {"input A: float32[4]\nC[i] A[i]\n", 2, 6, "expected '=' after C[...], found 'A'"},
    {"input A: float32[4]\nC[i] = exp(A[i]\n", 3, 1, "expected ')' after the arguments of exp, found end of file"},
    {"input A: float32[4]\nC[i] = 0 < A[i] < 1\n", 2, 17, "comparisons do not chain"},
    {"input A: float32[4]\nC[where] = A[where]\n", 2, 3, "'where' is a reserved word and cannot be used as an index name"},
    {"const N = 12abc\n", 1, 11, "invalid number '12abc'"},
    {"const N = 99999999999999999999\n", 1, 11, "integer 99999999999999999999 is too large"},
    {"input A: float31[4]\n", 1, 10, "unknown element type 'float31'"},
    {"input A: float32[4]\nC[i] = A[i] +\n", 2, 14, "expected an expression, found end of line"},
    // names
    {"input A: float32[4]\nB[i] = X[i] + A[i]\n", 2, 8, "unknown tensor 'X'"},
    {"input A: float32[4]\nC[i] = A[i] + q\n", 2, 15, "unknown name 'q'"},
    {"input A: float32[4]\nA[i] = A[i] * 2.0\n", 2, 1, "tensor 'A' is already defined (line 1)"},
    {"input A: float32[4]\nC[i] = C[i] + A[i]\n", 2, 8, "tensor C cannot read itself"},
    {"input A: float32[4]\nC[i] = foo(A[i])\n", 2, 8, "unknown function 'foo'"},
    {"input A: float32[4]\nC[i] = exp(A[i], A[i])\n", 2, 8, "exp takes 1 argument, got 2"},
    {"input A: float32[4]\ninput B: float32[4]\nC[i] = A[i]\n", 2, 7, "input B is never read"},
    {"input A: float32[4]\n", 2, 1, "the program computes nothing"},
    {"const N = 4\ninput A: float32[N]\nC[i] = A[i] + A\n", 3, 15, "tensor A must be indexed: A[...]"},
    // shapes
    {"input A: float32[4, 4]\nB[i] = A[i, i, i]\n", 2, 8, "tensor A has 2 dimensions but is indexed with 3"},
    {"input A: float32[4]\nP[c, y] = A[c]\n", 2, 6,
     "cannot infer the extent of index 'y' (declare the output shape"},
    {"input A: float32[4]\nC[i] = sum(A[i] * 2.0, k)\n", 2, 24,
     "reduction axis k has no extent: use it to index a declared tensor or give sum(..., k: 0..16)"},
    {"input A: float32[4]\ninput B: float32[5]\nC[i] = A[i] + B[i]\n", 3, 17,
     "conflicting extents for index 'i': 4 (dimension 0 of A) vs 5 (dimension 0 of B)"},
    {"input A: float32[4, 0]\n", 1, 21, "extent of dimension 1 of A must be > 0, got 0"},
    {"input A: float32[65536, 65536]\n", 1, 25, "tensor A is too large"},
    {"input A: float32[4]\nC[i]: float32[8] = A[i]\n", 2, 22,
     "index 'i' ranges over 0..8 but dimension 0 of A has extent 4"},
    {"input A: float32[4]\nC[i]: float32[4, 4] = A[i]\n", 2, 15,
     "the declared shape of C has 2 dimension(s) but the left-hand side names 1 index(es)"},
    {"input A: float32[4]\nC[i] = sum(A[i] * 2.0, k: 3..3)\n", 2, 24, "the range 3..3 of axis k is empty"},
    {"input A: float32[4, 4]\nC[i] = sum(A[i, k], k) + 1.0\n", 2, 8,
     "a reduction (sum) must be the whole right-hand side of a statement"},
    {"input A: float32[2.5]\n", 1, 18, "a shape extent must be an integer, got 2.5"},
    // types
    {"input A: float32[4]\ninput I: int32[4]\nC[i] = A[i] + I[i]\n", 3, 13, "type mismatch: float32 vs int32 in '+'"},
    {"input I: int32[4]\nC[i] = I[i] * 1.5\n", 2, 13, "type mismatch: int32 vs floating-point constant 1.5"},
    {"input I: int8[4]\nC[i] = I[i] + 300\n", 2, 13, "constant 300 does not fit in int8"},
    {"input A: float32[4]\nC[i]: float64 = A[i]\n", 2, 17,
     "type mismatch: C is declared float64 but its value is float32"},
    {"input A: float32[4]\nC[i] = if_then_else(A[i], 1.0, 0.0)\n", 2, 21,
     "the condition of if_then_else must be bool, got float32"},
    {"input A: float32[4]\nC[i] = !A[i]\n", 2, 8, "'!' needs a bool operand, got float32"},
    {"input I: int32[4]\nC[i] = exp(I[i])\n", 2, 8, "exp needs float arguments, got int32"},
    {"input A: float32[4]\nC[i] = A[i] > 0 && A[i]\n", 2, 17, "'&&' needs bool operands, got float32"},
    {"input A: int32[4]\nC[i] = A[i] / (2 - 2)\n", 2, 13, "integer division by zero"},
    {"const N = 9223372036854775807 + 1\n", 1, 31, "integer overflow in a constant expression"},
    {"input B: bool[4]\nC[i] = sum(B[i, k], k)\n", 2, 12, "tensor B has 1 dimensions but is indexed with 2"},
    {"input B: bool[4, 4]\nC[i] = sum(B[i, k], k)\n", 2, 12, "sum needs a numeric operand, got bool"},
    {"input A: float32[4]\nC[i] = A[i] * (0.0 / 0.0)\n", 2, 20, "not a number"},
    {"input A: float32[4]\nC[i] = A[i] * 1e39\n", 2, 13, "constant 1e+39 is out of range for float32"},
};

}  // namespace

TEST_CASE("te errors: file:line:column and a specific message", "[te][errors]") {
  for (const Case& c : kCases) expect_error(c.text, c.line, c.col, c.message);
}

TEST_CASE("te errors: limits on nesting, depth and size", "[te][errors]") {
  std::string deep = "input A: float32[4]\nC[i] = " + std::string(300, '(') + "A[i]" + std::string(300, ')') + "\n";
  expect_error(deep, 2, 8 + 256, "nested too deeply (more than 256 levels)");
  std::string neg = "input A: float32[4]\nC[i] = " + std::string(1000, '-') + "A[i]\n";
  expect_error(neg, 2, 8 + 255, "nested too deeply");
  std::string chain = "input A: float32[4]\nC[i] = A[i]";
  for (int k = 0; k < 600; ++k) chain += " + A[i]";
  expect_error(chain + "\n", 2, 13 + 7 * 510, "expression is too deep (more than 512 levels)");
  std::string big = "# " + std::string((1 << 20), 'x') + "\n";
  expect_error(big, 1, 1, "input is too large");
  std::string dims = "input A: float32[";
  for (int d = 0; d < 40; ++d) dims += d ? ", 1" : "1";
  expect_error(dims + "]\n", 1, 18 + 3 * 32, "too many dimensions (the limit is 32)");
  // A long chain of statements is refused before it could exhaust the stack.
  std::ostringstream stmts;
  stmts << "input A: float32[4]\nT0[i] = A[i] + 1.0\n";
  for (int k = 1; k < 3000; ++k) stmts << "T" << k << "[i] = T" << k - 1 << "[i] * 2.0\n";
  CHECK_THROWS_WITH(te::parse_te(stmts.str()), Catch::Contains("nested too deeply (statements reading statements"));
}

TEST_CASE("te errors: any junk is a ParseError, never another exception", "[te][errors]") {
  const char* junk[] = {"", "\n\n", "[", "]", ")", "input", "input A", "input A:", "input A: float32",
                        "input A: float32[", "input A: float32[4", "C[i] =", "C[i] = sum(", "C[i] = sum(1, ",
                        "C[i] = sum(1, k:", "C[i] = sum(1, k: 0..", "C[i] = cast<", "C[i] = cast<float32>",
                        "const", "const N", "const N =", "output", "output C", "\x01\x02", "C[i]: float32[4] = 1.5",
                        "C[i]: int8[4] = int8(1e30)", "C[i]: int8[4] = 1 / 0", "C[i]: float32[4] = -inf",
                        "C[i]: bool[4] = true", "C[i]: float32[4] = sum(1, k: -5..-1)"};
  for (const char* j : junk) {
    INFO("input: " << j);
    try {
      te::parse_te(j);
    } catch (const te::ParseError&) {
    }
  }
}
