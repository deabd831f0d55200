//===- HostCompiler.cpp - A lowered step to host objects, in parallel -----===//
//
// This file implements the host compiler: LLVM-dialect module to LLVM IR,
// cut into parts that are optimized and code-generated on a thread pool (as
// LLVM's LTO splits its code generation), and the loader that links the
// objects with ORC.
//
//===----------------------------------------------------------------------===//

#include "remat/ExecutionEngine/HostCompiler.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/Analysis/CFG.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>
#include <mutex>

using namespace remat;
using llvm::cast;
using llvm::dyn_cast;
using llvm::Error;
using llvm::Expected;
using llvm::SmallVector;

/// Instructions a part holds, about: enough that a part's fixed cost (a
/// module, a pass pipeline, an object; about 10 ms) stays small against its
/// work (a loop nest of a few hundred instructions takes 10-100 ms at -O3),
/// and few enough that the parts of a real-size step keep every core busy.
static constexpr uint64_t kInstructionsPerPart = 3000;
static constexpr unsigned kMaxParts = 256;

unsigned remat::getNumParts(uint64_t instructions) {
  return std::clamp<uint64_t>(instructions / kInstructionsPerPart, 1,
                              kMaxParts);
}

/// Replaces the array `arrayName` (llvm.global_ctors or llvm.global_dtors)
/// by a function `functionName` that calls its functions in ascending
/// priority, as the loader of a shared library would. Objects linked by
/// hand run no constructors; remat's loader calls this function instead.
static void gatherStructors(llvm::Module &module, llvm::StringRef arrayName,
                            llvm::StringRef functionName) {
  llvm::GlobalVariable *array = module.getNamedGlobal(arrayName);
  if (!array)
    return;
  // (priority, position, function): equal priorities keep their order.
  SmallVector<std::tuple<uint64_t, unsigned, llvm::Function *>> entries;
  if (auto *init = dyn_cast<llvm::ConstantArray>(array->getInitializer()))
    for (auto [i, operand] : llvm::enumerate(init->operands())) {
      auto *entry = cast<llvm::ConstantStruct>(operand);
      auto *function =
          dyn_cast<llvm::Function>(entry->getOperand(1)->stripPointerCasts());
      if (function)
        entries.emplace_back(
            cast<llvm::ConstantInt>(entry->getOperand(0))->getZExtValue(), i,
            function);
    }
  array->eraseFromParent();
  llvm::sort(entries);

  llvm::LLVMContext &context = module.getContext();
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), false);
  auto *function = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage, functionName, module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "", function));
  for (auto &entry : entries)
    builder.CreateCall(std::get<2>(entry));
  builder.CreateRetVoid();
}

/// Defines `_mlir_<name>(void **args)`, which loads each argument of `name`
/// through the pointer args[i], calls it, and stores its result (if any)
/// through args[n]: MLIR's ExecutionEngine's packed calling convention.
static Error packFunction(llvm::Module &module, llvm::StringRef name) {
  llvm::Function *callee = module.getFunction(name);
  if (!callee || callee->isDeclaration())
    return llvm::createStringError("no function '" + name + "' to pack");
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  auto *type =
      llvm::FunctionType::get(builder.getVoidTy(), builder.getPtrTy(), false);
  auto *packed = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage, "_mlir_" + name, module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "", packed));
  llvm::Value *list = packed->getArg(0);
  auto loadPointer = [&](unsigned index) {
    llvm::Value *slot =
        builder.CreateConstGEP1_64(builder.getPtrTy(), list, index);
    return builder.CreateLoad(builder.getPtrTy(), slot);
  };
  SmallVector<llvm::Value *> args;
  for (llvm::Argument &arg : callee->args())
    args.push_back(
        builder.CreateLoad(arg.getType(), loadPointer(arg.getArgNo())));
  llvm::Value *result = builder.CreateCall(callee, args);
  if (!result->getType()->isVoidTy())
    builder.CreateStore(result, loadPointer(callee->arg_size()));
  builder.CreateRetVoid();
  return Error::success();
}

/// A function without loops of more instructions than this is compiled
/// without optimization: a step's glue (descriptors, calls, launches, and
/// the C interface that unpacks a hundred arguments), which runs once a
/// step, and whose one huge basic block LLVM's code generator schedules in
/// superlinear time (GPT-2 small's CUDA host function, 207k lines of IR:
/// llc 14.8 s at -O3, 3.7 s at -O0; ResNet-50's C interface, 6k
/// instructions: 2.8 s at -O2).
static constexpr uint64_t kGlueInstructions = 1000;

