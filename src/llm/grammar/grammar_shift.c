/* Long counts shifted in the real state (fill_mask).
 *
 * Inside a long bounded string (`x{0,2100}` compiles to counts `O_k ::= x O_(k-1) | ε` and
 * runs of inline copies `x x x …`) every step is at a count never met before: the state is
 * new at every mask, and so are the sets of its walk (the guided walk of a context key's
 * uncertain nodes meets a new set per byte of depth). But a token of at most L bytes (the
 * vocabulary's longest) takes at most L more x (each x surely takes a byte), so from count
 * k and from count k', both at least L + 2, it meets the same stacks one for one: neither
 * reaches the last count (`O_1 ::= x | ε`, whose x is a tail call) or the end of the copies,
 * every count met is a rule of the same shape, so the stacks are as many, as deep and
 * expand alike, their positions differing only in the counts. So the state with its long
 * counts shifted down, every count of one chain by the same amount (its smallest to L + 2,
 * so that distinct stacks stay distinct), allows exactly the same tokens; while the real
 * counts stay above that it is the same state at every step, and its mask comes from the
 * mask cache. */
#include <string.h>

#include "grammar_match_impl.h"

#define SHIFT_CHAINS 8u /* chains shifted in one state, at most (else none is) */
#define SEEN_BITS 7
#define SEEN_SLOTS (1u << SEEN_BITS) /* nodes remembered while finding the smallest counts */
#define NOT_COUNT POOT_NOT_COUNT
#define IN_PROGRESS (UINT32_MAX - 1)

void poot__shift_free(poot_grammar_matcher *m) {
  poot_free(m->sh_k);
  poot_free(m->sh_fam);
  poot_free(m->sh_pos);
  poot_free(m->sh_off);
  poot_free(m->sh_cur);
  m->sh_k = m->sh_fam = m->sh_pos = m->sh_off = m->sh_cur = NULL;
  m->sh_min = 0;
}

void poot__count_lengths(const poot_grammar *g, uint32_t *len, uint32_t *path) {
  memset(len, 0, g->n_rules * sizeof *len);
  for (uint32_t r0 = 0; r0 < g->n_rules; r0++) { /* the shapes (poot__count_shape) */
    uint32_t n = 0, r = r0, full = 0, next = NIL;
    while (r != NIL && len[r] == 0) { /* down to a rule already known, or the end */
      if (!poot__count_shape(g, r, &full, &next)) {
        len[r] = NOT_COUNT;
        break;
      }
      len[r] = IN_PROGRESS; /* (met again below: a loop, `x*` written so) */
      path[n++] = r;
      r = next;
    }
    while (n) {
      uint32_t q = path[--n], nf = 0, nn = NIL;
      (void)poot__count_shape(g, q, &full, &next);
      if (next == NIL) {
        len[q] = 1;
        continue;
      }
      uint32_t lb = len[next];
      bool ok = lb != NOT_COUNT && lb != IN_PROGRESS && poot__count_shape(g, next, &nf, &nn) &&
                poot__same_gel(&g->el[full], &g->el[nf]);
      len[q] = ok ? lb + 1 : NOT_COUNT;
    }
  }
  /* Then whether each chain's x surely consumes a byte, asked once per rule x (it reads the
   * rules below x: asked of every count, it was most of this pass). */
  uint32_t *cons = path; /* per rule: 0 not asked, 1 consumes, 2 not */
  memset(cons, 0, g->n_rules * sizeof *cons);
  for (uint32_t r = 0; r < g->n_rules; r++) {
    uint32_t full = 0, next = NIL;
    if (len[r] == NOT_COUNT || !poot__count_shape(g, r, &full, &next)) continue;
    const gel *x = &g->el[full];
    bool ok;
    if (x->type != GEL_RULE) {
      ok = poot__consumes(g, x, 8);
    } else {
      if (!cons[x->value]) cons[x->value] = poot__consumes(g, x, 8) ? 1 : 2;
      ok = cons[x->value] == 1;
    }
    if (!ok) len[r] = NOT_COUNT;
  }
}

