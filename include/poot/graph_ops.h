/* poot/graph_ops.h — the op table of the graph IR (DESIGN §3), as an X-macro.
 *
 * POOT_GRAPH_OPS(X) expands
 *
 *   X(ID, name, min_arity, max_arity, CLASS, rule, ref, trap)
 *
 * once per core op, in a fixed order. It is the one source of every per-op
 * fact that more than one layer reads:
 *
 *   ID         the suffix of the enum value (POOT_OP_<ID>);
 *   name       the spelling in the text form and in messages (a bare token,
 *              so that `#name` gives the string);
 *   min_arity, max_arity
 *              operand count bounds (max_arity -1: variadic);
 *   CLASS      the suffix of the op's class (POOT_OP_CLASS_<CLASS>, below);
 *   rule       the type rule: src/graph/ops.c defines one static function
 *              per rule, `rule_<rule>`, shared by the ops of a class where the
 *              rule is the same (all eight arithmetic binaries use `arith`);
 *   ref        the reference routine: src/eval defines `poot__eval_<ref>`,
 *              the oracle's evaluation of the op (the ops of one class share
 *              one routine that switches on the op where they differ);
 *   trap       1 when a node of the op may carry a bounds check
 *              (poot_trap), 0 otherwise.
 *
 * The graph layer reads the table for names, arity, classes, inference and
 * verification (src/graph/ops.c); the eval layer, which sits above graph,
 * builds its dispatch from the same rows:
 *
 *   #define X(ID, name, lo, hi, cls, rule, ref, trap) [POOT_OP_##ID] = poot__eval_##ref,
 *   POOT_GRAPH_OPS(X)
 *   #undef X
 *
 * The semantics of every op are written in poot/graph.h (section "Ops").
 * Leaves (POOT_OP_LEAF) and composites (POOT_OP_COMPOSITE) are not core ops
 * and are not listed here. */
#ifndef POOT_GRAPH_OPS_H
#define POOT_GRAPH_OPS_H

/* The class of an op: what kind of computation it is, independent of its
 * exact semantics. Leaves and composites have class POOT_OP_CLASS_NONE. */
typedef enum poot_op_class {
  POOT_OP_CLASS_NONE = 0,
  POOT_OP_CLASS_BINARY,      /* elementwise, two operands of one type */
  POOT_OP_CLASS_UNARY,       /* elementwise, one operand, result of its type */
  POOT_OP_CLASS_COMPARE,     /* elementwise, two operands, bool result */
  POOT_OP_CLASS_SELECT,      /* elementwise choice by a bool predicate */
  POOT_OP_CLASS_CAST,        /* elementwise change of dtype (convert, bitcast, (de)quantize) */
  POOT_OP_CLASS_GENERATOR,   /* no data operands: iota, rng */
  POOT_OP_CLASS_MOVEMENT,    /* moves elements without computing on them */
  POOT_OP_CLASS_REDUCTION,   /* combines elements along dims: reduce, cumsum, top_k */
  POOT_OP_CLASS_CONTRACTION, /* dot_general */
  POOT_OP_CLASS_COUNT
} poot_op_class;