/// Returns whether `function` is glue: defined, loop-free and larger than
/// kGlueInstructions.
static bool isGlue(const llvm::Function &function) {
  if (function.isDeclaration() ||
      function.getInstructionCount() <= kGlueInstructions)
    return false;
  SmallVector<std::pair<const llvm::BasicBlock *, const llvm::BasicBlock *>>
      backEdges;
  llvm::FindFunctionBackedges(function, backEdges);
  return backEdges.empty();
}

/// Marks the glue functions of `module` optnone (and noinline, which
/// optnone needs): they go to parts of their own, compiled without IR
/// passes and with the code generator's fast path. Their arithmetic is the
/// same IEEE arithmetic at any level (no fast-math flags, no contraction),
/// so the step computes the same bits.
static void skipOptimizingGlue(llvm::Module &module) {
  for (llvm::Function &function : module) {
    if (!isGlue(function))
      continue;
    function.removeFnAttr(llvm::Attribute::AlwaysInline);
    function.addFnAttr(llvm::Attribute::NoInline);
    function.addFnAttr(llvm::Attribute::OptimizeNone);
  }
}

/// Gives every defined symbol a name and external, default-visibility,
/// preemptible linkage, so that a part can reference what another defines
/// (through the GOT and PLT stubs JITLink makes, at any distance).
static void externalizeSymbols(llvm::Module &module) {
  unsigned anonymous = 0;
  for (llvm::GlobalValue &value : module.global_values()) {
    if (!value.hasName())
      value.setName("__remat_anonymous." + llvm::Twine(anonymous++));
    if (value.hasLocalLinkage()) {
      value.setLinkage(llvm::GlobalValue::ExternalLinkage);
      value.setVisibility(llvm::GlobalValue::DefaultVisibility);
    }
    if (!value.isDeclaration())
      value.setDSOLocal(false);
  }
}

/// Which part each global value goes to, and the parts that hold only
/// glue (compiled at -O0).
struct PartAssignment {
  llvm::DenseMap<const llvm::GlobalValue *, unsigned> parts;
  SmallVector<bool> glue;
};

/// Assigns each glue function (optnone) a part of its own, in module order,
/// and the other functions to getNumParts(their instructions) parts,
/// balanced by instructions: largest first, into the part with the fewest
/// so far (ties: module order and the lowest part). Global variables go
/// with the first part. The assignment depends on the module alone.
static PartAssignment assignParts(const llvm::Module &module) {
  PartAssignment assignment;
  // (size, position, function), largest first, then in module order.
  SmallVector<std::tuple<uint64_t, unsigned, const llvm::Function *>> functions;
  uint64_t instructions = 0;
  for (const llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    if (function.hasOptNone()) {
      assignment.parts[&function] = assignment.glue.size();
      assignment.glue.push_back(true);
      continue;
    }
    functions.emplace_back(function.getInstructionCount(), functions.size(),
                           &function);
    instructions += function.getInstructionCount();
  }
  llvm::sort(functions, [](const auto &a, const auto &b) {
    if (std::get<0>(a) != std::get<0>(b))
      return std::get<0>(a) > std::get<0>(b);
    return std::get<1>(a) < std::get<1>(b);
  });
  unsigned first = assignment.glue.size();
  unsigned numParts = getNumParts(instructions);
  assignment.glue.append(numParts, false);
  SmallVector<uint64_t> load(numParts, 0);
  for (auto &[size, position, function] : functions) {
    unsigned part = std::min_element(load.begin(), load.end()) - load.begin();
    assignment.parts[function] = first + part;
    load[part] += size + 1;
  }
  for (const llvm::GlobalVariable &variable : module.globals())
    assignment.parts[&variable] = 0;
  return assignment;
}

