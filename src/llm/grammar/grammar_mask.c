/* The mask: lexical-context keys, fill_mask and prepare.
 *
 * Most of a mask's cost is a state never seen before whose stacks let most of the
 * vocabulary through: inside a string, the state differs with every enclosing object, yet
 * what the tokens do inside the string does not. So the state is cut: every stack keeps
 * its nodes deeper than `cut` (one level above the shallowest top; two when that leaves more
 * than UNC_DEEPER uncertain nodes, as right after the quote of `x{1,40}`), and the nodes
 * at depth `cut` become opaque sentinels. The cut state is walked over the vocabulary once
 * (in the private matcher `ctx`, whose sets carry `left` when a stack reached a sentinel on
 * that byte) into a key: the tokens that some stack consumes without reaching a sentinel
 * are accepted whatever lies below; a prefix on which no stack survives or reaches one is
 * refused; the subtrees where one first reached a sentinel are uncertain and walked in full
 * from the real state. The cut keeps the stacks' count (distinct nodes stay distinct: the
 * cut is at one depth for all), their expansions and failures, so the key is exact as long
 * as the real depths stay inside max_depth, which is checked (hi_depth). */

#include <string.h>

#include "grammar_match_impl.h"

#define KEY_MAX 4096u
#define KEY_DATA_MAX ((size_t)1 << 22) /* words: 16 MiB */
#define WIDE_BYTES 80
#define AHEAD_BYTES 8 /* prepare looks one byte past a state taking at most this many bytes */
#define CHAIN_CAP 32u /* counts of x{m,n} past this share a context key */
#define UNC_DEEPER 1024u
#define MAX_SENTINELS 256u
/* m->chainy's flags: the position counts as another in a cut state (canon), and the position
 * is inside a long count or run of copies (prepare leaves the states there alone). */
#define CHAIN_MAPPED 1u
#define CHAIN_INSIDE 2u

static void ctx_drop(poot_grammar_matcher *m) {
  poot_grammar_matcher_destroy(m->ctx);
  m->ctx = NULL;
  m->n_keys = 0;
  m->n_kdata = 0;
}

/* Stacks in a canonical order: by their positions above the cut, top first. */
static int cmp_stacks(const gnode *nodes, uint32_t a, uint32_t b, uint32_t cut) {
  while (a != NIL && b != NIL && nodes[a].depth > cut && nodes[b].depth > cut) {
    if (nodes[a].pos != nodes[b].pos) return nodes[a].pos < nodes[b].pos ? -1 : 1;
    a = nodes[a].parent;
    b = nodes[b].parent;
  }
  bool ea = a == NIL || nodes[a].depth <= cut, eb = b == NIL || nodes[b].depth <= cut;
  return ea == eb ? 0 : ea ? -1 : 1;
}

/* One stack's part above the cut into the context matcher, over sentinel `sent`. */
static poot_status cut_stack(poot_grammar_matcher *m, ectx *c, uint32_t id, uint32_t cut,
                             uint32_t base) {
  uint32_t n = 0;
  for (uint32_t x = id; x != NIL && m->nodes[x].depth > cut; x = m->nodes[x].parent) n++;
  POOT_TRY(poot__reserve_u32(&m->scratch, &m->scratch_cap, n));
  n = 0;
  for (uint32_t x = id; x != NIL && m->nodes[x].depth > cut; x = m->nodes[x].parent)
    m->scratch[n++] = m->nodes[x].pos;
  uint32_t y = base;
  while (n && !c->fail) {
    uint32_t pos = m->scratch[--n];
    if (m->canon) {
      m->cut_chainy = m->cut_chainy || (m->chainy[pos] & CHAIN_MAPPED);
      pos = m->canon[pos];
    }
    y = poot__node(c, pos, y);
  }
  if (!c->fail) poot__stack_add(c, y);
  return POOT_OK_STATUS;
}

/* The state cut at `*out_cut` as a set of the context matcher; SID_FAIL when it cannot be
 * (too many distinct sentinels, bounds). */
