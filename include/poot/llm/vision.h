/* poot/llm/vision.h — images and the vision tower of LLaVA-style models
 * (docs/vision.md).
 *
 * Three parts:
 *   1. images: PNG, JPEG and WebP files decoded by the packaged libraries
 *      into 8-bit RGB, converted as transformers' convert_rgb does (alpha
 *      composited onto white as Pillow's paste does it);
 *   2. preprocessing exactly as the Hugging Face image processors
 *      (CLIPImageProcessor, SiglipImageProcessor) read from the model's
 *      preprocessor_config.json: Pillow's BICUBIC resize, bit for bit on the
 *      8-bit image, center crop, rescale and normalize, into f32 [3, H, W];
 *   3. the tower: a CLIP or SigLIP ViT encoder and LLaVA's projector, traced
 *      as one graph from pixels (a named slot, bound per call) to the rows
 *      that replace the image tokens' embeddings of the language model.
 *
 * Objects are not thread safe for writes. */
#ifndef POOT_LLM_VISION_H
#define POOT_LLM_VISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/exec.h"
#include "poot/graph.h"
#include "poot/llm/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ images */

/* An 8-bit RGB image, row-major, 3 bytes a pixel (owned; poot_image_deinit). */
typedef struct poot_image {
  int32_t width, height;
  uint8_t *rgb;
} poot_image;

/* Decodes a PNG, JPEG or WebP held in memory (borrowed during the call);
 * `name` (may be NULL) names it in messages. The result is what the
 * processors' convert_rgb makes of Pillow's Image.open(f): an image with
 * alpha (RGBA, LA, a palette or gray image with tRNS) composited onto white
 * as Image.paste does it, gray replicated, a palette looked up, 16-bit
 * samples to 8 as Pillow reduces them; a WebP's first frame. FORMAT naming the image for an unknown
 * signature or a truncated or corrupt file; UNSUPPORTED for a CMYK JPEG; OUT_OF_MEMORY. out_image
 * is zeroed first and holds nothing on failure. */
POOT_MUST_USE poot_status poot_image_decode(const void *data, size_t size, const char *name,
                                            poot_image *out_image);
/* Reads and decodes the file at `path`: NOT_FOUND/IO from reading, then
 * poot_image_decode's statuses naming the path. */
POOT_MUST_USE poot_status poot_image_load(const char *path, poot_image *out_image);
void poot_image_deinit(poot_image *image); /* NULL-safe; zeroes it */

/* Pillow's Image.resize((width, height), Image.BICUBIC) of an RGB image: a
 * separable convolution (horizontal pass, then vertical), Pillow's support
 * and antialiasing on downscaling, fixed-point coefficients with 22
 * fractional bits, and 8-bit rounding between the passes. Bit-exact.
 * INVALID_ARGUMENT for an empty size; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_image_resize_bicubic(const poot_image *image, int32_t width,
                                                    int32_t height, poot_image *out_image);

/* ------------------------------------------------------------ preprocessing */

typedef enum poot_vision_resize {
  POOT_VISION_RESIZE_NONE = 0,
  POOT_VISION_RESIZE_SHORTEST_EDGE, /* CLIP: the shorter side to `shortest_edge` */
  POOT_VISION_RESIZE_EXACT,         /* SigLIP: to height × width */
} poot_vision_resize;

/* What preprocessor_config.json says (only the fields the processors use). */
typedef struct poot_vision_preprocess {
  poot_vision_resize resize;
  int32_t shortest_edge;
  int32_t resize_height, resize_width;
  bool center_crop;
  int32_t crop_height, crop_width;
  bool rescale;
  double rescale_factor;
  bool normalize;
  float mean[3], std[3];
  /* The f32 [3, out_height, out_width] the steps produce. */
  int32_t out_height, out_width;
} poot_vision_preprocess;

/* Reads `path` (preprocessor_config.json). Only resample 3 (BICUBIC) is
 * read; another is UNSUPPORTED naming it, as is an image processor type
 * other than CLIPImageProcessor / SiglipImageProcessor (and their Fast
 * names: poot always computes the PIL processors' pixels). NOT_FOUND, IO,
 * FORMAT naming the file and field. */
POOT_MUST_USE poot_status poot_vision_preprocess_load(const char *path,
                                                      poot_vision_preprocess *out_preprocess);

/* The processor's pixel_values of `image` into out (f32 [3, out_height,
 * out_width], channel-first), computed as transformers does: resize (Pillow
 * BICUBIC on the 8-bit image), center crop (zero padding when the image is
 * smaller), rescale (x · factor in f64, rounded to f32), normalize ((x -
 * mean) / std in f32). OUT_OF_MEMORY; INVALID_ARGUMENT for a bad config. */
POOT_MUST_USE poot_status poot_vision_preprocess_image(const poot_vision_preprocess *preprocess,
                                                       const poot_image *image, float *out);

/* ------------------------------------------------------------------- tower */

typedef enum poot_vision_tower_kind {
  POOT_VISION_TOWER_CLIP = 1,   /* class token, pre-layernorm, no patch bias */
  POOT_VISION_TOWER_SIGLIP = 2, /* no class token, patch bias */
} poot_vision_tower_kind;

