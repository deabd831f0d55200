// RUN: rm -rf %t && mkdir -p %t
// RUN: remat-opt %s -remat-checkpoint -remat-verify -o %t/ckpt.mlir
// RUN: FileCheck %s --check-prefix=CLONE < %t/ckpt.mlir
// RUN: remat-opt %t/ckpt.mlir -remat-report | FileCheck %s --check-prefix=STATIC
// RUN: remat-run %t/ckpt.mlir --random-inputs 3 --stats --compare %s \
// RUN:   | FileCheck %s --check-prefix=MEASURED
// RUN: sed 's/ {remat.segment = 0 : i64}//' %s > %t/unmarked.mlir
// RUN: remat-opt %t/unmarked.mlir -remat-mark=policy=sqrt -remat-checkpoint -remat-verify \
// RUN:   -o %t/marked.mlir 2>/dev/null
// RUN: remat-run %t/marked.mlir --random-inputs 3 --compare %t/unmarked.mlir \
// RUN:   | FileCheck %s --check-prefix=SAME

// Checks that remat.scatter_add_rows goes through the whole pipeline: a
// forward one in a segment is recomputed in the backward region (a clone
// that -remat-verify accepts), its FLOPs are one add per element of values
// (48 of the forward's 304), the static peak of the memory plan is the
// generated code's measured heap peak, and the checkpointed step (marked by
// hand or by -remat-mark) is bit-identical to the unmarked one.
// CLONE: remat.scatter_add_rows {{.*}} {remat.id = 0 : i64, remat.segment = 0 : i64}
// CLONE: remat.backward
// CLONE: remat.scatter_add_rows {{.*}} {remat.clone_of = 0 : i64}
// CLONE: remat.scatter_add_rows {{.*}} skip 2 :
// STATIC: static peak: 1536 bytes (arena of 1536 bytes for 3 buffers
// STATIC: forward FLOPs: 304, backward FLOPs: 176, recompute FLOPs: 304 in 3 recomputed ops
// MEASURED: {"alloc_count":1,"allocated_bytes":1536,{{.*}}"peak_bytes":1536,
// MEASURED: out0: max_abs_diff=0 bit-identical
// MEASURED: out1: max_abs_diff=0 bit-identical
// MEASURED: out2: max_abs_diff=0 bit-identical
// SAME: out0: max_abs_diff=0 bit-identical
// SAME: out1: max_abs_diff=0 bit-identical
// SAME: out2: max_abs_diff=0 bit-identical
func.func @step(%table: tensor<16x8xf32>, %ids: tensor<6xi64>, %x: tensor<6x8xf32>,
                %dy: tensor<6x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %u = remat.scatter_add_rows %x into %table[%ids] {remat.segment = 0 : i64}
         : tensor<6x8xf32>, tensor<6xi64> into tensor<16x8xf32>
  %a = math.tanh %u {remat.segment = 0 : i64} : tensor<16x8xf32>
  %b = math.tanh %a {remat.segment = 0 : i64} : tensor<16x8xf32>
  %g:2 = remat.backward {
    %d = arith.mulf %a, %b : tensor<16x8xf32>
    %c0 = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x8xf32>
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
    %gw = remat.scatter_add_rows %dy into %z[%ids] skip 2
            : tensor<6x8xf32>, tensor<6xi64> into tensor<16x8xf32>
    remat.yield %d, %gw : tensor<16x8xf32>, tensor<16x8xf32>
  } : tensor<16x8xf32>, tensor<16x8xf32>
  return %b, %g#0, %g#1 : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}