static poot_status cut_state(poot_grammar_matcher *m, uint32_t levels, uint32_t *out_lsid,
                             uint32_t *out_cut) {
  poot_grammar_matcher *cm = m->ctx;
  uint32_t min_d = UINT32_MAX, *st = m->tmp_b, n = m->n_cur;
  m->cut_chainy = false;
  *out_lsid = SID_FAIL;
  for (uint32_t i = 0; i < n; i++)
    if (m->nodes[m->cur[i]].depth < min_d) min_d = m->nodes[m->cur[i]].depth;
  uint32_t cut = min_d > levels ? min_d - levels : 0;
  *out_cut = cut;
  memcpy(st, m->cur, n * sizeof *st);
  for (uint32_t i = 1; i < n; i++) /* insertion sort: states are small */
    for (uint32_t j = i; j > 0 && cmp_stacks(m->nodes, st[j - 1], st[j], cut) > 0; j--) {
      uint32_t t = st[j];
      st[j] = st[j - 1];
      st[j - 1] = t;
    }
  uint32_t sent[MAX_SENTINELS], n_sent = 0;
  ectx c = {.m = cm, .out = cm->tmp_a};
  for (uint32_t i = 0; i < n && !c.fail; i++) {
    uint32_t base = NIL;
    if (cut) {
      uint32_t x = st[i], j = 0;
      while (m->nodes[x].depth > cut) x = m->nodes[x].parent;
      while (j < n_sent && sent[j] != x) j++;
      if (j == MAX_SENTINELS) return POOT_OK_STATUS;
      if (j == n_sent) sent[n_sent++] = x;
      base = poot__node(&c, m->g->n_el + j, NIL);
      if (c.fail) break;
    }
    POOT_TRY(cut_stack(m, &c, st[i], cut, base));
  }
  if (c.fail == FAIL_OOM) return poot__fail_status(c.fail, "the mask");
  if (c.fail) return POOT_OK_STATUS;
  return poot__set_intern(cm, c.out, c.n_out, m->accept, false, out_lsid);
}

/* Tokens tok_ids[lo .. hi) are accepted in the context walk. */
void poot__key_accept(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t lo,
                      uint32_t hi) {
  if (!m->kdense && m->n_klist + (hi - lo) >= m->kacc_words) { /* the list would be larger */
    for (size_t i = 0; i < m->n_klist; i++) m->kacc[m->klist[i] >> 5] |= 1u << (m->klist[i] & 31);
    m->kdense = true;
  }
  for (uint32_t k = lo; k < hi; k++) {
    uint32_t id = (uint32_t)v->tok_ids[k];
    if (m->kdense)
      m->kacc[id >> 5] |= 1u << (id & 31);
    else
      m->klist[m->n_klist++] = id;
  }
}

/* The context walk of cut state `lsid` over the whole vocabulary (see above): the accepted
 * tokens into klist or kacc, the uncertain nodes into m->kunc (*n_unc). */
static poot_status key_walk(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t lsid,
                            uint32_t horizon, uint32_t *n_unc) {
  poot_grammar_matcher *cm = m->ctx;
  m->frames[0] = (mframe){.node = 0, .child = v->kid_off[0], .sid = lsid, .end = v->kid_off[1]};
  size_t d = 1;
  *n_unc = 0;
  while (d) {
    mframe *f = &m->frames[d - 1];
    if (f->child >= f->end) {
      d--;
      continue;
    }
    const gtrie_kid *k = &v->kids[f->child++];
    uint32_t ch = k->node, sid = 0;
    if (d > horizon) { /* past the horizon the cut state may differ from the real one */
      POOT_TRY(poot__reserve_u32(&m->kunc, &m->cap_kunc, *n_unc + 1));
      m->kunc[(*n_unc)++] = ch;
      continue;
    }
    if (!poot__set_takes(&cm->srecs[f->sid], k->byte)) continue;
    POOT_TRY(poot__transition(cm, f->sid, k->byte, &sid));
    if (sid == SID_FAIL) continue; /* as in the real state: the same stacks fail */
    bool bulk = false;
    uint32_t upto = UINT32_MAX;
    if (!cm->srecs[sid].left && cm->srecs[sid].n && poot__kid_height(k) &&
        d + poot__kid_height(k) <= horizon)
      POOT_TRY(poot__all_loop(cm, k, sid, &bulk, &upto));
    if (bulk) {
      poot__key_accept(m, v, k->tok_off, k->tok_end);
      continue;
    }
    if (upto != UINT32_MAX) {
      poot__accept_upto(m, v, ch, upto, NULL);
      continue;
    }
    const srec *r = &cm->srecs[sid];
    if (r->left) {
      POOT_TRY(poot__reserve_u32(&m->kunc, &m->cap_kunc, *n_unc + 1));
      m->kunc[(*n_unc)++] = ch;
      continue;
    }
    if (r->n || r->accept) poot__key_accept(m, v, k->tok_off, k->tok_mid);
    if (r->n && poot__kid_height(k))
      m->frames[d++] =
          (mframe){.node = ch, .child = k->first, .sid = sid, .end = k->first + k->n_less + 1u};
  }
  return POOT_OK_STATUS;
}

