/* poot/graph.h — the graph IR (DESIGN §3): dtypes, shapes, values, storage
 * classes, ops, composites, checks, the builder, the read API, the verifier,
 * the text form (.pgraph) and the structural hash.
 *
 * Model of the IR
 * ---------------
 * A graph is a list of nodes in regions. Region 0 (the root) is the graph
 * itself; every composite node owns one more region, its body. A node has an
 * op, operands (values), attributes and one or more results (values). A value
 * (`poot_value`, a small integer id unique in the whole graph) has a type:
 * a dtype and a static shape. Every node is in exactly one region and may use
 * only values defined in that same region (bodies are isolated from above:
 * their inputs are their Param leaves, bound in order to the composite's
 * operands).
 *
 * Leaves (op POOT_OP_LEAF, no operands, one result) carry the storage class:
 * Const (literal data), Weight(key, name), State(name), Slot(kind) and Param
 * (index, name). Every other node's result is a Temp.
 *
 * Results of a graph: the primary output (one value of the root region), the
 * new value of each State (a State without an explicit update keeps its
 * value), and an environment of named extra outputs.
 *
 * Memory: a graph owns an arena holding everything it references; pointers
 * returned by the read API are borrowed and valid until the graph is
 * destroyed. A graph is not thread safe for writes; concurrent reads of a
 * graph that is no longer modified are safe.
 *
 * Data layout of tensors everywhere: dense, row-major (last dim fastest),
 * little-endian; bool is one byte (0 or 1); f16/bf16 are their 16-bit
 * patterns; packed formats are GGUF blocks laid out along the last dim. */
#ifndef POOT_GRAPH_H
#define POOT_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/graph_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ dtypes */

typedef enum poot_dtype {
  POOT_DTYPE_NONE = 0, /* "unset"; never the dtype of a value */
  POOT_DTYPE_F32,
  POOT_DTYPE_F16,
  POOT_DTYPE_BF16,
  POOT_DTYPE_I8,
  POOT_DTYPE_U8,
  POOT_DTYPE_I16,
  POOT_DTYPE_I32,
  POOT_DTYPE_I64,
  POOT_DTYPE_U32,
  POOT_DTYPE_BOOL,
  /* Packed GGUF formats: weights, and a q8_0 K/V cache. Only dequantize
   * reads them, quantize (q8_0) writes them, and the movement ops that keep
   * the last dim whole (reshape, slice, the dynamic slices, gather and
   * scatter_update off the last axis) move them in whole blocks. */
  POOT_DTYPE_Q8_0,
  POOT_DTYPE_Q4_0,
  POOT_DTYPE_Q4_1,
  POOT_DTYPE_Q5_0,
  POOT_DTYPE_Q5_1,
  POOT_DTYPE_Q4_K,
  POOT_DTYPE_Q5_K,
  POOT_DTYPE_Q6_K,
  POOT_DTYPE_Q8_K,
  POOT_DTYPE_Q2_K, /* after Q8_K: the older values keep their numbers */
  POOT_DTYPE_Q3_K,
  POOT_DTYPE_COUNT
} poot_dtype;

typedef struct poot_dtype_info {
  const char *name;   /* as printed: "f32", "bool", "q4_k" */
  bool is_float;      /* f32 f16 bf16 */
  bool is_int;        /* i8 u8 i16 i32 i64 u32 (not bool) */
  bool is_signed;     /* floats and signed ints */
  bool is_packed;     /* the GGUF block formats */
  uint32_t bits;      /* plain: element bits (bool: 8); packed: 0 */
  size_t elem_bytes;  /* plain: bytes per element; packed: 0 */
  int64_t block_elems; /* packed: elements per block (32 or 256); plain: 1 */
  size_t block_bytes; /* packed: bytes per block (GGUF's); plain: elem_bytes */
} poot_dtype_info;

/* The table entry of `dtype`, or NULL for NONE / out-of-range values. */
const poot_dtype_info *poot_dtype_info_of(poot_dtype dtype);
/* The printed name, or "?" for an invalid dtype. */
const char *poot_dtype_name(poot_dtype dtype);
/* Parses a printed name (exactly `len` bytes). Returns false when unknown;
 * *out_dtype is NONE then. */
bool poot_dtype_from_name(const char *name, size_t len, poot_dtype *out_dtype);
static inline bool poot_dtype_is_float(poot_dtype dt) {
  return dt == POOT_DTYPE_F32 || dt == POOT_DTYPE_F16 || dt == POOT_DTYPE_BF16;
}
bool poot_dtype_is_int(poot_dtype dtype);    /* integer (not bool, not packed) */
bool poot_dtype_is_packed(poot_dtype dtype); /* a GGUF block format */

/* ------------------------------------------------------------------ shapes */

#define POOT_MAX_RANK 8

/* A static shape: rank 0 is a scalar; dims are ≥ 0 (zero-size dims are
 * allowed). Unused dims beyond rank are zero. */
typedef struct poot_shape {
  uint32_t rank;
  int64_t dims[POOT_MAX_RANK];
} poot_shape;

