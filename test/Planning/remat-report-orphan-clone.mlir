// RUN: remat-opt %s -remat-report -o /dev/null | FileCheck %s
// RUN: remat-opt %s -remat-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON

// A clone whose original is gone, as -canonicalize leaves one after
// -remat-checkpoint when the forward original was read only by the
// backward: its recomputation counts for the unmarked step. (The report
// looked the segment up with a null op and crashed on ResNet-18's step
// under budget-between=1.)
func.func @step(%x: tensor<4xf32>, %dy: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %y = math.exp %x : tensor<4xf32>
  %g = remat.backward {
    %b = remat.barrier %x : tensor<4xf32>
    %t = math.tanh %b {remat.clone_of = 3 : i64} : tensor<4xf32>
    %d = arith.mulf %t, %dy : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %y, %g : tensor<4xf32>, tensor<4xf32>
}

// CHECK:      recompute FLOPs: {{[0-9]+}} in 1 recomputed ops
// CHECK:      segment unmarked: 0 ops, 1 recomputed
// JSON:       "recomputed_ops": 1
// JSON:       "saved_bytes": 32
// JSON-NEXT:  "segment": "unmarked"
