// Code features: a reader of x86-64 AT&T assembly (LLVM's output) that finds the hot loop and counts
// what feeds its floating-point work.
//
// Guide:
//   parse            local labels (".LBB2_5:") and instructions (tab, mnemonic, operands; comments dropped)
//   loops            a jump to a label at or before it closes a loop [label, jump]; innermost = no other
//                    loop strictly inside
//   hot loop         the innermost loop with the most FLOPs per iteration (FMA: 2 x lanes; add, sub, mul,
//                    div, min, max: lanes; lanes = register bytes / element bytes, 1 for scalar ss/sd)
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

/** Instructions, and the instruction index each label points at. */
void parse(const std::string& text, std::vector<Instruction>* ins, std::map<std::string, size_t>* labels) {
  std::istringstream is(text);
  std::string line;
  while (std::getline(is, line)) {
    if (line.empty()) continue;
    if (line[0] != '\t' && line[0] != ' ') {  // a local label (".LBB0_3:"); function symbols are not loop heads
      if (line[0] == '.' && line.back() == ':') (*labels)[line.substr(0, line.size() - 1)] = ins->size();
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
  parse(assembly, &ins, &labels);
  struct Loop {
    size_t begin, end;  // instruction indices, inclusive
  };
  std::vector<Loop> loops;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (ins[i].mnemonic.empty() || ins[i].mnemonic[0] != 'j') continue;
    auto it = labels.find(ins[i].operands);
    if (it != labels.end() && it->second <= i) loops.push_back({it->second, i});
  }
  std::vector<double> f(kCodeFeatureLength, 0.0);
  f[kInstructions] = double(ins.size());
  f[kLoops] = double(loops.size());
  double best_flops = -1;
  for (const Loop& l : loops) {
    bool innermost = std::none_of(loops.begin(), loops.end(), [&](const Loop& o) {
      return &o != &l && o.begin >= l.begin && o.end <= l.end && o.end - o.begin < l.end - l.begin;
    });
    if (!innermost) continue;
    std::vector<double> h(kCodeFeatureLength, 0.0);
    std::map<std::string, int> updates;  // carried register -> updates per iteration (-1: not carried)
    for (size_t i = l.begin; i <= l.end; ++i) {
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
    if (h[kHotFlops] <= best_flops) continue;
    best_flops = h[kHotFlops];
    double n = double(l.end - l.begin + 1);
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

double hot_loop_flops_per_cycle(const std::vector<float>& code) {
  if (code.size() != size_t(kCodeFeatureLength)) return 0;
  auto count = [&](int k) { return std::exp2(double(code[k])) - 1.0; };  // undo log2(1 + x)
  double flops = count(kHotFlops);
  if (flops <= 0) return 0;
  double arith = count(kHotFma) + count(kHotVectorArith);
  double cycles = std::max({count(kHotInstructions) / 4.0, arith / 2.0, count(kHotLoads) / 2.0,
                            count(kHotStores) / 1.0, 4.0 * count(kHotChain), 1.0}) +
                  4.0 * count(kHotGathers);
  return flops / cycles;
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
