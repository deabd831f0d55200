// RUN: remat-opt %s -remat-lower-cpu | FileCheck %s
// RUN: remat-opt %s -remat-lower-cpu="vectorize=false" | FileCheck %s

// Checks that the CPU lowering computes bf16 ops in f32 and rounds every
// op's result before the next op reads it, inside one fused loop: the sum's
// f32 bits are rounded to nearest even as integer code (a shift right by
// 16 after adding the rounding bias) and widened again (a shift left by 16)
// before the product; no extf(truncf(x)) is folded away. PyTorch rounds
// every op's result, and a value's bits must not depend on whether fusion
// kept it in a buffer (a recomputed segment is bit-identical to the
// forward).
// (The loop nest is outlined into a function of its own, before @chain.)
// CHECK:         llvm.fadd {{.*}} : {{.*}}f32
// CHECK:         llvm.lshr
// CHECK:         llvm.trunc {{.*}} to {{.*}}i16
// CHECK:         llvm.zext
// CHECK:         llvm.shl
// CHECK:         llvm.fmul {{.*}} : {{.*}}f32
// CHECK:         llvm.lshr
// CHECK:         llvm.trunc {{.*}} to {{.*}}i16
// CHECK-NOT:     llvm.call @__truncsfbf2
func.func @chain(%x: tensor<16xbf16>, %c: tensor<16xbf16>) -> tensor<16xbf16> {
  %y = arith.addf %x, %c : tensor<16xbf16>
  %z = arith.mulf %y, %c : tensor<16xbf16>
  return %z : tensor<16xbf16>
}
