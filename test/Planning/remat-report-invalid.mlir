// RUN: not remat-opt %s -remat-report=format=yaml -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: remat-opt %s -split-input-file -remat-report -verify-diagnostics -o /dev/null

// Checks that an unknown format is refused.
// FORMAT: for the --format option: Cannot find option named 'yaml'!

// Checks that a tensor of dynamic shape cannot be priced.
func.func @dynamic(%x: tensor<?xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'math.tanh' op result #0 of type 'tensor<?xf32>' has a dynamic shape; the memory profile needs static shapes}}
  %a = math.tanh %x : tensor<?xf32>
  %g = remat.backward {
    %c = tensor.cast %a : tensor<?xf32> to tensor<4xf32>
    remat.yield %c : tensor<4xf32>
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}