/* The type of a value. */
typedef struct poot_type {
  poot_dtype dtype;
  poot_shape shape;
} poot_type;

/* Builds a shape from `rank` dims (rank ≤ POOT_MAX_RANK is the caller's job). */
poot_shape poot_shape_make(uint32_t rank, const int64_t *dims);
/* Convenience: poot_shape_of(3, (int64_t[]){2, 3, 4}). */
#define poot_shape_of(rank, ...) poot_shape_make((rank), (const int64_t[]){__VA_ARGS__})
poot_type poot_type_make(poot_dtype dtype, uint32_t rank, const int64_t *dims);
bool poot_shape_equal(const poot_shape *a, const poot_shape *b);
bool poot_type_equal(const poot_type *a, const poot_type *b);
/* Number of elements (1 for a scalar). INVALID_ARGUMENT on overflow or a
 * negative dim or rank > POOT_MAX_RANK. */
POOT_MUST_USE poot_status poot_shape_elements(const poot_shape *shape, int64_t *out_count);
/* Bytes a dense tensor of this shape and dtype takes. Packed dtypes need a
 * rank ≥ 1 whose last dim is a multiple of the block size; the size is
 * (elements / block_elems) * block_bytes. INVALID_ARGUMENT otherwise or on
 * overflow; *out_bytes is 0 then. */
POOT_MUST_USE poot_status poot_type_byte_size(poot_dtype dtype, const poot_shape *shape,
                                              size_t *out_bytes);
/* Appends "f32[2,3]" ("f32[]" for a scalar) to sb. */
void poot_type_format(poot_strbuf *sb, const poot_type *type);

/* ----------------------------------------------------------- host tensors */

/* A tensor in host memory: constants, eval inputs and eval results. `data`
 * holds `size` bytes in the layout described at the top of this file;
 * `size` equals poot_type_byte_size(type). Ownership is stated by whoever
 * hands the struct out (borrowed unless said otherwise). */
typedef struct poot_tensor {
  poot_type type;
  void *data;
  size_t size;
} poot_tensor;

/* ---------------------------------------------------------- storage classes */

typedef enum poot_storage {
  POOT_STORAGE_TEMP = 0, /* an op result */
  POOT_STORAGE_CONST,    /* literal data held by the graph */
  POOT_STORAGE_WEIGHT,   /* bound by the weight map at load_weights */
  POOT_STORAGE_STATE,    /* carried across steps (KV caches, RNG counters) */
  POOT_STORAGE_SLOT,     /* per-step input written by the host */
  POOT_STORAGE_PARAM,    /* a region parameter (composite body input), or a
                            plain named input of the root graph (tests, tools) */
  POOT_STORAGE_COUNT
} poot_storage;
const char *poot_storage_name(poot_storage storage); /* "temp", "const", ... */

typedef enum poot_slot_kind {
  POOT_SLOT_NONE = 0,
  POOT_SLOT_TOKEN,     /* token ids of the step (integer) */
  POOT_SLOT_POS,       /* positions of the step (integer) */
  POOT_SLOT_SLOT_MAP,  /* paged KV: block table / row map (integer) */
  POOT_SLOT_WRITE_MAP, /* paged KV: where each new K/V row is written (integer) */
  POOT_SLOT_NAMED,     /* a named carried input (sampler params, embedding rows, pixels) */
  POOT_SLOT_KIND_COUNT
} poot_slot_kind;
/* "token", "pos", "slot_map", "write_map", "named". */
const char *poot_slot_kind_name(poot_slot_kind kind);
bool poot_slot_kind_from_name(const char *name, size_t len, poot_slot_kind *out_kind);

/* A weight's identity: an opaque 64-bit key chosen by whoever builds the
 * graph (the model's weight map, poot/llm/weight_map.h) and the display name
 * it gave the weight, used for printing and the text form. The graph
 * compares keys and prints names; it interprets neither. */
typedef uint64_t poot_weight_key;

typedef struct poot_weight_id {
  poot_weight_key key;
  const char *name; /* display name, non-empty; borrowed on input,
                       arena-owned when read back from a graph */
} poot_weight_id;

/* The key the text form gives a weight of display name `name` (len bytes):
 * the FNV-1a hash of the name. A builder that keys its weights this way gets
 * the same keys back from a printed and re-parsed graph. */
poot_weight_key poot_weight_key_of_name(const char *name, size_t len);
/* {poot_weight_key_of_name(name), name}; name is borrowed. */
poot_weight_id poot_weight_id_named(const char *name);
/* Appends the printed form of a display name: bare when it is a plain
 * dotted word ("blk.3.attn_q", "token_embd"), else in double quotes with C
 * escapes ("\"vision patch\""). */
void poot_weight_name_format(poot_strbuf *sb, const char *name);

/* ------------------------------------------------------------------- checks */

/* A check guards an op that can index out of range. Without a check
 * (POOT_TRAP_NONE) the op has the fallback behaviour described with the op;
 * with one, any out-of-range index makes evaluation fail with a typed fault
 * that names the node and this trap code, and the op's result is undefined. */
