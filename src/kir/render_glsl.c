/* KIR → GLSL 4.50 compute text for Vulkan (compiled by spirv.c).
 *
 * How each construct maps (docs/kir-glsl-wgsl.md has the full table):
 *  - values are GLSL locals named v<id>, defined where KIR defines them, so
 *    GLSL block scoping is KIR's scoping. Float values are `precise` so that
 *    no driver contracts a*b+c into an fma (KIR rounds every operation).
 *  - 8/16-bit integers live in int/uint registers and are renormalised
 *    (sign-extended or masked) after every operation that can leave their
 *    range; f16 and bf16 live in float registers holding exactly
 *    representable values, and every f16 operation is rounded back to f16
 *    with an exact integer routine (Vulkan does not promise the rounding of
 *    OpFConvert to half).
 *  - buffers are std430 SSBOs at set 0, binding = KIR binding number, with
 *    their storage element type (8/16-bit through GL_EXT_shader_8bit_storage
 *    and GL_EXT_shader_16bit_storage; f16/bf16 as uint16_t bit patterns).
 *    2- and 4-lane accesses of 32-bit buffers go through a vecN alias of the
 *    same binding, so they are real vector loads.
 *  - PUSH params are a push-constant block; SLOT params are loads.
 *  - check(cond, code) ORs 1 << code into element 0 of the error binding.
 * The output is a pure function of (kernel, target). */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "render_shader.h"
#include "render_shader_lib.h"

/* GLSL's own state: the extensions the kernel needs and the vector aliases
 * of its bindings. */
typedef struct glsl_state {
  poot__shader sh; /* first: the writer's state */
  bool sg_basic, sg_arith, sg_shuffle, sg_ballot;
  bool storage8, storage16, atomic_float, atomic_float2;
  uint8_t *alias; /* per binding position: bit 1 = vec2 alias, bit 2 = vec4 alias */
  /* Per shared array: bit 1 = a 4-lane access of 32-bit lanes, bit 2 = an
   * atomic on it. An array with the first and not the second (and a length
   * that is a multiple of 4) is declared as vec4s, so its 4-lane accesses
   * are one 16-byte access (KIR's vector accesses are aligned to their
   * width) and its elements are components (shared_v4). */
  uint8_t *shared_use;
} glsl_state;

static const poot__shader_lang k_glsl;

/* The GLSL state of a rendering: checked, the writer's base is its first member. */
static glsl_state *glsl_of(poot__shader *c) {
  assert(c->lang == &k_glsl);
  return (glsl_state *)c;
}

/* ------------------------------------------------------------------ types */

/* The register (value) type of a scalar. */
static const char *reg_scalar(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_BOOL:
      return "bool";
    case POOT_KIR_I8:
    case POOT_KIR_I16:
    case POOT_KIR_I32:
      return "int";
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      return "uint";
    case POOT_KIR_I64:
      return "int64_t";
    default:
      return "float";
  }
}

static const char *reg_vec_prefix(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_BOOL:
      return "bvec";
    case POOT_KIR_I8:
    case POOT_KIR_I16:
    case POOT_KIR_I32:
      return "ivec";
    case POOT_KIR_U8:
    case POOT_KIR_U16:
    case POOT_KIR_U32:
      return "uvec";
    case POOT_KIR_I64:
      return "i64vec";
    default:
      return "vec";
  }
}

/* Writes the register type name of t into buf. */
static const char *tname(poot_kir_type t, char *buf, size_t n) {
  if (t.lanes <= 1)
    snprintf(buf, n, "%s", reg_scalar(t.scalar));
  else
    snprintf(buf, n, "%s%u", reg_vec_prefix(t.scalar), (unsigned)t.lanes);
  return buf;
}

/* The storage element type of a buffer. */
static const char *storage_scalar(poot_kir_scalar s) {
  switch (s) {
    case POOT_KIR_I8:
      return "int8_t";
    case POOT_KIR_U8:
      return "uint8_t";
    case POOT_KIR_I16:
      return "int16_t";
    case POOT_KIR_U16:
    case POOT_KIR_F16:
    case POOT_KIR_BF16:
      return "uint16_t";
    default:
      return reg_scalar(s);
  }
}

/* --------------------------------------------------------------- pre-pass */

