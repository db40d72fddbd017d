/* The renderers behind one interface: a row per KIR language, so that a
 * caller asks for target->lang's renderer instead of switching on it. */
#include "poot/kir.h"

/* The interpreter runs KIR itself: its "source" is the printed form. */
static poot_status render_kir_text(const poot_kir_kernel *kernel, const poot_kir_target *target,
                                   poot_strbuf *out) {
  (void)target;
  poot_kir_print(kernel, out);
  return POOT_OK_STATUS;
}

static const poot_kir_renderer k_renderers[] = {
    {POOT_KIR_LANG_NONE, "kir", "kir", render_kir_text},
    {POOT_KIR_LANG_PTX, "ptx", "ptx", poot_kir_render_ptx},
    {POOT_KIR_LANG_GLSL, "glsl", "comp", poot_kir_render_glsl},
    {POOT_KIR_LANG_WGSL, "wgsl", "wgsl", poot_kir_render_wgsl},
    {POOT_KIR_LANG_AMDGPU, "amdgpu", "ll", poot_kir_render_amdgpu},
};

const poot_kir_renderer *poot_kir_renderer_for(poot_kir_lang lang) {
  for (size_t i = 0; i < sizeof k_renderers / sizeof k_renderers[0]; i++)
    if (k_renderers[i].lang == lang) return &k_renderers[i];
  return NULL;
}

poot_status poot_kir_render(const poot_kir_kernel *kernel, const poot_kir_target *target,
                            poot_strbuf *out) {
  if (!kernel || !target || !out)
    return poot_status_make(POOT_INVALID_ARGUMENT, "kir render: NULL kernel, target or output");
  const poot_kir_renderer *r = poot_kir_renderer_for(target->lang);
  if (!r)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "kir render: target %s has language %d, which has no renderer",
                            target->name ? target->name : "?", (int)target->lang);
  return r->render(kernel, target, out);
}
