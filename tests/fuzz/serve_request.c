/* libFuzzer target: the server's request parser (src/serve/request.c) never
 * crashes or leaks on any body, for both endpoints; what it accepts is
 * within the limits it was given. The first byte picks the endpoint (bit 1:
 * /v1/embeddings or /v1/rerank, src/serve/encoder.c). */
#include <stdint.h>
#include <string.h>

#include "serve_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  if (data[0] & 2) {
    poot_arena arena;
    poot_arena_init(&arena, 0);
    poot__serve_encode_request r;
    const char *param = NULL;
    poot__serve_encode_kind k = data[0] & 1 ? POOT_SERVE_RERANK : POOT_SERVE_EMBED;
    poot_status st = poot__serve_encode_request_parse(&arena, (const char *)data + 1, size - 1, k,
                                                      8, &r, &param);
    if (!st && (r.n_inputs < 1 || r.n_inputs > 8 || (k == POOT_SERVE_RERANK && !r.query)))
      __builtin_trap();
    if (st && poot_status_code_of(st) != POOT_INVALID_ARGUMENT &&
        poot_status_code_of(st) != POOT_OUT_OF_MEMORY)
      __builtin_trap();
    poot_status_free(st);
    poot_arena_deinit(&arena);
    return 0;
  }
  poot__serve_kind kind = data[0] & 1 ? POOT_SERVE_COMPLETION : POOT_SERVE_CHAT;
  static const poot__serve_limits limits = {
      .max_messages = 16, .max_tokens = 256, .max_n = 4, .max_prompts = 4};
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot__serve_request r;
  const char *param = NULL;
  poot_status st = poot__serve_request_parse(&arena, (const char *)data + 1, size - 1, kind,
                                             &limits, &r, &param);
  if (!st) {
    if (r.n < 1 || r.n > limits.max_n || r.max_tokens > limits.max_tokens) __builtin_trap();
    if (kind == POOT_SERVE_CHAT && (!r.messages || r.messages->len > limits.max_messages))
      __builtin_trap();
    if (kind == POOT_SERVE_COMPLETION && (r.n_prompts < 1 || r.n_prompts > limits.max_prompts))
      __builtin_trap();
    if (poot_status_code_of(poot_sampling_params_validate(&r.sampling, 0)) != POOT_OK)
      __builtin_trap();
  } else if (poot_status_code_of(st) != POOT_INVALID_ARGUMENT &&
             poot_status_code_of(st) != POOT_OUT_OF_MEMORY) {
    __builtin_trap();
  }
  poot_status_free(st);
  poot_arena_deinit(&arena);
  return 0;
}
