/* poot/kir.h — KIR, the kernel IR (DESIGN §5): what one dispatch does,
 * written once and rendered for every target.
 *
 * Contents:
 *   1. types (scalars and 2/4-lane vectors)
 *   2. the kernel as data: declarations, values, statements (read by renderers)
 *   3. target descriptions (the only thing renderers and templates consult)
 *   4. the builder (arena-allocated; every fallible call returns poot_status)
 *   5. verifier, printer, content hash
 *   6. the CPU interpreter
 *   7. the renderers (one file each; pure functions, deterministic output)
 *
 * ---------------------------------------------------------------- model ----
 * A kernel is one compute dispatch: a grid of workgroups, each of a fixed
 * size (set when the kernel is built). KIR is structured: a body is a list
 * of statements; `if/else` and `for` hold nested blocks; there is no goto,
 * break or return. Computation is in SSA values: each value-producing
 * statement defines a new immutable value (`v12`), visible in its block after
 * its definition and in blocks nested there. Mutable per-thread state lives in
 * private arrays indexed by constants (a "variable" is a private array of one
 * element); renderers map them to registers (PTX/AMDGPU) or local arrays.
 *
 * Semantics that every renderer must keep (the interpreter is the reference):
 *  - Arithmetic, comparison and math apply to i32, u32, i64, f16 and f32
 *    (bool: logic and equality only). i8 u8 i16 u16 bf16 are storage types:
 *    they are loaded, stored, converted, bitcast, selected, moved through
 *    vectors and private arrays, never computed on (convert to 32 bits).
 *    bool is never a storage type (no bool buffers or shared arrays).
 *  - Integer arithmetic wraps (two's complement). Integer division or
 *    remainder by zero, INT_MIN / -1, and shifts by >= the bit width are
 *    undefined in KIR: renderers need not guard them; the interpreter reports
 *    them as INVALID_ARGUMENT faults. SHR is arithmetic on signed types and
 *    logical on unsigned ones. REM has the sign of the dividend (C `%`).
 *  - f32 follows IEEE binary32 with round-to-nearest-even; f16 arithmetic is
 *    computed in f32 and the result rounded to f16 (nearest even) after every
 *    operation. bf16 is a storage type only (no arithmetic): convert to f32.
 *  - Float min/max with one NaN operand return the other operand (fminf);
 *    GPU targets may differ there, so tests never feed NaN to min/max.
 *  - Math functions (exp exp2 log log2 sqrt rsqrt sin cos tanh erf pow) are
 *    approximate on GPUs: the interpreter uses the C library in float and
 *    tests compare with a stated ULP/relative bound. sqrt, fma, floor, ceil,
 *    abs, min, max, add, sub, mul, div are exact (correctly rounded) on every
 *    target; renderers must emit IEEE-rounded div and sqrt (PTX div.rn,
 *    sqrt.rn), never the fast approximations.
 *  - CONVERT (DESIGN: "conversions with defined rounding"):
 *      float -> f16/bf16/f32 narrower: round to nearest even; NaN stays NaN,
 *        overflow goes to infinity.
 *      float -> integer: truncate toward zero, saturate to the destination
 *        range, NaN -> 0 (PTX cvt.rzi.sat semantics; GLSL/WGSL renderers
 *        clamp explicitly).
 *      integer -> float: round to nearest even; integer -> f16/bf16 is defined
 *        as integer -> f32 (nearest even) then f32 -> f16/bf16 (nearest even).
 *      integer -> integer: wrap (truncate, or sign/zero extend by the SOURCE
 *        type's signedness).
 *      bool -> number: 0 or 1; number -> bool: value != 0 (for floats, NaN is
 *        true, -0.0 is false).
 *  - BITCAST reinterprets bits between types of equal total size (lanes x
 *    scalar size), e.g. f32 <-> u32, vec2 f16 <-> u32.
 *  - Loads/stores of N lanes (1, 2 or 4) access elements [index, index+N) of
 *    a buffer/shared array whose element type is the scalar type; index must
 *    be a multiple of N (the interpreter faults otherwise) so that renderers
 *    can emit real vector accesses. Index values are u32 or i32 element
 *    indices, never bytes.
 *  - Barriers and subgroup operations must be in uniform control flow
 *    (verified statically): barriers in workgroup-uniform control flow,
 *    subgroup operations in at least subgroup-uniform control flow.
 *    A barrier orders both workgroup-shared and global memory of the
 *    workgroup (GLSL: barrier() + memoryBarrierShared/Buffer;
 *    PTX bar.sync 0; WGSL workgroupBarrier + storageBarrier).
 *  - Subgroup operations work on 32-bit scalars (u32, i32, f32). Reductions
 *    over f32 have no fixed order. Shuffle from a lane outside the subgroup is
 *    undefined (the interpreter faults).
 *  - Builtins are u32. Local linear id = x + y*sx + z*sx*sy; subgroup id =
 *    linear id / subgroup size, lane = linear id % subgroup size.
 *
 * ---------------------------------------------------- checks and errors ----
 * `check(cond, trap_code)`: when cond is false in a thread, the kernel
 * faults with trap_code (0..31).
 *  - Targets with a real trap (target->has_trap: PTX, AMDGPU) emit a trap
 *    (`trap;`, `llvm.trap`). Before trapping, the first failing thread
 *    writes a fault record (trap code, kernel id, workgroup) into host-mapped
 *    memory passed as the kernel's last argument, so the device can name the
 *    trap code after the launch fails (layout: docs/kir-ptx-amdgpu.md).
 *  - Targets without (GLSL/SPIR-V, WGSL) use the ERROR WORD: the kernel's
 *    reserved storage binding `kernel->error_binding` (binding number in the
 *    same set/group 0) holds a u32 array whose element 0 is the error word.
 *    A failed check does `atomicOr(err[0], 1u << trap_code)` and the thread
 *    carries on (robust buffer access keeps it memory-safe); the host reads
 *    the word after the dispatch, and a non-zero word is a KERNEL_FAULT that
 *    names the kernel and the trap code (the lowest set bit; all set bits are
 *    reported). The host zeroes the word before the dispatch.
 *  - The interpreter does either: a fault (KERNEL_FAULT, the default) or the
 *    error-word behaviour when poot_kir_interp_options.error_word is set.
 * The error binding exists only when kernel->has_checks; renderers for
 * targets without trap declare it as
 *   GLSL: layout(set=0, binding=E) buffer poot_err { uint poot_err_word[]; };
 *   WGSL: @group(0) @binding(E) var<storage, read_write> poot_err: array<atomic<u32>>;
 *
 * ------------------------------------------------------------ parameters ----
 * A param is a 32-bit scalar (u32, i32, f32), one of two kinds:
 *  - PUSH: a dispatch constant recorded with the dispatch. Passed as
 *    PTX: a .param of its type after the buffer pointers, in param order;
 *    AMDGPU: a kernel argument, same order; GLSL: a push-constant block with
 *    one member per PUSH param in param order (std430, 4 bytes each);
 *    WGSL: a uniform buffer at @group(0) @binding(kernel->param_binding),
 *    a struct of the PUSH params in order (each 4 bytes).
 *  - SLOT: read by the kernel from element `slot_index` of the binding at
 *    position `slot_ref` (a read-only buffer of the param's type, e.g. the
 *    per-step slot buffer). Values that change every step (positions,
 *    lengths) MUST be SLOT params: they are never baked into a recording.
 * Buffers are passed as PTX/AMDGPU kernel arguments (64-bit global pointers,
 * one per binding in kernel->bindings order, then the PUSH params, then, for
 * kernels with checks, the fault-record pointer), GLSL storage buffers at
 * (set 0, binding = binding number), WGSL storage at (@group(0),
 * @binding(binding number)).
 *
 * --------------------------------------------------- matrix fragments ----
 * One shape, m16n8k16 (D[16x8] = A[16x16] * B[16x8] + C, f16 or bf16
 * operands, f32 accumulation), held by the 32 lanes of a subgroup in the
 * per-lane layout of the PTX ISA's mma.m16n8k16, written here in full so
 * that the interpreter (the reference) and every renderer agree. With
 * g = lane / 4 and q = lane % 4, a u32 word holds two 16-bit elements, the
 * first in its low half:
 *   A (u32x4, row-major 16x16): word w holds A[g + 8*(w&1)][2q + 8*(w>>1) + {0,1}]
 *   B (u32x2, K x N = 16x8):    word w holds B[2q + 8*w + {0,1}][g]
 *   C, D (f32x4, 16x8):         lane l holds C[g + 8*(l>>1)][2q + (l&1)]
 * MMA_LOAD is the ldmatrix.x4 shape: four 8x8 matrices of 16-bit elements
 * in shared memory; lane L gives the element index of row L%8 of matrix
 * L/8 (a multiple of 8: rows are 16 bytes). Word w of the result holds
 * matrix w's row g, columns 2q and 2q+1; transposed (imm bit 0), its
 * column g, rows 2q and 2q+1. The shared array's elements are 16 bits
 * (f16, bf16, u16, i16). MMA computes every D element as C plus the 16
 * exact products, summed in double precision and rounded once to f32 in
 * the interpreter; hardware sums in an unspecified order and precision, so
 * tests compare device runs with the tier-2 tolerance. Both are subgroup
 * operations (subgroup-uniform control flow, subgroups of exactly 32).
 * ASYNC_COPY copies 16 bytes (16 / element size elements) from the global
 * binding to the shared array (same element type, both indices multiples
 * of 16 / element size); when valid is false it writes 16 zero bytes and
 * reads nothing (the index is not checked). The copy is not visible until
 * the thread's ASYNC_WAIT: ASYNC_COMMIT closes the thread's copies since
 * the last commit into a group; ASYNC_WAIT(n) waits until at most the n
 * newest committed groups are pending (PTX cp.async.wait_group n). Other
 * threads see the data after a BARRIER that follows the wait. The source
 * must not be written by the kernel while a copy is pending. The
 * interpreter performs the copies at the wait (and a copy never waited for
 * is dropped); PTX renders cp.async.cg.shared.global, commit_group and
 * wait_group. Targets without them (GLSL, WGSL, AMDGPU, PTX below sm_80)
 * reject these ops in the verifier with UNSUPPORTED, so templates check
 * poot_kir_target_has_matrix and keep their scalar form there.
 *
 * ------------------------------------------------------ future extensions ----
 * The op enum is append-only (POOT_KIR_OPS). Planned additions that fit
 * without a rewrite:
 *  - opaque matrix fragments for targets whose layout is not the PTX one
 *    (Vulkan cooperative matrices, AMDGPU MFMA/WMMA, wgmma): poot_kir_type
 *    .frag != 0 marks an opaque per-subgroup fragment type; the explicit
 *    m16n8k16 layout above stays the PTX sm_80+ form (docs/decisions/
 *    kir-matrix-fragments.md).
 * New statement kinds use the same poot_kir_inst fields (args, ref, imm,
 * blocks); a renderer that meets an op it does not know returns UNSUPPORTED.
 *
 * Thread safety: a finished kernel and a target are immutable and may be
 * read from any thread. A builder is single-threaded. */