/* The GL_KHR_shader_subgroup_* extension a subgroup op needs beyond basic. */
static void scan_subgroup(glsl_state *g, poot_kir_op op) {
  g->sg_basic = true;
  if (op == POOT_KIR_OP_SG_REDUCE_ADD || op == POOT_KIR_OP_SG_REDUCE_MAX ||
      op == POOT_KIR_OP_SG_REDUCE_MIN)
    g->sg_arith = true;
  else if (op == POOT_KIR_OP_SG_SHUFFLE || op == POOT_KIR_OP_SG_SHUFFLE_XOR)
    g->sg_shuffle = true;
  else
    g->sg_ballot = true;
}

static void scan_inst(poot__shader *c, const poot_kir_inst *in) {
  glsl_state *g = glsl_of(c);
  switch (poot__kir_op_class(in->op)) {
    case POOT_KIR_CLASS_BUILTIN:
      if (in->ref >= POOT_KIR_BUILTIN_SUBGROUP_ID) g->sg_basic = true;
      break;
    case POOT_KIR_CLASS_SUBGROUP:
      scan_subgroup(g, in->op);
      break;
    case POOT_KIR_CLASS_ATOMIC:
      if (in->space == POOT_KIR_SPACE_SHARED) g->shared_use[in->ref] |= 2;
      /* Float add and exchange are one extension, float min and max another. */
      if (in->type.scalar != POOT_KIR_F32) break;
      if (in->op == POOT_KIR_OP_ATOMIC_ADD || in->op == POOT_KIR_OP_ATOMIC_XCHG)
        g->atomic_float = true;
      if (in->op == POOT_KIR_OP_ATOMIC_MAX || in->op == POOT_KIR_OP_ATOMIC_MIN)
        g->atomic_float2 = true;
      break;
    case POOT_KIR_CLASS_LOAD:
    case POOT_KIR_CLASS_STORE: {
      poot_kir_type t = in->type;
      if (poot__kir_op_class(in->op) == POOT_KIR_CLASS_STORE) t = vtype(c, in->args[1]);
      bool vec32 = t.lanes > 1 && scalar_bits((poot_kir_scalar)t.scalar) == 32;
      if (in->space == POOT_KIR_SPACE_GLOBAL && vec32)
        g->alias[in->ref] |= (uint8_t)(t.lanes == 2 ? 1 : 2);
      if (in->space == POOT_KIR_SPACE_SHARED && vec32 && t.lanes == 4) g->shared_use[in->ref] |= 1;
      break;
    }
    default:
      break;
  }
}

static void scan_kernel(poot__shader *c) {
  glsl_state *g = glsl_of(c);
  for (uint32_t i = 0; i < c->k->binding_count; i++) {
    unsigned bits = scalar_bits(c->k->bindings[i].elem);
    if (bits == 8) g->storage8 = true;
    if (bits == 16) g->storage16 = true;
  }
  if (c->f2i64) c->i64 = true;
}

static bool init(poot__shader *c) {
  glsl_state *g = glsl_of(c);
  g->alias = poot_calloc(c->k->binding_count ? c->k->binding_count : 1, 1);
  g->shared_use = poot_calloc(c->k->shared_count ? c->k->shared_count : 1, 1);
  return g->alias && g->shared_use;
}

static void deinit(poot__shader *c) {
  poot_free(glsl_of(c)->alias);
  poot_free(glsl_of(c)->shared_use);
}

static bool has_i64(const poot_kir_target *t) {
  return poot_kir_target_has_arith(t, POOT_KIR_I64) || poot_kir_target_has_storage(t, POOT_KIR_I64);
}

/* ------------------------------------------------------------- expressions */

/* Opens "<type> v<id> = " for a value statement. */
static void def_begin(poot__shader *c, const poot_kir_inst *in) {
  char tb[32];
  line_start(c);
  if (is_float((poot_kir_scalar)in->type.scalar)) put(c, "precise ");
  putf(c, "%s v%u = ", tname(in->type, tb, sizeof tb), in->result);
}

/* The renormalisation wrapper of a result of type t: opens it (returns the
 * closing text). 8/16-bit integers wrap, f16 rounds. */
