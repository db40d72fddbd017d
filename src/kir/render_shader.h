/* render_shader.h — private to src/kir: the shader-text writer that the GLSL
 * and WGSL renderers share.
 *
 * Both languages write a kernel the same way: a pre-pass notes what the
 * kernel uses, the declarations and the helper library come first, then the
 * entry point, whose body is one statement per KIR instruction, each value a
 * local `v<id>` defined where KIR defines it. The writer (render_shader.c)
 * holds that structure: the output and failure state, the pre-pass of the
 * facts both languages need, literals, lane access, conversions, arithmetic,
 * control flow and the driver that validates, renders and rolls back. What
 * differs between GLSL and WGSL is a `poot__shader_lang`: a table of
 * spellings plus hooks for the parts that are a language's own (memory and
 * its declarations, bitcasts, the entry point).
 *
 * A language keeps its own state in a struct whose first member is the
 * `poot__shader` base; its hooks get the base back and recover their struct
 * from it. */
#ifndef POOT_KIR_RENDER_SHADER_H
#define POOT_KIR_RENDER_SHADER_H

#include "kir_impl.h"
#include "poot/kir.h"

typedef struct poot__shader_lang poot__shader_lang;

/* The state of one rendering. */
typedef struct poot__shader {
  const poot__shader_lang *lang;
  const poot_kir_kernel *k;
  const poot_kir_target *t;
  poot_strbuf *out;
  poot_status st; /* the first failure; rendering stops appending after it */
  int depth;
  /* What the kernel uses (the pre-pass fills these). */
  bool i64, f16, bf16, erf, tanh, fma, f2i, f2u, f2i64;
  /* WGSL only: subgroup operations and builtins are refused without them. */
  bool no_subgroups;
} poot__shader;

/* The helper functions of the library, in the order they are pasted. */
enum {
  POOT__SHADER_LIB_F16_NARROW, /* poot_f32_to_f16 */
  POOT__SHADER_LIB_F16_WIDEN,  /* poot_f16_to_f32 */
  POOT__SHADER_LIB_F16_ROUND,  /* poot_rf16, through the two above */
  POOT__SHADER_LIB_BF16,
  POOT__SHADER_LIB_TANH,
  POOT__SHADER_LIB_ERF,
  POOT__SHADER_LIB_FMA,
  POOT__SHADER_LIB_F2I,
  POOT__SHADER_LIB_F2U,
  POOT__SHADER_LIB_F2I64,
  POOT__SHADER_LIB_COUNT
};

/* What differs between the languages. Every hook is required but
 * those marked optional. */
struct poot__shader_lang {
  poot_kir_lang lang;
  const char *name;  /* "glsl": error messages start "kir glsl: " */
  const char *title; /* "GLSL": "the GLSL renderer does not know this op" */
  size_t state_size; /* the language's struct, which starts with poot__shader */

  /* Spellings. */
  const char *float_suffix;   /* after a decimal float literal: "" or "f" */
  const char *float_bits;     /* a float from a 32-bit pattern, "%08x" in it */
  const char *int_min;        /* INT32_MIN as a literal */
  const char *int_suffix;     /* after an i32 literal: "" or "i" */
  const char *uint_suffix;    /* after a shift count or bit offset: "" or "u" */
  const char *int_of_bits;    /* "int(" or "bitcast<i32>(": an i32 from a u32's bits */
  const char *bits_of_int;    /* "uint(" or "bitcast<u32>(": a u32 from an i32's bits */
  const char *bits_of_float;  /* "floatBitsToUint(" or "bitcast<u32>(" */
  const char *float_of_bits;  /* "uintBitsToFloat(" or "bitcast<f32>(" */
  const char *bits_of_i64;    /* the raw bits of an i64 lane: "uint64_t(" or "u32(" */
  const char *bool_of_bits;   /* a bool from a bit pattern, "%s" for the bits */
  const char *extract_bits;   /* "bitfieldExtract" or "extractBits" */
  const char *rsqrt;          /* the name of 1/sqrt */
  const char *u64;            /* the unsigned 64-bit type (NULL where bitcast_wide is set) */
  bool cast_masks;            /* bit masks are written as type casts: "uint(0xff)" */
  bool lane_suffix;           /* helpers have x2/x4 forms for vectors (poot_fma, poot_tanh) */
  const char *const *barrier; /* the statements of a barrier, NULL-terminated */
  const char *check;          /* a failed check: "%u" value, "%llu" trap code */
  const char *lib[POOT__SHADER_LIB_COUNT]; /* the helper library's text */
  /* (optional) The text of a helper where the target says the language's
   * own operation is exact (f16_widen_native, f16_narrow_native); NULL: lib's. */
  const char *lib_native[POOT__SHADER_LIB_COUNT];