#ifndef POOT_KIR_H
#define POOT_KIR_H

#include "poot/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================ 1. types */

typedef enum poot_kir_scalar {
  POOT_KIR_BOOL = 0,
  POOT_KIR_I8,
  POOT_KIR_U8,
  POOT_KIR_I16,
  POOT_KIR_U16,
  POOT_KIR_I32,
  POOT_KIR_U32,
  POOT_KIR_I64,
  POOT_KIR_F16,
  POOT_KIR_BF16,
  POOT_KIR_F32,
  POOT_KIR_SCALAR_COUNT
} poot_kir_scalar;

#define POOT_KIR_SCALAR_BIT(s) (1u << (unsigned)(s))
/* Every scalar except bool: those a buffer, shared array or load may use. */
#define POOT_KIR_ALL_STORAGE_TYPES (((1u << POOT_KIR_SCALAR_COUNT) - 1u) & ~1u)

/* A value type: a scalar or a vector of 2 or 4 lanes of it. */
typedef struct poot_kir_type {
  uint8_t scalar; /* poot_kir_scalar */
  uint8_t lanes;  /* 1, 2 or 4 */
  uint16_t frag;  /* 0; reserved for matrix-fragment types (see top) */
} poot_kir_type;

static inline poot_kir_type poot_kir_type_make(poot_kir_scalar s, uint32_t lanes) {
  poot_kir_type t = {(uint8_t)s, (uint8_t)lanes, 0};
  return t;
}
static inline bool poot_kir_type_eq(poot_kir_type a, poot_kir_type b) {
  return a.scalar == b.scalar && a.lanes == b.lanes && a.frag == b.frag;
}
/* Size of one scalar in bytes (bool: 1, as a private/register value). */
size_t poot_kir_scalar_size(poot_kir_scalar s);
const char *poot_kir_scalar_name(poot_kir_scalar s); /* "f32"; "?" if bad */
bool poot_kir_scalar_is_float(poot_kir_scalar s);    /* f16 bf16 f32 */
bool poot_kir_scalar_is_signed(poot_kir_scalar s);   /* i8 i16 i32 i64 and floats */
bool poot_kir_scalar_is_int(poot_kir_scalar s);      /* integer, not bool */
/* Parses "f32", "u8"… into *out; false when unknown. */
bool poot_kir_scalar_from_name(const char *name, poot_kir_scalar *out);

/* ============================================== 2. the kernel as data */

