/* templates/scan.c — cumsum over long rows (docs/topk.md, "cumsum"): one
 * workgroup per row. Each thread sums a chunk of c = ⌈n / wg⌉ consecutive
 * elements in index order, a workgroup scan (Hillis–Steele, in shared
 * memory) gives every chunk the sum of those before it, and each thread
 * walks its chunk again from that prefix, writing the outputs. Integer sums
 * wrap, so they equal the oracle's serial order bit for bit; float sums
 * reassociate (tier 2: the error is within (2c + log2 wg + 1) · u · Σ|x| of
 * the prefix). Short rows, and accumulators other than f32/i32/u32, keep
 * the serial template (pointwise.c). */
#include <string.h>

#include "../compile_impl.h"

#define OP(x) POOT_KIR_OP_##x
/* Rows up to this length keep the serial template. */
#define SCAN_SERIAL_MAX 64
#define SCAN_WG_MAX 1024u

typedef struct scan {
  pc_kctx *k;
  const pc_group *g;
  poot_value x;
  poot_dtype xd, acc;
  uint32_t ax, n, c, wg;
  poot_shape rs; /* the shape without the axis */
  poot_kir_value lid, zero, row[PC_MAX_DIMS];
  uint32_t sh;   /* shared: the chunks' sums */
  uint32_t pacc; /* private: the running sum */
} scan;

uint32_t poot__cc_scan_wg(const pc_planner *pl, const poot_node *n) {
  const poot_type *xt = poot_graph_value_type(pl->g, pl->alias[n->operands[0]]);
  poot_dtype acc = n->attrs.dtype;
  if (acc != POOT_DTYPE_F32 && acc != POOT_DTYPE_I32 && acc != POOT_DTYPE_U32) return 0;
  if (n->attrs.axis < 0 || (uint32_t)n->attrs.axis >= xt->shape.rank) return 0;
  int64_t len = xt->shape.dims[n->attrs.axis];
  if (len <= SCAN_SERIAL_MAX || len >= 0x7fffffff) return 0;
  uint32_t cap = pl->t->max_workgroup_size < pl->t->max_workgroup_dims[0]
                     ? pl->t->max_workgroup_size
                     : pl->t->max_workgroup_dims[0];
  if (cap > SCAN_WG_MAX) cap = SCAN_WG_MAX;
  /* a CPU device: the plan's size (as top_k's pipeline) */
  if (pl->t->simd_cpu && cap > pl->wg) cap = pl->wg;
  if ((uint64_t)cap * 4 > pl->t->shared_memory_bytes) return 0;
  uint32_t wg = 32;
  while (wg < cap && wg < (uint64_t)len) wg *= 2;
  return wg > cap ? cap : wg;
}

/* The multi-index of element e (a u32 value) of this workgroup's row. */
static void scan_index(scan *s, poot_kir_value e, poot_kir_value *idx) {
  uint32_t r = s->rs.rank + 1;
  for (uint32_t d = 0, q = 0; d < r; d++) idx[d] = d == s->ax ? e : s->row[q++];
}

/* One walk over this thread's chunk: the running sum from the private
 * accumulator, stored at every element when `store`. */
static poot_status scan_walk(scan *s, bool store) {
  pc_kctx *k = s->k;
  poot_kir_value end, one, j, e, in, ec, idx[PC_MAX_DIMS], v, z, a, lin;
  POOT_TRY(poot__cc_u32(k, s->c, &end));
  POOT_TRY(poot__cc_u32(k, 1, &one));
  POOT_TRY(poot_kir_for_begin(k->b, s->zero, end, one, &j));
  poot__cc_scope_push(k);
  POOT_TRY(poot__cc_bin_c(k, OP(MUL), s->lid, s->c, &e));
  POOT_TRY(poot__cc_bin(k, OP(ADD), e, j, &e));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), e, s->n, &in));
  POOT_TRY(poot__cc_bin_c(k, OP(MIN), e, s->n - 1, &ec));
  scan_index(s, ec, idx);
  POOT_TRY(poot__cc_emit(k, s->x, idx, &v));
  POOT_TRY(poot__cc_convert(k, v, s->xd, s->acc, &v));
  POOT_TRY(poot__cc_const_of(k, s->acc, 0.0, 0, &z));
  POOT_TRY(poot_kir_select(k->b, in, v, z, &v));
  POOT_TRY(poot_kir_priv_load(k->b, s->pacc, 0, &a));
  POOT_TRY(poot__cc_accum(k, OP(ADD), s->acc, a, v, &a));
  POOT_TRY(poot_kir_priv_store(k->b, s->pacc, 0, a));
  if (store) {
    POOT_TRY(poot_kir_if_begin(k->b, in));
    scan_index(s, e, idx);
    POOT_TRY(poot__cc_linearize(k, idx, &poot__cc_type(k->pl, s->g->out)->shape, &lin));
    POOT_TRY(poot__cc_store_value(k, s->g->dest, lin, a));
    POOT_TRY(poot_kir_end(k->b));
  }
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}

