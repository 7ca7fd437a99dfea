/* vmath.h -- exp, expm1, tanh and softplus written so gcc vectorises loops
 * that call them (no libm calls, no branches: both sides computed and
 * blended). libm's scalar tanh/exp were 40% of a small MLP's training step;
 * libm's log1p and exp in softplus were 37% of a MeshfreeFlowNet swap run.
 * Accuracy (double): a few ulp; the f64 gradient checks hold to 1e-10. */
#ifndef SGNN_VMATH_H
#define SGNN_VMATH_H
#include <stdint.h>
#include <string.h>

/* exp(x) for x clamped to [-708, 708]: x = n ln2 + r, |r| <= ln2/2,
 * Taylor to r^13 (remainder < 4e-18 relative), 2^n built in the exponent */
static inline double sg_exp(double x)
{
  x = x < -708.0 ? -708.0 : (x > 708.0 ? 708.0 : x);
  /* round to nearest with the 1.5*2^52 trick: no libm call, vectorises;
   * the low bits of t then hold n as a two's-complement integer */
  double t = x * 1.4426950408889634 + 0x1.8p52;
  double n = t - 0x1.8p52;
  int64_t ti;
  memcpy(&ti, &t, 8);
  double r = x - n * 0.6931471803691238 - n * 1.9082149292705877e-10;
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  /* unsigned: a NaN input (x86's default NaN has the sign bit set) makes ti negative, and a left
   * shift of a negative signed value is undefined behaviour; the result is NaN either way */
  uint64_t e = ((uint64_t)ti - 0x4338000000000000ULL + 1023u) << 52;
  double s;
  memcpy(&s, &e, 8);
  return p * s;
}

/* expm1 without cancellation near 0: series for |x| < 0.5, exp - 1 beyond */
static inline double sg_expm1(double x)
{
  double q = 1.0 / 1307674368000.0; /* 1/15! */
  q = q * x + 1.0 / 87178291200.0;
  q = q * x + 1.0 / 6227020800.0;
  q = q * x + 1.0 / 479001600.0;
  q = q * x + 1.0 / 39916800.0;
  q = q * x + 1.0 / 3628800.0;
  q = q * x + 1.0 / 362880.0;
  q = q * x + 1.0 / 40320.0;
  q = q * x + 1.0 / 5040.0;
  q = q * x + 1.0 / 720.0;
  q = q * x + 1.0 / 120.0;
  q = q * x + 1.0 / 24.0;
  q = q * x + 1.0 / 6.0;
  q = q * x + 0.5;
  q = q * x + 1.0;
  q = q * x;
  double big = sg_exp(x) - 1.0;
  return (x < 0.5 && x > -0.5) ? q : big;
}

/* tanh(x) = expm1(2x) / (expm1(2x) + 2), odd-symmetric, saturated at |x|>20 */
static inline double sg_tanh(double x)
{
  double a = x < 0 ? -x : x;
  a = a > 20.0 ? 20.0 : a;
  double e = sg_expm1(2.0 * a);
  double t = e / (e + 2.0);
  return x < 0 ? -t : t;
}

static inline double sg_sigmoid(double x) { return 1.0 / (1.0 + sg_exp(-x)); }

/* log1p(u) for u in [0, 1]: y = 1 + u rounded, c = u - (y - 1) its rounding
 * error (exact: |u| <= 1), y = 2^k m with m in [sqrt(2)/2, sqrt(2)], k in
 * {0, 1}; log m = 2 atanh(s), s = (m - 1)/(m + 1), |s| <= 0.1716, by its odd
 * series to s^21 (remainder < 2e-17 relative); log1p(u) = k ln2 + log m + c/y */
static inline double sg_log1p01(double u)
{
  double y = 1.0 + u, c = u - (y - 1.0);
  double k = y > 1.4142135623730951 ? 1.0 : 0.0;
  double m = y > 1.4142135623730951 ? 0.5 * y : y;
  double f = m - 1.0, s = f / (2.0 + f), z = s * s;
  double p = 1.0 / 21.0; /* 1/3 + z/5 + z^2/7 + ... + z^9/21 by Horner (unrolled, folded by gcc) */
  for (int k = 19; k >= 3; k -= 2) p = p * z + 1.0 / k;
  /* log m = 2s + 2s z p: the leading 2s = f - s f kept apart from the small tail */
  double lm = f - s * f + 2.0 * s * z * p;
  return k * 0.6931471803691238 + (lm + (k * 1.9082149292705877e-10 + c / y));
}

/* softplus(x) = log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow, no
 * cancellation; 0 below x = -708 (sg_exp's clamp; the true value < 4e-308) */
static inline double sg_softplus(double x)
{
  double a = x < 0 ? -x : x, e = sg_exp(-a);
  return (x > 0 ? x : 0.0) + sg_log1p01(a > 708.0 ? 0.0 : e);
}
#endif
