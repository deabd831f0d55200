//===- ConvTest.cpp - The CPU runtime's convolution kernels ---------------===//
//
// Checks the convolution kernels generated code calls against a plain sum
// over every shape class they treat apart: im2col tiles into sgemm (one
// tile, several pixel tiles, several tap blocks), 1x1 filters read in place,
// groups, strides and dilations, depthwise filters and layouts sgemm cannot
// read (direct loops); that the sums are exact, in any order, when the
// products and partial sums are small integers; that the direct filter
// gradient rounds its long sums once; and that the outputs are
// bit-identical for any number of the runtime pool's threads.
//
//===----------------------------------------------------------------------===//

#include "DenseView.h"
#include "RematRuntime.h"
#include "ThreadPool.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

struct Shape {
  int64_t n, g, f, c, h, w, kh, kw, strideH, strideW, dilationH, dilationW;
  int64_t oh() const { return (h - dilationH * (kh - 1) - 1) / strideH + 1; }
  int64_t ow() const { return (w - dilationW * (kw - 1) - 1) / strideW + 1; }
};

/// A rank-5 f32 buffer and a strided view of it: `order` lists the view's
/// dimensions from outermost to innermost in memory.
struct Tensor {
  std::vector<float> data;
  StridedMemRefType<float, 5> view;

  Tensor(std::array<int64_t, 5> sizes,
         std::array<int, 5> order = {0, 1, 2, 3, 4}) {
    int64_t size = 1;
    for (int64_t s : sizes)
      size *= s;
    // One float of slack at the front: views need not start at offset 0.
    data.assign(size + 1, 0.0f);
    remat::test::setDenseView(view, data.data(), /*offset=*/1, sizes, order);
  }

  float &at(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
    return view
        .data[view.offset + a * view.strides[0] + b * view.strides[1] +
              c * view.strides[2] + d * view.strides[3] + e * view.strides[4]];
  }

  /// Random floats in [-1, 1), or integers in [-3, 3] when `integers`.
  void fill(std::mt19937 &rng, bool integers) {
    std::uniform_real_distribution<float> real(-1.0f, 1.0f);
    std::uniform_int_distribution<int> integer(-3, 3);
    for (float &value : data)
      value = integers ? float(integer(rng)) : real(rng);
  }
};

struct Operands {
  Tensor image, filter, response;
};

Operands makeOperands(const Shape &s, std::array<int, 5> filterOrder,
                      std::array<int, 5> responseOrder) {
  return {Tensor({s.n, s.g, s.c, s.h, s.w}),
          Tensor({s.g, s.f, s.c, s.kh, s.kw}, filterOrder),
          Tensor({s.n, s.g, s.f, s.oh(), s.ow()}, responseOrder)};
}

double imageAt(Operands &o, const Shape &s, int64_t n, int64_t g, int64_t c,
               int64_t oh, int64_t ow, int64_t kh, int64_t kw) {
  return o.image.at(n, g, c, oh * s.strideH + kh * s.dilationH,
                    ow * s.strideW + kw * s.dilationW);
}

/// response + conv(image, filter), in double.
std::vector<double> referenceForward(Operands &o, const Shape &s) {
  std::vector<double> result;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t g = 0; g < s.g; ++g)
      for (int64_t f = 0; f < s.f; ++f)
        for (int64_t oh = 0; oh < s.oh(); ++oh)
          for (int64_t ow = 0; ow < s.ow(); ++ow) {
            double sum = o.response.at(n, g, f, oh, ow);
            for (int64_t c = 0; c < s.c; ++c)
              for (int64_t kh = 0; kh < s.kh; ++kh)
                for (int64_t kw = 0; kw < s.kw; ++kw)
                  sum += imageAt(o, s, n, g, c, oh, ow, kh, kw) *
                         o.filter.at(g, f, c, kh, kw);
            result.push_back(sum);
          }
  return result;
}

/// filter + the same sums over n, oh and ow, in double.
std::vector<double> referenceFilterGrad(Operands &o, const Shape &s) {
  std::vector<double> result;
  for (int64_t g = 0; g < s.g; ++g)
    for (int64_t f = 0; f < s.f; ++f)
      for (int64_t c = 0; c < s.c; ++c)
        for (int64_t kh = 0; kh < s.kh; ++kh)
          for (int64_t kw = 0; kw < s.kw; ++kw) {
            double sum = o.filter.at(g, f, c, kh, kw);
            for (int64_t n = 0; n < s.n; ++n)
              for (int64_t oh = 0; oh < s.oh(); ++oh)
                for (int64_t ow = 0; ow < s.ow(); ++ow)
                  sum += imageAt(o, s, n, g, c, oh, ow, kh, kw) *
                         o.response.at(n, g, f, oh, ow);
            result.push_back(sum);
          }
  return result;
}