static const char *norm_open(poot__shader *c, poot_kir_type t) {
  switch (t.scalar) {
    case POOT_KIR_I8:
      put(c, "bitfieldExtract(");
      return ", 0, 8)";
    case POOT_KIR_I16:
      put(c, "bitfieldExtract(");
      return ", 0, 16)";
    case POOT_KIR_U8:
      put(c, "((");
      return ") & 0xffu)";
    case POOT_KIR_U16:
      put(c, "((");
      return ") & 0xffffu)";
    case POOT_KIR_F16:
      put(c, "poot_rf16(");
      return ")";
    case POOT_KIR_BF16:
      put(c, "poot_rbf16(");
      return ")";
    default:
      return "";
  }
}

static void i64_lit(poot__shader *c, uint64_t bits) {
  putf(c, "int64_t(0x%016llxul)", (unsigned long long)bits);
}

/* ------------------------------------------------------------------ bitcast */

static void bits_temp_open(poot__shader *c, unsigned result, unsigned i, const char *ut) {
  putf(c, "%s v%u_b%u = %s(", ut, result, i, ut);
}

/* ------------------------------------------------------------------ memory */

/* Shared array `ref` is declared as vec4s (glsl_state.shared_use). */
static bool shared_v4(poot__shader *c, uint32_t ref) {
  const poot_kir_shared *sh = &c->k->shared[ref];
  return glsl_of(c)->shared_use[ref] == 1 && sh->count % 4 == 0 && sh->elem != POOT_KIR_I64 &&
         sh->elem != POOT_KIR_BOOL;
}

/* The lvalue of element `index_expr` of a global binding or shared array. */
static void mem_elem(poot__shader *c, poot_kir_space space, uint32_t ref, const char *index_expr) {
  if (space == POOT_KIR_SPACE_SHARED && shared_v4(c, ref))
    putf(c, "s%u[uint(%s) >> 2u][uint(%s) & 3u]", ref, index_expr, index_expr);
  else if (space == POOT_KIR_SPACE_SHARED)
    putf(c, "s%u[%s]", ref, index_expr);
  else
    putf(c, "b%u.d[%s]", ref, index_expr);
}
/* A load of one element, converted to its register value. */
static void load_elem(poot__shader *c, poot_kir_space space, uint32_t ref, const char *index_expr) {
  poot_kir_scalar e = mem_elem_type(c, space, ref);
  if (space == POOT_KIR_SPACE_SHARED) {
    mem_elem(c, space, ref, index_expr);
    return;
  }
  switch (e) {
    case POOT_KIR_I8:
    case POOT_KIR_I16:
      put(c, "int(");
      break;
    case POOT_KIR_U8:
    case POOT_KIR_U16:
      put(c, "uint(");
      break;
    case POOT_KIR_F16:
      put(c, "poot_f16_to_f32(uint(");
      break;
    case POOT_KIR_BF16:
      put(c, "uintBitsToFloat(uint(");
      break;
    default:
      break;
  }
  mem_elem(c, space, ref, index_expr);
  switch (e) {
    case POOT_KIR_I8:
    case POOT_KIR_I16:
    case POOT_KIR_U8:
    case POOT_KIR_U16:
      put(c, ")");
      break;
    case POOT_KIR_F16:
      put(c, "))");
      break;
    case POOT_KIR_BF16:
      put(c, ") << 16)");
      break;
    default:
      break;
  }
}

/* The storage form of a register value (for stores). */
static void store_value(poot__shader *c, poot_kir_space space, uint32_t ref, poot_kir_value v,
                        unsigned lane) {
  poot_kir_scalar e = mem_elem_type(c, space, ref);
  if (space == POOT_KIR_SPACE_SHARED) {
    comp(c, v, lane);
    return;
  }
  switch (e) {
    case POOT_KIR_I8:
      put(c, "int8_t(");
      comp(c, v, lane);
      put(c, ")");
      break;
    case POOT_KIR_U8:
      put(c, "uint8_t(");
      comp(c, v, lane);
      put(c, ")");
      break;
    case POOT_KIR_I16:
      put(c, "int16_t(");
      comp(c, v, lane);
      put(c, ")");
      break;
    case POOT_KIR_U16:
      put(c, "uint16_t(");
      comp(c, v, lane);
      put(c, ")");
      break;
    case POOT_KIR_F16:
      put(c, "uint16_t(poot_f32_to_f16(");
      comp(c, v, lane);
      put(c, "))");
      break;
    case POOT_KIR_BF16:
      put(c, "uint16_t(poot_f32_to_bf16(");
      comp(c, v, lane);
      put(c, "))");
      break;
    default:
      comp(c, v, lane);
      break;
  }
}

