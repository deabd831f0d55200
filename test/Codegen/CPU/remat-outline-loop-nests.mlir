// RUN: remat-opt %s -split-input-file -remat-outline-loop-nests | FileCheck %s

// Checks that each loop nest at a function's top level becomes a private,
// never inlined function whose arguments are the values it uses from above
// in the order of first use (constants cloned instead), and whose results
// are the nest's; the scalar ops between the nests stay where they are.
// CHECK-LABEL: func.func private @step_elementwise_loops_0(
// CHECK-SAME:      %[[N:.*]]: index, %[[X:.*]]: memref<64xf32>, %[[Y:.*]]: memref<64xf32>)
// CHECK-SAME:      attributes {passthrough = ["noinline"]}
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         scf.for %[[I:.*]] = %[[C0]] to %[[N]] step %[[C1]] {
// CHECK:           memref.load %[[X]][%[[I]]]
// CHECK:           memref.store %{{.*}}, %[[Y]][%[[I]]]
// CHECK:         return
// CHECK-LABEL: func.func private @step_reduction_loops_1(
// CHECK-SAME:      %{{.*}}: f32, %{{.*}}: memref<64xf32>) -> f32
// CHECK:         %[[S:.*]] = scf.for
// CHECK:         return %[[S]] : f32
// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[SX:.*]]: memref<64xf32>, %[[SY:.*]]: memref<64xf32>, %[[SN:.*]]: index)
// CHECK:         %[[INIT:.*]] = arith.addf
// CHECK:         call @step_elementwise_loops_0(%[[SN]], %[[SX]], %[[SY]]) : (index, memref<64xf32>, memref<64xf32>) -> ()
// CHECK:         %[[R:.*]] = call @step_reduction_loops_1(%[[INIT]], %[[SY]]) : (f32, memref<64xf32>) -> f32
// CHECK:         return %[[R]] : f32
func.func @step(%x: memref<64xf32>, %y: memref<64xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %init = arith.addf %one, %one : f32
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<64xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%i] : memref<64xf32>
  }
  %sum = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %init) -> f32 {
    %v = memref.load %y[%i] : memref<64xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  return %sum : f32
}

// -----

// Checks that a branch holding a loop is outlined whole and a branch
// without one is left in place.
// CHECK-LABEL: func.func private @branches_copy_loops_0(
// CHECK:         scf.if
// CHECK:           scf.for
// CHECK-LABEL: func.func @branches(
// CHECK:         call @branches_copy_loops_0
// CHECK:         scf.if
// CHECK-NOT:       scf.for
// CHECK:           memref.store
func.func @branches(%x: memref<4xf32>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  scf.if %p {
    scf.for %i = %c0 to %c4 step %c1 {
      memref.store %z, %x[%i] : memref<4xf32>
    }
  }
  scf.if %p {
    memref.store %z, %x[%c0] : memref<4xf32>
  }
  return
}

// -----

// Checks that a nest using a value of a type no function argument takes
// here (a tensor) stays where it is.
// CHECK-LABEL: func.func @unpassable(
// CHECK:         scf.for
// CHECK-NOT:   func.func private
func.func @unpassable(%t: tensor<4xf32>, %x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = tensor.extract %t[%i] : tensor<4xf32>
    memref.store %v, %x[%i] : memref<4xf32>
  }
  return
}
