//===- MemoryProfileTest.cpp - Memory profile against a brute force -------===//
//
// Checks computeMemoryProfile on random training steps against a reference
// that applies the same documented storage rules with none of the
// implementation's machinery: groups relabeled by hand, last uses found by
// scanning the whole schedule, the live bytes summed position by position.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/MemoryProfile.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace mlir;

namespace {

/// Orders values by identity, for std::map and std::set.
struct ValueLess {
  bool operator()(Value a, Value b) const {
    return a.getAsOpaquePointer() < b.getAsOpaquePointer();
  }
};
using ValueSet = std::set<Value, ValueLess>;

/// A random step: elementwise ops on tensors of 1 to 4 widths (so that some
/// operands share the result's type and some do not), barriers and
/// elementwise ops in the backward region, forward values used there.
std::string randomStep(std::mt19937 &rng) {
  std::uniform_int_distribution<int> pick(0, 1 << 20);
  int widths[] = {4, 4, 8, 16};
  std::vector<std::pair<std::string, int>> values = {{"%a0", 4}, {"%a1", 8}};
  std::ostringstream os;
  os << "func.func @step(%a0: tensor<4xf32>, %a1: tensor<8xf32>) -> "
        "tensor<4xf32> {\n";
  int counter = 0;
  auto type = [](int w) { return "tensor<" + std::to_string(w) + "xf32>"; };
  auto emit = [&](bool backward) {
    int w = widths[pick(rng) % 4];
    std::vector<std::string> same;
    for (auto &[name, width] : values)
      if (width == w)
        same.push_back(name);
    std::string name = "%v" + std::to_string(counter++);
    std::string indent = backward ? "    " : "  ";
    if (same.empty() || pick(rng) % 5 == 0) {
      os << indent << name << " = tensor.empty() : " << type(w) << "\n";
      // Give it a value: an elementwise op on it (fused or not).
      std::string filled = "%v" + std::to_string(counter++);
      os << indent << filled << " = math.tanh " << name << " : " << type(w)
         << "\n";
      values.push_back({filled, w});
      return;
    }
    std::string x = same[pick(rng) % same.size()];
    std::string y = same[pick(rng) % same.size()];
    switch (pick(rng) % 4) {
    case 0:
      os << indent << name << " = math.tanh " << x << " : " << type(w) << "\n";
      break;
    case 1:
      os << indent << name << " = arith.mulf " << x << ", " << y << " : "
         << type(w) << "\n";
      break;
    case 2:
      os << indent << name << " = arith.addf " << x << ", " << y << " : "
         << type(w) << "\n";
      break;
    default:
      os << indent << name << " = remat.barrier " << x << " : " << type(w)
         << "\n";
      break;
    }
    values.push_back({name, w});
  };
  int forward = 3 + pick(rng) % 12, backward = 1 + pick(rng) % 10;
  for (int i = 0; i < forward; ++i)
    emit(false);
  os << "  %g = remat.backward {\n";
  for (int i = 0; i < backward; ++i)
    emit(true);
  // Yield something of width 4 (an argument if nothing else).
  std::string result = "%a0";
  for (auto &[name, width] : values)
    if (width == 4)
      result = name;
  os << "    remat.yield " << result << " : tensor<4xf32>\n";
  os << "  } : tensor<4xf32>\n  return %g : tensor<4xf32>\n}\n";
  return os.str();
}

/// The reference: the rules of MemoryProfile, computed by brute force.
struct Reference {
  int64_t peak = 0;
  ValueSet saved;

