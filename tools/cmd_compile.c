/* poot compile — plan a model's step (or a .pgraph) for a target and write
 * the plan and every kernel's source:
 *   poot compile (-m MODEL | -g FILE.pgraph) [--step decode|prefill:T] [--batch B]
 *                [--cap N] --target ptx|glsl|wgsl|amdgpu [--emit DIR] [--forms LIST] */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "poot/compile.h"
#include "poot/compile_passes.h"
#include "poot/devices.h"
#include "poot/llm/model.h"
#include "tool.h"

static const char *const CMD = "compile";

static const char synopsis[] =
    "usage: poot compile (-m MODEL | -g FILE.pgraph) [--step decode|prefill:T] [--batch B]\n"
    "                    [--cap N] --target ptx|glsl|wgsl|amdgpu [--emit DIR] [--forms LIST]\n\n"
    "Plans one step of a model (or a graph in the text form) for a target and prints\n"
    "the number of dispatches and the bytes one step reads and writes. With --emit,\n"
    "writes DIR/plan.txt and one source file per kernel (.ptx, .comp with the .spv\n"
    "beside it, .wgsl, .ll).\n\n";

typedef struct compile_flags {
  const char *model, *gfile, *step, *target, *emit, *matmul_precision, *forms_text;
  long long batch, cap;
  bool no_passes;
  poot_matmul_precision mp;
  uint32_t forms;
} compile_flags;

static int parse_flags(int argc, char **argv, compile_flags *f) {
  *f = (compile_flags){.step = "decode", .batch = 1, .cap = 1024};
  const poot_tool_option options[] = {
      {POOT_FLAG_MODEL, &f->model, "a GGUF file, a safetensors folder or a llama2.c checkpoint", 0,
       0},
      {POOT_FLAG_GRAPH, &f->gfile, NULL, 0, 0},
      {POOT_FLAG_STEP, &f->step, NULL, 0, 0},
      {POOT_FLAG_SEQUENCES, &f->batch, NULL, LLONG_MIN, LLONG_MAX},
      {POOT_FLAG_CAP, &f->cap, "KV capacity (default 1024)", LLONG_MIN, LLONG_MAX},
      {POOT_FLAG_TARGET, &f->target,
       "ptx (sm_80), ptx90 (sm_90), glsl (Vulkan, subgroup 32),\n"
       "lavapipe (Vulkan on a CPU, subgroup 8), wgsl (WebGPU),\n"
       "amdgpu (gfx942)",
       0, 0},
      {POOT_FLAG_EMIT, &f->emit, NULL, 0, 0},
      {POOT_FLAG_NO_PASSES, &f->no_passes, NULL, 0, 0},
      {POOT_FLAG_MATMUL_PRECISION, &f->matmul_precision, NULL, 0, 0},
      {POOT_FLAG_FORMS, &f->forms_text, NULL, 0, 0},
  };
  const poot_tool_cli cli = {.cmd = CMD,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = sizeof options / sizeof options[0]};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc < 0 && !poot_tool_parse_matmul_precision(CMD, f->matmul_precision, &f->mp))
    rc = POOT_EXIT_USAGE;
  if (rc < 0 && !poot_tool_parse_forms(CMD, f->forms_text, &f->forms)) rc = POOT_EXIT_USAGE;
  return rc;
}

/* --target's names: a catalogue target (poot/devices.h) and its subgroup size
 * (0: the catalogue's). */
typedef struct compile_target {
  const char *flag;
  poot_device_target_id id;
  uint32_t subgroup;
} compile_target;

static const compile_target TARGETS[] = {
    {"ptx", POOT_DEVICE_TARGET_SM80, 0},      {"ptx90", POOT_DEVICE_TARGET_SM90, 0},
    {"glsl", POOT_DEVICE_TARGET_VULKAN, 32},  {"lavapipe", POOT_DEVICE_TARGET_LAVAPIPE, 8},
    {"wgsl", POOT_DEVICE_TARGET_WEBGPU, 0},
    {"amdgpu", POOT_DEVICE_TARGET_GFX942, 0},
};

static poot_status write_file(const char *dir, const char *name, const void *data, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) return poot_status_make(POOT_IO, "cannot write %s: %s", path, strerror(errno));
  size_t w = fwrite(data, 1, n, f);
  int c = fclose(f);
  if (w != n || c != 0) return poot_status_make(POOT_IO, "cannot write %s", path);
  return NULL;
}

