/* plan.c — poot_plan_create: builds one kernel per group, deduplicates
 * kernels by KIR hash, plans the arena by liveness, weighs and stages the
 * dispatches; the text printer and the per-kernel renderer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_impl.h"

typedef struct plan_impl {
  poot_arena arena;
} plan_impl;

static const char *kind_name(pg_kind k) {
  static const char *const n[] = {"pointwise",    "contract", "dus",       "topk",
                                  "cumsum",       "scatter",  "attention", "attn_combine",
                                  "gemm_combine", "gemm_x",   "gemm_w"};
  return n[k];
}

/* The group's template into k->b; mode (may be left "") names the
 * template's variant for the plan's printer. */
static poot_status run_template(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                                const char **mode) {
  *mode = "";
  switch (g->kind) {
    case PG_POINTWISE:
      return poot__cc_tpl_pointwise(k, g, grid);
    case PG_CONTRACT:
      return poot__cc_tpl_contract(k, g, grid, mode);
    case PG_DUS:
      return poot__cc_tpl_dus(k, g, grid);
    case PG_TOPK:
      return poot__cc_tpl_topk(k, g, grid, mode);
    case PG_CUMSUM:
      return poot__cc_tpl_cumsum(k, g, grid, mode);
    case PG_SCATTER:
      return poot__cc_tpl_scatter(k, g, grid);
    case PG_ATTENTION:
      if (g->tile) {
        *mode = "tiled";
        return poot__cc_tpl_attn_tile(k, g, grid);
      }
      return poot__cc_tpl_attention(k, g, grid);
    case PG_ATTN_COMBINE:
      return poot__cc_tpl_attn_combine(k, g, grid);
    case PG_GEMM_COMBINE:
      return poot__cc_tpl_gemm_combine(k, g, grid);
    case PG_GEMM_X:
      *mode = g->xone ? "medium" : "high";
      return poot__cc_tpl_gemm_x(k, g, grid);
    case PG_GEMM_W:
      return poot__cc_tpl_gemm_w(k, g, grid, mode);
  }
  return poot_status_make(POOT_INTERNAL, "compile: group kind %d", (int)g->kind);
}

/* Finishes and verifies k->b (destroyed when st, the build's status, is an
 * error). *out_kernel is NULL on failure. */
static poot_status finish_kernel(pc_planner *pl, pc_kctx *k, poot_status st,
                                 poot_kir_kernel **out_kernel) {
  *out_kernel = NULL;
  if (st) {
    poot_kir_builder_destroy(k->b);
    k->b = NULL;
    return st;
  }
  poot_kir_kernel *kern = NULL;
  st = poot_kir_builder_finish(k->b, &kern);
  k->b = NULL;
  POOT_TRY(st);
  st = poot_kir_verify(kern, pl->t);
  if (st) {
    poot_kir_kernel_destroy(kern);
    return st;
  }
  *out_kernel = kern;
  return NULL;
}

static poot_status build_group(pc_planner *pl, const pc_group *g, pc_kctx *k,
                               poot_kir_kernel **out_kernel, uint32_t grid[3], const char **mode) {
  *out_kernel = NULL;
  char name[32];
  snprintf(name, sizeof name, "poot_%s", kind_name(g->kind));
  poot_kir_kernel_desc d;
  memset(&d, 0, sizeof d);
  d.name = name;
  d.workgroup_size[0] = poot__cc_group_wg(pl, g);
  d.workgroup_size[1] = d.workgroup_size[2] = 1;
  d.subgroup_size = (g->kind == PG_CONTRACT || g->kind == PG_ATTENTION) && pl->t->subgroup_ops
                        ? pl->t->subgroup_size
                        : 0;
  POOT_TRY(poot_kir_builder_create(&d, &k->b));
  poot_status st = run_template(k, g, grid, mode);
  return finish_kernel(pl, k, st, out_kernel);
}

static bool overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
  return a0 < b1 && b0 < a1;
}

static int cmp_size_desc(const void *a, const void *b, void *ctx) {
  const poot_plan_temp *t = ctx;
  uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
  if (t[ia].size != t[ib].size) return t[ia].size > t[ib].size ? -1 : 1;
  return ia < ib ? -1 : ia > ib;
}

/* Greedy interval placement: each temporary goes to the lowest aligned
 * offset that overlaps no already placed temporary whose lifetime overlaps
 * its own. */
static uint64_t place_temps(poot_plan_temp *t, uint32_t n) {
  uint32_t *ord = poot_malloc((n + 1) * sizeof *ord);
  bool *placed = poot_calloc(n + 1, 1);
  uint64_t peak = 0;
  if (!ord || !placed) {
    poot_free(ord);
    poot_free(placed);
    /* fall back to no sharing */
    for (uint32_t i = 0; i < n; i++) {
      t[i].offset = peak;
      peak += (t[i].size + 255) & ~(uint64_t)255;
    }
    return peak;
  }
  for (uint32_t i = 0; i < n; i++) ord[i] = i;
  qsort_r(ord, n, sizeof *ord, cmp_size_desc, t);
  for (uint32_t q = 0; q < n; q++) {
    poot_plan_temp *x = &t[ord[q]];
    uint64_t off = 0;
    for (;;) {
      bool moved = false;
      for (uint32_t j = 0; j < n; j++) {
        if (!placed[j]) continue;
        const poot_plan_temp *y = &t[j];
        if (!overlap(x->first, (uint64_t)x->last + 1, y->first, (uint64_t)y->last + 1)) continue;
        if (overlap(off, off + x->size, y->offset, y->offset + y->size)) {
          off = (y->offset + y->size + 255) & ~(uint64_t)255;
          moved = true;
        }
      }
      if (!moved) break;
    }
    x->offset = off;
    placed[ord[q]] = true;
    if (off + x->size > peak) peak = off + x->size;
  }
  poot_free(ord);
  poot_free(placed);
  return peak;
}