typedef enum poot_trap {
  POOT_TRAP_NONE = 0,
  POOT_TRAP_INDEX_OUT_OF_RANGE,     /* generic gather / scatter index */
  POOT_TRAP_TOKEN_OUT_OF_RANGE,     /* token id outside the embedding table */
  POOT_TRAP_POS_OUT_OF_RANGE,       /* position past the KV capacity */
  POOT_TRAP_WRITE_MAP_OUT_OF_RANGE, /* paged-KV write map row past the pool */
  POOT_TRAP_SLICE_OUT_OF_RANGE,     /* dynamic_slice / dynamic_update_slice start */
  POOT_TRAP_COUNT
} poot_trap;
/* "none", "index_out_of_range", "token_out_of_range", "pos_out_of_range",
 * "write_map_out_of_range", "slice_out_of_range". */
const char *poot_trap_name(poot_trap trap);
bool poot_trap_from_name(const char *name, size_t len, poot_trap *out_trap);

/* --------------------------------------------------------------------- ops */

/* Ops
 * ---
 * Notation: x, a, b are operands; "T" the operand type; attrs in braces.
 * Elementwise ops need operands of identical type (no implicit broadcasting;
 * use `broadcast`). Float arithmetic is IEEE binary32; f16/bf16 are computed
 * in f32 and rounded to nearest even when stored. Integer arithmetic wraps
 * (two's complement). Bool counts as an unsigned 1-bit integer where noted.
 *
 * add sub mul div rem max min pow (int, float):
 *   float div/rem: IEEE (rem is C fmodf: sign of the dividend).
 *   int div: truncates toward zero; x/0 = -1 (all bits set for unsigned);
 *   INT_MIN/-1 = INT_MIN. int rem: x%0 = x; INT_MIN%-1 = 0.
 *   float max/min: NaN if either is NaN; -0 < +0.
 *   float pow: C powf. int pow: repeated multiply with wrap; a negative
 *   exponent gives 1 for base 1, ±1 for base -1, else 0.
 * and or xor (int, bool): bitwise.
 * shl shr (int): shift count taken from b (same type); a count < 0 or ≥ bit
 *   width gives 0 (shl, and shr of unsigned) or the sign fill (shr of signed,
 *   arithmetic).
 * neg abs sign (int, float): wrap for INT_MIN; sign is -1/0/+1 (floats: ±0
 *   keep their sign, NaN stays NaN).
 * not (int, bool): bitwise / logical not.
 * exp exp2 log log2 sqrt rsqrt sin cos tanh erf floor ceil round sigmoid
 *   (float only): C library functions in f32 (expf, ...). rsqrt = 1/sqrtf.
 *   round: half away from zero (roundf). sigmoid(x) = 1/(1+expf(-x)).
 * eq ne lt le gt ge (any non-packed): result bool, same shape. IEEE ordering
 *   for floats (NaN compares unequal to everything; ne is true).
 * select(pred: bool[S], on_true: T[S], on_false: T[S]) -> T[S].
 * convert(x) {dtype}: float→float rounds to nearest even; int→float rounds to
 *   nearest even; float→int truncates toward zero and saturates to the
 *   target range, NaN → 0; int→int wraps (truncates bits / sign-extends);
 *   →bool is x != 0; bool→ is 0 or 1. Packed dtypes are not allowed.
 * bitcast(x) {dtype}: reinterprets bits; element sizes must be equal and
 *   both non-packed, non-bool. Same shape.
 * iota {dtype, shape, axis}: result[i...] = index along `axis` (int or float).
 * broadcast(x) {shape, dims}: result has `shape`; operand dim i maps to result
 *   dim dims[i] (strictly increasing, like StableHLO broadcast_in_dim); each
 *   operand dim is 1 or equal to the result dim it maps to.
 * reshape(x) {shape}: same element count, row-major order kept.
 * transpose(x) {dims = permutation}: result dim i = operand dim dims[i].
 * slice(x) {start, limit, stride}: per dim 0 ≤ start ≤ limit ≤ size,
 *   stride ≥ 1; result dim = ceil((limit - start) / stride).
 * dynamic_slice(x, s_0..s_{r-1}) {sizes}: one scalar integer start per dim of
 *   x (all of one integer dtype); result shape = sizes. Fallback: each start
 *   is clamped into [0, dim - size]. Check: a start outside that range traps.
 * dynamic_update_slice(x, update, s_0..s_{r-1}): result = x with `update`
 *   written at the starts; same fallback (clamping) and check as above.
 * concat(x_0..x_n) {axis}: same dtype, dims equal except `axis`.
 * pad(x, value: T[]) {low, high, interior}: all ≥ 0; result dim =
 *   low + size + (size - 1) * interior + high (size 0: low + high).
 * gather(table, indices) {axis, batch_dims}: TensorFlow's tf.gather with
 *   batch_dims (numpy.take when batch_dims = 0): with b = batch_dims ≤ axis,
 *   indices' first b dims equal the table's first b dims, and
 *   result shape = table[:axis] + indices[b:] + table[axis+1:];
 *   result[p, i, s] = table[p, indices[p_b.., i], s]. Indices are integers.
 *   Fallback: an index is clamped into [0, table[axis] - 1] (an empty axis
 *   gives zeros). Check: an index outside that range traps.
 * scatter_update(target, indices, updates) {axis}: the inverse of gather with
 *   batch_dims 0: updates shape = target[:axis] + indices + target[axis+1:];
 *   result = target with result[p, indices[i], s] = updates[p, i, s],
 *   applied in row-major order of i (the last write wins). Fallback: an
 *   out-of-range index skips its update. Check: it traps.
 * reduce(x) {kind, dims, dtype = accumulation dtype}: removes `dims`
 *   (distinct, any order; printed sorted). sum/max/min: each element is
 *   converted to the accumulation dtype, accumulated in row-major index order
 *   over the reduced dims starting from 0 / -inf (int: minimum) / +inf (int:
 *   maximum); the result dtype IS the accumulation dtype. max/min propagate
 *   NaN. argmax: exactly one dim (size ≥ 1), dtype must be i32 (the result
 *   dtype): the first index of the maximum, NaN counting as larger than any
 *   number (the first NaN wins).
 * dot_general(lhs, rhs) {lhs_batch, rhs_batch, lhs_contract, rhs_contract,
 *   dtype = accumulation dtype}: StableHLO dot_general. Result shape = batch
 *   dims, then lhs free dims in order, then rhs free dims in order; result
 *   dtype = accumulation dtype. Both operands share a non-packed dtype. Each
 *   element: acc = 0; for each contracting index tuple in row-major order
 *   (of the lhs contracting dims as listed): acc = acc + conv(l) * conv(r),
 *   the product and the sum each rounded in the accumulation dtype (no FMA).
 * dequantize(w: packed) {dtype: f32|f16|bf16}: GGUF's dequantization
 *   (computed in f32, then rounded to `dtype`); same shape.
 * quantize(x: f32) {dtype: q8_0}: GGUF's reference quantizer
 *   (quantize_row_q8_0_ref: per block of 32 along the last dim, d = amax /
 *   127 in f32, stored as f16; q = round(x · (1 / d)) half away from zero);
 *   same shape, the last dim a multiple of 32.
 * rng(key: u32[2], counter: u32[2]) {dtype, shape, dist}: counter-based
 *   Philox4x32-10 (Salmon et al. 2011, Random123's philox4x32 with 10 rounds,
 *   multipliers 0xD2511F53 0xCD9E8D57, key increments 0x9E3779B9 0xBB67AE85).
 *   Element n (row-major) takes word n % 4 of the block computed with
 *   counter words (c0, c1, c2, c3) = (low32(n / 4), high32(n / 4),
 *   counter[0], counter[1]) and key words (key[0], key[1]).
 *   dist "bits": dtype u32, the word itself. dist "uniform": dtype
 *   f32/f16/bf16, value (word >> (32 - m)) * 2^-m with m = 24 (f32),
 *   11 (f16), 8 (bf16), exact in [0, 1).
 * top_k(x) {k}: along the last dim (0 ≤ k ≤ size); two results: values
 *   T[..., k] and indices i32[..., k], sorted by descending value, ties by
 *   ascending index, NaN larger than any number.
 * cumsum(x) {axis, dtype = accumulation dtype}: inclusive prefix sum along
 *   axis in index order in the accumulation dtype (= result dtype).
 *
 * Composites name a subgraph (DESIGN §3). Their body is a region built of
 * core ops (and possibly nested composites); evaluating the body gives the
 * composite's semantics. The names poot builds are listed with the builder
 * functions below; composite attributes are informational (the planner reads
 * them; evaluation never needs them). */