/* Tokens tok_ids[lo .. hi) allowed, into `mask`. */
static void range_set(const poot_grammar_vocab *v, uint32_t lo, uint32_t hi, uint32_t *mask) {
  for (uint32_t t = lo; t < hi; t++) {
    uint32_t id = (uint32_t)v->tok_ids[t];
    mask[id >> 5] |= 1u << (id & 31);
  }
}

/* The uncertain subtrees of `k`, walked in full from the real state `root`: a descent
 * from the trie's root to each (they are in preorder), then the subtree. */
static poot_status guided_walk(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t root,
                               const mkey *k, uint32_t *mask) {
  const gtrie_node *tn = v->nodes;
  mframe *path = m->frames + m->frames_cap / 2;
  path[0] = (mframe){.node = 0, .child = v->kid_off[0], .sid = root, .end = v->kid_off[1]};
  size_t d = 1;
  const uint32_t *unc = m->kdata + k->unc_off;
  for (uint32_t i = 0; i < k->n_unc; i++) {
    uint32_t u = unc[i];
    while (d > 1 && !(path[d - 1].node < u && u < tn[path[d - 1].node].end)) d--;
    for (;;) {
      mframe *f = &path[d - 1];
      if (f->sid == SID_FAIL) break; /* no stack continues this prefix */
      while (f->child + 1 < f->end && v->kids[f->child + 1].node <= u) f->child++;
      const gtrie_kid *kd = &v->kids[f->child]; /* the child whose subtree holds u */
      uint32_t ch = kd->node, sid = SID_FAIL;
      if (poot__set_takes(&m->srecs[f->sid], kd->byte))
        POOT_TRY(poot__transition(m, f->sid, kd->byte, &sid));
      if (ch == u) {
        if (sid == SID_FAIL) break;
        const srec *r = &m->srecs[sid];
        if (r->n || r->accept) range_set(v, kd->tok_off, kd->tok_mid, mask);
        if (r->n && poot__kid_height(kd)) POOT_TRY(poot__walk(m, v, u, sid, mask));
        break;
      }
      if (sid != SID_FAIL && m->srecs[sid].n == 0) sid = SID_FAIL;
      path[d++] =
          (mframe){.node = ch, .child = kd->first, .sid = sid, .end = kd->first + kd->n_less + 1u};
    }
  }
  return POOT_OK_STATUS;
}

/* Stores the walk's result (m->kacc, m->kunc) as the key of `lsid`: the accepted tokens as
 * a list when that is smaller than a mask. */
static poot_status store_key(poot_grammar_matcher *m, uint32_t lsid, size_t words, uint32_t n_unc) {
  bool dense = m->kdense;
  size_t acc_len = dense ? words : m->n_klist;
  if (m->n_keys == m->cap_keys) {
    uint32_t cap = m->cap_keys ? m->cap_keys * 2 : 64;
    mkey *k = poot_realloc_array(m->keys, cap, sizeof *k);
    if (!k) return poot__fail_status(FAIL_OOM, "the mask's context cache");
    m->keys = k;
    m->cap_keys = cap;
  }
  POOT_TRY(poot__reserve_u32(&m->kdata, &m->cap_kdata, m->n_kdata + acc_len + n_unc + 1));
  mkey *k = &m->keys[m->n_keys];
  *k = (mkey){.acc_off = (uint32_t)m->n_kdata,
              .n_acc = (uint32_t)acc_len,
              .dense = dense,
              .exact = !m->ctx->pool_full};
  uint32_t *out = m->kdata + m->n_kdata;
  if (dense) {
    memcpy(out, m->kacc, words * sizeof *out);
    memset(m->kacc, 0, words * sizeof *m->kacc);
  } else {
    if (m->n_klist) memcpy(out, m->klist, m->n_klist * sizeof *out);
  }
  k->unc_off = (uint32_t)(m->n_kdata + acc_len);
  k->n_unc = n_unc;
  if (n_unc) memcpy(m->kdata + k->unc_off, m->kunc, n_unc * sizeof *m->kunc);
  m->n_kdata += acc_len + n_unc;
  m->ctx->srecs[lsid].key = ++m->n_keys;
  return POOT_OK_STATUS;
}

