/* tolerance.c — the tier-2 tolerance of a decoder's outputs (docs/verification.md). */
#include <math.h>

#include "poot/llm/verify.h"

double poot_verify_tolerance(const poot_model_config *c, int64_t cap, const float *values,
                             int64_t n, bool with_classifier) {
  const double lambda = 6.0, kappa = 8.0, u = 0x1p-24;
  int64_t hd = c->head_dim ? c->head_dim : (c->n_heads ? c->hidden_size / c->n_heads : 0);
  double h = (double)c->hidden_size, d = (double)hd, f = (double)c->intermediate_size;
  double per_layer = 4 * h + d + 2 * (double)cap + (double)c->n_heads * d + f;
  double sum = (double)c->n_layers * per_layer + (with_classifier ? 2 * h : h);
  double rms = 0;
  if (values && n > 0) {
    for (int64_t i = 0; i < n; i++)
      if (isfinite(values[i])) rms += (double)values[i] * (double)values[i];
    rms = sqrt(rms / (double)n);
  }
  double eps = lambda * u * sqrt(2 * sum);
  return kappa * eps * (rms > 1 ? rms : 1);
}

double poot_verify_kv16_term(const float *l16, const float *l32, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(l16[i]) && isfinite(l32[i]) && fabs((double)l16[i] - (double)l32[i]) > worst)
      worst = fabs((double)l16[i] - (double)l32[i]);
  return 2 * worst;
}
