//===- TestTrials.h - How many random instances a test checks ---*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
//
// The property tests compare the planners against brute force on random
// instances. Under AddressSanitizer each instance runs about ten times
// slower, and the sanitized build is there to find memory and undefined-
// behaviour errors on the code paths, which the first instances of every
// shape already reach: it checks one in eight of them. The plain build checks
// all of them.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_UNITTESTS_TESTTRIALS_H
#define REMAT_UNITTESTS_TESTTRIALS_H

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REMAT_TEST_SANITIZED 1
#endif
#endif
#if !defined(REMAT_TEST_SANITIZED) && defined(__SANITIZE_ADDRESS__)
#define REMAT_TEST_SANITIZED 1
#endif

namespace remat::test {

/// The share of a test's random instances this build checks.
#ifdef REMAT_TEST_SANITIZED
inline constexpr int kTrialDivisor = 8;
#else
inline constexpr int kTrialDivisor = 1;
#endif

/// The number of instances to check out of `trials` (at least one).
constexpr int scaledTrials(int trials) {
  return trials / kTrialDivisor > 0 ? trials / kTrialDivisor : 1;
}

} // namespace remat::test

#endif // REMAT_UNITTESTS_TESTTRIALS_H
