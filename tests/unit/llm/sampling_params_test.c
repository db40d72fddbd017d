/* Sampling parameters (src/llm/sampling/params.c): llama.cpp's defaults
 * (common/common.h, common_params_sampling), validation naming the field,
 * the kind bitmask, the seed, and the --logit-bias and stop-list parsers. */
#include "poot_test.h"

#include <math.h>

#include "poot/llm/sampling.h"

static void test_defaults(void **state) {
  (void)state;
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  assert_float_equal(p.temperature, 0.8f, 0);
  assert_int_equal(p.top_k, 40);
  assert_float_equal(p.top_p, 0.95f, 0);
  assert_float_equal(p.min_p, 0.05f, 0);
  assert_float_equal(p.typical_p, 1.0f, 0);
  assert_float_equal(p.repeat_penalty, 1.0f, 0);
  assert_int_equal(p.repeat_last_n, 64);
  assert_float_equal(p.presence_penalty, 0.0f, 0);
  assert_float_equal(p.frequency_penalty, 0.0f, 0);
  assert_true(p.seed == POOT_SAMPLING_SEED_RANDOM);
  assert_int_equal(p.n_probs, 0);
  assert_int_equal(p.max_tokens, -1);
  assert_false(p.ignore_eos);
  assert_int_equal(p.n_bias + p.n_stops + p.n_stop_ids, 0);
  POOT_ASSERT_OK(poot_sampling_params_validate(&p, 32000));
}

#define EXPECT_BAD(assign, field)                                                                  \
  do {                                                                                             \
    poot_sampling_params p;                                                                        \
    poot_sampling_params_init(&p);                                                                 \
    assign;                                                                                        \
    POOT_ASSERT_STATUS_MSG(poot_sampling_params_validate(&p, 1000), POOT_INVALID_ARGUMENT, field); \
  } while (0)

static void test_validate_names_the_field(void **state) {
  (void)state;
  EXPECT_BAD(p.temperature = -0.1f, "temperature = -0.1");
  EXPECT_BAD(p.temperature = NAN, "temperature");
  EXPECT_BAD(p.top_k = -1, "top_k = -1");
  EXPECT_BAD(p.top_k = POOT_SAMPLING_MAX_TOP_K + 1, "top_k = 1025: exceeds the capacity");
  EXPECT_BAD(p.top_p = 0.0f, "top_p = 0");
  EXPECT_BAD(p.top_p = 1.5f, "top_p = 1.5");
  EXPECT_BAD(p.min_p = -0.5f, "min_p");
  EXPECT_BAD(p.typical_p = 0.0f, "typical_p");
  EXPECT_BAD(p.repeat_penalty = 0.0f, "repeat_penalty");
  EXPECT_BAD(p.repeat_last_n = -2, "repeat_last_n");
  EXPECT_BAD(p.presence_penalty = INFINITY, "presence_penalty");
  EXPECT_BAD(p.frequency_penalty = NAN, "frequency_penalty");
  EXPECT_BAD(p.n_probs = 21, "n_probs = 21");
  EXPECT_BAD(p.max_tokens = -5, "max_tokens");
  EXPECT_BAD(p.n_bias = POOT_SAMPLING_MAX_BIAS + 1, "logit_bias has 301 entries");
  EXPECT_BAD((p.n_bias = 1, p.bias[0].token = 1000), "logit_bias[0] = token 1000");
  EXPECT_BAD((p.n_bias = 1, p.bias[0].bias = INFINITY), "logit_bias[0]");
  EXPECT_BAD(p.n_stops = 1, "stop[0] has 0 bytes");
  EXPECT_BAD(p.n_stops = POOT_SAMPLING_MAX_STOPS + 1, "stop has 17 strings");
  EXPECT_BAD((p.n_stop_ids = 1, p.stop_ids[0] = -3), "stop_ids[0] = token -3");
  EXPECT_BAD(p.n_stop_ids = POOT_SAMPLING_MAX_STOP_IDS + 1, "stop_ids has 17");
  /* The edges that are allowed. */
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  p.temperature = 0.0f, p.top_k = 0, p.top_p = 1.0f, p.min_p = 1.0f, p.typical_p = 1.0f;
  p.repeat_last_n = -1, p.n_probs = 20, p.top_k = POOT_SAMPLING_MAX_TOP_K;
  POOT_ASSERT_OK(poot_sampling_params_validate(&p, 0));
}

static void test_kind(void **state) {
  (void)state;
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  const uint32_t defaults =
      POOT_SAMPLER_DRAW | POOT_SAMPLER_TOP_K | POOT_SAMPLER_TOP_P | POOT_SAMPLER_MIN_P;
  assert_int_equal(poot_sampling_params_kind(&p), defaults);
  /* Values never change the kind. */
  p.temperature = 1.7f, p.top_k = 3, p.top_p = 0.5f, p.min_p = 0.3f, p.seed = 9;
  POOT_ASSERT_OK(poot_sampling_add_stop(&p, "x", 1));
  p.max_tokens = 5;
  assert_int_equal(poot_sampling_params_kind(&p), defaults);
  p.repeat_penalty = 1.1f;
  assert_int_equal(poot_sampling_params_kind(&p), defaults | POOT_SAMPLER_PENALTIES);
  p.repeat_penalty = 1.3f, p.frequency_penalty = 0.2f;
  assert_int_equal(poot_sampling_params_kind(&p), defaults | POOT_SAMPLER_PENALTIES);
  p.repeat_last_n = 0;
  assert_int_equal(poot_sampling_params_kind(&p), defaults);
  POOT_ASSERT_OK(poot_sampling_parse_logit_bias(&p, "5+1"));
  p.typical_p = 0.9f, p.n_probs = 5;
  assert_int_equal(poot_sampling_params_kind(&p), defaults | POOT_SAMPLER_LOGIT_BIAS |
                                                      POOT_SAMPLER_TYPICAL_P |
                                                      POOT_SAMPLER_LOGPROBS);
  /* Greedy: the truncations cannot change an argmax. */
  p.temperature = 0.0f;
  assert_int_equal(poot_sampling_params_kind(&p), POOT_SAMPLER_LOGIT_BIAS | POOT_SAMPLER_LOGPROBS);
}