/// Runs both kernels on random operands and compares each element with the
/// reference: within 1e-5 of the largest magnitude for floats, exactly for
/// small integers.
void checkKernels(const Shape &s, bool integers,
                  std::array<int, 5> filterOrder = {0, 1, 2, 3, 4},
                  std::array<int, 5> responseOrder = {0, 1, 2, 3, 4}) {
  std::mt19937 rng(s.n * 131 + s.c * 17 + s.kh);
  Operands o = makeOperands(s, filterOrder, responseOrder);
  o.image.fill(rng, integers);
  o.filter.fill(rng, integers);
  o.response.fill(rng, integers);

  auto compare = [&](const std::vector<double> &expected, Tensor &actual,
                     std::array<int64_t, 5> sizes, const char *kernel) {
    double scale = 1.0;
    for (double value : expected)
      scale = std::max(scale, std::abs(value));
    size_t index = 0;
    for (int64_t a = 0; a < sizes[0]; ++a)
      for (int64_t b = 0; b < sizes[1]; ++b)
        for (int64_t c = 0; c < sizes[2]; ++c)
          for (int64_t d = 0; d < sizes[3]; ++d)
            for (int64_t e = 0; e < sizes[4]; ++e, ++index) {
              float value = actual.at(a, b, c, d, e);
              if (integers)
                ASSERT_EQ(value, float(expected[index]))
                    << kernel << " at " << index;
              else
                ASSERT_NEAR(value, expected[index], 1e-5 * scale)
                    << kernel << " at " << index;
            }
  };

  std::vector<double> forward = referenceForward(o, s);
  std::vector<double> filterGrad = referenceFilterGrad(o, s);
  _mlir_ciface_remat_conv2d_f32(&o.image.view, &o.filter.view, &o.response.view,
                                s.strideH, s.strideW, s.dilationH, s.dilationW);
  compare(forward, o.response, {s.n, s.g, s.f, s.oh(), s.ow()},
          "remat_conv2d_f32");
  // The filter gradient reads the response the forward kernel wrote; the
  // reference reads the same.
  filterGrad = referenceFilterGrad(o, s);
  _mlir_ciface_remat_conv2d_filter_grad_f32(
      &o.image.view, &o.filter.view, &o.response.view, s.strideH, s.strideW,
      s.dilationH, s.dilationW);
  compare(filterGrad, o.filter, {s.g, s.f, s.c, s.kh, s.kw},
          "remat_conv2d_filter_grad_f32");
}

TEST(ConvTest, Im2colOneTile) {
  checkKernels({2, 1, 8, 3, 8, 8, 3, 3, 1, 1, 1, 1}, false);
}

TEST(ConvTest, StridesAndDilations) {
  checkKernels({2, 1, 6, 4, 13, 11, 3, 2, 2, 3, 2, 1}, false);
}

TEST(ConvTest, Groups) {
  checkKernels({2, 3, 4, 5, 7, 7, 3, 3, 1, 1, 1, 1}, false);
}

TEST(ConvTest, ManyPixelTiles) {
  // 576 taps: two tap blocks; 40 x 40 pixels: several pixel tiles.
  checkKernels({1, 1, 5, 64, 42, 42, 3, 3, 1, 1, 1, 1}, false);
}

TEST(ConvTest, PixelTilesOfWholePanels) {
  // 576 taps, 28 x 28 pixels: response tiles of 128 pixels and a last one
  // of 16; and 7 x 7 pixels, one tile of two panels, the second partly
  // padding.
  checkKernels({2, 1, 9, 64, 30, 30, 3, 3, 1, 1, 1, 1}, false);
  checkKernels({2, 1, 16, 64, 9, 9, 3, 3, 1, 1, 1, 1}, false);
}

