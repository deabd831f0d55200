//===- HalfGemmTest.cpp - GEMMs of 2-byte operands ------------------------===//
//
// Checks the widening of bfloat16 and float16 bits to float32 (HalfFloat.h)
// against the definition of each format on every bit pattern, and that the
// runtime's bf16 and f16 matmul entries, which widen their operands as the
// GEMM packs them, give C bit for bit what the f32 entry gives on float32
// copies of the operands: over operand layouts (row-major, transposed,
// padded, broadcast), shapes that the runtime cuts by rows, by columns and
// along k, batches, special values, and 1 and 2 threads; and that the bf16
// and f16 convolution kernels (forward and filter gradient) give the f32
// kernels' bits on float32 copies, over every path they take: im2col tiles
// (one, several pixel tiles, several tap tiles), 1x1 filters read in
// place, strides and dilations, depthwise filters (direct loops), and
// operands that are not dense (read through float32 copies).
//
//===----------------------------------------------------------------------===//

#include "DenseView.h"
#include "HalfFloat.h"
#include "RematRuntime.h"
#include "ThreadPool.h"

#include "gtest/gtest.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

using namespace remat::runtime;

namespace {

/// The float32 bits that binary16 bits denote, from the format's
/// definition: (-1)^s 2^(e - 15) (1 + m / 1024), subnormals m 2^-24,
/// infinities and NaNs with the same payload in float32's top mantissa bits.
uint32_t referenceF16Bits(uint16_t bits) {
  uint32_t sign = uint32_t(bits >> 15) << 31;
  int exponent = (bits >> 10) & 0x1f;
  int mantissa = bits & 0x3ff;
  if (exponent == 0x1f)
    return sign | 0x7f800000 | (uint32_t(mantissa) << 13);
  double magnitude = exponent == 0
                         ? std::ldexp(double(mantissa), -24)
                         : std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
  return sign | floatToBits(float(magnitude));
}

TEST(HalfFloatTest, WideningIsExactOnEveryPattern) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    ASSERT_EQ(floatToBits(f16ToFloat(uint16_t(bits))),
              referenceF16Bits(uint16_t(bits)))
        << "f16 bits 0x" << std::hex << bits;
    ASSERT_EQ(floatToBits(bf16ToFloat(uint16_t(bits))), bits << 16)
        << "bf16 bits 0x" << std::hex << bits;
  }
}

/// A 2-byte operand: element (i, l) at bits[offset + i * rowStride + l *
/// colStride].
struct HalfOperand {
  std::vector<uint16_t> bits;
  int64_t rows, cols, offset, rowStride, colStride;
};

enum class Form { Rows, Columns, Padded, Broadcast };

/// Finite 2-byte bits of moderate magnitude (some subnormal for f16), with
/// one in `specialOneIn` elements (none at 0) a special value: signed
/// zeros, the largest finite value, infinities, quiet and signaling NaNs.
uint16_t randomBits(std::mt19937 &rng, bool bf16, unsigned specialOneIn = 64) {
  static const uint16_t bf16Specials[] = {0x0000, 0x8000, 0x7f7f, 0xff7f,
                                          0x7f80, 0xff80, 0x7fc0, 0x7f81,
                                          0x0001, 0x8080};
  static const uint16_t f16Specials[] = {0x0000, 0x8000, 0x7bff, 0xfbff,
                                         0x7c00, 0xfc00, 0x7e00, 0x7c01,
                                         0x0001, 0x83ff};
  if (specialOneIn != 0 && rng() % specialOneIn == 0)
    return bf16 ? bf16Specials[rng() % 10] : f16Specials[rng() % 10];
  uint16_t sign = uint16_t(rng() % 2) << 15;
  if (bf16)
    return sign | uint16_t((115 + rng() % 20) << 7) | uint16_t(rng() % 128);
  return sign | uint16_t((rng() % 20) << 10) | uint16_t(rng() % 1024);
}

HalfOperand makeOperand(std::mt19937 &rng, int64_t rows, int64_t cols,
                        Form form, bool bf16) {
  HalfOperand op{{}, rows, cols, 3, cols, 1};
  int64_t stored = rows * cols;
  switch (form) {
  case Form::Rows:
    break;
  case Form::Columns:
    op.rowStride = 1, op.colStride = rows;
    break;
  case Form::Padded:
    op.rowStride = cols + 5;
    stored = rows * (cols + 5);
    break;
  case Form::Broadcast:
    op.rowStride = 0;
    stored = cols;
    break;
  }
  op.bits.resize(op.offset + stored);
  for (uint16_t &bits : op.bits)
    bits = randomBits(rng, bf16);
  return op;
}

