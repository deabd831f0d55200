// RUN: remat-opt %s -remat-mark=drop-raising-segments=true -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s
// RUN: remat-opt %s -remat-mark="policy=selective save-ops=math.exp" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAMED
// RUN: remat-opt %s -remat-mark="policy=selective save-ops=math.exp drop-raising-segments=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=SELECTIVE
// RUN: remat-opt %s -remat-mark=drop-raising-segments=true -remat-report -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// Checks that -remat-mark's drop-raising-segments unmarks the checkpoint
// segment whose recomputation raises the static peak (segment 0: its column
// sums keep their 1 MiB input alive into the backward) and keeps the one
// that does not (segment 1), saying what it dropped; that a policy whose
// marking raises the peak names the segment in a remark; and that after the
// drop -remat-report finds no segment raising the peak.

// CHECK: remark: -remat-mark: dropped checkpoint segment 0: recomputing it raises the static peak above the unmarked step's [[PEAK:[0-9]+]] bytes; segment 0 alone: {{[0-9]+}}; kept: [[PEAK]] bytes
// CHECK: linalg.reduce
// CHECK-NOT: remat.segment = 0
// CHECK-SAME: dimensions = [0]
// CHECK-NOT: remat.segment = 0
// CHECK: math.tanh {{.*}}remat.segment = 1
// CHECK: math.tanh {{.*}}remat.segment = 1

// NAMED: remark: -remat-mark: policy=selective's marking raises the static peak above the unmarked step's ([[PEAK:[0-9]+]] -> [[UP:[0-9]+]] bytes); segment 0 alone: [[UP]]; drop-raising-segments=true unmarks what raises it
// NAMED: remark: -remat-mark: policy=selective, segments: 1, predicted peak [[UP]] bytes

// SELECTIVE: remark: -remat-mark: dropped checkpoint segment 0: recomputing it raises the static peak above the unmarked step's [[PEAK:[0-9]+]] bytes
// SELECTIVE: remark: -remat-mark: policy=selective, segments: 0, predicted peak [[PEAK]] bytes, recompute FLOPs 0
// SELECTIVE-NOT: remat.policy
// SELECTIVE-NOT: remat.segment

// REPORT-NOT: raises the static peak by
// REPORT: segment 1 recomputed alone: static peak [[PEAK:[0-9]+]] bytes (0 bytes)
// REPORT-NOT: raises the static peak by
func.func @step(%x: tensor<256x1024xf32>, %dy: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<256x1024xf32>) {
  %a = math.exp %x : tensor<256x1024xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %s = linalg.reduce ins(%a : tensor<256x1024xf32>) outs(%init : tensor<1024xf32>) dimensions = [0] {remat.segment = 0 : i64}
    (%in: f32, %acc: f32) {
      %sum = arith.addf %in, %acc : f32
      linalg.yield %sum : f32
    }
  %t = math.tanh %s {remat.segment = 1 : i64} : tensor<1024xf32>
  %u = math.tanh %t {remat.segment = 1 : i64} : tensor<1024xf32>
  %g = remat.backward {
    %d = arith.mulf %s, %dy : tensor<1024xf32>
    %d2 = arith.mulf %d, %u : tensor<1024xf32>
    %b = tensor.empty() : tensor<256x1024xf32>
    %bx = linalg.broadcast ins(%d2 : tensor<1024xf32>) outs(%b : tensor<256x1024xf32>) dimensions = [0]
    remat.yield %bx : tensor<256x1024xf32>
  } : tensor<256x1024xf32>
  return %u, %g : tensor<1024xf32>, tensor<256x1024xf32>
}
