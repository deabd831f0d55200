//===- SgemmTest.cpp - remat's own f32 GEMM
//--------------------------------===//
//
// Checks the native kernel against its definition: every element of C
// gets, block by block of k (getSgemmBlockDepth), the chain of fused
// multiply-adds over the block's steps in order from 0 (std::fma in float), bit
// for bit, over shapes that cross the register tile's edges and every cache
// block, and operands read as they are, transposed, strided and broadcast, or
// packed by the caller. On a host without AVX-512 the tests are skipped (the
// runtime calls BLAS there).
//
//===----------------------------------------------------------------------===//

#include "Sgemm.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace remat::runtime;

namespace {

/// A strided operand: element (i, l) at data[i * rowStride + l * colStride].
struct Operand {
  std::vector<float> data;
  int64_t rowStride, colStride;
  float at(int64_t i, int64_t l) const {
    return data[i * rowStride + l * colStride];
  }
};

enum class Form { Rows, Columns, Padded, Broadcast };

/// A rows x cols operand stored in `form`: row-major, column-major,
/// row-major with 3 floats of padding per row, or one row repeated.
Operand makeOperand(std::mt19937 &rng, int64_t rows, int64_t cols, Form form) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Operand op;
  switch (form) {
  case Form::Rows:
    op.rowStride = cols, op.colStride = 1;
    op.data.resize(rows * cols);
    break;
  case Form::Columns:
    op.rowStride = 1, op.colStride = rows;
    op.data.resize(rows * cols);
    break;
  case Form::Padded:
    op.rowStride = cols + 3, op.colStride = 1;
    op.data.resize(rows * (cols + 3));
    break;
  case Form::Broadcast:
    op.rowStride = 0, op.colStride = 1;
    op.data.resize(cols);
    break;
  }
  for (float &x : op.data)
    x = dist(rng);
  return op;
}

void checkProduct(int64_t m, int64_t n, int64_t k, Form aForm, Form bForm) {
  std::mt19937 rng(m * 131 + n * 7 + k);
  Operand a = makeOperand(rng, m, k, aForm), b = makeOperand(rng, k, n, bForm);
  // C with a row stride past n, whose padding must stay as it is.
  int64_t cStride = n + 5;
  std::vector<float> c(m * cStride);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float &x : c)
    x = dist(rng);
  std::vector<float> expected = c;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t depth = getSgemmBlockDepth(k);
      for (int64_t l0 = 0; l0 < k; l0 += depth) {
        float sum = 0.0f;
        for (int64_t l = l0; l < std::min(k, l0 + depth); ++l)
          sum = std::fma(a.at(i, l), b.at(l, j), sum);
        expected[i * cStride + j] += sum;
      }
    }
  std::vector<float> c0 = c;
  nativeSgemm(m, n, k, a.data.data(), a.rowStride, a.colStride, b.data.data(),
              b.rowStride, b.colStride, c.data(), cStride);
  ASSERT_EQ(std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)), 0)
      << m << "x" << n << "x" << k << " forms " << int(aForm) << ", "
      << int(bForm);
  // The same product from B packed by the caller; the padding columns hold
  // NaN, whose products must not reach C.
  std::vector<float> packed(getPackedFloats(k, n), std::nanf(""));
  for (int64_t l = 0; l < k; ++l)
    for (int64_t j = 0; j < n; ++j)
      packed[getPackedIndex(k, l, j)] = b.at(l, j);
  std::vector<float> c1 = c0;
  nativeSgemmPacked(m, n, k, a.data.data(), a.rowStride, a.colStride,
                    packed.data(), c0.data(), cStride);
  ASSERT_EQ(std::memcmp(c0.data(), expected.data(), c.size() * sizeof(float)),
            0)
      << m << "x" << n << "x" << k << " packed, A form " << int(aForm);
  // And with A packed too, its rows cut at a multiple of 8 as a caller's
  // threads may cut them.
  std::vector<float> aPacked(getPackedAFloats(m, k));
  packSgemmA(m, k, a.data.data(), a.rowStride, a.colStride, aPacked.data());
  int64_t cut = m / 16 * 8;
  nativeSgemmPrepacked(cut, n, k, aPacked.data(), packed.data(), c1.data(),
                       cStride);
  nativeSgemmPrepacked(m - cut, n, k, aPacked.data() + cut * k, packed.data(),
                       c1.data() + cut * cStride, cStride);
  ASSERT_EQ(std::memcmp(c1.data(), expected.data(), c.size() * sizeof(float)),
            0)
      << m << "x" << n << "x" << k << " prepacked, A form " << int(aForm);
}

class SgemmTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!hasNativeSgemm())
      GTEST_SKIP() << "no AVX-512 on this host (or REMAT_GEMM=blas)";
  }
};

TEST_F(SgemmTest, FusedMultiplyAddsPerKBlock) {
  // Whole tiles, row and column edges, and one element.
  checkProduct(8, 32, 5, Form::Rows, Form::Rows);
  checkProduct(17, 45, 9, Form::Rows, Form::Rows);
  checkProduct(3, 7, 1, Form::Rows, Form::Rows);
  checkProduct(1, 1, 13, Form::Rows, Form::Rows);
  // Past each cache block: k over 256 (600 is 200 + 200 + 200; 288 is 144
  // + 144), rows over 256, columns over 2048.
  checkProduct(20, 40, 600, Form::Rows, Form::Rows);
  checkProduct(32, 64, 288, Form::Rows, Form::Rows);
  checkProduct(270, 33, 20, Form::Rows, Form::Rows);
  checkProduct(9, 2100, 3, Form::Rows, Form::Rows);
}

TEST_F(SgemmTest, EveryOperandForm) {
  for (Form aForm : {Form::Rows, Form::Columns, Form::Padded, Form::Broadcast})
    for (Form bForm :
         {Form::Rows, Form::Columns, Form::Padded, Form::Broadcast})
      checkProduct(19, 37, 41, aForm, bForm);
  // Whole panels packed a vector at a time: 16 steps of k at once through
  // an in-register transpose, and a k block (150 + 150) that does not end
  // on 16, with the operands' edges and remainders around them.
  for (Form aForm : {Form::Rows, Form::Columns, Form::Padded, Form::Broadcast})
    for (Form bForm :
         {Form::Rows, Form::Columns, Form::Padded, Form::Broadcast})
      checkProduct(40, 70, 300, aForm, bForm);
}

TEST_F(SgemmTest, EmptyExtentsLeaveC) {
  float c = 2.0f, a = 3.0f, b = 5.0f;
  nativeSgemm(1, 1, 0, &a, 1, 1, &b, 1, 1, &c, 1);
  nativeSgemm(0, 1, 1, &a, 1, 1, &b, 1, 1, &c, 1);
  EXPECT_EQ(c, 2.0f);
}

} // namespace