void poot_plan_destroy(poot_plan *plan) {
  if (!plan) return;
  for (uint32_t i = 0; i < plan->kernel_count; i++) poot_kir_kernel_destroy(plan->kernels[i]);
  plan_impl *im = plan->impl_;
  if (im) {
    poot_arena_deinit(&im->arena);
    poot_free(im);
  }
  poot_free(plan);
}

typedef struct grec {
  poot_kir_kernel *kern; /* standalone kernel (NULL once used) */
  uint32_t grid[3];
  pc_kctx k; /* bindings, push temps, reads (memo pointer unused) */
  uint32_t nwtemp;
  uint32_t wtemp[2];
  uint32_t wbuf; /* dense buffer written, or UINT32_MAX */
  uint32_t level;
  char what[96];
  /* in-place dynamic_update_slice: per dim, the constant start (or -1 when
   * it is read at run time) and the window size; lets two updates of one
   * buffer share a level when their windows are provably disjoint */
  bool dead;    /* a reduction made local: computed inside its readers */
  bool catpart; /* a part of the wide concat `cat` (parts write disjoint elements) */
  poot_value cat;
  bool dus;
  uint32_t rank;
  int64_t start[POOT_MAX_RANK];
  int64_t size[POOT_MAX_RANK];
} grec;

static void kctx_init(pc_kctx *k, pc_planner *pl, pc_memo *memo, const pc_group *g) {
  memset(k, 0, sizeof *k);
  k->pl = pl;
  k->t = pl->t;
  k->memo = memo;
  k->frac = 1.0;
  k->computing = g->dest_buffer == UINT32_MAX ? g->dest : POOT_VALUE_NONE;
}

static void rec_fill(pc_planner *pl, const pc_group *g, const pc_kctx *k, grec *r,
                     const char *mode) {
  r->k = *k;
  r->k.memo = NULL;
  r->k.b = NULL;
  r->wbuf = g->dest_buffer;
  r->catpart = g->cat_hi != 0;
  r->cat = g->out;
  poot_value dests[2] = {g->dest, g->out2};
  if ((g->kind == PG_ATTENTION || g->kind == PG_TOPK || g->kind == PG_CONTRACT ||
       g->kind == PG_GEMM_X || g->kind == PG_GEMM_W) &&
      g->aux_temp != UINT32_MAX)
    r->wtemp[r->nwtemp++] = g->aux_temp;
  for (int q = 0; q < 2; q++) {
    if (dests[q] == POOT_VALUE_NONE) continue;
    const pc_value *pv = &pl->v[dests[q]];
    if (pv->hold == PC_TEMP) r->wtemp[r->nwtemp++] = pv->temp;
    if (pv->hold == PC_DENSE && r->wbuf == UINT32_MAX) r->wbuf = pv->buffer;
  }
  snprintf(r->what, sizeof r->what, "%s %%%u%s%s", kind_name(g->kind), g->out,
           *mode || g->cat_hi ? " " : "", g->cat_hi ? "part" : mode);
  if (g->kind == PG_DUS) {
    const poot_node *n = pl->v[g->out].node;
    const poot_shape *us = &poot__cc_type(pl, pl->alias[n->operands[1]])->shape;
    r->dus = true;
    r->rank = us->rank;
    for (uint32_t d = 0; d < us->rank; d++) {
      r->size[d] = us->dims[d];
      r->start[d] = -1;
      const pc_value *sv = &pl->v[pl->alias[n->operands[2 + d]]];
      if (sv->hold == PC_CONSTLIT && sv->node->constant) {
        const poot_tensor *c = sv->node->constant;
        int64_t x = 0;
        if (c->type.dtype == POOT_DTYPE_I32) {
          int32_t v;
          memcpy(&v, c->data, 4);
          x = v;
        } else if (c->type.dtype == POOT_DTYPE_I64) {
          memcpy(&x, c->data, 8);
        } else {
          continue;
        }
        r->start[d] = x;
      }
    }
  }
}

/* Two in-place updates whose windows differ in a dimension with constant
 * starts never touch the same element. */
static bool disjoint_dus(const grec *a, const grec *b) {
  if (!a->dus || !b->dus || a->rank != b->rank || a->wbuf != b->wbuf) return false;
  for (uint32_t d = 0; d < a->rank; d++) {
    if (a->start[d] < 0 || b->start[d] < 0) continue;
    if (a->start[d] + a->size[d] <= b->start[d] || b->start[d] + b->size[d] <= a->start[d])
      return true;
  }
  return false;
}

