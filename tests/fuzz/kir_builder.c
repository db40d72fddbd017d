/* kir_builder.c — libFuzzer target for the KIR builder, verifier, printer,
 * renderers and interpreter. The input is read as a little program of
 * builder calls with fuzzed operands (values picked among those already
 * defined, or raw ids). Every builder call either succeeds or returns a
 * typed status; a kernel that finishes is verified for several targets,
 * printed, rendered for each target it verifies on, and run by the
 * interpreter on small buffers with a step bound. Nothing may crash, leak
 * or read out of bounds. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "poot/kir.h"
#include "poot/devices.h"

#define MAX_VALUES 256
#define MAX_OPS 96
#define MAX_BINDINGS 3
#define BUF_BYTES 256

typedef struct input {
  const uint8_t *p;
  size_t n;
} input;

static uint8_t byte(input *in) {
  if (!in->n) return 0;
  in->n--;
  return *in->p++;
}

static uint32_t u32(input *in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)byte(in) << (8 * i);
  return v;
}

typedef struct prog {
  poot_kir_builder *b;
  poot_kir_value vals[MAX_VALUES];
  uint32_t n_vals;
  uint32_t n_bindings, n_params, n_shared, n_private;
  int open;
} prog;

/* Traps on an unexpected status, saying which. */
static void check_st(int ok, poot_status st) {
  if (ok) return;
  fprintf(stderr, "unexpected status %s: %s\n", poot_status_code_name(poot_status_code_of(st)),
          poot_status_message(st));
  __builtin_trap();
}

/* A builder call's status: success, or a rejection of bad arguments. */
static bool ok_status(poot_status st) {
  poot_status_code c = poot_status_code_of(st);
  check_st(c == POOT_OK || c == POOT_INVALID_ARGUMENT || c == POOT_UNSUPPORTED ||
               c == POOT_OUT_OF_MEMORY || c == POOT_CAPACITY,
           st);
  poot_status_free(st);
  return c == POOT_OK;
}

static poot_kir_value pick(prog *g, input *in) {
  uint8_t k = byte(in);
  if (k == 255) return byte(in); /* a raw id: maybe undefined */
  if (!g->n_vals) return 0;
  return g->vals[k % g->n_vals];
}

static void keep(prog *g, poot_status st, poot_kir_value v) {
  if (ok_status(st) && g->n_vals < MAX_VALUES) g->vals[g->n_vals++] = v;
}

static poot_kir_scalar scalar(input *in) {
  return (poot_kir_scalar)(byte(in) % POOT_KIR_SCALAR_COUNT);
}

static poot_kir_type type(input *in) {
  static const uint32_t lanes[4] = {1, 2, 4, 3};
  uint8_t k = byte(in);
  return poot_kir_type_make((poot_kir_scalar)(k % POOT_KIR_SCALAR_COUNT), lanes[(k >> 4) & 3]);
}

/* Values without operands: constants, builtins, params. */
static void op_value(prog *g, input *in, uint8_t op) {
  poot_kir_builder *b = g->b;
  poot_kir_value v = 0;
  switch (op) {
    case 0:
      keep(g, poot_kir_const(b, scalar(in), u32(in), &v), v);
      break;
    case 1:
      keep(g, poot_kir_const_u32(b, byte(in), &v), v);
      break;
    case 2:
      keep(g,
           poot_kir_builtin_get(b, (poot_kir_builtin)(byte(in) % (POOT_KIR_BUILTIN_COUNT + 1)),
                                byte(in) % 4, &v),
           v);
      break;
    case 3:
      keep(g, poot_kir_global_id(b, byte(in) % 4, &v), v);
      break;
    case 4:
      keep(g, poot_kir_param_get(b, byte(in) % (g->n_params + 1), &v), v);
      break;
    default:
      break;
  }
}