/* The key of cut state `lsid`, made by a context walk when it has none. NULL when the walk
 * could not be exact, and when `once` and the state has no key and was not met before (it
 * is then marked as met): most cut states met while filling a mask are never met again
 * (over the corpus, 3,502 of the 3,738 keys that fill_mask made), and a key costs the
 * plain walk's work and more (its context walk, the guided walk, the stored tokens), so it
 * is made only for a state that recurs. */
static poot_status find_key(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t lsid,
                            uint32_t horizon, size_t words, bool once, const mkey **out) {
  *out = NULL;
  srec *r = &m->ctx->srecs[lsid];
  uint32_t key = r->key;
  if (!key && once && !r->met) {
    r->met = true;
    return POOT_OK_STATUS;
  }
  if (!key) {
    if (m->kacc_words != words) {
      poot_free(m->kacc);
      poot_free(m->klist);
      m->kacc = poot_calloc(words ? words : 1, sizeof *m->kacc);
      m->klist = poot_malloc((words ? words : 1) * sizeof *m->klist);
      m->kacc_words = m->kacc && m->klist ? words : 0;
      if (!m->kacc_words) return poot__fail_status(FAIL_OOM, "the mask's context cache");
    }
    m->n_klist = 0;
    m->kdense = false;
    uint32_t n_unc = 0;
    poot_status st = key_walk(m, v, lsid, horizon, &n_unc);
    if (!st) st = store_key(m, lsid, words, n_unc);
    if (st) {
      if (m->kdense) memset(m->kacc, 0, words * sizeof *m->kacc); /* kept zero between walks */
      return st;
    }
    key = m->n_keys;
  }
  if (m->keys[key - 1].exact) *out = &m->keys[key - 1];
  return POOT_OK_STATUS;
}

/* Whether element `e` surely consumes a byte: a byte element, or a rule whose every
 * alternative starts with such an element (`depth` bounds the search; left recursion was
 * refused, so it ends anyway). */
bool poot__consumes(const poot_grammar *g, const gel *e, int depth) {
  if (e->type == GEL_RANGE || e->type == GEL_SET) return true;
  if (e->type != GEL_RULE || depth == 0) return false;
  for (uint32_t a = g->rule_alt[e->value]; a < g->rule_alt[e->value + 1]; a++)
    if (!poot__consumes(g, &g->el[g->alt_start[a]], depth - 1)) return false;
  return true;
}

/* Whether rule `r` has the shape of one count of a repetition, `O ::= x O' | ε` or
 * `O ::= x | ε` (the parser's x{m,n}) with x one element: *full is the position of x, *next
 * the rule O' (NIL at the last count). */
bool poot__count_shape(const poot_grammar *g, uint32_t r, uint32_t *full, uint32_t *next) {
  uint32_t a = g->rule_alt[r];
  if (g->rule_alt[r + 1] - a != 2) return false;
  uint32_t s0 = g->alt_start[a], s1 = g->alt_start[a + 1];
  if (g->el[s0].type != GEL_END && g->el[s1].type != GEL_END) return false;
  uint32_t f = g->el[s0].type == GEL_END ? s1 : s0;
  const gel *e = &g->el[f], *e2 = &g->el[f + 1];
  if (e->type == GEL_END) return false;
  *full = f;
  *next = e2->type == GEL_END ? NIL : e2->value;
  return e2->type == GEL_END || (e2->type == GEL_RULE && g->el[f + 2].type == GEL_END);
}

bool poot__same_gel(const gel *a, const gel *b) {
  return a->type == b->type && a->lo == b->lo && a->hi == b->hi && a->value == b->value;
}

/* Inline copies (x{1000} is 1,000 x in one alternative): a position with more than
 * CHAIN_CAP copies of its element left counts as the one with CHAIN_CAP left, as the counts
 * below do. Marks m->canon and m->chainy when `mark` (every position after a copy inside
 * the run CHAIN_INSIDE); returns whether there are any. */
