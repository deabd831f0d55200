// RUN: remat-opt %s -remat-report -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// RUN: remat-opt %s -remat-report=format=json -mlir-print-op-on-diagnostic=false -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=JSON
// RUN: remat-opt %s -remat-checkpoint -remat-report -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER

// Checks that -remat-report, before -remat-checkpoint, plans the step
// checkpointed and each segment recomputed alone, and names the segment
// whose recomputation raises the static peak: recomputing the column sums
// of segment 0 keeps their 1 MiB input alive into the backward, where the
// unmarked step keeps only the 4 KiB sums; segment 1's two tanh ops change
// nothing. After -remat-checkpoint (clones present) there is nothing to
// predict.
// CHECK: remark: -remat-report: checkpointing every segment raises the static peak by [[UP:[0-9]+]] bytes ([[PEAK:[0-9]+]] -> [[CKPT:[0-9]+]])
// CHECK: effects.mlir:[[@LINE+24]]:8: remark: -remat-report: recomputing checkpoint segment 0 raises the static peak by [[UP]] bytes ([[PEAK]] -> [[CKPT]]): its recomputation keeps more live in the backward than it frees; unmark it
// CHECK-NOT: recomputing checkpoint segment 1
// CHECK: static peak: [[PEAK]] bytes
// CHECK: static peak once checkpointed: [[CKPT]] bytes
// CHECK: segment 0 recomputed alone: static peak [[CKPT]] bytes (+[[UP]] bytes)
// CHECK: segment 1 recomputed alone: static peak [[PEAK]] bytes (0 bytes)

// JSON: "segment_effects": [
// JSON-NEXT: {
// JSON-NEXT: "peak_change_bytes": {{[1-9][0-9]*}},
// JSON-NEXT: "segment": 0,
// JSON: "peak_change_bytes": 0,
// JSON-NEXT: "segment": 1,
// JSON: "checkpointed_static_peak_bytes": {{[0-9]+}},

// AFTER-NOT: remark
// AFTER-NOT: once checkpointed
// AFTER: static peak: {{[0-9]+}} bytes
// AFTER-NOT: recomputed alone
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