/* Room for one more chain of `n` counts in the tables (made with the first). */
static poot_status chain_room(poot_grammar_matcher *m, uint32_t n_fam, size_t *cap_off,
                              size_t n_pos, size_t *cap_pos, uint32_t n) {
  if (!m->sh_k) {
    m->sh_k = poot_calloc((size_t)m->g->n_el + 1, sizeof *m->sh_k);
    m->sh_fam = poot_malloc(((size_t)m->g->n_el + 1) * sizeof *m->sh_fam);
    if (!m->sh_k || !m->sh_fam)
      return poot__fail_status(FAIL_OOM, "the grammar's repetition counts");
  }
  POOT_TRY(poot__reserve_u32(&m->sh_off, cap_off, (size_t)n_fam + 1));
  return poot__reserve_u32(&m->sh_pos, cap_pos, n_pos + n + 1);
}

/* The tables of the chains (counts and runs of copies) longer than `min`: sh_k and sh_fam
 * stay NULL when there are none. */
static poot_status shift_build(poot_grammar_matcher *m, uint32_t min) {
  const poot_grammar *g = m->g;
  poot__shift_free(m);
  m->sh_min = min;
  uint32_t *len = poot_malloc(((size_t)g->n_rules * 3 + 1) * sizeof *len);
  if (!len) return poot__fail_status(FAIL_OOM, "the grammar's repetition counts");
  uint32_t *path = len + g->n_rules, *parents = path + g->n_rules;
  poot__count_lengths(g, len, path);
  memset(parents, 0, g->n_rules * sizeof *parents);
  for (uint32_t r = 0; r < g->n_rules; r++) {
    uint32_t full = 0, next = NIL;
    if (len[r] != NOT_COUNT && len[r] > 1 && poot__count_shape(g, r, &full, &next)) parents[next]++;
  }
  poot_status st = POOT_OK_STATUS;
  size_t cap_off = 0, cap_pos = 0, n_pos = 0;
  uint32_t n_fam = 0;
  for (uint32_t r = 0; r < g->n_rules && !st; r++) {
    if (len[r] == NOT_COUNT || len[r] <= min || parents[r]) continue; /* a long chain's top */
    bool alone = true; /* no count below is the next of another rule too */
    uint32_t full = 0, next = NIL;
    for (uint32_t c = r; c != NIL && alone; c = next) {
      alone = c == r || parents[c] == 1;
      (void)poot__count_shape(g, c, &full, &next);
    }
    if (!alone) continue;
    st = chain_room(m, n_fam, &cap_off, n_pos, &cap_pos, len[r]);
    if (st) break;
    m->sh_off[n_fam] = (uint32_t)n_pos;
    for (uint32_t c = r; c != NIL; c = next) {
      uint32_t k = len[c];
      (void)poot__count_shape(g, c, &full, &next);
      m->sh_pos[n_pos + k] = full;
      for (uint32_t i = 0; i < 2 && (i == 0 || next != NIL); i++) { /* x, and the next count */
        m->sh_k[full + i] = k;
        m->sh_fam[full + i] = n_fam;
      }
    }
    n_pos += len[r] + 1;
    n_fam++;
  }
  for (uint32_t p = 0; p < g->n_el && !st;) { /* runs of copies */
    uint32_t q = p + 1;
    while (g->el[p].type != GEL_END && q < g->n_el && poot__same_gel(&g->el[p], &g->el[q])) q++;
    if (q - p <= min || !poot__consumes(g, &g->el[p], 8)) {
      p = q;
      continue;
    }
    st = chain_room(m, n_fam, &cap_off, n_pos, &cap_pos, q - p);
    if (st) break;
    m->sh_off[n_fam] = (uint32_t)n_pos;
    for (uint32_t i = p; i < q; i++) { /* copy i has q - i copies left, itself included */
      m->sh_pos[n_pos + q - i] = i;
      m->sh_k[i] = q - i;
      m->sh_fam[i] = n_fam;
    }
    n_pos += q - p + 1;
    n_fam++;
    p = q;
  }
  poot_free(len);
  if (!st && m->sh_k) {
    m->sh_cur = poot_malloc(g->max_stacks * sizeof *m->sh_cur);
    if (!m->sh_cur) st = poot__fail_status(FAIL_OOM, "the grammar's repetition counts");
  }
  if (st) {
    poot__shift_free(m);
    m->sh_min = 0;
  }
  return st;
}

