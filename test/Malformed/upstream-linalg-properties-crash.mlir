// RUN: %expect_exit 1 -- remat-opt %s -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=AddressSanitizer
// RUN: %expect_exit 2 -- remat-run %s --random-inputs 1 2>&1 | FileCheck %s --implicit-check-not=AddressSanitizer
// Found by fuzz/remat-fuzz: MLIR 22's parsers of the named linalg ops
// (linalg.matmul, batch_matmul, fill, add, conv_*) take whatever attribute
// follows `<` for a properties dictionary and read past it: mlir-opt-22
// segfaults on this file (heap-buffer-overflow under ASan, in
// NamedAttrList(DictionaryAttr) called from MatmulOp::parse). remat's tools
// find the form before parsing and reject the file with a located error.
// CHECK: upstream-linalg-properties-crash.mlir:[[# @LINE + 4]]:22: error: `<` after linalg.matmul must open a properties dictionary `<{...}>`: MLIR 22's parsers of linalg ops take any attribute there for one and crash, so remat rejects the file before parsing it
// CHECK-NOT: Stack dump
func.func @step(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x2xf32>
  %h = linalg.matmul <1> ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %h : tensor<2x2xf32>
}
