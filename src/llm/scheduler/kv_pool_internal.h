/* The KV block pool's self-check, for tests (src/llm/scheduler/kv_pool.c).
 * Never leaves src/llm/scheduler/ except into tests/unit/llm/. */
#ifndef POOT_LLM_KV_POOL_INTERNAL_H
#define POOT_LLM_KV_POOL_INTERNAL_H

#include "poot/llm/kv_pool.h"

/* Checks every internal invariant: the LRU list holds exactly the free
 * blocks, with consistent links; the counters match the blocks; every
 * published block is found by a lookup of its own content, and the prefix
 * table holds nothing else. INTERNAL naming the first violation; OK
 * otherwise. O(blocks · probe length). */
POOT_MUST_USE poot_status poot__kv_pool_check(const poot_kv_pool *pool);

#endif /* POOT_LLM_KV_POOL_INTERNAL_H */
