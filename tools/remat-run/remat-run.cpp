//===- remat-run.cpp - Run training steps on the CPU ----------------------===//
//
// This file implements remat-run: it threads random ops (-remat-thread-rng),
// lowers a training step with -remat-lower-cpu, compiles its host code in
// parallel parts (or reads them from the step cache) and links them with
// ORC, runs it on .npy or generated inputs, and writes, compares
// and measures its outputs (bit-exact comparison, the counting allocator's peak
// bytes, wall time).
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "Philox.h"
#include "RematRuntime.h"
#ifdef REMAT_ENABLE_CUDA
#include "RematCudaRuntime.h"
#endif

#include "remat/Codegen/InitLowering.h"
#include "remat/Codegen/Passes.h"
#include "remat/Conversion/Passes.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"
#include "remat/ExecutionEngine/HostCompiler.h"
#include "remat/ExecutionEngine/StepCache.h"
#include "remat/Support/ParserHazards.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <thread>

using namespace mlir;
using namespace remat;
namespace cl = llvm::cl;

namespace {

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

cl::OptionCategory category("remat-run options");

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<training step .mlir>"), cl::Required,
                               cl::cat(category));
cl::opt<std::string> entry("entry", cl::desc("Function to run"),
                           cl::init("step"), cl::cat(category));
cl::list<std::string> inputs("inputs", cl::desc("Comma-separated .npy inputs"),
                             cl::CommaSeparated, cl::cat(category));
cl::opt<uint64_t> randomInputs(
    "random-inputs",
    cl::desc("Generate inputs from this seed (floats uniform in [-1, 1), "
             "integer scalars get the seed itself)"),
    cl::cat(category));
cl::opt<std::string> outputDir("outputs",
                               cl::desc("Write out0.npy, out1.npy, ... here"),
                               cl::cat(category));
cl::opt<std::string> compareFile(
    "compare",
    cl::desc("Run this other step on the same inputs; exit 1 unless every "
             "output is bit-identical"),
    cl::cat(category));
// `--stats`, `--threads` and `--rng-seed` share their names with options
// LLVM's libraries register globally; they are registered under these
// names and take theirs in claimOptionNames.
cl::opt<bool> printStats(
    "remat-run-stats",
    cl::desc("Print peak_bytes, allocated_bytes, alloc_count, wall_ms "
             "(median of the --repeat timed runs, code generation excluded), "
             "min_wall_ms (the fastest of them) and "
             "compile_ms as one JSON line; with --target cuda "
             "the device allocator's and kernel_ms, time in kernels and "
             "cuBLAS"),
    cl::cat(category));
cl::opt<unsigned>
    threads("remat-run-threads",
            cl::desc("Threads of the runtime's matmul and convolution "
                     "kernels and of the generated loops' parallel "
                     "dimensions, 0 for the machine's cores (work is cut "
                     "into units by the shapes alone: outputs are "
                     "bit-identical for any count)"),
            cl::init(1), cl::value_desc("N"), cl::cat(category));
cl::opt<unsigned> repeat(
    "repeat",
    cl::desc("Runs to take the median time of; above 1, after one untimed "
             "warm-up run (whose outputs and memory statistics are the "
             "ones reported: every run computes the same)"),
    cl::init(1), cl::cat(category));
cl::opt<uint64_t> rngSeed(
    "remat-run-rng-seed",
    cl::desc("Seed of the step's generator, which 'remat.rng_seed' reads "
             "(default: the --random-inputs seed, else 0)"),
    cl::cat(category));
cl::opt<bool>
    noBlas("no-blas",
           cl::desc("Lower matmuls and convolutions to loops, not BLAS"),
           cl::cat(category));
cl::opt<bool> noVectorize(
    "no-vectorize",
    cl::desc("Lower elementwise and reduction ops to scalar loops, not "
             "vector tiles (-remat-vectorize; outputs are bit-identical)"),
    cl::cat(category));
cl::opt<bool> libmMath(
    "libm-math",
    cl::desc("Call libm for tanh, erf and exp, one call per vector lane, not "
             "their vector polynomials (-remat-approximate-math)"),
    cl::cat(category));
cl::opt<bool> noParallelLoops(
    "no-parallel-loops",
    cl::desc("Run every generated loop on one thread "
             "(no -remat-outline-parallel-loops; outputs are bit-identical)"),
    cl::cat(category));
cl::opt<bool> noOutlineLoopNests(
    "no-outline-loop-nests",
    cl::desc("Keep the loop nests in the step's function, and identical "
             "functions apart (no -remat-outline-loop-nests or "
             "-remat-dedupe-functions; outputs are bit-identical)"),
    cl::cat(category));
cl::opt<int64_t> minUnitWork(
    "min-unit-work",
    cl::desc("Elements a unit of a generated parallel loop computes at "
             "least: smaller loops stay on one thread "
             "(-remat-outline-parallel-loops)"),
    cl::init(32768), cl::value_desc("N"), cl::cat(category));
cl::opt<bool> noArena(
    "no-arena",
    cl::desc("Allocate each buffer on its own, not in the step's static arena"),
    cl::cat(category));
cl::opt<bool>
    noSchedule("no-schedule",
               cl::desc("Keep the step's op order (no -remat-schedule)"),
               cl::cat(category));
cl::opt<unsigned> optLevel(
    "opt-level",
    cl::desc("LLVM optimization level of the JIT-compiled host code, 0 to 3 "
             "(IR passes and code generation); on a whole network the "
             "compile, not the step, is most of a run, and tests use 0"),
    cl::init(3), cl::value_desc("N"), cl::cat(category));
cl::opt<bool> timing(
    "timing",
    cl::desc("Print where the compile's time goes, to stderr: parsing, each "
             "lowering pass (with NVPTX and ptxas for CUDA), the host code's "
             "translation, optimization and code generation, and loading"),
    cl::cat(category));
cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every lowering pass, as remat-opt does "
             "(default: the lowered step once, at the end; verifying a "
             "real-size step after each of some 60 passes is a third of "
             "its CUDA lowering)"),
    cl::cat(category));
cl::opt<bool> compileOnly(
    "compile-only",
    cl::desc("Compile the step (and --compare's) and stop: no inputs are "
             "read and nothing runs; --stats prints the compile's phases"),
    cl::cat(category));
