/* poot eval FILE.pgraph [--input NAME=FILE.npy …] [--out DIR] [--zero-states]
 *
 * Evaluates a graph with the reference evaluator and prints every result, or
 * writes each as DIR/NAME.npy ("output" for the primary output, the state's
 * or environment entry's name otherwise, with characters outside
 * [A-Za-z0-9_.-] replaced by '_'). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "npy.h"
#include "poot/eval.h"
#include "poot/graph.h"
#include "tool.h"

static const char *const CMD = "eval";

static const char synopsis[] =
    "usage: poot eval FILE.pgraph [--input NAME=FILE.npy ...] [--out DIR] [--zero-states]\n\n"
    "Evaluates a graph (.pgraph text form) with poot's CPU reference evaluator.\n\n";

static const char epilog[] =
    "\n"
    "bf16 arrays are read and written as uint16 bit patterns; a packed weight\n"
    "(q4_0 …) is bound from a uint8 array of its raw GGUF blocks.\n";

static bool dtype_of_npy(poot_npy_type t, poot_dtype *out) {
  static const poot_dtype map[POOT_NPY_TYPE_COUNT] = {
      [POOT_NPY_F32] = POOT_DTYPE_F32,   [POOT_NPY_F16] = POOT_DTYPE_F16,
      [POOT_NPY_BF16] = POOT_DTYPE_BF16, [POOT_NPY_I8] = POOT_DTYPE_I8,
      [POOT_NPY_U8] = POOT_DTYPE_U8,     [POOT_NPY_I16] = POOT_DTYPE_I16,
      [POOT_NPY_I32] = POOT_DTYPE_I32,   [POOT_NPY_I64] = POOT_DTYPE_I64,
      [POOT_NPY_U32] = POOT_DTYPE_U32,   [POOT_NPY_BOOL] = POOT_DTYPE_BOOL};
  if ((int)t < 0 || t >= POOT_NPY_TYPE_COUNT) return false;
  *out = map[t];
  return true;
}

static bool npy_of_dtype(poot_dtype dt, poot_npy_type *out) {
  for (int t = 0; t < POOT_NPY_TYPE_COUNT; t++) {
    poot_dtype d;
    if (dtype_of_npy((poot_npy_type)t, &d) && d == dt) {
      *out = (poot_npy_type)t;
      return true;
    }
  }
  return false;
}

/* The root leaf bound by `name`, or NULL. */
static const poot_node *find_leaf(const poot_graph *g, const char *name) {
  const poot_region *root = poot_graph_root(g);
  const poot_node *found = NULL;
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  for (uint32_t i = 0; root && i < root->num_nodes && !found; i++) {
    const poot_node *n = poot_graph_node(g, root->nodes[i]);
    if (!n || n->op != POOT_OP_LEAF || n->storage == POOT_STORAGE_CONST) continue;
    poot_strbuf_clear(&sb);
    poot_graph_leaf_name(g, n, &sb);
    if (strcmp(sb.data, name) == 0) found = n;
  }
  poot_strbuf_deinit(&sb);
  return found;
}

/* Makes the tensor for one --input: the array's own type, or the leaf's
 * packed type when the array is the raw bytes of its blocks. */
static poot_status input_tensor(const poot_graph *g, const char *name, const poot_npy *a,
                                poot_tensor *out) {
  memset(out, 0, sizeof *out);
  poot_dtype dt;
  if (!dtype_of_npy(a->type, &dt) || a->rank > POOT_MAX_RANK)
    return poot_status_make(POOT_UNSUPPORTED, "input '%s': unsupported array", name);
  out->type.dtype = dt;
  out->type.shape.rank = (uint32_t)a->rank;
  for (int d = 0; d < a->rank; d++) out->type.shape.dims[d] = a->shape[d];
  out->data = a->data;
  out->size = a->bytes;
  const poot_node *leaf = find_leaf(g, name);
  if (!leaf)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "input '%s' names no weight, state, slot or "
                            "param of the graph",
                            name);
  const poot_type *lt = poot_graph_value_type(g, leaf->results[0]);
  size_t need = 0;
  if (lt && poot_dtype_is_packed(lt->dtype) && dt == POOT_DTYPE_U8 &&
      !poot_type_byte_size(lt->dtype, &lt->shape, &need) && need == a->bytes)
    out->type = *lt;
  return POOT_OK_STATUS;
}

