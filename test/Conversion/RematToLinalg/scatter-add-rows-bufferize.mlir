// RUN: remat-opt %s -remat-bufferize | FileCheck %s

// Checks that a scatter-add of rows bufferizes in place in its dest's
// buffer (here the filled gradient of an embedding table, in the step's
// arena): no allocation or copy of its own, and its column loop an
// scf.parallel (the form the CPU outlines onto threads and the CUDA
// lowering maps to GPU threads) around a sequential loop over the
// positions that loads and stores the column of dest.
// CHECK-LABEL: func.func @embedding_backward(
// CHECK-SAME:      %[[V:.*]]: memref<5x3xf32>, %[[I:.*]]: memref<5xi64>) -> memref<4x3xf32>
// CHECK:         %[[ARENA:.*]] = memref.alloc() {{.*}} : memref<64xi8>
// CHECK-NOT:     memref.alloc
// CHECK:         %[[D:.*]] = memref.view %[[ARENA]]
// CHECK:         linalg.fill {{.*}} outs(%[[D]] : memref<4x3xf32>)
// CHECK-NOT:     memref.copy
// CHECK:         scf.parallel (%[[J:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:           %[[COL:.*]] = memref.subview %[[D]][0, %[[J]]] [4, 1] [1, 1]
// CHECK:           scf.for %[[P:.*]] =
// CHECK:             memref.load %[[I]][%[[P]]]
// CHECK:             memref.load %[[COL]]
// CHECK:             memref.load %[[V]][%[[P]], %[[J]]]
// CHECK:             memref.store %{{.*}}, %[[COL]]
// CHECK-NOT:     memref.copy
// CHECK:         return %[[D]] : memref<4x3xf32>
func.func @embedding_backward(%v: tensor<5x3xf32>, %i: tensor<5xi64>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %d = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = remat.scatter_add_rows %v into %d[%i] skip 1 : tensor<5x3xf32>, tensor<5xi64> into tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
