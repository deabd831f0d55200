/*===- Philox.h - Philox4x32-10 counter-based generator ------------*- C -*-===*
 *
 * The reference implementation of remat's random numbers, shared by the C
 * runtime, the unit tests that check lowered code against it and, being
 * header-only and free of libc, CUDA device code.
 *
 * The convention, which the lowering and every runtime follow: element j of
 * `remat.philox_uniform` with seed s and offset o takes word (o + j) mod 4 of
 * Philox4x32-10 with key (lo32(s), hi32(s)) and counter (lo32(c), hi32(c), 0,
 * 0), c = (o + j) div 4; a word x becomes the f32 (x >> 8) * 2^-24 in [0, 1).
 *
 *===----------------------------------------------------------------------===*/

#ifndef REMAT_RUNTIME_PHILOX_H
#define REMAT_RUNTIME_PHILOX_H

#include <stdint.h>

#if defined(__CUDACC__)
#define REMAT_PHILOX_FN static inline __host__ __device__
#else
#define REMAT_PHILOX_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Multipliers and Weyl key increments of Philox4x32 (Salmon et al.). */
#define REMAT_PHILOX_M0 0xD2511F53u
#define REMAT_PHILOX_M1 0xCD9E8D57u
#define REMAT_PHILOX_W0 0x9E3779B9u
#define REMAT_PHILOX_W1 0xBB67AE85u
#define REMAT_PHILOX_ROUNDS 10

/* Philox4x32 with 10 rounds: encrypts `ctr` under `key`, in place. */
REMAT_PHILOX_FN void remat_philox4x32_10(uint32_t ctr[4],
                                         const uint32_t key[2]) {
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < REMAT_PHILOX_ROUNDS; ++round) {
    uint64_t p0 = (uint64_t)REMAT_PHILOX_M0 * ctr[0];
    uint64_t p1 = (uint64_t)REMAT_PHILOX_M1 * ctr[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t c1 = ctr[1], c3 = ctr[3];
    ctr[0] = hi1 ^ c1 ^ k0;
    ctr[1] = lo1;
    ctr[2] = hi0 ^ c3 ^ k1;
    ctr[3] = lo0;
    k0 += REMAT_PHILOX_W0;
    k1 += REMAT_PHILOX_W1;
  }
}

/* The 32-bit word at position `index` of the stream of `seed`. */
REMAT_PHILOX_FN uint32_t remat_philox_word(uint64_t seed, uint64_t index) {
  uint64_t block = index >> 2;
  uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), 0u, 0u};
  remat_philox4x32_10(ctr, key);
  return ctr[index & 3];
}

/* A word as a float in [0, 1) with 24 random bits, exactly representable. */
REMAT_PHILOX_FN float remat_philox_word_to_f32(uint32_t word) {
  return (float)(word >> 8) * (1.0f / 16777216.0f);
}

/* Element `j` of `remat.philox_uniform %seed, %offset` as an f32. */
REMAT_PHILOX_FN float remat_philox_uniform_f32(uint64_t seed, uint64_t offset,
                                               uint64_t j) {
  return remat_philox_word_to_f32(remat_philox_word(seed, offset + j));
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* REMAT_RUNTIME_PHILOX_H */
