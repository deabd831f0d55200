// RUN: remat-opt %s -remat-profile-calls | FileCheck %s

// Checks that each call and memref.copy of a public function is bracketed
// by remat_profile_begin() and remat_profile_end(name), where name is one
// constant string per callee: the unit function for remat_parallel_for,
// "memref.copy" for a copy. Private functions (the outlined nests) are not
// instrumented inside.

// CHECK-DAG:   llvm.mlir.global internal constant @remat_profile_name{{.*}}("step_elementwise_loops_0\00")
// CHECK-DAG:   llvm.mlir.global internal constant @remat_profile_name{{.*}}("step_reduction_parallel\00")
// CHECK-DAG:   llvm.mlir.global internal constant @remat_profile_name{{.*}}("memref.copy\00")
// CHECK-DAG:   func.func private @remat_profile_begin()
// CHECK-DAG:   func.func private @remat_profile_end(!llvm.ptr)
// CHECK-LABEL: func.func private @step_elementwise_loops_0(
// CHECK-NOT:     remat_profile
// CHECK:         return
// CHECK-LABEL: func.func @step(
// CHECK:         call @remat_profile_begin() : () -> ()
// CHECK-NEXT:    call @step_elementwise_loops_0(%{{.*}})
// CHECK-NEXT:    %[[NEST:.*]] = llvm.mlir.addressof @[[NEST_NAME:remat_profile_name[_0-9]*]]
// CHECK-NEXT:    call @remat_profile_end(%[[NEST]])
// CHECK:         call @remat_profile_begin()
// CHECK-NEXT:    call @remat_parallel_for(
// CHECK-NEXT:    llvm.mlir.addressof
// CHECK-NEXT:    call @remat_profile_end(
// CHECK:         call @remat_profile_begin()
// CHECK-NEXT:    memref.copy
// CHECK-NEXT:    llvm.mlir.addressof
// CHECK-NEXT:    call @remat_profile_end(
// CHECK:         call @remat_profile_begin()
// CHECK-NEXT:    call @step_elementwise_loops_0(%{{.*}})
// CHECK-NEXT:    llvm.mlir.addressof @[[NEST_NAME]]
// CHECK-NEXT:    call @remat_profile_end(
// CHECK:         return
func.func private @remat_parallel_for(i64, (!llvm.ptr, i64) -> (), !llvm.ptr)

func.func private @step_reduction_parallel(%context: !llvm.ptr, %unit: i64) {
  return
}

func.func private @step_elementwise_loops_0(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %x[%c0] : memref<4xf32>
  return
}

func.func @step(%x: memref<4xf32>, %y: memref<4xf32>, %context: !llvm.ptr) {
  call @step_elementwise_loops_0(%x) : (memref<4xf32>) -> ()
  %units = arith.constant 4 : i64
  %f = func.constant @step_reduction_parallel : (!llvm.ptr, i64) -> ()
  call @remat_parallel_for(%units, %f, %context) : (i64, (!llvm.ptr, i64) -> (), !llvm.ptr) -> ()
  memref.copy %x, %y : memref<4xf32> to memref<4xf32>
  call @step_elementwise_loops_0(%y) : (memref<4xf32>) -> ()
  return
}