TEST(ConvTest, FilterGradRowParts) {
  // One tap tile of 72 taps and 300 filters: the filter gradient's units are
  // two parts of the filter rows. Each part's rows get bit for bit what the
  // gradient of those filters alone gets (150 filters: one part).
  Shape whole{2, 1, 300, 8, 11, 9, 3, 3, 1, 1, 1, 1};
  checkKernels(whole, false);
  Shape half = whole;
  half.f = 150;
  std::mt19937 rng(7);
  Operands a = makeOperands(whole, {0, 1, 2, 3, 4}, {0, 1, 2, 3, 4});
  Operands b = makeOperands(half, {0, 1, 2, 3, 4}, {0, 1, 2, 3, 4});
  a.image.fill(rng, false);
  a.filter.fill(rng, false);
  a.response.fill(rng, false);
  std::copy(a.image.data.begin(), a.image.data.end(), b.image.data.begin());
  for (int64_t f = 0; f < half.f; ++f) {
    for (int64_t c = 0; c < half.c * half.kh * half.kw; ++c)
      b.filter.at(0, f, c / 9, c / 3 % 3, c % 3) =
          a.filter.at(0, f + half.f, c / 9, c / 3 % 3, c % 3);
    for (int64_t n = 0; n < half.n; ++n)
      for (int64_t p = 0; p < half.oh() * half.ow(); ++p)
        b.response.at(n, 0, f, p / half.ow(), p % half.ow()) =
            a.response.at(n, 0, f + half.f, p / half.ow(), p % half.ow());
  }
  _mlir_ciface_remat_conv2d_filter_grad_f32(&a.image.view, &a.filter.view,
                                            &a.response.view, 1, 1, 1, 1);
  _mlir_ciface_remat_conv2d_filter_grad_f32(&b.image.view, &b.filter.view,
                                            &b.response.view, 1, 1, 1, 1);
  for (int64_t f = 0; f < half.f; ++f)
    for (int64_t c = 0; c < half.c * half.kh * half.kw; ++c) {
      float got = a.filter.at(0, f + half.f, c / 9, c / 3 % 3, c % 3);
      float want = b.filter.at(0, f, c / 9, c / 3 % 3, c % 3);
      ASSERT_EQ(std::memcmp(&got, &want, sizeof(float)), 0)
          << "filter " << f + half.f << " tap " << c;
    }
}

TEST(ConvTest, OneByOneInPlace) {
  checkKernels({2, 1, 16, 8, 5, 6, 1, 1, 1, 1, 1, 1}, false);
  // A strided 1x1 filter takes im2col tiles.
  checkKernels({2, 1, 16, 8, 9, 9, 1, 1, 2, 2, 1, 1}, false);
}

TEST(ConvTest, DepthwiseTakesDirectLoops) {
  checkKernels({2, 6, 1, 1, 9, 8, 3, 3, 1, 2, 1, 1}, false);
}

TEST(ConvTest, DirectFilterGradRoundsOnce) {
  // A depthwise 1x1 filter's gradient sums 2 x 256 x 256 products of 0.1f
  // and 1: the direct loop adds them in double and rounds once, to the
  // float nearest 131072 * 0.1f; a float chain ends 1e-3 (relative) off.
  Shape s{2, 2, 1, 1, 256, 256, 1, 1, 1, 1, 1, 1};
  Operands o = makeOperands(s, {0, 1, 2, 3, 4}, {0, 1, 2, 3, 4});
  std::fill(o.image.data.begin(), o.image.data.end(), 0.1f);
  std::fill(o.response.data.begin(), o.response.data.end(), 1.0f);
  _mlir_ciface_remat_conv2d_filter_grad_f32(
      &o.image.view, &o.filter.view, &o.response.view, s.strideH, s.strideW,
      s.dilationH, s.dilationW);
  float expected = float(131072.0 * double(0.1f));
  EXPECT_EQ(o.filter.at(0, 0, 0, 0, 0), expected);
  EXPECT_EQ(o.filter.at(1, 0, 0, 0, 0), expected);
}

TEST(ConvTest, SingleOutputOrInputChannel) {
  checkKernels({2, 1, 1, 16, 6, 6, 3, 3, 1, 1, 1, 1}, false);
  checkKernels({2, 1, 16, 1, 6, 6, 3, 3, 1, 1, 1, 1}, false);
}

TEST(ConvTest, LayoutsSgemmCannotRead) {
  // A filter stored [KW, KH, C, F, G] and a response stored with its pixels
  // outermost: the direct loops serve them.
  checkKernels({2, 1, 8, 4, 7, 7, 3, 3, 1, 1, 1, 1}, false, {4, 3, 2, 1, 0},
               {3, 4, 0, 1, 2});
}

TEST(ConvTest, IntegerSumsAreExact) {
  checkKernels({2, 2, 8, 6, 10, 10, 3, 3, 1, 1, 1, 1}, true);
  checkKernels({2, 4, 1, 1, 10, 10, 3, 3, 1, 1, 1, 1}, true);
  // Rows of 18 pixels and 36 taps: on the native GEMM a filter gradient's
  // tiles take a transposed 16 x 16 block per 16 taps and 16 pixels, and
  // the 2 pixels and 4 taps left element by element.
  checkKernels({2, 1, 8, 4, 20, 20, 3, 3, 1, 1, 1, 1}, true);
}

