// Code features: a reader of x86-64 AT&T assembly (LLVM's output) that finds the hot loop and counts
// what feeds its floating-point work.
//
// Guide:
//   parse            local labels (".LBB2_5:") and instructions (tab, mnemonic, operands; comments dropped)
//   blocks           basic blocks: a block starts at a label, a function symbol, or after a jump or return;
//                    its successors are the jump's local label and, unless the jump is unconditional (or
//                    a return), the next block
//   loops            natural loops: a back edge goes to a block that dominates its source (dominators by
//                    Cooper, Harvey and Kennedy's iterative algorithm from the function entries); a loop is
//                    its header and every block that reaches a back edge's source without passing the
//                    header; innermost = holds no other loop's header. LLVM lays a loop's blocks out of
//                    order (a rotated loop entered at its latch, a padded read's bounds checks placed after
//                    it), so an address interval between a label and a jump back to it is not a loop: an
//                    outer loop's epilogue can look innermost and be taken for the hot loop
//   hot loop         the innermost loop with the most FLOPs per iteration (FMA: 2 x lanes; add, sub, mul,
//                    div, min, max: lanes; lanes = register bytes / element bytes, 1 for scalar ss/sd),
//                    counted over all its blocks, weighted by 4 per enclosing loop (kDepthWeight)
//   memory           an operand with "(": a store when it is the last operand (AT&T: destination), else a
//                    load; lea and prefetch are not accesses; rsp/rbp-relative ones are stack (spills)
//   chains           a float instruction that reads the register it writes (an FMA, vaddps x, acc, acc)
//                    updates an accumulator; one that writes a register without reading it (a load, a
//                    broadcast, a zeroing xor) starts a new value, so that register carries nothing into
//                    the next iteration. The longest chain is the most updates of a carried register.
#include "tessel/costmodel/code_features.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "tessel/codegen/aot.h"
#include "tessel/lower/lower.h"
#include "tessel/schedule/schedule.h"