/* Every statement kind. Columns: enum suffix, printed name, operand count
 * (-1: variable), class (poot_kir_op_class: the family an op is typed and
 * rendered with), type rule (poot_kir_type_rule: the scalars its operands
 * may have). The list is append-only; inference, verifier, printer,
 * interpreter and the renderers' dispatch are table-driven from it.
 *
 * Value statements (result != 0):
 *   CONST      imm = the scalar's bit pattern (zero-extended to 64 bits), type scalar
 *   BUILTIN    ref = poot_kir_builtin, imm = dimension (0..2) where it applies
 *   PARAM      ref = param index (kernel->params)
 *   unary      NEG NOT ABS EXP EXP2 LOG LOG2 SQRT RSQRT SIN COS TANH ERF FLOOR CEIL
 *              (NOT: bitwise on integers, logical on bool; math on floats)
 *   binary     ADD SUB MUL DIV REM MIN MAX AND OR XOR SHL SHR POW
 *              (operands of the result type; AND/OR/XOR also on bool;
 *               SHL/SHR: the shift amount has the same type as the value)
 *   compare    EQ NE LT LE GT GE -> bool with the operands' lanes
 *   SELECT     args (cond, a, b); cond bool scalar or bool of a's lanes
 *   FMA        args (a, b, c) = a*b+c rounded once (floats only)
 *   CONVERT    arg converted to `type` (same lanes), rounding as above
 *   BITCAST    arg reinterpreted as `type`
 *   SPLAT      scalar arg repeated into `type` (2 or 4 lanes)
 *   VEC        2 or 4 scalar args gathered into a vector
 *   EXTRACT    lane imm of a vector arg
 *   LOAD       space, ref (binding position or shared index), args (index);
 *              type = element scalar x lanes
 *   PRIV_LOAD  ref = private array index, imm = constant element index
 *   ATOMIC_*   space, ref, args (index, value) -> old value;
 *   ATOMIC_CAS args (index, compare, value) -> old value
 *   SG_REDUCE_ADD/MAX/MIN  args (value) -> same for every lane
 *   SG_SHUFFLE      args (value, lane)   value of `lane`
 *   SG_SHUFFLE_XOR  args (value), imm = mask: value of lane ^ mask
 *   SG_BROADCAST    args (value), imm = lane
 * Statements without a result:
 *   STORE      space, ref, args (index, value)
 *   PRIV_STORE ref, imm = element, args (value)
 *   BARRIER    workgroup execution + memory barrier
 *   CHECK      args (cond), imm = trap code (0..31)
 *   IF         args (cond), blocks: body (then), else_body
 *   FOR        args (start, end, step); result = the induction value, visible
 *              only in body: for (i = start; i < end; i += step). start/end/
 *              step have one type, u32 or i32; step > 0 at run time.
 * Matrix fragments and asynchronous copies (section "matrix fragments"
 * below; only on targets where poot_kir_target_has_matrix is true):
 *   MMA_LOAD   space SHARED, ref, args (row index) -> u32x4; imm bit 0 =
 *              transposed
 *   MMA        args (a u32x4, b u32x2, c f32x4) -> f32x4; imm = operand
 *              scalar (F16 or BF16)
 *   ASYNC_COPY ref = shared array, imm = binding position, args (shared
 *              index, global index, valid bool); no result
 *   ASYNC_COMMIT, ASYNC_WAIT imm = groups left pending; no result */
#define POOT_KIR_OPS(X)                                  \
  X(CONST, "const", 0, CONST, ANY)                       \
  X(BUILTIN, "builtin", 0, BUILTIN, ANY)                 \
  X(PARAM, "param", 0, PARAM, ANY)                       \
  X(NEG, "neg", 1, UNARY, ARITH)                         \
  X(NOT, "not", 1, UNARY, INT_BOOL)                      \
  X(ABS, "abs", 1, UNARY, SIGNED)                        \
  X(EXP, "exp", 1, UNARY, FLOAT)                         \
  X(EXP2, "exp2", 1, UNARY, FLOAT)                       \
  X(LOG, "log", 1, UNARY, FLOAT)                         \
  X(LOG2, "log2", 1, UNARY, FLOAT)                       \
  X(SQRT, "sqrt", 1, UNARY, FLOAT)                       \
  X(RSQRT, "rsqrt", 1, UNARY, FLOAT)                     \
  X(SIN, "sin", 1, UNARY, FLOAT)                         \
  X(COS, "cos", 1, UNARY, FLOAT)                         \
  X(TANH, "tanh", 1, UNARY, FLOAT)                       \
  X(ERF, "erf", 1, UNARY, FLOAT)                         \
  X(FLOOR, "floor", 1, UNARY, FLOAT)                     \
  X(CEIL, "ceil", 1, UNARY, FLOAT)                       \
  X(ADD, "add", 2, BINARY, ARITH)                        \
  X(SUB, "sub", 2, BINARY, ARITH)                        \
  X(MUL, "mul", 2, BINARY, ARITH)                        \
  X(DIV, "div", 2, BINARY, ARITH)                        \
  X(REM, "rem", 2, BINARY, INT)                          \
  X(MIN, "min", 2, BINARY, ARITH)                        \
  X(MAX, "max", 2, BINARY, ARITH)                        \
  X(AND, "and", 2, BINARY, INT_BOOL)                     \
  X(OR, "or", 2, BINARY, INT_BOOL)                       \
  X(XOR, "xor", 2, BINARY, INT_BOOL)                     \
  X(SHL, "shl", 2, BINARY, INT)                          \
  X(SHR, "shr", 2, BINARY, INT)                          \
  X(POW, "pow", 2, BINARY, FLOAT)                        \
  X(EQ, "eq", 2, COMPARE, ARITH_BOOL)                    \
  X(NE, "ne", 2, COMPARE, ARITH_BOOL)                    \
  X(LT, "lt", 2, COMPARE, ARITH)                         \
  X(LE, "le", 2, COMPARE, ARITH)                         \
  X(GT, "gt", 2, COMPARE, ARITH)                         \
  X(GE, "ge", 2, COMPARE, ARITH)                         \
  X(SELECT, "select", 3, SELECT, ANY)                    \
  X(FMA, "fma", 3, FMA, FLOAT)                           \
  X(CONVERT, "convert", 1, CONVERT, ANY)                 \
  X(BITCAST, "bitcast", 1, BITCAST, ANY)                 \
  X(SPLAT, "splat", 1, LANES, ANY)                       \
  X(VEC, "vec", -1, LANES, ANY)                          \
  X(EXTRACT, "extract", 1, LANES, ANY)                   \
  X(LOAD, "load", 1, LOAD, ANY)                          \
  X(STORE, "store", 2, STORE, ANY)                       \
  X(PRIV_LOAD, "priv_load", 0, PRIV_LOAD, ANY)           \
  X(PRIV_STORE, "priv_store", 1, PRIV_STORE, ANY)        \
  X(ATOMIC_ADD, "atomic_add", 2, ATOMIC, WORD)           \
  X(ATOMIC_MAX, "atomic_max", 2, ATOMIC, WORD)           \
  X(ATOMIC_MIN, "atomic_min", 2, ATOMIC, WORD)           \
  X(ATOMIC_XCHG, "atomic_xchg", 2, ATOMIC, WORD)         \
  X(ATOMIC_CAS, "atomic_cas", 3, ATOMIC, WORD)           \
  X(SG_REDUCE_ADD, "sg_reduce_add", 1, SUBGROUP, WORD)   \
  X(SG_REDUCE_MAX, "sg_reduce_max", 1, SUBGROUP, WORD)   \
  X(SG_REDUCE_MIN, "sg_reduce_min", 1, SUBGROUP, WORD)   \
  X(SG_SHUFFLE, "sg_shuffle", 2, SUBGROUP, WORD)         \
  X(SG_SHUFFLE_XOR, "sg_shuffle_xor", 1, SUBGROUP, WORD) \
  X(SG_BROADCAST, "sg_broadcast", 1, SUBGROUP, WORD)     \
  X(BARRIER, "barrier", 0, BARRIER, ANY)                 \
  X(CHECK, "check", 1, CHECK, BOOL)                      \
  X(IF, "if", 1, IF, BOOL)                               \
  X(FOR, "for", 3, FOR, INDEX)                           \
  X(MMA_LOAD, "mma_load", 1, MATRIX, INDEX)              \
  X(MMA, "mma", 3, MATRIX, ANY)                          \
  X(ASYNC_COPY, "async_copy", 3, ASYNC, ANY)             \
  X(ASYNC_COMMIT, "async_commit", 0, ASYNC, ANY)         \
  X(ASYNC_WAIT, "async_wait", 0, ASYNC, ANY)             \
  X(DOT4_I8, "dot4_i8", 3, DOT4, INDEX)

