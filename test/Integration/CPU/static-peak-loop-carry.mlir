// RUN: remat-opt %s -remat-report -o /dev/null | FileCheck %s --check-prefix=STATIC
// RUN: remat-run %s --random-inputs 1 --stats | FileCheck %s --check-prefix=MEASURED

// A loop whose carry (1024 f32, 4096 bytes) starts as the step's argument:
// each iteration allocates its tanh before the previous iteration's carry
// is freed, so two instances of the loop body's one allocation are live at
// once, with the arena (the backward's product, 4096 bytes): 12288 bytes,
// as remat-run measures. Counting the loop body's allocation once, the
// static peak said 8192 bytes, "at least the heap peak", below it; the
// carry of the running loop now counts once more, at the loop's position.
// STATIC: static peak: 12288 bytes (arena of 4096 bytes for 1 buffers, at most 4096 bytes live at once; 4096 bytes in 1 allocations left to the allocator and 4096 bytes of loop carries (a second instance each), at most 8192 bytes of them live at one position): at least the heap peak of the generated code
// MEASURED: "peak_bytes":12288,
func.func @step(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %x) -> (tensor<1024xf32>) {
    %t = math.tanh %a : tensor<1024xf32>
    scf.yield %t : tensor<1024xf32>
  }
  %g = remat.backward {
    %m = arith.mulf %r, %r : tensor<1024xf32>
    remat.yield %m : tensor<1024xf32>
  } : tensor<1024xf32>
  return %g : tensor<1024xf32>
}
