/* image.c — PNG, JPEG and WebP files → 8-bit RGB, as the Hugging Face image
 * processors see them: Pillow's decoding, then transformers' convert_rgb
 * (docs/vision.md "Decoding").
 *
 * The decoders are the packaged libraries (libpng, libjpeg-turbo, libwebp's
 * demux API); what this file adds is the conversion to RGB that the Hugging
 * Face processors apply (transformers' convert_rgb over Pillow's modes): an
 * image with alpha (RGBA, LA, a palette or gray image with tRNS) is
 * composited onto white exactly as Image.paste does it; gray is replicated;
 * 16-bit samples keep their high byte except 16-bit gray, which Pillow reads
 * as a 16-bit integer image and clips to 255 on conversion. A WebP is
 * decoded through WebPAnimDecoder, which is what Pillow runs for every WebP
 * file (its first frame, blended onto a transparent canvas). */
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
/* jpeglib.h needs FILE and size_t first. */
#include <jpeglib.h>
/* jerror.h after jpeglib.h: the warning codes (JWRN_JPEG_EOF). */
#include <jerror.h>
#include <webp/decode.h>
#include <webp/demux.h>

#include "poot/llm/vision.h"

#define FMT(...) poot_status_make(POOT_FORMAT, __VA_ARGS__)

/* Pillow refuses an image of more than twice Image.MAX_IMAGE_PIXELS
 * (89,478,485) pixels as a decompression bomb; so does poot, before
 * allocating. */
#define MAX_PIXELS ((uint64_t)2 * 89478485)

static poot_status alloc_rgb(poot_image *img, uint64_t w, uint64_t h, const char *name) {
  if (w < 1 || h < 1 || w > 65535 || h > 65535 || w * h > MAX_PIXELS)
    return FMT(
        "%s: image size %llux%llu is out of range (1..65535 a side, at most %llu pixels: "
        "Pillow's decompression-bomb limit)",
        name, (unsigned long long)w, (unsigned long long)h, (unsigned long long)MAX_PIXELS);
  img->rgb = poot_malloc((size_t)(w * h * 3));
  if (!img->rgb)
    return poot_status_make(POOT_OUT_OF_MEMORY, "%s: %llux%llu RGB pixels", name,
                            (unsigned long long)w, (unsigned long long)h);
  img->width = (int32_t)w;
  img->height = (int32_t)h;
  return NULL;
}

void poot_image_deinit(poot_image *img) {
  if (!img) return;
  poot_free(img->rgb);
  img->rgb = NULL;
  img->width = img->height = 0;
}

/* transformers' convert_rgb: an image that is not RGB is converted to RGBA
 * and pasted with its alpha as the mask onto white (Image.paste's
 * paste_mask_RGBA: DIV255(out · (255 − a) + in · a) with out = 255), then
 * the alpha is dropped. An opaque pixel keeps its value exactly. */
static uint8_t on_white(uint8_t c, uint8_t a) {
  unsigned v = 255u * (255u - a) + (unsigned)c * a + 128u;
  return (uint8_t)(((v >> 8) + v) >> 8);
}

/* ------------------------------------------------------------------ PNG */

typedef struct png_src {
  const uint8_t *data;
  size_t size, off;
  char message[160];
  jmp_buf jump;
} png_src;

static void png_read_cb(png_structp p, png_bytep out, png_size_t n) {
  png_src *s = png_get_io_ptr(p);
  if (n > s->size - s->off) png_error(p, "the file ends inside the image data (truncated)");
  memcpy(out, s->data + s->off, n);
  s->off += n;
}

static void png_error_cb(png_structp p, png_const_charp msg) {
  png_src *s = png_get_error_ptr(p);
  snprintf(s->message, sizeof s->message, "%s", msg);
  longjmp(s->jump, 1);
}

static void png_warn_cb(png_structp p, png_const_charp msg) {
  (void)p;
  (void)msg;
}

/* Everything volatile across the longjmp lives in this struct. */
typedef struct png_job {
  png_structp png;
  png_infop info;
  uint8_t *pixels;
  png_bytep *rows;
} png_job;