typedef enum poot_kir_op {
#define POOT_KIR__OP_ENUM(name, str, nargs, cls, types) POOT_KIR_OP_##name,
  POOT_KIR_OPS(POOT_KIR__OP_ENUM)
#undef POOT_KIR__OP_ENUM
      POOT_KIR_OP_COUNT
} poot_kir_op;

/* An op's family (the class column of POOT_KIR_OPS): ops of one class share
 * one type rule shape and one routine in each renderer. */
typedef enum poot_kir_op_class {
  POOT_KIR_CLASS_CONST = 0,
  POOT_KIR_CLASS_BUILTIN,
  POOT_KIR_CLASS_PARAM,
  POOT_KIR_CLASS_UNARY,   /* result = operand type */
  POOT_KIR_CLASS_BINARY,  /* two operands of the result type */
  POOT_KIR_CLASS_COMPARE, /* two operands of one type -> bool of their lanes */
  POOT_KIR_CLASS_SELECT,
  POOT_KIR_CLASS_FMA,
  POOT_KIR_CLASS_CONVERT,
  POOT_KIR_CLASS_BITCAST,
  POOT_KIR_CLASS_LANES, /* SPLAT VEC EXTRACT: values moved between lanes */
  POOT_KIR_CLASS_LOAD,
  POOT_KIR_CLASS_STORE,
  POOT_KIR_CLASS_PRIV_LOAD,
  POOT_KIR_CLASS_PRIV_STORE,
  POOT_KIR_CLASS_ATOMIC,
  POOT_KIR_CLASS_SUBGROUP,
  POOT_KIR_CLASS_BARRIER,
  POOT_KIR_CLASS_CHECK,
  POOT_KIR_CLASS_IF,
  POOT_KIR_CLASS_FOR,
  POOT_KIR_CLASS_MATRIX, /* MMA_LOAD MMA: subgroup-wide matrix fragments */
  POOT_KIR_CLASS_ASYNC,  /* ASYNC_COPY ASYNC_COMMIT ASYNC_WAIT: per-thread copies */
  /* DOT4_I8(a, b, c): i32 c + Σ_{i<4} sext(byte i of a) · sext(byte i of b),
   * a and b u32 or i32 scalars (their bits), c an i32 scalar; wraps. PTX
   * dp4a.s32.s32, AMDGPU sdot4 where the target has it; elsewhere shifts
   * and multiplies (exact). poot_kir_target.dot4_native says which. */
  POOT_KIR_CLASS_DOT4,
  POOT_KIR_CLASS_COUNT
} poot_kir_op_class;

/* The scalars an op's operands may have (the type rule column of
 * POOT_KIR_OPS); the class says which operand the rule constrains. */
typedef enum poot_kir_type_rule {
  POOT_KIR_TYPES_ANY = 0,    /* the class's own rule alone */
  POOT_KIR_TYPES_ARITH,      /* i32 u32 i64 f16 f32 */
  POOT_KIR_TYPES_INT,        /* i32 u32 i64 */
  POOT_KIR_TYPES_INT_BOOL,   /* i32 u32 i64 bool */
  POOT_KIR_TYPES_ARITH_BOOL, /* i32 u32 i64 f16 f32 bool */
  POOT_KIR_TYPES_SIGNED,     /* i32 i64 f16 f32 */
  POOT_KIR_TYPES_FLOAT,      /* f16 f32 */
  POOT_KIR_TYPES_WORD,       /* u32 i32 f32 scalars (atomic elements, subgroup values) */
  POOT_KIR_TYPES_BOOL,       /* a bool scalar (conditions) */
  POOT_KIR_TYPES_INDEX,      /* a u32 or i32 scalar (loop bounds) */
  POOT_KIR_TYPES_COUNT
} poot_kir_type_rule;

const char *poot_kir_op_name(poot_kir_op op); /* "add"; "?" if bad */
/* Fixed operand count of an op, or -1 when variable (VEC). */
int poot_kir_op_arg_count(poot_kir_op op);

typedef enum poot_kir_builtin {
  POOT_KIR_BUILTIN_WORKGROUP_ID = 0, /* dim 0..2 */
  POOT_KIR_BUILTIN_NUM_WORKGROUPS,   /* dim 0..2 */
  POOT_KIR_BUILTIN_LOCAL_ID,         /* dim 0..2 */
  POOT_KIR_BUILTIN_LOCAL_SIZE,       /* dim 0..2; constant (kernel->workgroup_size) */
  POOT_KIR_BUILTIN_LOCAL_INDEX,      /* linear local id */
  POOT_KIR_BUILTIN_SUBGROUP_ID,      /* linear id / subgroup size */
  POOT_KIR_BUILTIN_SUBGROUP_LANE,    /* linear id % subgroup size */
  POOT_KIR_BUILTIN_SUBGROUP_SIZE,
  POOT_KIR_BUILTIN_COUNT
} poot_kir_builtin;
const char *poot_kir_builtin_name(poot_kir_builtin b); /* "workgroup_id" */

typedef enum poot_kir_space {
  POOT_KIR_SPACE_GLOBAL = 0, /* ref = binding position in kernel->bindings */
  POOT_KIR_SPACE_SHARED = 1, /* ref = index in kernel->shared */
} poot_kir_space;

typedef enum poot_kir_access {
  POOT_KIR_ACCESS_READ = 1,
  POOT_KIR_ACCESS_WRITE = 2,
  POOT_KIR_ACCESS_READ_WRITE = 3,
} poot_kir_access;

/* A global buffer binding. */
typedef struct poot_kir_binding {
  const char *name;       /* identifier, for printing and renderers' names */
  uint32_t binding;       /* binding number (descriptor set 0 / group 0); unique */
  poot_kir_scalar elem;   /* element type (not bool) */
  poot_kir_access access; /* READ bindings are never stored to */
  uint32_t align;         /* base alignment in bytes (power of two ≥ elem size; 0 → 16) */
  /* Never written while kernels run (weights, constants): a renderer may
   * read it before waiting for the kernels before this one (PTX: ahead of
   * griddepcontrol.wait). */
  bool invariant;
} poot_kir_binding;