cl::opt<bool> profile(
    "profile",
    cl::desc("Time each call the step makes (-remat-profile-calls: runtime "
             "kernels, outlined loop nests, copies) and print the time per "
             "step by kind and the calls that take most, after the runs "
             "(the timed ones when --repeat is above 1); with --stats, its "
             "line gets profile_ms, the time per step by kind. CPU only"),
    cl::cat(category));
cl::opt<unsigned> compileThreads(
    "compile-threads",
    cl::desc("Threads that optimize and generate the host code's parts, 0 "
             "for the machine's cores (the parts depend on the step alone: "
             "the code is the same for any count)"),
    cl::init(0), cl::value_desc("N"), cl::cat(category));
cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Directory of compiled steps, keyed by the step's IR, the "
             "options that change its code, the target and remat's build "
             "(default: $REMAT_CACHE_DIR, else $XDG_CACHE_HOME/remat/steps, "
             "else ~/.cache/remat/steps)"),
    cl::value_desc("DIR"), cl::cat(category));
cl::opt<bool> noCache("no-cache",
                      cl::desc("Neither read nor fill the step cache"),
                      cl::cat(category));
enum class Target { CPU, CUDA };
cl::opt<Target> target(
    "target", cl::desc("Where the step runs"), cl::init(Target::CPU),
    cl::values(clEnumValN(Target::CPU, "cpu", "JIT-compiled host code"),
               clEnumValN(Target::CUDA, "cuda",
                          "GPU kernels (cubin) and JIT-compiled host code "
                          "calling remat's CUDA runtime")),
    cl::cat(category));
cl::opt<int> device("device", cl::desc("CUDA device to run on (--target cuda)"),
                    cl::init(0), cl::cat(category));

/// Exit codes: 1 for a failed comparison or a step that does not compile,
/// 2 for bad usage or inputs (command line, files, a step too large to
/// run).
constexpr int kExitMismatch = 1;
constexpr int kExitUsage = 2;
/// The most threads --threads starts: each is a thread of the process.
constexpr unsigned kMaxThreads = 1024;

[[noreturn]] void fail(int code, const llvm::Twine &message) {
  llvm::errs() << "remat-run: error: " << message << "\n";
  std::exit(code);
}

//===----------------------------------------------------------------------===//
// Value layouts
//===----------------------------------------------------------------------===//

/// Bytes of StridedMemRefType<T, rank>: its rank-0 fields (allocated and
/// aligned pointers, offset), then `rank` sizes and `rank` strides.
int64_t getDescriptorSize(int64_t rank) {
  return sizeof(StridedMemRefType<char, 0>) + 2 * rank * sizeof(int64_t);
}

/// The descriptor of an argument's contiguous buffer. Its rank is known only
/// once the step is read, and StridedMemRefType and OwningMemRef take theirs
/// as a template parameter, so it is StridedMemRefType<T, rank> laid out the
/// way DynamicMemRefType reads one of any rank: StridedMemRefType<T, 1>'s
/// fields, with `rank` sizes and then `rank` strides.
class ArgumentDescriptor {
public:
  ArgumentDescriptor(uint8_t *data, ArrayRef<int64_t> shape)
      : storage(getDescriptorSize(shape.size()) / sizeof(int64_t)) {
    auto *descriptor = getDescriptor();
    descriptor->basePtr = descriptor->data = data;
    descriptor->offset = 0;
    int64_t rank = shape.size();
    int64_t *sizes = storage.data() + 3, *strides = sizes + rank;
    int64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      sizes[d] = shape[d];
      strides[d] = stride;
      stride *= shape[d];
    }
  }

  using Rank1 = StridedMemRefType<uint8_t, 1>;
  Rank1 *getDescriptor() {
    static_assert(offsetof(Rank1, sizes) == 3 * sizeof(int64_t),
                  "sizes follow the pointers and the offset");
    return reinterpret_cast<Rank1 *>(storage.data());
  }

private:
  std::vector<int64_t> storage;
};

/// Copies the elements of the result whose descriptor, of rank `rank`, is at
/// `slot` into `out` in row-major order, as elements of `T` (an unsigned
/// integer of the element's size: the bits are copied, not converted).
/// Returns the result's allocated pointer.
template <typename T>
void *copyResult(void *slot, int64_t rank, int64_t numElements, uint8_t *out) {
  DynamicMemRefType<T> result(::UnrankedMemRefType<T>{rank, slot});
  if (numElements != 0)
    std::copy(result.begin(), result.end(), reinterpret_cast<T *>(out));
  return result.basePtr;
}

/// How one argument or result of the entry function is laid out: a ranked
/// tensor (a memref descriptor at the C interface) or a scalar.
struct ValueSpec {
  Type type;
  Type elementType;
  bool isTensor = false;
  SmallVector<int64_t> shape;
  int64_t elementSize = 0;
  std::string dtype;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t numBytes() const { return numElements() * elementSize; }
  /// Bytes of the value's slot at the C interface: a descriptor
  /// (StridedMemRefType<T, rank>) or the scalar.
  int64_t slotSize() const {
    return isTensor ? getDescriptorSize(shape.size()) : elementSize;
  }
  int64_t slotAlignment() const { return isTensor ? 8 : elementSize; }
};

std::optional<ValueSpec> getValueSpec(Type type) {
  ValueSpec spec;
  spec.type = type;
  Type element = type;
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    if (!tensor.hasStaticShape())
      return std::nullopt;
    spec.isTensor = true;
    llvm::append_range(spec.shape, tensor.getShape());
    element = tensor.getElementType();
  }
  spec.elementType = element;
  if (element.isF32())
    spec.dtype = "<f4";
  else if (element.isF64())
    spec.dtype = "<f8";
  else if (element.isF16())
    spec.dtype = "<f2";
  else if (element.isBF16())
    spec.dtype = "<u2"; // NumPy has no bfloat16: raw bits.
  else if (element.isSignlessInteger(64))
    spec.dtype = "<i8";
  else if (element.isSignlessInteger(32))
    spec.dtype = "<i4";
  else if (element.isSignlessInteger(8))
    spec.dtype = "|i1";
  else if (element.isSignlessInteger(1))
    spec.dtype = "|b1";
  else
    return std::nullopt;
  spec.elementSize = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
  return spec;
}

