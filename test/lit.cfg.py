# -*- Python -*-
# lit configuration of remat's regression tests.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "remat"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.remat_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
# remat-run's step cache: one of the build tree's, never the user's.
config.environment["REMAT_CACHE_DIR"] = os.path.join(
    config.test_exec_root, "step-cache"
)
config.substitutions.append(("%remat_src_root", config.remat_src_root))
config.substitutions.append(("%remat_obj_root", config.remat_obj_root))

# FileCheck, not, count from LLVM 22; remat's own tools from the build tree.
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["remat-opt"], [config.remat_tools_dir, config.llvm_tools_dir]
)

# remat-run, and Python for checkers; `numpy` when the checkers can use it.
llvm_config.add_tool_substitutions(
    ["remat-run"], [config.remat_tools_dir, config.llvm_tools_dir]
)
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(
    (
        "%expect_exit",
        "%s %s"
        % (
            config.python_executable,
            os.path.join(config.remat_src_root, "test", "Utils", "expect_exit.py"),
        ),
    )
)
if subprocess.call(
    [config.python_executable, "-c", "import numpy"],
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
) == 0:
    config.available_features.add("numpy")
else:
    lit_config.note("numpy is missing: tests that check outputs with it are skipped")

# The install test builds a consumer project with CMake.
if config.cmake_command and shutil.which(config.cmake_command):
    config.available_features.add("cmake")
    config.substitutions.append(("%cmake", config.cmake_command))
    config.substitutions.append(("%cxx", config.cxx_compiler))
    config.substitutions.append(("%mlir_dir", config.mlir_dir))
else:
    lit_config.note("cmake is missing: the install/consumer test is skipped")

# PyTorch front end (test/Torch): feature `torch` when the cached venv of
# scripts/torch-venv exists and imports torch (scripts/test creates it).
_torch_python = subprocess.run(
    [os.path.join(config.remat_src_root, "scripts", "torch-venv"), "--check"],
    capture_output=True, text=True,
).stdout.strip()
if _torch_python and subprocess.call(
    [_torch_python, "-c", "import torch"],
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
) == 0:
    config.available_features.add("torch")
    config.substitutions.append(
        (
            "%remat_torch_python",
            "env PYTHONPATH=%s %s"
            % (os.path.join(config.remat_src_root, "python"), _torch_python),
        )
    )
    config.substitutions.append(
        (
            "%remat-torch-export",
            os.path.join(config.remat_src_root, "tools", "remat-torch-export"),
        )
    )
else:
    lit_config.note("no PyTorch venv (scripts/torch-venv): test/Torch is skipped")

# `mlir-runner` when LLVM's tools include it (Debian's mlir-22-tools), with
# its runtime libraries: tests that run memref-level IR on the CPU.
_mlir_lib_dir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
if os.path.exists(os.path.join(config.llvm_tools_dir, "mlir-runner")) and os.path.exists(
    os.path.join(_mlir_lib_dir, "libmlir_runner_utils.so")
):
    config.available_features.add("mlir-runner")
    config.substitutions.append(("%mlir_lib_dir", _mlir_lib_dir))

# `sanitize` on the ASan+UBSan build (build-sanitize/), for the few tests too
# slow to run twice.
if config.remat_sanitize:
    config.available_features.add("sanitize")
    # test/Torch/check_torch.py checks the early-stop checkpoint and the
    # budget policy here, the -remat-checkpoint and -remat-mark code under
    # the sanitizers; the Release run checks all six policies on the same
    # steps (CHECK lines with the RELEASE prefix).
    config.environment["REMAT_CHECK_TORCH_POLICIES"] = "torch-checkpoint,budget"

# `native-gemm` where the runtime's own GEMM multiplies (runtime/Sgemm.cpp:
# AVX-512 hosts, unless REMAT_GEMM=blas): its rows round the same whatever
# the number of rows; elsewhere OpenBLAS blocks by the sizes it is given.
try:
    with open("/proc/cpuinfo") as _cpuinfo:
        _cpu_flags = set(next((l for l in _cpuinfo if l.startswith("flags")), "").split())
except OSError:
    _cpu_flags = set()
if "avx512f" in _cpu_flags and os.environ.get("REMAT_GEMM") != "blas":
    config.available_features.add("native-gemm")

# `breadth` with `--param breadth=1` (scripts/test --breadth): the checks
# of many whole models (test/Torch/zoo-breadth.test), too long for CI.
if lit_config.params.get("breadth"):
    config.available_features.add("breadth")

# CUDA: `cuda-toolkit` when ptxas is there and remat's CUDA runtime was built
# (cubins and linked host binaries, no GPU needed); `cuda-device` when the
# driver lists a GPU (tests that run kernels).
ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
if config.remat_enable_cuda and os.path.exists(ptxas):
    config.available_features.add("cuda-toolkit")
    # A sanitized runtime needs the sanitizer runtimes in what links it.
    runtime_lib = config.remat_cuda_runtime_lib
    if config.remat_sanitize:
        runtime_lib += " -fsanitize=address,undefined"
    config.substitutions.append(("%cuda_runtime_lib", runtime_lib))
else:
    lit_config.note(
        "CUDA toolkit (ptxas) or REMAT_ENABLE_CUDA missing: CUDA compile tests are skipped"
    )
nvidia_smi = shutil.which("nvidia-smi")
if nvidia_smi and subprocess.run(
    [nvidia_smi, "-L"], capture_output=True, text=True
).stdout.startswith("GPU "):
    config.available_features.add("cuda-device")
else:
    lit_config.note(
        "no CUDA device (nvidia-smi -L lists no GPU): tests that run CUDA kernels are skipped"
    )

# remat-gen: random training steps (test/Difftest).
llvm_config.add_tool_substitutions(
    ["remat-gen"], [config.remat_tools_dir, config.llvm_tools_dir]
)