static bool binds(const grec *r, uint32_t buf) {
  for (uint32_t i = 0; i < r->k.nbind; i++)
    if (r->k.bind_buf[i] == buf) return true;
  return false;
}
static bool touches_temp(const grec *r, uint32_t t) {
  for (uint32_t i = 0; i < r->k.npush; i++)
    if (r->k.push_temp[i] == t) return true;
  return false;
}

/* Must j run after i? (RAW, WAR and WAW on temps and dense buffers.) */
static bool depends(const grec *i, const grec *j) {
  if (i->catpart && j->catpart && i->cat == j->cat) return false; /* disjoint parts */
  for (uint32_t q = 0; q < i->nwtemp; q++)
    if (touches_temp(j, i->wtemp[q])) return true;
  for (uint32_t q = 0; q < j->nwtemp; q++)
    if (touches_temp(i, j->wtemp[q])) return true;
  if (disjoint_dus(i, j)) return false;
  if (i->wbuf != UINT32_MAX && binds(j, i->wbuf)) return true;
  if (j->wbuf != UINT32_MAX && binds(i, j->wbuf)) return true;
  return false;
}

static poot_status build_batch(pc_planner *pl, grec *recs, const uint32_t *idx, uint32_t n,
                               pc_memo *memo, pc_kctx *k, poot_kir_kernel **out, uint32_t grid[3]) {
  *out = NULL;
  const pc_group *g0 = poot_vec_at(&pl->groups, idx[0]);
  kctx_init(k, pl, memo, g0);
  bool any_contract = false;
  for (uint32_t q = 0; q < n; q++)
    if (poot__cc_group_wg(pl, poot_vec_at(&pl->groups, idx[q])) != pl->wg)
      return poot_status_make(POOT_UNSUPPORTED,
                              "compile: a top_k stage has its own workgroup size");
  for (uint32_t q = 0; q < n; q++)
    if (((const pc_group *)poot_vec_at(&pl->groups, idx[q]))->kind == PG_CONTRACT ||
        ((const pc_group *)poot_vec_at(&pl->groups, idx[q]))->kind == PG_ATTENTION)
      any_contract = true;
  poot_kir_kernel_desc d;
  memset(&d, 0, sizeof d);
  d.name = "poot_batch";
  d.workgroup_size[0] = pl->wg;
  d.workgroup_size[1] = d.workgroup_size[2] = 1;
  d.subgroup_size = any_contract && pl->t->subgroup_ops ? pl->t->subgroup_size : 0;
  POOT_TRY(poot_kir_builder_create(&d, &k->b));
  poot_status st = NULL;
  uint32_t base = 0;
  for (uint32_t q = 0; q < n && !st; q++) {
    const pc_group *g = poot_vec_at(&pl->groups, idx[q]);
    const grec *r = &recs[idx[q]];
    uint32_t cnt = r->grid[0] * r->grid[1] * r->grid[2];
    poot_kir_value lin, ge, lt, cond;
    k->wg_base = 0;
    k->tag = q;
    k->computing = g->dest_buffer == UINT32_MAX ? g->dest : POOT_VALUE_NONE;
    st = poot__cc_linear_workgroup(k, &lin);
    if (!st) st = poot__cc_bin_c(k, POOT_KIR_OP_GE, lin, base, &ge);
    if (!st) st = poot__cc_bin_c(k, POOT_KIR_OP_LT, lin, base + cnt, &lt);
    if (!st) st = poot__cc_bin(k, POOT_KIR_OP_AND, ge, lt, &cond);
    if (!st) st = poot_kir_if_begin(k->b, cond);
    if (st) break;
    k->wg_base = base;
    k->nlocal = 0; /* each group computes its own local reductions */
    poot__cc_scope_push(k);
    uint32_t gg[3];
    const char *mode = "";
    st = run_template(k, g, gg, &mode);
    poot__cc_scope_pop(k);
    if (!st) st = poot_kir_end(k->b);
    base += cnt;
  }
  poot_kir_kernel *kern = NULL;
  POOT_TRY(finish_kernel(pl, k, st, &kern));
  const uint64_t window = poot_kir_kernel_shared_offset(kern, kern->shared_count);
  if (window > pl->t->shared_memory_bytes) {
    poot_kir_kernel_destroy(kern);
    return poot_status_make(POOT_UNSUPPORTED,
                            "compile: a batch of %u kernels needs %llu bytes of shared memory, "
                            "past the static %u",
                            n, (unsigned long long)window, pl->t->shared_memory_bytes);
  }
  poot__cc_grid_for(base, grid);
  *out = kern;
  return NULL;
}

/* Appends a dispatch of `kern` (consumed: deduplicated into kernels) for
 * the groups idx[0..n). */