  explicit Reference(func::FuncOp function) {
    auto backward = remat::getBackwardOp(function.getBody());
    std::vector<Operation *> schedule;
    for (Operation &op : function.getBody().front()) {
      if (&op != backward.getOperation()) {
        schedule.push_back(&op);
        continue;
      }
      for (Operation &inner : backward.getBody().front())
        schedule.push_back(&inner);
    }
    int64_t n = schedule.size();
    auto position = [&](Operation *op) {
      for (int64_t i = 0; i < n; ++i)
        if (schedule[i] == op || schedule[i]->isProperAncestor(op))
          return i;
      return int64_t(-1);
    };
    auto bytes = [](Value v) {
      return cast<ShapedType>(v.getType()).getNumElements() * 4;
    };
    std::map<Value, int, ValueLess> group;
    std::map<int, std::vector<Value>> members;
    std::map<int, bool> counted;
    std::map<int, int64_t> size, first;
    int next = 0;
    auto add = [&](Value v, int64_t at, bool isCounted) {
      group[v] = next;
      members[next] = {v};
      counted[next] = isCounted;
      size[next] = isCounted ? bytes(v) : 0;
      first[next] = at;
      ++next;
    };
    auto lastOf = [&](int g) {
      int64_t last = first[g];
      for (Value v : members[g])
        for (Operation *user : v.getUsers())
          last = std::max(last, position(user));
      if (llvm::any_of(members[g], [&](Value v) {
            return llvm::is_contained(backward.getResults(), v);
          }))
        last = n - 1;
      return last;
    };
    auto merge = [&](Value from, Value into) {
      int a = group[from], b = group[into];
      if (a == b)
        return;
      for (Value v : members[a]) {
        group[v] = b;
        members[b].push_back(v);
      }
      members.erase(a);
      counted[b] = counted[b] || counted[a];
      size[b] = std::max(size[b], size[a]);
      first[b] = std::min(first[b], first[a]);
    };
    for (BlockArgument arg : function.getArguments())
      add(arg, 0, false);
    for (int64_t at = 0; at < n; ++at) {
      Operation *op = schedule[at];
      for (Value result : op->getResults()) {
        bool fused = result.hasOneUse() &&
                     op->hasTrait<OpTrait::Elementwise>() &&
                     (*result.user_begin())->hasTrait<OpTrait::Elementwise>();
        add(result, at, !isa<tensor::EmptyOp, remat::BarrierOp>(op) && !fused);
      }
      if (isa<remat::BarrierOp>(op)) {
        merge(op->getResult(0), op->getOperand(0));
      } else if (op->hasTrait<OpTrait::Elementwise>()) {
        for (Value operand : op->getOperands()) {
          int g = group[operand];
          if (operand.getType() == op->getResult(0).getType() && counted[g] &&
              lastOf(g) == at) {
            merge(op->getResult(0), operand);
            break;
          }
        }
      }
    }
    for (auto [result, yielded] :
         llvm::zip(backward.getResults(), backward.getYield().getOperands())) {
      add(result, n - 1, false);
      merge(result, yielded);
    }
    for (int64_t at = 0; at < n; ++at) {
      int64_t live = 0;
      for (auto &[g, values] : members)
        if (counted[g] && first[g] <= at && at <= lastOf(g))
          live += size[g];
      peak = std::max(peak, live);
    }
    backward.getBody().walk([&](Operation *op) {
      for (Value operand : op->getOperands())
        if (!backward->isAncestor(operand.getParentBlock()->getParentOp()))
          saved.insert(operand);
    });
  }
};

TEST(MemoryProfileTest, MatchesBruteForceOnRandomSteps) {
  MLIRContext context;
  context
      .loadDialect<remat::RematDialect, arith::ArithDialect, func::FuncDialect,
                   math::MathDialect, tensor::TensorDialect>();
  std::mt19937 rng(20261122);
  for (int trial = 0; trial < 500; ++trial) {
    std::string source = randomStep(rng);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    ASSERT_TRUE(module) << source;
    auto function = cast<func::FuncOp>(&module->getBody()->front());
    FailureOr<remat::MemoryProfile> profile =
        remat::computeMemoryProfile(function);
    ASSERT_TRUE(succeeded(profile)) << source;
    Reference reference(function);
    EXPECT_EQ(profile->peakBytes, reference.peak) << source;
    ValueSet saved;
    for (const remat::SavedValue &value : profile->saved)
      saved.insert(value.value);
    EXPECT_EQ(saved, reference.saved) << source;
    int64_t activation = 0, arguments = 0;
    for (Value value : reference.saved)
      (isa<BlockArgument>(value) ? arguments : activation) +=
          cast<ShapedType>(value.getType()).getNumElements() * 4;
    EXPECT_EQ(profile->savedActivationBytes, activation) << source;
    EXPECT_EQ(profile->savedArgumentBytes, arguments) << source;
  }
}

} // namespace
