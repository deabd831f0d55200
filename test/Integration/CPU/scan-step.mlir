// RUN: remat-run %s --random-inputs 5 --compare %S/Inputs/scan-unrolled.mlir | FileCheck %s --check-prefix=SAME
// RUN: remat-opt %s -remat-report | FileCheck %s --check-prefix=STATIC
// RUN: remat-run %s --random-inputs 5 --stats | FileCheck %s --check-prefix=MEASURED

// A step with structured control flow on tensors, as scans over layers
// are written: an scf.for whose carry is a tensor and an scf.if. Both
// lowerings bufferize them (a new buffer per iteration's carry), the step
// computes what its unrolled form does (--random-inputs gives the integer
// scalar %n the seed itself, 5 > 0, so the branch is taken). The carries'
// buffers are allocated in the loop bodies, which the arena does not plan
// yet: the static peak counts each from the position of the op around it to
// its last use, and the carries of the loops running there (one loop, a 4x8
// f32 carry of 128 bytes) once more, since an iteration allocates its carry
// before the previous one's is freed: an upper bound on the measured peak,
// and it says so.
// SAME: out0: max_abs_diff=0 bit-identical
// SAME: out1: max_abs_diff=0 bit-identical
// STATIC: static peak: 1088 bytes (arena of 448 bytes for 6 buffers, at most 448 bytes live at once; 640 bytes in 5 allocations left to the allocator and 128 bytes of loop carries (a second instance each), at most 640 bytes of them live at one position): at least the heap peak of the generated code
// MEASURED: "peak_bytes":960,
func.func @step(%x: tensor<4x8xf32>, %dy: tensor<4x8xf32>, %n: i64)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0 : i64
  %flag = arith.cmpi sgt, %n, %zero : i64
  %two = scf.for %i = %c0 to %c2 step %c1 iter_args(%t = %x) -> (tensor<4x8xf32>) {
    %y = math.tanh %t : tensor<4x8xf32>
    scf.yield %y : tensor<4x8xf32>
  }
  %four = scf.for %i = %c2 to %c4 step %c1 iter_args(%t = %two) -> (tensor<4x8xf32>) {
    %y = math.tanh %t : tensor<4x8xf32>
    scf.yield %y : tensor<4x8xf32>
  }
  %r = scf.if %flag -> (tensor<4x8xf32>) {
    %e = math.exp %four : tensor<4x8xf32>
    scf.yield %e : tensor<4x8xf32>
  } else {
    scf.yield %four : tensor<4x8xf32>
  }
  %g = remat.backward {
    %e = arith.mulf %dy, %r : tensor<4x8xf32>
    %f = arith.mulf %e, %two : tensor<4x8xf32>
    remat.yield %f : tensor<4x8xf32>
  } : tensor<4x8xf32>
  return %r, %g : tensor<4x8xf32>, tensor<4x8xf32>
}