/* Inclusive scan of sh[0, wg) (sum of the lower chunks first). */
static poot_status scan_shared(scan *s) {
  pc_kctx *k = s->k;
  for (uint32_t d = 1; d < s->wg; d *= 2) {
    poot_kir_value own, ge, src, other, z, r;
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, s->sh, s->lid, 1, &own));
    POOT_TRY(poot__cc_bin_c(k, OP(GE), s->lid, d, &ge));
    POOT_TRY(poot__cc_bin_c(k, OP(SUB), s->lid, d, &src));
    POOT_TRY(poot_kir_select(k->b, ge, src, s->zero, &src));
    POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, s->sh, src, 1, &other));
    POOT_TRY(poot__cc_const_of(k, s->acc, 0.0, 0, &z));
    POOT_TRY(poot_kir_select(k->b, ge, other, z, &other));
    POOT_TRY(poot_kir_barrier(k->b));
    POOT_TRY(poot__cc_accum(k, OP(ADD), s->acc, other, own, &r));
    POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, s->sh, s->lid, r));
    POOT_TRY(poot_kir_barrier(k->b));
  }
  return NULL;
}

static poot_status scan_body(scan *s) {
  pc_kctx *k = s->k;
  poot_kir_value z, w, pre, gt, prev;
  POOT_TRY(poot__cc_const_of(k, s->acc, 0.0, 0, &z));
  POOT_TRY(poot_kir_priv_store(k->b, s->pacc, 0, z));
  POOT_TRY(scan_walk(s, false));
  POOT_TRY(poot_kir_priv_load(k->b, s->pacc, 0, &w));
  POOT_TRY(poot_kir_store(k->b, POOT_KIR_SPACE_SHARED, s->sh, s->lid, w));
  POOT_TRY(poot_kir_barrier(k->b));
  POOT_TRY(scan_shared(s));
  /* this chunk's prefix: the inclusive sum of the chunks before it */
  POOT_TRY(poot__cc_bin_c(k, OP(GT), s->lid, 0, &gt));
  POOT_TRY(poot__cc_bin_c(k, OP(SUB), s->lid, 1, &prev));
  POOT_TRY(poot_kir_select(k->b, gt, prev, s->zero, &prev));
  POOT_TRY(poot_kir_load(k->b, POOT_KIR_SPACE_SHARED, s->sh, prev, 1, &pre));
  POOT_TRY(poot_kir_select(k->b, gt, pre, z, &pre));
  POOT_TRY(poot_kir_priv_store(k->b, s->pacc, 0, pre));
  return scan_walk(s, true);
}

poot_status poot__cc_tpl_cumsum(pc_kctx *k, const pc_group *g, uint32_t grid[3],
                                const char **mode) {
  pc_planner *pl = k->pl;
  const poot_node *n = pl->v[g->out].node;
  uint32_t wg = poot__cc_scan_wg(pl, n);
  if (!wg) return poot__cc_tpl_cumsum_serial(k, g, grid);
  *mode = "scan";
  scan s;
  memset(&s, 0, sizeof s);
  s.k = k;
  s.g = g;
  s.x = pl->alias[n->operands[0]];
  const poot_shape *xs = &poot__cc_type(pl, s.x)->shape;
  s.xd = poot__cc_type(pl, s.x)->dtype;
  s.acc = n->attrs.dtype;
  s.ax = (uint32_t)n->attrs.axis;
  s.n = (uint32_t)xs->dims[s.ax];
  s.wg = wg;
  s.c = (s.n + wg - 1) / wg;
  s.rs.rank = xs->rank - 1;
  for (uint32_t d = 0, q = 0; d < xs->rank; d++)
    if (d != s.ax) s.rs.dims[q++] = xs->dims[d];
  uint64_t rows = (uint64_t)poot__cc_elems(&s.rs);
  poot__cc_grid_for(rows, grid);
  if (rows == 0) return NULL;
  char nm[32];
  POOT_TRY(poot_kir_add_shared(k->b, poot__cc_name(k, "scs", nm, sizeof nm),
                               poot__cc_compute_scalar(s.acc), wg, &s.sh));
  POOT_TRY(poot_kir_add_private(k->b, poot__cc_name(k, "sca", nm, sizeof nm),
                                poot_kir_type_make(poot__cc_compute_scalar(s.acc), 1), 1, &s.pacc));
  poot_kir_value w, valid;
  POOT_TRY(poot__cc_linear_workgroup(k, &w));
  POOT_TRY(poot_kir_builtin_get(k->b, POOT_KIR_BUILTIN_LOCAL_INDEX, 0, &s.lid));
  POOT_TRY(poot__cc_u32(k, 0, &s.zero));
  POOT_TRY(poot__cc_bin_c(k, OP(LT), w, (uint32_t)rows, &valid));
  POOT_TRY(poot_kir_if_begin(k->b, valid));
  poot__cc_scope_push(k);
  if (s.rs.rank > 0) POOT_TRY(poot__cc_delinearize(k, w, &s.rs, s.row));
  k->flops += rows * s.n * 2;
  POOT_TRY(scan_body(&s));
  poot__cc_scope_pop(k);
  return poot_kir_end(k->b);
}