/* clang-format off */
#define POOT_GRAPH_OPS(X)                                                      \
  /* elementwise binary: same operand types, result = operand type */        \
  X(ADD, add, 2, 2, BINARY, arith, binary, 0)                                  \
  X(SUB, sub, 2, 2, BINARY, arith, binary, 0)                                  \
  X(MUL, mul, 2, 2, BINARY, arith, binary, 0)                                  \
  X(DIV, div, 2, 2, BINARY, arith, binary, 0)                                  \
  X(REM, rem, 2, 2, BINARY, arith, binary, 0)                                  \
  X(MAX, max, 2, 2, BINARY, arith, binary, 0)                                  \
  X(MIN, min, 2, 2, BINARY, arith, binary, 0)                                  \
  X(POW, pow, 2, 2, BINARY, arith, binary, 0)                                  \
  X(AND, and, 2, 2, BINARY, bitwise, binary, 0)                                \
  X(OR, or, 2, 2, BINARY, bitwise, binary, 0)                                  \
  X(XOR, xor, 2, 2, BINARY, bitwise, binary, 0)                                \
  X(SHL, shl, 2, 2, BINARY, shift, binary, 0)                                  \
  X(SHR, shr, 2, 2, BINARY, shift, binary, 0)                                  \
  /* elementwise unary: result = operand type */                              \
  X(NEG, neg, 1, 1, UNARY, num_unary, unary, 0)                                   \
  X(ABS, abs, 1, 1, UNARY, num_unary, unary, 0)                                   \
  X(SIGN, sign, 1, 1, UNARY, num_unary, unary, 0)                                 \
  X(NOT, not, 1, 1, UNARY, not, unary, 0)                                      \
  /* float math, unary: operand and result f32/f16/bf16 */                    \
  X(EXP, exp, 1, 1, UNARY, math, unary, 0)                                     \
  X(EXP2, exp2, 1, 1, UNARY, math, unary, 0)                                   \
  X(LOG, log, 1, 1, UNARY, math, unary, 0)                                     \
  X(LOG2, log2, 1, 1, UNARY, math, unary, 0)                                   \
  X(SQRT, sqrt, 1, 1, UNARY, math, unary, 0)                                   \
  X(RSQRT, rsqrt, 1, 1, UNARY, math, unary, 0)                                 \
  X(SIN, sin, 1, 1, UNARY, math, unary, 0)                                     \
  X(COS, cos, 1, 1, UNARY, math, unary, 0)                                     \
  X(TANH, tanh, 1, 1, UNARY, math, unary, 0)                                   \
  X(ERF, erf, 1, 1, UNARY, math, unary, 0)                                     \
  X(FLOOR, floor, 1, 1, UNARY, math, unary, 0)                                 \
  X(CEIL, ceil, 1, 1, UNARY, math, unary, 0)                                   \
  X(ROUND, round, 1, 1, UNARY, math, unary, 0)                                 \
  X(SIGMOID, sigmoid, 1, 1, UNARY, math, unary, 0)                             \
  /* compare: same operand types, result bool of the same shape */            \
  X(EQ, eq, 2, 2, COMPARE, compare, compare, 0)                                \
  X(NE, ne, 2, 2, COMPARE, compare, compare, 0)                                \
  X(LT, lt, 2, 2, COMPARE, compare, compare, 0)                                \
  X(LE, le, 2, 2, COMPARE, compare, compare, 0)                                \
  X(GT, gt, 2, 2, COMPARE, compare, compare, 0)                                \
  X(GE, ge, 2, 2, COMPARE, compare, compare, 0)                                \
  /* everything else */                                                       \
  X(SELECT, select, 3, 3, SELECT, select, select, 0)                           \
  X(CONVERT, convert, 1, 1, CAST, convert, convert, 0)                         \
  X(BITCAST, bitcast, 1, 1, CAST, bitcast, bitcast, 0)                         \
  X(IOTA, iota, 0, 0, GENERATOR, iota, iota, 0)                                \
  X(BROADCAST, broadcast, 1, 1, MOVEMENT, broadcast, broadcast, 0)             \
  X(RESHAPE, reshape, 1, 1, MOVEMENT, reshape, reshape, 0)                     \
  X(TRANSPOSE, transpose, 1, 1, MOVEMENT, transpose, transpose, 0)             \
  X(SLICE, slice, 1, 1, MOVEMENT, slice, slice, 0)                             \
  X(DYNAMIC_SLICE, dynamic_slice, 1, -1, MOVEMENT, dynamic_slice, dynamic_slice, 1) \
  X(DYNAMIC_UPDATE_SLICE, dynamic_update_slice, 2, -1, MOVEMENT, dynamic_update_slice, dynamic_update_slice, 1) \
  X(CONCAT, concat, 1, -1, MOVEMENT, concat, concat, 0)                        \
  X(PAD, pad, 2, 2, MOVEMENT, pad, pad, 0)                                     \
  X(GATHER, gather, 2, 2, MOVEMENT, gather, gather, 1)                         \
  X(SCATTER_UPDATE, scatter_update, 3, 3, MOVEMENT, scatter_update, scatter_update, 1) \
  X(REDUCE, reduce, 1, 1, REDUCTION, reduce, reduce, 0)                        \
  X(DOT_GENERAL, dot_general, 2, 2, CONTRACTION, dot_general, dot_general, 0)  \
  X(DEQUANTIZE, dequantize, 1, 1, CAST, dequantize, dequantize, 0)             \
  X(QUANTIZE, quantize, 1, 1, CAST, quantize, quantize, 0)                     \
  X(RNG, rng, 2, 2, GENERATOR, rng, rng, 0)                                    \
  X(TOP_K, top_k, 1, 1, REDUCTION, top_k, top_k, 0)                            \
  X(CUMSUM, cumsum, 1, 1, REDUCTION, cumsum, cumsum, 0)
/* clang-format on */

#endif /* POOT_GRAPH_OPS_H */