static poot_status add_dispatch(pc_planner *pl, poot_vec *kernels, poot_vec *dispatches,
                                poot_vec *pushes, poot_kir_kernel *kern, const uint32_t grid[3],
                                const pc_kctx *k, grec *recs, const uint32_t *idx, uint32_t n) {
  uint32_t ki = (uint32_t)kernels->len;
  for (size_t q = 0; q < kernels->len; q++) {
    poot_kir_kernel *o = ((poot_kir_kernel **)kernels->data)[q];
    if (poot_hash128_equal(o->hash128, kern->hash128) && poot_kir_kernel_same(o, kern)) {
      ki = (uint32_t)q;
      break;
    }
  }
  if (ki == kernels->len) {
    poot_status st = poot_vec_push(kernels, &kern);
    if (st) {
      poot_kir_kernel_destroy(kern);
      return st;
    }
  } else {
    poot_kir_kernel_destroy(kern);
  }
  poot_plan_dispatch d;
  memset(&d, 0, sizeof d);
  d.kernel = ki;
  memcpy(d.grid, grid, sizeof d.grid);
  d.binding_count = k->nbind;
  memcpy(d.bindings, k->bind_buf, k->nbind * sizeof(uint32_t));
  d.push_count = k->npush;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  uint32_t di = (uint32_t)dispatches->len;
  poot_plan_temp *temps = pl->temps.data;
  const poot_compile_options *opt = pl->opt;
  for (uint32_t q = 0; q < n; q++) {
    grec *r = &recs[idx[q]];
    poot_strbuf_printf(&sb, q ? " + %s" : "%s", r->what);
    for (uint32_t w = 0; w < r->nwtemp; w++) {
      poot_plan_temp *tt = &temps[r->wtemp[w]];
      if (tt->first > di) tt->first = di;
      if (tt->last < di) tt->last = di;
    }
    for (uint32_t w = 0; w < r->k.nreads; w++)
      if (temps[r->k.reads[w]].last < di) temps[r->k.reads[w]].last = di;
    uint64_t bytes = 0;
    for (uint32_t b = 0; b < r->k.nbind; b++) {
      const poot_plan_buffer *pb = poot_vec_at(&pl->buffers, r->k.bind_buf[b]);
      if (pb->cls == POOT_PLAN_BUFFER_TEMP || pb->cls == POOT_PLAN_BUFFER_SLOT) continue;
      uint64_t part = (uint64_t)((double)pb->size * r->k.buf_frac[b] + 0.5);
      bytes += part;
      if (pb->cls == POOT_PLAN_BUFFER_WEIGHT) d.weight_bytes += part;
      if (pb->cls == POOT_PLAN_BUFFER_STATE) d.state_bytes += part;
      if (pb->cls == POOT_PLAN_BUFFER_STATE && r->k.buf_frac[b] >= 1.0) d.state_whole_bytes += part;
    }
    for (uint32_t w = 0; w < r->k.npush; w++) bytes += temps[r->k.push_temp[w]].size;
    d.bytes += bytes;
    d.flops += r->k.flops;
  }
  poot_status named = poot_strbuf_status(&sb);
  d.what = named ? NULL : poot_arena_strdup(&pl->arena, sb.data ? sb.data : "");
  poot_strbuf_deinit(&sb);
  if (named) return named;
  if (!d.what)
    return poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory naming a dispatch");
  d.weight_us =
      fmax((double)d.bytes / opt->bytes_per_us, (double)d.flops / opt->flops_per_us) + 1.0;
  POOT_TRY(poot_vec_push(dispatches, &d));
  return poot_vec_push(pushes, k->push_temp);
}

/* One dispatch for the groups idx[0..n) of a level when they fit one kernel;
 * otherwise the two halves, recursively (a single group uses its own
 * kernel). */
static poot_status emit_level(pc_planner *pl, poot_vec *kernels, poot_vec *dispatches,
                              poot_vec *pushes, grec *recs, const uint32_t *idx, uint32_t n,
                              pc_memo *memo, bool no_batching) {
  if (n == 0) return NULL;
  if (n > 1 && !no_batching && pl->t->simd_cpu) {
    /* On a SIMD CPU (lavapipe) attention groups run alone: a kernel holding
     * B of them ran each B times slower (8 sequences' attentions in one
     * dispatch: 14.5 ms a layer, against 0.2 ms each alone on stories260K),
     * and a dispatch costs little there. The rest still share dispatches. */
    uint32_t na = 0;
    for (uint32_t q = 0; q < n; q++)
      na += ((const pc_group *)poot_vec_at(&pl->groups, idx[q]))->kind == PG_ATTENTION;
    if (na > 0) {
      uint32_t *part = poot_calloc(n, sizeof *part);
      if (!part) return poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory");
      uint32_t m = 0;
      for (uint32_t q = 0; q < n; q++)
        if (((const pc_group *)poot_vec_at(&pl->groups, idx[q]))->kind != PG_ATTENTION)
          part[m++] = idx[q];
      poot_status st = emit_level(pl, kernels, dispatches, pushes, recs, part, m, memo, false);
      for (uint32_t q = 0; q < n && !st; q++)
        if (((const pc_group *)poot_vec_at(&pl->groups, idx[q]))->kind == PG_ATTENTION)
          st = emit_level(pl, kernels, dispatches, pushes, recs, &idx[q], 1, memo, false);
      poot_free(part);
      return st;
    }
  }
  if (n == 1 || no_batching) {
    for (uint32_t q = 0; q < n; q++) {
      grec *r = &recs[idx[q]];
      poot_kir_kernel *kern = r->kern;
      r->kern = NULL;
      POOT_TRY(
          add_dispatch(pl, kernels, dispatches, pushes, kern, r->grid, &r->k, recs, &idx[q], 1));
    }
    return NULL;
  }
  poot_kir_kernel *mk = NULL;
  pc_kctx mkc;
  uint32_t mgrid[3] = {1, 1, 1};
  poot_status bs = build_batch(pl, recs, idx, n, memo, &mkc, &mk, mgrid);
  if (!bs) {
    POOT_TRY(add_dispatch(pl, kernels, dispatches, pushes, mk, mgrid, &mkc, recs, idx, n));
    for (uint32_t q = 0; q < n; q++) {
      poot_kir_kernel_destroy(recs[idx[q]].kern);
      recs[idx[q]].kern = NULL;
    }
    return NULL;
  }
  if (getenv("POOT_COMPILE_DEBUG"))
    fprintf(stderr, "batch of %u split: %s\n", n, poot_status_message(bs));
  poot_status_free(bs);
  POOT_TRY(emit_level(pl, kernels, dispatches, pushes, recs, idx, n / 2, memo, no_batching));
  return emit_level(pl, kernels, dispatches, pushes, recs, idx + n / 2, n - n / 2, memo,
                    no_batching);
}