static bool copies_map(poot_grammar_matcher *m, bool mark) {
  const poot_grammar *g = m->g;
  bool any = false;
  for (uint32_t p = 0; p < g->n_el;) {
    uint32_t q = p + 1;
    while (g->el[p].type != GEL_END && q < g->n_el && poot__same_gel(&g->el[p], &g->el[q])) q++;
    if (q - p > CHAIN_CAP && poot__consumes(g, &g->el[p], 8)) { /* (asked of long runs only) */
      any = true;
      for (uint32_t i = p; mark && i + CHAIN_CAP <= q; i++) {
        m->canon[i] = q - CHAIN_CAP;
        m->chainy[i] |= CHAIN_MAPPED;
      }
      for (uint32_t i = p + 1; mark && i < q; i++) m->chainy[i] |= CHAIN_INSIDE;
    }
    p = q;
  }
  return any;
}

/* Maps the counts of long repetitions onto one: every count `O_k ::= x O_(k-1) | ε` with
 * k > CHAIN_CAP counts as O_CHAIN_CAP in a cut state. A token of fewer than CHAIN_CAP bytes
 * takes fewer than CHAIN_CAP more x (each takes a byte), so from O_k and from O_CHAIN_CAP it
 * meets the same stacks, one for one; the context walk of such a cut state stops at
 * CHAIN_CAP - 1 bytes and leaves longer tokens uncertain (walked from the real state). */
static poot_status chains_find(poot_grammar_matcher *m) {
  const poot_grammar *g = m->g;
  m->chains_done = true;
  uint32_t *count = poot_malloc(((size_t)g->n_rules * 2 + 1) * sizeof *count); /* a count's k */
  if (!count) return poot__fail_status(FAIL_OOM, "the grammar's repetition counts");
  poot__count_lengths(g, count, count + g->n_rules);
  bool any = false;
  for (uint32_t r = 0; r < g->n_rules; r++) {
    if (count[r] == POOT_NOT_COUNT) count[r] = 0;
    any = any || count[r] > CHAIN_CAP;
  }
  any = any || copies_map(m, false);
  poot_status st = POOT_OK_STATUS;
  if (any) {
    m->canon = poot_malloc((size_t)g->n_el * sizeof *m->canon);
    m->chainy = poot_calloc(g->n_el, 1);
    if (!m->canon || !m->chainy) {
      poot_free(m->canon);
      poot_free(m->chainy);
      m->canon = NULL;
      m->chainy = NULL;
      st = poot__fail_status(FAIL_OOM, "the grammar's repetition counts");
    }
  }
  if (any && !st) {
    for (uint32_t p = 0; p < g->n_el; p++) m->canon[p] = p;
    (void)copies_map(m, true);
    for (uint32_t r = 0; r < g->n_rules; r++) {
      if (count[r] < CHAIN_CAP) continue;
      uint32_t full = 0, next = NIL, c = r;
      for (uint32_t k = count[r]; k > CHAIN_CAP; k--) { /* down to the count CHAIN_CAP */
        (void)poot__count_shape(g, c, &full, &next);
        c = next;
      }
      uint32_t fr = 0, fc = 0;
      (void)poot__count_shape(g, r, &fr, &next);
      (void)poot__count_shape(g, c, &fc, &next);
      for (uint32_t i = 0; i < 2 && g->el[fr + i].type != GEL_END; i++) {
        m->canon[fr + i] = fc + i;
        m->chainy[fr + i] |= CHAIN_MAPPED;
      }
      for (c = r; c != NIL; c = next) /* the call of the next count, all the way down */
        if (poot__count_shape(g, c, &full, &next) && next != NIL)
          m->chainy[full + 1] |= CHAIN_INSIDE;
    }
  }
  poot_free(count);
  return st;
}

/* The context matcher, made or started afresh when its caches are past their bounds. */
static poot_status ctx_ready(poot_grammar_matcher *m) {
  if (!m->chains_done) POOT_TRY(chains_find(m));
  poot_grammar_matcher *cm = m->ctx;
  if (cm && (cm->n_srec > (1u << 20) || cm->n_sids > (1u << 23) || cm->n_nodes > MAX_POOL / 2 ||
             cm->pool_full || m->n_keys >= KEY_MAX || m->n_kdata > KEY_DATA_MAX))
    ctx_drop(m);
  if (!m->ctx) {
    m->ctx = poot__matcher_alloc(m->g);
    if (!m->ctx) return poot__fail_status(FAIL_OOM, "the mask's context matcher");
    m->ctx->is_ctx = true;
  }
  return POOT_OK_STATUS;
}

