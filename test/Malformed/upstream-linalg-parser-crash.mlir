// RUN: not remat-opt %s -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=AddressSanitizer
// XFAIL: *
// Found by fuzz/remat-fuzz: MLIR 22's parser of linalg.transpose (and of
// linalg.broadcast's `dimensions`) dereferences a null attribute when
// `permutation =` is not followed by a list, and remat-opt segfaults. The
// bug is upstream (mlir::linalg::TransposeOp::parse -> NamedAttrList::set),
// not in remat; this test fails (XFAIL) until MLIR fixes it, and then turns
// into an unexpected pass that must lose its XFAIL line. (Under ASan the
// crash exits 1 with a report: the implicit check keeps that a failure.)
// CHECK: error:
func.func @step(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = 1
  return %t : tensor<3x2xf32>
}