typedef enum poot_kir_param_kind {
  POOT_KIR_PARAM_PUSH = 0, /* dispatch constant (see top) */
  POOT_KIR_PARAM_SLOT = 1, /* read from a bound buffer at run time */
} poot_kir_param_kind;

typedef struct poot_kir_param {
  const char *name;
  poot_kir_scalar type; /* u32, i32 or f32 */
  poot_kir_param_kind kind;
  uint32_t slot_ref;   /* SLOT: binding position (its elem must equal type) */
  uint32_t slot_index; /* SLOT: element index in that binding */
} poot_kir_param;

/* A workgroup-shared array of `count` elements of scalar `elem`. */
typedef struct poot_kir_shared {
  const char *name;
  poot_kir_scalar elem;
  uint32_t count;
} poot_kir_shared;

/* A private (per-thread) array of `count` values of `type`, indexed only by
 * constants (a variable has count 1). Initial contents are zero. */
typedef struct poot_kir_private {
  const char *name;
  poot_kir_type type;
  uint32_t count;
} poot_kir_private;

/* A value id: 1..kernel->value_count; 0 means "none". */
typedef uint32_t poot_kir_value;

typedef struct poot_kir_inst poot_kir_inst;

typedef struct poot_kir_block {
  poot_kir_inst *first; /* statements in order, linked through ->next */
  poot_kir_inst *last;
  uint32_t count;
} poot_kir_block;

#define POOT_KIR_MAX_ARGS 4

/* One statement. Field use per op is listed at POOT_KIR_OPS. */
struct poot_kir_inst {
  poot_kir_op op;
  uint32_t id;           /* statement number, 1-based in program order (messages) */
  poot_kir_value result; /* defined value, or 0 */
  poot_kir_type type;    /* result type; STORE/PRIV_STORE: the stored type */
  uint32_t arg_count;
  poot_kir_value args[POOT_KIR_MAX_ARGS];
  poot_kir_space space;     /* LOAD, STORE, ATOMIC_* */
  uint32_t ref;             /* binding position / shared / private / param / builtin */
  uint64_t imm;             /* CONST bits, builtin dim, lane, element, mask, trap code */
  poot_kir_block body;      /* IF then-block, FOR body */
  poot_kir_block else_body; /* IF else-block */
  poot_kir_inst *next;
};

typedef struct poot_kir_value_info {
  poot_kir_type type;
  const poot_kir_inst *def; /* the defining statement */
} poot_kir_value_info;

/* A finished kernel: immutable, owns all its memory. */
typedef struct poot_kir_kernel {
  const char *name;           /* C identifier; the entry-point name */
  uint32_t workgroup_size[3]; /* fixed at build */
  uint32_t subgroup_size;     /* the size the kernel was built for; 0 = any */
  const poot_kir_binding *bindings;
  uint32_t binding_count;
  const poot_kir_param *params;
  uint32_t param_count;
  const poot_kir_shared *shared;
  uint32_t shared_count;
  const poot_kir_private *privates;
  uint32_t private_count;
  const poot_kir_value_info *values; /* values[0] is unused */
  uint32_t value_count;              /* highest value id */
  poot_kir_block body;
  uint32_t inst_count;
  bool has_checks;
  uint32_t error_binding; /* binding number of the error word (see top) */
  uint32_t param_binding; /* WGSL uniform buffer binding for PUSH params */
  uint64_t hash;          /* content hash of the printed form (stable) */
  poot_hash128 hash128;   /* 128-bit hash of the printed form (cache keys) */
  const char *text;       /* the printed form (poot_kir_print), owned */
  size_t text_len;
  void *impl_; /* private */
} poot_kir_kernel;

void poot_kir_kernel_destroy(poot_kir_kernel *kernel); /* NULL-safe */
/* Linear workgroup size: x*y*z. */
uint32_t poot_kir_kernel_threads(const poot_kir_kernel *kernel);
/* Total shared memory in bytes. */
uint64_t poot_kir_kernel_shared_bytes(const poot_kir_kernel *kernel);
/* The byte offset of shared array `index` in the kernel's shared window:
 * the arrays in order, each at a 16-byte aligned offset; index
 * shared_count gives the window's size. */
uint64_t poot_kir_kernel_shared_offset(const poot_kir_kernel *kernel, uint32_t index);
/* The binding position whose number is `binding`, or -1. */
int poot_kir_kernel_find_binding(const poot_kir_kernel *kernel, uint32_t binding);
/* The CONST statement's bits when v is defined by CONST; false otherwise. */
bool poot_kir_kernel_const_bits(const poot_kir_kernel *kernel, poot_kir_value v,
                                uint64_t *out_bits);

/* ======================================================= 3. target */

typedef enum poot_kir_lang {
  POOT_KIR_LANG_NONE = 0, /* the interpreter */
  POOT_KIR_LANG_PTX,
  POOT_KIR_LANG_GLSL, /* GLSL compute, compiled to SPIR-V */
  POOT_KIR_LANG_WGSL,
  POOT_KIR_LANG_AMDGPU, /* LLVM IR text for amdgcn-amd-amdhsa */
} poot_kir_lang;

typedef enum poot_kir_atomic {
  POOT_KIR_ATOMIC_ADD = 0,
  POOT_KIR_ATOMIC_MAX,
  POOT_KIR_ATOMIC_MIN,
  POOT_KIR_ATOMIC_XCHG,
  POOT_KIR_ATOMIC_CAS,
  POOT_KIR_ATOMIC_COUNT
} poot_kir_atomic;

