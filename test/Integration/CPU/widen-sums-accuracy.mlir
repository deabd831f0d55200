// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy; numpy.save('%t/x.npy', numpy.full((2, 1024, 512), 0.1, numpy.float32))"
// RUN: remat-run %s --inputs %t/x.npy --outputs %t/out
// RUN: %python -c "import numpy; x = numpy.load('%t/x.npy').astype(numpy.float64); print('mean', abs(float(numpy.load('%t/out/out0.npy')) / x.mean() - 1) < 1e-7); print('sums', float(numpy.max(numpy.abs(numpy.load('%t/out/out1.npy') / x.sum(axis=(0, 1)) - 1))) < 1e-7)" | FileCheck %s

// Checks that float32 sums accumulate in float64 (-remat-widen-sums in the
// lowering): the mean of a million copies of 0.1 and the column sums over
// 2048 rows come out as float64 gives them, rounded once (within 1e-7 of
// it). Summed in one float32 chain (the scalar loops' order), the mean is
// off by 1e-2 and the column sums by 1.6e-5.
// CHECK: mean True
// CHECK: sums True
func.func @step(%x: tensor<2x1024x512xf32>) -> (tensor<f32>, tensor<512xf32>) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 9.5367431640625e-07 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %total = linalg.reduce ins(%x : tensor<2x1024x512xf32>) outs(%init : tensor<f32>) dimensions = [0, 1, 2]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %s = tensor.splat %scale : tensor<f32>
  %mean = arith.mulf %total, %s : tensor<f32>
  %ec = tensor.empty() : tensor<512xf32>
  %initc = linalg.fill ins(%zero : f32) outs(%ec : tensor<512xf32>) -> tensor<512xf32>
  %cols = linalg.reduce ins(%x : tensor<2x1024x512xf32>) outs(%initc : tensor<512xf32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %mean, %cols : tensor<f32>, tensor<512xf32>
}