static void print_element(const poot_tensor *t, int64_t i) {
  const uint8_t *p = t->data;
  switch (t->type.dtype) {
    case POOT_DTYPE_F32: {
      float f;
      memcpy(&f, p + 4 * i, 4);
      printf("%.9g", (double)f);
      break;
    }
    case POOT_DTYPE_F16:
    case POOT_DTYPE_BF16: {
      uint16_t h;
      memcpy(&h, p + 2 * i, 2);
      printf("%.6g",
             (double)(t->type.dtype == POOT_DTYPE_F16 ? poot_f16_to_f32(h) : poot_bf16_to_f32(h)));
      break;
    }
    case POOT_DTYPE_I8:
      printf("%d", (int)((const int8_t *)p)[i]);
      break;
    case POOT_DTYPE_U8:
      printf("%u", (unsigned)p[i]);
      break;
    case POOT_DTYPE_BOOL:
      printf("%s", p[i] ? "true" : "false");
      break;
    case POOT_DTYPE_I16: {
      int16_t v;
      memcpy(&v, p + 2 * i, 2);
      printf("%d", (int)v);
      break;
    }
    case POOT_DTYPE_I32: {
      int32_t v;
      memcpy(&v, p + 4 * i, 4);
      printf("%d", (int)v);
      break;
    }
    case POOT_DTYPE_U32: {
      uint32_t v;
      memcpy(&v, p + 4 * i, 4);
      printf("%u", (unsigned)v);
      break;
    }
    case POOT_DTYPE_I64: {
      int64_t v;
      memcpy(&v, p + 8 * i, 8);
      printf("%lld", (long long)v);
      break;
    }
    default:
      printf("0x%02x", (unsigned)p[i]);
      break;
  }
}

static void print_result(const char *kind, const char *name, const poot_tensor *t) {
  poot_strbuf sb;
  poot_strbuf_init(&sb);
  poot_type_format(&sb, &t->type);
  printf("%s %s : %s = [", kind, name, sb.data);
  poot_strbuf_deinit(&sb);
  int64_t n = 1;
  for (uint32_t d = 0; d < t->type.shape.rank; d++) n *= t->type.shape.dims[d];
  if (poot_dtype_is_packed(t->type.dtype)) n = (int64_t)t->size;
  for (int64_t i = 0; i < n; i++) {
    if (i) printf(", ");
    print_element(t, i);
  }
  printf("]\n");
}

static poot_status write_result(const char *dir, const char *name, const poot_tensor *t) {
  poot_npy a = {.rank = (int)t->type.shape.rank, .data = t->data, .bytes = t->size};
  if (!npy_of_dtype(t->type.dtype, &a.type)) {
    a.type = POOT_NPY_U8; /* packed: the raw blocks */
    a.rank = 1;
    a.shape[0] = (int64_t)t->size;
  } else {
    for (uint32_t d = 0; d < t->type.shape.rank; d++) a.shape[d] = t->type.shape.dims[d];
  }
  char clean[256];
  size_t k = 0;
  for (const char *p = name; *p && k + 1 < sizeof clean; p++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || (c == '.' && k > 0);
    clean[k++] = ok ? c : '_';
  }
  clean[k] = 0;
  poot_strbuf path;
  poot_strbuf_init(&path);
  poot_strbuf_printf(&path, "%s/%s.npy", dir, k ? clean : "_");
  poot_status s = poot_strbuf_status(&path);
  if (!s) s = poot_npy_write(path.data, &a);
  poot_strbuf_deinit(&path);
  return s;
}

/* Parses the flags into *graph_path, *out_dir, *zero_states and the input
 * specs (room for argc of them). Returns -1 to go on, else the exit code. */
static int parse_flags(int argc, char **argv, const char **graph_path, const char **out_dir,
                       bool *zero_states, poot_tool_list *inputs) {
  const char *args[1] = {NULL};
  const poot_tool_option options[] = {
      {POOT_FLAG_INPUT, inputs,
       "bind a leaf: a weight by its reference (blk.0.attn_q),\n"
       "a state, a named slot or a param by its name, a slot\n"
       "by its kind (token, pos, slot_map, write_map)",
       0, 0},
      {POOT_FLAG_OUT, out_dir,
       "write each result as DIR/NAME.npy (the primary output\n"
       "as output.npy) instead of printing it",
       0, 0},
      {POOT_FLAG_ZERO_STATES, zero_states, NULL, 0, 0},
  };
  const poot_tool_cli cli = {.cmd = CMD,
                             .synopsis = synopsis,
                             .options = options,
                             .n_options = sizeof options / sizeof options[0],
                             .epilog = epilog,
                             .args = args,
                             .max_args = 1};
  int rc = poot_tool_parse(&cli, 1, argc, argv);
  if (rc >= 0) return rc;
  for (size_t i = 0; i < inputs->n; i++) {
    const char *v = inputs->items[i];
    if (!strchr(v, '=') || v[0] == '=')
      return poot_tool_usage_error(CMD, "--input takes NAME=FILE.npy, got '%s'", v);
  }
  if (!args[0]) return poot_tool_usage_error(CMD, "missing FILE.pgraph");
  *graph_path = args[0];
  return -1;
}