/* The planner of graph under options opt (its defaults filled): the
 * workgroup size within the target's limits, empty tables. */
static void planner_init(pc_planner *pl, const poot_graph *graph, const poot_compile_options *opt) {
  const poot_kir_target *t = opt->target;
  memset(pl, 0, sizeof *pl);
  pl->g = graph;
  pl->opt = opt;
  /* The templates budget shared_memory_bytes (PTX: 48 KiB of static
   * .shared); the GEMM on matrix fragments alone also takes the opt-in
   * amount (poot__cc_gemm_shared_budget), which the planner's copy of the
   * target keeps for the verifier unless static-shared. A batch of kernels
   * stays within shared_memory_bytes (build_batch): its window would hold
   * every member's workgroups to the largest one's occupancy. */
  pl->own = *t;
  if (opt->shared_memory_static) pl->own.shared_memory_optin_bytes = 0;
  pl->t = &pl->own;
  uint32_t wg = opt->workgroup_size ? opt->workgroup_size : 256;
  if (wg > t->max_workgroup_size) wg = t->max_workgroup_size;
  if (wg > t->max_workgroup_dims[0]) wg = t->max_workgroup_dims[0];
  pl->wg = wg;
  pl->out_buffer = UINT32_MAX;
  poot_arena_init(&pl->arena, 0);
  poot_vec_init(&pl->buffers, sizeof(poot_plan_buffer));
  poot_vec_init(&pl->slots, sizeof(poot_plan_slot));
  poot_vec_init(&pl->temps, sizeof(poot_plan_temp));
  poot_vec_init(&pl->groups, sizeof(pc_group));
  poot_vec_init(&pl->order, sizeof(const poot_node *));
  poot_vec_init(&pl->env_buffers, sizeof(uint32_t));
}

static void planner_deinit(pc_planner *pl) {
  poot_vec_deinit(&pl->buffers);
  poot_vec_deinit(&pl->slots);
  poot_vec_deinit(&pl->temps);
  poot_vec_deinit(&pl->groups);
  poot_vec_deinit(&pl->order);
  poot_vec_deinit(&pl->env_buffers);
  poot_arena_deinit(&pl->arena);
}

/* Phase 1: every group on its own (reads, writes, bindings, grid). */
static poot_status build_groups(pc_planner *pl, grec *recs, pc_memo *memo) {
  for (size_t gi = 0; gi < pl->groups.len; gi++) {
    const pc_group *g = poot_vec_at(&pl->groups, gi);
    grec *r = &recs[gi];
    pc_kctx k;
    kctx_init(&k, pl, memo, g);
    const char *mode = "";
    poot_status st = build_group(pl, g, &k, &r->kern, r->grid, &mode);
    if (st) {
      poot_status wrapped =
          poot_status_make(poot_status_code_of(st), "compile: group %zu (%s of %%%u): %s", gi,
                           kind_name(g->kind), g->out, poot_status_message(st));
      poot_status_free(st);
      return wrapped;
    }
    rec_fill(pl, g, &k, r, mode);
  }
  return NULL;
}

static bool rec_reads(const grec *r, uint32_t ti) {
  bool reads = false;
  for (uint32_t q = 0; q < r->k.nreads; q++)
    if (r->k.reads[q] == ti) reads = true;
  return reads;
}

/* Whether group g computes a small reduction that may be made local: one
 * f32/i32/u32 root of at most 4 elements, in a temporary that is no result,
 * over a contraction long enough to run cooperatively anyway (the combine
 * reassociates, like the subgroup mode). */
