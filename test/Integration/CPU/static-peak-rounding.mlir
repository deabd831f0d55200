// RUN: remat-opt %s -remat-report | FileCheck %s --check-prefix=STATIC
// RUN: remat-run %s --random-inputs 3 --stats | FileCheck %s --check-prefix=MEASURED

// Nine 12-byte activations all live at the start of the backward region: the
// static peak counts each rounded to the arena's 64-byte alignment, as the
// generated code places them (9 * 64 = 576 bytes), not 9 * 12 = 108.
// STATIC: static peak: 576 bytes (arena of 576 bytes for 9 buffers
// MEASURED: {"alloc_count":1,"allocated_bytes":576,{{.*}}"peak_bytes":576,
func.func @step(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %a0 = math.tanh %x : tensor<3xf32>
  %a1 = math.tanh %a0 : tensor<3xf32>
  %a2 = math.tanh %a1 : tensor<3xf32>
  %a3 = math.tanh %a2 : tensor<3xf32>
  %a4 = math.tanh %a3 : tensor<3xf32>
  %a5 = math.tanh %a4 : tensor<3xf32>
  %a6 = math.tanh %a5 : tensor<3xf32>
  %a7 = math.tanh %a6 : tensor<3xf32>
  %a8 = math.tanh %a7 : tensor<3xf32>
  %g = remat.backward {
    %d0 = arith.mulf %x, %a0 : tensor<3xf32>
    %d1 = arith.mulf %d0, %a1 : tensor<3xf32>
    %d2 = arith.mulf %d1, %a2 : tensor<3xf32>
    %d3 = arith.mulf %d2, %a3 : tensor<3xf32>
    %d4 = arith.mulf %d3, %a4 : tensor<3xf32>
    %d5 = arith.mulf %d4, %a5 : tensor<3xf32>
    %d6 = arith.mulf %d5, %a6 : tensor<3xf32>
    %d7 = arith.mulf %d6, %a7 : tensor<3xf32>
    %d8 = arith.mulf %d7, %a8 : tensor<3xf32>
    remat.yield %d8 : tensor<3xf32>
  } : tensor<3xf32>
  return %a8, %g : tensor<3xf32>, tensor<3xf32>
}