typedef enum poot_vision_act {
  POOT_VISION_ACT_QUICK_GELU = 1, /* x · sigmoid(1.702 x) */
  POOT_VISION_ACT_GELU_TANH,      /* gelu_pytorch_tanh */
  POOT_VISION_ACT_GELU,           /* the erf GELU */
} poot_vision_act;

typedef struct poot_vision_config {
  poot_vision_tower_kind tower;
  int64_t image_size, patch_size, grid; /* grid = image_size / patch_size */
  int64_t hidden_size, intermediate_size, n_layers, n_heads;
  double norm_eps;
  poot_vision_act act;
  /* LLaVA: the hidden state the projector reads, as an index into the
   * tower's hidden states (0: the embeddings, i: after layer i), and
   * whether the class token is dropped ("default") or kept ("full"). */
  int64_t feature_layer;
  bool drop_cls;
  poot_vision_act projector_act;
  bool projector_bias;
  int64_t text_hidden;
  int64_t image_token_id;
  int64_t rows; /* image rows per image: what the <image> token expands to */
  poot_vision_preprocess preprocess;
} poot_vision_config;

typedef struct poot_vision poot_vision;

/* Opens the vision half of the model at `path` (the folder `model` was
 * opened from; `model` is borrowed and must outlive the handle: its store
 * holds the tower's tensors). Reads config.json's vision_config and LLaVA
 * keys (vision_feature_layer, vision_feature_select_strategy,
 * image_token_index / image_token_id, projector_hidden_act) and
 * preprocessor_config.json, and binds the tower's and the projector's
 * tensors under either naming transformers writes (4.x vision_tower.*,
 * multi_modal_projector.*; 5.x model.vision_tower.*, …).
 * UNSUPPORTED when the model has no vision tower (a text-only model) or a
 * key asks for what poot does not implement (naming it); NOT_FOUND naming a
 * missing tensor; FORMAT. */
POOT_MUST_USE poot_status poot_vision_open(poot_model *model, const char *path,
                                           poot_vision **out_vision);
void poot_vision_destroy(poot_vision *vision); /* NULL-safe */

const poot_vision_config *poot_vision_get_config(const poot_vision *vision);

/* The slot the tower's graph reads: f32 [1, 3, image_size, image_size]. */
#define POOT_VISION_SLOT_PIXELS "pixels"

/* Traces the tower and projector: Slot "pixels" → f32 [rows, text_hidden].
 * Weights are typed as the store holds them (f16/bf16 converted in the
 * graph). INVALID_ARGUMENT, UNSUPPORTED, OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_vision_trace(const poot_vision *vision, poot_graph **out_graph);

/* The host tensors of the graph's weights, for poot_eval or an executor:
 * out_weights[i] binds the i-th Weight leaf of `graph` by key (count set in
 * out_count; the arrays are owned by the caller: poot_free both; the data
 * is borrowed from the model). NOT_FOUND, FORMAT, OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_vision_weights(poot_vision *vision, const poot_graph *graph,
                                              poot_exec_weight **out_weights,
                                              poot_tensor **out_tensors, size_t *out_count);

/* The image rows of `pixels` (f32 [3, S, S]) on the oracle (poot_eval),
 * into out_rows (f32 [rows, text_hidden]). */
POOT_MUST_USE poot_status poot_vision_eval(poot_vision *vision, const float *pixels,
                                           float *out_rows);

/* A tower on an executor: its weights are loaded into `executor` (borrowed;
 * it must have no weights yet, and serves only this runner), and its entry
 * ("vision", "pixels:SxS") is added on first use and reused for every image:
 * the pixels are a slot written per call, never part of the program. */
typedef struct poot_vision_runner poot_vision_runner;

POOT_MUST_USE poot_status poot_vision_runner_create(poot_vision *vision, poot_executor *executor,
                                                    poot_vision_runner **out_runner);
void poot_vision_runner_destroy(poot_vision_runner *runner); /* NULL-safe; unloads */
/* Runs the tower on `pixels` (f32 [3, S, S]) into out_rows (f32 [rows,
 * text_hidden]). The executor's statuses. */
POOT_MUST_USE poot_status poot_vision_runner_encode(poot_vision_runner *runner, const float *pixels,
                                                    float *out_rows);
/* Entries the runner has added (1 after the first encode, for tests). */
uint32_t poot_vision_runner_entries(const poot_vision_runner *runner);

/* ------------------------------------------------------------- the prompt */

/* Expands every image token of `ids` to `rows` copies of it, as LLaVA's
 * processor expands "<image>" in the text: out_ids (poot_malloc'd; the
 * caller frees) and out_count; out_first[i] (may be NULL; poot_malloc'd)
 * receives the index of image i's first row, with *out_images the number of
 * image tokens found. INVALID_ARGUMENT; OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_vision_expand_prompt(const poot_vision_config *config,
                                                    const poot_token *ids, size_t count,
                                                    poot_token **out_ids, size_t *out_count,
                                                    size_t **out_first, size_t *out_images);

#ifdef __cplusplus
}
#endif

#endif /* POOT_LLM_VISION_H */