/* Arithmetic, conversions and lane moves. */
static void op_compute(prog *g, input *in, uint8_t op) {
  poot_kir_builder *b = g->b;
  poot_kir_value v = 0;
  switch (op) {
    case 5:
      keep(g, poot_kir_unary(b, (poot_kir_op)(byte(in) % POOT_KIR_OP_COUNT), pick(g, in), &v), v);
      break;
    case 6:
    case 7: {
      poot_kir_op o = (poot_kir_op)(byte(in) % POOT_KIR_OP_COUNT);
      poot_kir_value a = pick(g, in), c = pick(g, in);
      keep(g, poot_kir_binary(b, o, a, c, &v), v);
      break;
    }
    case 8: {
      poot_kir_value a = pick(g, in), c = pick(g, in), d = pick(g, in);
      keep(g, poot_kir_fma(b, a, c, d, &v), v);
      break;
    }
    case 9: {
      poot_kir_value a = pick(g, in), c = pick(g, in), d = pick(g, in);
      keep(g, poot_kir_select(b, a, c, d, &v), v);
      break;
    }
    case 10: {
      poot_kir_scalar to = scalar(in);
      keep(g, poot_kir_convert(b, to, pick(g, in), &v), v);
      break;
    }
    case 11: {
      poot_kir_type to = type(in);
      keep(g, poot_kir_bitcast(b, to, pick(g, in), &v), v);
      break;
    }
    case 12: {
      uint32_t lanes = byte(in) % 6;
      keep(g, poot_kir_splat(b, lanes, pick(g, in), &v), v);
      break;
    }
    case 13: {
      poot_kir_value e[5];
      uint32_t n = byte(in) % 6;
      for (uint32_t i = 0; i < n; i++) e[i] = pick(g, in);
      keep(g, poot_kir_vec(b, n, e, &v), v);
      break;
    }
    case 14: {
      poot_kir_value a = pick(g, in);
      keep(g, poot_kir_extract(b, a, byte(in) % 5, &v), v);
      break;
    }
    default:
      break;
  }
}

/* Global, shared and private memory, atomics. */
static void op_memory(prog *g, input *in, uint8_t op) {
  poot_kir_builder *b = g->b;
  poot_kir_value v = 0;
  switch (op) {
    case 15: {
      uint8_t k = byte(in);
      poot_kir_space sp = (poot_kir_space)(k & 1);
      uint32_t ref = (k >> 1) % 4;
      poot_kir_value idx = pick(g, in);
      uint32_t lanes = byte(in) % 5;
      keep(g, poot_kir_load(b, sp, ref, idx, lanes, &v), v);
      break;
    }
    case 16: {
      uint8_t k = byte(in);
      poot_kir_value idx = pick(g, in), val = pick(g, in);
      ok_status(poot_kir_store(b, (poot_kir_space)(k & 1), (k >> 1) % 4, idx, val));
      break;
    }
    case 17: {
      uint8_t k = byte(in);
      if (k & 1) {
        ok_status(poot_kir_priv_store(b, (k >> 1) % 3, byte(in) % 5, pick(g, in)));
      } else {
        keep(g, poot_kir_priv_load(b, (k >> 1) % 3, byte(in) % 5, &v), v);
      }
      break;
    }
    case 18: {
      uint8_t k = byte(in);
      poot_kir_value idx = pick(g, in), val = pick(g, in);
      if (k & 0x80) {
        poot_kir_value cmp = pick(g, in);
        keep(g, poot_kir_atomic_cas(b, (poot_kir_space)(k & 1), (k >> 1) % 4, idx, cmp, val, &v),
             v);
      } else {
        poot_kir_op o = (poot_kir_op)(POOT_KIR_OP_ATOMIC_ADD + (k >> 3) % 5);
        keep(g, poot_kir_atomic_rmw(b, o, (poot_kir_space)(k & 1), (k >> 1) % 4, idx, val, &v), v);
      }
      break;
    }
    default:
      break;
  }
}