/// Copies the tensor result `spec` whose descriptor is at `slot` into `out`
/// as bits, in row-major order; returns the result's allocated pointer.
void *copyTensorResult(const ValueSpec &spec, void *slot,
                       std::vector<uint8_t> &out) {
  int64_t rank = spec.shape.size(), n = spec.numElements();
  switch (spec.elementSize) {
  case 1:
    return copyResult<uint8_t>(slot, rank, n, out.data());
  case 2:
    return copyResult<uint16_t>(slot, rank, n, out.data());
  case 4:
    return copyResult<uint32_t>(slot, rank, n, out.data());
  case 8:
    return copyResult<uint64_t>(slot, rank, n, out.data());
  default:
    llvm_unreachable("getValueSpec admits elements of 1, 2, 4 or 8 bytes");
  }
}

/// copyTensorResult for a result in this target's memory: on CUDA, the
/// elements the descriptor spans are copied to the host first, and read
/// there through a descriptor of the same sizes and strides.
void *copyTensorResultToHost(const ValueSpec &spec, void *slot,
                             std::vector<uint8_t> &out) {
#ifdef REMAT_ENABLE_CUDA
  if (target == Target::CUDA && spec.numElements() != 0) {
    // allocated, aligned, offset, sizes[rank], strides[rank].
    int64_t rank = spec.shape.size();
    std::vector<int64_t> descriptor(3 + 2 * rank);
    std::memcpy(descriptor.data(), slot, descriptor.size() * sizeof(int64_t));
    int64_t span = 1;
    for (int64_t d = 0; d < rank; ++d)
      span += (descriptor[3 + d] - 1) * descriptor[3 + rank + d];
    std::vector<uint8_t> mirror(span * spec.elementSize);
    auto *first = reinterpret_cast<uint8_t *>(descriptor[1]) +
                  descriptor[2] * spec.elementSize;
    cuda::copy(mirror.data(), first, mirror.size());
    void *allocated = reinterpret_cast<void *>(descriptor[0]);
    descriptor[1] = reinterpret_cast<int64_t>(mirror.data());
    descriptor[2] = 0;
    copyTensorResult(spec, descriptor.data(), out);
    return allocated;
  }
#endif
  return copyTensorResult(spec, slot, out);
}