template <typename T>
StridedMemRefType<T, 2> view(T *data, int64_t offset, int64_t rows,
                             int64_t cols, int64_t rowStride,
                             int64_t colStride) {
  StridedMemRefType<T, 2> result;
  result.basePtr = result.data = data;
  result.offset = offset;
  result.sizes[0] = rows, result.sizes[1] = cols;
  result.strides[0] = rowStride, result.strides[1] = colStride;
  return result;
}

/// The operand's float32 copy, row-major.
std::vector<float> widen(const HalfOperand &op, bool bf16) {
  std::vector<float> copy(op.rows * op.cols);
  for (int64_t i = 0; i < op.rows; ++i)
    for (int64_t l = 0; l < op.cols; ++l) {
      uint16_t bits = op.bits[op.offset + i * op.rowStride + l * op.colStride];
      copy[i * op.cols + l] = bf16 ? bf16ToFloat(bits) : f16ToFloat(bits);
    }
  return copy;
}

void checkProduct(int64_t m, int64_t n, int64_t k, Form aForm, Form bForm,
                  bool bf16) {
  std::mt19937 rng(m * 131 + n * 7 + k + bf16);
  HalfOperand a = makeOperand(rng, m, k, aForm, bf16),
              b = makeOperand(rng, k, n, bForm, bf16);
  std::vector<float> a32 = widen(a, bf16), b32 = widen(b, bf16);
  // C with a row stride past n, whose padding must stay as it is.
  int64_t cStride = n + 2;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> c0(m * cStride);
  for (float &x : c0)
    x = dist(rng);
  for (unsigned threads : {1u, 2u}) {
    setPoolThreads(threads);
    std::vector<float> expected = c0, c = c0;
    auto av32 = view(a32.data(), 0, m, k, k, 1);
    auto bv32 = view(b32.data(), 0, k, n, n, 1);
    auto cv = view(expected.data(), 0, m, n, cStride, 1);
    _mlir_ciface_remat_matmul_f32(&av32, &bv32, &cv);
    auto av = view(a.bits.data(), a.offset, m, k, a.rowStride, a.colStride);
    auto bv = view(b.bits.data(), b.offset, k, n, b.rowStride, b.colStride);
    cv = view(c.data(), 0, m, n, cStride, 1);
    if (bf16)
      _mlir_ciface_remat_matmul_bf16(&av, &bv, &cv);
    else
      _mlir_ciface_remat_matmul_f16(&av, &bv, &cv);
    ASSERT_EQ(std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)),
              0)
        << (bf16 ? "bf16 " : "f16 ") << m << "x" << n << "x" << k << " forms "
        << int(aForm) << ", " << int(bForm) << " at " << threads << " threads";
  }
  setPoolThreads(1);
}

TEST(HalfGemmTest, SameBitsAsFloatCopies) {
  for (bool bf16 : {true, false}) {
    for (Form aForm :
         {Form::Rows, Form::Columns, Form::Padded, Form::Broadcast})
      for (Form bForm :
           {Form::Rows, Form::Columns, Form::Padded, Form::Broadcast})
        checkProduct(19, 37, 41, aForm, bForm, bf16);
    // Cut by rows, by columns, along k (a small C, a long k), past the
    // kernel's k blocks and column blocks.
    checkProduct(1024, 96, 40, Form::Rows, Form::Columns, bf16);
    checkProduct(70, 2100, 24, Form::Columns, Form::Rows, bf16);
    checkProduct(48, 96, 1030, Form::Columns, Form::Rows, bf16);
    checkProduct(9, 40, 600, Form::Rows, Form::Padded, bf16);
  }
}