typedef enum poot_op {
  POOT_OP_LEAF = 0, /* a leaf: Const, Weight, State, Slot or Param */
#define POOT__OP_ENUM(ID, name, lo, hi, cls, rule, ref, trap) POOT_OP_##ID,
  POOT_GRAPH_OPS(POOT__OP_ENUM)
#undef POOT__OP_ENUM
  POOT_OP_COMPOSITE, /* a named subgraph; see poot_node.body */
  POOT_OP_COUNT
} poot_op;

/* "leaf", "add", ..., "composite". "?" for an invalid op. */
const char *poot_op_name(poot_op op);
bool poot_op_from_name(const char *name, size_t len, poot_op *out_op);
/* Operand count bounds (max -1: variadic). */
void poot_op_arity(poot_op op, int32_t *out_min, int32_t *out_max);
/* The op's class (poot/graph_ops.h); POOT_OP_CLASS_NONE for a leaf, a
 * composite or an invalid op. */
poot_op_class poot_op_class_of(poot_op op);

typedef enum poot_reduce_kind {
  POOT_REDUCE_NONE = 0,
  POOT_REDUCE_SUM,
  POOT_REDUCE_MAX,
  POOT_REDUCE_MIN,
  POOT_REDUCE_ARGMAX,
  POOT_REDUCE_KIND_COUNT
} poot_reduce_kind;
const char *poot_reduce_kind_name(poot_reduce_kind kind); /* "sum", ... */

