/* KIR → WGSL compute text for WebGPU.
 *
 * How each construct maps (docs/kir-glsl-wgsl.md has the full table):
 *  - values are `let v<id>` where KIR defines them; 8/16-bit integers live in
 *    i32/u32 and are renormalised after each operation that can leave their
 *    range; f16 and bf16 live in f32 holding exactly representable values,
 *    and every f16 operation is rounded back with an exact integer routine.
 *  - buffers are storage arrays at @group(0) @binding(KIR binding number).
 *    32-bit elements are stored as themselves. f16 is `array<f16>` behind
 *    `enable f16;` when the target has f16 arithmetic (the device feature
 *    shader-f16); otherwise f16, bf16 and the 8/16-bit integers are packed
 *    into u32 words with bit manipulation. A buffer that is stored to packed
 *    or used by an atomic is an array of atomic<u32/i32/f32>, so packed
 *    stores (atomicAnd + atomicOr of the element's bits) never lose a
 *    neighbour's concurrent write.
 *  - PUSH params are members of a uniform struct at kernel->param_binding;
 *    SLOT params are loads.
 *  - check(cond, code) ORs 1 << code into element 0 of the error binding.
 *  - subgroup builtins and operations appear only when the target has them.
 * The output is a pure function of (kernel, target). */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "render_shader.h"
#include "render_shader_lib.h"

/* How a buffer or shared array is stored. */
enum { MEM_PLAIN = 0, MEM_F16 = 1, MEM_PACKED = 2 };

typedef struct wgsl_mem {
  uint8_t kind; /* MEM_* */
  bool atomic;  /* declared as array<atomic<...>> */
  bool written;
} wgsl_mem;

/* WGSL's own state: how each buffer and shared array is stored, and the
 * builtins the entry point declares. */
typedef struct wgsl_state {
  poot__shader sh; /* first: the writer's state */
  bool enable_f16, subgroups;
  bool sg_lane, sg_size; /* subgroup builtins the kernel reads */
  wgsl_mem *bind;        /* per binding position */
  wgsl_mem *shared;      /* per shared array */
} wgsl_state;

static const poot__shader_lang k_wgsl;

/* The WGSL state of a rendering: checked, the writer's base is its first member. */
static wgsl_state *wgsl_of(poot__shader *c) {
  assert(c->lang == &k_wgsl);
  return (wgsl_state *)c;
}

static wgsl_mem *mem_of(poot__shader *c, poot_kir_space space, uint32_t ref) {
  return space == POOT_KIR_SPACE_SHARED ? &wgsl_of(c)->shared[ref] : &wgsl_of(c)->bind[ref];
}

/* ------------------------------------------------------------------ types */

static const char *reg_scalar(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_BOOL:
      return "bool";
    case POOT_KIR_I8:
    case POOT_KIR_I16:
    case POOT_KIR_I32:
      return "i32";
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      return "u32";
    case POOT_KIR_I64:
      return "i64";
    default:
      return "f32";
  }
}

static const char *tname(poot_kir_type t, char *buf, size_t n) {
  if (t.lanes <= 1)
    snprintf(buf, n, "%s", reg_scalar(t.scalar));
  else
    snprintf(buf, n, "vec%u<%s>", (unsigned)t.lanes, reg_scalar(t.scalar));
  return buf;
}

/* --------------------------------------------------------------- pre-pass */
static void scan_inst(poot__shader *c, const poot_kir_inst *in) {
  wgsl_state *w = wgsl_of(c);
  switch (poot__kir_op_class(in->op)) {
    case POOT_KIR_CLASS_BUILTIN:
      if (in->ref == POOT_KIR_BUILTIN_SUBGROUP_LANE) w->sg_lane = true;
      if (in->ref >= POOT_KIR_BUILTIN_SUBGROUP_ID) w->sg_size = true;
      break;
    case POOT_KIR_CLASS_STORE:
      mem_of(c, in->space, in->ref)->written = true;
      break;
    case POOT_KIR_CLASS_ATOMIC:
      mem_of(c, in->space, in->ref)->atomic = true;
      mem_of(c, in->space, in->ref)->written = true;
      break;
    default:
      break;
  }
}