TEST(HalfGemmTest, BatchSameBitsAsFloatCopies) {
  for (bool bf16 : {true, false})
    // Few batches cut their matmuls into blocks, many take one thread each.
    for (int64_t batch : {2, 5}) {
      int64_t m = 260, n = 70, k = 130;
      std::mt19937 rng(batch + bf16);
      std::vector<uint16_t> a(batch * m * k), b(batch * n * k);
      for (uint16_t &bits : a)
        bits = randomBits(rng, bf16);
      for (uint16_t &bits : b)
        bits = randomBits(rng, bf16);
      std::vector<float> a32(a.size()), b32(b.size()),
          expected(batch * m * n, 0.5f), c = expected;
      for (size_t i = 0; i < a.size(); ++i)
        a32[i] = bf16 ? bf16ToFloat(a[i]) : f16ToFloat(a[i]);
      for (size_t i = 0; i < b.size(); ++i)
        b32[i] = bf16 ? bf16ToFloat(b[i]) : f16ToFloat(b[i]);
      // A row-major, B transposed (each batch's k x n stored n x k).
      auto view3 = [&](auto *data, int64_t rows, int64_t cols,
                       bool transposed) {
        StridedMemRefType<std::remove_pointer_t<decltype(data)>, 3> result;
        result.basePtr = result.data = data;
        result.offset = 0;
        result.sizes[0] = batch, result.sizes[1] = rows, result.sizes[2] = cols;
        result.strides[0] = rows * cols;
        result.strides[1] = transposed ? 1 : cols;
        result.strides[2] = transposed ? rows : 1;
        return result;
      };
      setPoolThreads(2);
      auto av32 = view3(a32.data(), m, k, false);
      auto bv32 = view3(b32.data(), k, n, true);
      auto cv = view3(expected.data(), m, n, false);
      _mlir_ciface_remat_batch_matmul_f32(&av32, &bv32, &cv);
      auto av = view3(a.data(), m, k, false);
      auto bv = view3(b.data(), k, n, true);
      cv = view3(c.data(), m, n, false);
      if (bf16)
        _mlir_ciface_remat_batch_matmul_bf16(&av, &bv, &cv);
      else
        _mlir_ciface_remat_batch_matmul_f16(&av, &bv, &cv);
      setPoolThreads(1);
      ASSERT_EQ(
          std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)), 0)
          << (bf16 ? "bf16" : "f16") << " batch " << batch;
    }
}

/// A rank-5 2-byte operand whose view lists its dimensions in memory from
/// `order`'s outermost to innermost (dense when `order` is 0, 1, 2, 3, 4),
/// one element past the start, and its float32 copy, row-major.
struct HalfTensor {
  std::vector<uint16_t> bits;
  StridedMemRefType<uint16_t, 5> view;
  std::vector<float> copy;
  StridedMemRefType<float, 5> copyView;

  HalfTensor(std::mt19937 &rng, std::array<int64_t, 5> sizes, bool bf16,
             std::array<int, 5> order = {0, 1, 2, 3, 4}) {
    int64_t count = 1;
    for (int64_t size : sizes)
      count *= size;
    bits.resize(count + 1);
    for (uint16_t &element : bits)
      element = randomBits(rng, bf16, /*specialOneIn=*/0);
    remat::test::setDenseView(view, bits.data(), /*offset=*/1, sizes, order);
    copy.resize(count);
    remat::test::setDenseView(copyView, copy.data(), /*offset=*/0, sizes);
    int64_t index = 0;
    for (int64_t a = 0; a < sizes[0]; ++a)
      for (int64_t b = 0; b < sizes[1]; ++b)
        for (int64_t c = 0; c < sizes[2]; ++c)
          for (int64_t d = 0; d < sizes[3]; ++d)
            for (int64_t e = 0; e < sizes[4]; ++e) {
              uint16_t element =
                  bits[view.offset + a * view.strides[0] + b * view.strides[1] +
                       c * view.strides[2] + d * view.strides[3] +
                       e * view.strides[4]];
              copy[index++] = bf16 ? bf16ToFloat(element) : f16ToFloat(element);
            }
  }
};

/// A dense f32 operand of random floats in [-1, 1).
struct FloatTensor {
  std::vector<float> data;
  StridedMemRefType<float, 5> view;

  FloatTensor(std::mt19937 &rng, std::array<int64_t, 5> sizes) {
    int64_t count = 1;
    for (int64_t size : sizes)
      count *= size;
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    data.resize(count);
    for (float &value : data)
      value = dist(rng);
    view.basePtr = view.data = data.data();
    view.offset = 0;
    int64_t stride = 1;
    for (int d = 4; d >= 0; --d) {
      view.sizes[d] = sizes[d];
      view.strides[d] = stride;
      stride *= sizes[d];
    }
  }
};