static void test_seed(void **state) {
  (void)state;
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  uint64_t a = 0, b = 0;
  POOT_ASSERT_OK(poot_sampling_seed_resolve(&p, &a));
  POOT_ASSERT_OK(poot_sampling_seed_resolve(&p, &b));
  assert_true(a != POOT_SAMPLING_SEED_RANDOM);
  assert_true(a != b); /* 2^-64 to fail */
  p.seed = 31337;
  POOT_ASSERT_OK(poot_sampling_seed_resolve(&p, &a));
  assert_true(a == 31337);
}

static void test_parse_logit_bias(void **state) {
  (void)state;
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  POOT_ASSERT_OK(poot_sampling_parse_logit_bias(&p, "15043+1"));
  POOT_ASSERT_OK(poot_sampling_parse_logit_bias(&p, "15043-1"));
  POOT_ASSERT_OK(poot_sampling_parse_logit_bias(&p, "2-inf"));
  POOT_ASSERT_OK(poot_sampling_parse_logit_bias(&p, "0+0.25"));
  assert_int_equal(p.n_bias, 4);
  assert_int_equal(p.bias[0].token, 15043);
  assert_float_equal(p.bias[0].bias, 1.0f, 0);
  assert_float_equal(p.bias[1].bias, -1.0f, 0);
  assert_true(p.bias[2].token == 2 && p.bias[2].bias == -INFINITY);
  assert_true(p.bias[3].token == 0 && p.bias[3].bias == 0.25f);
  const char *bad[] = {"",    "abc",   "15043", "15043*1", "+1",   "-1+1", "1+",
                       "1+x", "1+inf", "1+nan", "1+2x",    " 1+2", "1+-2", "99999999999+1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    POOT_ASSERT_STATUS_MSG(poot_sampling_parse_logit_bias(&p, bad[i]), POOT_INVALID_ARGUMENT,
                           "TOKEN_ID(+|-)BIAS");
  assert_int_equal(p.n_bias, 4);
  p.n_bias = POOT_SAMPLING_MAX_BIAS;
  POOT_ASSERT_STATUS_MSG(poot_sampling_parse_logit_bias(&p, "1+1"), POOT_INVALID_ARGUMENT, "full");
  /* ban_ids appends -inf once per id. */
  p.n_bias = 0;
  const int32_t eog[] = {2, 7, 2};
  POOT_ASSERT_OK(poot_sampling_params_ban_ids(&p, eog, 3));
  assert_int_equal(p.n_bias, 2);
  assert_true(p.bias[1].token == 7 && p.bias[1].bias == -INFINITY);
}

static void test_parse_stop_list(void **state) {
  (void)state;
  poot_sampling_params p;
  poot_sampling_params_init(&p);
  POOT_ASSERT_OK(poot_sampling_parse_stop_list(&p, "User:,a\\,b,\\n\\n,x\\\\"));
  assert_int_equal(p.n_stops, 4);
  assert_string_equal(p.stops[0].text, "User:");
  assert_string_equal(p.stops[1].text, "a,b");
  assert_string_equal(p.stops[2].text, "\n\n");
  assert_int_equal(p.stops[2].len, 2);
  assert_string_equal(p.stops[3].text, "x\\");
  const char *bad[] = {"", "a,,b", "a,", ",a", "\\q", "a\\"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    POOT_ASSERT_STATUS(poot_sampling_parse_stop_list(&p, bad[i]), POOT_INVALID_ARGUMENT);
    assert_int_equal(p.n_stops, 4); /* a failed parse adds nothing */
  }
  char longest[POOT_SAMPLING_MAX_STOP_LEN + 2];
  memset(longest, 'z', sizeof longest);
  longest[POOT_SAMPLING_MAX_STOP_LEN] = '\0';
  POOT_ASSERT_OK(poot_sampling_parse_stop_list(&p, longest));
  longest[POOT_SAMPLING_MAX_STOP_LEN] = 'z';
  longest[POOT_SAMPLING_MAX_STOP_LEN + 1] = '\0';
  POOT_ASSERT_STATUS_MSG(poot_sampling_parse_stop_list(&p, longest), POOT_INVALID_ARGUMENT,
                         "longer than 127");
  p.n_stops = POOT_SAMPLING_MAX_STOPS - 1;
  POOT_ASSERT_STATUS_MSG(poot_sampling_parse_stop_list(&p, "a,b"), POOT_INVALID_ARGUMENT, "full");
  assert_int_equal(p.n_stops, POOT_SAMPLING_MAX_STOPS - 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_validate_names_the_field),
      cmocka_unit_test(test_kind),
      cmocka_unit_test(test_seed),
      cmocka_unit_test(test_parse_logit_bias),
      cmocka_unit_test(test_parse_stop_list),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