static void emit_load(poot__shader *c, const poot_kir_inst *in) {
  unsigned n = in->type.lanes;
  char idx[64];
  snprintf(idx, sizeof idx, "v%u", in->args[0]);
  def_begin(c, in);
  if (n > 1 && in->space == POOT_KIR_SPACE_GLOBAL &&
      scalar_bits((poot_kir_scalar)in->type.scalar) == 32) {
    /* A real vector load through the vecN alias of the binding. */
    putf(c, "b%u_v%u.d[uint(v%u) >> %u];\n", in->ref, n, in->args[0], n == 2 ? 1 : 2);
    return;
  }
  if (n == 4 && in->space == POOT_KIR_SPACE_SHARED && shared_v4(c, in->ref) &&
      scalar_bits((poot_kir_scalar)in->type.scalar) == 32) {
    putf(c, "s%u[uint(v%u) >> 2u];\n", in->ref, in->args[0]);
    return;
  }
  char tb[32];
  if (n > 1) putf(c, "%s(", tname(in->type, tb, sizeof tb));
  for (unsigned i = 0; i < n; i++) {
    if (i) put(c, ", ");
    if (i) snprintf(idx, sizeof idx, "v%u + %u", in->args[0], i);
    load_elem(c, in->space, in->ref, idx);
  }
  if (n > 1) put(c, ")");
  put(c, ";\n");
}

static void emit_store(poot__shader *c, const poot_kir_inst *in) {
  poot_kir_value v = in->args[1];
  unsigned n = vtype(c, v).lanes;
  if (n > 1 && in->space == POOT_KIR_SPACE_GLOBAL &&
      scalar_bits((poot_kir_scalar)vtype(c, v).scalar) == 32) {
    line_start(c);
    putf(c, "b%u_v%u.d[uint(v%u) >> %u] = v%u;\n", in->ref, n, in->args[0], n == 2 ? 1 : 2, v);
    return;
  }
  if (n == 4 && in->space == POOT_KIR_SPACE_SHARED && shared_v4(c, in->ref) &&
      scalar_bits((poot_kir_scalar)vtype(c, v).scalar) == 32) {
    line_start(c);
    putf(c, "s%u[uint(v%u) >> 2u] = v%u;\n", in->ref, in->args[0], v);
    return;
  }
  for (unsigned i = 0; i < n; i++) {
    char idx[64];
    if (i)
      snprintf(idx, sizeof idx, "v%u + %u", in->args[0], i);
    else
      snprintf(idx, sizeof idx, "v%u", in->args[0]);
    line_start(c);
    mem_elem(c, in->space, in->ref, idx);
    put(c, " = ");
    store_value(c, in->space, in->ref, v, i);
    put(c, ";\n");
  }
}

static void emit_atomic(poot__shader *c, const poot_kir_inst *in) {
  const char *fn =
      in->op == POOT_KIR_OP_ATOMIC_CAS ? "atomicCompSwap" : poot__shader_atomic_fn(in->op);
  poot_kir_scalar e = mem_elem_type(c, in->space, in->ref);
  if (e != POOT_KIR_U32 && e != POOT_KIR_I32 && e != POOT_KIR_F32 &&
      !(e == POOT_KIR_I64 && in->space == POOT_KIR_SPACE_GLOBAL)) {
    fail(c, POOT_UNSUPPORTED, in, "GLSL atomics need 32-bit (or 64-bit) elements");
    return;
  }
  if (e == POOT_KIR_F32 && in->op == POOT_KIR_OP_ATOMIC_CAS) {
    fail(c, POOT_UNSUPPORTED, in, "GLSL has no compare-exchange on floats");
    return;
  }
  char idx[32];
  snprintf(idx, sizeof idx, "v%u", in->args[0]);
  def_begin(c, in);
  putf(c, "%s(", fn);
  mem_elem(c, in->space, in->ref, idx);
  if (in->op == POOT_KIR_OP_ATOMIC_CAS)
    putf(c, ", v%u, v%u);\n", in->args[1], in->args[2]);
  else
    putf(c, ", v%u);\n", in->args[1]);
}
static const char *compare_fn(poot_kir_op op, bool vector) {
  switch (op) {
    case POOT_KIR_OP_EQ:
      return vector ? "equal" : "==";
    case POOT_KIR_OP_NE:
      return vector ? "notEqual" : "!=";
    case POOT_KIR_OP_LT:
      return vector ? "lessThan" : "<";
    case POOT_KIR_OP_LE:
      return vector ? "lessThanEqual" : "<=";
    case POOT_KIR_OP_GT:
      return vector ? "greaterThan" : ">";
    default:
      return vector ? "greaterThanEqual" : ">=";
  }
}
/* ------------------------------------------------------------------ arith */

