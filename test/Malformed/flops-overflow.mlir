// RUN: remat-opt %s -remat-report 2>&1 -o /dev/null | FileCheck %s
// An op of 2^64 iterations (two 16 GiB inputs, every pair of elements):
// its FLOPs saturate at 2^62 instead of wrapping to a negative count that
// the report would show as 0, and the totals saturate with them.
// CHECK: forward FLOPs: 4611686018427387904, backward FLOPs: 4611686018427387904, recompute FLOPs: 0
// CHECK-NOT: ops without a cost model
#all = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#pairs = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#sum = affine_map<(d0, d1, d2, d3) -> ()>
func.func @step(%a: tensor<65536x65536xf32>, %b: tensor<65536x65536xf32>,
                %init: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %s = linalg.generic {indexing_maps = [#all, #pairs, #sum],
                       iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %b : tensor<65536x65536xf32>, tensor<65536x65536xf32>)
      outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %g = remat.backward {
    %t = linalg.generic {indexing_maps = [#all, #pairs, #sum],
                         iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
        ins(%a, %b : tensor<65536x65536xf32>, tensor<65536x65536xf32>)
        outs(%s : tensor<f32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %p = arith.mulf %x, %y : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %u = linalg.generic {indexing_maps = [#all, #pairs, #sum],
                         iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
        ins(%a, %b : tensor<65536x65536xf32>, tensor<65536x65536xf32>)
        outs(%t : tensor<f32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %p = arith.mulf %x, %y : f32
      linalg.yield %p : f32
    } -> tensor<f32>
    remat.yield %u : tensor<f32>
  } : tensor<f32>
  return %s, %g : tensor<f32>, tensor<f32>
}