static bool local_candidate(pc_planner *pl, const pc_group *g) {
  if (g->kind != PG_CONTRACT || g->nroots != 1 || g->out != g->roots[0] || g->nlocal) return false;
  poot_value R = g->out;
  pc_value *pr = &pl->v[R];
  if (pr->hold != PC_TEMP || pr->result || pr->node->op != POOT_OP_REDUCE) return false;
  poot_reduce_kind rk = pr->node->attrs.reduce_kind;
  poot_dtype acc = pr->node->attrs.dtype;
  if (rk == POOT_REDUCE_ARGMAX ||
      (acc != POOT_DTYPE_F32 && acc != POOT_DTYPE_I32 && acc != POOT_DTYPE_U32))
    return false;
  if (poot__cc_elems(&poot__cc_type(pl, R)->shape) > 4) return false;
  const poot_node *rn = pr->node;
  const poot_shape *xs = &poot__cc_type(pl, pl->alias[rn->operands[0]])->shape;
  int64_t clen = 1;
  for (uint32_t q = 0; q < rn->attrs.num_dims; q++) clen *= xs->dims[rn->attrs.dims[q]];
  uint32_t cmin = pl->opt->coop_min ? pl->opt->coop_min : 64;
  return clen >= (int64_t)cmin;
}

/* Phase 1b: a small reduction (RMSNorm statistics: a few outputs) read
 * only by pointwise and contraction groups is recomputed by each workgroup
 * of its readers (poot__cc_local_prologue) instead of taking a dispatch of
 * its own; its readers are rebuilt. */
static poot_status localize_reductions(pc_planner *pl, grec *recs, pc_memo *memo) {
  size_t ng = pl->groups.len;
  for (size_t gi = 0; gi < ng; gi++) {
    pc_group *g = poot_vec_at(&pl->groups, gi);
    if (!local_candidate(pl, g)) continue;
    poot_value R = g->out;
    pc_value *pr = &pl->v[R];
    uint32_t ti = pr->temp;
    bool ok = true;
    uint32_t nreaders = 0;
    for (size_t j = 0; j < ng && ok; j++) {
      if (j == gi || recs[j].dead || !rec_reads(&recs[j], ti)) continue;
      const pc_group *gj = poot_vec_at(&pl->groups, j);
      if ((gj->kind != PG_POINTWISE && gj->kind != PG_CONTRACT) || gj->nlocal >= 4) ok = false;
      nreaders++;
    }
    if (!ok || !nreaders) continue;
    pr->hold = PC_LOCAL;
    recs[gi].dead = true;
    poot_kir_kernel_destroy(recs[gi].kern);
    recs[gi].kern = NULL;
    ((poot_plan_temp *)pl->temps.data)[ti].size = 4;
    for (size_t j = 0; j < ng; j++) {
      if (j == gi || recs[j].dead || !rec_reads(&recs[j], ti)) continue;
      pc_group *gj = poot_vec_at(&pl->groups, j);
      gj->locals[gj->nlocal++] = R;
      poot_kir_kernel_destroy(recs[j].kern);
      memset(&recs[j], 0, sizeof recs[j]);
      pc_kctx k;
      kctx_init(&k, pl, memo, gj);
      const char *mode = "";
      POOT_TRY(build_group(pl, gj, &k, &recs[j].kern, recs[j].grid, &mode));
      rec_fill(pl, gj, &k, &recs[j], mode);
    }
  }
  return NULL;
}

/* Phase 2: levels (a group comes after every group it depends on); the
 * highest level. */
static uint32_t assign_levels(grec *recs, size_t ng) {
  uint32_t max_level = 0;
  for (size_t j = 0; j < ng; j++) {
    uint32_t lv = 0;
    if (recs[j].dead) {
      recs[j].level = UINT32_MAX;
      continue;
    }
    for (size_t i = 0; i < j; i++)
      if (!recs[i].dead && depends(&recs[i], &recs[j]) && recs[i].level + 1 > lv)
        lv = recs[i].level + 1;
    recs[j].level = lv;
    if (lv > max_level) max_level = lv;
  }
  return max_level;
}

/* Phase 3: one dispatch per level (independent groups batched into one
 * kernel, each on its own range of workgroups), split in halves when a
 * batch exceeds a target limit (bindings, push constants, shared memory). */
static poot_status emit_levels(pc_planner *pl, poot_vec *kernels, poot_vec *dispatches,
                               poot_vec *pushes, grec *recs, uint32_t max_level, pc_memo *memo) {
  size_t ng = pl->groups.len;
  uint32_t *batch = poot_calloc(ng + 1, sizeof *batch);
  if (!batch) return poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory");
  poot_status st = NULL;
  for (uint32_t lv = 0; lv <= max_level && !st && ng; lv++) {
    uint32_t nb = 0;
    for (size_t j = 0; j < ng; j++)
      if (recs[j].level == lv) batch[nb++] = (uint32_t)j;
    if (!nb) continue;
    st = emit_level(pl, kernels, dispatches, pushes, recs, batch, nb, memo, pl->opt->no_batching);
  }
  poot_free(batch);
  return st;
}

/* A copy of a vector's elements in arena A (NULL when out of memory). */
static void *move_array(poot_arena *A, const poot_vec *vec, size_t elem, uint32_t *out_count) {
  *out_count = (uint32_t)vec->len;
  void *p = poot_arena_alloc(A, vec->len * elem + 1, 16);
  if (p && vec->len) memcpy(p, vec->data, vec->len * elem);
  return p;
}