typedef struct poot_kir_target {
  const char *name;           /* "sm_80", "vulkan-sg32", … for messages only */
  poot_kir_lang lang;         /* which renderer */
  uint32_t subgroup_size;     /* the subgroup size kernels are built for (0 = none/unknown) */
  uint32_t subgroup_size_min; /* range the device may use (Vulkan) */
  uint32_t subgroup_size_max;
  bool subgroup_ops;           /* SG_* ops available */
  uint32_t max_workgroup_size; /* threads per workgroup */
  uint32_t max_workgroup_dims[3];
  uint32_t shared_memory_bytes; /* per workgroup */
  /* The most shared memory a workgroup may use when its kernel opts in
   * (PTX: a dynamic shared window past the 48 KiB of static .shared, which
   * the device allows kernel by kernel, cuFuncSetAttribute); 0: none, the
   * limit is shared_memory_bytes. Only a language whose renderer and device
   * opt in sets it (PTX); the verifier accepts a kernel's shared window up
   * to it, and the planner budgets with it unless
   * poot_compile_options.shared_memory_static (the form "static-shared"). */
  uint32_t shared_memory_optin_bytes;
  uint32_t storage_types; /* bit set of POOT_KIR_SCALAR_BIT: buffers/shared/loads */
  uint32_t arith_types;   /* bit set: arithmetic, compare, math */
  uint32_t atomic_types[POOT_KIR_ATOMIC_COUNT]; /* bit set of scalar types per atomic */
  uint32_t max_vector_lanes;                    /* 4 */
  uint32_t max_bindings;                        /* storage bindings, error word included */
  uint32_t max_push_bytes;                      /* PUSH params x 4 bytes */
  bool has_trap;                                /* real trap; else the error word */
  /* Subgroup lanes are the SIMD lanes of a CPU core (a CPU Vulkan device
   * such as lavapipe): per-lane contiguous chunks become gathers there, so
   * the templates keep lane-interleaved access patterns. */
  bool simd_cpu;
  /* GLSL and WGSL: the language's own fma() rounds once on this device, as
   * a probe dispatch by the device layer showed (Vulkan does not promise
   * it); the renderers emit it instead of the exact integer routine
   * poot_fma, which costs ~60 integer operations and, inlined at every one
   * of a GEMM's hundreds of fma sites, makes a kernel a driver compiles for
   * seconds. false (the default): poot_fma. */
  bool fma_fused;
  /* GLSL: the language's own half conversions are exact on this device, as
   * the device layer's probe dispatch showed over every half pattern
   * (widen: unpackHalf2x16 gives each half's exact f32 value) and over every
   * f16 rounding tie, its neighbours, the subnormal and overflow edges
   * (narrow: packHalf2x16 rounds to nearest even), a NaN giving a NaN. The
   * renderers then emit them instead of the exact integer routines
   * poot_f16_to_f32 (~13 operations a half, which made every f16 GEMV
   * ALU-bound on a GPU) and poot_f32_to_f16. false (the default): the
   * routines. */
  bool f16_widen_native;
  bool f16_narrow_native;
  /* The GEMV's weight words in flight per lane for block formats
   * (templates/gemv.c); 0: the planner's 204, as for every other format. A SPIR-V driver's compiler
   * keeps each of them in a register: through NVIDIA's Vulkan driver 204 gave the H200's Q4_K/Q6_K
   * GEMVs 131-136 registers (one workgroup per SM), 48 gave 99 and a 20 %
   * faster 1B Q4_K_M decode, where PTX runs 204 and 48 alike (GLSL's
   * default: 48; docs/PERFORMANCE.md). */
  uint32_t gemv_block_words;
  /* DOT4_I8 is one instruction on this target (PTX dp4a, AMDGPU sdot4);
   * false: the renderers emulate it exactly with shifts and multiplies, and
   * templates may prefer a float form. */
  bool dot4_native;
  uint32_t watchdog_ms; /* budget per submission; 0 = none */
  /* PTX sm_90+: every kernel waits for the kernel before it in the stream
   * (griddepcontrol.wait: that grid finished and its writes are visible)
   * before its first memory access; the device launches with programmatic
   * stream serialization, so a kernel's launch and start overlap the tail
   * of the one before. Only a device that launches that way may set it: a
   * kernel rendered with it and launched plainly is still correct, one
   * without it launched that way is not. */
  bool grid_dependency;
  /* Language details (read only by the matching renderer): */
  uint32_t sm_version;     /* PTX: 80, 90 */
  uint32_t ptx_version;    /* PTX ISA: e.g. 78 = 7.8 */
  const char *amdgpu_arch; /* "gfx90a", "gfx942", "gfx1100" */
  uint32_t vulkan_version; /* GLSL: 12 = Vulkan 1.2 (SPIR-V 1.5) */
} poot_kir_target;

/* The interpreter's target (tests and the reference run): 4096 threads,
 * 1 MiB shared, every atomic on 32-bit words, a real trap; subgroup_size 0
 * → 32. Fills *out; never fails. */
void poot_kir_target_init_interp(poot_kir_target *out, uint32_t subgroup_size);
/* A target with only what every device of `lang` has (its atomics, trap,
 * storage types, binding and push limits, language version: PTX ISA 7.8,
 * Vulkan 1.2) and otherwise the generic limits (1024 threads, 32 bindings,
 * 128 push bytes); the device
 * or the device catalogue (poot/devices.h) then fills in what it knows.
 * subgroup_size 0 = no subgroup ops; POOT_KIR_LANG_NONE is the
 * interpreter's target. Fills *out; never fails. */
void poot_kir_target_init(poot_kir_target *out, poot_kir_lang lang, uint32_t subgroup_size);
/* Stable hash of every field that affects rendering (cache key part). */
uint64_t poot_kir_target_hash(const poot_kir_target *target);
/* The kernel cache key: the kernel's 128-bit hash mixed with the target
 * hash. Equal keys do not prove equal kernels: compare with
 * poot_kir_kernel_same on a hit. */
poot_hash128 poot_kir_cache_key(const poot_kir_kernel *kernel, const poot_kir_target *target);
/* True when the two kernels have the same printed form (the same kernel). */
bool poot_kir_kernel_same(const poot_kir_kernel *a, const poot_kir_kernel *b);
static inline bool poot_kir_target_has_storage(const poot_kir_target *t, poot_kir_scalar s) {
  return (t->storage_types & POOT_KIR_SCALAR_BIT(s)) != 0;
}
static inline bool poot_kir_target_has_arith(const poot_kir_target *t, poot_kir_scalar s) {
  return (t->arith_types & POOT_KIR_SCALAR_BIT(s)) != 0;
}
static inline bool poot_kir_target_has_atomic(const poot_kir_target *t, poot_kir_atomic a,
                                              poot_kir_scalar s) {
  return (t->atomic_types[a] & POOT_KIR_SCALAR_BIT(s)) != 0;
}

/* Whether the target runs MMA_LOAD, MMA and the ASYNC_* ops (the matrix
 * fragments above): PTX at sm_80 and later, and the interpreter. */
bool poot_kir_target_has_matrix(const poot_kir_target *t);

/* ====================================================== 4. the builder */

typedef struct poot_kir_builder poot_kir_builder;

typedef struct poot_kir_kernel_desc {
  const char *name;           /* C identifier (copied) */
  uint32_t workgroup_size[3]; /* 0 entries count as 1 */
  uint32_t subgroup_size;     /* 0 = kernel works at any size */
} poot_kir_kernel_desc;

/* Creates a builder. INVALID_ARGUMENT on a bad name or size. */
POOT_MUST_USE poot_status poot_kir_builder_create(const poot_kir_kernel_desc *desc,
                                                  poot_kir_builder **out_builder);
void poot_kir_builder_destroy(poot_kir_builder *builder); /* NULL-safe */
/* Finishes the kernel: closes nothing implicitly (every if/for must be ended),
 * verifies it target-independently (poot_kir_verify with target NULL),
 * assigns error/param bindings and the hash. Consumes the builder on
 * success AND failure. */
POOT_MUST_USE poot_status poot_kir_builder_finish(poot_kir_builder *builder,
                                                  poot_kir_kernel **out_kernel);

/* Declarations (names are copied). out_* receives the position/index. */
POOT_MUST_USE poot_status poot_kir_add_binding(poot_kir_builder *b, const poot_kir_binding *desc,
                                               uint32_t *out_ref);
POOT_MUST_USE poot_status poot_kir_add_param(poot_kir_builder *b, const poot_kir_param *desc,
                                             uint32_t *out_index);
POOT_MUST_USE poot_status poot_kir_add_shared(poot_kir_builder *b, const char *name,
                                              poot_kir_scalar elem, uint32_t count,
                                              uint32_t *out_ref);
