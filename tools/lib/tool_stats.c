/*
 * tool_stats.c: mean, standard deviation and the 95% confidence interval
 * of the mean (tool_stats.h).
 */
#include "tool_stats.h"

#include <math.h>

/* t(0.975, df) for df = 1..30. */
static const double t975_table[30] = {
    12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
    2.446911851,  2.364624252, 2.306004135, 2.262157163, 2.228138852,
    2.200985160,  2.178812830, 2.160368656, 2.144786688, 2.131449546,
    2.119905299,  2.109815578, 2.100922040, 2.093024054, 2.085963447,
    2.079613845,  2.073873068, 2.068657610, 2.063898562, 2.059538553,
    2.055529439,  2.051830516, 2.048407142, 2.045229642, 2.042272456};

double tool_t975(size_t df) {
  /* The normal quantile z(0.975) and Cornish-Fisher's terms in 1/df
     (Abramowitz and Stegun 26.7.5). */
  const double z = 1.959963984540054;
  double z2 = z * z, d = (double)df, g1, g2, g3, g4;

  if (df == 0) {
    return NAN;
  }
  if (df <= 30) {
    return t975_table[df - 1];
  }
  g1 = (z2 + 1) * z / 4;
  g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
  g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
  g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
  return z + g1 / d + g2 / (d * d) + g3 / (d * d * d) + g4 / (d * d * d * d);
}

tool_stats tool_stats_of(const double *v, size_t n, size_t stride) {
  tool_stats s;
  double sum = 0, ss = 0;
  size_t i;

  s.n = 0;
  s.mean = s.sd = s.ci95 = s.min = s.max = NAN;
  for (i = 0; i < n; ++i) {
    double x = v[i * stride];
    if (x != x) {
      continue;
    }
    if (s.n == 0 || x < s.min) {
      s.min = x;
    }
    if (s.n == 0 || x > s.max) {
      s.max = x;
    }
    sum += x;
    ++s.n;
  }
  if (s.n == 0) {
    return s;
  }
  s.mean = sum / (double)s.n;
  if (s.n < 2) {
    return s;
  }
  /* Two passes: the deviations from the mean, not sum(x^2) - n*mean^2,
     which cancels catastrophically for figures like 0.951 +- 1e-4. */
  for (i = 0; i < n; ++i) {
    double x = v[i * stride];
    if (x == x) {
      ss += (x - s.mean) * (x - s.mean);
    }
  }
  s.sd = sqrt(ss / (double)(s.n - 1));
  s.ci95 = tool_t975(s.n - 1) * s.sd / sqrt((double)s.n);
  return s;
}