static void scan_kernel(poot__shader *c) {
  wgsl_state *w = wgsl_of(c);
  bool native_f16 = poot_kir_target_has_arith(c->t, POOT_KIR_F16);
  for (uint32_t i = 0; i < c->k->binding_count; i++) {
    poot_kir_scalar e = c->k->bindings[i].elem;
    if (e == POOT_KIR_F16 && native_f16)
      w->bind[i].kind = MEM_F16;
    else if (scalar_bits(e) < 32)
      w->bind[i].kind = MEM_PACKED;
    if (w->bind[i].kind == MEM_F16) w->enable_f16 = true;
    /* Packed stores are read-modify-write of a shared word: atomics keep
     * neighbouring elements written by other threads intact. */
    if (w->bind[i].kind == MEM_PACKED && w->bind[i].written) w->bind[i].atomic = true;
  }
  w->subgroups = c->t->subgroup_ops;
  c->no_subgroups = !w->subgroups;
}

static bool init(poot__shader *c) {
  wgsl_state *w = wgsl_of(c);
  w->bind = poot_calloc(c->k->binding_count + 1, sizeof *w->bind);
  w->shared = poot_calloc(c->k->shared_count + 1, sizeof *w->shared);
  return w->bind && w->shared;
}

static void deinit(poot__shader *c) {
  poot_free(wgsl_of(c)->bind);
  poot_free(wgsl_of(c)->shared);
}

/* i64 is not WebGPU: it is naga's `shader-int64` extension, used only when
 * the target declares 64-bit integers. */
static bool has_i64(const poot_kir_target *t) {
  return poot_kir_target_has_arith(t, POOT_KIR_I64);
}

/* ------------------------------------------------------------- expressions */

static void def_begin(poot__shader *c, const poot_kir_inst *in) {
  char tb[32];
  line_start(c);
  putf(c, "let v%u: %s = ", in->result, tname(in->type, tb, sizeof tb));
}

/* A splatted constant of t's register type ("0xffu" or "vec2<u32>(0xffu)"). */
static void splat_lit(poot__shader *c, poot_kir_type t, const char *lit) {
  char tb[32];
  if (t.lanes > 1)
    putf(c, "%s(%s)", tname(t, tb, sizeof tb), lit);
  else
    put(c, lit);
}

/* Opens the renormalisation of a result of type t; returns the closing text. */
static const char *norm_open(poot__shader *c, poot_kir_type t) {
  switch (t.scalar) {
    case POOT_KIR_I8:
      put(c, "extractBits(");
      return ", 0u, 8u)";
    case POOT_KIR_I16:
      put(c, "extractBits(");
      return ", 0u, 16u)";
    case POOT_KIR_U8:
      put(c, "extractBits(");
      return ", 0u, 8u)";
    case POOT_KIR_U16:
      put(c, "extractBits(");
      return ", 0u, 16u)";
    case POOT_KIR_F16:
      put(c, t.lanes == 4 ? "poot_rf16x4(" : t.lanes == 2 ? "poot_rf16x2(" : "poot_rf16(");
      return ")";
    case POOT_KIR_BF16:
      put(c, t.lanes == 4 ? "poot_rbf16x4(" : t.lanes == 2 ? "poot_rbf16x2(" : "poot_rbf16(");
      return ")";
    default:
      return "";
  }
}
static void i64_lit(poot__shader *c, uint64_t bits) {
  if ((int64_t)bits == INT64_MIN)
    put(c, "(-9223372036854775807li - 1li)");
  else
    putf(c, "%lldli", (long long)(int64_t)bits);
}

/* The conversions WGSL spells its own way; false: the shared rules. */
static bool convert_lane(poot__shader *c, poot_kir_value v, unsigned i, poot_kir_scalar from,
                         poot_kir_scalar to) {
  if (to == POOT_KIR_BOOL && is_float(from)) {
    /* By the bits: NaN is true, -0.0 false, and WGSL may assume no NaN
     * in float comparisons. */
    put(c, "((bitcast<u32>(");
    comp(c, v, i);
    put(c, ") & 0x7fffffffu) != 0u)");
    return true;
  }
  if (from == POOT_KIR_BOOL) {
    put(c, to == POOT_KIR_I64 ? "select(0li, 1li, " : reg_scalar(to));
    if (to != POOT_KIR_I64) put(c, "(");
    comp(c, v, i);
    put(c, ")");
    return true;
  }
  if (to == POOT_KIR_I64 && is_unsigned_int(from)) {
    /* naga sign-extends u32 -> i64; the mask restores zero extension. */
    put(c, "(i64(");
    comp(c, v, i);
    put(c, ") & 0xffffffffli)");
    return true;
  }
  return false;
}