poot_status poot_plan_create(const poot_graph *graph, const poot_compile_options *options,
                             poot_plan **out_plan) {
  *out_plan = NULL;
  if (!graph || !options || !options->target)
    return poot_status_make(POOT_INVALID_ARGUMENT, "poot_plan_create: graph and target required");
  poot_compile_options opt = *options;
  const poot_kir_target *t = opt.target;
  if (!opt.bytes_per_us) opt.bytes_per_us = 2e6;
  if (!opt.flops_per_us) opt.flops_per_us = 5e7;
  if (!opt.stage_budget_us && t->watchdog_ms) opt.stage_budget_us = t->watchdog_ms * 500.0;
  pc_planner pl;
  planner_init(&pl, graph, &opt);
  poot_vec kernels, dispatches, pushes;
  poot_vec_init(&kernels, sizeof(poot_kir_kernel *));
  poot_vec_init(&dispatches, sizeof(poot_plan_dispatch));
  poot_vec_init(&pushes, sizeof(uint32_t) * POOT_PLAN_MAX_PUSH);
  poot_plan *plan = NULL;
  pc_memo *memo = poot_malloc(PC_MAX_MEMO * sizeof *memo);
  poot_status st = memo ? NULL : poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory");
  if (!st) st = poot__cc_plan_build(&pl, graph);

  poot_plan_temp *temps = NULL;
  size_t ng = pl.groups.len;
  grec *recs = poot_calloc(ng + 1, sizeof *recs);
  if (!recs && !st) st = poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory");
  if (!st) st = build_groups(&pl, recs, memo);
  if (!st && !opt.no_local_reductions) st = localize_reductions(&pl, recs, memo);
  if (!st)
    st = emit_levels(&pl, &kernels, &dispatches, &pushes, recs, assign_levels(recs, ng), memo);
  for (size_t j = 0; recs && j < ng; j++) poot_kir_kernel_destroy(recs[j].kern);
  poot_free(recs);
  poot_free(memo);
  temps = pl.temps.data;
  uint32_t ntemps = (uint32_t)pl.temps.len;
  for (uint32_t i = 0; i < ntemps; i++) {
    if (temps[i].first == UINT32_MAX) temps[i].first = 0;
    if (temps[i].last < temps[i].first) temps[i].last = temps[i].first;
  }
  uint64_t arena = st ? 0 : place_temps(temps, ntemps);
  if (!st) {
    plan_impl *im = poot_calloc(1, sizeof *im);
    plan = poot_calloc(1, sizeof *plan);
    if (!im || !plan) {
      poot_free(im);
      poot_free(plan);
      plan = NULL;
      st = poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory");
    } else {
      im->arena = pl.arena; /* the planner's arena moves into the plan */
      memset(&pl.arena, 0, sizeof pl.arena);
      plan->impl_ = im;
      poot_arena *A = &im->arena;
      plan->target = *t;
      poot_plan_buffer *bufs = pl.buffers.data;
      bufs[0].size = (arena + 255) & ~(uint64_t)255;
      if (!bufs[0].size) bufs[0].size = 256;
      bufs[1].size = pl.slot_words ? (uint64_t)pl.slot_words * 4 : 4;
      bufs[1].type = poot_type_make(POOT_DTYPE_U32, 1, (int64_t[]){(int64_t)(bufs[1].size / 4)});
      bufs[0].type = poot_type_make(POOT_DTYPE_U32, 1, (int64_t[]){(int64_t)(bufs[0].size / 4)});
      plan->buffers = move_array(A, &pl.buffers, sizeof(poot_plan_buffer), &plan->buffer_count);
      plan->slots = move_array(A, &pl.slots, sizeof(poot_plan_slot), &plan->slot_count);
      plan->temps = move_array(A, &pl.temps, sizeof(poot_plan_temp), &plan->temp_count);
      plan->dispatches =
          move_array(A, &dispatches, sizeof(poot_plan_dispatch), &plan->dispatch_count);
      plan->env_buffers = move_array(A, &pl.env_buffers, sizeof(uint32_t), &plan->env_count);
      plan->kernel_count = (uint32_t)kernels.len;
      plan->kernels = poot_arena_alloc(A, kernels.len * sizeof(poot_kir_kernel *) + 1, 16);
      if (plan->kernels && kernels.len)
        memcpy(plan->kernels, kernels.data, kernels.len * sizeof(poot_kir_kernel *));
      if (plan->kernels)
        kernels.len = 0; /* the plan owns them now */
      else
        plan->kernel_count = 0;
      plan->output_buffer = pl.out_buffer;
      plan->state_count = poot_graph_state_count(graph);
      plan->state_buffers = poot_arena_alloc(A, (plan->state_count + 1) * sizeof(uint32_t), 4);
      /* Checked before the loops below write through them. */
      if (!plan->buffers || !plan->slots || !plan->temps || !plan->dispatches || !plan->kernels ||
          !plan->state_buffers || !plan->env_buffers)
        st = poot_status_make(POOT_OUT_OF_MEMORY, "compile: out of memory");
      if (!st) {
        for (uint32_t i = 0; plan->state_buffers && i < plan->state_count; i++) {
          poot_value s, nv;
          poot_graph_state_at(graph, i, &s, &nv);
          plan->state_buffers[i] = pl.v[pl.alias[s]].buffer;
        }
        /* push constants: word offsets of the temporaries */
        for (uint32_t i = 0; i < plan->dispatch_count; i++) {
          poot_plan_dispatch *d = &plan->dispatches[i];
          const uint32_t *pt = (const uint32_t *)pushes.data + (size_t)i * POOT_PLAN_MAX_PUSH;
          for (uint32_t q = 0; q < d->push_count; q++)
            d->push[q] = (uint32_t)(temps[pt[q]].offset / 4);
        }
        /* stages */
        poot_plan_stager stager = {.budget_us = opt.stage_budget_us};
        for (uint32_t i = 0; i < plan->dispatch_count; i++) {
          poot_plan_dispatch *d = &plan->dispatches[i];
          d->stage = poot_plan_stage_next(&stager, d->weight_us);
          plan->bytes_per_step += d->bytes;
        }
        plan->stage_count = stager.stage + 1;
        for (uint32_t i = 0; i < plan->buffer_count; i++)
          if (plan->buffers[i].cls == POOT_PLAN_BUFFER_WEIGHT)
            plan->weight_bytes += plan->buffers[i].size;
      }
    }
  }
  for (size_t q = 0; q < kernels.len; q++)
    poot_kir_kernel_destroy(((poot_kir_kernel **)kernels.data)[q]);
  poot_vec_deinit(&kernels);
  poot_vec_deinit(&dispatches);
  poot_vec_deinit(&pushes);
  planner_deinit(&pl);
  if (st) {
    poot_plan_destroy(plan);
    return st;
  }
  *out_plan = plan;
  return NULL;
}

