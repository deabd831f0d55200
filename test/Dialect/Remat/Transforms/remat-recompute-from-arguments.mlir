// RUN: remat-opt %s -split-input-file -remat-recompute-from-arguments | FileCheck %s
// RUN: remat-opt %s -split-input-file -remat-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// Checks that a zero-padded argument that CSE shares between the forward
// convolution and the backward's weight gradient is rebuilt in the backward
// region (empty, fill, insert_slice) right before its first reader there,
// and that the forward keeps its own pad for the forward convolution. The
// clones carry no segment mark and point at the original's remat.id. The
// report's static peak is that of @pad_twice, the step as an exporter writes
// it, whose backward pads again: the pad (2432 bytes) is not kept alive
// next to %big (8192 bytes), which precedes every use of the pad (14720
// bytes without the rebuild, 12288 with it).
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>
// CHECK: %[[P:.*]] = tensor.insert_slice %[[X]] into %{{.*}}[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] {remat.id = 7 : i64, remat.segment = 0 : i64}
// CHECK: linalg.conv_2d_nchw_fchw {remat.segment = 0 : i64} ins(%[[P]], %[[W]]
// CHECK: remat.backward {
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3x10x10xf32>
// CHECK-NEXT: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x3x10x10xf32>)
// CHECK-NEXT: %[[PB:.*]] = tensor.insert_slice %[[X]] into %[[Z]][0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] {remat.clone_of = 7 : i64}
// CHECK-NEXT: linalg.generic {{.*}} ins(%{{.*}}, %[[PB]] :
// REPORT-LABEL: remat report for @pad
// REPORT: static peak: [[PEAK:[0-9]+]] bytes
// REPORT-LABEL: remat report for @pad_twice
// REPORT: static peak: [[PEAK]] bytes
func.func @pad(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %dy: tensor<2x4x8x8xf32>)
    -> (tensor<2x4x8x8xf32>, tensor<4x3x3x3xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x10x10xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x3x10x10xf32>) -> tensor<2x3x10x10xf32>
  %p = tensor.insert_slice %x into %z[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] {remat.segment = 0 : i64, remat.id = 7 : i64} : tensor<2x3x8x8xf32> into tensor<2x3x10x10xf32>
  %oe = tensor.empty() : tensor<2x4x8x8xf32>
  %o0 = linalg.fill ins(%c0 : f32) outs(%oe : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {remat.segment = 0 : i64} ins(%p, %w : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%o0 : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %t = math.exp %y : tensor<2x4x8x8xf32>
  %gw = remat.backward {
    %be = tensor.empty() : tensor<4x2x4x8x8xf32>
    %big = linalg.broadcast ins(%t : tensor<2x4x8x8xf32>) outs(%be : tensor<4x2x4x8x8xf32>) dimensions = [0]
    %re = tensor.empty() : tensor<2x4x8x8xf32>
    %r0 = linalg.fill ins(%c0 : f32) outs(%re : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %r = linalg.reduce ins(%big : tensor<4x2x4x8x8xf32>) outs(%r0 : tensor<2x4x8x8xf32>) dimensions = [0]
      (%a: f32, %acc: f32) {
        %s = arith.addf %a, %acc : f32
        linalg.yield %s : f32
      }
    %d = arith.mulf %r, %dy : tensor<2x4x8x8xf32>
    %we = tensor.empty() : tensor<4x3x3x3xf32>
    %w0 = linalg.fill ins(%c0 : f32) outs(%we : tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32>
    %g = linalg.generic {
        indexing_maps = [affine_map<(n, f, h, w, c, kh, kw) -> (n, f, h, w)>,
                         affine_map<(n, f, h, w, c, kh, kw) -> (n, c, h + kh, w + kw)>,
                         affine_map<(n, f, h, w, c, kh, kw) -> (f, c, kh, kw)>],
        iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
        ins(%d, %p : tensor<2x4x8x8xf32>, tensor<2x3x10x10xf32>) outs(%w0 : tensor<4x3x3x3xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3x3x3xf32>
    remat.yield %g : tensor<4x3x3x3xf32>
  } : tensor<4x3x3x3xf32>
  return %t, %gw : tensor<2x4x8x8xf32>, tensor<4x3x3x3xf32>
}

// -----

func.func @pad_twice(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %dy: tensor<2x4x8x8xf32>)
    -> (tensor<2x4x8x8xf32>, tensor<4x3x3x3xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x10x10xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x3x10x10xf32>) -> tensor<2x3x10x10xf32>
  %p = tensor.insert_slice %x into %z[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : tensor<2x3x8x8xf32> into tensor<2x3x10x10xf32>
  %oe = tensor.empty() : tensor<2x4x8x8xf32>
  %o0 = linalg.fill ins(%c0 : f32) outs(%oe : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw ins(%p, %w : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%o0 : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %t = math.exp %y : tensor<2x4x8x8xf32>
  %gw = remat.backward {
    %be = tensor.empty() : tensor<4x2x4x8x8xf32>
    %big = linalg.broadcast ins(%t : tensor<2x4x8x8xf32>) outs(%be : tensor<4x2x4x8x8xf32>) dimensions = [0]
    %re = tensor.empty() : tensor<2x4x8x8xf32>
    %r0 = linalg.fill ins(%c0 : f32) outs(%re : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %r = linalg.reduce ins(%big : tensor<4x2x4x8x8xf32>) outs(%r0 : tensor<2x4x8x8xf32>) dimensions = [0]
      (%a: f32, %acc: f32) {
        %s = arith.addf %a, %acc : f32
        linalg.yield %s : f32
      }
    %d = arith.mulf %r, %dy : tensor<2x4x8x8xf32>
    %c1 = arith.constant 0.0 : f32
    %pe = tensor.empty() : tensor<2x3x10x10xf32>
    %pz = linalg.fill ins(%c1 : f32) outs(%pe : tensor<2x3x10x10xf32>) -> tensor<2x3x10x10xf32>
    %p2 = tensor.insert_slice %x into %pz[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : tensor<2x3x8x8xf32> into tensor<2x3x10x10xf32>
    %we = tensor.empty() : tensor<4x3x3x3xf32>
    %w0 = linalg.fill ins(%c0 : f32) outs(%we : tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32>
    %g = linalg.generic {
        indexing_maps = [affine_map<(n, f, h, w, c, kh, kw) -> (n, f, h, w)>,
                         affine_map<(n, f, h, w, c, kh, kw) -> (n, c, h + kh, w + kw)>,
                         affine_map<(n, f, h, w, c, kh, kw) -> (f, c, kh, kw)>],
        iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
        ins(%d, %p2 : tensor<2x4x8x8xf32>, tensor<2x3x10x10xf32>) outs(%w0 : tensor<4x3x3x3xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3x3x3xf32>
    remat.yield %g : tensor<4x3x3x3xf32>
  } : tensor<4x3x3x3xf32>
  return %t, %gw : tensor<2x4x8x8xf32>, tensor<4x3x3x3xf32>
}

// -----

// Checks that a value only the backward reads moves there whole (the forward
// chain goes), that a broadcast parameter and an elementwise op on arguments
// are rebuilt, and what is left alone: a chain that reads a forward
// intermediate (%t) and a reduction.
// CHECK-LABEL: func.func @kinds
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NOT: linalg.broadcast
// CHECK: %[[T:.*]] = math.tanh %[[X]]
// CHECK: %[[TB:.*]] = linalg.broadcast ins(%[[B]]
// CHECK: %[[R:.*]] = linalg.reduce ins(%[[X]]
// CHECK: remat.backward {
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[BB:.*]] = linalg.broadcast ins(%[[B]] : tensor<8xf32>) outs(%[[E]] :
// CHECK-NEXT: arith.mulf %[[BB]], %[[T]]
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>) outs(%[[E2]] :
// CHECK: arith.addf %{{.*}}, %[[SQ]]
// CHECK: arith.addf %{{.*}}, %[[TB]]
// CHECK: linalg.broadcast ins(%[[R]]
func.func @kinds(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
  %t = math.tanh %x : tensor<4x8xf32>
  %tb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%t : tensor<4x8xf32>) dimensions = [0]
  %sq = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %re = tensor.empty() : tensor<4xf32>
  %r = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%re : tensor<4xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  %g = remat.backward {
    %u = arith.mulf %bb, %t : tensor<4x8xf32>
    %v = arith.addf %u, %sq : tensor<4x8xf32>
    %w = arith.addf %v, %tb : tensor<4x8xf32>
    %rb = linalg.broadcast ins(%r : tensor<4xf32>) outs(%e : tensor<4x8xf32>) dimensions = [1]
    %y = arith.addf %w, %rb : tensor<4x8xf32>
    remat.yield %y : tensor<4x8xf32>
  } : tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}
