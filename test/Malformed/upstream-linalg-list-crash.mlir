// RUN: %expect_exit 1 -- remat-opt %s -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=AddressSanitizer
// RUN: %expect_exit 2 -- remat-run %s --random-inputs 1 2>&1 | FileCheck %s --implicit-check-not=AddressSanitizer
// Found by fuzz/remat-fuzz: MLIR 22's parsers of linalg.transpose,
// linalg.broadcast and linalg.reduce report an error and then dereference a
// null attribute when `permutation =` / `dimensions =` is not followed by a
// list of integers (mlir-opt-22 segfaults on this file). remat's tools find
// the form before parsing (remat::findParserHazard; its unit test has the
// other shapes) and reject the file with a located error.
// CHECK: upstream-linalg-list-crash.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: `permutation =` of linalg.transpose must be followed by a list of integers `[...]`: MLIR 22's parser crashes on anything else, so remat rejects the file before parsing it
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = 1
  return %t : tensor<3x2xf32>
}