typedef enum poot_rng_dist {
  POOT_RNG_NONE = 0,
  POOT_RNG_BITS,
  POOT_RNG_UNIFORM,
  POOT_RNG_DIST_COUNT
} poot_rng_dist;
const char *poot_rng_dist_name(poot_rng_dist dist); /* "bits", "uniform" */

/* dot_general's dimension numbers. */
typedef struct poot_dot_dims {
  uint32_t num_batch;
  int64_t lhs_batch[POOT_MAX_RANK];
  int64_t rhs_batch[POOT_MAX_RANK];
  uint32_t num_contract;
  int64_t lhs_contract[POOT_MAX_RANK];
  int64_t rhs_contract[POOT_MAX_RANK];
} poot_dot_dims;

/* Attributes of a core op. Each op reads only the fields listed here; the
 * others are zero. Lists indexed by operand dim have `operand rank` entries.
 *   convert bitcast dequantize quantize: dtype (result)
 *   iota: dtype, shape, axis          rng: dtype, shape, rng_dist
 *   broadcast: shape, dims[num_dims = operand rank]
 *   reshape: shape                     transpose: dims (permutation)
 *   slice: start, limit, stride, num_dims (= operand rank)
 *   dynamic_slice: dims (sizes)        concat: axis
 *   pad: low, high, interior, num_dims (= operand rank)
 *   gather: axis, batch_dims           scatter_update: axis
 *   reduce: reduce_kind, dims, dtype (accumulation)
 *   dot_general: dot, dtype (accumulation)
 *   top_k: k                           cumsum: axis, dtype (accumulation) */
typedef struct poot_attrs {
  poot_dtype dtype;
  poot_shape shape;
  int64_t axis;
  int64_t batch_dims;
  int64_t k;
  poot_reduce_kind reduce_kind;
  poot_rng_dist rng_dist;
  uint32_t num_dims;
  int64_t dims[POOT_MAX_RANK];
  int64_t start[POOT_MAX_RANK];
  int64_t limit[POOT_MAX_RANK];
  int64_t stride[POOT_MAX_RANK];
  int64_t low[POOT_MAX_RANK];
  int64_t high[POOT_MAX_RANK];
  int64_t interior[POOT_MAX_RANK];
  poot_dot_dims dot;
} poot_attrs;

/* A composite attribute (informational): an integer, a float (double), a
 * string or a list of integers. */
typedef enum poot_cattr_kind {
  POOT_CATTR_INT = 1,
  POOT_CATTR_FLOAT,
  POOT_CATTR_STRING,
  POOT_CATTR_INTS
} poot_cattr_kind;

typedef struct poot_composite_attr {
  const char *key; /* [a-z_][a-z0-9_]* */
  poot_cattr_kind kind;
  int64_t i;
  double f;
  const char *s;       /* STRING (NUL-terminated) */
  const int64_t *ints; /* INTS */
  uint32_t num_ints;
} poot_composite_attr;

/* ------------------------------------------------------------ values, nodes */

typedef uint32_t poot_value;
#define POOT_VALUE_NONE ((poot_value)UINT32_MAX)

typedef struct poot_region poot_region;

/* A node as the read API shows it. Every pointer is arena-owned by the graph
 * (borrowed by the reader). */
typedef struct poot_node {
  uint32_t id;       /* index in the graph's node table */
  uint32_t region;   /* the region this node belongs to (0 = root) */
  poot_op op;
  poot_storage storage; /* leaves: their class; every other node: TEMP */
  uint32_t num_operands;
  const poot_value *operands;
  uint32_t num_results; /* 1, except top_k (2) and composites (≥ 1) */
  const poot_value *results;
  poot_attrs attrs; /* core ops */
  poot_trap trap;   /* gather, scatter_update, dynamic_(update_)slice */

  /* Leaves. */
  const poot_tensor *constant; /* CONST: the literal (type = result type) */
  poot_weight_id weight;       /* WEIGHT: key and display name */
  const char *name;            /* STATE, PARAM, SLOT named: the name;
                                  COMPOSITE: "poot.rms_norm" ...; else NULL */
  poot_slot_kind slot_kind;    /* SLOT */
  uint32_t param_index;        /* PARAM: position among its region's params */

  /* Composites. */
  uint32_t num_cattrs;
  const poot_composite_attr *cattrs;
  const poot_region *body;
} poot_node;

/* A region: the root graph, or a composite's body. */
struct poot_region {
  uint32_t id;
  uint32_t parent_node;   /* composite node owning it; UINT32_MAX for root */
  uint32_t num_nodes;     /* nodes in topological order (set by verify;
                             builder order before that, which is topological) */
  const uint32_t *nodes;  /* node ids */
  uint32_t num_params;    /* Param leaves, by param_index */
  const poot_value *params;
  uint32_t num_results;   /* body results (root: 0; see poot_graph_output) */
  const poot_value *results;
};

/* ------------------------------------------------------------------- graph */

typedef struct poot_graph poot_graph;

/* Creates an empty graph (root region open). OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_graph_create(poot_graph **out_graph);
void poot_graph_destroy(poot_graph *graph); /* NULL-safe */