namespace tessel::costmodel {

namespace {

enum CodeFeature {
  kInstructions,      // instructions in the whole text
  kLoops,             // loops (backward branches)
  kHotFlops,          // FLOPs per iteration of the hot loop
  kHotInstructions,   // its instructions
  kHotFma,            // its FMA instructions
  kHotFmaLanes,       // lanes of its widest FMA
  kHotLoads,          // instructions reading memory
  kHotStores,         // instructions writing memory
  kHotStack,          // stack accesses (spills and reloads)
  kHotBroadcasts,     // vbroadcast*
  kHotScalarFloat,    // scalar float arithmetic (ss/sd)
  kHotGathers,        // vgather*
  kFlopsPerInstruction,
  kFlopsPerLoad,      // FLOPs / max(1, loads)
  kFlopsPerStore,     // FLOPs / max(1, stores)
  kHotVectorArith,    // float arithmetic other than FMA
  kHotChain,          // the longest loop-carried chain: updates per iteration of one accumulator register
};

struct Instruction {
  std::string mnemonic, operands;
};

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

bool is_jump(const std::string& mnemonic) { return !mnemonic.empty() && mnemonic[0] == 'j'; }

/** Lanes of a float instruction: its widest register's bytes over the element size (suffix ps/pd/ph), 1
 *  for scalar (ss/sd/sh). */
int lanes_of(const Instruction& in) {
  const std::string& m = in.mnemonic;
  if (m.size() < 2) return 1;
  std::string suf = m.substr(m.size() - 2);
  if (suf == "ss" || suf == "sd" || suf == "sh") return 1;
  int elem = suf == "pd" ? 8 : suf == "ph" ? 2 : 4;
  const std::string& o = in.operands;
  int reg = o.find("%zmm") != std::string::npos ? 64 : o.find("%ymm") != std::string::npos ? 32 : 16;
  return reg / elem;
}

bool is_fma(const std::string& m) {
  return starts_with(m, "vfmadd") || starts_with(m, "vfmsub") || starts_with(m, "vfnmadd") || starts_with(m, "vfnmsub");
}

/** The operands, split at the commas outside parentheses, trimmed. */
std::vector<std::string> operand_list(const std::string& operands) {
  std::vector<std::string> out(1);
  int depth = 0;
  for (char c : operands) {
    if (c == ',' && depth == 0) {
      out.emplace_back();
      continue;
    }
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c != ' ' && c != '\t') out.back() += c;
  }
  return out;
}

/** "v3" for %xmm3, %ymm3 and %zmm3 (one register; a mask suffix "{%k1}" dropped), else "". */
std::string vector_register(const std::string& operand) {
  if (!starts_with(operand, "%xmm") && !starts_with(operand, "%ymm") && !starts_with(operand, "%zmm")) return "";
  size_t end = operand.find('{');
  std::string reg = "v";
  reg.append(operand, 4, end == std::string::npos ? std::string::npos : end - 4);
  return reg;
}

bool is_float_arith(const std::string& m) {
  static const char* kOps[] = {"vadd", "vsub", "vmul", "vdiv", "vmax", "vmin", "add", "sub", "mul", "div", "max", "min"};
  if (m.size() < 3) return false;
  std::string suf = m.substr(m.size() - 2);
  if (suf != "ps" && suf != "pd" && suf != "ss" && suf != "sd") return false;
  for (const char* op : kOps)
    if (starts_with(m, op) && m.size() == std::char_traits<char>::length(op) + 2) return true;
  return false;
}

/** Instructions, the instruction index each local label points at, and where each function starts. */
void parse(const std::string& text, std::vector<Instruction>* ins, std::map<std::string, size_t>* labels,
           std::vector<size_t>* functions) {
  std::istringstream is(text);
  std::string line;
  while (std::getline(is, line)) {
    if (line.empty()) continue;
    if (line[0] != '\t' && line[0] != ' ') {  // a local label (".LBB0_3:") or a function symbol ("k:")
      if (line.back() == ':') {
        if (line[0] == '.') (*labels)[line.substr(0, line.size() - 1)] = ins->size();
        else functions->push_back(ins->size());
      }
      continue;
    }
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '.' || line[b] == '#') continue;  // directive or comment
    size_t e = line.find_first_of(" \t", b);
    Instruction in{line.substr(b, e == std::string::npos ? std::string::npos : e - b), ""};
    if (e != std::string::npos) {
      size_t ob = line.find_first_not_of(" \t", e);
      if (ob != std::string::npos) in.operands = line.substr(ob);
      size_t c = in.operands.find('#');
      if (c != std::string::npos) in.operands.erase(c);
      while (!in.operands.empty() && std::isspace(static_cast<unsigned char>(in.operands.back()))) in.operands.pop_back();
    }
    ins->push_back(std::move(in));
  }
}

// A loop nested one level deeper is taken to run this many times as often (the trip counts are not in the
// text): a padded convolution's bias-and-relu epilogue, unrolled over the tile (64 vector adds and maxes
// an iteration), has more FLOPs per iteration than its FMA loop (14 FMAs) one level further in, which runs
// over the input channels for every pass of the epilogue's loop.
constexpr double kDepthWeight = 4;

/** An innermost natural loop: its instruction indices (ascending) and how many loops enclose it. */
struct InnerLoop {
  std::vector<size_t> at;
  int depth = 0;
};