std::string describe(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// Element `index` of `bytes` as a double, for differences.
double elementAsDouble(const ValueSpec &spec, const uint8_t *bytes,
                       int64_t index) {
  const uint8_t *p = bytes + index * spec.elementSize;
  Type t = spec.elementType;
  if (t.isF32()) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (t.isF64()) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  if (t.isF16() || t.isBF16()) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    llvm::APFloat value(t.isF16() ? llvm::APFloat::IEEEhalf()
                                  : llvm::APFloat::BFloat(),
                        llvm::APInt(16, bits));
    bool lost;
    value.convert(llvm::APFloat::IEEEdouble(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
    return value.convertToDouble();
  }
  int64_t v = 0;
  std::memcpy(&v, p, spec.elementSize);
  if (spec.elementSize < 8 && t.getIntOrFloatBitWidth() > 1) {
    int shift = 64 - 8 * spec.elementSize;
    v = (v << shift) >> shift;
  }
  return static_cast<double>(v);
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

/// Bits of the host's vector registers, as -remat-vectorize's tiles use
/// them.
int64_t getHostVectorBits() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return 512;
  if (features.lookup("avx"))
    return 256;
  return 128;
}

struct Program {
  std::string path;
  /// The step's host code, linked into this process.
  std::unique_ptr<LoadedStep> loaded;
  /// The step's packed entry point, looked up (so compiled) before any run.
  void (*step)(void **) = nullptr;
  /// Milliseconds from reading the file to the compiled entry point, and
  /// its phases.
  double compileMs = 0, parseMs = 0, lowerMs = 0, hostMs = 0, loadMs = 0;
  /// "hit" or "miss" in the step cache, or "off" (--no-cache).
  StringRef cache = "off";
  SmallVector<ValueSpec> args, results;
  /// Results come back through a pointer to a struct (multiple results or a
  /// descriptor), else a single scalar is returned by value.
  bool resultThroughPointer = false;
  SmallVector<int64_t> resultOffsets;
  int64_t resultStructSize = 0;
};

/// Reads the layouts of the entry function's arguments and results, and
/// where each result lies in the struct the C interface returns them in.
void layOutValues(Program &program, func::FuncOp function) {
  for (auto [i, type] : llvm::enumerate(function.getArgumentTypes())) {
    std::optional<ValueSpec> spec = getValueSpec(type);
    if (!spec)
      fail(kExitUsage, "argument #" + Twine(i) + " of @" + entry +
                           " has unsupported type " + describe(type));
    program.args.push_back(*spec);
  }
  for (auto [i, type] : llvm::enumerate(function.getResultTypes())) {
    std::optional<ValueSpec> spec = getValueSpec(type);
    if (!spec)
      fail(kExitUsage, "result #" + Twine(i) + " of @" + entry +
                           " has unsupported type " + describe(type));
    program.results.push_back(*spec);
  }
  program.resultThroughPointer =
      program.results.size() > 1 ||
      (program.results.size() == 1 && program.results[0].isTensor);
  int64_t offset = 0, alignment = 1;
  for (const ValueSpec &spec : program.results) {
    offset = llvm::alignTo(offset, spec.slotAlignment());
    program.resultOffsets.push_back(offset);
    offset += spec.slotSize();
    alignment = std::max(alignment, spec.slotAlignment());
  }
  program.resultStructSize = llvm::alignTo(offset, alignment);
}

/// Lowers `module` for the target with the pipeline remat-run's flags
/// choose, its passes timed under `timing`; a step that does not lower
/// exits with kExitMismatch.
void lowerStep(ModuleOp module, TimingScope &timing) {
  MLIRContext &context = *module.getContext();
  PassManager pm(&context);
  pm.enableTiming(timing);
  pm.enableVerifier(verifyEach);
  // Steps in the IR contract may still draw from the stateful generator;
  // threading is a no-op on steps that were threaded before checkpointing.
  pm.addNestedPass<func::FuncOp>(createRematThreadRngPass());
  if (target == Target::CUDA) {
#ifdef REMAT_ENABLE_CUDA
    RematLowerCUDAOptions options;
    options.chip = cuda::getChip();
    options.useCublas = !noBlas;
    options.planArena = !noArena;
    options.schedule = !noSchedule;
    buildRematLowerCUDAPipeline(pm, options);
#endif
  } else {
    RematLowerCPUOptions options;
    options.useBlas = !noBlas;
    options.planArena = !noArena;
    options.schedule = !noSchedule;
    options.vectorize = !noVectorize;
    options.approximateMath = !libmMath;
    options.vectorBits = getHostVectorBits();
    options.parallelLoops = !noParallelLoops;
    options.minUnitWork = minUnitWork;
    options.outlineLoopNests = !noOutlineLoopNests;
    options.profile = profile;
    buildRematLowerCPUPipeline(pm, options);
  }
  if (failed(pm.run(module)))
    std::exit(kExitMismatch);
  if (!verifyEach) {
    TimingScope verifyTimer = timing.nest("verify the lowered step");
    if (failed(verify(module))) {
      llvm::errs() << "remat-run: internal error: the lowered step does not "
                      "verify (--verify-each finds the pass that broke it)\n";
      std::exit(kExitMismatch);
    }
  }
}

/// The runtime functions the generated code calls (and, with CUDA, the CUDA
/// runtime's), for the JIT's symbol resolution.
llvm::orc::SymbolMap getRuntimeSymbols(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap symbols;
  size_t count;
  const runtime::Symbol *table = runtime::getSymbols(count);
  for (size_t i = 0; i < count; ++i)
    symbols[interner(table[i].name)] = {
        llvm::orc::ExecutorAddr::fromPtr(table[i].address),
        llvm::JITSymbolFlags::Exported};
#ifdef REMAT_ENABLE_CUDA
  const cuda::Symbol *cudaTable = cuda::getSymbols(count);
  for (size_t i = 0; i < count; ++i)
    symbols[interner(cudaTable[i].name)] = {
        llvm::orc::ExecutorAddr::fromPtr(cudaTable[i].address),
        llvm::JITSymbolFlags::Exported};
#endif
  return symbols;
}

/// With REMAT_PERF_MAP set, writes /tmp/perf-<pid>.map, the file `perf
/// report` names JIT-compiled code from: each function of the step's
/// objects with its address and size; and the objects themselves as
/// /tmp/perf-<pid>-<part>.o, for `objdump -d`. Every symbol of the objects
/// is external, so each function's address is looked up by name. Problems
/// are warnings: the map is an aid, not part of the run.
void writePerfMap(Program &program, const ObjectFiles &objects) {
  if (!std::getenv("REMAT_PERF_MAP"))
    return;
  auto warn = [](const Twine &message) {
    llvm::errs() << "remat-run: warning: REMAT_PERF_MAP: " << message << "\n";
  };
  std::string prefix =
      "/tmp/perf-" + std::to_string(llvm::sys::Process::getProcessId());
  std::string mapPath = prefix + ".map";
  std::error_code error;
  llvm::raw_fd_ostream map(mapPath, error);
  if (error)
    return warn("cannot write " + mapPath + ": " + error.message());
  for (auto [part, bytes] : llvm::enumerate(objects)) {
    std::string objectPath = prefix + "-" + std::to_string(part) + ".o";
    llvm::raw_fd_ostream objectFile(objectPath, error);
    if (!error)
      objectFile << bytes;
    auto object = llvm::object::ObjectFile::createObjectFile(
        llvm::MemoryBufferRef(bytes, objectPath));
    if (!object) {
      warn(llvm::toString(object.takeError()));
      continue;
    }
    for (const llvm::object::ELFSymbolRef &symbol :
         llvm::object::ELFObjectFileBase::elf_symbol_iterator_range(
             cast<llvm::object::ELFObjectFileBase>(**object).symbols())) {
      auto name = symbol.getName();
      auto type = symbol.getType();
      if (!name || !type || *type != llvm::object::SymbolRef::ST_Function ||
          symbol.getSize() == 0) {
        llvm::consumeError(name.takeError());
        llvm::consumeError(type.takeError());
        continue;
      }
      auto address = program.loaded->lookup(*name);
      if (!address) {
        llvm::consumeError(address.takeError());
        continue;
      }
      map << llvm::format_hex_no_prefix(reinterpret_cast<uint64_t>(*address), 1)
          << " " << llvm::format_hex_no_prefix(symbol.getSize(), 1) << " "
          << *name << "\n";
    }
  }
}

/// The host CPU with its features, generating code at --opt-level; fails
/// with kExitMismatch where LLVM cannot target it.
llvm::orc::JITTargetMachineBuilder getHostMachine() {
  auto machine = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machine)
    fail(kExitMismatch,
         "cannot target the host CPU: " + llvm::toString(machine.takeError()));
  machine->setCodeGenOptLevel(
      *llvm::CodeGenOpt::getLevel(static_cast<int>(optLevel.getValue())));
  // Parts reference each other's symbols at any distance: through the GOT
  // and PLT stubs JITLink makes.
  machine->setRelocationModel(llvm::Reloc::PIC_);
  machine->setCodeModel(llvm::CodeModel::Small);
  return std::move(*machine);
}

/// The identity of this remat-run build: its executable's size and
/// modification time, which a rebuild changes.
std::string getBuildIdentity() {
  static int anchor;
  std::string path = llvm::sys::fs::getMainExecutable("remat-run", &anchor);
  llvm::sys::fs::file_status status;
  if (path.empty() || llvm::sys::fs::status(path, status))
    return "unknown build";
  return path + " " + std::to_string(status.getSize()) + " " +
         std::to_string(
             status.getLastModificationTime().time_since_epoch().count());
}

/// The step cache's key of the step `source`: its IR, every option that
/// changes its code, the target and the build.
std::string getCacheKey(StringRef source,
                        const llvm::orc::JITTargetMachineBuilder &machine) {
  StepCacheKey key;
  key.add("build", getBuildIdentity());
  key.add("llvm", LLVM_VERSION_STRING);
  key.add("triple", machine.getTargetTriple().str());
  key.add("cpu", machine.getCPU());
  key.add("features", machine.getFeatures().getString());
  key.add("target", target == Target::CUDA ? "cuda" : "cpu");
#ifdef REMAT_ENABLE_CUDA
  if (target == Target::CUDA)
    key.add("chip", cuda::getChip());
#endif
  key.add("entry", entry);
  key.add("opt-level", std::to_string(optLevel));
  key.add("vector-bits", std::to_string(getHostVectorBits()));
  key.add("min-unit-work", std::to_string(minUnitWork));
  std::string flags;
  for (bool flag : {bool(noBlas), bool(noVectorize), bool(libmMath),
                    bool(noParallelLoops), bool(noArena), bool(noSchedule),
                    bool(noOutlineLoopNests), bool(profile)})
    flags += flag ? '1' : '0';
  key.add("flags", flags);
  key.add("step", source);
  return key.finish();
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

Program compile(MLIRContext &context, StringRef path, TimingScope &timing) {
  auto start = std::chrono::steady_clock::now();
  Program program;
  program.path = path.str();

  TimingScope parseTimer = timing.nest("parse");
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer = openInputFile(path, &error);
  if (!buffer)
    fail(kExitUsage, "cannot read '" + path + "': " + error);
  std::string source = buffer->getBuffer().str();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  // Diagnostics of the parser and of the lowering point into the file.
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  if (failed(checkParserHazards(sourceMgr, llvm::errs())))
    std::exit(kExitUsage);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(verifyTensorSizes(*module)))
    std::exit(kExitUsage);

  auto function = module->lookupSymbol<func::FuncOp>(entry);
  if (!function || function.isExternal())
    fail(kExitUsage, "'" + path + "' has no function @" + entry +
                         " with a body (choose one with --entry)");
  layOutValues(program, function);
  parseTimer.stop();
  program.parseMs = millisecondsSince(start);

  llvm::orc::JITTargetMachineBuilder machine = getHostMachine();
  std::optional<StepCache> cache;
  std::string key;
  std::optional<ObjectFiles> objects;
  if (!noCache) {
    TimingScope lookupTimer = timing.nest("step cache lookup");
    cache.emplace(cacheDir.empty() ? StepCache::getDefaultDirectory()
                                   : cacheDir.getValue());
    key = getCacheKey(source, machine);
    objects = cache->lookup(key);
    program.cache = objects ? "hit" : "miss";
  }
  if (!objects) {
    auto lowerStart = std::chrono::steady_clock::now();
    function->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                      UnitAttr::get(&context));
    TimingScope lowerTimer = timing.nest("lower");
    lowerStep(*module, lowerTimer);
    lowerTimer.stop();
    program.lowerMs = millisecondsSince(lowerStart);

    auto hostStart = std::chrono::steady_clock::now();
    TimingScope hostTimer = timing.nest("host code");
    HostCompileOptions options;
    options.optLevel = optLevel;
    options.threads = compileThreads;
    options.packedFunction = "_mlir_ciface_" + entry;
    auto compiled = compileHostObjects(*module, machine, options, hostTimer);
    if (!compiled)
      fail(kExitMismatch, "cannot compile '" + path +
                              "': " + llvm::toString(compiled.takeError()));
    objects = std::move(*compiled);
    hostTimer.stop();
    program.hostMs = millisecondsSince(hostStart);
    // A cache that cannot be written costs the next run a compile, nothing
    // more.
    if (cache)
      if (llvm::Error error = cache->store(key, *objects))
        llvm::errs() << "remat-run: warning: "
                     << llvm::toString(std::move(error)) << "\n";
  }

  auto loadStart = std::chrono::steady_clock::now();
  TimingScope loadTimer = timing.nest("load");
  auto loaded = LoadedStep::load(*objects, machine, getRuntimeSymbols);
  if (!loaded)
    fail(kExitMismatch,
         "cannot load '" + path + "': " + llvm::toString(loaded.takeError()));
  program.loaded = std::move(*loaded);
  auto step = program.loaded->lookup("_mlir__mlir_ciface_" + entry);
  if (!step)
    fail(kExitMismatch,
         "cannot load '" + path + "': " + llvm::toString(step.takeError()));
  program.step = reinterpret_cast<void (*)(void **)>(*step);
  loadTimer.stop();
  program.loadMs = millisecondsSince(loadStart);
  writePerfMap(program, *objects);
  program.compileMs = millisecondsSince(start);
  return program;
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

/// Fills `array` for argument `index` deterministically from `seed`.
void generateInput(const ValueSpec &spec, unsigned index, uint64_t seed,
                   NpyArray &array) {
  array.data.resize(spec.numBytes());
  uint8_t *out = array.data.data();
  uint64_t base = static_cast<uint64_t>(index + 1) << 40;
  Type t = spec.elementType;
  for (int64_t j = 0, e = spec.numElements(); j < e; ++j) {
    uint32_t word = remat_philox_word(seed, base + j);
    float uniform = remat_philox_word_to_f32(word) * 2.0f - 1.0f;
    uint8_t *p = out + j * spec.elementSize;
    if (t.isF32()) {
      std::memcpy(p, &uniform, 4);
    } else if (t.isF64()) {
      double v = uniform;
      std::memcpy(p, &v, 8);
    } else if (t.isF16() || t.isBF16()) {
      llvm::APFloat v(uniform);
      bool lost;
      v.convert(t.isF16() ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat(),
                llvm::APFloat::rmNearestTiesToEven, &lost);
      uint16_t bits = v.bitcastToAPInt().getZExtValue();
      std::memcpy(p, &bits, 2);
    } else if (t.isSignlessInteger(1)) {
      *p = word & 1;
    } else {
      // Integer scalars are seeds: they get the seed itself; integer tensors
      // get small values.
      int64_t v = spec.isTensor ? int64_t(word % 16) : int64_t(seed);
      std::memcpy(p, &v, spec.elementSize);
    }
  }
}

std::vector<NpyArray> loadInputs(const Program &program) {
  std::vector<NpyArray> arrays(program.args.size());
  if (!inputs.empty() && randomInputs.getNumOccurrences())
    fail(kExitUsage, "give --inputs or --random-inputs, not both");
  if (inputs.empty()) {
    if (!randomInputs.getNumOccurrences() && !program.args.empty())
      fail(kExitUsage, "@" + entry + " takes " + Twine(program.args.size()) +
                           " arguments: give --inputs or --random-inputs");
    for (auto [i, spec] : llvm::enumerate(program.args)) {
      arrays[i].dtype = spec.dtype;
      arrays[i].shape = spec.shape;
      generateInput(spec, i, randomInputs, arrays[i]);
    }
    return arrays;
  }
  if (inputs.size() != program.args.size())
    fail(kExitUsage, "@" + entry + " takes " + Twine(program.args.size()) +
                         " arguments but " + Twine(inputs.size()) +
                         " inputs were given");
  for (auto [i, spec] : llvm::enumerate(program.args)) {
    llvm::Expected<NpyArray> array = readNpy(inputs[i]);
    if (!array)
      fail(kExitUsage,
           "input #" + Twine(i) + ": " + llvm::toString(array.takeError()));
    if (array->dtype != spec.dtype)
      fail(kExitUsage, "input #" + Twine(i) + " ('" + inputs[i] +
                           "') has dtype '" + array->dtype + "' but @" + entry +
                           " expects " + describe(spec.type) + " ('" +
                           spec.dtype + "')");
    if (ArrayRef<int64_t>(array->shape) != ArrayRef<int64_t>(spec.shape))
      fail(kExitUsage,
           "input #" + Twine(i) + " ('" + inputs[i] + "') has shape (" +
               llvm::join(
                   llvm::map_range(array->shape,
                                   [](int64_t d) { return std::to_string(d); }),
                   ", ") +
               ") but @" + entry + " expects " + describe(spec.type));
    arrays[i] = std::move(*array);
  }
  return arrays;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

struct RunResult {
  std::vector<NpyArray> outputs;
  runtime::AllocStats stats;
  double wallMs = 0;
  double kernelMs = 0;
  /// The fastest timed run's wall time: on a shared machine, the run the
  /// other work disturbed least.
  double minWallMs = 0;
};

/// The median of `times` (sorted): the middle one, or the mean of the two
/// middle ones of an even count.
static double getMedian(ArrayRef<double> times) {
  size_t middle = times.size() / 2;
  return times.size() % 2 ? times[middle]
                          : (times[middle - 1] + times[middle]) / 2;
}

/// Buffers for the arguments: host memory for the CPU, device memory for
/// CUDA (filled by fillArgument); neither is counted as the step's.
uint8_t *allocateArgument(size_t size, std::vector<uint8_t> &host) {
#ifdef REMAT_ENABLE_CUDA
  if (target == Target::CUDA)
    return static_cast<uint8_t *>(cuda::allocateInput(size));
#endif
  // 64-byte aligned copies, like the buffers generated code allocates.
  host.assign(size + 64, 0);
  return reinterpret_cast<uint8_t *>(
      llvm::alignTo(reinterpret_cast<uintptr_t>(host.data()), 64));
}

/// Copies an input's bytes into its argument buffer.
void fillArgument(uint8_t *buffer, const std::vector<uint8_t> &data) {
#ifdef REMAT_ENABLE_CUDA
  if (target == Target::CUDA)
    return cuda::copy(buffer, data.data(), data.size());
#endif
  std::memcpy(buffer, data.data(), data.size());
}

void freeArgument(uint8_t *ptr) {
#ifdef REMAT_ENABLE_CUDA
  if (target == Target::CUDA)
    cuda::freeInput(ptr);
#endif
}

void resetStats() {
#ifdef REMAT_ENABLE_CUDA
  if (target == Target::CUDA)
    return cuda::resetStats();
#endif
  runtime::resetAllocStats();
}

/// Waits for the device and reads the counters of the step just run.
void collectStats(RunResult &result) {
#ifdef REMAT_ENABLE_CUDA
  if (target == Target::CUDA) {
    cuda::synchronize();
    cuda::DeviceStats stats = cuda::getStats();
    result.stats = stats;
    result.kernelMs = stats.kernelMs;
    return;
  }
#endif
  result.stats = runtime::getAllocStats();
}

bool isReturnedBuffer(void *ptr) {
#ifdef REMAT_ENABLE_CUDA
  if (target == Target::CUDA)
    return cuda::isLiveAllocation(ptr);
#endif
  return runtime::isLiveAllocation(ptr);
}

void freeReturnedBuffer(void *ptr) {
#ifdef REMAT_ENABLE_CUDA
  if (target == Target::CUDA)
    return remat_cuda_free(ptr);
#endif
  _mlir_memref_to_llvm_free(ptr);
}

/// Runs `program` once on copies of `inputs` (generated code may write into
/// its arguments) and collects its outputs, freeing the buffers it returned.
/// Calls the step's packed entry point. UBSan's function-type check
/// (-fsanitize=function) reads a type signature just before an indirectly
/// called function, which JIT-compiled code does not have.
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void callStep(void (*step)(void **), void **args) {
  step(args);
}

RunResult runOnce(Program &program, const std::vector<NpyArray> &inputs) {
  size_t numArgs = program.args.size();
  std::vector<std::vector<uint8_t>> argData(numArgs);
  std::vector<uint8_t *> argBuffers(numArgs);
  std::vector<ArgumentDescriptor> descriptors;
  descriptors.reserve(numArgs);
  std::vector<void *> descriptorPtrs(numArgs);
  SmallVector<void *> packed;

  std::vector<int64_t> resultStorage(
      std::max<int64_t>(1, (program.resultStructSize + 7) / 8));
  void *resultPtr = resultStorage.data();
  if (program.resultThroughPointer)
    packed.push_back(&resultPtr);

  for (size_t i = 0; i < numArgs; ++i) {
    const ValueSpec &spec = program.args[i];
    if (!spec.isTensor) {
      // A scalar is passed by value: the entry point's wrapper reads it on
      // the host, whatever the target.
      argData[i] = inputs[i].data;
      packed.push_back(argData[i].data());
      continue;
    }
    uint8_t *aligned = allocateArgument(inputs[i].data.size(), argData[i]);
    argBuffers[i] = aligned;
    fillArgument(aligned, inputs[i].data);
    descriptorPtrs[i] =
        descriptors.emplace_back(aligned, spec.shape).getDescriptor();
    packed.push_back(&descriptorPtrs[i]);
  }
  if (!program.resultThroughPointer && !program.results.empty())
    packed.push_back(resultStorage.data());

  resetStats();
  auto start = std::chrono::steady_clock::now();
  callStep(program.step, packed.data());
  RunResult result;
  collectStats(result);
  auto stop = std::chrono::steady_clock::now();

  result.wallMs =
      std::chrono::duration<double, std::milli>(stop - start).count();

  const uint8_t *resultBytes =
      reinterpret_cast<const uint8_t *>(resultStorage.data());
  llvm::SmallPtrSet<void *, 8> toFree;
  for (auto [i, spec] : llvm::enumerate(program.results)) {
    NpyArray array;
    array.dtype = spec.dtype;
    array.shape = spec.shape;
    array.data.resize(spec.numBytes());
    const uint8_t *slot = resultBytes + program.resultOffsets[i];
    if (!spec.isTensor) {
      std::memcpy(array.data.data(), slot, spec.elementSize);
    } else {
      void *allocated =
          copyTensorResultToHost(spec, const_cast<uint8_t *>(slot), array.data);
      // Returned buffers belong to the caller; arguments returned as they
      // are belong to this tool.
      if (isReturnedBuffer(allocated))
        toFree.insert(allocated);
    }
    result.outputs.push_back(std::move(array));
  }
  for (void *ptr : toFree)
    freeReturnedBuffer(ptr);
  for (uint8_t *ptr : argBuffers)
    if (ptr)
      freeArgument(ptr);
  return result;
}

RunResult run(Program &program, const std::vector<NpyArray> &inputs) {
  RunResult first = runOnce(program, inputs);
  if (repeat == 1)
    return first;
  runtime::resetProfile();
  // The first run pays for page faults in fresh buffers, lazily bound
  // symbols and the BLAS's and thread pool's start: time only the rest, as
  // a PyTorch benchmark times the steps after its first.
  std::vector<double> times, kernelTimes;
  for (unsigned i = 0; i < repeat; ++i) {
    RunResult next = runOnce(program, inputs);
    times.push_back(next.wallMs);
    kernelTimes.push_back(next.kernelMs);
  }
  std::sort(times.begin(), times.end());
  std::sort(kernelTimes.begin(), kernelTimes.end());
  first.wallMs = getMedian(times);
  first.kernelMs = getMedian(kernelTimes);
  first.minWallMs = times.front();
  return first;
}

/// The compile's fields of a --stats line: its file, phases and cache.
llvm::json::Object getCompileFields(const Program &program) {
  return llvm::json::Object{
      {"file", program.path},
      {"compile_ms", program.compileMs},
      {"parse_ms", program.parseMs},
      {"lower_ms", program.lowerMs},
      {"host_compile_ms", program.hostMs},
      {"load_ms", program.loadMs},
      {"cache", program.cache},
  };
}

/// The --stats line of --compile-only: the compile's fields alone.
void printCompileLine(const Program &program) {
  llvm::outs() << llvm::json::Value(getCompileFields(program)) << "\n";
}

/// What a call of the profile runs, by its name (-remat-profile-calls):
/// the runtime's kernels by their entry points, outlined loop nests by the
/// kind their names carry.
StringRef getProfileKind(StringRef name) {
  if (name == "memref.copy" || name.contains("_copy_"))
    return "copies";
  if (name.contains("_reduction_"))
    return "reductions";
  if (name.contains("_elementwise_"))
    return "elementwise";
  if (name.contains("_conv"))
    return "convolutions";
  if (name.contains("_matmul"))
    return "matmuls";
  return "other calls";
}

/// The profile's time per step by kind (ms), and "step" for the time spent
/// outside every call.
std::map<std::string, double> getProfileByKind(const RunResult &result) {
  std::map<std::string, double> byKind;
  double runs = repeat;
  double inCalls = 0;
  for (const runtime::ProfileEntry &entry : runtime::getProfileEntries()) {
    byKind[getProfileKind(entry.name).str()] += entry.ms / runs;
    inCalls += entry.ms / runs;
  }
  byKind["outside calls"] = std::max(0.0, result.wallMs - inCalls);
  return byKind;
}

/// Prints --profile's tables to stderr: the time per step by kind, then
/// the calls that take most.
void printProfile(const RunResult &result) {
  std::map<std::string, double> byKind = getProfileByKind(result);
  llvm::errs() << llvm::formatv("remat-run profile ({0:F1} ms a step):\n",
                                result.wallMs);
  std::vector<std::pair<std::string, double>> kinds(byKind.begin(),
                                                    byKind.end());
  llvm::sort(kinds, [](auto &a, auto &b) { return a.second > b.second; });
  for (auto &[kind, ms] : kinds)
    llvm::errs() << llvm::formatv("  {0,-16} {1,10:F1} ms {2,6:P}\n", kind, ms,
                                  result.wallMs > 0 ? ms / result.wallMs : 0);
  std::vector<runtime::ProfileEntry> entries = runtime::getProfileEntries();
  llvm::sort(entries, [](auto &a, auto &b) { return a.ms > b.ms; });
  constexpr size_t kTopCalls = 15;
  llvm::errs() << "  calls that take most (ms a step, calls a step):\n";
  for (const runtime::ProfileEntry &entry :
       ArrayRef(entries).take_front(kTopCalls))
    llvm::errs() << llvm::formatv("  {0,10:F1} {1,6} {2} ({3})\n",
                                  entry.ms / repeat, entry.calls / repeat,
                                  entry.name, getProfileKind(entry.name));
}

void printStatsLine(const Program &program, const RunResult &result) {
  llvm::json::Object line = getCompileFields(program);
  line["peak_bytes"] = result.stats.peakBytes;
  line["allocated_bytes"] = result.stats.allocatedBytes;
  line["alloc_count"] = result.stats.allocCount;
  line["wall_ms"] = result.wallMs;
  line["min_wall_ms"] = repeat == 1 ? result.wallMs : result.minWallMs;
  line["repeat"] = int64_t(repeat);
  if (profile) {
    llvm::json::Object byKind;
    for (auto &[kind, ms] : getProfileByKind(result))
      byKind[kind] = ms;
    line["profile_ms"] = std::move(byKind);
  }
  if (target == Target::CUDA) {
    line["target"] = "cuda";
    line["kernel_ms"] = result.kernelMs;
  }
  llvm::outs() << llvm::json::Value(std::move(line)) << "\n";
}

/// Compares the outputs of two runs; prints one line per output.
bool compareOutputs(const Program &a, const RunResult &ra, const Program &b,
                    const RunResult &rb) {
  if (a.results.size() != b.results.size()) {
    llvm::outs() << "outputs: " << a.results.size() << " vs "
                 << b.results.size() << ": MISMATCH\n";
    return false;
  }
  bool identical = true;
  for (size_t i = 0; i < a.results.size(); ++i) {
    const NpyArray &x = ra.outputs[i], &y = rb.outputs[i];
    if (a.results[i].type != b.results[i].type) {
      llvm::outs() << "out" << i << ": types " << describe(a.results[i].type)
                   << " vs " << describe(b.results[i].type) << ": MISMATCH\n";
      identical = false;
      continue;
    }
    double maxDiff = 0;
    for (int64_t j = 0, e = a.results[i].numElements(); j < e; ++j)
      maxDiff = std::max(
          maxDiff, std::abs(elementAsDouble(a.results[i], x.data.data(), j) -
                            elementAsDouble(a.results[i], y.data.data(), j)));
    bool same = x.data == y.data;
    identical &= same;
    llvm::outs() << "out" << i
                 << ": max_abs_diff=" << llvm::format("%g", maxDiff)
                 << (same ? " bit-identical\n" : " MISMATCH\n");
  }
  return identical;
}

/// Gives remat-run's `--stats`, `--threads` and `--rng-seed` their names.
/// LLVM's libraries register options of the same names (`-stats` of its
/// statistics, `-rng-seed` of its random number generator); those move to
/// `-llvm-stats`, `-llvm-threads` and `-llvm-rng-seed`, which remat-run
/// hides.
void claimOptionNames() {
  auto &registered = cl::getRegisteredOptions();
  auto claim = [&](cl::Option &own, StringRef name, StringRef displaced) {
    if (cl::Option *other = registered.lookup(name))
      other->setArgStr(displaced);
    own.setArgStr(name);
  };
  claim(printStats, "stats", "llvm-stats");
  claim(threads, "threads", "llvm-threads");
  claim(rngSeed, "rng-seed", "llvm-rng-seed");
}

/// Exits with a usage error for option values the parser accepts but
/// remat-run cannot use.
void checkOptionValues() {
  if (repeat == 0)
    fail(kExitUsage, "--repeat needs a positive count, got 0");
  if (profile && target == Target::CUDA)
    fail(kExitUsage, "--profile times the CPU's calls; with --target cuda, "
                     "REMAT_CUDA_PROFILE=1 profiles the kernels");
  if (profile && !compareFile.empty())
    fail(kExitUsage, "--profile profiles one step: it cannot be used with "
                     "--compare");
  if (threads > kMaxThreads)
    fail(kExitUsage, "--threads needs an integer in [0, " + Twine(kMaxThreads) +
                         "] (0: the machine's cores), got " +
                         Twine(unsigned(threads)));
  if (compileThreads > kMaxThreads)
    fail(kExitUsage, "--compile-threads needs an integer in [0, " +
                         Twine(kMaxThreads) +
                         "] (0: the machine's cores), got " +
                         Twine(unsigned(compileThreads)));
  if (minUnitWork < 1)
    fail(kExitUsage, "--min-unit-work needs a positive count, got " +
                         Twine(int64_t(minUnitWork)));
  if (optLevel > 3)
    fail(kExitUsage,
         "--opt-level needs 0, 1, 2 or 3, got " + Twine(unsigned(optLevel)));
  if (device < 0)
    fail(kExitUsage,
         "--device needs a non-negative index, got " + Twine(int(device)));
}

/// Gives the runtimes the thread count and generator seed, and opens the
/// CUDA device (before compiling: the cubin is built for its architecture).
void setUpRuntimes() {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  runtime::setThreads(threads == 0 ? cores : threads);
  uint64_t seed = 0;
  if (rngSeed.getNumOccurrences())
    seed = rngSeed;
  else if (randomInputs.getNumOccurrences())
    seed = randomInputs;
  runtime::setRngSeed(seed);
  if (target == Target::CUDA) {
#ifdef REMAT_ENABLE_CUDA
    std::string error;
    if (!cuda::initialize(device, error))
      fail(kExitMismatch, error);
#else
    fail(kExitUsage, "--target cuda: remat-run was built without CUDA "
                     "(REMAT_ENABLE_CUDA=OFF, no CUDA toolkit found)");
#endif
  }
}

/// Writes out0.npy, out1.npy, ... of `result` into --outputs.
void writeOutputs(const RunResult &result) {
  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    fail(kExitUsage, "cannot create '" + outputDir + "': " + ec.message());
  for (auto [i, array] : llvm::enumerate(result.outputs)) {
    llvm::SmallString<128> path(outputDir);
    llvm::sys::path::append(path, "out" + std::to_string(i) + ".npy");
    if (llvm::Error error = writeNpy(path, array))
      fail(kExitUsage, llvm::toString(std::move(error)));
  }
}

/// Exits with a usage error unless `other` takes the arguments `program`
/// takes.
void checkSameArguments(const Program &program, const Program &other) {
  if (other.args.size() != program.args.size())
    fail(kExitUsage, "'" + compareFile + "' @" + entry + " takes " +
                         Twine(other.args.size()) + " arguments, '" +
                         inputFile + "' takes " + Twine(program.args.size()));
  for (auto [i, spec] : llvm::enumerate(other.args))
    if (spec.type != program.args[i].type)
      fail(kExitUsage, "argument #" + Twine(i) + " is " + describe(spec.type) +
                           " in '" + compareFile + "' but " +
                           describe(program.args[i].type) + " in '" +
                           inputFile + "'");
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // Buffers of inputs and outputs that do not fit are a step too large to
  // run, not a crash.
  std::set_new_handler([] {
    fail(kExitUsage, "out of memory: the step's inputs, outputs or compiled "
                     "code do not fit in this machine's memory");
  });
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  claimOptionNames();
  cl::HideUnrelatedOptions(category);
  // With an error stream the parser reports bad options and returns instead
  // of exiting with 1.
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "remat-run: lower a training step for the CPU or CUDA, run it, and "
          "compare or measure it\n\n"
          "Exit codes: 0 success, 1 outputs that differ (--compare) or a step "
          "that does not compile, 2 bad usage or inputs.\n",
          &llvm::errs()))
    return kExitUsage;
  checkOptionValues();
  setUpRuntimes();

  DialectRegistry registry;
  registerCUDALoweringDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  DefaultTimingManager timingManager;
  timingManager.setEnabled(timing);
  TimingScope timer = timingManager.getRootScope();

  Program program = compile(context, inputFile, timer);
  if (compileOnly) {
    std::optional<Program> other;
    if (!compareFile.empty())
      other = compile(context, compareFile, timer);
    if (printStats) {
      printCompileLine(program);
      if (other)
        printCompileLine(*other);
    }
    return 0;
  }
  std::vector<NpyArray> arrays = loadInputs(program);
  RunResult result = run(program, arrays);

  if (!outputDir.empty())
    writeOutputs(result);
  if (printStats)
    printStatsLine(program, result);
  if (profile)
    printProfile(result);

  if (compareFile.empty())
    return 0;
  Program other = compile(context, compareFile, timer);
  checkSameArguments(program, other);
  RunResult otherResult = run(other, arrays);
  if (printStats)
    printStatsLine(other, otherResult);
  return compareOutputs(program, result, other, otherResult) ? 0
                                                             : kExitMismatch;
}
