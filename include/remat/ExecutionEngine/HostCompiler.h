//===- HostCompiler.h - A lowered step to host objects, in parallel -*- C++
//-*-===//
//
// Compiles a training step lowered to the LLVM dialect into relocatable
// objects for the host, in parts that are optimized and code-generated on
// several threads, and links such objects into the running process. The
// objects are what remat-run's step cache stores: the same code is loaded
// whether it was just compiled or read back.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_EXECUTIONENGINE_HOSTCOMPILER_H
#define REMAT_EXECUTIONENGINE_HOSTCOMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace remat {

/// The relocatable objects of one step, one per part, in part order.
using ObjectFiles = std::vector<std::string>;

/// The function the objects' global constructors are gathered into; run
/// once after loading (for CUDA: loading the step's cubins).
inline constexpr llvm::StringLiteral kInitFunction = "__remat_init";
/// The function the global destructors are gathered into; run before the
/// code is unloaded.
inline constexpr llvm::StringLiteral kFiniFunction = "__remat_fini";

struct HostCompileOptions {
  /// LLVM's IR optimization and code generation level, 0 to 3.
  unsigned optLevel = 3;
  /// Threads that optimize and code-generate parts; 0 for one per core.
  /// The parts depend on the module alone, so the objects are the same
  /// bytes for any count.
  unsigned threads = 0;
  /// A function (the entry point's C interface, `_mlir_ciface_step`) that
  /// also gets a packed form `_mlir_<name>(void **args)`, as MLIR's
  /// ExecutionEngine makes: arguments, then the result, through pointers.
  std::string packedFunction;
};

/// Returns the number of parts the optimized functions of a module, of
/// `instructions` LLVM instructions in all, are cut into: about 3k
/// instructions a part, at most 256. Each glue function (a large loop-free
/// function, compiled at -O0) is a part of its own besides.
unsigned getNumParts(uint64_t instructions);

/// Translates `module` (LLVM dialect) to LLVM IR for `machine`'s target,
/// gathers its constructors and destructors into kInitFunction and
/// kFiniFunction, gives every symbol external linkage, cuts it into parts by
/// function (getNumParts, balanced by instructions; glue alone) and returns
/// each part optimized and compiled to an object. Phases are timed under
/// `timing`.
llvm::Expected<ObjectFiles> compileHostObjects(
    mlir::ModuleOp module, const llvm::orc::JITTargetMachineBuilder &machine,
    const HostCompileOptions &options, mlir::TimingScope &timing);

/// Objects linked into this process (ORC's LLJIT with JITLink); undefined
/// symbols resolve to `symbols`, then to the process's own.
class LoadedStep {
public:
  using SymbolMapFn =
      llvm::function_ref<llvm::orc::SymbolMap(llvm::orc::MangleAndInterner)>;

  /// Links `objects` and runs kInitFunction if they define it.
  static llvm::Expected<std::unique_ptr<LoadedStep>>
  load(const ObjectFiles &objects,
       const llvm::orc::JITTargetMachineBuilder &machine, SymbolMapFn symbols);
  /// Runs kFiniFunction if the objects define it.
  ~LoadedStep();

  /// The address of the function or variable `name`.
  llvm::Expected<void *> lookup(llvm::StringRef name);

private:
  LoadedStep() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*fini)() = nullptr;
};

} // namespace remat

#endif // REMAT_EXECUTIONENGINE_HOSTCOMPILER_H