/* --- Leaves. Every builder call validates its arguments (INVALID_ARGUMENT
 * naming the call and the rule) and returns OUT_OF_MEMORY when the arena is
 * exhausted; on failure *out is POOT_VALUE_NONE and the graph is unchanged
 * (apart from arena space). Leaves are added to the region being built (the
 * root, or an open composite body). */

/* A constant: copies tensor->data (tensor->size must equal the byte size of
 * its type). */
POOT_MUST_USE poot_status poot_graph_add_const(poot_graph *graph, const poot_tensor *tensor,
                                               poot_value *out);
/* Scalar constant helpers (value converted to dtype as `convert` would). */
POOT_MUST_USE poot_status poot_graph_const_f32(poot_graph *graph, poot_dtype dtype, double value,
                                               poot_value *out);
POOT_MUST_USE poot_status poot_graph_const_int(poot_graph *graph, poot_dtype dtype, int64_t value,
                                               poot_value *out);
/* A weight (root region only). The name is copied; a key and a name are each
 * added once (INVALID_ARGUMENT on a repeat or an empty name). */
POOT_MUST_USE poot_status poot_graph_add_weight(poot_graph *graph, const poot_weight_id *id,
                                                const poot_type *type, poot_value *out);
/* A state (root only; unique name, [A-Za-z0-9_.:-]+ printed quoted). */
POOT_MUST_USE poot_status poot_graph_add_state(poot_graph *graph, const char *name,
                                               const poot_type *type, poot_value *out);
/* A slot (root only). TOKEN/POS/SLOT_MAP/WRITE_MAP: integer dtype, at most
 * one each, name NULL. NAMED: any non-packed dtype, a unique name. */
POOT_MUST_USE poot_status poot_graph_add_slot(poot_graph *graph, poot_slot_kind kind,
                                              const char *name, const poot_type *type,
                                              poot_value *out);
/* A plain named input of the root region (param_index = count so far).
 * Bodies get their params from poot_graph_composite_begin. */
POOT_MUST_USE poot_status poot_graph_add_param(poot_graph *graph, const char *name,
                                               const poot_type *type, poot_value *out);

/* --- Core ops. The generic entry: checks arity, operand ids (defined in the
 * current region), attributes and types, infers the result types, and
 * appends the node. out_results has room for the op's result count (2 for
 * top_k, else 1). `trap` must be NONE for ops without checks. */
POOT_MUST_USE poot_status poot_graph_add_node(poot_graph *graph, poot_op op,
                                              uint32_t num_operands, const poot_value *operands,
                                              const poot_attrs *attrs, poot_trap trap,
                                              poot_value *out_results);

/* One call per op family (each is poot_graph_add_node with the attrs set). */
/* Elementwise unary/binary/compare ops: op is one of add..not, exp..sigmoid,
 * eq..ge. */
POOT_MUST_USE poot_status poot_graph_unary(poot_graph *graph, poot_op op, poot_value x,
                                           poot_value *out);
POOT_MUST_USE poot_status poot_graph_binary(poot_graph *graph, poot_op op, poot_value a,
                                            poot_value b, poot_value *out);
POOT_MUST_USE poot_status poot_graph_select(poot_graph *graph, poot_value pred,
                                            poot_value on_true, poot_value on_false,
                                            poot_value *out);
POOT_MUST_USE poot_status poot_graph_convert(poot_graph *graph, poot_value x, poot_dtype dtype,
                                             poot_value *out);
POOT_MUST_USE poot_status poot_graph_bitcast(poot_graph *graph, poot_value x, poot_dtype dtype,
                                             poot_value *out);
POOT_MUST_USE poot_status poot_graph_iota(poot_graph *graph, const poot_type *type, int64_t axis,
                                          poot_value *out);
/* in_dims has x's rank entries. */
POOT_MUST_USE poot_status poot_graph_broadcast(poot_graph *graph, poot_value x,
                                               const poot_shape *shape, const int64_t *in_dims,
                                               poot_value *out);
POOT_MUST_USE poot_status poot_graph_reshape(poot_graph *graph, poot_value x,
                                             const poot_shape *shape, poot_value *out);
POOT_MUST_USE poot_status poot_graph_transpose(poot_graph *graph, poot_value x,
                                               const int64_t *perm, poot_value *out);
/* stride NULL means all 1. */
POOT_MUST_USE poot_status poot_graph_slice(poot_graph *graph, poot_value x, const int64_t *start,
                                           const int64_t *limit, const int64_t *stride,
                                           poot_value *out);
/* starts: x's rank scalar integer values; sizes: x's rank entries. */
POOT_MUST_USE poot_status poot_graph_dynamic_slice(poot_graph *graph, poot_value x,
                                                   const poot_value *starts, const int64_t *sizes,
                                                   poot_trap trap, poot_value *out);
POOT_MUST_USE poot_status poot_graph_dynamic_update_slice(poot_graph *graph, poot_value x,
                                                          poot_value update,
                                                          const poot_value *starts,
                                                          poot_trap trap, poot_value *out);
POOT_MUST_USE poot_status poot_graph_concat(poot_graph *graph, uint32_t count,
                                            const poot_value *xs, int64_t axis, poot_value *out);