/* The key of `t`'s state cut with m's context (t is m, or prepare's scratch matcher): cut one
 * level above the shallowest stack, or two when one leaves most tokens uncertain. NULL when
 * none applies; with `once` (fill_mask), a cut state is given a key at its second sighting
 * (find_key). */
static poot_status state_key(poot_grammar_matcher *m, poot_grammar_matcher *t,
                             const poot_grammar_vocab *v, size_t words, bool once, const mkey **out,
                             uint32_t *out_cut) {
  *out = NULL;
  uint32_t first = SID_FAIL; /* the cut state whose key is in *out */
  for (uint32_t levels = 1; levels <= 2; levels++) {
    uint32_t lsid = SID_FAIL, cut = 0;
    const mkey *k = NULL;
    if (t != m) {
      t->ctx = m->ctx;
      t->canon = m->canon;
      t->chainy = m->chainy;
    }
    poot_status st = cut_state(t, levels, &lsid, &cut);
    if (t != m) {
      t->ctx = NULL;
      t->canon = NULL;
      t->chainy = NULL;
    }
    POOT_TRY(st);
    if (lsid != SID_FAIL)
      POOT_TRY(find_key(m, v, lsid, t->cut_chainy ? CHAIN_CAP - 1 : UINT32_MAX, words, once, &k));
    if (!k) break; /* keep the one-level key, if any */
    *out = k;
    *out_cut = cut;
    first = lsid;
    if (k->n_unc <= UNC_DEEPER || t->cut_chainy) return POOT_OK_STATUS; /* (its horizon) */
  }
  if (*out && first != SID_FAIL) /* find_key may have moved the keys */
    *out = &m->keys[m->ctx->srecs[first].key - 1];
  return POOT_OK_STATUS;
}

/* The mask through the state's context key; *done false when it does not apply (no key, or
 * the state's cut state met for the first time: the plain walk is then cheaper). */
static poot_status key_mask(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t root,
                            uint32_t *mask, size_t words, bool *done) {
  *done = false;
  if (m->n_cur == 0) return POOT_OK_STATUS;
  POOT_TRY(ctx_ready(m));
  uint32_t cut = 0;
  const mkey *k = NULL;
  POOT_TRY(state_key(m, m, v, words, true, &k, &cut));
  /* The real depths are the context's less one (its sentinels) plus the cut. */
  if (!k || (cut && m->ctx->hi_depth - 1 + cut > m->g->max_depth)) return POOT_OK_STATUS;
  const uint32_t *acc = m->kdata + k->acc_off;
  if (k->dense) {
    memcpy(mask, acc, words * sizeof *mask);
  } else {
    memset(mask, 0, words * sizeof *mask);
    for (uint32_t i = 0; i < k->n_acc; i++) mask[acc[i] >> 5] |= 1u << (acc[i] & 31);
  }
  POOT_TRY(guided_walk(m, v, root, k, mask));
  *done = true;
  return POOT_OK_STATUS;
}

static poot_status prepare_mask(poot_grammar_matcher *m, const poot_grammar_vocab *v, size_t need) {
  size_t levels = (size_t)v->max_len + 2;
  if (m->frames_cap < 2 * levels) {
    mframe *f = poot_realloc_array(m->frames, 2 * levels, sizeof *f);
    if (!f) return poot_status_make(POOT_OUT_OF_MEMORY, "grammar: out of memory (mask walk)");
    m->frames = f;
    m->frames_cap = 2 * levels;
  }
  /* The cache grows with the distinct sets seen; start afresh past a few million. */
  if (m->n_srec > (1u << 20) || m->n_sids > (1u << 23)) poot__cache_clear(m);
  if (m->mc_vocab != v || m->mc_words != need) {
    for (uint32_t i = 0; i < MASK_CACHE; i++) {
      poot_free(m->mc_mask[i]);
      m->mc_mask[i] = NULL;
    }
    m->mc_n = 0;
    ctx_drop(m); /* the keys hold token ids and trie nodes of the old vocabulary */
  }
  m->mc_vocab = v;
  m->mc_words = need;
  return POOT_OK_STATUS;
}

