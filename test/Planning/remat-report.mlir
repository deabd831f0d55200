// RUN: remat-opt %s -remat-report -o /dev/null | FileCheck %s -DFILE=%s
// RUN: remat-opt %s -remat-checkpoint -remat-report -o /dev/null | FileCheck %s -DFILE=%s --check-prefix=AFTER
// RUN: remat-opt %s -remat-checkpoint -remat-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON

func.func @step(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %zero = arith.constant {remat.segment = 0 : i64} 0.0 : f32
  %e = tensor.empty() {remat.segment = 0 : i64} : tensor<8x16xf32>
  %f = linalg.fill {remat.segment = 0 : i64} ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %h = linalg.matmul {remat.segment = 0 : i64} ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %a = math.tanh %h {remat.segment = 0 : i64} : tensor<8x16xf32>
  %b = arith.mulf %a, %x : tensor<8x16xf32>
  %g = remat.backward {
    %d = arith.mulf %a, %b : tensor<8x16xf32>
    %s = arith.subf %d, %x : tensor<8x16xf32>
    remat.yield %s : tensor<8x16xf32>
  } : tensor<8x16xf32>
  return %b, %g : tensor<8x16xf32>, tensor<8x16xf32>
}

// Checks the report's figures against a hand computation, before and after
// checkpointing. x, h, a, b, d, s are 8x16 f32 = 512 bytes; w is 1024.
// FLOPs: the matmul runs 8*16*16 iterations of 2 payload ops (mul, add) =
// 4096, tanh and each elementwise op 128, fill/empty/constant 0:
// forward 4096 + 128 + 128 = 4352, backward 128 + 128 = 256.
//
// Before: the backward uses x (an argument), a and b. The static peak is the
// memory plan of the bufferized step (-remat-bufferize): the matmul writes
// h (512), the tanh writes a into h's buffer (h dies there), b needs its
// own (a lives on), and the fused d and s (the result) write into a's (a
// dies there): one arena of 1024 bytes for 2 buffers. The model agrees,
// first reaching its peak at b.
// CHECK:      remat report for @step
// CHECK-NEXT:   saved activations: 1024 bytes in 3 values (+ 512 bytes of saved arguments)
// CHECK-NEXT:   static peak: 1024 bytes (arena of 1024 bytes for 2 buffers, at most 1024 bytes live at once): the heap peak of the generated code
// CHECK-NEXT:   model peak: 1024 bytes, reached at [[FILE]]:11:8 (the liveness model -remat-mark plans with)
// CHECK-NEXT:   static peak once checkpointed: 1024 bytes
// CHECK-NEXT:   segment 0 recomputed alone: static peak 1024 bytes (0 bytes)
// CHECK-NEXT:   forward FLOPs: 4352, backward FLOPs: 256, recompute FLOPs: 0 in 0 recomputed ops
// CHECK-NEXT:   segment unmarked: 0 ops, 0 recomputed (0 FLOPs), 1024 saved bytes
// CHECK-NEXT:     saved 512 bytes: argument at [[FILE]]:5:17
// CHECK-NEXT:     saved 512 bytes: arith.mulf at [[FILE]]:11:8
// CHECK-NEXT:   segment 0: 5 ops, 0 recomputed (0 FLOPs), 512 saved bytes
// CHECK-NEXT:     saved 512 bytes: math.tanh at [[FILE]]:10:8
//
// After: a is recomputed in the backward from x and w, saved through a
// barrier (arguments, 512 + 1024 bytes); its forward buffer is b's by then.
// The clones of empty, fill, matmul and tanh cost 4096 + 128 = 4224 FLOPs
// (the constant is copied without bookkeeping). The plan: b, and the
// recomputed matmul's buffer which the recomputed tanh and the result
// reuse, 1024 bytes; the model reaches them at the clone (which keeps its
// original's location).
// AFTER:      saved activations: 512 bytes in 3 values (+ 1536 bytes of saved arguments)
// AFTER-NEXT: static peak: 1024 bytes (arena of 1024 bytes for 2 buffers, at most 1024 bytes live at once): the heap peak of the generated code
// AFTER-NEXT: model peak: 1024 bytes, reached at [[FILE]]:9:8 (the liveness model -remat-mark plans with)
// AFTER-NEXT: forward FLOPs: 4352, backward FLOPs: 256, recompute FLOPs: 4224 in 4 recomputed ops
// AFTER-NEXT: segment unmarked: 0 ops, 0 recomputed (0 FLOPs), 2048 saved bytes
// AFTER:      segment 0: 5 ops, 4 recomputed (4224 FLOPs), 0 saved bytes
// AFTER-NOT:  saved
// The JSON has the same figures; llvm::json prints keys sorted.
// JSON:       "loops": []
// JSON-NEXT:  "name": "step"
// JSON:       "ops": 5
// JSON-NEXT:  "recompute_flops": 4224
// JSON-NEXT:  "recomputed_ops": 4
// JSON-NEXT:  "saved": []
// JSON-NEXT:  "saved_bytes": 0
// JSON-NEXT:  "segment": "0"
// JSON:       "totals": {
// JSON-NEXT:  "arena_bytes": 1024
// JSON-NEXT:  "arena_max_live_bytes": 1024
// JSON-NEXT:  "backward_flops": 256
// JSON-NEXT:  "carried_bytes": 0
// JSON-NEXT:  "forward_flops": 4352
// JSON-NEXT:  "loop_recompute_flops": 0
// JSON-NEXT:  "loop_saved_bytes": 0
// JSON-NEXT:  "model_peak_at": "{{.*}}remat-report.mlir:9:8"
// JSON-NEXT:  "model_peak_bytes": 1024
// JSON-NEXT:  "ops_without_cost_model": 0
// JSON-NEXT:  "planned_buffers": 2
// JSON-NEXT:  "recompute_flops": 4224
// JSON-NEXT:  "recomputed_ops": 4
// JSON-NEXT:  "saved_activation_bytes": 512
// JSON-NEXT:  "saved_argument_bytes": 1536
// JSON-NEXT:  "static_peak_bytes": 1024
// JSON-NEXT:  "static_peak_source": "plan"
// JSON-NEXT:  "unplanned_buffers": 0
// JSON-NEXT:  "unplanned_bytes": 0
// JSON:       "version": 1
