// RUN: remat-opt %s -remat-mark="policy=budget budget-between=0.5 plan-candidates=8" -o /dev/null 2>&1 | FileCheck %s
// RUN: remat-opt %s -remat-mark="policy=budget budget-between=0.5 plan-candidates=8" -remat-checkpoint -remat-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// Checks that policy=budget measures, after the plans that sample the
// model's whole front, a quarter more near the budget: sixteen layers of a
// matmul, a tanh, a matmul and a residual add, each layer its own segment
// (a model's per-layer checkpoints), and a wide last matmul (a vocabulary
// projection) that makes the layers' matmuls light next to it. With room
// for 8 plans the first ones answer budget-between=0.5 (1597440 bytes) with
// 1310720 bytes and 33816576 recomputed FLOPs; the 2 plans near the budget
// find a marking of fewer FLOPs within it.
// CHECK: remark: -remat-mark: policy=budget, segments: {{[0-9]+}}, predicted peak 1556480 bytes, recompute FLOPs 23330816, budget 1597440 bytes (10 markings measured on their memory plans, 1500 on the model)
// The plan it predicts is the checkpointed step's.
// REPORT: static peak: 1556480 bytes
// REPORT: recompute FLOPs: 23330816

func.func @step(%x0: tensor<64x64xf32>, %w1: tensor<64x256xf32>, %v1: tensor<256x64xf32>, %w2: tensor<64x256xf32>, %v2: tensor<256x64xf32>, %w3: tensor<64x256xf32>, %v3: tensor<256x64xf32>, %w4: tensor<64x256xf32>, %v4: tensor<256x64xf32>, %w5: tensor<64x256xf32>, %v5: tensor<256x64xf32>, %w6: tensor<64x256xf32>, %v6: tensor<256x64xf32>, %w7: tensor<64x256xf32>, %v7: tensor<256x64xf32>, %w8: tensor<64x256xf32>, %v8: tensor<256x64xf32>, %w9: tensor<64x256xf32>, %v9: tensor<256x64xf32>, %w10: tensor<64x256xf32>, %v10: tensor<256x64xf32>, %w11: tensor<64x256xf32>, %v11: tensor<256x64xf32>, %w12: tensor<64x256xf32>, %v12: tensor<256x64xf32>, %w13: tensor<64x256xf32>, %v13: tensor<256x64xf32>, %w14: tensor<64x256xf32>, %v14: tensor<256x64xf32>, %w15: tensor<64x256xf32>, %v15: tensor<256x64xf32>, %w16: tensor<64x256xf32>, %v16: tensor<256x64xf32>, %wh: tensor<64x4096xf32>, %wht: tensor<4096x64xf32>, %dy: tensor<64x4096xf32>) -> tensor<64x64xf32> {
  %f0 = arith.constant 0.0 : f32
  %eh = tensor.empty() : tensor<64x256xf32>
  %zh = linalg.fill ins(%f0 : f32) outs(%eh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %ex = tensor.empty() : tensor<64x64xf32>
  %zx = linalg.fill ins(%f0 : f32) outs(%ex : tensor<64x64xf32>) -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x4096xf32>
  %zo = linalg.fill ins(%f0 : f32) outs(%eo : tensor<64x4096xf32>) -> tensor<64x4096xf32>
  %h1 = linalg.matmul {remat.segment = 0 : i64} ins(%x0, %w1 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a1 = math.tanh %h1 {remat.segment = 0 : i64} : tensor<64x256xf32>
  %y1 = linalg.matmul {remat.segment = 0 : i64} ins(%a1, %v1 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x1 = arith.addf %y1, %x0 {remat.segment = 0 : i64} : tensor<64x64xf32>
  %h2 = linalg.matmul {remat.segment = 1 : i64} ins(%x1, %w2 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a2 = math.tanh %h2 {remat.segment = 1 : i64} : tensor<64x256xf32>
  %y2 = linalg.matmul {remat.segment = 1 : i64} ins(%a2, %v2 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x2 = arith.addf %y2, %x1 {remat.segment = 1 : i64} : tensor<64x64xf32>
  %h3 = linalg.matmul {remat.segment = 2 : i64} ins(%x2, %w3 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a3 = math.tanh %h3 {remat.segment = 2 : i64} : tensor<64x256xf32>
  %y3 = linalg.matmul {remat.segment = 2 : i64} ins(%a3, %v3 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x3 = arith.addf %y3, %x2 {remat.segment = 2 : i64} : tensor<64x64xf32>
  %h4 = linalg.matmul {remat.segment = 3 : i64} ins(%x3, %w4 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a4 = math.tanh %h4 {remat.segment = 3 : i64} : tensor<64x256xf32>
  %y4 = linalg.matmul {remat.segment = 3 : i64} ins(%a4, %v4 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x4 = arith.addf %y4, %x3 {remat.segment = 3 : i64} : tensor<64x64xf32>
  %h5 = linalg.matmul {remat.segment = 4 : i64} ins(%x4, %w5 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a5 = math.tanh %h5 {remat.segment = 4 : i64} : tensor<64x256xf32>
  %y5 = linalg.matmul {remat.segment = 4 : i64} ins(%a5, %v5 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x5 = arith.addf %y5, %x4 {remat.segment = 4 : i64} : tensor<64x64xf32>
  %h6 = linalg.matmul {remat.segment = 5 : i64} ins(%x5, %w6 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a6 = math.tanh %h6 {remat.segment = 5 : i64} : tensor<64x256xf32>
  %y6 = linalg.matmul {remat.segment = 5 : i64} ins(%a6, %v6 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x6 = arith.addf %y6, %x5 {remat.segment = 5 : i64} : tensor<64x64xf32>
  %h7 = linalg.matmul {remat.segment = 6 : i64} ins(%x6, %w7 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a7 = math.tanh %h7 {remat.segment = 6 : i64} : tensor<64x256xf32>
  %y7 = linalg.matmul {remat.segment = 6 : i64} ins(%a7, %v7 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x7 = arith.addf %y7, %x6 {remat.segment = 6 : i64} : tensor<64x64xf32>
  %h8 = linalg.matmul {remat.segment = 7 : i64} ins(%x7, %w8 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a8 = math.tanh %h8 {remat.segment = 7 : i64} : tensor<64x256xf32>
  %y8 = linalg.matmul {remat.segment = 7 : i64} ins(%a8, %v8 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x8 = arith.addf %y8, %x7 {remat.segment = 7 : i64} : tensor<64x64xf32>
  %h9 = linalg.matmul {remat.segment = 8 : i64} ins(%x8, %w9 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a9 = math.tanh %h9 {remat.segment = 8 : i64} : tensor<64x256xf32>
  %y9 = linalg.matmul {remat.segment = 8 : i64} ins(%a9, %v9 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x9 = arith.addf %y9, %x8 {remat.segment = 8 : i64} : tensor<64x64xf32>
  %h10 = linalg.matmul {remat.segment = 9 : i64} ins(%x9, %w10 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a10 = math.tanh %h10 {remat.segment = 9 : i64} : tensor<64x256xf32>
  %y10 = linalg.matmul {remat.segment = 9 : i64} ins(%a10, %v10 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x10 = arith.addf %y10, %x9 {remat.segment = 9 : i64} : tensor<64x64xf32>
  %h11 = linalg.matmul {remat.segment = 10 : i64} ins(%x10, %w11 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a11 = math.tanh %h11 {remat.segment = 10 : i64} : tensor<64x256xf32>
  %y11 = linalg.matmul {remat.segment = 10 : i64} ins(%a11, %v11 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x11 = arith.addf %y11, %x10 {remat.segment = 10 : i64} : tensor<64x64xf32>
  %h12 = linalg.matmul {remat.segment = 11 : i64} ins(%x11, %w12 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a12 = math.tanh %h12 {remat.segment = 11 : i64} : tensor<64x256xf32>
  %y12 = linalg.matmul {remat.segment = 11 : i64} ins(%a12, %v12 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x12 = arith.addf %y12, %x11 {remat.segment = 11 : i64} : tensor<64x64xf32>
  %h13 = linalg.matmul {remat.segment = 12 : i64} ins(%x12, %w13 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a13 = math.tanh %h13 {remat.segment = 12 : i64} : tensor<64x256xf32>
  %y13 = linalg.matmul {remat.segment = 12 : i64} ins(%a13, %v13 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x13 = arith.addf %y13, %x12 {remat.segment = 12 : i64} : tensor<64x64xf32>
  %h14 = linalg.matmul {remat.segment = 13 : i64} ins(%x13, %w14 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a14 = math.tanh %h14 {remat.segment = 13 : i64} : tensor<64x256xf32>
  %y14 = linalg.matmul {remat.segment = 13 : i64} ins(%a14, %v14 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x14 = arith.addf %y14, %x13 {remat.segment = 13 : i64} : tensor<64x64xf32>
  %h15 = linalg.matmul {remat.segment = 14 : i64} ins(%x14, %w15 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a15 = math.tanh %h15 {remat.segment = 14 : i64} : tensor<64x256xf32>
  %y15 = linalg.matmul {remat.segment = 14 : i64} ins(%a15, %v15 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x15 = arith.addf %y15, %x14 {remat.segment = 14 : i64} : tensor<64x64xf32>
  %h16 = linalg.matmul {remat.segment = 15 : i64} ins(%x15, %w16 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a16 = math.tanh %h16 {remat.segment = 15 : i64} : tensor<64x256xf32>
  %y16 = linalg.matmul {remat.segment = 15 : i64} ins(%a16, %v16 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x16 = arith.addf %y16, %x15 {remat.segment = 15 : i64} : tensor<64x64xf32>
  %o = linalg.matmul ins(%x16, %wh : tensor<64x64xf32>, tensor<64x4096xf32>) outs(%zo : tensor<64x4096xf32>) -> tensor<64x4096xf32>
  %g0 = remat.backward {
    %go = arith.mulf %dy, %o : tensor<64x4096xf32>
    %gx = linalg.matmul ins(%go, %wht : tensor<64x4096xf32>, tensor<4096x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %p16 = linalg.matmul ins(%gx, %w16 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q16 = arith.mulf %p16, %a16 : tensor<64x256xf32>
    %r16 = arith.mulf %q16, %h16 : tensor<64x256xf32>
    %s16 = linalg.matmul ins(%r16, %v16 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g16 = arith.addf %s16, %gx : tensor<64x64xf32>
    %p15 = linalg.matmul ins(%g16, %w15 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q15 = arith.mulf %p15, %a15 : tensor<64x256xf32>
    %r15 = arith.mulf %q15, %h15 : tensor<64x256xf32>
    %s15 = linalg.matmul ins(%r15, %v15 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g15 = arith.addf %s15, %g16 : tensor<64x64xf32>
    %p14 = linalg.matmul ins(%g15, %w14 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q14 = arith.mulf %p14, %a14 : tensor<64x256xf32>
    %r14 = arith.mulf %q14, %h14 : tensor<64x256xf32>
    %s14 = linalg.matmul ins(%r14, %v14 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g14 = arith.addf %s14, %g15 : tensor<64x64xf32>
    %p13 = linalg.matmul ins(%g14, %w13 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q13 = arith.mulf %p13, %a13 : tensor<64x256xf32>
    %r13 = arith.mulf %q13, %h13 : tensor<64x256xf32>
    %s13 = linalg.matmul ins(%r13, %v13 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g13 = arith.addf %s13, %g14 : tensor<64x64xf32>
    %p12 = linalg.matmul ins(%g13, %w12 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q12 = arith.mulf %p12, %a12 : tensor<64x256xf32>
    %r12 = arith.mulf %q12, %h12 : tensor<64x256xf32>
    %s12 = linalg.matmul ins(%r12, %v12 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g12 = arith.addf %s12, %g13 : tensor<64x64xf32>
    %p11 = linalg.matmul ins(%g12, %w11 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q11 = arith.mulf %p11, %a11 : tensor<64x256xf32>
    %r11 = arith.mulf %q11, %h11 : tensor<64x256xf32>
    %s11 = linalg.matmul ins(%r11, %v11 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g11 = arith.addf %s11, %g12 : tensor<64x64xf32>
    %p10 = linalg.matmul ins(%g11, %w10 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q10 = arith.mulf %p10, %a10 : tensor<64x256xf32>
    %r10 = arith.mulf %q10, %h10 : tensor<64x256xf32>
    %s10 = linalg.matmul ins(%r10, %v10 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g10 = arith.addf %s10, %g11 : tensor<64x64xf32>
    %p9 = linalg.matmul ins(%g10, %w9 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q9 = arith.mulf %p9, %a9 : tensor<64x256xf32>
    %r9 = arith.mulf %q9, %h9 : tensor<64x256xf32>
    %s9 = linalg.matmul ins(%r9, %v9 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g9 = arith.addf %s9, %g10 : tensor<64x64xf32>
    %p8 = linalg.matmul ins(%g9, %w8 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q8 = arith.mulf %p8, %a8 : tensor<64x256xf32>
    %r8 = arith.mulf %q8, %h8 : tensor<64x256xf32>
    %s8 = linalg.matmul ins(%r8, %v8 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g8 = arith.addf %s8, %g9 : tensor<64x64xf32>
    %p7 = linalg.matmul ins(%g8, %w7 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q7 = arith.mulf %p7, %a7 : tensor<64x256xf32>
    %r7 = arith.mulf %q7, %h7 : tensor<64x256xf32>
    %s7 = linalg.matmul ins(%r7, %v7 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g7 = arith.addf %s7, %g8 : tensor<64x64xf32>
    %p6 = linalg.matmul ins(%g7, %w6 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q6 = arith.mulf %p6, %a6 : tensor<64x256xf32>
    %r6 = arith.mulf %q6, %h6 : tensor<64x256xf32>
    %s6 = linalg.matmul ins(%r6, %v6 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g6 = arith.addf %s6, %g7 : tensor<64x64xf32>
    %p5 = linalg.matmul ins(%g6, %w5 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q5 = arith.mulf %p5, %a5 : tensor<64x256xf32>
    %r5 = arith.mulf %q5, %h5 : tensor<64x256xf32>
    %s5 = linalg.matmul ins(%r5, %v5 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g5 = arith.addf %s5, %g6 : tensor<64x64xf32>
    %p4 = linalg.matmul ins(%g5, %w4 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q4 = arith.mulf %p4, %a4 : tensor<64x256xf32>
    %r4 = arith.mulf %q4, %h4 : tensor<64x256xf32>
    %s4 = linalg.matmul ins(%r4, %v4 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g4 = arith.addf %s4, %g5 : tensor<64x64xf32>
    %p3 = linalg.matmul ins(%g4, %w3 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q3 = arith.mulf %p3, %a3 : tensor<64x256xf32>
    %r3 = arith.mulf %q3, %h3 : tensor<64x256xf32>
    %s3 = linalg.matmul ins(%r3, %v3 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g3 = arith.addf %s3, %g4 : tensor<64x64xf32>
    %p2 = linalg.matmul ins(%g3, %w2 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q2 = arith.mulf %p2, %a2 : tensor<64x256xf32>
    %r2 = arith.mulf %q2, %h2 : tensor<64x256xf32>
    %s2 = linalg.matmul ins(%r2, %v2 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g2 = arith.addf %s2, %g3 : tensor<64x64xf32>
    %p1 = linalg.matmul ins(%g2, %w1 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%zh : tensor<64x256xf32>) -> tensor<64x256xf32>
    %q1 = arith.mulf %p1, %a1 : tensor<64x256xf32>
    %r1 = arith.mulf %q1, %h1 : tensor<64x256xf32>
    %s1 = linalg.matmul ins(%r1, %v1 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%zx : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g1 = arith.addf %s1, %g2 : tensor<64x64xf32>
    remat.yield %g1 : tensor<64x64xf32>
  } : tensor<64x64xf32>
  return %g0 : tensor<64x64xf32>
}
