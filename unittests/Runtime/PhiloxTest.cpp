//===- PhiloxTest.cpp - Philox4x32-10 known answers -----------------------===//
//
// Checks remat's Philox4x32-10 against the known-answer vectors published
// with Random123 (Salmon et al., SC'11), and the element/offset convention of
// remat.philox_uniform on top of it.
//
//===----------------------------------------------------------------------===//

#include "Philox.h"

#include "gtest/gtest.h"

#include <array>
#include <cmath>

namespace {

struct KnownAnswer {
  std::array<uint32_t, 4> counter;
  std::array<uint32_t, 2> key;
  std::array<uint32_t, 4> expected;
};

// Random123's kat_vectors, philox4x32 with 10 rounds.
constexpr KnownAnswer kKnownAnswers[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
     {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(PhiloxTest, MatchesRandom123KnownAnswers) {
  for (const KnownAnswer &answer : kKnownAnswers) {
    std::array<uint32_t, 4> counter = answer.counter;
    remat_philox4x32_10(counter.data(), answer.key.data());
    EXPECT_EQ(counter, answer.expected);
  }
}

// Word i of the stream of seed s is word i mod 4 of block i div 4 under key
// (lo32(s), hi32(s)): the first known answer is the stream of seed 0.
TEST(PhiloxTest, StreamWordsFollowTheConvention) {
  for (uint64_t i = 0; i < 4; ++i)
    EXPECT_EQ(remat_philox_word(0, i), kKnownAnswers[0].expected[i]);

  const uint64_t seed = 0x299f31d0a4093822ull;
  // Below 2^62, so that the word index block * 4 + i does not wrap.
  const uint64_t block = 0x05a308d3243f6a88ull;
  std::array<uint32_t, 4> counter = {uint32_t(block), uint32_t(block >> 32), 0,
                                     0};
  const uint32_t key[2] = {uint32_t(seed), uint32_t(seed >> 32)};
  remat_philox4x32_10(counter.data(), key);
  for (uint64_t i = 0; i < 4; ++i)
    EXPECT_EQ(remat_philox_word(seed, block * 4 + i), counter[i]);
}

// An offset shifts the stream: element j at offset o is element o + j at
// offset 0, so two ops whose offsets are 4-aligned and far enough apart
// never share bits.
TEST(PhiloxTest, OffsetShiftsTheStream) {
  for (uint64_t j = 0; j < 64; ++j)
    EXPECT_EQ(remat_philox_uniform_f32(42, 12, j),
              remat_philox_uniform_f32(42, 0, 12 + j));
}

TEST(PhiloxTest, FloatsAreTheTop24BitsInUnitInterval) {
  EXPECT_EQ(remat_philox_word_to_f32(0), 0.0f);
  EXPECT_EQ(remat_philox_word_to_f32(0xffffffffu),
            1.0f - std::ldexp(1.0f, -24));
  EXPECT_EQ(remat_philox_word_to_f32(0x00000100u), std::ldexp(1.0f, -24));
  EXPECT_EQ(remat_philox_word_to_f32(0x800000ffu), 0.5f);
  double sum = 0;
  const int n = 1 << 16;
  for (int j = 0; j < n; ++j) {
    float u = remat_philox_uniform_f32(7, 0, j);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.01);
}

} // namespace