/* interior NULL means all 0. */
POOT_MUST_USE poot_status poot_graph_pad(poot_graph *graph, poot_value x, poot_value pad_value,
                                         const int64_t *low, const int64_t *high,
                                         const int64_t *interior, poot_value *out);
POOT_MUST_USE poot_status poot_graph_gather(poot_graph *graph, poot_value table,
                                            poot_value indices, int64_t axis, int64_t batch_dims,
                                            poot_trap trap, poot_value *out);
POOT_MUST_USE poot_status poot_graph_scatter_update(poot_graph *graph, poot_value target,
                                                    poot_value indices, poot_value updates,
                                                    int64_t axis, poot_trap trap,
                                                    poot_value *out);
POOT_MUST_USE poot_status poot_graph_reduce(poot_graph *graph, poot_value x,
                                            poot_reduce_kind kind, uint32_t num_dims,
                                            const int64_t *dims, poot_dtype acc, poot_value *out);
POOT_MUST_USE poot_status poot_graph_dot_general(poot_graph *graph, poot_value lhs,
                                                 poot_value rhs, const poot_dot_dims *dims,
                                                 poot_dtype acc, poot_value *out);
POOT_MUST_USE poot_status poot_graph_dequantize(poot_graph *graph, poot_value w,
                                                poot_dtype dtype, poot_value *out);
POOT_MUST_USE poot_status poot_graph_quantize(poot_graph *graph, poot_value x, poot_dtype dtype,
                                              poot_value *out);
POOT_MUST_USE poot_status poot_graph_rng(poot_graph *graph, poot_value key, poot_value counter,
                                         const poot_type *type, poot_rng_dist dist,
                                         poot_value *out);
POOT_MUST_USE poot_status poot_graph_top_k(poot_graph *graph, poot_value x, int64_t k,
                                           poot_value *out_values, poot_value *out_indices);
POOT_MUST_USE poot_status poot_graph_cumsum(poot_graph *graph, poot_value x, int64_t axis,
                                            poot_dtype acc, poot_value *out);

/* --- Composites. A composite is built in three steps: begin (opens a body
 * region whose params mirror `operands`, written to out_params), core ops
 * and nested composites on those params, then end (closes the body with its
 * results and appends the composite node to the enclosing region, writing
 * its result values to out_results). Attributes are copied. After a failed
 * call inside an open body, call poot_graph_composite_abort (drops the open
 * body) or destroy the graph. Name: [a-z0-9_.]+ ("poot.rms_norm"). Bodies
 * nest at most 32 deep. */
POOT_MUST_USE poot_status poot_graph_composite_begin(poot_graph *graph, const char *name,
                                                     uint32_t num_attrs,
                                                     const poot_composite_attr *attrs,
                                                     uint32_t num_operands,
                                                     const poot_value *operands,
                                                     poot_value *out_params);
POOT_MUST_USE poot_status poot_graph_composite_end(poot_graph *graph, uint32_t num_results,
                                                   const poot_value *results,
                                                   poot_value *out_results);
void poot_graph_composite_abort(poot_graph *graph);

/* The composites poot builds, with their decompositions (docs/graph.md).
 * Normalization statistics are computed in f32 whatever the input float
 * dtype; results have the input's type.
 * "poot.rms_norm" (x[..., n], w[n] or NONE) {eps}: x * rsqrt(mean(x²) + eps) * w. */
POOT_MUST_USE poot_status poot_graph_rms_norm(poot_graph *graph, poot_value x, poot_value w,
                                              double eps, poot_value *out);
/* "poot.layer_norm" (x[..., n], w[n] or NONE, b[n] or NONE) {eps}. */
POOT_MUST_USE poot_status poot_graph_layer_norm(poot_graph *graph, poot_value x, poot_value w,
                                                poot_value b, double eps, poot_value *out);
/* "poot.rope" (x[T, H, D], pos: int[T]) {theta, dims, mode}: rotates the first
 * `dims` (even, ≤ D) features by angle pos * theta^(-2i/dims), i < dims/2.
 * mode 0 "norm": pairs (2i, 2i+1) (GPT-J/original Llama); mode 2 "neox":
 * pairs (i, i + dims/2). Angles are computed in f32. */
typedef enum poot_rope_mode { POOT_ROPE_NORM = 0, POOT_ROPE_NEOX = 2 } poot_rope_mode;
POOT_MUST_USE poot_status poot_graph_rope(poot_graph *graph, poot_value x, poot_value pos,
                                          double theta, int64_t dims, poot_rope_mode mode,
                                          poot_value *out);
/* "poot.softmax" (x) {axis}: exp(x - max) / sum, in f32. */
POOT_MUST_USE poot_status poot_graph_softmax(poot_graph *graph, poot_value x, int64_t axis,
                                             poot_value *out);
/* "poot.attention" (q[T, Hq, D], k[C, Hkv, D], v[C, Hkv, D], mask: bool[T, C])
 * {scale}: Hq a multiple of Hkv (grouped-query heads: q head h reads kv head
 * h / (Hq/Hkv)); scores = q·k * scale in f32, masked-out positions (mask
 * false) get -inf, softmax over C, then ·v; result [T, Hq, D] in q's dtype. */