/// Runs both kernels on the same random operands with the pool at 1, 2 and
/// 3 threads: the responses and filters must match byte for byte.
void checkThreadsBitIdentical(const Shape &s,
                              std::array<int, 5> filterOrder = {0, 1, 2, 3, 4},
                              std::array<int, 5> responseOrder = {0, 1, 2, 3,
                                                                  4}) {
  std::vector<float> firstResponse, firstFilter;
  for (unsigned threads : {1u, 2u, 3u}) {
    remat::runtime::setPoolThreads(threads);
    std::mt19937 rng(s.n * 7 + s.f);
    Operands o = makeOperands(s, filterOrder, responseOrder);
    o.image.fill(rng, false);
    o.filter.fill(rng, false);
    o.response.fill(rng, false);
    _mlir_ciface_remat_conv2d_f32(&o.image.view, &o.filter.view,
                                  &o.response.view, s.strideH, s.strideW,
                                  s.dilationH, s.dilationW);
    _mlir_ciface_remat_conv2d_filter_grad_f32(
        &o.image.view, &o.filter.view, &o.response.view, s.strideH, s.strideW,
        s.dilationH, s.dilationW);
    if (threads == 1) {
      firstResponse = o.response.data;
      firstFilter = o.filter.data;
      continue;
    }
    ASSERT_EQ(std::memcmp(firstResponse.data(), o.response.data.data(),
                          firstResponse.size() * sizeof(float)),
              0)
        << "response at " << threads << " threads";
    ASSERT_EQ(std::memcmp(firstFilter.data(), o.filter.data.data(),
                          firstFilter.size() * sizeof(float)),
              0)
        << "filter at " << threads << " threads";
  }
  remat::runtime::setPoolThreads(1);
}

TEST(ConvTest, ThreadsBitIdentical) {
  // Im2col tiles: several images, several pixel tiles and tap tiles.
  checkThreadsBitIdentical({3, 1, 5, 64, 42, 42, 3, 3, 1, 1, 1, 1});
  // Groups, strides and dilations; one image.
  checkThreadsBitIdentical({1, 3, 4, 5, 13, 11, 3, 2, 2, 3, 2, 1});
  // 1x1 filters read in place, large enough that the GEMMs split in blocks.
  checkThreadsBitIdentical({2, 1, 96, 160, 16, 16, 1, 1, 1, 1, 1, 1});
  checkThreadsBitIdentical({1, 1, 256, 128, 24, 24, 1, 1, 1, 1, 1, 1});
  // Response tiles of whole panels and a last partial one.
  checkThreadsBitIdentical({2, 1, 9, 64, 30, 30, 3, 3, 1, 1, 1, 1});
  // A filter gradient of few tap tiles, its units parts of the filter rows.
  checkThreadsBitIdentical({2, 1, 512, 16, 12, 12, 3, 3, 1, 1, 1, 1});
  // Depthwise filters and layouts sgemm cannot read: the direct loops.
  checkThreadsBitIdentical({2, 6, 1, 1, 9, 8, 3, 3, 1, 2, 1, 1});
  checkThreadsBitIdentical({2, 1, 8, 4, 7, 7, 3, 3, 1, 1, 1, 1},
                           {4, 3, 2, 1, 0}, {3, 4, 0, 1, 2});
}

TEST(ConvTest, EmptyExtentsDoNothing) {
  Shape s{0, 1, 4, 3, 5, 5, 3, 3, 1, 1, 1, 1};
  Operands o = makeOperands(s, {0, 1, 2, 3, 4}, {0, 1, 2, 3, 4});
  _mlir_ciface_remat_conv2d_f32(&o.image.view, &o.filter.view, &o.response.view,
                                1, 1, 1, 1);
  _mlir_ciface_remat_conv2d_filter_grad_f32(&o.image.view, &o.filter.view,
                                            &o.response.view, 1, 1, 1, 1);
  for (float value : o.filter.data)
    EXPECT_EQ(value, 0.0f);
}

TEST(ConvDeathTest, WindowPastTheImageExits) {
  Shape s{1, 1, 2, 2, 5, 5, 3, 3, 1, 1, 1, 1};
  Operands o = makeOperands(s, {0, 1, 2, 3, 4}, {0, 1, 2, 3, 4});
  EXPECT_EXIT(_mlir_ciface_remat_conv2d_f32(&o.image.view, &o.filter.view,
                                            &o.response.view, 2, 1, 1, 1),
              testing::ExitedWithCode(2),
              "remat_conv2d_f32: the window reads past the image");
}

} // namespace
