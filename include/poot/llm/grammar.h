/* GBNF grammars and the vocabulary mask (host side; DESIGN §7, issue 15).
 *
 * A grammar is compiled once from GBNF text (llama.cpp's format) into an immutable
 * poot_grammar that any number of threads may share. A poot_grammar_matcher holds one
 * generation's position in it as a set of pushdown stacks over UTF-8 bytes: it advances by
 * a token's bytes, says whether the grammar may end, and fills a vocabulary bitmask.
 *
 * Threads: a grammar and a vocabulary are immutable once made and may be shared by any
 * number of threads. A matcher holds all its mutable state (its caches included) and no
 * other object's: calls on one matcher must not overlap, but calls on different matchers
 * may run at once on different threads. So a driver may fill the next step's mask on a
 * second thread while the first drives the device, as long as only that thread touches
 * the matcher until it hands it back. Use one matcher per request (clone is cheap).
 *
 * Capacities (docs/grammar.md): grammar text ≤ 1 MiB, ≤ 65,536 rules, ≤ 1,048,576 compiled
 * elements, group nesting ≤ 64, repetition counts ≤ 1,000; a matcher keeps ≤ max_stacks live
 * stacks (default 256) of depth ≤ max_depth (default 1,024). Left recursion is refused at
 * compile time (INVALID_ARGUMENT naming the rule). */
#ifndef POOT_LLM_GRAMMAR_H
#define POOT_LLM_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"

typedef struct poot_grammar poot_grammar;
typedef struct poot_grammar_matcher poot_grammar_matcher;
typedef struct poot_grammar_vocab poot_grammar_vocab;

typedef struct poot_grammar_options {
  const char *start_rule; /* NULL → "root" (borrowed) */
  uint32_t max_stacks;    /* live stacks per matcher; 0 → 256, at most 65,536 */
  uint32_t max_depth;     /* depth of one stack; 0 → 1,024, at most 65,536 */
} poot_grammar_options;

static inline poot_grammar_options poot_grammar_options_default(void) {
  poot_grammar_options o = {.start_rule = NULL, .max_stacks = 0, .max_depth = 0};
  return o;
}

/* Compiles GBNF `text` (not NUL-terminated; `len` bytes). `options` may be NULL.
 * INVALID_ARGUMENT for a syntax error ("grammar:LINE:COL: expected …"), an undefined rule
 * (named with the line and column of its first use), a rule defined twice, a missing start
 * rule, left recursion (named), or a capacity exceeded; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_grammar_compile(const char *text, size_t len,
                                               const poot_grammar_options *options,
                                               poot_grammar **out_grammar);
void poot_grammar_destroy(poot_grammar *grammar);              /* NULL-safe */
uint32_t poot_grammar_rule_count(const poot_grammar *grammar); /* named and generated */

/* A matcher at the start of `grammar` (borrowed; must outlive the matcher).
 * CAPACITY when the start already needs more stacks than allowed; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_grammar_matcher_create(const poot_grammar *grammar,
                                                      poot_grammar_matcher **out_matcher);
/* A new matcher in the same state as `matcher`. OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_grammar_matcher_clone(const poot_grammar_matcher *matcher,
                                                     poot_grammar_matcher **out_matcher);
/* Back to the start of the grammar. CAPACITY as create (cannot happen if create succeeded). */
POOT_MUST_USE poot_status poot_grammar_matcher_reset(poot_grammar_matcher *matcher);
void poot_grammar_matcher_destroy(poot_grammar_matcher *matcher); /* NULL-safe */

/* Advances by `len` bytes (a token's text; may end inside a UTF-8 character). All or
 * nothing: on any error the state is unchanged. INVALID_ARGUMENT when the grammar does not
 * allow the bytes (the message gives the offset of the first refused byte); CAPACITY when
 * the live stacks or a stack's depth would pass the matcher's bounds. */
POOT_MUST_USE poot_status poot_grammar_matcher_accept(poot_grammar_matcher *matcher,
                                                      const void *bytes, size_t len);
/* True when the bytes accepted so far form a complete sentence (generation may end). */
bool poot_grammar_matcher_can_end(const poot_grammar_matcher *matcher);
/* True when no further byte is allowed (the sentence is complete and cannot grow). */
bool poot_grammar_matcher_is_finished(const poot_grammar_matcher *matcher);
/* Live stacks now (for tests and measurements). */
uint32_t poot_grammar_matcher_stack_count(const poot_grammar_matcher *matcher);

/* A vocabulary for masks: `count` token byte strings (texts[i] of lens[i] bytes; borrowed,
 * copied into a byte trie), and the end-of-generation ids. A token with empty text that is
 * not end-of-generation is never allowed under a grammar. INVALID_ARGUMENT for a count ≤ 0
 * or > 16,777,216, an id out of range, a NULL text with a nonzero length, or a token longer
 * than 4,096 bytes; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_grammar_vocab_create(const char *const *texts, const size_t *lens,
                                                    int32_t count, const int32_t *eog_ids,
                                                    size_t eog_count,
                                                    poot_grammar_vocab **out_vocab);
void poot_grammar_vocab_destroy(poot_grammar_vocab *vocab); /* NULL-safe */
int32_t poot_grammar_vocab_size(const poot_grammar_vocab *vocab);
/* uint32 words a mask needs: (size + 31) / 32. */
size_t poot_grammar_vocab_mask_words(const poot_grammar_vocab *vocab);