poot_status poot__shift_state(poot_grammar_matcher *m, const poot_grammar_vocab *v, bool *out) {
  *out = false;
  uint32_t min = v->max_len + 2;
  if (m->sh_min != min) POOT_TRY(shift_build(m, min));
  if (!m->sh_k) return POOT_OK_STATUS;
  uint32_t fam[SHIFT_CHAINS], delta[SHIFT_CHAINS], nf = 0, seen[SEEN_SLOTS], n_seen = 0;
  memset(seen, 0xFF, sizeof seen);
  for (uint32_t i = 0; i < m->n_cur; i++) /* each chain's smallest count */
    for (uint32_t x = m->cur[i]; x != NIL; x = m->nodes[x].parent) {
      if (n_seen < SEEN_SLOTS / 2) { /* stacks share their tails: each node once */
        uint32_t h = (x * 0x9E3779B1u) >> (32 - SEEN_BITS);
        while (seen[h] != NIL && seen[h] != x) h = (h + 1) & (SEEN_SLOTS - 1);
        if (seen[h] == x) break;
        seen[h] = x;
        n_seen++;
      }
      uint32_t pos = m->nodes[x].pos, k = m->sh_k[pos], j = 0;
      if (!k) continue;
      while (j < nf && fam[j] != m->sh_fam[pos]) j++;
      if (j == SHIFT_CHAINS) return POOT_OK_STATUS;
      if (j == nf) {
        fam[nf] = m->sh_fam[pos];
        delta[nf++] = k;
      }
      if (k < delta[j]) delta[j] = k;
    }
  bool any = false;
  for (uint32_t j = 0; j < nf; j++) {
    delta[j] = delta[j] > min ? delta[j] - min : 0;
    any = any || delta[j];
  }
  if (!any) return POOT_OK_STATUS;
  ectx c = {.m = m, .out = m->sh_cur};
  for (uint32_t i = 0; i < m->n_cur && !c.fail; i++) {
    uint32_t n = 0, top = UINT32_MAX; /* scratch[0 .. top] are rebuilt */
    for (uint32_t x = m->cur[i]; x != NIL; x = m->nodes[x].parent) {
      POOT_TRY(poot__reserve_u32(&m->scratch, &m->scratch_cap, (size_t)n + 1));
      uint32_t pos = m->nodes[x].pos, j = 0;
      if (m->sh_k[pos]) {
        while (fam[j] != m->sh_fam[pos]) j++;
        if (delta[j]) top = n;
      }
      m->scratch[n++] = x;
    }
    uint32_t y = top == UINT32_MAX ? m->cur[i] : m->nodes[m->scratch[top]].parent;
    for (uint32_t t = top; t != UINT32_MAX && !c.fail; t--) {
      uint32_t pos = m->nodes[m->scratch[t]].pos, k = m->sh_k[pos], j = 0;
      if (k) {
        while (fam[j] != m->sh_fam[pos]) j++;
        const uint32_t *at = m->sh_pos + m->sh_off[fam[j]];
        pos = at[k - delta[j]] + (pos - at[k]);
      }
      y = poot__node(&c, pos, y);
    }
    if (!c.fail) poot__stack_add(&c, y);
  }
  if (c.fail == FAIL_OOM) return poot__fail_status(c.fail, "the mask");
  if (c.fail || c.n_out != m->n_cur) return POOT_OK_STATUS; /* (bounds: the real state then) */
  m->n_sh = c.n_out;
  *out = true;
  return POOT_OK_STATUS;
}