/* ------------------------------------------------------------------ bitcast */

/* BITCAST involving i64: through 32-bit words (little-endian): the source
 * is split or combined into words v<id>_w<i>, the result built from them. */
static void emit_bitcast_words(poot__shader *c, const poot_kir_inst *in) {
  poot_kir_type ft = vtype(c, in->args[0]);
  unsigned sb = scalar_bits((poot_kir_scalar)ft.scalar),
           db = scalar_bits((poot_kir_scalar)in->type.scalar);
  unsigned words = ft.lanes * sb / 32, n = in->type.lanes;
  char tb[32];
  for (unsigned w = 0; w < words; w++) {
    line_start(c);
    putf(c, "let v%u_w%u: u32 = ", in->result, w);
    if (sb == 64) {
      put(c, "u32((");
      comp(c, in->args[0], w / 2);
      put(c, w % 2 ? " >> 32u) & 0xffffffffli)" : ") & 0xffffffffli)");
    } else if (sb == 32) {
      lane_bits(c, in->args[0], w);
    } else {
      unsigned per = 32 / sb;
      for (unsigned j = 0; j < per; j++) {
        put(c, j ? " | (" : "(");
        lane_bits(c, in->args[0], w * per + j);
        putf(c, " << %uu)", j * sb);
      }
    }
    put(c, ";\n");
  }
  def_begin(c, in);
  if (n > 1) putf(c, "%s(", tname(in->type, tb, sizeof tb));
  for (unsigned d = 0; d < n; d++) {
    if (d) put(c, ", ");
    char expr[128];
    if (db == 64) {
      putf(c, "((i64(v%u_w%u) << 32u) | (i64(v%u_w%u) & 0xffffffffli))", in->result, 2 * d + 1,
           in->result, 2 * d);
      continue;
    }
    if (db == 32) {
      snprintf(expr, sizeof expr, "v%u_w%u", in->result, d);
    } else {
      unsigned per = 32 / db;
      snprintf(expr, sizeof expr, "((v%u_w%u >> %uu) & 0x%xu)", in->result, d / per, (d % per) * db,
               (1u << db) - 1u);
    }
    from_bits(c, (poot_kir_scalar)in->type.scalar, expr);
  }
  if (n > 1) put(c, ")");
  put(c, ";\n");
}

static void bits_temp_open(poot__shader *c, unsigned result, unsigned i, const char *ut) {
  putf(c, "let v%u_b%u: %s = ", result, i, ut);
}

/* ------------------------------------------------------------------ memory */

/* A load of one element (index_expr is a u32 expression) as a register value. */
static void load_elem(poot__shader *c, poot_kir_space space, uint32_t ref, const char *index_expr) {
  wgsl_mem *m = mem_of(c, space, ref);
  poot_kir_scalar e = mem_elem_type(c, space, ref);
  char arr[32];
  if (space == POOT_KIR_SPACE_SHARED)
    snprintf(arr, sizeof arr, "s%u", ref);
  else
    snprintf(arr, sizeof arr, "b%u", ref);
  if (m->kind == MEM_PACKED && space == POOT_KIR_SPACE_GLOBAL) {
    unsigned bits = scalar_bits(e);
    unsigned per = 32 / bits;
    char word[160];
    if (m->atomic)
      snprintf(word, sizeof word, "atomicLoad(&%s[(%s) / %uu])", arr, index_expr, per);
    else
      snprintf(word, sizeof word, "%s[(%s) / %uu]", arr, index_expr, per);
    char raw[400];
    snprintf(raw, sizeof raw, "extractBits(%s, ((%s) %% %uu) * %uu, %uu)", word, index_expr, per,
             bits, bits);
    from_bits(c, e, raw);
    return;
  }
  if (m->kind == MEM_F16 && space == POOT_KIR_SPACE_GLOBAL) {
    putf(c, "f32(%s[%s])", arr, index_expr);
    return;
  }
  if (m->atomic)
    putf(c, "atomicLoad(&%s[%s])", arr, index_expr);
  else
    putf(c, "%s[%s]", arr, index_expr);
}

