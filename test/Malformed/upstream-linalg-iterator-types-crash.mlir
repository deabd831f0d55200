// RUN: %expect_exit 1 -- remat-opt %s -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=AddressSanitizer
// RUN: %expect_exit 2 -- remat-run %s --random-inputs 1 2>&1 | FileCheck %s --implicit-check-not=AddressSanitizer
// Found by remat::findParserHazard's unit test: MLIR 22's parser of
// linalg.generic crashes (out of memory, or a segfault) formatting its error
// about an `iterator_types` element that is not a string, such as the
// iterator type attribute the generic form prints. remat's tools reject the
// file with a located error instead.
// CHECK: upstream-linalg-iterator-types-crash.mlir:[[# @LINE + 5]]:{{[0-9]+}}: error: `iterator_types` of linalg.generic must be a list of strings ("parallel", "reduction"): MLIR 22's parser crashes on anything else, so remat rejects the file before parsing it
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