/* Whether the plain walk from set `root` should clear the refused tokens from a full mask
 * rather than set the allowed ones in an empty one: when the set takes WIDE_BYTES bytes or
 * more (inside a string, about 120,000 of Llama-3's 128,256 tokens pass). */
static bool wide_root(const poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t root) {
  (void)v;
  uint32_t n = 0;
  for (int w = 0; w < 8; w++) n += (uint32_t)__builtin_popcount(m->srecs[root].bytes[w]);
  return n >= WIDE_BYTES;
}

/* The mask of m's state (m->cur: the real state, or the one with its long counts shifted). */
static poot_status fill_state(poot_grammar_matcher *m, const poot_grammar_vocab *v, uint32_t *mask,
                              size_t need) {
  uint32_t root = 0;
  memcpy(m->tmp_b, m->cur, m->n_cur * sizeof *m->cur);
  POOT_TRY(poot__set_intern(m, m->tmp_b, m->n_cur, m->accept, false, &root));
  m->cache_top = m->n_nodes;
  uint32_t hit = 0;
  while (hit < m->mc_n && m->mc_sid[hit] != root) hit++;
  if (hit < m->mc_n) {
    memcpy(mask, m->mc_mask[hit], need * sizeof *mask);
  } else {
    bool done = false;
    POOT_TRY(key_mask(m, v, root, mask, need, &done));
    if (!done && wide_root(m, v, root)) { /* most tokens pass: clear those refused */
      memcpy(mask, v->all, need * sizeof *mask);
      POOT_TRY(poot__walk_clear(m, v, 0, root, mask));
    } else if (!done) {
      memset(mask, 0, need * sizeof *mask);
      POOT_TRY(poot__walk(m, v, 0, root, mask));
    }
    uint32_t slot = m->mc_n < MASK_CACHE ? m->mc_n : m->mc_next++ % MASK_CACHE;
    if (!m->mc_mask[slot]) m->mc_mask[slot] = poot_malloc((need ? need : 1) * sizeof *mask);
    if (m->mc_mask[slot]) { /* the cache is an optimisation: no memory, no entry */
      memcpy(m->mc_mask[slot], mask, need * sizeof *mask);
      m->mc_sid[slot] = root;
      if (m->mc_n < MASK_CACHE) m->mc_n++;
    }
  }
  if (m->accept)
    for (size_t i = 0; i < v->n_eog; i++) {
      uint32_t id = (uint32_t)v->eog[i];
      mask[id >> 5] |= 1u << (id & 31);
    }
  return POOT_OK_STATUS;
}

poot_status poot_grammar_matcher_fill_mask(poot_grammar_matcher *m, const poot_grammar_vocab *v,
                                           uint32_t *mask, size_t mask_words) {
  if (!m || !v || !mask)
    return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: matcher, vocab or mask is NULL");
  size_t need = poot_grammar_vocab_mask_words(v);
  if (mask_words < need)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "grammar: the mask has %zu words; the vocabulary of %d tokens needs "
                            "%zu",
                            mask_words, v->n_tokens, need);
  POOT_TRY(prepare_mask(m, v, need));
  bool shifted = false;
  POOT_TRY(poot__shift_state(m, v, &shifted));
  if (!shifted) return fill_state(m, v, mask, need);
  uint32_t *real = m->cur, n_real = m->n_cur; /* the shifted state stands in for the mask */
  m->cur = m->sh_cur;
  m->n_cur = m->n_sh;
  poot_status st = fill_state(m, v, mask, need);
  m->cur = real;
  m->n_cur = n_real;
  return st;
}

/* The state at position `p` (a byte element or a rule to expand), everything below cut by a
 * sentinel, into `t`'s (emptied) pool as its state; false when it is empty or past the
 * bounds. */
static bool state_at(poot_grammar_matcher *t, uint32_t p) {
  const poot_grammar *g = t->g;
  poot__truncate_pool(t, 0);
  ectx c = {.m = t, .out = t->cur};
  uint32_t base = poot__node(&c, g->n_el, NIL);
  uint32_t x = c.fail ? NIL : poot__node(&c, p, base);
  if (!c.fail) poot__expand(&c, x);
  if (c.fail || c.n_out == 0) return false;
  t->n_cur = c.n_out;
  t->accept = c.accept;
  return true;
}

