// RUN: remat-opt %s '-remat-checkpoint-loops=policy=budget budget-bytes=320000' \
// RUN:   -remat-report -o /dev/null 2>&1 | FileCheck %s
// RUN: remat-opt %s '-remat-checkpoint-loops=policy=budget budget-bytes=600000' \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=FITS
// RUN: not remat-opt %s '-remat-checkpoint-loops=policy=budget budget-bytes=100000' \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=INFEASIBLE
// RUN: not remat-opt %s '-remat-checkpoint-loops=policy=budget budget-bytes=320000 plan-pipeline=no-such-pass' \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOPLAN

// Two scans of tanh layers: A, 16 iterations over a 256x16 f32 carry
// (16 KiB; its stack 256 KiB, 4096 FLOPs an iteration), and B, 4 iterations
// over a 4x16 carry (64 FLOPs an iteration). Untouched, A's stack dominates
// the peak; checkpointing A alone fits 320000 bytes, and costs fewer
// recompute FLOPs (16 * 4096 = 65536) than checkpointing both, which fits
// with a lower peak but reruns B too (65536 + 4 * 64). k for A is the divisor of 16 of least predicted peak. The
// prediction is the memory plan of the rewritten step, so -remat-report's
// static peak and recompute FLOPs of the output are the remark's figures.
// CHECK:      remark: -remat-checkpoint-loops: policy=budget, budget 320000 bytes: k = [[K:[0-9]+]] 0 for the 2 scans (0: left alone), predicted peak [[PEAK:[0-9]+]] bytes (untouched: {{[0-9]+}}), recompute FLOPs 65536
// CHECK:      remark: -remat-checkpoint-loops: a scan of 16 iterations saves its carries every [[K]] iterations
// CHECK:      remark: -remat-checkpoint-loops: the scan is left alone (policy=budget)
// CHECK:      static peak: [[PEAK]] bytes
// CHECK:      recompute FLOPs: 65536 in 1 recomputed ops
//
// Checks that a budget the untouched step fits leaves both scans alone.
// FITS:       remark: -remat-checkpoint-loops: policy=budget, budget 600000 bytes: k = 0 0 for the 2 scans (0: left alone), predicted peak {{[0-9]+}} bytes (untouched: {{[0-9]+}}), recompute FLOPs 0 (1 choices measured on their memory plans)
//
// Checks that a budget no choice fits is an error naming the least peak.
// INFEASIBLE: error: -remat-checkpoint-loops: budget of 100000 bytes is infeasible: the least predicted peak is {{[0-9]+}} bytes (untouched: {{[0-9]+}} bytes)
//
// Checks that a plan that cannot be made is an error, not a guess.
// NOPLAN:     error: -remat-checkpoint-loops: policy=budget needs the memory plan: {{.*}}'no-such-pass' does not refer to a registered pass
func.func @two_scans(%x: tensor<256x16xf32>, %y: tensor<4x16xf32>) -> (tensor<256x16xf32>, tensor<4x16xf32>, tensor<256x16xf32>, tensor<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  %sa = tensor.empty() : tensor<16x256x16xf32>
  %ha, %as = scf.for %i = %c0 to %c16 step %c1
      iter_args(%hc = %x, %asc = %sa) -> (tensor<256x16xf32>, tensor<16x256x16xf32>) {
    %a = math.tanh %hc : tensor<256x16xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0, 0] [1, 256, 16] [1, 1, 1] : tensor<256x16xf32> into tensor<16x256x16xf32>
    scf.yield %a, %as2 : tensor<256x16xf32>, tensor<16x256x16xf32>
  }
  %sb = tensor.empty() : tensor<4x4x16xf32>
  %hb, %bs = scf.for %i = %c0 to %c4 step %c1
      iter_args(%hc = %y, %bsc = %sb) -> (tensor<4x16xf32>, tensor<4x4x16xf32>) {
    %b = math.tanh %hc : tensor<4x16xf32>
    %bs2 = tensor.insert_slice %b into %bsc[%i, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<4x16xf32> into tensor<4x4x16xf32>
    scf.yield %b, %bs2 : tensor<4x16xf32>, tensor<4x4x16xf32>
  }
  %gx, %gy = remat.backward {
    %ga = scf.for %j = %c0 to %c16 step %c1 iter_args(%gc = %x) -> (tensor<256x16xf32>) {
      %i = arith.subi %c15, %j : index
      %a = tensor.extract_slice %as[%i, 0, 0] [1, 256, 16] [1, 1, 1] : tensor<16x256x16xf32> to tensor<256x16xf32>
      %m = arith.mulf %gc, %a : tensor<256x16xf32>
      scf.yield %m : tensor<256x16xf32>
    }
    %gb = scf.for %j = %c0 to %c4 step %c1 iter_args(%gc = %y) -> (tensor<4x16xf32>) {
      %i = arith.subi %c3, %j : index
      %b = tensor.extract_slice %bs[%i, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<4x4x16xf32> to tensor<4x16xf32>
      %m = arith.mulf %gc, %b : tensor<4x16xf32>
      scf.yield %m : tensor<4x16xf32>
    }
    remat.yield %ga, %gb : tensor<256x16xf32>, tensor<4x16xf32>
  } : tensor<256x16xf32>, tensor<4x16xf32>
  return %ha, %hb, %gx, %gy : tensor<256x16xf32>, tensor<4x16xf32>, tensor<256x16xf32>, tensor<4x16xf32>
}