static void store_elem(poot__shader *c, poot_kir_space space, uint32_t ref, const char *index_expr,
                       poot_kir_value v, unsigned lane) {
  wgsl_mem *m = mem_of(c, space, ref);
  poot_kir_scalar e = mem_elem_type(c, space, ref);
  char arr[32];
  if (space == POOT_KIR_SPACE_SHARED)
    snprintf(arr, sizeof arr, "s%u", ref);
  else
    snprintf(arr, sizeof arr, "b%u", ref);
  line_start(c);
  if (m->kind == MEM_PACKED && space == POOT_KIR_SPACE_GLOBAL) {
    unsigned bits = scalar_bits(e);
    unsigned per = 32 / bits;
    unsigned mask = (1u << bits) - 1u;
    put(c, "{\n");
    c->depth++;
    line_start(c);
    putf(c, "let i = %s;\n", index_expr);
    line_start(c);
    putf(c, "let sh = (i %% %uu) * %uu;\n", per, bits);
    line_start(c);
    put(c, "let bits = (");
    lane_bits(c, v, lane);
    putf(c, " & 0x%xu) << sh;\n", mask);
    line_start(c);
    putf(c, "atomicAnd(&%s[i / %uu], ~(0x%xu << sh));\n", arr, per, mask);
    line_start(c);
    putf(c, "atomicOr(&%s[i / %uu], bits);\n", arr, per);
    c->depth--;
    line_start(c);
    put(c, "}\n");
    return;
  }
  if (m->atomic)
    putf(c, "atomicStore(&%s[%s], ", arr, index_expr);
  else
    putf(c, "%s[%s] = ", arr, index_expr);
  if (m->kind == MEM_F16 && space == POOT_KIR_SPACE_GLOBAL) {
    put(c, "f16(");
    comp(c, v, lane);
    put(c, ")");
  } else {
    comp(c, v, lane);
  }
  put(c, m->atomic ? ");\n" : ";\n");
}

static void emit_load(poot__shader *c, const poot_kir_inst *in) {
  unsigned n = in->type.lanes;
  char idx[64];
  def_begin(c, in);
  char tb[32];
  if (n > 1) putf(c, "%s(", tname(in->type, tb, sizeof tb));
  for (unsigned i = 0; i < n; i++) {
    if (i) put(c, ", ");
    if (i)
      snprintf(idx, sizeof idx, "u32(v%u) + %uu", in->args[0], i);
    else
      snprintf(idx, sizeof idx, "u32(v%u)", in->args[0]);
    load_elem(c, in->space, in->ref, idx);
  }
  if (n > 1) put(c, ")");
  put(c, ";\n");
}

static void emit_store(poot__shader *c, const poot_kir_inst *in) {
  poot_kir_value v = in->args[1];
  unsigned n = vtype(c, v).lanes;
  for (unsigned i = 0; i < n; i++) {
    char idx[64];
    if (i)
      snprintf(idx, sizeof idx, "u32(v%u) + %uu", in->args[0], i);
    else
      snprintf(idx, sizeof idx, "u32(v%u)", in->args[0]);
    store_elem(c, in->space, in->ref, idx, v, i);
  }
}

static void emit_atomic(poot__shader *c, const poot_kir_inst *in) {
  poot_kir_scalar e = mem_elem_type(c, in->space, in->ref);
  if (e != POOT_KIR_U32 && e != POOT_KIR_I32 && e != POOT_KIR_F32) {
    fail(c, POOT_UNSUPPORTED, in, "WGSL atomics need 32-bit elements");
    return;
  }
  if (e == POOT_KIR_F32 && in->op != POOT_KIR_OP_ATOMIC_ADD && in->op != POOT_KIR_OP_ATOMIC_XCHG) {
    fail(c, POOT_UNSUPPORTED, in, "WGSL float atomics are add and exchange only");
    return;
  }
  char arr[32];
  if (in->space == POOT_KIR_SPACE_SHARED)
    snprintf(arr, sizeof arr, "s%u", in->ref);
  else
    snprintf(arr, sizeof arr, "b%u", in->ref);
  def_begin(c, in);
  if (in->op == POOT_KIR_OP_ATOMIC_CAS) {
    putf(c, "atomicCompareExchangeWeak(&%s[u32(v%u)], v%u, v%u).old_value;\n", arr, in->args[0],
         in->args[1], in->args[2]);
    return;
  }
  const char *fn = poot__shader_atomic_fn(in->op);
  putf(c, "%s(&%s[u32(v%u)], v%u);\n", fn, arr, in->args[0], in->args[1]);
}