static poot_status decode_png(const uint8_t *data, size_t size, const char *name, poot_image *img) {
  /* What changes between setjmp and a longjmp lives on the heap (automatic
   * variables would be indeterminate after the jump). */
  png_src *src = poot_calloc(1, sizeof *src);
  png_job *job = poot_calloc(1, sizeof *job);
  poot_status st = NULL;
  if (src && job) {
    src->data = data;
    src->size = size;
    job->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, src, png_error_cb, png_warn_cb);
    if (job->png) job->info = png_create_info_struct(job->png);
  }
  if (!src || !job || !job->png || !job->info) {
    if (job) png_destroy_read_struct(&job->png, NULL, NULL);
    poot_free(job);
    poot_free(src);
    return poot_status_make(POOT_OUT_OF_MEMORY, "%s: libpng state", name);
  }
  if (setjmp(src->jump)) {
    st = FMT("%s: not a readable PNG: %s", name, src->message);
    goto done;
  }
  png_set_read_fn(job->png, src, png_read_cb);
  png_set_user_limits(job->png, 65535, 65535);
  png_read_info(job->png, job->info);
  png_uint_32 w = png_get_image_width(job->png, job->info);
  png_uint_32 h = png_get_image_height(job->png, job->info);
  int depth = png_get_bit_depth(job->png, job->info);
  int ctype = png_get_color_type(job->png, job->info);
  /* Pillow reads 16-bit gray as a 16-bit integer image ("I;16") and clips it
   * to 255 when converting; every other 16-bit image keeps its high byte. */
  bool gray16 = depth == 16 && ctype == PNG_COLOR_TYPE_GRAY;
  if (ctype == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(job->png);
  if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(job->png);
  /* Pillow's RGBA conversion applies a gray image's tRNS color (a palette's
   * comes with png_set_palette_to_rgb); an RGB image's is never applied
   * (transformers leaves RGB images as they are). */
  if (ctype == PNG_COLOR_TYPE_GRAY && depth <= 8 &&
      png_get_valid(job->png, job->info, PNG_INFO_tRNS))
    png_set_tRNS_to_alpha(job->png);
  if (depth == 16 && !gray16) png_set_strip_16(job->png);
  if (gray16) png_set_swap(job->png); /* host-order 16-bit samples (little endian) */
  png_set_interlace_handling(job->png);
  png_read_update_info(job->png, job->info);
  int channels = png_get_channels(job->png, job->info);
  size_t rowbytes = png_get_rowbytes(job->png, job->info);
  /* Deflate expands at most 1032:1: a header claiming more pixel bytes than
   * the file could hold is truncated (refused before allocating them). */
  if ((uint64_t)rowbytes * h > (uint64_t)size * 1032 + 65536) {
    st = FMT("%s: not a readable PNG: %ux%u pixels cannot come from %zu bytes (truncated)", name,
             (unsigned)w, (unsigned)h, size);
    goto done;
  }
  if ((st = alloc_rgb(img, w, h, name))) goto done;
  job->pixels = poot_malloc(rowbytes * h);
  job->rows = poot_malloc(sizeof *job->rows * h);
  if (!job->pixels || !job->rows) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "%s: PNG rows", name);
    goto done;
  }
  for (png_uint_32 y = 0; y < h; y++) job->rows[y] = job->pixels + rowbytes * y;
  png_read_image(job->png, job->rows);
  for (png_uint_32 y = 0; y < h; y++) {
    const uint8_t *r = job->rows[y];
    uint8_t *o = img->rgb + (size_t)y * w * 3;
    for (png_uint_32 x = 0; x < w; x++, o += 3) {
      if (gray16) {
        unsigned v = (unsigned)r[2 * x] | ((unsigned)r[2 * x + 1] << 8);
        o[0] = o[1] = o[2] = (uint8_t)(v > 255 ? 255 : v);
      } else if (channels <= 2) {
        const uint8_t *px = r + x * (size_t)channels;
        o[0] = o[1] = o[2] = channels == 2 ? on_white(px[0], px[1]) : px[0];
      } else {
        const uint8_t *px = r + x * (size_t)channels;
        for (int c = 0; c < 3; c++) o[c] = channels == 4 ? on_white(px[c], px[3]) : px[c];
      }
    }
  }
