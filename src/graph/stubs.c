/* stubs.c — temporary: entry points not implemented yet. */
#include "graph_impl.h"
#define NYI(f) poot_status_make(POOT_UNSUPPORTED, "%s: not implemented yet", f)
void poot__format_string(poot_strbuf *sb, const char *s) { poot_strbuf_putc(sb, '"'); poot_strbuf_puts(sb, s); poot_strbuf_putc(sb, '"'); }
poot_status poot_graph_print(const poot_graph *g, poot_strbuf *sb) { (void)g; (void)sb; return NYI("poot_graph_print"); }
poot_status poot_graph_to_text(const poot_graph *g, char **out) { (void)g; *out = NULL; return NYI("poot_graph_to_text"); }
poot_status poot_graph_parse(const char *t, size_t n, poot_graph **out) { (void)t; (void)n; *out = NULL; return NYI("poot_graph_parse"); }
poot_status poot_graph_load(const char *p, poot_graph **out) { (void)p; *out = NULL; return NYI("poot_graph_load"); }
poot_status poot_graph_hash(const poot_graph *g, uint64_t *out) { (void)g; *out = 0; return NYI("poot_graph_hash"); }