/* How many distinct bytes the stacks of `t`'s state take, and which. */
static uint32_t state_bytes(const poot_grammar_matcher *t, uint32_t bytes[8]) {
  const poot_grammar *g = t->g;
  uint32_t n = 0;
  memset(bytes, 0, 8 * sizeof *bytes);
  for (uint32_t i = 0; i < t->n_cur; i++) { /* tops are byte elements */
    const gel *e = &g->el[t->nodes[t->cur[i]].pos];
    if (e->type == GEL_SET) {
      for (int w = 0; w < 8; w++) bytes[w] |= g->sets[e->value].bits[w];
    } else {
      for (unsigned b = e->lo; b <= e->hi; b++) bytes[b >> 5] |= 1u << (b & 31);
    }
  }
  for (int w = 0; w < 8; w++) /* (__builtin_popcount is a libgcc call here) */
    for (uint32_t x = bytes[w]; x; x &= x - 1) n++;
  return n;
}

/* The key of `t`'s state (made by state_at) when it is wide, cut with m's context; when it
 * takes a few bytes only, the keys of the wide states one byte further (after `{`, the key
 * position `{"`: the declared keys' literals beside the general key, a state that no single
 * position gives). */
static poot_status prepare_state(poot_grammar_matcher *m, poot_grammar_matcher *t,
                                 const poot_grammar_vocab *v, size_t need, uint32_t *saved) {
  uint32_t bytes[8], n = state_bytes(t, bytes), n_saved = t->n_cur;
  const mkey *k = NULL;
  uint32_t cut = 0;
  if (n >= WIDE_BYTES) return state_key(m, t, v, need, false, &k, &cut);
  if (n > AHEAD_BYTES) return POOT_OK_STATUS;
  memcpy(saved, t->cur, n_saved * sizeof *saved);
  for (unsigned b = 0; b < 256; b++) {
    if (!((bytes[b >> 5] >> (b & 31)) & 1)) continue;
    ectx c = {.m = t, .out = t->cur};
    poot__step(&c, saved, n_saved, (uint8_t)b);
    if (c.fail || c.left || c.n_out == 0) continue; /* (left: a stack reached the sentinel) */
    t->n_cur = c.n_out;
    t->accept = c.accept;
    uint32_t after[8];
    if (state_bytes(t, after) >= WIDE_BYTES) POOT_TRY(state_key(m, t, v, need, false, &k, &cut));
  }
  return POOT_OK_STATUS;
}

poot_status poot_grammar_matcher_prepare(poot_grammar_matcher *m, const poot_grammar_vocab *v) {
  if (!m || !v) return poot_status_make(POOT_INVALID_ARGUMENT, "grammar: matcher or vocab is NULL");
  size_t need = poot_grammar_vocab_mask_words(v);
  POOT_TRY(prepare_mask(m, v, need));
  POOT_TRY(ctx_ready(m));
  poot_grammar_matcher *t = poot__matcher_alloc(m->g);
  uint32_t *saved = poot_malloc(m->g->max_stacks * sizeof *saved);
  if (!t || !saved) {
    poot_grammar_matcher_destroy(t);
    poot_free(saved);
    return poot__fail_status(FAIL_OOM, "preparing the mask");
  }
  const poot_grammar *g = m->g;
  poot_status st = POOT_OK_STATUS;
  for (uint32_t p = 0; p < g->n_el && !st; p++) {
    uint8_t type = g->el[p].type;
    uint32_t full = 0, next = NIL;
    /* Right after a byte element, or after a rule outside a long count or run of copies (a
     * string's loop after its first characters, the next count of a short one). */
    bool inside = type == GEL_RULE && m->chainy && (m->chainy[p + 1] & CHAIN_INSIDE);
    if (type != GEL_END && g->el[p + 1].type != GEL_END && !inside && state_at(t, p + 1))
      st = prepare_state(m, t, v, need, saved);
    if (!st && type == GEL_RULE && m->canon && poot__count_shape(g, g->el[p].value, &full, &next) &&
        (m->chainy[full] & CHAIN_MAPPED) && state_at(t, p))
      st = prepare_state(m, t, v, need, saved); /* a long count's first step */
  }
  poot_grammar_matcher_destroy(t);
  poot_free(saved);
  return st;
}