static int eval_main(int argc, char **argv) {
  const char *graph_path = NULL, *out_dir = NULL;
  bool zero_states = false;
  const char **input_specs = poot_calloc((size_t)argc, sizeof *input_specs);
  if (!input_specs) return poot_tool_fail(CMD, poot_status_make(POOT_OUT_OF_MEMORY, "arguments"));
  poot_tool_list specs = {.items = input_specs, .n = 0, .cap = (size_t)argc};
  int rc = parse_flags(argc, argv, &graph_path, &out_dir, &zero_states, &specs);
  if (rc >= 0) {
    poot_free((void *)input_specs);
    return rc;
  }
  int n_inputs = (int)specs.n;

  poot_graph *g = NULL;
  poot_npy *arrays = poot_calloc((size_t)(n_inputs ? n_inputs : 1), sizeof *arrays);
  poot_tensor *tensors = poot_calloc((size_t)(n_inputs ? n_inputs : 1), sizeof *tensors);
  poot_eval_input *items = poot_calloc((size_t)(n_inputs ? n_inputs : 1), sizeof *items);
  char **names = poot_calloc((size_t)(n_inputs ? n_inputs : 1), sizeof *names);
  poot_evaluation *ev = NULL;
  poot_status s = POOT_OK_STATUS;
  if (!arrays || !tensors || !items || !names) {
    s = poot_status_make(POOT_OUT_OF_MEMORY, "inputs");
    goto done;
  }
  s = poot_graph_load(graph_path, &g);
  if (s) goto done;
  for (int i = 0; i < n_inputs; i++) {
    const char *eq = strchr(input_specs[i], '=');
    names[i] = poot_strndup(input_specs[i], (size_t)(eq - input_specs[i]));
    if (!names[i]) {
      s = poot_status_make(POOT_OUT_OF_MEMORY, "inputs");
      goto done;
    }
    s = poot_npy_read(eq + 1, &arrays[i]);
    if (!s) s = input_tensor(g, names[i], &arrays[i], &tensors[i]);
    if (s) {
      s = poot_status_annotate(s, "--input %s", names[i]);
      goto done;
    }
    items[i].name = names[i];
    items[i].tensor = &tensors[i];
  }
  poot_eval_inputs inputs = {.count = (size_t)n_inputs, .items = items};
  poot_eval_options opt;
  poot_eval_options_init(&opt);
  opt.zero_missing_states = zero_states;
  s = poot_eval(g, &inputs, &opt, &ev);
  if (s) goto done;
  if (out_dir) {
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
      s = poot_status_make(POOT_IO, "cannot create %s: %s", out_dir, strerror(errno));
      goto done;
    }
    if (ev->has_output) s = write_result(out_dir, "output", &ev->output);
    for (uint32_t i = 0; !s && i < ev->num_states; i++)
      s = write_result(out_dir, ev->states[i].name, &ev->states[i].tensor);
    for (uint32_t i = 0; !s && i < ev->num_env; i++)
      s = write_result(out_dir, ev->env[i].name, &ev->env[i].tensor);
  } else {
    if (ev->has_output) print_result("output", "output", &ev->output);
    for (uint32_t i = 0; i < ev->num_states; i++)
      print_result("state", ev->states[i].name, &ev->states[i].tensor);
    for (uint32_t i = 0; i < ev->num_env; i++)
      print_result("env", ev->env[i].name, &ev->env[i].tensor);
  }

done:
  poot_evaluation_destroy(ev);
  for (int i = 0; names && i < n_inputs; i++) poot_free(names[i]);
  for (int i = 0; arrays && i < n_inputs; i++) poot_npy_deinit(&arrays[i]);
  poot_free(names);
  poot_free(arrays);
  poot_free(tensors);
  poot_free(items);
  poot_free((void *)input_specs);
  poot_graph_destroy(g);
  if (s) return poot_tool_fail(CMD, s);
  return POOT_EXIT_OK;
}

const poot_tool_command poot_tool_cmd_eval = {
    "eval", "evaluate a .pgraph with the reference evaluator", eval_main};