POOT_MUST_USE poot_status poot_kir_add_private(poot_kir_builder *b, const char *name,
                                               poot_kir_type type, uint32_t count,
                                               uint32_t *out_ref);

/* Values. Every call checks its operand types and returns INVALID_ARGUMENT
 * naming the kernel and the statement on a mismatch. */
POOT_MUST_USE poot_status poot_kir_const(poot_kir_builder *b, poot_kir_scalar type, uint64_t bits,
                                         poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_const_u32(poot_kir_builder *b, uint32_t v, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_const_i32(poot_kir_builder *b, int32_t v, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_const_f32(poot_kir_builder *b, float v, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_const_bool(poot_kir_builder *b, bool v, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_builtin_get(poot_kir_builder *b, poot_kir_builtin which,
                                               uint32_t dim, poot_kir_value *out);
/* workgroup_id[dim] * local_size[dim] + local_id[dim] (u32). */
POOT_MUST_USE poot_status poot_kir_global_id(poot_kir_builder *b, uint32_t dim,
                                             poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_param_get(poot_kir_builder *b, uint32_t index,
                                             poot_kir_value *out);
/* Unary, binary, compare and 3-operand ops (FMA, SELECT) by op code. */
POOT_MUST_USE poot_status poot_kir_unary(poot_kir_builder *b, poot_kir_op op, poot_kir_value a,
                                         poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_binary(poot_kir_builder *b, poot_kir_op op, poot_kir_value a,
                                          poot_kir_value c, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_fma(poot_kir_builder *b, poot_kir_value a, poot_kir_value c,
                                       poot_kir_value d, poot_kir_value *out);
/* i32 c + Σ of the four signed byte products of a and b (DOT4_I8). */
POOT_MUST_USE poot_status poot_kir_dot4_i8(poot_kir_builder *b, poot_kir_value a, poot_kir_value c,
                                           poot_kir_value acc, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_select(poot_kir_builder *b, poot_kir_value cond,
                                          poot_kir_value a, poot_kir_value c, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_convert(poot_kir_builder *b, poot_kir_scalar to,
                                           poot_kir_value a, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_bitcast(poot_kir_builder *b, poot_kir_type to, poot_kir_value a,
                                           poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_splat(poot_kir_builder *b, uint32_t lanes, poot_kir_value a,
                                         poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_vec(poot_kir_builder *b, uint32_t count,
                                       const poot_kir_value *elems, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_extract(poot_kir_builder *b, poot_kir_value v, uint32_t lane,
                                           poot_kir_value *out);

/* Memory. lanes is 1, 2 or 4; index is a u32 or i32 element index. */
POOT_MUST_USE poot_status poot_kir_load(poot_kir_builder *b, poot_kir_space space, uint32_t ref,
                                        poot_kir_value index, uint32_t lanes, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_store(poot_kir_builder *b, poot_kir_space space, uint32_t ref,
                                         poot_kir_value index, poot_kir_value value);
POOT_MUST_USE poot_status poot_kir_priv_load(poot_kir_builder *b, uint32_t ref, uint32_t element,
                                             poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_priv_store(poot_kir_builder *b, uint32_t ref, uint32_t element,
                                              poot_kir_value value);
/* op is one of ATOMIC_ADD/MAX/MIN/XCHG; returns the old value. */
POOT_MUST_USE poot_status poot_kir_atomic_rmw(poot_kir_builder *b, poot_kir_op op,
                                              poot_kir_space space, uint32_t ref,
                                              poot_kir_value index, poot_kir_value value,
                                              poot_kir_value *out_old);
POOT_MUST_USE poot_status poot_kir_atomic_cas(poot_kir_builder *b, poot_kir_space space,
                                              uint32_t ref, poot_kir_value index,
                                              poot_kir_value compare, poot_kir_value value,
                                              poot_kir_value *out_old);

/* Synchronization and subgroups. */
POOT_MUST_USE poot_status poot_kir_barrier(poot_kir_builder *b);
/* op is SG_REDUCE_ADD/MAX/MIN. */
POOT_MUST_USE poot_status poot_kir_subgroup_reduce(poot_kir_builder *b, poot_kir_op op,
                                                   poot_kir_value v, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_subgroup_shuffle(poot_kir_builder *b, poot_kir_value v,
                                                    poot_kir_value lane, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_subgroup_shuffle_xor(poot_kir_builder *b, poot_kir_value v,
                                                        uint32_t mask, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_subgroup_broadcast(poot_kir_builder *b, poot_kir_value v,
                                                      uint32_t lane, poot_kir_value *out);

/* Matrix fragments and asynchronous copies (see "matrix fragments" at the
 * top). mma_load: ldmatrix.x4 from shared array `ref`, `row` the element
 * index of this lane's row. mma: d = a*b + c, `operand` F16 or BF16. */
POOT_MUST_USE poot_status poot_kir_mma_load(poot_kir_builder *b, uint32_t ref, poot_kir_value row,
                                            bool transposed, poot_kir_value *out);
POOT_MUST_USE poot_status poot_kir_mma(poot_kir_builder *b, poot_kir_scalar operand,
                                       poot_kir_value a, poot_kir_value bfrag, poot_kir_value c,
                                       poot_kir_value *out);
/* 16 bytes from element `src` of binding position `binding` to element
 * `dst` of shared array `shared`; zeros when `valid` (bool) is false. */
POOT_MUST_USE poot_status poot_kir_async_copy(poot_kir_builder *b, uint32_t shared,
                                              poot_kir_value dst, uint32_t binding,
                                              poot_kir_value src, poot_kir_value valid);
POOT_MUST_USE poot_status poot_kir_async_commit(poot_kir_builder *b);
POOT_MUST_USE poot_status poot_kir_async_wait(poot_kir_builder *b, uint32_t pending);

/* check(cond, trap_code): trap_code 0..31. */
POOT_MUST_USE poot_status poot_kir_check(poot_kir_builder *b, poot_kir_value cond,
                                         uint32_t trap_code);

/* Structured control flow: if_begin … [else_begin …] end; for_begin … end. */
POOT_MUST_USE poot_status poot_kir_if_begin(poot_kir_builder *b, poot_kir_value cond);
POOT_MUST_USE poot_status poot_kir_else_begin(poot_kir_builder *b);
POOT_MUST_USE poot_status poot_kir_for_begin(poot_kir_builder *b, poot_kir_value start,
                                             poot_kir_value end, poot_kir_value step,
                                             poot_kir_value *out_index);
POOT_MUST_USE poot_status poot_kir_end(poot_kir_builder *b);

/* The type of a value built so far (for templates). */
poot_kir_type poot_kir_builder_value_type(const poot_kir_builder *b, poot_kir_value v);

/* ======================================= 5. verifier, printer, hash */

/* Checks types, scoping, operand counts, uniform control flow for barriers
 * and subgroup ops, trap codes, and, when target is not NULL, the target's
 * limits: workgroup size, shared memory, storage/arith types, atomics,
 * vector lanes, bindings, push bytes, subgroup ops and size.
 * INVALID_ARGUMENT (malformed kernel) or UNSUPPORTED (valid kernel that this
 * target cannot run), naming the kernel and the offending statement. */
POOT_MUST_USE poot_status poot_kir_verify(const poot_kir_kernel *kernel,
                                          const poot_kir_target *target);
/* Appends the readable text form (deterministic; the hash is over it). */
void poot_kir_print(const poot_kir_kernel *kernel, poot_strbuf *out);
/* Appends one statement as a line (no nested blocks, no newline). */
void poot_kir_print_inst(const poot_kir_kernel *kernel, const poot_kir_inst *inst,
                         poot_strbuf *out);

/* ===================================================== 6. interpreter */

typedef struct poot_kir_buffer {
  void *data;  /* host memory; borrowed */
  size_t size; /* bytes */
} poot_kir_buffer;

typedef struct poot_kir_interp_options {
  uint32_t grid[3];       /* workgroups per dimension; 0 counts as 1 */
  uint32_t subgroup_size; /* 0 → kernel->subgroup_size, else 32 */
  /* buffers[i] is bound to kernel->bindings[i]; buffer_count == binding_count. */
  const poot_kir_buffer *buffers;
  size_t buffer_count;
  /* PUSH param values as 32-bit patterns, params[i] for kernel->params[i]
   * (SLOT entries ignored). */
  const uint32_t *params;
  size_t param_count;
  /* NULL: a failed check stops the run with KERNEL_FAULT. Non-NULL: a failed
   * check ORs (1u << trap_code) into *error_word and the run goes on (the
   * SPIR-V/WGSL behaviour). */
  uint32_t *error_word;
  /* Report a data race on shared memory (a thread reads or writes an element
   * that another thread wrote since the last barrier, or writes one another
   * read) as INVALID_ARGUMENT. Default on (the zero value enables it). */
  bool no_race_check;
  uint64_t
      max_steps; /* statements executed (lockstep, all threads at once) before TIMEOUT; 0 → 1e9 */
} poot_kir_interp_options;

/* Runs the kernel on the CPU, workgroup by workgroup in order, the threads
 * of a workgroup in lockstep statement by statement (divergent if/for run
 * under per-thread masks). Errors: INVALID_ARGUMENT (bad options, an
 * out-of-range or misaligned access, integer division by zero, a race, a
 * subgroup op or barrier reached by part of a group), KERNEL_FAULT (a failed
 * check: "kernel K: check failed with trap code N at statement #S in
 * workgroup (x,y,z) thread T"), TIMEOUT (max_steps). Buffers keep whatever
 * was written before the fault. Not thread safe per buffer set. */
POOT_MUST_USE poot_status poot_kir_interp_run(const poot_kir_kernel *kernel,
                                              const poot_kir_interp_options *options);

/* ======================================================= 7. renderers */

/* Each renderer appends the kernel's source for the target to `out`.
 * Pure: the same kernel and target give byte-identical output. They call
 * poot_kir_verify(kernel, target) first (UNSUPPORTED when the target cannot
 * run it) and return UNSUPPORTED for an op they do not know; on failure
 * `out` is left as it was. Implemented in src/kir/render_<lang>.c; GLSL and
 * WGSL share one shader-text writer (src/kir/render_shader.c). */

/* A renderer: one row per KIR language (src/kir/render.c). */
typedef poot_status (*poot_kir_render_fn)(const poot_kir_kernel *kernel,
                                          const poot_kir_target *target, poot_strbuf *out);
typedef struct poot_kir_renderer {
  poot_kir_lang lang;
  const char *name;           /* "ptx", "glsl", "wgsl", "amdgpu"; "kir" for the interpreter */
  const char *file_extension; /* of a file holding the output, without the dot: "ptx", "comp" */
  poot_kir_render_fn render;  /* never NULL */
} poot_kir_renderer;

/* The renderer of `lang`, or NULL for a value outside poot_kir_lang. The row
 * of POOT_KIR_LANG_NONE (the interpreter, which runs KIR itself) writes the
 * kernel's printed form (poot_kir_print). Static storage; thread safe. */
const poot_kir_renderer *poot_kir_renderer_for(poot_kir_lang lang);

/* Renders `kernel` in target->lang with that language's renderer. Errors:
 * INVALID_ARGUMENT (NULL argument, a language without a renderer), and the
 * renderer's. */
POOT_MUST_USE poot_status poot_kir_render(const poot_kir_kernel *kernel,
                                          const poot_kir_target *target, poot_strbuf *out);

/* PTX text for target->sm_version (80, 90) and ptx_version; entry
 * `.visible .entry <kernel->name>`. A kernel whose shared window
 * (poot_kir_kernel_shared_offset) is over POOT_KIR_PTX_STATIC_SHARED_MAX
 * declares one `.extern .shared` array and addresses each of its arrays at
 * its offset in it; its launches pass poot_kir_ptx_dynamic_shared_bytes. */
POOT_MUST_USE poot_status poot_kir_render_ptx(const poot_kir_kernel *kernel,
                                              const poot_kir_target *target, poot_strbuf *out);
/* PTX: the most shared memory a kernel declares statically (48 KiB). */
#define POOT_KIR_PTX_STATIC_SHARED_MAX 49152u
/* PTX: the bytes of dynamic shared memory every launch of `kernel` passes
 * (and the device allows the kernel, cuFuncSetAttribute): its shared window
 * when that is over POOT_KIR_PTX_STATIC_SHARED_MAX, else 0 (its arrays are
 * static .shared, rendered as they always were). The one place this fact
 * lives: the renderer and the PTX device both ask it. */
uint64_t poot_kir_ptx_dynamic_shared_bytes(const poot_kir_kernel *kernel);
/* GLSL 4.50 compute text (#version 450 + extensions the target allows). */
POOT_MUST_USE poot_status poot_kir_render_glsl(const poot_kir_kernel *kernel,
                                               const poot_kir_target *target, poot_strbuf *out);
/* GLSL text → SPIR-V words with the linked glslang (target->vulkan_version).
 * `out_words` is a poot_vec of uint32_t (initialised by the caller with
 * elem_size 4); FORMAT with glslang's log on a compile error. */
POOT_MUST_USE poot_status poot_kir_glsl_to_spirv(const char *glsl, size_t len,
                                                 const poot_kir_target *target,
                                                 poot_vec *out_words);
/* render_glsl + glsl_to_spirv. */
POOT_MUST_USE poot_status poot_kir_compile_spirv(const poot_kir_kernel *kernel,
                                                 const poot_kir_target *target,
                                                 poot_vec *out_words);
/* WGSL text; entry point `@compute fn <kernel->name>`. */
POOT_MUST_USE poot_status poot_kir_render_wgsl(const poot_kir_kernel *kernel,
                                               const poot_kir_target *target, poot_strbuf *out);
/* LLVM IR text for amdgcn-amd-amdhsa and target->amdgpu_arch; the kernel is
 * `amdgpu_kernel void @<kernel->name>`. */
POOT_MUST_USE poot_status poot_kir_render_amdgpu(const poot_kir_kernel *kernel,
                                                 const poot_kir_target *target, poot_strbuf *out);

#ifdef __cplusplus
}
#endif

#endif /* POOT_KIR_H */