done:
  png_destroy_read_struct(&job->png, &job->info, NULL);
  poot_free(job->rows);
  poot_free(job->pixels);
  poot_free(job);
  poot_free(src);
  if (st) poot_image_deinit(img);
  return st;
}

/* ----------------------------------------------------------------- JPEG */

typedef struct jpeg_err {
  struct jpeg_error_mgr mgr;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
} jpeg_err;

static void jpeg_exit_cb(j_common_ptr c) {
  jpeg_err *e = (jpeg_err *)c->err;
  c->err->format_message(c, e->message);
  longjmp(e->jump, 1);
}

static void jpeg_quiet_cb(j_common_ptr c, int level) {
  /* Warnings (a corrupt but decodable stream) are not fatal, as in Pillow,
   * except running out of data: Pillow refuses a truncated image ("image
   * file is truncated") where libjpeg would pad it with gray. */
  if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF) c->err->error_exit(c);
}

typedef struct jpeg_job {
  struct jpeg_decompress_struct cinfo;
  bool created;
  uint8_t *row;
} jpeg_job;

static poot_status decode_jpeg(const uint8_t *data, size_t size, const char *name,
                               poot_image *img) {
  /* On the heap for the same reason as the PNG decoder's state. */
  jpeg_err *err = poot_calloc(1, sizeof *err);
  jpeg_job *job = poot_calloc(1, sizeof *job);
  poot_status st = NULL;
  if (!err || !job) {
    poot_free(err);
    poot_free(job);
    return poot_status_make(POOT_OUT_OF_MEMORY, "%s: libjpeg state", name);
  }
  job->cinfo.err = jpeg_std_error(&err->mgr);
  err->mgr.error_exit = jpeg_exit_cb;
  err->mgr.emit_message = jpeg_quiet_cb;
  if (setjmp(err->jump)) {
    st = FMT("%s: not a readable JPEG: %s", name, err->message);
    goto done;
  }
  jpeg_create_decompress(&job->cinfo);
  job->created = true;
  if (size > (size_t)ULONG_MAX) {
    st = FMT("%s: JPEG too large", name);
    goto done;
  }
  jpeg_mem_src(&job->cinfo, data, (unsigned long)size);
  jpeg_read_header(&job->cinfo, TRUE);
  J_COLOR_SPACE cs = job->cinfo.jpeg_color_space;
  if (cs == JCS_CMYK || cs == JCS_YCCK) {
    st = poot_status_make(POOT_UNSUPPORTED, "%s: CMYK JPEG images are not supported", name);
    goto done;
  }
  /* libjpeg's defaults, as Pillow decodes: islow IDCT, fancy upsampling. */
  job->cinfo.out_color_space = cs == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
  if (job->cinfo.image_width > 65535 || job->cinfo.image_height > 65535) {
    st = FMT("%s: image size %ux%u is out of range", name, job->cinfo.image_width,
             job->cinfo.image_height);
    goto done;
  }
  /* A JPEG spends at least a few bits on every 8 × 8 block (about 1:400 at
   * most for 4:2:0): a header claiming far more pixels than the file could
   * code is truncated, refused before allocating them. */
  if ((uint64_t)job->cinfo.image_width * job->cinfo.image_height * 3 >
      (uint64_t)size * 8192 + (1u << 24)) {
    st = FMT("%s: not a readable JPEG: %ux%u pixels cannot come from %zu bytes (truncated)", name,
             job->cinfo.image_width, job->cinfo.image_height, size);
    goto done;
  }
  jpeg_start_decompress(&job->cinfo);
  if ((st = alloc_rgb(img, job->cinfo.output_width, job->cinfo.output_height, name))) goto done;
  int nc = job->cinfo.output_components;
  job->row = poot_malloc((size_t)job->cinfo.output_width * (size_t)nc);
  if (!job->row) {
    st = poot_status_make(POOT_OUT_OF_MEMORY, "%s: JPEG row", name);
    goto done;
  }
  while (job->cinfo.output_scanline < job->cinfo.output_height) {
    JDIMENSION y = job->cinfo.output_scanline;
    JSAMPROW rp = job->row;
    if (jpeg_read_scanlines(&job->cinfo, &rp, 1) != 1) {
      st = FMT("%s: not a readable JPEG: the data ends early", name);
      goto done;
    }
    uint8_t *o = img->rgb + (size_t)y * job->cinfo.output_width * 3;
    for (JDIMENSION x = 0; x < job->cinfo.output_width; x++, o += 3) {
      if (nc == 1)
        o[0] = o[1] = o[2] = job->row[x];
      else
        memcpy(o, job->row + (size_t)x * (size_t)nc, 3);
    }
  }
  jpeg_finish_decompress(&job->cinfo);
done:
  if (job->created) jpeg_destroy_decompress(&job->cinfo);
  poot_free(job->row);
  poot_free(job);
  poot_free(err);
  if (st) poot_image_deinit(img);
  return st;
}