static void bool_logic(poot__shader *c, const poot_kir_inst *in) {
  poot_kir_value a = in->args[0], b = in->args[1];
  poot_kir_type t = in->type;
  char tb[32];
  const char *op = in->op == POOT_KIR_OP_AND ? "&" : in->op == POOT_KIR_OP_OR ? "|" : "^";
  if (t.lanes > 1) {
    /* GLSL has no bitwise operators on bvec: go through uvec. */
    putf(c, "%s(uvec%u(v%u) %s uvec%u(v%u));\n", tname(t, tb, sizeof tb), t.lanes, a, op, t.lanes,
         b);
  } else {
    const char *lop = in->op == POOT_KIR_OP_AND ? "&&" : in->op == POOT_KIR_OP_OR ? "||" : "^^";
    putf(c, "v%u %s v%u;\n", a, lop, b);
  }
}

static void rem(poot__shader *c, const poot_kir_inst *in) {
  poot_kir_value a = in->args[0], b = in->args[1];
  poot_kir_scalar s = (poot_kir_scalar)in->type.scalar;
  if (is_float(s))
    putf(c, "v%u - v%u * trunc(v%u / v%u)", a, b, a, b);
  else if (is_signed_int(s))
    putf(c, "v%u - (v%u / v%u) * v%u", a, a, b, b); /* C: sign of a */
  else
    putf(c, "v%u %% v%u", a, b);
}

static void shift(poot__shader *c, const poot_kir_inst *in) {
  putf(c, "v%u %s v%u", in->args[0], in->op == POOT_KIR_OP_SHL ? "<<" : ">>", in->args[1]);
}

static void not_bool(poot__shader *c, const poot_kir_inst *in) {
  putf(c, in->type.lanes > 1 ? "not(v%u);\n" : "!v%u;\n", in->args[0]);
}

static void neg(poot__shader *c, const poot_kir_inst *in) {
  putf(c, "-v%u", in->args[0]);
}

static void compare(poot__shader *c, const poot_kir_inst *in) {
  if (vtype(c, in->args[0]).lanes > 1)
    putf(c, "%s(v%u, v%u);\n", compare_fn(in->op, true), in->args[0], in->args[1]);
  else
    putf(c, "v%u %s v%u;\n", in->args[0], compare_fn(in->op, false), in->args[1]);
}

static void select_(poot__shader *c, const poot_kir_inst *in) {
  if (vtype(c, in->args[0]).lanes > 1)
    putf(c, "mix(v%u, v%u, v%u);\n", in->args[2], in->args[1], in->args[0]);
  else
    putf(c, "v%u ? v%u : v%u;\n", in->args[0], in->args[1], in->args[2]);
}

/* ------------------------------------------------------------ builtins, for */

static void builtin(poot__shader *c, const poot_kir_inst *in) {
  static const char *const name[POOT_KIR_BUILTIN_COUNT] = {
      [POOT_KIR_BUILTIN_WORKGROUP_ID] = "gl_WorkGroupID",
      [POOT_KIR_BUILTIN_NUM_WORKGROUPS] = "gl_NumWorkGroups",
      [POOT_KIR_BUILTIN_LOCAL_ID] = "gl_LocalInvocationID",
      [POOT_KIR_BUILTIN_LOCAL_INDEX] = "gl_LocalInvocationIndex",
      [POOT_KIR_BUILTIN_SUBGROUP_ID] = "gl_SubgroupID",
      [POOT_KIR_BUILTIN_SUBGROUP_LANE] = "gl_SubgroupInvocationID",
      [POOT_KIR_BUILTIN_SUBGROUP_SIZE] = "gl_SubgroupSize",
  };
  if (in->ref <= POOT_KIR_BUILTIN_LOCAL_ID)
    putf(c, "%s.%s;\n", name[in->ref], lane_name((unsigned)in->imm));
  else
    putf(c, "%s;\n", name[in->ref]);
}

