// RUN: not remat-opt %s -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=AddressSanitizer
// XFAIL: *
// Found by fuzz/remat-fuzz: MLIR 22's parsers of the named linalg ops
// (linalg.matmul, batch_matmul, fill, add, conv_*; not generic, transpose,
// elementwise or contract) take whatever follows `<` as a properties
// dictionary without checking that it is one, and read past it: plain
// `mlir-opt-22` segfaults on this file too (heap-buffer-overflow under ASan,
// in NamedAttrList(DictionaryAttr) called from MatmulOp::parse). The bug is
// upstream, not in remat; this test fails (XFAIL) until MLIR fixes it, and
// then turns into an unexpected pass that must lose its XFAIL line.
// CHECK: error:
func.func @step(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x2xf32>
  %h = linalg.matmul <1> ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %h : tensor<2x2xf32>
}
