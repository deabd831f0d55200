// RUN: remat-opt %s -split-input-file -remat-generalize-kernel-offsets | FileCheck %s

// Checks that a kernel's strided memref argument read and written through
// loads and stores takes a dynamic offset, its launch casts the operand to
// it, its workgroup attribution keeps its type, and an argument a subview
// reads keeps its static offset.
// CHECK-LABEL: gpu.module @k0
// CHECK:         gpu.func @k(%{{.*}}: index, %[[X:.*]]: memref<8xf32, strided<[1], offset: ?>>, %[[Y:.*]]: memref<16xf32, strided<[1], offset: 4>>)
// CHECK-SAME:        workgroup(%{{.*}} : memref<8xf32, 3>)
// CHECK:           memref.load %[[X]]
// CHECK:           memref.subview %[[Y]]
// CHECK-LABEL: func.func @launch(
// CHECK-SAME:      %[[A:.*]]: memref<8xf32, strided<[1], offset: 8>>, %[[B:.*]]: memref<16xf32, strided<[1], offset: 4>>)
// CHECK:         %[[CAST:.*]] = memref.cast %[[A]] : memref<8xf32, strided<[1], offset: 8>> to memref<8xf32, strided<[1], offset: ?>>
// CHECK:         gpu.launch_func @k0::@k {{.*}} args(%{{.*}} : index, %[[CAST]] : memref<8xf32, strided<[1], offset: ?>>, %[[B]] : memref<16xf32, strided<[1], offset: 4>>)
module attributes {gpu.container_module} {
  gpu.module @k0 {
    gpu.func @k(%n: index, %x: memref<8xf32, strided<[1], offset: 8>>, %y: memref<16xf32, strided<[1], offset: 4>>)
        workgroup(%shared : memref<8xf32, 3>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<8xf32, strided<[1], offset: 8>>
      memref.store %v, %shared[%i] : memref<8xf32, 3>
      %w = memref.load %shared[%i] : memref<8xf32, 3>
      memref.store %w, %x[%i] : memref<8xf32, strided<[1], offset: 8>>
      %s = memref.subview %y[0] [8] [1] : memref<16xf32, strided<[1], offset: 4>> to memref<8xf32, strided<[1], offset: 4>>
      memref.store %w, %s[%i] : memref<8xf32, strided<[1], offset: 4>>
      gpu.return
    }
  }
  func.func @launch(%a: memref<8xf32, strided<[1], offset: 8>>, %b: memref<16xf32, strided<[1], offset: 4>>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @k0::@k blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%c8 : index, %a : memref<8xf32, strided<[1], offset: 8>>, %b : memref<16xf32, strided<[1], offset: 4>>)
    return
  }
}
