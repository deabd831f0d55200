// RUN: remat-opt %s -pass-pipeline='builtin.module(func.func(remat-vectorize{vector-bits=8}))' -verify-diagnostics

// Checks that a vector narrower than two bytes is refused, not tiled into
// vectors of no lanes.
// expected-error @+1 {{-remat-vectorize: vector-bits must be at least 16, got 8}}
func.func @narrow(%x: memref<16xf32>, %y: memref<16xf32>) {
  linalg.copy ins(%x : memref<16xf32>) outs(%y : memref<16xf32>)
  return
}