void poot_plan_print(const poot_plan *p, poot_strbuf *sb) {
  poot_strbuf_printf(
      sb,
      "plan target=%s dispatches=%u kernels=%u stages=%u bytes_per_step=%llu weight_bytes=%llu\n",
      p->target.name ? p->target.name : "?", p->dispatch_count, p->kernel_count, p->stage_count,
      (unsigned long long)p->bytes_per_step, (unsigned long long)p->weight_bytes);
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const poot_plan_buffer *b = &p->buffers[i];
    poot_strbuf_printf(sb, "buffer %u %s \"%s\" ", i, poot_plan_buffer_class_name(b->cls), b->name);
    poot_type_format(sb, &b->type);
    poot_strbuf_printf(sb, " size=%llu align=%u\n", (unsigned long long)b->size, b->align);
  }
  for (uint32_t i = 0; i < p->slot_count; i++) {
    poot_strbuf_printf(sb, "slot \"%s\" ", p->slots[i].name);
    poot_type_format(sb, &p->slots[i].type);
    poot_strbuf_printf(sb, " word=%u\n", p->slots[i].word_offset);
  }
  for (uint32_t i = 0; i < p->temp_count; i++) {
    const poot_plan_temp *t = &p->temps[i];
    if (t->value == POOT_VALUE_NONE)
      poot_strbuf_puts(sb, "temp partials ");
    else
      poot_strbuf_printf(sb, "temp %%%u ", t->value);
    poot_type_format(sb, &t->type);
    poot_strbuf_printf(sb, " offset=%llu size=%llu live=[%u,%u]\n", (unsigned long long)t->offset,
                       (unsigned long long)t->size, t->first, t->last);
  }
  for (uint32_t i = 0; i < p->kernel_count; i++)
    poot_strbuf_printf(sb, "kernel %u %s hash=%016llx threads=%u\n", i, p->kernels[i]->name,
                       (unsigned long long)p->kernels[i]->hash,
                       poot_kir_kernel_threads(p->kernels[i]));
  for (uint32_t i = 0; i < p->dispatch_count; i++) {
    const poot_plan_dispatch *d = &p->dispatches[i];
    poot_strbuf_printf(sb, "dispatch %u kernel=%u grid=[%u,%u,%u] bind=[", i, d->kernel, d->grid[0],
                       d->grid[1], d->grid[2]);
    for (uint32_t b = 0; b < d->binding_count; b++)
      poot_strbuf_printf(sb, b ? ",%u" : "%u", d->bindings[b]);
    poot_strbuf_puts(sb, "] push=[");
    for (uint32_t q = 0; q < d->push_count; q++)
      poot_strbuf_printf(sb, q ? ",%u" : "%u", d->push[q]);
    poot_strbuf_printf(sb, "] bytes=%llu flops=%llu weight_us=%.2f stage=%u ; %s\n",
                       (unsigned long long)d->bytes, (unsigned long long)d->flops, d->weight_us,
                       d->stage, d->what);
  }
}

poot_status poot_plan_render_kernel(const poot_plan *plan, uint32_t index,
                                    const poot_kir_target *target, poot_strbuf *out) {
  if (!plan || index >= plan->kernel_count)
    return poot_status_make(POOT_INVALID_ARGUMENT, "poot_plan_render_kernel: bad kernel index");
  if (!target) target = &plan->target;
  return poot_kir_render(plan->kernels[index], target, out);
}