/** The innermost natural loops of the text. */
std::vector<InnerLoop> innermost_loops(const std::vector<Instruction>& ins, const std::map<std::string, size_t>& labels,
                                       const std::vector<size_t>& functions) {
  size_t n = ins.size();
  if (n == 0) return {};
  // Basic blocks: leaders at labels, function starts and after every jump or return.
  auto is_end = [&](size_t i) {
    const std::string& m = ins[i].mnemonic;
    return starts_with(m, "ret") || m == "ud2" || m == "jmp" || m == "jmpq";
  };
  std::vector<bool> leader(n + 1, false);
  leader[0] = leader[n] = true;
  std::vector<bool> entry(n + 1, false);
  entry[0] = true;
  for (size_t fn : functions) leader[fn] = entry[fn] = true;
  for (auto& [name, at] : labels) leader[at] = true;
  for (size_t i = 0; i < n; ++i)
    if (is_jump(ins[i].mnemonic) || is_end(i)) leader[i + 1] = true;
  std::vector<size_t> first;  // block b: instructions [first[b], first[b + 1])
  std::vector<size_t> block_of(n + 1);
  for (size_t i = 0; i <= n; ++i) {
    if (leader[i]) first.push_back(i);
    block_of[i] = first.size() - 1;
  }
  size_t nb = first.size() - 1;  // the last leader is the end
  std::vector<std::vector<size_t>> succ(nb), pred(nb);
  for (size_t b = 0; b < nb; ++b) {
    size_t last = first[b + 1] - 1;
    auto add = [&](size_t to) { succ[b].push_back(to), pred[to].push_back(b); };
    if (is_jump(ins[last].mnemonic)) {
      auto it = labels.find(ins[last].operands);
      if (it != labels.end() && it->second < n) add(block_of[it->second]);
    }
    if (!is_end(last) && b + 1 < nb && !entry[first[b + 1]]) add(b + 1);
  }
  // Dominators (Cooper, Harvey, Kennedy): reverse postorder from a virtual root above the entries.
  const size_t root = nb;
  std::vector<size_t> order;  // postorder
  std::vector<int> state(nb + 1, 0);
  std::vector<std::pair<size_t, size_t>> stack;  // (block, next successor)
  std::vector<size_t> roots;
  for (size_t b = 0; b < nb; ++b)
    if (entry[first[b]]) roots.push_back(b);
  auto children = [&](size_t b) -> const std::vector<size_t>& { return b == root ? roots : succ[b]; };
  stack.push_back({root, 0});
  state[root] = 1;
  while (!stack.empty()) {
    auto& [b, k] = stack.back();  // not used after the push below (it may move the stack)
    if (k < children(b).size()) {
      size_t c = children(b)[k++];
      if (!state[c]) state[c] = 1, stack.push_back({c, 0});
    } else {
      order.push_back(b);
      stack.pop_back();
    }
  }
  std::vector<size_t> rpo_index(nb + 1, SIZE_MAX);
  for (size_t i = 0; i < order.size(); ++i) rpo_index[order[i]] = order.size() - 1 - i;
  std::vector<size_t> idom(nb + 1, SIZE_MAX);
  idom[root] = root;
  auto intersect = [&](size_t a, size_t b) {
    while (a != b) {
      while (rpo_index[a] > rpo_index[b]) a = idom[a];
      while (rpo_index[b] > rpo_index[a]) b = idom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = order.size(); i-- > 0;) {
      size_t b = order[i];
      if (b == root) continue;
      size_t d = entry[first[b]] ? root : SIZE_MAX;  // an entry's predecessors include the root
      for (size_t p : pred[b])
        if (idom[p] != SIZE_MAX) d = d == SIZE_MAX ? p : intersect(p, d);
      if (d != SIZE_MAX && idom[b] != d) idom[b] = d, changed = true;
    }
  }
  auto dominates = [&](size_t h, size_t b) {
    if (idom[b] == SIZE_MAX) return false;  // unreachable
    for (; b != root; b = idom[b])
      if (b == h) return true;
    return false;
  };
  // Natural loops, one per header (the union over its back edges).
  std::map<size_t, std::set<size_t>> loops;  // header -> blocks
  for (size_t b = 0; b < nb; ++b)
    for (size_t h : succ[b]) {
      if (!dominates(h, b)) continue;
      std::set<size_t>& body = loops[h];
      body.insert(h);
      std::vector<size_t> work;
      if (body.insert(b).second) work.push_back(b);
      while (!work.empty()) {
        size_t x = work.back();
        work.pop_back();
        for (size_t p : pred[x])
          if (idom[p] != SIZE_MAX && body.insert(p).second) work.push_back(p);
      }
    }
  std::vector<InnerLoop> out;
  for (auto& [h, body] : loops) {
    bool innermost = std::none_of(loops.begin(), loops.end(),
                                  [&](const auto& o) { return o.first != h && body.count(o.first); });
    if (!innermost) continue;
    InnerLoop l;
    for (size_t b : body)
      for (size_t i = first[b]; i < first[b + 1]; ++i) l.at.push_back(i);
    for (auto& [oh, ob] : loops) l.depth += oh != h && ob.count(h);
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace

const std::vector<std::string>& code_feature_names() {
  static const std::vector<std::string> names = {
      "instructions", "loops",       "hot_flops",        "hot_instructions", "hot_fma",       "hot_fma_lanes",
      "hot_loads",    "hot_stores",  "hot_stack",        "hot_broadcasts",   "hot_scalar_float", "hot_gathers",
      "flops_per_instruction", "flops_per_load", "flops_per_store", "hot_vector_arith", "hot_chain"};
  return names;
}

std::vector<float> code_features_from_assembly(const std::string& assembly) {
  std::vector<Instruction> ins;
  std::map<std::string, size_t> labels;
  std::vector<size_t> functions;
  parse(assembly, &ins, &labels, &functions);
  std::vector<double> f(kCodeFeatureLength, 0.0);
  f[kInstructions] = double(ins.size());
  for (size_t i = 0; i < ins.size(); ++i) {  // backward branches, as before natural loops were found
    if (!is_jump(ins[i].mnemonic)) continue;
    auto it = labels.find(ins[i].operands);
    f[kLoops] += it != labels.end() && it->second <= i;
  }
  double best_weight = -1;
  for (const InnerLoop& loop : innermost_loops(ins, labels, functions)) {
    const std::vector<size_t>& body = loop.at;
    std::vector<double> h(kCodeFeatureLength, 0.0);
    std::map<std::string, int> updates;  // carried register -> updates per iteration (-1: not carried)
    for (size_t i : body) {
      const Instruction& in = ins[i];
      const std::string& m = in.mnemonic;
      std::vector<std::string> ops = operand_list(in.operands);
      for (auto& o : ops) o = vector_register(o);
      const std::string& dest = ops.back();
      if (!dest.empty()) {
        bool reads = std::find(ops.begin(), ops.end() - 1, dest) != ops.end() - 1;
        bool arith = is_fma(m) || is_float_arith(m);
        int& u = updates.try_emplace(dest, 0).first->second;
        if (arith && (reads || is_fma(m))) {  // an FMA always reads its destination (AT&T lists it once)
          if (u >= 0) ++u;
        } else {
          u = -1;  // a new value: nothing carried from the last iteration
        }
      }
      if (is_fma(m)) {
        int lanes = lanes_of(in);
        h[kHotFma] += 1;
        h[kHotFlops] += 2.0 * lanes;
        h[kHotFmaLanes] = std::max(h[kHotFmaLanes], double(lanes));
        if (lanes == 1) h[kHotScalarFloat] += 1;
      } else if (is_float_arith(m)) {
        int lanes = lanes_of(in);
        h[kHotFlops] += lanes;
        h[kHotVectorArith] += 1;
        if (lanes == 1) h[kHotScalarFloat] += 1;
      }
      if (starts_with(m, "vgather")) h[kHotGathers] += 1;
      if (starts_with(m, "vbroadcast")) h[kHotBroadcasts] += 1;
      if (in.operands.find('(') != std::string::npos && !starts_with(m, "lea") && !starts_with(m, "prefetch")) {
        size_t comma = in.operands.rfind(',');
        std::string last = comma == std::string::npos ? in.operands : in.operands.substr(comma + 1);
        bool store = last.find('(') != std::string::npos && !starts_with(m, "cmp") && !starts_with(m, "test");
        h[store ? kHotStores : kHotLoads] += 1;
        if (in.operands.find("(%rsp)") != std::string::npos || in.operands.find("(%rbp)") != std::string::npos)
          h[kHotStack] += 1;
      }
    }
    for (auto& [reg, u] : updates) h[kHotChain] = std::max(h[kHotChain], double(u));
    double weight = h[kHotFlops] * std::pow(kDepthWeight, loop.depth);
    if (h[kHotFlops] <= 0 || weight <= best_weight) continue;
    best_weight = weight;
    double n = double(body.size());
    for (int k = kHotFlops; k < kCodeFeatureLength; ++k) f[k] = h[k];
    f[kHotInstructions] = n;
    f[kFlopsPerInstruction] = h[kHotFlops] / n;
    f[kFlopsPerLoad] = h[kHotFlops] / std::max(1.0, h[kHotLoads]);
    f[kFlopsPerStore] = h[kHotFlops] / std::max(1.0, h[kHotStores]);
  }
  std::vector<float> out(kCodeFeatureLength);
  for (int k = 0; k < kCodeFeatureLength; ++k) out[k] = float(std::log2(1.0 + std::max(0.0, f[k])));
  return out;
}

namespace {
// The generic x86-64 core of the roofline and the latency slack: 2 FMA (or vector) pipes, an update of an
// accumulator waits ~4 cycles for the one before.
constexpr double kFmaPipes = 2.0;
constexpr double kFmaLatency = 4.0;

/** Feature k of a code feature vector as the count it was made from (log2(1 + x) undone). */
double count_of(const std::vector<float>& code, int k) { return std::exp2(double(code[size_t(k)])) - 1.0; }
/** Cycles an iteration of the hot loop's arithmetic needs on the FMA pipes. */
double arith_cycles(const std::vector<float>& code) {
  return (count_of(code, kHotFma) + count_of(code, kHotVectorArith)) / kFmaPipes;
}
/** Cycles an iteration of the hot loop's longest accumulator chain takes. */
double chain_cycles(const std::vector<float>& code) { return kFmaLatency * count_of(code, kHotChain); }
}  // namespace

double hot_loop_flops_per_cycle(const std::vector<float>& code) {
  if (code.size() != size_t(kCodeFeatureLength)) return 0;
  double flops = count_of(code, kHotFlops);
  if (flops <= 0) return 0;
  double cycles = std::max({count_of(code, kHotInstructions) / 4.0, arith_cycles(code), count_of(code, kHotLoads) / 2.0,
                            count_of(code, kHotStores) / 1.0, chain_cycles(code), 1.0}) +
                  4.0 * count_of(code, kHotGathers);
  return flops / cycles;
}

double hot_loop_latency_slack(const std::vector<float>& code) {
  if (code.size() != size_t(kCodeFeatureLength)) return 0;
  double arith = arith_cycles(code), chain = chain_cycles(code);
  if (chain <= 0 || arith <= 0) return 0;
  return std::clamp(std::log2(arith / chain), -2.0, 2.0);
}

double hot_loop_flops_per_load(const std::vector<float>& code) {
  return code.size() == size_t(kCodeFeatureLength) ? double(code[kFlopsPerLoad]) : 0.0;
}

bool code_features_supported(const codegen::Target& target) {
  return !target.is_cuda() && starts_with(target.triple, "x86_64");
}

std::vector<float> code_features(const workload::Workload& w, const std::vector<schedule::Step>& trace,
                                 const codegen::Target& target) {
  if (!code_features_supported(target)) return {};
  try {
    schedule::Schedule s(w.outputs);
    if (!s.apply_all(trace).is_ok()) return {};
    return code_features_from_assembly(codegen::emit_assembly(lower::lower(s, w.args(), "features"), target));
  } catch (const std::exception&) {
    return {};  // the candidate does not lower or compile: the models score it last
  }
}

}  // namespace tessel::costmodel