/// Optimizes and compiles one part, given as bitcode, in a context of its
/// own; returns the object.
static Expected<std::string>
compilePart(llvm::StringRef bitcode, llvm::orc::JITTargetMachineBuilder machine,
            unsigned optLevel, bool glue) {
  llvm::LLVMContext context;
  Expected<std::unique_ptr<llvm::Module>> module =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "part"), context);
  if (!module)
    return module.takeError();
  if (glue)
    machine.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
  Expected<std::unique_ptr<llvm::TargetMachine>> targetMachine =
      machine.createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();
  if (!glue) {
    auto optimize =
        mlir::makeOptimizingTransformer(optLevel, 0, targetMachine->get());
    if (Error error = optimize(module->get()))
      return std::move(error);
  }
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream stream(object);
  llvm::legacy::PassManager passes;
  if ((*targetMachine)
          ->addPassesToEmitFile(passes, stream, nullptr,
                                llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit objects");
  passes.run(**module);
  return std::string(object.begin(), object.end());
}

Expected<ObjectFiles> remat::compileHostObjects(
    mlir::ModuleOp module, const llvm::orc::JITTargetMachineBuilder &machine,
    const HostCompileOptions &options, mlir::TimingScope &timing) {
  llvm::orc::JITTargetMachineBuilder builder = machine;
  Expected<std::unique_ptr<llvm::TargetMachine>> targetMachine =
      builder.createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();

  mlir::TimingScope translateTimer = timing.nest("translate to LLVM IR");
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return llvm::createStringError("cannot translate the step to LLVM IR");
  llvmModule->setDataLayout((*targetMachine)->createDataLayout());
  llvmModule->setTargetTriple((*targetMachine)->getTargetTriple());
  gatherStructors(*llvmModule, "llvm.global_ctors", kInitFunction);
  gatherStructors(*llvmModule, "llvm.global_dtors", kFiniFunction);
  if (!options.packedFunction.empty())
    if (Error error = packFunction(*llvmModule, options.packedFunction))
      return std::move(error);
  externalizeSymbols(*llvmModule);
  skipOptimizingGlue(*llvmModule);
  translateTimer.stop();

  // Parts as bitcode, each to be read into a context of its own.
  mlir::TimingScope splitTimer = timing.nest("split into parts");
  PartAssignment assignment = assignParts(*llvmModule);
  auto &parts = assignment.parts;
  unsigned numParts = assignment.glue.size();
  std::vector<std::string> bitcode(numParts);
  for (unsigned part = 0; part < numParts; ++part) {
    llvm::ValueToValueMapTy mapping;
    std::unique_ptr<llvm::Module> partModule = llvm::CloneModule(
        *llvmModule, mapping, [&](const llvm::GlobalValue *value) {
          auto it = parts.find(value);
          return it != parts.end() && it->second == part;
        });
    llvm::raw_string_ostream stream(bitcode[part]);
    llvm::WriteBitcodeToFile(*partModule, stream);
  }
  llvmModule.reset();
  splitTimer.stop();

  mlir::TimingScope compileTimer =
      timing.nest("optimize and generate code (parallel)");
  std::vector<std::string> objects(numParts);
  std::mutex errorMutex;
  Error error = Error::success();
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(options.threads));
    for (unsigned part = 0; part < numParts; ++part)
      pool.async([&, part] {
        Expected<std::string> object = compilePart(
            bitcode[part], machine, options.optLevel, assignment.glue[part]);
        if (object) {
          objects[part] = std::move(*object);
          return;
        }
        std::lock_guard<std::mutex> lock(errorMutex);
        error = llvm::joinErrors(std::move(error), object.takeError());
      });
    pool.wait();
  }
  if (error)
    return std::move(error);
  return objects;
}

/// Calls a function of the loaded code. UBSan's function-type check
/// (-fsanitize=function) reads a type signature just before an indirectly
/// called function, which JIT-compiled code does not have: read at a page
/// boundary, that is a fault of its own.
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
static void callLoaded(void (*function)()) {
  function();
}

Expected<std::unique_ptr<LoadedStep>>
LoadedStep::load(const ObjectFiles &objects,
                 const llvm::orc::JITTargetMachineBuilder &machine,
                 SymbolMapFn symbols) {
  std::unique_ptr<LoadedStep> step(new LoadedStep());
  auto jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(machine).create();
  if (!jit)
    return jit.takeError();
  step->jit = std::move(*jit);
  llvm::orc::JITDylib &dylib = step->jit->getMainJITDylib();
  llvm::orc::MangleAndInterner interner(step->jit->getExecutionSession(),
                                        step->jit->getDataLayout());
  if (Error error = dylib.define(llvm::orc::absoluteSymbols(symbols(interner))))
    return std::move(error);
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      step->jit->getDataLayout().getGlobalPrefix());
  if (!process)
    return process.takeError();
  dylib.addGenerator(std::move(*process));
  for (auto [i, object] : llvm::enumerate(objects))
    if (Error error =
            step->jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
                object, "remat-step-part-" + std::to_string(i))))
      return std::move(error);

  // A missing constructor or destructor function is no error: a step with
  // no global state has none to run.
  auto lookupFunction = [&](llvm::StringRef name) -> void (*)() {
    auto address = step->jit->lookup(name);
    if (!address) {
      llvm::consumeError(address.takeError());
      return nullptr;
    }
    return address->toPtr<void (*)()>();
  };
  if (void (*init)() = lookupFunction(kInitFunction))
    callLoaded(init);
  step->fini = lookupFunction(kFiniFunction);
  return step;
}

LoadedStep::~LoadedStep() {
  if (fini)
    callLoaded(fini);
}

Expected<void *> LoadedStep::lookup(llvm::StringRef name) {
  auto address = jit->lookup(name);
  if (!address)
    return address.takeError();
  return address->toPtr<void *>();
}
