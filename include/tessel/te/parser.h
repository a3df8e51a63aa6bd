// The .te text format: computations written as einsum-like statements (docs/te-format.md).
//   const N = 1024
//   input A: float32[N, 512]
//   input B: float32[512, N]
//   C[i, j] = sum(A[i, k] * B[k, j], k)
// parse_te builds the same te::placeholder / te::compute DAG the C++ API builds; print_te prints a
// program back as canonical .te text (explicit shapes, dtypes and reduction ranges).
#pragma once
#include <string>
#include <vector>

#include "tessel/support/error.h"
#include "tessel/te/tensor.h"

namespace tessel::te {

/** A parsed program: inputs in declaration order; outputs are the tensors no other statement reads,
 *  plus those marked `output`, in statement order. */
struct TeProgram {
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};

/** A syntax, shape or type error in .te text; what() is "FILE:LINE:COL: error: MESSAGE". */
class ParseError : public UserError {
 public:
  ParseError(const std::string& file, int line, int column, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  /** The message without the location prefix. */
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_, column_;
  std::string message_;
};

/** Parses .te text; filename is used in error locations. Throws ParseError on any mistake. */
TeProgram parse_te(const std::string& text, const std::string& filename = "<input>");

/** Reads and parses a .te file; UserError "cannot read FILE" when it cannot be read. */
TeProgram parse_te_file(const std::string& path);

/** Prints a program as .te text; parse_te(print_te(p)) builds a structurally identical computation.
 *  Throws UserError when p holds something .te cannot express (vector types, free variables,
 *  names that are not identifiers). */
std::string print_te(const TeProgram& p);

}  // namespace tessel::te
