// RUN: remat-opt %s -remat-widen-bool-vectors | FileCheck %s

// Checks that loads and stores of vectors of i1 move bytes, one per element
// as memref<...xi1> lays them out, keeping their attributes, and that
// scalar i1 and vectors of other types are left alone.
// CHECK-LABEL: llvm.func @masks(
// CHECK-SAME:      %[[P:[^:]*]]: !llvm.ptr, %[[Q:[^:]*]]: !llvm.ptr
// CHECK:         %[[B:.*]] = llvm.load %[[P]] {alignment = 1 : i64} : !llvm.ptr -> vector<8xi8>
// CHECK:         %[[M:.*]] = llvm.trunc %[[B]] : vector<8xi8> to vector<8xi1>
// CHECK:         %[[N:.*]] = llvm.xor %[[M]], %{{.*}} : vector<8xi1>
// CHECK:         %[[W:.*]] = llvm.zext %[[N]] : vector<8xi1> to vector<8xi8>
// CHECK:         llvm.store %[[W]], %[[Q]] {alignment = 1 : i64} : vector<8xi8>, !llvm.ptr
// CHECK:         llvm.load %[[P]] : !llvm.ptr -> i1
// CHECK:         llvm.load %[[P]] : !llvm.ptr -> vector<4xi8>
// CHECK-NOT:     llvm.trunc
llvm.func @masks(%p: !llvm.ptr, %q: !llvm.ptr) {
  %ones = llvm.mlir.constant(dense<true> : vector<8xi1>) : vector<8xi1>
  %m = llvm.load %p {alignment = 1 : i64} : !llvm.ptr -> vector<8xi1>
  %n = llvm.xor %m, %ones : vector<8xi1>
  llvm.store %n, %q {alignment = 1 : i64} : vector<8xi1>, !llvm.ptr
  %s = llvm.load %p : !llvm.ptr -> i1
  %b = llvm.load %p : !llvm.ptr -> vector<4xi8>
  llvm.return
}