/* Barriers, subgroup operations, checks and blocks. */
static void op_control(prog *g, input *in, uint8_t op) {
  poot_kir_builder *b = g->b;
  poot_kir_value v = 0;
  switch (op) {
    case 19:
      ok_status(poot_kir_barrier(b));
      break;
    case 20: {
      uint8_t k = byte(in);
      poot_kir_value a = pick(g, in);
      switch (k % 4) {
        case 0:
          keep(g,
               poot_kir_subgroup_reduce(b, (poot_kir_op)(POOT_KIR_OP_SG_REDUCE_ADD + (k >> 2) % 4),
                                        a, &v),
               v);
          break;
        case 1:
          keep(g, poot_kir_subgroup_shuffle(b, a, pick(g, in), &v), v);
          break;
        case 2:
          keep(g, poot_kir_subgroup_shuffle_xor(b, a, byte(in) % 40, &v), v);
          break;
        default:
          keep(g, poot_kir_subgroup_broadcast(b, a, byte(in) % 40, &v), v);
      }
      break;
    }
    case 21:
      ok_status(poot_kir_check(b, pick(g, in), byte(in) % 34));
      break;
    case 22: {
      uint8_t k = byte(in);
      if (k % 3 == 0) {
        if (ok_status(poot_kir_if_begin(b, pick(g, in)))) g->open++;
      } else if (k % 3 == 1) {
        ok_status(poot_kir_else_begin(b));
      } else {
        poot_kir_value s = pick(g, in), e = pick(g, in), st = pick(g, in);
        poot_status r = poot_kir_for_begin(b, s, e, st, &v);
        bool ok = poot_status_code_of(r) == POOT_OK;
        keep(g, r, v);
        if (ok) g->open++;
      }
      break;
    }
    case 23: { /* matrix fragments and asynchronous copies */
      uint8_t k = byte(in);
      switch (k % 5) {
        case 0:
          keep(g, poot_kir_mma_load(b, (k >> 3) % 4, pick(g, in), (k >> 5) & 1, &v), v);
          break;
        case 1: {
          poot_kir_value a = pick(g, in), bb = pick(g, in), c = pick(g, in);
          keep(g, poot_kir_mma(b, (k & 0x80) ? POOT_KIR_BF16 : scalar(in), a, bb, c, &v), v);
          break;
        }
        case 2: {
          poot_kir_value d = pick(g, in), src = pick(g, in), ok = pick(g, in);
          ok_status(poot_kir_async_copy(b, (k >> 3) % 4, d, (k >> 5) % 4, src, ok));
          break;
        }
        case 3:
          ok_status(poot_kir_async_commit(b));
          break;
        default:
          ok_status(poot_kir_async_wait(b, (k >> 3) % 10));
      }
      break;
    }
    default:
      if (ok_status(poot_kir_end(b)) && g->open > 0) g->open--;
      break;
  }
}

/* One builder call, chosen by the next byte; the family reads its operands. */
static void one_op(prog *g, input *in) {
  uint8_t op = (uint8_t)(byte(in) % 25);
  if (op <= 4)
    op_value(g, in, op);
  else if (op <= 14)
    op_compute(g, in, op);
  else if (op <= 18)
    op_memory(g, in, op);
  else
    op_control(g, in, op);
}

