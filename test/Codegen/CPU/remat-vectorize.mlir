// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-vectorize))' | FileCheck %s
// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-vectorize{vector-bits=512}))' | FileCheck %s --check-prefix=WIDE

// Checks that a sum along the innermost dimension becomes, per row, full
// 8-lane tiles reduced in order into the accumulator, then one 4-lane tile
// for the remaining columns: the scalar loops' order of additions. Rows
// are independent: they are a scf.parallel, the columns a scf.for.
// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4x20xf32>, %[[S:[^:]*]]: memref<4xf32>
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK:         scf.parallel (%[[I:.*]]) = (%[[C0]]) to (%[[C4]])
// CHECK:           scf.for %[[J:.*]] = %[[C0]] to %[[C16]] step %[[C8]]
// CHECK:             %[[V:.*]] = vector.load %[[X]][%[[I]], %[[J]]] : memref<4x20xf32>, vector<8xf32>
// CHECK:             %[[ACC:.*]] = vector.extract
// CHECK:             %[[R:.*]] = vector.reduction <add>, %[[V]], %[[ACC]] : vector<8xf32> into f32
// CHECK:             vector.store %{{.*}}, %[[S]][%[[I]]]
// CHECK:           }
// CHECK:           %[[T:.*]] = vector.load %[[X]][%[[I]], %[[C16]]] : memref<4x20xf32>, vector<4xf32>
// CHECK:           vector.reduction <add>, %[[T]], %{{.*}} : vector<4xf32> into f32
// CHECK-NOT:     linalg.generic
// WIDE-LABEL: func.func @row_sum(
// WIDE:          scf.parallel
// WIDE-NOT:      scf.for
// WIDE:          vector.load {{.*}} vector<16xf32>
// WIDE:          vector.reduction <add>, {{.*}} : vector<16xf32> into f32
// WIDE:          vector.load {{.*}} vector<4xf32>
func.func @row_sum(%x: memref<4x20xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x20xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Checks that a sum over the outer dimension (a bias gradient) adds whole
// vectors of rows into the accumulator row, with no horizontal reduction:
// the rows in order (scf.for), the column tiles of a row independent
// (scf.parallel).
// CHECK-LABEL: func.func @column_sum(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4x16xf32>, %[[S:[^:]*]]: memref<16xf32>
// CHECK:         scf.for %[[I:.*]] =
// CHECK:           scf.parallel (%[[J:.*]]) =
// CHECK:             %[[V:.*]] = vector.load %[[X]][%[[I]], %[[J]]] : memref<4x16xf32>, vector<8xf32>
// CHECK:             %[[ACC:.*]] = vector.load %[[S]][%[[J]]] : memref<16xf32>, vector<8xf32>
// CHECK:             %[[R:.*]] = arith.addf %[[V]], %[[ACC]] : vector<8xf32>
// CHECK:             vector.store %[[R]], %[[S]][%[[J]]] : memref<16xf32>, vector<8xf32>
// CHECK-NOT:     vector.reduction
func.func @column_sum(%x: memref<4x16xf32>, %s: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x16xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Checks that batch norm's per-channel sum over (N, H, W) of an NCHW tensor
// runs its channels in parallel outermost (the first dimension is a
// reduction: left in place, no loop would be parallel), each channel's
// sum over n, h and the vector tiles of w in the scalar loops' order.
// CHECK-LABEL: func.func @channel_sum(
// CHECK-SAME:      %[[X:[^:]*]]: memref<2x3x4x16xf32>, %[[S:[^:]*]]: memref<3xf32>
// CHECK:         scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%{{.*}}) step
// CHECK:           scf.for %[[N:.*]] =
// CHECK:             scf.for %[[H:.*]] =
// CHECK:               scf.for %[[W:.*]] =
// CHECK:                 vector.load %[[X]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK:                 vector.reduction <add>
// CHECK-NOT:     scf.parallel
func.func @channel_sum(%x: memref<2x3x4x16xf32>, %s: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                                   affine_map<(n, c, h, w) -> (c)>],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<2x3x4x16xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Checks that an elementwise body with a broadcast operand and a math op
// runs on vectors, and that a strided view whose rows are contiguous is
// read with vector loads too.
// CHECK-LABEL: func.func @bias_exp(
// CHECK-SAME:      %[[X:[^:]*]]: memref<2x8xf32, strided<[16, 1], offset: 3>>, %[[B:[^:]*]]: memref<8xf32>, %[[Y:[^:]*]]: memref<2x8xf32>
// CHECK:         scf.parallel (%[[I:.*]]) =
// CHECK-NOT:       scf.for
// CHECK:           %[[V:.*]] = vector.load %[[X]][%[[I]], %{{.*}}] : memref<2x8xf32, strided<[16, 1], offset: 3>>, vector<8xf32>
// CHECK:           %[[W:.*]] = vector.load %[[B]][%{{.*}}] : memref<8xf32>, vector<8xf32>
// CHECK:           %[[A:.*]] = arith.addf %[[V]], %[[W]] : vector<8xf32>
// CHECK:           %[[E:.*]] = math.exp %[[A]] : vector<8xf32>
// CHECK:           vector.store %[[E]], %[[Y]][%[[I]], %{{.*}}] : memref<2x8xf32>, vector<8xf32>
func.func @bias_exp(%x: memref<2x8xf32, strided<[16, 1], offset: 3>>,
                    %b: memref<8xf32>, %y: memref<2x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<2x8xf32, strided<[16, 1], offset: 3>>, memref<8xf32>)
      outs(%y : memref<2x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %a = arith.addf %in, %bias : f32
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Checks that a fill stores vectors and the lanes come from the widest
// element type: 4 lanes of f64, and 4 lanes for an f32 op that writes i64.
// CHECK-LABEL: func.func @widths(
// CHECK:         vector.store %{{.*}} : memref<3x8xf64>, vector<4xf64>
// CHECK:         arith.fptosi %{{.*}} : vector<4xf32> to vector<4xi64>
// WIDE-LABEL: func.func @widths(
// WIDE:          vector.store %{{.*}} : memref<3x8xf64>, vector<8xf64>
func.func @widths(%d: memref<3x8xf64>, %x: memref<8xf32>, %i: memref<8xi64>) {
  %z = arith.constant 0.0 : f64
  linalg.fill ins(%z : f64) outs(%d : memref<3x8xf64>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%i : memref<8xi64>) {
  ^bb0(%in: f32, %out: i64):
    %c = arith.fptosi %in : f32 to i64
    linalg.yield %c : i64
  }
  return
}

// -----

// Checks that an i1 mask is read as a vector of i1 (which
// -remat-widen-bool-vectors later loads as bytes) and counts as a byte for
// the lanes: 8 lanes from the f32 operands. The tiles of a 1-D elementwise
// op are independent (scf.parallel).
// CHECK-LABEL: func.func @mask(
// CHECK:         scf.parallel
// CHECK:         vector.load %{{.*}} : memref<16xi1>, vector<8xi1>
// CHECK:         arith.select %{{.*}} : vector<8xi1>, vector<8xf32>
func.func @mask(%m: memref<16xi1>, %x: memref<16xf32>, %y: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%m, %x : memref<16xi1>, memref<16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%keep: i1, %in: f32, %out: f32):
    %r = arith.select %keep, %in, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Checks that what vectors would not speed up or could not express stays a
// linalg op for the scalar loops: a transpose (the innermost loop strides
// through the input), an innermost dimension narrower than a vector (16
// i1 bytes are half of 256 bits), a strided innermost dimension, dynamic
// shapes and a convolution's window.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     vector.
// CHECK:         linalg.transpose
// CHECK:         linalg.copy {{.*}}xi1>
// CHECK:         linalg.copy {{.*}}memref<16x3xf32>
// CHECK:         linalg.copy {{.*}}strided<[2]>>
// CHECK:         linalg.copy {{.*}}memref<?xf32>
// CHECK:         linalg.conv_1d
// CHECK-NOT:     vector.
func.func @left_alone(%a: memref<16x16xf32>, %b: memref<16x16xf32>,
                      %p: memref<16xi1>, %q: memref<16xi1>,
                      %n: memref<16x3xf32>, %m: memref<16x3xf32>,
                      %s: memref<16xf32, strided<[2]>>, %t: memref<16xf32>,
                      %u: memref<?xf32>, %v: memref<?xf32>,
                      %w: memref<3xf32>, %o: memref<14xf32>) {
  linalg.transpose ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>) permutation = [1, 0]
  linalg.copy ins(%p : memref<16xi1>) outs(%q : memref<16xi1>)
  linalg.copy ins(%n : memref<16x3xf32>) outs(%m : memref<16x3xf32>)
  linalg.copy ins(%s : memref<16xf32, strided<[2]>>) outs(%t : memref<16xf32>)
  linalg.copy ins(%u : memref<?xf32>) outs(%v : memref<?xf32>)
  linalg.conv_1d ins(%t, %w : memref<16xf32>, memref<3xf32>) outs(%o : memref<14xf32>)
  return
}

// -----

// Checks that a sum of a whole buffer into a 0-D accumulator reads and
// writes the accumulator as a scalar around each ordered tile reduction.
// CHECK-LABEL: func.func @total(
// CHECK-SAME:      %[[X:[^:]*]]: memref<20xf32>, %[[S:[^:]*]]: memref<f32>
// CHECK:         scf.for %[[J:.*]] =
// CHECK:           %[[V:.*]] = vector.load %[[X]][%[[J]]] : memref<20xf32>, vector<8xf32>
// CHECK:           %[[ACC:.*]] = vector.load %[[S]][] : memref<f32>, vector<f32>
// CHECK:           vector.reduction <add>, %[[V]], %{{.*}} : vector<8xf32> into f32
// CHECK:         vector.load %[[X]][%{{.*}}] : memref<20xf32>, vector<4xf32>
// CHECK:         vector.reduction <add>, {{.*}} : vector<4xf32> into f32
func.func @total(%x: memref<20xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<20xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Checks that an op whose innermost loop dimensions run once (a layer
// norm's mean over [rows x 1] buffers, scaled) takes its vector tiles along
// the last dimension that runs more than once: the rows, whose stride is 1.
// A [rows x 1] buffer with a row stride of 2 stays scalar.
// CHECK-LABEL: func.func @unit_columns(
// CHECK-SAME:      %[[X:[^:]*]]: memref<64x1xf32>, %[[Y:[^:]*]]: memref<64x1xf32>
// CHECK:         scf.parallel (%[[I:.*]]) = (%c0) to (%c64) step (%c8) {
// CHECK:           %[[V:.*]] = vector.load %[[X]][%[[I]], %c0] : memref<64x1xf32>, vector<8xf32>
// CHECK:           %[[M:.*]] = arith.mulf %[[V]], %{{.*}} : vector<8xf32>
// CHECK:           vector.store %[[M]], %[[Y]][%[[I]], %c0] : memref<64x1xf32>, vector<8xf32>
// CHECK:         linalg.generic
// CHECK-SAME:      memref<64x1xf32, strided<[2, 1]>>
// WIDE-LABEL: func.func @unit_columns(
// WIDE:         scf.parallel (%{{.*}}) = (%c0) to (%c64) step (%c16) {
func.func @unit_columns(%x: memref<64x1xf32>, %y: memref<64x1xf32>,
                        %z: memref<64x1xf32, strided<[2, 1]>>) {
  %k = arith.constant 0.015625 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x1xf32>) outs(%y : memref<64x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %k : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<64x1xf32, strided<[2, 1]>>) outs(%y : memref<64x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %k : f32
    linalg.yield %m : f32
  }
  return
}