/* ------------------------------------------------------------------ arith */
static void bool_logic(poot__shader *c, const poot_kir_inst *in) {
  const char *op = in->op == POOT_KIR_OP_AND ? "&" : in->op == POOT_KIR_OP_OR ? "|" : "!=";
  putf(c, "v%u %s v%u;\n", in->args[0], op, in->args[1]);
}

static void rem(poot__shader *c, const poot_kir_inst *in) {
  putf(c, "v%u %% v%u", in->args[0], in->args[1]); /* truncated, as C */
}

/* WGSL shifts by a u32 count. */
static void shift(poot__shader *c, const poot_kir_inst *in) {
  poot_kir_value a = in->args[0], b = in->args[1];
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  const char *op = in->op == POOT_KIR_OP_SHL ? "<<" : ">>";
  char tb[32];
  poot_kir_type ut = poot_kir_type_make(POOT_KIR_U32, in->type.lanes);
  if (s == POOT_KIR_I64)
    putf(c, "v%u %s %s(v%u)", a, op, tname(ut, tb, sizeof tb), b);
  else if (is_signed_int(s))
    putf(c, "v%u %s bitcast<%s>(v%u)", a, op, tname(ut, tb, sizeof tb), b);
  else
    putf(c, "v%u %s v%u", a, op, b);
}

static void not_bool(poot__shader *c, const poot_kir_inst *in) {
  putf(c, "!v%u;\n", in->args[0]);
}

/* WGSL has no unary minus on unsigned integers. */
static void neg(poot__shader *c, const poot_kir_inst *in) {
  if (is_unsigned_int((poot_kir_scalar)in->type.scalar)) {
    splat_lit(c, in->type, "0u");
    putf(c, " - v%u", in->args[0]);
  } else {
    putf(c, "-v%u", in->args[0]);
  }
}

static void select_(poot__shader *c, const poot_kir_inst *in) {
  putf(c, "select(v%u, v%u, v%u);\n", in->args[2], in->args[1], in->args[0]);
}

static void for_header(poot__shader *c, const poot_kir_inst *in) {
  unsigned r = in->result;
  putf(c, "for (var v%u: %s = v%u; v%u < v%u; v%u = v%u + v%u) {\n", r,
       reg_scalar((poot_kir_scalar)in->type.scalar), in->args[0], r, in->args[1], r, r,
       in->args[2]);
}

static const char *compare_op(poot_kir_op op) {
  switch (op) {
    case POOT_KIR_OP_EQ:
      return "==";
    case POOT_KIR_OP_NE:
      return "!=";
    case POOT_KIR_OP_LT:
      return "<";
    case POOT_KIR_OP_LE:
      return "<=";
    case POOT_KIR_OP_GT:
      return ">";
    default:
      return ">=";
  }
}

/* naga accepts subgroup_invocation_id only with one-dimensional workgroups;
 * otherwise the lane is computed from the linear index (KIR's definition). */
static bool lane_builtin_ok(const poot__shader *c) {
  return c->k->workgroup_size[1] <= 1 && c->k->workgroup_size[2] <= 1;
}

static void compare(poot__shader *c, const poot_kir_inst *in) {
  putf(c, "v%u %s v%u;\n", in->args[0], compare_op(in->op), in->args[1]);
}

static void builtin(poot__shader *c, const poot_kir_inst *in) {
  static const char *const name[POOT_KIR_BUILTIN_COUNT] = {
      [POOT_KIR_BUILTIN_WORKGROUP_ID] = "poot_wg",
      [POOT_KIR_BUILTIN_NUM_WORKGROUPS] = "poot_nwg",
      [POOT_KIR_BUILTIN_LOCAL_ID] = "poot_lid",
      [POOT_KIR_BUILTIN_LOCAL_INDEX] = "poot_lix",
      [POOT_KIR_BUILTIN_SUBGROUP_ID] = "poot_lix / poot_sgs",
      [POOT_KIR_BUILTIN_SUBGROUP_LANE] = "poot_sgl",
      [POOT_KIR_BUILTIN_SUBGROUP_SIZE] = "poot_sgs",
  };
  if (in->ref <= POOT_KIR_BUILTIN_LOCAL_ID)
    putf(c, "%s.%s;\n", name[in->ref], lane_name((unsigned)in->imm));
  else if (in->ref == POOT_KIR_BUILTIN_SUBGROUP_LANE && !lane_builtin_ok(c))
    put(c, "poot_lix % poot_sgs;\n");
  else
    putf(c, "%s;\n", name[in->ref]);
}