  /* The register type name of t, written into buf. */
  const char *(*tname)(poot_kir_type t, char *buf, size_t n);
  /* The register type name of a scalar. */
  const char *(*reg_scalar)(poot_kir_scalar s);
  /* Opens "<type> v<id> = " for a value statement. */
  void (*def_begin)(poot__shader *c, const poot_kir_inst *in);
  /* Opens the renormalisation of a result of type t (8/16-bit integers
   * wrap, f16 and bf16 round); returns the closing text. */
  const char *(*norm_open)(poot__shader *c, poot_kir_type t);
  /* An i64 literal. */
  void (*i64_lit)(poot__shader *c, uint64_t bits);
  /* (optional) The language's own conversions of lane i of v: returns
   * false where the shared rules apply; NULL: the shared rules everywhere. */
  bool (*convert_lane)(poot__shader *c, poot_kir_value v, unsigned i, poot_kir_scalar from,
                       poot_kir_scalar to);
  /* AND/OR/XOR of bools, after def_begin. */
  void (*bool_logic)(poot__shader *c, const poot_kir_inst *in);
  /* REM, SHL and SHR of numbers, inside the renormalisation. */
  void (*rem)(poot__shader *c, const poot_kir_inst *in);
  void (*shift)(poot__shader *c, const poot_kir_inst *in);
  /* NOT of bools and NEG, after def_begin. */
  void (*not_bool)(poot__shader *c, const poot_kir_inst *in);
  void (*neg)(poot__shader *c, const poot_kir_inst *in);
  /* Comparison and select statements, after def_begin. */
  void (*compare)(poot__shader *c, const poot_kir_inst *in);
  void (*select)(poot__shader *c, const poot_kir_inst *in);
  /* "for (...) {\n" of a FOR: the induction variable v<result> from args[0]
   * while below args[1], stepping by args[2]. */
  void (*for_header)(poot__shader *c, const poot_kir_inst *in);
  /* The right-hand side of a builtin read other than the local size, after
   * def_begin. */
  void (*builtin)(poot__shader *c, const poot_kir_inst *in);
  /* The declaration of bitcast temporary v<result>_b<i> of type `ut` up to
   * the lane's bits, and what closes it. */
  void (*bits_temp_open)(poot__shader *c, unsigned result, unsigned i, const char *ut);
  const char *bits_temp_close;
  /* (optional) A bitcast from or to 64-bit lanes; NULL: the shared split and
   * regroup, in `u64` temporaries. */
  void (*bitcast_wide)(poot__shader *c, const poot_kir_inst *in);
  /* Whole statements: memory and atomics. */
  void (*load)(poot__shader *c, const poot_kir_inst *in);
  void (*store)(poot__shader *c, const poot_kir_inst *in);
  void (*atomic)(poot__shader *c, const poot_kir_inst *in);
  /* A load of one element of a binding, as a register value (SLOT params). */
  void (*load_elem)(poot__shader *c, poot_kir_space space, uint32_t ref, const char *index_expr);

  /* The language's own state: allocate (false: out of memory), free. */
  bool (*init)(poot__shader *c);
  void (*deinit)(poot__shader *c);
  /* The pre-pass: an instruction's facts beyond the shared ones, and what
   * the whole kernel needs once the instructions are seen. */
  void (*scan_inst)(poot__shader *c, const poot_kir_inst *in);
  void (*scan_kernel)(poot__shader *c);
  /* The target can hold 64-bit integers; else `no_i64` is the refusal. */
  bool (*has_i64)(const poot_kir_target *t);
  const char *no_i64;
  /* The declarations before the helper library, and the entry point around
   * the body (which it writes with poot__shader_emit_block). */
  void (*declarations)(poot__shader *c);
  void (*entry)(poot__shader *c);
};

/* Renders `kernel` for `target` in `lang`: the checks every renderer makes,
 * the pre-pass, the text, and the caller's buffer left as it was on failure. */
POOT_MUST_USE poot_status poot__shader_render(const poot__shader_lang *lang,
                                              const poot_kir_kernel *kernel,
                                              const poot_kir_target *target, poot_strbuf *out);

/* Output. */
void poot__shader_put(poot__shader *c, const char *s);
void poot__shader_putf(poot__shader *c, const char *fmt, ...) POOT_PRINTF(2, 3);
void poot__shader_line_start(poot__shader *c);
void poot__shader_fail(poot__shader *c, poot_status_code code, const poot_kir_inst *in,
                       const char *why);

/* Types. */
bool poot__shader_is_float(poot_kir_scalar s);
bool poot__shader_is_signed_int(poot_kir_scalar s);
bool poot__shader_is_unsigned_int(poot_kir_scalar s);
unsigned poot__shader_scalar_bits(poot_kir_scalar s);
const char *poot__shader_lane_name(unsigned i);
poot_kir_type poot__shader_vtype(const poot__shader *c, poot_kir_value v);
poot_kir_scalar poot__shader_mem_elem(const poot__shader *c, poot_kir_space space, uint32_t ref);

/* Expressions. */
void poot__shader_comp(poot__shader *c, poot_kir_value v, unsigned i);
void poot__shader_lane_bits(poot__shader *c, poot_kir_value v, unsigned i);
void poot__shader_from_bits(poot__shader *c, poot_kir_scalar s, const char *bits);

/* The atomic function of an atomic add, max, min or exchange (both languages
 * spell them alike; compare-exchange is each language's own). */
const char *poot__shader_atomic_fn(poot_kir_op op);

/* The statements of a block (the entry point writes the kernel's body). */
void poot__shader_emit_block(poot__shader *c, const poot_kir_block *b);

/* Short names for the shader renderers' files, which call these on every
 * line. Include this header after the system headers. */
#define put poot__shader_put
#define putf poot__shader_putf
#define line_start poot__shader_line_start
#define fail poot__shader_fail
#define comp poot__shader_comp
#define vtype poot__shader_vtype
#define is_float poot__shader_is_float
#define is_signed_int poot__shader_is_signed_int
#define is_unsigned_int poot__shader_is_unsigned_int
#define scalar_bits poot__shader_scalar_bits
#define lane_name poot__shader_lane_name
#define lane_bits poot__shader_lane_bits
#define from_bits poot__shader_from_bits
#define mem_elem_type poot__shader_mem_elem

#endif
