// RUN: remat-opt %s -remat-report -o /dev/null | FileCheck %s -DFILE=%s
// RUN: remat-opt %s -remat-checkpoint-loops=every=2 -remat-checkpoint \
// RUN:   -remat-verify -remat-report -o /dev/null 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=AFTER
// RUN: remat-opt %s -remat-checkpoint-loops=every=2 -remat-checkpoint \
// RUN:   -remat-report=format=json -o /dev/null 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=JSON
// RUN: remat-opt %s -remat-checkpoint-loops=every=1 -cse -canonicalize \
// RUN:   -remat-report -o /dev/null 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=EVERY1

// A scan: layer i computes a = tanh(h W) (matmul 4*8*8 iterations of a
// multiply and an add = 512 FLOPs, tanh 32) and stacks a into slot i of a
// 6x4x8 f32 stack (768 bytes); the backward loop reads slot 5 - j and
// multiplies it into its carry (32 FLOPs). Index arithmetic (5 - j) and
// data movement cost nothing.
func.func @scan(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<6x4x8xf32>
  %h, %as = scf.for %i = %c0 to %c6 step %c1
      iter_args(%hc = %x, %asc = %se) -> (tensor<4x8xf32>, tensor<6x4x8xf32>) {
    %e = tensor.empty() : tensor<4x8xf32>
    %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %z = linalg.matmul ins(%hc, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z0 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %a = math.tanh %z : tensor<4x8xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<6x4x8xf32>
    scf.yield %a, %as2 : tensor<4x8xf32>, tensor<6x4x8xf32>
  }
  %g = remat.backward {
    %gx = scf.for %j = %c0 to %c6 step %c1 iter_args(%gc = %x) -> (tensor<4x8xf32>) {
      %i = arith.subi %c5, %j : index
      %a = tensor.extract_slice %as[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<6x4x8xf32> to tensor<4x8xf32>
      %m = arith.mulf %gc, %a : tensor<4x8xf32>
      scf.yield %m : tensor<4x8xf32>
    }
    remat.yield %gx : tensor<4x8xf32>
  } : tensor<4x8xf32>
  return %h, %g : tensor<4x8xf32>, tensor<4x8xf32>
}

// Checks a scan's figures: forward 6 * (512 + 32) = 3264 FLOPs, backward
// 6 * 32 = 192, and its one saved value, the stack (768 bytes).
// CHECK-LABEL: remat report for @scan
// CHECK:        forward FLOPs: 3264, backward FLOPs: 192, recompute FLOPs: 0 in 0 recomputed ops
// CHECK-NEXT:   loops: 768 saved bytes, recompute FLOPs 0
// CHECK-NEXT:   loop at [[FILE]]:24:13: 6 iterations, forward FLOPs 3264, 768 saved bytes, recompute FLOPs 0
// CHECK-NOT:    ops without a cost model
// CHECK:        saved 768 bytes: scf.for at [[FILE]]:24:13
//
// Checks the scan after -remat-checkpoint-loops at k = 2: the forward is a
// loop over 3 blocks of 2 iterations (the same 3264 FLOPs) saving 3 carries
// of 128 bytes; the backward reruns 3 blocks of 2 iterations, 3 * 2 * 544 =
// 3264 recompute FLOPs, in one rerun loop (the backward's own 192 stay).
// AFTER-LABEL: remat report for @scan
// AFTER:        forward FLOPs: 3264, backward FLOPs: 192, recompute FLOPs: 3264 in 1 recomputed ops
// AFTER-NEXT:   loops: 384 saved bytes, recompute FLOPs 3264
// AFTER-NEXT:   loop at {{.*}}: 3 iterations, forward FLOPs 3264, 384 saved bytes, recompute FLOPs 3264
// AFTER-NEXT:   segment unmarked: 0 ops, 1 recomputed (3264 FLOPs)
//
// Checks k = 1 after canonicalization, which inlines the rerun loop of one
// iteration: its 4 ops (empty, zero fill, matmul, tanh; marked too) are still
// the scan's recompute, 6 * 544 FLOPs; 6 carries of 128 bytes are saved.
// EVERY1-LABEL: remat report for @scan
// EVERY1:        forward FLOPs: 3264, backward FLOPs: 192, recompute FLOPs: 3264 in 4 recomputed ops
// EVERY1-NEXT:   loops: 768 saved bytes, recompute FLOPs 3264

// A loop nest in a checkpoint segment: 3 iterations of an inner loop of 5
// (0 to 10 step 2) over a 4-element exp (4 FLOPs), then a branch whose then
// side costs 4 + 4 and else side 4: the larger, 8, counts. Forward:
// 3 * (5 * 4 + 8) = 84 FLOPs. The backward multiplies the loop's result
// (16 bytes saved) by itself (4 FLOPs) and runs a loop with dynamic bounds,
// which has no cost model: 0 FLOPs, one op without a cost model.
func.func @nest(%x: tensor<4xf32>, %p: i1, %n: index) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c10 = arith.constant 10 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> (tensor<4xf32>) {
    %s = scf.for %j = %c0 to %c10 step %c2 iter_args(%b = %a) -> (tensor<4xf32>) {
      %t = math.exp %b : tensor<4xf32>
      scf.yield %t : tensor<4xf32>
    }
    %u = scf.if %p -> (tensor<4xf32>) {
      %v = arith.mulf %s, %s : tensor<4xf32>
      %v2 = arith.addf %v, %s : tensor<4xf32>
      scf.yield %v2 : tensor<4xf32>
    } else {
      %v = arith.negf %s : tensor<4xf32>
      scf.yield %v : tensor<4xf32>
    }
    scf.yield %u : tensor<4xf32>
  } {remat.segment = 0 : i64}
  %g = remat.backward {
    %m = arith.mulf %r, %r : tensor<4xf32>
    %d = scf.for %i = %c0 to %n step %c1 iter_args(%y = %m) -> (tensor<4xf32>) {
      %y2 = arith.mulf %y, %y : tensor<4xf32>
      scf.yield %y2 : tensor<4xf32>
    }
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %r, %g : tensor<4xf32>, tensor<4xf32>
}

// Checks nested trip counts, the costlier branch and a loop without a model.
// CHECK-LABEL: remat report for @nest
// CHECK:        forward FLOPs: 84, backward FLOPs: 4, recompute FLOPs: 0 in 0 recomputed ops
// CHECK-NEXT:   loops: 16 saved bytes, recompute FLOPs 0
// CHECK-NEXT:   loop at [[FILE]]:83:8: 3 iterations, forward FLOPs 84, 16 saved bytes, recompute FLOPs 0
// CHECK-NEXT:   ops without a cost model (counted as 0 FLOPs): 1
// CHECK:        segment 0: 1 ops, 0 recomputed (0 FLOPs), 16 saved bytes
//
// Checks that -remat-checkpoint's clone of the whole loop nest costs its 84
// FLOPs, for the loop and for its segment, and that it saves nothing more.
// AFTER-LABEL: remat report for @nest
// AFTER:        forward FLOPs: 84, backward FLOPs: 4, recompute FLOPs: 84 in 1 recomputed ops
// AFTER-NEXT:   loops: 0 saved bytes, recompute FLOPs 84
// AFTER-NEXT:   loop at {{.*}}: 3 iterations, forward FLOPs 84, 0 saved bytes, recompute FLOPs 84
// AFTER-NEXT:   ops without a cost model (counted as 0 FLOPs): 1
// AFTER:        segment 0: 1 ops, 1 recomputed (84 FLOPs), 0 saved bytes

// Checks the JSON's loop entries and totals.
// JSON:       "loops": [
// JSON-NEXT:    {
// JSON-NEXT:      "forward_flops": 3264,
// JSON-NEXT:      "location": "{{.*}}",
// JSON-NEXT:      "recompute_flops": 3264,
// JSON-NEXT:      "saved_bytes": 384,
// JSON-NEXT:      "trip_count": 3
// JSON-NEXT:    }
// JSON-NEXT:  ],
// JSON:       "loop_recompute_flops": 3264,
// JSON-NEXT:  "loop_saved_bytes": 384,
// JSON:       "recompute_flops": 3264,
// JSON:       "loops": [
// JSON-NEXT:    {
// JSON-NEXT:      "forward_flops": 84,
// JSON-NEXT:      "location": "{{.*}}",
// JSON-NEXT:      "recompute_flops": 84,
// JSON-NEXT:      "saved_bytes": 0,
// JSON-NEXT:      "trip_count": 3
// JSON-NEXT:    }
// JSON-NEXT:  ],
// JSON:       "loop_recompute_flops": 84,
// JSON-NEXT:  "loop_saved_bytes": 0,
// JSON:       "ops_without_cost_model": 1,
// JSON:       "recompute_flops": 84,