/* ----------------------------------------------------------- declarations */

static void mem_type(const wgsl_mem *m, poot_kir_scalar e, char *buf, size_t n) {
  const char *base;
  if (m->kind == MEM_PACKED)
    base = "u32";
  else if (m->kind == MEM_F16)
    base = "f16";
  else
    base = reg_scalar(e);
  if (m->atomic)
    snprintf(buf, n, "atomic<%s>", base);
  else
    snprintf(buf, n, "%s", base);
}

static void declarations(poot__shader *c) {
  const wgsl_state *w = wgsl_of(c);
  const poot_kir_kernel *k = c->k;
  if (w->enable_f16) put(c, "enable f16;\n");
  putf(c, "// KIR kernel %s for target %s (kernel hash %016llx)\n", k->name,
       c->t->name ? c->t->name : "?", (unsigned long long)k->hash);
  for (uint32_t i = 0; i < k->binding_count; i++) {
    const poot_kir_binding *bd = &k->bindings[i];
    char et[32];
    mem_type(&w->bind[i], bd->elem, et, sizeof et);
    bool ro = bd->access == POOT_KIR_ACCESS_READ && !w->bind[i].atomic;
    putf(c, "@group(0) @binding(%u) var<storage, %s> b%u: array<%s>; // %s: %s%s\n", bd->binding,
         ro ? "read" : "read_write", i, et, bd->name ? bd->name : "",
         poot_kir_scalar_name(bd->elem), w->bind[i].kind == MEM_PACKED ? " (packed in u32)" : "");
  }
  if (k->has_checks)
    putf(c, "@group(0) @binding(%u) var<storage, read_write> poot_err: array<atomic<u32>>;\n",
         k->error_binding);
  bool any_push = false;
  for (uint32_t i = 0; i < k->param_count; i++) {
    if (k->params[i].kind != POOT_KIR_PARAM_PUSH) continue;
    if (!any_push) put(c, "struct PootParams {\n");
    any_push = true;
    putf(c, "  p%u: %s, // %s\n", i, reg_scalar(k->params[i].type),
         k->params[i].name ? k->params[i].name : "");
  }
  if (any_push) {
    put(c, "}\n");
    putf(c, "@group(0) @binding(%u) var<uniform> poot_pc: PootParams;\n", k->param_binding);
  }
  for (uint32_t i = 0; i < k->shared_count; i++) {
    char et[32];
    wgsl_mem plain = w->shared[i];
    plain.kind = MEM_PLAIN;
    mem_type(&plain, k->shared[i].elem, et, sizeof et);
    putf(c, "var<workgroup> s%u: array<%s, %u>; // %s: %s\n", i, et, k->shared[i].count,
         k->shared[i].name ? k->shared[i].name : "", poot_kir_scalar_name(k->shared[i].elem));
  }
}

static void entry(poot__shader *c) {
  const wgsl_state *w = wgsl_of(c);
  const poot_kir_kernel *k = c->k;
  putf(c, "@compute @workgroup_size(%u, %u, %u)\n", k->workgroup_size[0] ? k->workgroup_size[0] : 1,
       k->workgroup_size[1] ? k->workgroup_size[1] : 1,
       k->workgroup_size[2] ? k->workgroup_size[2] : 1);
  putf(c, "fn %s(@builtin(workgroup_id) poot_wg: vec3<u32>,\n", k->name);
  put(c, "    @builtin(num_workgroups) poot_nwg: vec3<u32>,\n");
  put(c, "    @builtin(local_invocation_id) poot_lid: vec3<u32>,\n");
  put(c, "    @builtin(local_invocation_index) poot_lix: u32");
  if (w->subgroups && w->sg_size) put(c, ",\n    @builtin(subgroup_size) poot_sgs: u32");
  if (w->subgroups && w->sg_lane && lane_builtin_ok(c))
    put(c, ",\n    @builtin(subgroup_invocation_id) poot_sgl: u32");
  put(c, ") {\n");
  /* Keep every builtin statically used so that the interface is stable. */
  put(c, "  _ = poot_wg; _ = poot_nwg; _ = poot_lid; _ = poot_lix;\n");
  for (uint32_t i = 0; i < k->private_count; i++) {
    char tb[32];
    putf(c, "  var p%u: array<%s, %u>; // %s (zeroed)\n", i,
         tname(k->privates[i].type, tb, sizeof tb), k->privates[i].count,
         k->privates[i].name ? k->privates[i].name : "");
  }
  poot__shader_emit_block(c, &k->body);
  put(c, "}\n");
}