struct ConvShape {
  int64_t n, g, f, c, h, w, kh, kw, strideH, strideW, dilationH, dilationW;
  int64_t oh() const { return (h - dilationH * (kh - 1) - 1) / strideH + 1; }
  int64_t ow() const { return (w - dilationW * (kw - 1) - 1) / strideW + 1; }
};

/// The bf16 (or f16) forward and filter-gradient kernels against the f32
/// ones on the operands' float32 copies: the same bits. `imageOrder` lays
/// the image out in memory (not dense: the kernels read copies).
void checkConvolution(const ConvShape &s, bool bf16,
                      std::array<int, 5> imageOrder = {0, 1, 2, 3, 4}) {
  std::mt19937 rng(s.n * 131 + s.c * 17 + s.kh * 5 + s.h + bf16);
  std::array<int64_t, 5> imageSizes{s.n, s.g, s.c, s.h, s.w},
      filterSizes{s.g, s.f, s.c, s.kh, s.kw},
      responseSizes{s.n, s.g, s.f, s.oh(), s.ow()};
  HalfTensor image(rng, imageSizes, bf16, imageOrder),
      filter(rng, filterSizes, bf16), response(rng, responseSizes, bf16);
  FloatTensor output(rng, responseSizes), expected = output;
  expected.view.basePtr = expected.view.data = expected.data.data();
  setPoolThreads(2);
  _mlir_ciface_remat_conv2d_f32(&image.copyView, &filter.copyView,
                                &expected.view, s.strideH, s.strideW,
                                s.dilationH, s.dilationW);
  (bf16 ? _mlir_ciface_remat_conv2d_bf16 : _mlir_ciface_remat_conv2d_f16)(
      &image.view, &filter.view, &output.view, s.strideH, s.strideW,
      s.dilationH, s.dilationW);
  EXPECT_EQ(std::memcmp(output.data.data(), expected.data.data(),
                        output.data.size() * sizeof(float)),
            0)
      << (bf16 ? "bf16" : "f16") << " forward, " << s.c << " channels " << s.kh
      << "x" << s.kw;
  FloatTensor gradient(rng, filterSizes), expectedGradient = gradient;
  expectedGradient.view.basePtr = expectedGradient.view.data =
      expectedGradient.data.data();
  _mlir_ciface_remat_conv2d_filter_grad_f32(
      &image.copyView, &expectedGradient.view, &response.copyView, s.strideH,
      s.strideW, s.dilationH, s.dilationW);
  (bf16 ? _mlir_ciface_remat_conv2d_filter_grad_bf16
        : _mlir_ciface_remat_conv2d_filter_grad_f16)(
      &image.view, &gradient.view, &response.view, s.strideH, s.strideW,
      s.dilationH, s.dilationW);
  setPoolThreads(1);
  EXPECT_EQ(std::memcmp(gradient.data.data(), expectedGradient.data.data(),
                        gradient.data.size() * sizeof(float)),
            0)
      << (bf16 ? "bf16" : "f16") << " filter gradient, " << s.c << " channels "
      << s.kh << "x" << s.kw;
}

TEST(HalfConvTest, SameBitsAsFloatCopies) {
  for (bool bf16 : {true, false}) {
    // One im2col tile; several pixel tiles; several tap tiles (576 taps).
    checkConvolution({2, 1, 8, 4, 10, 10, 3, 3, 1, 1, 1, 1}, bf16);
    checkConvolution({1, 1, 8, 3, 64, 64, 3, 3, 1, 1, 1, 1}, bf16);
    checkConvolution({1, 1, 40, 64, 6, 6, 3, 3, 1, 1, 1, 1}, bf16);
    // A 1x1 filter read in place; groups, strides and dilations.
    checkConvolution({2, 1, 16, 8, 6, 6, 1, 1, 1, 1, 1, 1}, bf16);
    checkConvolution({2, 2, 8, 3, 11, 9, 3, 2, 2, 1, 1, 2}, bf16);
    // Depthwise filters: direct loops.
    checkConvolution({2, 4, 1, 1, 8, 8, 3, 3, 1, 1, 1, 1}, bf16);
    // A channels-last image, not dense.
    checkConvolution({2, 1, 8, 4, 10, 10, 3, 3, 1, 1, 1, 1}, bf16,
                     {0, 1, 3, 4, 2});
  }
}

} // namespace