/* ----------------------------------------------------------------- WebP */

static poot_status decode_webp(const uint8_t *data, size_t size, const char *name,
                               poot_image *img) {
  int w0 = 0, h0 = 0;
  if (!WebPGetInfo(data, size, &w0, &h0))
    return FMT("%s: not a readable WebP (bad or truncated header)", name);
  if ((uint64_t)w0 * (uint64_t)h0 > MAX_PIXELS)
    return FMT("%s: image size %dx%d is more than %llu pixels (Pillow's decompression-bomb limit)",
               name, w0, h0, (unsigned long long)MAX_PIXELS);
  WebPData wd = {.bytes = data, .size = size};
  WebPAnimDecoderOptions opt;
  if (!WebPAnimDecoderOptionsInit(&opt))
    return poot_status_make(POOT_INTERNAL, "%s: libwebp version mismatch", name);
  opt.color_mode = MODE_RGBA;
  opt.use_threads = 0;
  WebPAnimDecoder *dec = WebPAnimDecoderNew(&wd, &opt);
  if (!dec) return FMT("%s: not a readable WebP (bad or truncated header)", name);
  poot_status st = NULL;
  WebPAnimInfo info;
  uint8_t *frame = NULL;
  int ts = 0;
  if (!WebPAnimDecoderGetInfo(dec, &info)) {
    st = FMT("%s: not a readable WebP", name);
  } else if (!WebPAnimDecoderGetNext(dec, &frame, &ts) || !frame) {
    st = FMT("%s: not a readable WebP (the first frame does not decode)", name);
  } else if (!(st = alloc_rgb(img, info.canvas_width, info.canvas_height, name))) {
    size_t n = (size_t)info.canvas_width * info.canvas_height;
    for (size_t i = 0; i < n; i++)
      for (int c = 0; c < 3; c++)
        img->rgb[3 * i + c] = on_white(frame[4 * i + c], frame[4 * i + 3]);
  }
  WebPAnimDecoderDelete(dec);
  return st;
}

/* ---------------------------------------------------------------- entry */

poot_status poot_image_decode(const void *data, size_t size, const char *name,
                              poot_image *out_image) {
  memset(out_image, 0, sizeof *out_image);
  if (!name) name = "image";
  if (!data && size) return poot_status_make(POOT_INVALID_ARGUMENT, "%s: NULL data", name);
  const uint8_t *d = data;
  if (size >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0)
    return decode_png(d, size, name, out_image);
  if (size >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF)
    return decode_jpeg(d, size, name, out_image);
  if (size >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0)
    return decode_webp(d, size, name, out_image);
  return FMT("%s: not a PNG, JPEG or WebP image (%zu bytes; unknown signature)", name, size);
}

poot_status poot_image_load(const char *path, poot_image *out_image) {
  memset(out_image, 0, sizeof *out_image);
  if (!path) return poot_status_make(POOT_INVALID_ARGUMENT, "poot_image_load: NULL path");
  char *data = NULL;
  size_t size = 0;
  POOT_TRY(poot_file_read_all(path, &data, &size));
  poot_status st = poot_image_decode(data, size, path, out_image);
  poot_free(data);
  return st;
}
