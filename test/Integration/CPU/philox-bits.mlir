// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy; numpy.save('%t/seed.npy', numpy.int64(0x123456789abcdef))"
// RUN: remat-run %s --entry philox --inputs %t/seed.npy --outputs %t
// RUN: %python %S/Inputs/check_philox.py %t 0x123456789abcdef | FileCheck %s

// Checks that lowered counter-based random ops produce the words that
// Philox4x32-10 defines, with both halves of the seed and of the counter in
// use (an offset above 2^34), in f32 and rounded to f16 and bf16.
// CHECK: out0.npy: 15 f32 values bit-identical to the reference
// CHECK: out1.npy: 7 f16 values bit-identical to the reference
// CHECK: out2.npy: 12 bf16 values bit-identical to the reference
func.func @philox(%seed: i64 {remat.rng_seed})
    -> (tensor<3x5xf32>, tensor<7xf16>, tensor<2x3x2xbf16>) {
  %o0 = arith.constant 6 : i64
  %o1 = arith.constant 1001 : i64
  %o2 = arith.constant 17179869190 : i64
  %a = remat.philox_uniform %seed, %o0 : tensor<3x5xf32>
  %b = remat.philox_uniform %seed, %o1 : tensor<7xf16>
  %c = remat.philox_uniform %seed, %o2 : tensor<2x3x2xbf16>
  return %a, %b, %c : tensor<3x5xf32>, tensor<7xf16>, tensor<2x3x2xbf16>
}
