// Five convolutions on buffers, printed: forward ones (4 tiles of one image
// each, into the result; strided and dilated onto 0.5; into a transposed
// result, through a temporary) and filter gradients (into the filter; into
// a transposed filter, through a temporary). conv-cublas-form.test runs them
// as loops and in -remat-conv-to-cublas's form.
#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func private @printMemrefF32(memref<*xf32>)
func.func @init(%m: memref<?x?x?x?xf32>, %seed: f32) {
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%m : memref<?x?x?x?xf32>) {
  ^bb0(%o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %a = arith.addi %i0, %i1 : index
    %b = arith.muli %i2, %i3 : index
    %c = arith.addi %a, %b : index
    %d = arith.addi %c, %i2 : index
    %e = arith.index_cast %d : index to i32
    %f = arith.sitofp %e : i32 to f32
    %g = arith.mulf %f, %seed : f32
    %h = math.sin %g : f32
    linalg.yield %h : f32
  }
  return
}
func.func @main() {
  %x = memref.alloc() : memref<4x16x66x66xf32>
  %w = memref.alloc() : memref<8x16x3x3xf32>
  %y = memref.alloc() : memref<4x8x64x64xf32>
  %x2 = memref.alloc() : memref<4x16x35x35xf32>
  %y2 = memref.alloc() : memref<4x8x16x16xf32>
  %yt = memref.alloc() : memref<8x4x64x64xf32>
  %dw = memref.alloc() : memref<8x16x3x3xf32>
  %dwt = memref.alloc() : memref<16x8x3x3xf32>
  %xc = memref.cast %x : memref<4x16x66x66xf32> to memref<?x?x?x?xf32>
  %wc = memref.cast %w : memref<8x16x3x3xf32> to memref<?x?x?x?xf32>
  %x2c = memref.cast %x2 : memref<4x16x35x35xf32> to memref<?x?x?x?xf32>
  %yc = memref.cast %y : memref<4x8x64x64xf32> to memref<?x?x?x?xf32>
  %s1 = arith.constant 0.37 : f32
  %s2 = arith.constant 0.91 : f32
  %s3 = arith.constant 0.13 : f32
  call @init(%xc, %s1) : (memref<?x?x?x?xf32>, f32) -> ()
  call @init(%wc, %s2) : (memref<?x?x?x?xf32>, f32) -> ()
  call @init(%x2c, %s3) : (memref<?x?x?x?xf32>, f32) -> ()
  %z = arith.constant 0.0 : f32
  %one = arith.constant 0.5 : f32
  linalg.fill ins(%z : f32) outs(%y : memref<4x8x64x64xf32>)
  linalg.fill ins(%one : f32) outs(%y2 : memref<4x8x16x16xf32>)
  linalg.fill ins(%z : f32) outs(%yt : memref<8x4x64x64xf32>)
  linalg.fill ins(%z : f32) outs(%dw : memref<8x16x3x3xf32>)
  linalg.fill ins(%z : f32) outs(%dwt : memref<16x8x3x3xf32>)
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<4x16x66x66xf32>, memref<8x16x3x3xf32>) outs(%y : memref<4x8x64x64xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<2> : vector<2xi64>, dilations = dense<[1, 2]> : vector<2xi64>} ins(%x2, %w : memref<4x16x35x35xf32>, memref<8x16x3x3xf32>) outs(%y2 : memref<4x8x16x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>, affine_map<(n, f, oh, ow, c, kh, kw) -> (f, n, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<4x16x66x66xf32>, memref<8x16x3x3xf32>) outs(%yt : memref<8x4x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(f, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>, affine_map<(f, c, kh, kw, n, oh, ow) -> (n, f, oh, ow)>, affine_map<(f, c, kh, kw, n, oh, ow) -> (f, c, kh, kw)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %y : memref<4x16x66x66xf32>, memref<4x8x64x64xf32>) outs(%dw : memref<8x16x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(f, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>, affine_map<(f, c, kh, kw, n, oh, ow) -> (n, f, oh, ow)>, affine_map<(f, c, kh, kw, n, oh, ow) -> (c, f, kh, kw)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %y : memref<4x16x66x66xf32>, memref<4x8x64x64xf32>) outs(%dwt : memref<16x8x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  %p1 = memref.cast %y : memref<4x8x64x64xf32> to memref<*xf32>
  %p2 = memref.cast %y2 : memref<4x8x16x16xf32> to memref<*xf32>
  %p3 = memref.cast %yt : memref<8x4x64x64xf32> to memref<*xf32>
  %p4 = memref.cast %dw : memref<8x16x3x3xf32> to memref<*xf32>
  %p5 = memref.cast %dwt : memref<16x8x3x3xf32> to memref<*xf32>
  call @printMemrefF32(%p1) : (memref<*xf32>) -> ()
  call @printMemrefF32(%p2) : (memref<*xf32>) -> ()
  call @printMemrefF32(%p3) : (memref<*xf32>) -> ()
  call @printMemrefF32(%p4) : (memref<*xf32>) -> ()
  call @printMemrefF32(%p5) : (memref<*xf32>) -> ()
  return
}