/* Fills `mask` (mask_words uint32 words; bit i of word i/32 = token i) with the tokens the
 * matcher may accept next: a token is allowed when all its bytes are accepted; an
 * end-of-generation token exactly when the grammar may end. A token whose bytes would pass
 * the matcher's stack bounds is not allowed. The matcher's state does not change; the
 * matcher's scratch does (not thread safe). `vocab` is borrowed. INVALID_ARGUMENT when
 * mask_words is too small; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_grammar_matcher_fill_mask(poot_grammar_matcher *matcher,
                                                         const poot_grammar_vocab *vocab,
                                                         uint32_t *mask, size_t mask_words);

/* Optional, before the first mask (when the request is admitted, or on another thread while
 * the prompt is prefilled): walks `vocab` once for each wide lexical context of the grammar
 * (the state after a byte element whose stacks take ≥ 80 distinct bytes: a string's
 * characters; and the first step of each count of x{m,n} past 32), so that the first mask
 * inside one costs what the later ones do. The masks
 * are the same with or without it; the matcher's state does not change. OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_grammar_matcher_prepare(poot_grammar_matcher *matcher,
                                                       const poot_grammar_vocab *vocab);

/* ------------------------------------------------------- JSON Schema → GBNF */

/* A JSON Schema (a draft 2020-12 subset, docs/json_schema.md) compiled to GBNF text that
 * poot_grammar_compile accepts. The grammar's language is the JSON texts that validate,
 * within the documented limits: object members in the schema's order, bounded white space
 * between tokens, canonical spellings (const/enum scalars as their compact text, integers
 * without fraction or exponent, bounded numbers without exponent), oneOf as anyOf. Thread
 * safe: the calls share no state. */
typedef struct poot_json_schema_options {
  bool strict_properties;      /* a schema with "properties" and no "additionalProperties"
                                  allows no other members (OpenAI's strict mode) */
  bool ignore_unknown_formats; /* a "format" not supported is a plain string, not UNSUPPORTED */
  bool compact;                /* no white space at all between tokens */
  uint32_t max_whitespace;     /* between two tokens: at most one line break with at most
                                  this many spaces or tabs around it; 0 → 20, ≤ 1,000 */
} poot_json_schema_options;

static inline poot_json_schema_options poot_json_schema_options_default(void) {
  poot_json_schema_options o = {.strict_properties = false,
                                .ignore_unknown_formats = false,
                                .compact = false,
                                .max_whitespace = 0};
  return o;
}

/* Compiles the schema text (`len` bytes, not NUL-terminated) to GBNF; *out_gbnf is
 * poot_malloc'ed, NUL-terminated, *out_len bytes (free with poot_free). `opts` may be NULL.
 * INVALID_ARGUMENT for text that is not JSON, a keyword of the wrong type, a $ref that points
 * at nothing, or a schema no value validates ("json schema: … at /properties/a"); UNSUPPORTED
 * for a keyword or form outside the subset, naming it and its JSON pointer ("json schema:
 * 'patternProperties' at /properties/a is not supported"); CAPACITY when the grammar would pass
 * the GBNF bounds (rules, elements, text; the text is compiled once to check); OUT_OF_MEMORY.
 * On error *out_gbnf is NULL. */
POOT_MUST_USE poot_status poot_json_schema_to_gbnf(const char *schema_json, size_t len,
                                                   const poot_json_schema_options *opts,
                                                   char **out_gbnf, size_t *out_len);
/* Several schemas in one grammar: rules[i].schema (len bytes; its own document, so its
 * $refs resolve inside it) becomes the rule rules[i].name, and the grammar's start is
 * "root ::= <root_body>", GBNF written by the caller over those names (its literals made with
 * poot_gbnf_literal). Rules the schemas share are written once; generated names never take a
 * caller's. Names are [a-z0-9-]+, distinct, and not a primitive's ("ws", "json-…", "fmt-…",
 * "root"): INVALID_ARGUMENT otherwise. Errors as poot_json_schema_to_gbnf, naming the schema
 * (its index and name); a root_body that does not compile is CAPACITY naming the GBNF error. */
typedef struct poot_json_schema_rule {
  const char *name;   /* NUL-terminated */
  const char *schema; /* len bytes of JSON Schema text */
  size_t len;
} poot_json_schema_rule;
POOT_MUST_USE poot_status poot_json_schemas_to_gbnf(const poot_json_schema_rule *rules, size_t n,
                                                    const char *root_body,
                                                    const poot_json_schema_options *opts,
                                                    char **out_gbnf, size_t *out_len);
/* Appends s[0..n) as a GBNF string literal ("…" with \\ \" \n \r \t \xHH escapes).
 * INVALID_ARGUMENT when s is not valid UTF-8. */
POOT_MUST_USE poot_status poot_gbnf_literal(poot_strbuf *sb, const char *s, size_t n);
/* GBNF for any JSON value (bounded white space). OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_json_grammar_any(char **out_gbnf, size_t *out_len);
/* An OpenAI response_format object: {"type":"text"} → no grammar (*out_gbnf NULL, OK);
 * {"type":"json_object"} → any JSON object; {"type":"json_schema","json_schema":{"name":…,
 * "schema":{…},"strict":bool}} → the schema (strict: true sets strict_properties). Errors as
 * poot_json_schema_to_gbnf, and INVALID_ARGUMENT for another type or a missing schema. */
POOT_MUST_USE poot_status poot_json_response_format_to_gbnf(const char *response_format_json,
                                                            size_t len,
                                                            const poot_json_schema_options *opts,
                                                            char **out_gbnf, size_t *out_len);

#endif /* POOT_LLM_GRAMMAR_H */
