// libFuzzer target for the .te parser: parse; on success print and parse the printed text again, which
// must succeed and print identically. A tessel::UserError (ParseError) is an expected outcome for bad
// input; any other exception, a crash, a hang or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tessel/te/parser.h"

namespace {
[[noreturn]] void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "te_parser_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  tessel::te::TeProgram p;
  try {
    p = tessel::te::parse_te(text, "fuzz.te");
  } catch (const tessel::UserError&) {
    return 0;  // a reported mistake in the input
  } catch (const std::exception& e) {
    bug("parse_te threw a non-UserError exception", e.what());
  }
  std::string printed, again;
  try {
    printed = tessel::te::print_te(p);
  } catch (const std::exception& e) {
    bug("print_te failed on a parsed program", e.what());
  }
  // The canonical text is longer than the source (explicit shapes, folded constants); past the 1 MiB input
  // limit it cannot be parsed back (documented in docs/te-format.md).
  if (printed.size() > (size_t(1) << 20)) return 0;
  try {
    again = tessel::te::print_te(tessel::te::parse_te(printed, "printed.te"));
  } catch (const std::exception& e) {
    bug("the printed program does not parse", std::string(e.what()) + "\n--- printed:\n" + printed);
  }
  if (again != printed) bug("print -> parse -> print differs", "--- first:\n" + printed + "--- second:\n" + again);
  return 0;
}