static void for_header(poot__shader *c, const poot_kir_inst *in) {
  unsigned r = in->result;
  putf(c, "for (%s v%u = v%u; v%u < v%u; v%u += v%u) {\n",
       reg_scalar((poot_kir_scalar)in->type.scalar), r, in->args[0], r, in->args[1], r,
       in->args[2]);
}

/* ----------------------------------------------------------- declarations */

static void declarations(poot__shader *c) {
  const glsl_state *g = glsl_of(c);
  const poot_kir_kernel *k = c->k;
  const poot_kir_target *t = c->t;
  put(c, "#version 450\n");
  if (g->sg_basic) put(c, "#extension GL_KHR_shader_subgroup_basic : require\n");
  if (g->sg_arith) put(c, "#extension GL_KHR_shader_subgroup_arithmetic : require\n");
  if (g->sg_shuffle) put(c, "#extension GL_KHR_shader_subgroup_shuffle : require\n");
  if (g->sg_ballot) put(c, "#extension GL_KHR_shader_subgroup_ballot : require\n");
  if (g->storage16) put(c, "#extension GL_EXT_shader_16bit_storage : require\n");
  if (g->storage8) put(c, "#extension GL_EXT_shader_8bit_storage : require\n");
  if (c->i64) put(c, "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n");
  if (g->atomic_float) put(c, "#extension GL_EXT_shader_atomic_float : require\n");
  if (g->atomic_float2) put(c, "#extension GL_EXT_shader_atomic_float2 : require\n");
  putf(c, "// KIR kernel %s for target %s (kernel hash %016llx)\n", k->name,
       t->name ? t->name : "?", (unsigned long long)k->hash);
  putf(c, "layout(local_size_x = %u, local_size_y = %u, local_size_z = %u) in;\n",
       k->workgroup_size[0] ? k->workgroup_size[0] : 1,
       k->workgroup_size[1] ? k->workgroup_size[1] : 1,
       k->workgroup_size[2] ? k->workgroup_size[2] : 1);
  for (uint32_t i = 0; i < k->binding_count; i++) {
    const poot_kir_binding *bd = &k->bindings[i];
    const char *q = bd->access == POOT_KIR_ACCESS_READ ? "readonly " : "";
    putf(c, "layout(std430, set = 0, binding = %u) %sbuffer PootB%u { %s d[]; } b%u; // %s: %s\n",
         bd->binding, q, i, storage_scalar(bd->elem), i, bd->name ? bd->name : "",
         poot_kir_scalar_name(bd->elem));
    for (unsigned lanes = 2; lanes <= 4; lanes += 2) {
      if (!(g->alias[i] & (lanes == 2 ? 1 : 2))) continue;
      char tb[32];
      putf(c, "layout(std430, set = 0, binding = %u) %sbuffer PootB%uV%u { %s d[]; } b%u_v%u;\n",
           bd->binding, q, i, lanes, tname(poot_kir_type_make(bd->elem, lanes), tb, sizeof tb), i,
           lanes);
    }
  }
  if (k->has_checks)
    putf(c, "layout(std430, set = 0, binding = %u) buffer poot_err { uint poot_err_word[]; };\n",
         k->error_binding);
  bool any_push = false;
  for (uint32_t i = 0; i < k->param_count; i++) {
    if (k->params[i].kind != POOT_KIR_PARAM_PUSH) continue;
    if (!any_push) put(c, "layout(push_constant, std430) uniform PootParams {\n");
    any_push = true;
    putf(c, "  %s p%u; // %s\n", reg_scalar(k->params[i].type), i,
         k->params[i].name ? k->params[i].name : "");
  }
  if (any_push) put(c, "} poot_pc;\n");
  for (uint32_t i = 0; i < k->shared_count; i++) {
    char tb[32];
    bool v4 = shared_v4(c, i);
    const char *ty = v4 ? tname(poot_kir_type_make(k->shared[i].elem, 4), tb, sizeof tb)
                        : reg_scalar(k->shared[i].elem);
    putf(c, "shared %s s%u[%u]; // %s: %s%s\n", ty, i,
         v4 ? k->shared[i].count / 4 : k->shared[i].count,
         k->shared[i].name ? k->shared[i].name : "", poot_kir_scalar_name(k->shared[i].elem),
         v4 ? " (as vec4s)" : "");
  }
}

