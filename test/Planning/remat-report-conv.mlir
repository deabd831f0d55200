// RUN: remat-opt %s -remat-report=format=json -o /dev/null | FileCheck %s

// The cost model counts linalg.conv_2d_nchw_fchw like every linalg
// structured op: loop ranges times payload ops. Here n=2, f=3, oh=ow=4,
// c=2, kh=kw=3: 2*3*4*4*2*3*3 = 1728 iterations of a mul and an add = 3456
// FLOPs; the zero fill and the insert_slice padding cost nothing, the
// backward's flipped-weight copy (linalg.generic, 3*2*3*3 = 54 iterations,
// no payload op) 0, the relu 96.
func.func @step(%x: tensor<2x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2x6x6xf32>) -> tensor<2x2x6x6xf32>
  %p = tensor.insert_slice %x into %f[0, 0, 1, 1] [2, 2, 4, 4] [1, 1, 1, 1] : tensor<2x2x4x4xf32> into tensor<2x2x6x6xf32>
  %e2 = tensor.empty() : tensor<2x3x4x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%p, %w : tensor<2x2x6x6xf32>, tensor<3x2x3x3xf32>) outs(%f2 : tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %cst = arith.constant dense<0.0> : tensor<2x3x4x4xf32>
  %r = arith.maximumf %c, %cst : tensor<2x3x4x4xf32>
  %g = remat.backward {
    %e3 = tensor.empty() : tensor<2x3x3x3xf32>
    %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d0, 2 - d2, 2 - d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w : tensor<3x2x3x3xf32>) outs(%e3 : tensor<2x3x3x3xf32>) {
    ^bb0(%a: f32, %b: f32):
      linalg.yield %a : f32
    } -> tensor<2x3x3x3xf32>
    remat.yield %t : tensor<2x3x3x3xf32>
  } : tensor<2x3x3x3xf32>
  return %r, %g : tensor<2x3x4x4xf32>, tensor<2x3x3x3xf32>
}

// CHECK:      "totals": {
// CHECK-NEXT:  "arena_bytes": 960
// CHECK-NEXT:  "arena_max_live_bytes": 960
// CHECK-NEXT:  "backward_flops": 0
// CHECK-NEXT:  "carried_bytes": 0
// CHECK-NEXT:  "forward_flops": 3552
// CHECK:       "ops_without_cost_model": 0