static void use_kernel(const poot_kir_kernel *k, input *in) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_kir_print(k, &sb);
  poot_strbuf_deinit(&sb);
  poot_kir_target t;
  for (int which = 0; which < 6; which++) {
    switch (which) {
      case 0:
        poot_kir_target_init_interp(&t, k->subgroup_size ? k->subgroup_size : 32);
        break;
      case 1:
        poot_device_target_init(POOT_DEVICE_TARGET_SM80, 0, &t);
        break;
      case 2:
        poot_device_target_init(POOT_DEVICE_TARGET_VULKAN, 32, &t);
        break;
      case 3:
        poot_device_target_init(POOT_DEVICE_TARGET_WEBGPU, 0, &t);
        break;
      case 4:
        poot_device_target_init(POOT_DEVICE_TARGET_GFX1100, 0, &t);
        break;
      default:
        poot_device_target_init(POOT_DEVICE_TARGET_GFX90A, 0, &t);
        break;
    }
    poot_status st = poot_kir_verify(k, &t);
    poot_status_code c = poot_status_code_of(st);
    check_st(c == POOT_OK || c == POOT_INVALID_ARGUMENT || c == POOT_UNSUPPORTED, st);
    poot_status_free(st);
    if (c != POOT_OK) continue;
    poot_strbuf_init(&sb);
    st = poot_kir_render(k, &t, &sb);
    /* A kernel that verifies for a target renders for it, or is UNSUPPORTED
     * by a renderer limit the verifier does not know. */
    c = poot_status_code_of(st);
    check_st(c == POOT_OK || c == POOT_UNSUPPORTED || c == POOT_OUT_OF_MEMORY, st);
    poot_status_free(st);
    poot_strbuf_deinit(&sb);
    if (t.lang != POOT_KIR_LANG_NONE) continue;
    /* Run it: small zeroed buffers, a step bound, faults recorded. */
    static uint8_t bufs[MAX_BINDINGS][BUF_BYTES];
    poot_kir_buffer kb[MAX_BINDINGS];
    for (uint32_t i = 0; i < k->binding_count && i < MAX_BINDINGS; i++) {
      memset(bufs[i], byte(in), BUF_BYTES);
      kb[i].data = bufs[i];
      kb[i].size = BUF_BYTES;
    }
    uint32_t params[4] = {u32(in), u32(in), u32(in), u32(in)};
    uint32_t error_word = 0;
    poot_kir_interp_options o;
    memset(&o, 0, sizeof o);
    o.grid[0] = 1 + byte(in) % 2;
    o.buffers = kb;
    o.buffer_count = k->binding_count;
    o.params = params;
    o.param_count = k->param_count;
    o.error_word = (byte(in) & 1) ? &error_word : NULL;
    o.max_steps = 20000;
    st = poot_kir_interp_run(k, &o);
    c = poot_status_code_of(st);
    check_st(c == POOT_OK || c == POOT_INVALID_ARGUMENT || c == POOT_KERNEL_FAULT ||
                 c == POOT_TIMEOUT || c == POOT_UNSUPPORTED || c == POOT_OUT_OF_MEMORY,
             st);
    poot_status_free(st);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size};
  static const uint32_t sg[4] = {0, 4, 8, 32};
  poot_kir_kernel_desc desc = {.name = "k"};
  uint8_t h = byte(&in);
  desc.workgroup_size[0] = (h & 0x40) ? 32 : 1 + (h & 7); /* 32: whole warps for mma */
  desc.workgroup_size[1] = 1 + ((h >> 3) & 1);
  desc.subgroup_size = sg[(h >> 4) & 3];
  prog g;
  memset(&g, 0, sizeof g);
  if (!ok_status(poot_kir_builder_create(&desc, &g.b))) return 0;
  static const char *const names[] = {"a", "b", "c", "d"};
  uint8_t decl = byte(&in);
  uint32_t nb = decl % 4 > MAX_BINDINGS ? MAX_BINDINGS : decl % 4;
  for (uint32_t i = 0; i < nb; i++) {
    uint8_t k = byte(&in);
    poot_kir_binding bd = {.name = names[i],
                           .binding = i,
                           .elem = (poot_kir_scalar)(k % POOT_KIR_SCALAR_COUNT),
                           .access = (poot_kir_access)(1 + (k >> 4) % 3)};
    uint32_t ref = 0;
    if (ok_status(poot_kir_add_binding(g.b, &bd, &ref))) g.n_bindings++;
  }
  for (uint32_t i = 0; i < (uint32_t)(decl >> 2) % 3; i++) {
    uint8_t k = byte(&in);
    poot_kir_param pd = {.name = names[i],
                         .type = (poot_kir_scalar)(k % POOT_KIR_SCALAR_COUNT),
                         .kind = (poot_kir_param_kind)((k >> 4) & 1),
                         .slot_ref = (k >> 5) % 3,
                         .slot_index = byte(&in) % 8};
    uint32_t idx = 0;
    if (ok_status(poot_kir_add_param(g.b, &pd, &idx))) g.n_params++;
  }
  for (uint32_t i = 0; i < (uint32_t)(decl >> 4) % 3; i++) {
    uint8_t k = byte(&in);
    uint32_t ref = 0;
    if (ok_status(poot_kir_add_shared(g.b, names[i], (poot_kir_scalar)(k % POOT_KIR_SCALAR_COUNT),
                                      (uint32_t)byte(&in) % 70, &ref)))
      g.n_shared++;
  }
  for (uint32_t i = 0; i < (uint32_t)(decl >> 6) % 3; i++) {
    poot_kir_type t = type(&in);
    uint32_t ref = 0;
    if (ok_status(poot_kir_add_private(g.b, names[i], t, (uint32_t)byte(&in) % 6, &ref)))
      g.n_private++;
  }
  for (int i = 0; i < MAX_OPS && in.n; i++) one_op(&g, &in);
  while (g.open-- > 0) ok_status(poot_kir_end(g.b));
  poot_kir_kernel *k = NULL;
  poot_status st = poot_kir_builder_finish(g.b, &k);
  poot_status_code c = poot_status_code_of(st);
  check_st(c == POOT_OK || c == POOT_INVALID_ARGUMENT || c == POOT_OUT_OF_MEMORY, st);
  poot_status_free(st);
  if (k) use_kernel(k, &in);
  poot_kir_kernel_destroy(k);
  return 0;
}