static void entry(poot__shader *c) {
  const poot_kir_kernel *k = c->k;
  put(c, "void main() {\n");
  for (uint32_t i = 0; i < k->private_count; i++) {
    const poot_kir_private *p = &k->privates[i];
    char tb[32];
    tname(p->type, tb, sizeof tb);
    putf(c, "  %s p%u[%u]; // %s\n", tb, i, p->count, p->name ? p->name : "");
    /* KIR private arrays start zeroed; GLSL locals do not. */
    putf(c, "  for (int i = 0; i < %u; i++) p%u[i] = %s(0);\n", p->count, i, tb);
  }
  poot__shader_emit_block(c, &k->body);
  put(c, "}\n");
}

/* ------------------------------------------------------------------ table */

/* KIR's barrier orders every memory access of the workgroup's threads (as
 * PTX's bar.sync): a workgroup-scope fence, then the control barrier. A
 * device-scope fence (memoryBarrierBuffer) costs a GPU a flush per barrier
 * that no reader outside the workgroup needs. */
static const char *const k_barrier[] = {"groupMemoryBarrier();\n", "barrier();\n", NULL};

static const poot__shader_lang k_glsl = {
    .lang = POOT_KIR_LANG_GLSL,
    .name = "glsl",
    .title = "GLSL",
    .state_size = sizeof(glsl_state),
    .float_suffix = "",
    .float_bits = "uintBitsToFloat(0x%08xu)",
    .int_min = "int(0x80000000u)",
    .int_suffix = "",
    .uint_suffix = "",
    .int_of_bits = "int(",
    .bits_of_int = "uint(",
    .bits_of_float = "floatBitsToUint(",
    .float_of_bits = "uintBitsToFloat(",
    .bits_of_i64 = "uint64_t(",
    .bool_of_bits = "bool(%s)",
    .extract_bits = "bitfieldExtract",
    .rsqrt = "inversesqrt",
    .u64 = "uint64_t",
    .cast_masks = true,
    .lane_suffix = false,
    .barrier = k_barrier,
    .check = "if (!v%u) atomicOr(poot_err_word[0], 1u << %lluu);\n",
    .lib =
        {
            [POOT__SHADER_LIB_F16_NARROW] = poot__kir_glsl_f16_narrow_helper,
            [POOT__SHADER_LIB_F16_WIDEN] = poot__kir_glsl_f16_widen_helper,
            [POOT__SHADER_LIB_F16_ROUND] = poot__kir_glsl_f16_round_helpers,
            [POOT__SHADER_LIB_BF16] = poot__kir_glsl_bf16_helpers,
            [POOT__SHADER_LIB_TANH] = poot__kir_glsl_tanh_helper,
            [POOT__SHADER_LIB_ERF] = poot__kir_glsl_erf_helper,
            [POOT__SHADER_LIB_FMA] = poot__kir_glsl_fma_helper,
            [POOT__SHADER_LIB_F2I] = poot__kir_glsl_f2i_helper,
            [POOT__SHADER_LIB_F2U] = poot__kir_glsl_f2u_helper,
            [POOT__SHADER_LIB_F2I64] = poot__kir_glsl_f2i64_helper,
        },
    .lib_native =
        {
            [POOT__SHADER_LIB_F16_NARROW] = poot__kir_glsl_f16_narrow_native,
            [POOT__SHADER_LIB_F16_WIDEN] = poot__kir_glsl_f16_widen_native,
        },
    .tname = tname,
    .reg_scalar = reg_scalar,
    .def_begin = def_begin,
    .norm_open = norm_open,
    .i64_lit = i64_lit,
    .convert_lane = NULL,
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
    .bits_temp_close = ");\n",
    .bitcast_wide = NULL,
    .load = emit_load,
    .store = emit_store,
    .atomic = emit_atomic,
    .load_elem = load_elem,
    .init = init,
    .deinit = deinit,
    .scan_inst = scan_inst,
    .scan_kernel = scan_kernel,
    .has_i64 = has_i64,
    .no_i64 = "64-bit integers need shaderInt64, which the target lacks",
    .declarations = declarations,
    .entry = entry,
};

poot_status poot_kir_render_glsl(const poot_kir_kernel *kernel, const poot_kir_target *target,
                                 poot_strbuf *out) {
  return poot__shader_render(&k_glsl, kernel, target, out);
}
