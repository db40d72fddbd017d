/* GLSL compute text to SPIR-V, in process, through glslang's C interface.
 *
 * glslang (Debian's glslang-dev) is linked statically; it is C++, so the
 * layer links libstdc++ (src/kir/CMakeLists.txt). Without glslang at build
 * time the call returns UNSUPPORTED. The output is deterministic: no debug
 * information, no optimizer, fixed client (Vulkan 1.2) and SPIR-V 1.5. */
#include "poot/kir.h"

#include <string.h>

#ifdef POOT_HAVE_GLSLANG
#include <pthread.h>

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

/* glslang keeps process-wide builtin symbol tables. Initialising it once and
 * never finalising keeps every later compile cheap; the tables stay
 * reachable, so leak checkers do not report them. glslang itself serialises
 * what it shares, so compiles may run on several threads. */
static pthread_once_t glslang_once = PTHREAD_ONCE_INIT;
static int glslang_ready;

static void glslang_init_once(void) {
  glslang_ready = glslang_initialize_process();
}

/* Appends glslang's log, followed by the source lines it names, so that a
 * message reads "ERROR: 0:12: ..." then "  12 | <the line>". */
static void append_log(poot_strbuf *sb, const char *log, const char *src) {
  poot_strbuf_puts(sb, log ? log : "");
  if (!log) return;
  const char *p = log;
  int shown = 0;
  long last = 0;
  while ((p = strstr(p, "ERROR: 0:")) != NULL && shown < 8) {
    p += 9;
    long line = 0;
    while (*p >= '0' && *p <= '9') line = line * 10 + (*p++ - '0');
    if (line <= 0 || line == last) continue;
    last = line;
    const char *s = src;
    for (long l = 1; l < line && s; l++) {
      s = strchr(s, '\n');
      if (s) s++;
    }
    if (!s) continue;
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    poot_strbuf_printf(sb, "\n%5ld | %.*s", line, (int)n, s);
    shown++;
  }
}

poot_status poot_kir_glsl_to_spirv(const char *glsl_text, size_t len, const poot_kir_target *target,
                                   poot_vec *out_words) {
  if (!out_words || out_words->elem_size != sizeof(uint32_t))
    return poot_status_make(POOT_INVALID_ARGUMENT, "kir spirv: out_words must hold uint32_t");
  poot_vec_clear(out_words);
  if (!glsl_text || !target)
    return poot_status_make(POOT_INVALID_ARGUMENT, "kir spirv: no GLSL text or target");
  glslang_target_client_version_t client = GLSLANG_TARGET_VULKAN_1_2;
  glslang_target_language_version_t spv = GLSLANG_TARGET_SPV_1_5;
  switch (target->vulkan_version) {
    case 10:
      client = GLSLANG_TARGET_VULKAN_1_0;
      spv = GLSLANG_TARGET_SPV_1_0;
      break;
    case 11:
      client = GLSLANG_TARGET_VULKAN_1_1;
      spv = GLSLANG_TARGET_SPV_1_3;
      break;
    case 0:
    case 12:
      break;
    case 13:
      client = GLSLANG_TARGET_VULKAN_1_3;
      spv = GLSLANG_TARGET_SPV_1_6;
      break;
    default:
      return poot_status_make(POOT_UNSUPPORTED, "kir spirv: target %s asks for Vulkan version %u",
                              target->name ? target->name : "?", target->vulkan_version);
  }
  /* glslang wants NUL-terminated text. */
  char *glsl = poot_strndup(glsl_text, len);
  if (!glsl) return poot_status_make(POOT_OUT_OF_MEMORY, "kir spirv: %zu bytes of GLSL", len);
  if (pthread_once(&glslang_once, glslang_init_once) != 0 || !glslang_ready) {
    poot_free(glsl);
    return poot_status_make(POOT_INTERNAL, "kir spirv: glslang failed to initialise");
  }

  const glslang_messages_t messages =
      GLSLANG_MSG_DEFAULT_BIT | GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT;
  glslang_input_t input = {
      .language = GLSLANG_SOURCE_GLSL,
      .stage = GLSLANG_STAGE_COMPUTE,
      .client = GLSLANG_CLIENT_VULKAN,
      .client_version = client,
      .target_language = GLSLANG_TARGET_SPV,
      .target_language_version = spv,
      .code = glsl,
      .default_version = 450,
      .default_profile = GLSLANG_NO_PROFILE,
      .force_default_version_and_profile = 0,
      .forward_compatible = 0,
      .messages = messages,
      .resource = glslang_default_resource(),
  };
  poot_status st = NULL;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  glslang_program_t *program = NULL;
  glslang_shader_t *shader = glslang_shader_create(&input);
  if (!shader) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "kir spirv: glslang_shader_create failed");
    goto done;
  }
  if (!glslang_shader_preprocess(shader, &input) || !glslang_shader_parse(shader, &input)) {
    append_log(&sb, glslang_shader_get_info_log(shader), glsl);
    st = poot_status_make(POOT_FORMAT, "kir spirv: glslang rejected the GLSL:\n%s", sb.data);
    goto done;
  }
  program = glslang_program_create();
  if (!program) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "kir spirv: glslang_program_create failed");
    goto done;
  }
  glslang_program_add_shader(program, shader);
  if (!glslang_program_link(program, (int)messages)) {
    append_log(&sb, glslang_program_get_info_log(program), glsl);
    st = poot_status_make(POOT_FORMAT, "kir spirv: glslang could not link:\n%s", sb.data);
    goto done;
  }
  glslang_spv_options_t options = {
      .generate_debug_info = false,
      .strip_debug_info = true,
      .disable_optimizer = true,
      .optimize_size = false,
      .disassemble = false,
      .validate = false,
  };
  glslang_program_SPIRV_generate_with_options(program, GLSLANG_STAGE_COMPUTE, &options);
  const char *spv_msgs = glslang_program_SPIRV_get_messages(program);
  size_t count = glslang_program_SPIRV_get_size(program);
  if (count == 0) {
    st = poot_status_make(POOT_INTERNAL, "kir spirv: glslang produced no SPIR-V: %s",
                          spv_msgs ? spv_msgs : "");
    goto done;
  }
  st = poot_vec_resize(out_words, count);
  if (st) goto done;
  glslang_program_SPIRV_get(program, (unsigned int *)out_words->data);
done:
  if (program) glslang_program_delete(program);
  if (shader) glslang_shader_delete(shader);
  poot_strbuf_deinit(&sb);
  poot_free(glsl);
  if (st) poot_vec_clear(out_words);
  return st;
}

#else /* !POOT_HAVE_GLSLANG */

poot_status poot_kir_glsl_to_spirv(const char *glsl_text, size_t len, const poot_kir_target *target,
                                   poot_vec *out_words) {
  (void)glsl_text;
  (void)len;
  (void)target;
  if (out_words) poot_vec_clear(out_words);
  return poot_status_make(POOT_UNSUPPORTED,
                          "kir spirv: this build has no glslang (install glslang-dev and "
                          "spirv-tools, then reconfigure)");
}

#endif

poot_status poot_kir_compile_spirv(const poot_kir_kernel *kernel, const poot_kir_target *target,
                                   poot_vec *out_words) {
  if (out_words) poot_vec_clear(out_words);
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_status st = poot_kir_render_glsl(kernel, target, &sb);
  if (!st) st = poot_kir_glsl_to_spirv(sb.data, sb.len, target, out_words);
  poot_strbuf_deinit(&sb);
  return st;
}
