/* poot/graph_ops.h — the op table of the graph IR (DESIGN §3), as an X-macro.
 *
 * POOT_GRAPH_OPS(X) expands X(ID, name, min_arity, max_arity) once per core
 * op, in a fixed order. ID is the suffix of the enum value (POOT_OP_<ID>),
 * `name` is the spelling in the text form and in messages (a bare token, so
 * that `#name` gives the string and `eval_##name` names a routine), and the
 * arity bounds count operands (max_arity -1: variadic).
 *
 * The shape rule and verifier of each op live in src/graph/ops.c; the eval
 * layer defines one routine per entry, for example
 *
 *   #define X(ID, name, lo, hi) static poot_status eval_##name(...);
 *   POOT_GRAPH_OPS(X)
 *   #undef X
 *
 * The semantics of every op are written in poot/graph.h (section "Ops").
 * Leaves (POOT_OP_LEAF) and composites (POOT_OP_COMPOSITE) are not core ops
 * and are not listed here. */
#ifndef POOT_GRAPH_OPS_H
#define POOT_GRAPH_OPS_H

/* clang-format off */
#define POOT_GRAPH_OPS(X)                                                      \
  /* elementwise binary: same operand types, result = operand type */        \
  X(ADD, add, 2, 2)                                                            \
  X(SUB, sub, 2, 2)                                                            \
  X(MUL, mul, 2, 2)                                                            \
  X(DIV, div, 2, 2)                                                            \
  X(REM, rem, 2, 2)                                                            \
  X(MAX, max, 2, 2)                                                            \
  X(MIN, min, 2, 2)                                                            \
  X(POW, pow, 2, 2)                                                            \
  X(AND, and, 2, 2)                                                            \
  X(OR, or, 2, 2)                                                              \
  X(XOR, xor, 2, 2)                                                            \
  X(SHL, shl, 2, 2)                                                            \
  X(SHR, shr, 2, 2)                                                            \
  /* elementwise unary: result = operand type */                              \
  X(NEG, neg, 1, 1)                                                            \
  X(ABS, abs, 1, 1)                                                            \
  X(SIGN, sign, 1, 1)                                                          \
  X(NOT, not, 1, 1)                                                            \
  /* float math, unary: operand and result f32/f16/bf16 */                    \
  X(EXP, exp, 1, 1)                                                            \
  X(EXP2, exp2, 1, 1)                                                          \
  X(LOG, log, 1, 1)                                                            \
  X(LOG2, log2, 1, 1)                                                          \
  X(SQRT, sqrt, 1, 1)                                                          \
  X(RSQRT, rsqrt, 1, 1)                                                        \
  X(SIN, sin, 1, 1)                                                            \
  X(COS, cos, 1, 1)                                                            \
  X(TANH, tanh, 1, 1)                                                          \
  X(ERF, erf, 1, 1)                                                            \
  X(FLOOR, floor, 1, 1)                                                        \
  X(CEIL, ceil, 1, 1)                                                          \
  X(ROUND, round, 1, 1)                                                        \
  X(SIGMOID, sigmoid, 1, 1)                                                    \
  /* compare: same operand types, result bool of the same shape */            \
  X(EQ, eq, 2, 2)                                                              \
  X(NE, ne, 2, 2)                                                              \
  X(LT, lt, 2, 2)                                                              \
  X(LE, le, 2, 2)                                                              \
  X(GT, gt, 2, 2)                                                              \
  X(GE, ge, 2, 2)                                                              \
  /* everything else */                                                       \
  X(SELECT, select, 3, 3)                                                      \
  X(CONVERT, convert, 1, 1)                                                    \
  X(BITCAST, bitcast, 1, 1)                                                    \
  X(IOTA, iota, 0, 0)                                                          \
  X(BROADCAST, broadcast, 1, 1)                                                \
  X(RESHAPE, reshape, 1, 1)                                                    \
  X(TRANSPOSE, transpose, 1, 1)                                                \
  X(SLICE, slice, 1, 1)                                                        \
  X(DYNAMIC_SLICE, dynamic_slice, 1, -1)                                       \
  X(DYNAMIC_UPDATE_SLICE, dynamic_update_slice, 2, -1)                         \
  X(CONCAT, concat, 1, -1)                                                     \
  X(PAD, pad, 2, 2)                                                            \
  X(GATHER, gather, 2, 2)                                                      \
  X(SCATTER_UPDATE, scatter_update, 3, 3)                                      \
  X(REDUCE, reduce, 1, 1)                                                      \
  X(DOT_GENERAL, dot_general, 2, 2)                                            \
  X(DEQUANTIZE, dequantize, 1, 1)                                              \
  X(RNG, rng, 2, 2)                                                            \
  X(TOP_K, top_k, 1, 1)                                                        \
  X(CUMSUM, cumsum, 1, 1)
/* clang-format on */

#endif /* POOT_GRAPH_OPS_H */