POOT_MUST_USE poot_status poot_graph_attention(poot_graph *graph, poot_value q, poot_value k,
                                               poot_value v, poot_value mask, double scale,
                                               poot_value *out);
/* "poot.silu" (x): x * sigmoid(x). "poot.gelu" (x) {approximate: 0 erf, 1
 * tanh}. "poot.swiglu" (gate, up): silu(gate) * up. "poot.geglu" (gate, up):
 * gelu_tanh(gate) * up. */
POOT_MUST_USE poot_status poot_graph_silu(poot_graph *graph, poot_value x, poot_value *out);
POOT_MUST_USE poot_status poot_graph_gelu(poot_graph *graph, poot_value x, bool tanh_approx,
                                          poot_value *out);
POOT_MUST_USE poot_status poot_graph_swiglu(poot_graph *graph, poot_value gate, poot_value up,
                                            poot_value *out);
POOT_MUST_USE poot_status poot_graph_geglu(poot_graph *graph, poot_value gate, poot_value up,
                                           poot_value *out);

/* --- Results (root region values only). */
POOT_MUST_USE poot_status poot_graph_set_output(poot_graph *graph, poot_value value);
/* `state` is a State leaf; `value` has its type. Setting twice replaces. */
POOT_MUST_USE poot_status poot_graph_set_state_update(poot_graph *graph, poot_value state,
                                                      poot_value value);
/* A named extra output (unique name). */
POOT_MUST_USE poot_status poot_graph_add_env(poot_graph *graph, const char *name,
                                             poot_value value);

/* ---------------------------------------------------------------- reading */

uint32_t poot_graph_node_count(const poot_graph *graph);
const poot_node *poot_graph_node(const poot_graph *graph, uint32_t node_id); /* NULL if bad */
uint32_t poot_graph_region_count(const poot_graph *graph);
const poot_region *poot_graph_region(const poot_graph *graph, uint32_t region_id);
const poot_region *poot_graph_root(const poot_graph *graph);
uint32_t poot_graph_value_count(const poot_graph *graph);
/* Type of a value (NULL for an undefined id). */
const poot_type *poot_graph_value_type(const poot_graph *graph, poot_value value);
/* The node defining `value` (NULL for an undefined id); out_result_index
 * (may be NULL) receives which of its results it is. */
const poot_node *poot_graph_value_node(const poot_graph *graph, poot_value value,
                                       uint32_t *out_result_index);
poot_value poot_graph_output(const poot_graph *graph); /* NONE when unset */
/* States in order of addition: the State leaf's value and its new value (the
 * state's own value when no update was set). */
uint32_t poot_graph_state_count(const poot_graph *graph);
void poot_graph_state_at(const poot_graph *graph, uint32_t index, poot_value *out_state,
                         poot_value *out_new_value);
uint32_t poot_graph_env_count(const poot_graph *graph);
void poot_graph_env_at(const poot_graph *graph, uint32_t index, const char **out_name,
                       poot_value *out_value);
/* The binding name of a leaf, used to bind inputs by name (eval, tools):
 * WEIGHT its display name ("blk.3.attn_q"), STATE/PARAM/named SLOT its
 * name, other SLOTs their kind name ("token", "pos"), CONST "". */
void poot_graph_leaf_name(const poot_graph *graph, const poot_node *leaf, poot_strbuf *sb);

/* ---------------------------------------------------------- verify, text */

/* Checks the whole graph: arity, operand ids defined in the node's region
 * (dangling values), acyclicity (and fixes each region's topological
 * order), attributes, types against each op's shape rule, leaf rules,
 * composite bodies, results. INVALID_ARGUMENT with a message of the form
 * "node %7 (add): rule: details" naming the first violation. */
POOT_MUST_USE poot_status poot_graph_verify(poot_graph *graph);

/* Appends the canonical text form to sb (see docs/graph.md). Values are
 * renumbered in print order, so print → parse → print is byte-identical.
 * OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_graph_print(const poot_graph *graph, poot_strbuf *sb);
/* The same as a heap string (free with poot_free). */
POOT_MUST_USE poot_status poot_graph_to_text(const poot_graph *graph, char **out_text);
/* Parses the text form (`len` bytes, need not be NUL-terminated) into a new
 * graph and verifies it. FORMAT "line L:C: expected X" on a syntax error,
 * INVALID_ARGUMENT from the verifier, OUT_OF_MEMORY. *out_graph is NULL on
 * failure. */
POOT_MUST_USE poot_status poot_graph_parse(const char *text, size_t len, poot_graph **out_graph);
/* Reads and parses a .pgraph file (IO/NOT_FOUND naming the path). */
POOT_MUST_USE poot_status poot_graph_load(const char *path, poot_graph **out_graph);

/* Structural hash: a stable 64-bit hash of the canonical printed text, so two
 * graphs hash equal exactly when they print equal (barring collisions).
 * OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_graph_hash(const poot_graph *graph, uint64_t *out_hash);

#ifdef __cplusplus
}
#endif

#endif /* POOT_GRAPH_H */
