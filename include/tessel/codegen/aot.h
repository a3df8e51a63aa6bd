// Ahead-of-time output of a lowered function: an object file, a C header, or a self-contained shared
// library. Calling convention: see include/tessel/runtime/c_runtime.h. All writers throw UserError when
// the file cannot be written or the linker fails, InternalError on malformed IR.
#pragma once
#include <string>

#include "tessel/codegen/target.h"
#include "tessel/ir/stmt.h"

namespace tessel::codegen {

/** Writes a relocatable (PIC) object defining NAME and NAME_packed. It references tessel_parallel_for,
 *  tessel_alloc_aligned/tessel_free_aligned (link tessel_runtime) and libm. */
void emit_object(const ir::LoweredFunc& f, const Target& target, const std::string& path);

/** The C header text declaring NAME and NAME_packed, with each argument's dtype, shape and alignment. */
std::string header_text(const ir::LoweredFunc& f);
/** Writes header_text(f) to path. */
void emit_header(const ir::LoweredFunc& f, const std::string& path);

/** Writes a shared library exporting NAME, NAME_packed and the tessel_* runtime C API. The thread pool
 *  is linked in from the PIC runtime archive (TESSEL_RUNTIME_ARCHIVE env var overrides its build-time
 *  path; TESSEL_CXX overrides the linker driver), so a process without LLVM or tessel can dlopen it. */
void emit_shared_library(const ir::LoweredFunc& f, const Target& target, const std::string& path);

/** The assembly text for f (after O3), for debugging. */
std::string emit_assembly(const ir::LoweredFunc& f, const Target& target);

}  // namespace tessel::codegen