static int compile_main(int argc, char **argv) {
  compile_flags f;
  int rc = parse_flags(argc, argv, &f);
  if (rc >= 0) return rc;
  const char *model = f.model, *gfile = f.gfile, *step = f.step, *target = f.target, *emit = f.emit;
  long long batch = f.batch, cap = f.cap;
  bool passes = !f.no_passes;
  if (!!model == !!gfile) return poot_tool_usage_error(CMD, "give exactly one of -m and -g");
  if (!target) return poot_tool_usage_error(CMD, "--target is required");
  long long tokens = 1;
  if (!strncmp(step, "prefill:", 8)) {
    tokens = atoll(step + 8);
    if (tokens < 1) return poot_tool_usage_error(CMD, "bad --step '%s'", step);
  } else if (strcmp(step, "decode") != 0) {
    return poot_tool_usage_error(CMD, "bad --step '%s' (decode or prefill:T)", step);
  }
  if (batch < 1 || cap < tokens) return poot_tool_usage_error(CMD, "bad --batch or --cap");
  const compile_target *ct = NULL;
  for (size_t i = 0; i < sizeof TARGETS / sizeof TARGETS[0] && !ct; i++)
    if (!strcmp(target, TARGETS[i].flag)) ct = &TARGETS[i];
  if (!ct) return poot_tool_usage_error(CMD, "unknown --target '%s'", target);
  poot_kir_target t;
  poot_device_target_init(ct->id, ct->subgroup, &t);
  const char *ext = poot_kir_renderer_for(t.lang)->file_extension;

  poot_graph *g = NULL;
  poot_model *m = NULL;
  poot_plan *plan = NULL;
  poot_status st = NULL;
  if (gfile) {
    st = poot_graph_load(gfile, &g);
  } else {
    poot_model_open_options mo;
    memset(&mo, 0, sizeof mo);
    mo.skip_tokenizer = true;
    st = poot_model_open(model, &mo, &m);
    if (!st) {
      poot_model_step s;
      memset(&s, 0, sizeof s);
      s.batch = batch;
      s.tokens = tokens;
      s.cap = cap;
      poot_model_trace_options to = poot_model_trace_options_for(m);
      st = poot_model_trace(poot_model_get_config(m), &s, &to, &g);
    }
  }
  uint64_t t0 = poot_time_ns();
  if (!st && passes) {
    poot_graph *opt_g = NULL;
    st = poot_pass_run_default(g, NULL, &opt_g, NULL);
    if (!st) {
      poot_graph_destroy(g);
      g = opt_g;
    }
  }
  poot_compile_options o;
  poot_compile_options_init(&o);
  o.target = &t;
  o.matmul_precision = f.mp;
  poot_compile_options_set_forms(&o, f.forms);
  if (!st) st = poot_plan_create(g, &o, &plan);
  uint64_t t1 = poot_time_ns();
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  if (!st && emit) {
    if (mkdir(emit, 0777) != 0 && errno != EEXIST)
      st = poot_status_make(POOT_IO, "cannot create %s: %s", emit, strerror(errno));
    if (!st) {
      poot_plan_print(plan, &sb);
      st = write_file(emit, "plan.txt", sb.data ? sb.data : "", sb.len);
    }
    for (uint32_t i = 0; !st && i < plan->kernel_count; i++) {
      char name[128];
      poot_strbuf_clear(&sb);
      st = poot_plan_render_kernel(plan, i, &t, &sb);
      snprintf(name, sizeof name, "k%03u_%s.%s", i, plan->kernels[i]->name, ext);
      if (!st) st = write_file(emit, name, sb.data ? sb.data : "", sb.len);
      if (!st && t.lang == POOT_KIR_LANG_GLSL) {
        poot_vec words;
        poot_vec_init(&words, 4);
        st = poot_kir_glsl_to_spirv(sb.data, sb.len, &t, &words);
        snprintf(name, sizeof name, "k%03u_%s.spv", i, plan->kernels[i]->name);
        if (!st) st = write_file(emit, name, words.data, words.len * 4);
        poot_vec_deinit(&words);
      }
    }
  }
  uint64_t t2 = poot_time_ns();
  if (!st) {
    printf(
        "target %s\ndispatches %u\nkernels %u\nbytes_per_step %llu\nweight_bytes %llu\n"
        "plan_ms %.1f\nrender_ms %.1f\n",
        t.name, plan->dispatch_count, plan->kernel_count, (unsigned long long)plan->bytes_per_step,
        (unsigned long long)plan->weight_bytes, (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6);
  }
  poot_strbuf_deinit(&sb);
  poot_plan_destroy(plan);
  poot_graph_destroy(g);
  poot_model_destroy(m);
  if (st) return poot_tool_fail(CMD, st);
  return POOT_EXIT_OK;
}

const poot_tool_command poot_tool_cmd_compile = {
    "compile", "plan a step for a target and emit its kernels", compile_main};
