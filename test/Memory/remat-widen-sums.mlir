// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-widen-sums))' | FileCheck %s
// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-widen-sums{min-elements=5000}))' | FileCheck %s --check-prefix=NONE

// Checks that a batch norm's statistic (a float32 sum over batch, rows and
// columns) accumulates in a float64 buffer of the result's shape, filled
// with -0.0, with the same loops and each term extended; the float64 sums
// are then added to the init and rounded once, and their buffer freed.
// CHECK-DAG:   #[[IN:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @batch_norm_mean(
// CHECK-SAME:    %[[X:.+]]: memref<2x8x32x32xf32>, %[[INIT:.+]]: memref<8xf32>
// CHECK:         %[[ZERO:.+]] = arith.constant -0.000000e+00 : f64
// CHECK:         %[[W:.+]] = memref.alloc() : memref<8xf64>
// CHECK:         linalg.fill ins(%[[ZERO]] : f64) outs(%[[W]] : memref<8xf64>)
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
// CHECK-SAME:        ins(%[[X]] : memref<2x8x32x32xf32>) outs(%[[W]] : memref<8xf64>)
// CHECK-NEXT:    ^bb0(%[[T:.+]]: f32, %[[ACC:.+]]: f64):
// CHECK-NEXT:      %[[E:.+]] = arith.extf %[[T]] : f32 to f64
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[E]], %[[ACC]] : f64
// CHECK-NEXT:      linalg.yield %[[S]] : f64
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel"]}
// CHECK-SAME:        ins(%[[W]] : memref<8xf64>) outs(%[[INIT]] : memref<8xf32>)
// CHECK-NEXT:    ^bb0(%[[SUM:.+]]: f64, %[[OLD:.+]]: f32):
// CHECK-NEXT:      %[[OLD64:.+]] = arith.extf %[[OLD]] : f32 to f64
// CHECK-NEXT:      %[[NEW:.+]] = arith.addf %[[SUM]], %[[OLD64]] : f64
// CHECK-NEXT:      %[[R:.+]] = arith.truncf %[[NEW]] : f64 to f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         memref.dealloc %[[W]]
// CHECK-NEXT:    return
// NONE-LABEL: func.func @batch_norm_mean(
// NONE-NOT:     memref.alloc
// NONE:         linalg.reduce
func.func @batch_norm_mean(%x: memref<2x8x32x32xf32>, %init: memref<8xf32>) {
  linalg.reduce ins(%x : memref<2x8x32x32xf32>) outs(%init : memref<8xf32>) dimensions = [0, 2, 3]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return
}

// -----

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>

// Checks that a fused body (a sum of squares, the accumulator on the left,
// fast-math flags) keeps its other ops in float32 and its flags, and that a
// strided input and a sum into a scalar are widened too.
// CHECK-LABEL: func.func @sum_of_squares(
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%{{.+}} : memref<1024x4xf32, strided<[8, 1]>>) outs(%{{.+}} : memref<4xf64>)
// CHECK:           %[[SQ:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK-NEXT:      %[[E:.+]] = arith.extf %[[SQ]] : f32 to f64
// CHECK-NEXT:      arith.addf %[[E]], %{{.+}} fastmath<contract> : f64
// CHECK-LABEL: func.func @total(
// CHECK:         memref.alloc() : memref<f64>
// CHECK:         linalg.generic {{.+}} iterator_types = []
// CHECK-SAME:        outs(%{{.+}} : memref<f32>)
func.func @sum_of_squares(%x: memref<1024x4xf32, strided<[8, 1]>>, %init: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<1024x4xf32, strided<[8, 1]>>) outs(%init : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq fastmath<contract> : f32
    linalg.yield %r : f32
  }
  return
}
func.func @total(%x: memref<4096xf32>, %init: memref<f32>) {
  linalg.reduce ins(%x : memref<4096xf32>) outs(%init : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return
}

// -----

// Checks what is left alone: a sum of 64 elements, a maximum (its order
// does not round), a float64 sum, a sum on tensors, and a sum of more than
// 2^63 elements.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     arith.extf
// CHECK:         return
func.func @left_alone(%short: memref<4x16x16xf32>, %wide: memref<1024x16xf32>, %wide64: memref<1024x16xf64>,
                      %i: memref<16xf32>, %i64: memref<16xf64>, %t: tensor<1024x16xf32>, %ti: tensor<16xf32>,
                      %huge: memref<4294967296x4294967296xf32>, %s: memref<f32>) -> tensor<16xf32> {
  linalg.reduce ins(%short : memref<4x16x16xf32>) outs(%i : memref<16xf32>) dimensions = [0, 2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  linalg.reduce ins(%wide : memref<1024x16xf32>) outs(%i : memref<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  linalg.reduce ins(%wide64 : memref<1024x16xf64>) outs(%i64 : memref<16xf64>) dimensions = [0]
    (%in: f64, %acc: f64) {
      %r = arith.addf %in, %acc : f64
      linalg.yield %r : f64
    }
  %tr = linalg.reduce ins(%t : tensor<1024x16xf32>) outs(%ti : tensor<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  linalg.reduce ins(%huge : memref<4294967296x4294967296xf32>) outs(%s : memref<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  return %tr : tensor<16xf32>
}
