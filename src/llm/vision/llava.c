/* llava.c — the LLaVA wrapper's names: which configs are one, and where its
 * text model's and its tower's tensors live (docs/vision.md "Loading"). */
#include <stdio.h>
#include <string.h>

#include "vision_impl.h"

bool poot__llava_architecture(const char *architecture, const char *model_type) {
  return (architecture && strcmp(architecture, "LlavaForConditionalGeneration") == 0) ||
         (!architecture && model_type && strcmp(model_type, "llava") == 0);
}

const char *poot__llava_text_model_type(const poot_json *text_config) {
  const poot_json *mt = text_config ? poot_json_get(text_config, "model_type") : NULL;
  return mt && mt->type == POOT_JSON_STRING ? mt->str : "llama";
}

static bool store_has(const poot_store *store, const char *name) {
  const poot_store_tensor *t = NULL;
  poot_status st = poot_store_find(store, name, &t);
  if (!st) return true;
  poot_status_free(st);
  return false;
}

static bool starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The wrapper's spelling of a text model tensor name. */
static void text_name(const poot_store *store, const char *name, char *out, size_t n) {
  char a[512], b[512];
  if (starts(name, "model.")) {
    snprintf(a, sizeof a, "language_model.%s", name);
    snprintf(b, sizeof b, "model.language_model.%s", name + 6);
  } else if (starts(name, "lm_head.")) {
    snprintf(a, sizeof a, "language_model.%s", name);
    snprintf(b, sizeof b, "%s", name);
  } else {
    snprintf(out, n, "%s", name);
    return;
  }
  snprintf(out, n, "%s", store_has(store, b) && !store_has(store, a) ? b : a);
}

poot_status poot__llava_bind_weights(poot_weight_map *map, const poot_store *store) {
  size_t n = poot_weight_map_count(map);
  poot_weight_ref *refs = poot_calloc(n + 1, sizeof *refs);
  char **names = poot_calloc(n + 1, sizeof *names);
  poot_status st = NULL;
  if (!refs || !names) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "LLaVA weight names");
    goto done;
  }
  for (size_t i = 0; i < n && !st; i++) {
    const char *name = NULL;
    poot_weight_map_at(map, i, &refs[i], &name);
    char full[512];
    text_name(store, name, full, sizeof full);
    names[i] = poot_strdup(full);
    if (!names[i]) st = poot_status_make(POOT_OUT_OF_MEMORY, "LLaVA weight names");
  }
  for (size_t i = 0; i < n && !st; i++) st = poot_weight_map_bind(map, &refs[i], names[i]);
  static const char *const prefixes[] = {"vision_tower.", "multi_modal_projector."};
  for (size_t i = 0; i < poot_store_tensor_count(store) && !st; i++) {
    const char *name = poot_store_tensor_at(store, i)->name;
    const char *canon = starts(name, "model.") ? name + 6 : name;
    for (size_t p = 0; p < 2; p++) {
      if (!starts(canon, prefixes[p])) continue;
      poot_weight_ref ref = {.role = POOT_WEIGHT_CUSTOM, .layer = -1, .name = canon};
      st = poot_weight_map_bind(map, &ref, name);
      break;
    }
  }
done:
  for (size_t i = 0; names && i < n; i++) poot_free(names[i]);
  poot_free(names);
  poot_free(refs);
  return st;
}
