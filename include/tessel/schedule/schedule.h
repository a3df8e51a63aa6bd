// A schedule of a tensor-expression DAG: one Stage per operation, changed only by applying steps,
// which are recorded into the trace. Replaying the trace on a fresh schedule of the same computation
// gives the same schedule (and so the same code).
//
//   Schedule s({C});
//   auto [io, ii] = s.split("C", "i", 32);       // throws UserError when illegal
//   Status st = s.apply(SplitStep{"C", "j", 7}); // returns the error instead (for searches)
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessel/ir/buffer.h"
#include "tessel/schedule/step.h"
#include "tessel/support/error.h"
#include "tessel/te/tensor.h"

namespace tessel::schedule {
using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

/** A loop of a stage: a root axis of the operation, or one made by split/fuse. */
struct Axis {
  std::string name;
  ir::Var var;
  ir::IterKind kind = ir::IterKind::kDataPar;
  int64_t extent = 0;  // for root axes: the domain extent; derived axes: computed from relations
};
using AxisPtr = std::shared_ptr<Axis>;

/** parent = outer * inner_extent + inner (split), or fused = outer * inner_extent + inner (fuse). */
struct Relation {
  enum Kind { kSplit, kFuse } kind;
  AxisPtr parent;       // split: the axis split; fuse: the fused result
  AxisPtr outer, inner;
  int64_t factor = 0;   // split: the requested factor (or number of parts when nparts)
  bool nparts = false;  // extents are re-derived from these when a stage's region is smaller
};

enum class AttachKind { kRoot, kInline, kAt };

struct Stage {
  std::string name;
  te::Operation op;
  std::vector<AxisPtr> root_axes;  // data axes then reduce axes of op
  std::vector<AxisPtr> leaf_axes;  // loop order, outermost first
  std::vector<Relation> relations;
  AttachKind attach = AttachKind::kRoot;
  std::string attach_stage, attach_axis;
  std::map<std::string, std::string> annotations;  // axis -> vectorize/unroll/parallel or a thread tag (bind)
  std::map<std::string, std::map<std::string, int64_t>> pragmas;  // axis -> key -> value
  std::vector<std::pair<int64_t, int64_t>> storage_align;    // per dim: (factor, offset); factor 0 = none
  int layout_dim = -1;           // transform_layout: blocked dimension (-1 = row-major)
  int64_t layout_factor = 0;
  ir::MemScope scope = ir::MemScope::kGlobal;
  bool is_output = false;

  bool is_placeholder() const { return op->kind == te::OperationNode::Kind::kPlaceholder; }
  bool is_reduction() const;
  /** The axis with this name among all axes of the stage (root, leaf or intermediate), or null. */
  AxisPtr find_axis(const std::string& name) const;
  /** Index in leaf_axes, or -1. */
  int leaf_index(const std::string& name) const;
};

class Schedule {
 public:
  /** Stages for every operation reachable from outputs (producers first). */
  explicit Schedule(std::vector<te::Tensor> outputs);

  /** Applies one step: on success it is appended to the trace; on failure nothing changes. */
  Status apply(const Step& step);
  /** Applies steps in order; stops at the first failure (earlier ones stay applied). */
  Status apply_all(const std::vector<Step>& steps);

  // Convenience forms that throw UserError when the step is illegal. They return new axis names.
  std::pair<std::string, std::string> split(const std::string& stage, const std::string& axis, int64_t factor);
  std::pair<std::string, std::string> split_nparts(const std::string& stage, const std::string& axis, int64_t nparts);
  /** Returns {x.o, y.o, x.i, y.i}. */
  std::vector<std::string> tile(const std::string& stage, const std::string& x, const std::string& y, int64_t fx,
                                int64_t fy);
  std::string fuse(const std::string& stage, const std::vector<std::string>& axes);
  void reorder(const std::string& stage, const std::vector<std::string>& order);
  void compute_at(const std::string& stage, const std::string& target, const std::string& axis);
  void compute_inline(const std::string& stage);
  void compute_root(const std::string& stage);
  /** Returns the new stage's name. */
  std::string cache_read(const std::string& tensor, const std::string& scope, const std::vector<std::string>& readers);
  std::string cache_write(const std::string& stage, const std::string& scope);
  void vectorize(const std::string& stage, const std::string& axis);
  void unroll(const std::string& stage, const std::string& axis);
  void parallel(const std::string& stage, const std::string& axis);
  std::string rfactor(const std::string& stage, const std::string& axis);
  void storage_align(const std::string& stage, int dim, int64_t factor, int64_t offset);
  void pragma(const std::string& stage, const std::string& axis, const std::string& key, int64_t value);
  void transform_layout(const std::string& stage, int dim, int64_t factor);
  /** Binds a leaf loop to a GPU index ("blockIdx.x", "threadIdx.y", "vthread", ...). */
  void bind(const std::string& stage, const std::string& axis, const std::string& thread_tag);
  /** Stores the stage's buffer in scope ("global", "local" or "shared"). */
  void set_scope(const std::string& stage, const std::string& scope);

  const std::vector<Step>& trace() const { return trace_; }
  const std::vector<std::shared_ptr<Stage>>& stages() const { return stages_; }
  /** Stage by name; throws UserError listing the stages when absent. */
  const Stage& stage(const std::string& name) const;
  const std::vector<te::Tensor>& outputs() const { return outputs_; }
  /** The current tensor (operation) of a stage name: after cache_write the original name stays bound
   *  to the final output operation, so callers can keep using it as a function argument. */
  te::Tensor tensor(const std::string& name) const;
  /** Names of leaf axes of a stage, outermost first. */
  std::vector<std::string> leaf_names(const std::string& stage) const;
  /** Readable listing: each stage with its leaf loops, annotations and attachment. */
  std::string to_string() const;

  Schedule(const Schedule& o);  // deep copy (stages are copied; ops are immutable and shared)
  Schedule& operator=(const Schedule& o);

 private:
  Stage* find(const std::string& name) const;
  std::string newest_stage_named(const std::string& base) const;
  Status apply_step(const Step& step);  // dispatches to primitive implementations (may throw UserError)
  void replace_op(const te::Operation& old_op, const te::Operation& new_op);
  friend struct Primitives;

  std::vector<std::shared_ptr<Stage>> stages_;
  std::vector<te::Tensor> outputs_;
  std::vector<Step> trace_;
};

/** Makes a Stage (root axes from the operation) for op. */
std::shared_ptr<Stage> make_stage(const te::Operation& op);

}  // namespace tessel::schedule
