// Stage-DAG queries shared by the CPU (cpu_rules.cpp) and GPU (gpu_rules.cpp) sketch rules.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessel/tuner/search_space.h"

namespace tessel::tuner::rule_util {

/** The stage of that name, or null. */
const schedule::Stage* find_stage(const schedule::Schedule& s, const std::string& name);
/** Stages reading `name` directly. */
std::vector<std::string> direct_consumers(const schedule::Schedule& s, const std::string& name);
/** An elementwise intermediate (inlined by the rules). */
bool will_inline(const schedule::Stage& st);
/** Consumers after elementwise intermediates are inlined (sorted, unique). */
std::vector<std::string> effective_consumers(const schedule::Schedule& s, const std::string& name);
/** Extents of the stage's data axes. */
std::vector<int64_t> data_extents(const schedule::Stage& st);
/** Points of the stage's data space (the product of data_extents). */
int64_t data_points(const schedule::Stage& st);
/** The elementwise output a reduction can be fused into (its only consumer, same data shape), or "". */
std::string fusable_epilogue(const schedule::Schedule& s, const schedule::Stage& producer);
/** True when stage is the fused elementwise epilogue of a reduction with data reuse (the tiling rule of
 *  that reduction schedules it). */
bool is_tiled_epilogue(const schedule::Schedule& s, const schedule::Stage& stage);
/** The rule inlining elementwise intermediates (the first rule of both default rule lists). */
std::shared_ptr<const SketchRule> inline_injective_rule();

}  // namespace tessel::tuner::rule_util
