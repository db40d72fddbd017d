/* Weight references: the model's typed roles, their display names (GGUF's
 * tensor names without ".weight") and the opaque key a graph's weight leaf
 * carries for them. */
#include <string.h>

#include "poot/llm/weight_map.h"

static const struct {
  const char *name;
  bool per_layer;
} roles[POOT_WEIGHT_ROLE_COUNT] = {
    [POOT_WEIGHT_NONE] = {"none", false},
#define POOT__ROLE_ROW(ID, n, per_layer) [POOT_WEIGHT_##ID] = {#n, per_layer},
    POOT_WEIGHT_ROLES(POOT__ROLE_ROW)
#undef POOT__ROLE_ROW
        [POOT_WEIGHT_CUSTOM] = {"custom", false},
};

const char *poot_weight_role_name(poot_weight_role role) {
  if ((unsigned)role >= POOT_WEIGHT_ROLE_COUNT || role == POOT_WEIGHT_NONE) return "?";
  return roles[role].name;
}

bool poot_weight_role_is_per_layer(poot_weight_role role) {
  if ((unsigned)role >= POOT_WEIGHT_ROLE_COUNT) return false;
  return roles[role].per_layer;
}

bool poot_weight_ref_is_valid(const poot_weight_ref *ref) {
  if (!ref || (unsigned)ref->role >= POOT_WEIGHT_ROLE_COUNT || ref->role == POOT_WEIGHT_NONE)
    return false;
  if (ref->role == POOT_WEIGHT_CUSTOM) return ref->name && *ref->name && ref->layer >= -1;
  return roles[ref->role].per_layer ? ref->layer >= 0 : ref->layer == -1;
}

void poot_weight_ref_format(poot_strbuf *sb, const poot_weight_ref *ref) {
  if (ref->layer >= 0) poot_strbuf_printf(sb, "blk.%d.", (int)ref->layer);
  if (ref->role == POOT_WEIGHT_CUSTOM)
    poot_strbuf_puts(sb, ref->name ? ref->name : "");
  else
    poot_strbuf_puts(sb, poot_weight_role_name(ref->role));
}

/* Reads the "blk.N." prefix of a per-layer name; *out_layer stays -1 and
 * nothing is consumed when there is none. False on a malformed prefix. */
static bool parse_layer(const char **text, size_t *len, int32_t *out_layer) {
  *out_layer = -1;
  if (*len <= 4 || memcmp(*text, "blk.", 4) != 0) return true;
  size_t i = 4;
  int64_t v = 0;
  if (i >= *len || (*text)[i] < '0' || (*text)[i] > '9') return false;
  while (i < *len && (*text)[i] >= '0' && (*text)[i] <= '9') {
    v = v * 10 + ((*text)[i] - '0');
    if (v > INT32_MAX) return false;
    i++;
  }
  if (i >= *len || (*text)[i] != '.') return false;
  *out_layer = (int32_t)v;
  *text += i + 1;
  *len -= i + 1;
  return true;
}

bool poot_weight_ref_parse(const char *text, size_t len, poot_weight_ref *out_ref) {
  out_ref->role = POOT_WEIGHT_NONE;
  out_ref->layer = -1;
  out_ref->name = NULL;
  int32_t layer = -1;
  if (!parse_layer(&text, &len, &layer)) return false;
  for (int r = 1; r < POOT_WEIGHT_CUSTOM; r++) {
    if (strlen(roles[r].name) == len && memcmp(roles[r].name, text, len) == 0) {
      if (roles[r].per_layer != (layer >= 0)) return false;
      out_ref->role = (poot_weight_role)r;
      out_ref->layer = layer;
      return true;
    }
  }
  return false;
}

poot_status poot_weight_ref_id(const poot_weight_ref *ref, poot_strbuf *sb,
                               poot_weight_id *out_id) {
  out_id->key = 0;
  out_id->name = NULL;
  if (!poot_weight_ref_is_valid(ref))
    return poot_status_make(
        POOT_INVALID_ARGUMENT, "weight reference: role %s with layer %d is not a weight",
        ref ? poot_weight_role_name(ref->role) : "?", ref ? (int)ref->layer : 0);
  poot_strbuf_clear(sb);
  poot_weight_ref_format(sb, ref);
  POOT_TRY(poot_strbuf_status(sb));
  out_id->key = poot_weight_key_of_name(sb->data, sb->len);
  out_id->name = sb->data;
  return NULL;
}