/* ------------------------------------------------------------------ table */

static const char *const k_barrier[] = {"storageBarrier();\n", "workgroupBarrier();\n", NULL};

static const poot__shader_lang k_wgsl = {
    .lang = POOT_KIR_LANG_WGSL,
    .name = "wgsl",
    .title = "WGSL",
    .state_size = sizeof(wgsl_state),
    .float_suffix = "f",
    .float_bits = "bitcast<f32>(0x%08xu)",
    .int_min = "bitcast<i32>(0x80000000u)",
    .int_suffix = "i",
    .uint_suffix = "u",
    .int_of_bits = "bitcast<i32>(",
    .bits_of_int = "bitcast<u32>(",
    .bits_of_float = "bitcast<u32>(",
    .float_of_bits = "bitcast<f32>(",
    .bits_of_i64 = "u32(",
    .bool_of_bits = "((%s) != 0u)",
    .extract_bits = "extractBits",
    .rsqrt = "inverseSqrt",
    .u64 = NULL,
    .cast_masks = false,
    .lane_suffix = true,
    .barrier = k_barrier,
    .check = "if (!v%u) { atomicOr(&poot_err[0], 1u << %lluu); }\n",
    .lib =
        {
            [POOT__SHADER_LIB_F16_NARROW] = poot__kir_wgsl_f16_narrow_helper,
            [POOT__SHADER_LIB_F16_WIDEN] = poot__kir_wgsl_f16_widen_helper,
            [POOT__SHADER_LIB_F16_ROUND] = poot__kir_wgsl_f16_round_helpers,
            [POOT__SHADER_LIB_BF16] = poot__kir_wgsl_bf16_helpers,
            [POOT__SHADER_LIB_TANH] = poot__kir_wgsl_tanh_helper,
            [POOT__SHADER_LIB_ERF] = poot__kir_wgsl_erf_helper,
            [POOT__SHADER_LIB_FMA] = poot__kir_wgsl_fma_helper,
            [POOT__SHADER_LIB_F2I] = poot__kir_wgsl_f2i_helper,
            [POOT__SHADER_LIB_F2U] = poot__kir_wgsl_f2u_helper,
            [POOT__SHADER_LIB_F2I64] = poot__kir_wgsl_f2i64_helper,
        },
    .tname = tname,
    .reg_scalar = reg_scalar,
    .def_begin = def_begin,
    .norm_open = norm_open,
    .i64_lit = i64_lit,
    .convert_lane = convert_lane,
    .bool_logic = bool_logic,
    .rem = rem,
    .shift = shift,
    .not_bool = not_bool,
    .neg = neg,
    .compare = compare,
    .select = select_,
    .for_header = for_header,
    .builtin = builtin,
    .bits_temp_open = bits_temp_open,
    .bits_temp_close = ";\n",
    .bitcast_wide = emit_bitcast_words,
    .load = emit_load,
    .store = emit_store,
    .atomic = emit_atomic,
    .load_elem = load_elem,
    .init = init,
    .deinit = deinit,
    .scan_inst = scan_inst,
    .scan_kernel = scan_kernel,
    .has_i64 = has_i64,
    .no_i64 = "64-bit integers need naga's shader-int64, which the target lacks",
    .declarations = declarations,
    .entry = entry,
};

poot_status poot_kir_render_wgsl(const poot_kir_kernel *kernel, const poot_kir_target *target,
                                 poot_strbuf *out) {
  return poot__shader_render(&k_wgsl, kernel, target, out);
}
