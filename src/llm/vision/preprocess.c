/* preprocess.c — the Hugging Face image processors' arithmetic
 * (docs/vision.md "Preprocessing"): Pillow's BICUBIC resample, the center
 * crop, rescale and normalize of transformers' image_transforms, and the
 * reading of preprocessor_config.json. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "poot/llm/vision.h"

#define BAD(...) poot_status_make(POOT_INVALID_ARGUMENT, __VA_ARGS__)

/* ------------------------------------------------------- Pillow's resample */

/* Pillow (src/libImaging/Resample.c): the bicubic kernel with a = -0.5,
 * support 2, widened by the scale when downscaling (antialiasing). */
static double bicubic(double x) {
  const double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

#define PRECISION_BITS (32 - 8 - 2)

typedef struct coeffs {
  int ksize;
  int *bounds; /* [out][2]: first input index, count */
  int32_t *kk; /* [out][ksize] fixed point */
} coeffs;

/* precompute_coeffs and normalize_coeffs_8bpc of Pillow, in the same
 * floating-point order. */
static poot_status make_coeffs(int in_size, int out_size, coeffs *c) {
  double in0 = 0.0, in1 = (double)(float)in_size; /* the box is float */
  double scale = (in1 - in0) / out_size, filterscale = scale;
  if (filterscale < 1.0) filterscale = 1.0;
  double support = 2.0 * filterscale;
  int ksize = (int)ceil(support) * 2 + 1;
  double *kd = poot_malloc((size_t)out_size * (size_t)ksize * sizeof *kd);
  c->bounds = poot_malloc((size_t)out_size * 2 * sizeof *c->bounds);
  c->kk = poot_malloc((size_t)out_size * (size_t)ksize * sizeof *c->kk);
  c->ksize = ksize;
  if (!kd || !c->bounds || !c->kk) {
    poot_free(kd);
    return poot_status_make(POOT_OUT_OF_MEMORY, "resize: coefficients");
  }
  for (int xx = 0; xx < out_size; xx++) {
    double center = in0 + (xx + 0.5) * scale, ww = 0.0, ss = 1.0 / filterscale;
    int xmin = (int)(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = (int)(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double *k = &kd[(size_t)xx * (size_t)ksize];
    int x;
    for (x = 0; x < xmax; x++) {
      double w = bicubic((x + xmin - center + 0.5) * ss);
      k[x] = w;
      ww += w;
    }
    for (x = 0; x < xmax; x++)
      if (ww != 0.0) k[x] /= ww;
    for (; x < ksize; x++) k[x] = 0;
    c->bounds[xx * 2] = xmin;
    c->bounds[xx * 2 + 1] = xmax;
  }
  for (size_t i = 0; i < (size_t)out_size * (size_t)ksize; i++)
    c->kk[i] = kd[i] < 0 ? (int32_t)(-0.5 + kd[i] * (1 << PRECISION_BITS))
                         : (int32_t)(0.5 + kd[i] * (1 << PRECISION_BITS));
  poot_free(kd);
  return NULL;
}

static void free_coeffs(coeffs *c) {
  poot_free(c->bounds);
  poot_free(c->kk);
}

static uint8_t clip8(int32_t in) {
  if (in >= (int32_t)(1u << PRECISION_BITS << 8)) return 255;
  if (in <= 0) return 0;
  return (uint8_t)(in >> PRECISION_BITS);
}

/* One pass along x (rows stride 3) or y. src is sw × sh; dst dw × dh. */
static void pass_h(const uint8_t *src, int sw, int y0, uint8_t *dst, int dw, int dh,
                   const coeffs *c) {
  for (int yy = 0; yy < dh; yy++) {
    const uint8_t *row = src + (size_t)(yy + y0) * (size_t)sw * 3;
    for (int xx = 0; xx < dw; xx++) {
      int xmin = c->bounds[xx * 2], xmax = c->bounds[xx * 2 + 1];
      const int32_t *k = &c->kk[(size_t)xx * (size_t)c->ksize];
      for (int ch = 0; ch < 3; ch++) {
        int32_t ss = 1 << (PRECISION_BITS - 1);
        for (int x = 0; x < xmax; x++) ss += row[(size_t)(x + xmin) * 3 + ch] * k[x];
        dst[((size_t)yy * (size_t)dw + (size_t)xx) * 3 + ch] = clip8(ss);
      }
    }
  }
}

static void pass_v(const uint8_t *src, int w, uint8_t *dst, int dh, const coeffs *c, int shift) {
  for (int yy = 0; yy < dh; yy++) {
    int ymin = c->bounds[yy * 2] - shift, ymax = c->bounds[yy * 2 + 1];
    const int32_t *k = &c->kk[(size_t)yy * (size_t)c->ksize];
    for (int xx = 0; xx < w; xx++)
      for (int ch = 0; ch < 3; ch++) {
        int32_t ss = 1 << (PRECISION_BITS - 1);
        for (int y = 0; y < ymax; y++)
          ss += src[((size_t)(y + ymin) * (size_t)w + (size_t)xx) * 3 + ch] * k[y];
        dst[((size_t)yy * (size_t)w + (size_t)xx) * 3 + ch] = clip8(ss);
      }
  }
}

poot_status poot_image_resize_bicubic(const poot_image *img, int32_t width, int32_t height,
                                      poot_image *out) {
  memset(out, 0, sizeof *out);
  if (!img || !img->rgb || img->width < 1 || img->height < 1 || width < 1 || height < 1 ||
      width > 65535 || height > 65535)
    return BAD("resize: empty image or size (%dx%d to %dx%d)", img ? img->width : 0,
               img ? img->height : 0, width, height);
  int sw = img->width, sh = img->height;
  out->rgb = poot_malloc((size_t)width * (size_t)height * 3);
  if (!out->rgb) return poot_status_make(POOT_OUT_OF_MEMORY, "resize: %dx%d", width, height);
  out->width = width;
  out->height = height;
  if (sw == width && sh == height) { /* Image.resize returns a copy */
    memcpy(out->rgb, img->rgb, (size_t)width * (size_t)height * 3);
    return NULL;
  }
  coeffs ch = {0}, cv = {0};
  uint8_t *tmp = NULL;
  poot_status st = make_coeffs(sw, width, &ch);
  if (!st) st = make_coeffs(sh, height, &cv);
  if (st) goto done;
  bool need_h = width != sw, need_v = height != sh;
  /* The horizontal pass covers only the rows the vertical pass reads. */
  int yfirst = cv.bounds[0], ylast = cv.bounds[height * 2 - 2] + cv.bounds[height * 2 - 1];
  if (need_h && need_v) {
    int th = ylast - yfirst;
    tmp = poot_malloc((size_t)width * (size_t)th * 3);
    if (!tmp) {
      st = poot_status_make(POOT_OUT_OF_MEMORY, "resize: temporary rows");
      goto done;
    }
    pass_h(img->rgb, sw, yfirst, tmp, width, th, &ch);
    pass_v(tmp, width, out->rgb, height, &cv, yfirst);
  } else if (need_h) {
    pass_h(img->rgb, sw, 0, out->rgb, width, height, &ch);
  } else {
    pass_v(img->rgb, width, out->rgb, height, &cv, 0);
  }
done:
  poot_free(tmp);
  free_coeffs(&ch);
  free_coeffs(&cv);
  if (st) poot_image_deinit(out);
  return st;
}

/* ------------------------------------------------------ the processor steps */

/* transformers' get_resize_output_image_size(default_to_square=False). */
static void shortest_edge_size(int w, int h, int size, int *ow, int *oh) {
  int shrt = w <= h ? w : h, lng = w <= h ? h : w;
  int new_long = (int)((double)size * (double)lng / (double)shrt);
  if (w <= h) {
    *ow = size;
    *oh = new_long;
  } else {
    *ow = new_long;
    *oh = size;
  }
}

static int floordiv2(int v) {
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

/* transformers' center_crop of an RGB image (zero padding when smaller). */
static poot_status crop(const poot_image *in, int cw, int chh, poot_image *out) {
  memset(out, 0, sizeof *out);
  out->rgb = poot_calloc((size_t)cw * (size_t)chh, 3);
  if (!out->rgb) return poot_status_make(POOT_OUT_OF_MEMORY, "center crop");
  out->width = cw;
  out->height = chh;
  int top = floordiv2(in->height - chh), left = floordiv2(in->width - cw);
  for (int y = 0; y < chh; y++)
    for (int x = 0; x < cw; x++) {
      int sy = top + y, sx = left + x;
      if (sy < 0 || sx < 0 || sy >= in->height || sx >= in->width) continue;
      memcpy(out->rgb + ((size_t)y * (size_t)cw + (size_t)x) * 3,
             in->rgb + ((size_t)sy * (size_t)in->width + (size_t)sx) * 3, 3);
    }
  return NULL;
}

poot_status poot_vision_preprocess_image(const poot_vision_preprocess *p, const poot_image *image,
                                         float *out) {
  if (!p || !image || !image->rgb || !out) return BAD("preprocess: NULL argument");
  poot_image a = {0}, b = {0};
  const poot_image *cur = image;
  poot_status st = NULL;
  if (p->resize != POOT_VISION_RESIZE_NONE) {
    int w, h;
    if (p->resize == POOT_VISION_RESIZE_SHORTEST_EDGE)
      shortest_edge_size(image->width, image->height, p->shortest_edge, &w, &h);
    else {
      w = p->resize_width;
      h = p->resize_height;
    }
    if ((st = poot_image_resize_bicubic(cur, w, h, &a))) goto done;
    cur = &a;
  }
  if (p->center_crop) {
    if ((st = crop(cur, p->crop_width, p->crop_height, &b))) goto done;
    cur = &b;
  }
  if (cur->width != p->out_width || cur->height != p->out_height) {
    st = BAD("preprocess: the steps give %dx%d, the config says %dx%d", cur->width, cur->height,
             p->out_width, p->out_height);
    goto done;
  }
  size_t plane = (size_t)cur->width * (size_t)cur->height;
  for (size_t i = 0; i < plane; i++)
    for (int c = 0; c < 3; c++) {
      uint8_t u = cur->rgb[i * 3 + (size_t)c];
      /* rescale: image.astype(float64) * scale, then float32. */
      float v = p->rescale ? (float)((double)u * p->rescale_factor) : (float)u;
      /* normalize: (image - mean) / std in float32. */
      if (p->normalize) {
        float d = v - p->mean[c];
        v = d / p->std[c];
      }
      out[(size_t)c * plane + i] = v;
    }
done:
  poot_image_deinit(&a);
  poot_image_deinit(&b);
  return st;
}

/* ---------------------------------------------------- preprocessor_config */

static const poot_json *member(const poot_json *o, const char *k) {
  return poot_json_get(o, k);
}

static poot_status get_bool(const poot_json *o, const char *k, bool dflt, bool *out,
                            const char *path) {
  const poot_json *v = member(o, k);
  *out = dflt;
  if (!v || v->type == POOT_JSON_NULL) return NULL;
  if (v->type != POOT_JSON_BOOL)
    return poot_status_make(POOT_FORMAT, "%s: '%s' is not true or false", path, k);
  *out = v->boolean;
  return NULL;
}

static poot_status get_size(const poot_json *o, const char *k, int32_t *out, const char *path) {
  const poot_json *v = member(o, k);
  if (!v) return NULL;
  if (v->type != POOT_JSON_NUMBER || v->number < 1 || v->number > 16384 ||
      v->number != floor(v->number))
    return poot_status_make(POOT_FORMAT, "%s: '%s' is not a size between 1 and 16384", path, k);
  *out = (int32_t)v->number;
  return NULL;
}

static poot_status get_triple(const poot_json *o, const char *k, float *out, bool positive,
                              const char *path) {
  const poot_json *v = member(o, k);
  if (!v) return NULL;
  if (v->type == POOT_JSON_NUMBER) {
    out[0] = out[1] = out[2] = (float)v->number;
  } else if (v->type == POOT_JSON_ARRAY && v->len == 3) {
    for (int i = 0; i < 3; i++) {
      if (v->items[i]->type != POOT_JSON_NUMBER)
        return poot_status_make(POOT_FORMAT, "%s: '%s'[%d] is not a number", path, k, i);
      out[i] = (float)v->items[i]->number;
    }
  } else {
    return poot_status_make(POOT_FORMAT, "%s: '%s' is not a number or a list of 3", path, k);
  }
  for (int i = 0; i < 3; i++)
    if (!isfinite(out[i]) || (positive && !(out[i] > 0)))
      return poot_status_make(POOT_FORMAT, "%s: '%s'[%d] is %g", path, k, i, (double)out[i]);
  return NULL;
}

static poot_status read_preprocess(const poot_json *r, const char *path,
                                   poot_vision_preprocess *p) {
  const poot_json *ty = member(r, "image_processor_type");
  if (!ty || ty->type != POOT_JSON_STRING)
    return poot_status_make(POOT_FORMAT, "%s: no 'image_processor_type'", path);
  bool clip = strncmp(ty->str, "CLIPImageProcessor", 18) == 0;
  bool siglip = strncmp(ty->str, "SiglipImageProcessor", 20) == 0;
  if (!clip && !siglip)
    return poot_status_make(POOT_UNSUPPORTED,
                            "%s: image_processor_type '%s' is not supported "
                            "(CLIPImageProcessor and SiglipImageProcessor are)",
                            path, ty->str);
  const poot_json *rs = member(r, "resample");
  if (rs && !(rs->type == POOT_JSON_NUMBER && rs->number == 3))
    return poot_status_make(POOT_UNSUPPORTED,
                            "%s: 'resample' is not 3 (BICUBIC, the only filter poot implements)",
                            path);
  bool do_resize, do_crop, conv;
  POOT_TRY(get_bool(r, "do_resize", true, &do_resize, path));
  POOT_TRY(get_bool(r, "do_center_crop", clip, &do_crop, path));
  POOT_TRY(get_bool(r, "do_rescale", true, &p->rescale, path));
  POOT_TRY(get_bool(r, "do_normalize", true, &p->normalize, path));
  POOT_TRY(get_bool(r, "do_convert_rgb", true, &conv, path));
  (void)conv; /* images are always converted to RGB (a 4-channel tensor cannot be normalized) */
  p->rescale_factor = 1.0 / 255.0;
  const poot_json *rf = member(r, "rescale_factor");
  if (rf) {
    if (rf->type != POOT_JSON_NUMBER || !(rf->number > 0))
      return poot_status_make(POOT_FORMAT, "%s: 'rescale_factor' is not a positive number", path);
    p->rescale_factor = rf->number;
  }
  /* The processors' class defaults: OpenAI CLIP's mean/std, SigLIP's 0.5. */
  static const float clip_mean[3] = {0.48145466f, 0.4578275f, 0.40821073f};
  static const float clip_std[3] = {0.26862954f, 0.26130258f, 0.27577711f};
  for (int i = 0; i < 3; i++) {
    p->mean[i] = clip ? clip_mean[i] : 0.5f;
    p->std[i] = clip ? clip_std[i] : 0.5f;
  }
  POOT_TRY(get_triple(r, "image_mean", p->mean, false, path));
  POOT_TRY(get_triple(r, "image_std", p->std, true, path));
  const poot_json *size = member(r, "size");
  if (do_resize) {
    if (!size || size->type != POOT_JSON_OBJECT)
      return poot_status_make(POOT_FORMAT, "%s: 'size' is not an object", path);
    if (member(size, "shortest_edge")) {
      p->resize = POOT_VISION_RESIZE_SHORTEST_EDGE;
      POOT_TRY(get_size(size, "shortest_edge", &p->shortest_edge, path));
      if (member(size, "longest_edge"))
        return poot_status_make(POOT_UNSUPPORTED, "%s: 'size.longest_edge' is not supported", path);
    } else if (member(size, "height") && member(size, "width")) {
      p->resize = POOT_VISION_RESIZE_EXACT;
      POOT_TRY(get_size(size, "height", &p->resize_height, path));
      POOT_TRY(get_size(size, "width", &p->resize_width, path));
    } else {
      return poot_status_make(POOT_FORMAT,
                              "%s: 'size' has neither shortest_edge nor height and width", path);
    }
  }
  if (do_crop) {
    const poot_json *cs = member(r, "crop_size");
    p->center_crop = true;
    if (cs && cs->type == POOT_JSON_OBJECT) {
      POOT_TRY(get_size(cs, "height", &p->crop_height, path));
      POOT_TRY(get_size(cs, "width", &p->crop_width, path));
    } else if (cs && cs->type == POOT_JSON_NUMBER) {
      POOT_TRY(get_size(r, "crop_size", &p->crop_height, path));
      p->crop_width = p->crop_height;
    }
    if (p->crop_height < 1 || p->crop_width < 1)
      return poot_status_make(POOT_FORMAT, "%s: do_center_crop without a crop_size", path);
    p->out_height = p->crop_height;
    p->out_width = p->crop_width;
  } else if (p->resize == POOT_VISION_RESIZE_EXACT) {
    p->out_height = p->resize_height;
    p->out_width = p->resize_width;
  } else {
    return poot_status_make(POOT_UNSUPPORTED,
                            "%s: without a center crop or a fixed size the pixel tensor's shape "
                            "depends on the image (not supported)",
                            path);
  }
  return NULL;
}

poot_status poot_vision_preprocess_load(const char *path, poot_vision_preprocess *out) {
  memset(out, 0, sizeof *out);
  char *text = NULL;
  size_t size = 0;
  POOT_TRY(poot_file_read_all(path, &text, &size));
  poot_arena arena;
  poot_arena_init(&arena, 0);
  poot_json *root = NULL;
  poot_status st = poot_json_parse(&arena, text, size, NULL, &root);
  if (st)
    st = poot_status_annotate(st, "%s", path);
  else if (root->type != POOT_JSON_OBJECT)
    st = poot_status_make(POOT_FORMAT, "%s: not a JSON object", path);
  else
    st = read_preprocess(root, path, out);
  poot_arena_deinit(&arena);
  poot_free(text);
  if (st) memset(out, 0, sizeof *out);
  return st;
}
