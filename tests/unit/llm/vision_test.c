/* vision_test.c — the vision library's parts that need no model
 * (src/llm/vision, docs/vision.md): decoding the committed test images and
 * refusing broken ones (FORMAT naming the file), Pillow's BICUBIC resize bit
 * for bit (expected bytes computed once by Pillow 13's Image.resize), the
 * processor configs, the prompt's image-token expansion, and a text-only
 * model refusing images. Runs under the sanitizers (label unit); the model
 * checks against transformers are tests/unit/llm/vision_check.py. */
#include "poot_test.h"

#include <stdlib.h>
#include <unistd.h>

#include "poot/llm/vision.h"

static void image_path(const char *name, char *buf, size_t size) {
  snprintf(buf, size, "%s/tests/data/vision/images/%s", poot_test_source_dir(), name);
}

static void test_decode_committed(void **state) {
  (void)state;
  static const struct {
    const char *name;
    int w, h;
  } cases[] = {{"gradient.png", 45, 31}, {"shapes-rgba.png", 24, 40}, {"gray.png", 50, 50},
               {"palette.png", 33, 20},  {"photo.jpg", 64, 48},       {"lossy.webp", 37, 29}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char p[2048];
    image_path(cases[i].name, p, sizeof p);
    poot_image img;
    POOT_ASSERT_OK(poot_image_load(p, &img));
    assert_int_equal(img.width, cases[i].w);
    assert_int_equal(img.height, cases[i].h);
    poot_image_deinit(&img);
  }
  /* gray.png is replicated into the three channels; the RGBA one drops alpha. */
  char p[2048];
  image_path("gray.png", p, sizeof p);
  poot_image img;
  POOT_ASSERT_OK(poot_image_load(p, &img));
  for (int i = 0; i < img.width * img.height; i++) {
    assert_int_equal(img.rgb[3 * i], img.rgb[3 * i + 1]);
    assert_int_equal(img.rgb[3 * i], img.rgb[3 * i + 2]);
  }
  poot_image_deinit(&img);
}

static void test_decode_broken(void **state) {
  (void)state;
  static const char *const names[] = {"gradient.png", "photo.jpg", "lossy.webp"};
  for (size_t i = 0; i < 3; i++) {
    char p[2048];
    image_path(names[i], p, sizeof p);
    char *data = NULL;
    size_t size = 0;
    POOT_ASSERT_OK(poot_file_read_all(p, &data, &size));
    poot_image img = {.width = 7};
    POOT_ASSERT_STATUS_MSG(poot_image_decode(data, size / 2, "half-image", &img), POOT_FORMAT,
                           "half-image");
    assert_null(img.rgb);
    assert_int_equal(img.width, 0);
    POOT_ASSERT_STATUS_MSG(poot_image_decode(data, 9, "nine-bytes", &img), POOT_FORMAT,
                           "nine-bytes");
    poot_free(data);
  }
  poot_image img;
  POOT_ASSERT_STATUS_MSG(poot_image_decode("hello, world", 12, "a-text", &img), POOT_FORMAT,
                         "not a PNG, JPEG or WebP");
  POOT_ASSERT_STATUS(poot_image_load("/nonexistent/poot-image.png", &img), POOT_NOT_FOUND);
}

/* Pillow's Image.resize(..., BICUBIC) of a 5 x 4 image. */
static void test_resize_like_pillow(void **state) {
  (void)state;
  uint8_t src[60];
  for (int i = 0; i < 60; i++) src[i] = (uint8_t)(i * 37 % 256);
  poot_image in = {.width = 5, .height = 4, .rgb = src}, out;
  static const uint8_t down[] = {72,  113, 137, 114, 89,  125, 154, 122, 95,
                                 151, 135, 124, 127, 141, 120, 107, 130, 124};
  POOT_ASSERT_OK(poot_image_resize_bicubic(&in, 3, 2, &out));
  assert_memory_equal(out.rgb, down, sizeof down);
  poot_image_deinit(&out);
  static const uint8_t up_head[] = {0, 28, 65, 51, 106, 143, 152, 115, 152, 236, 0, 37};
  static const uint8_t up_tail[] = {172, 188, 233, 43, 153, 190, 55, 56, 93, 145};
  POOT_ASSERT_OK(poot_image_resize_bicubic(&in, 7, 6, &out));
  assert_memory_equal(out.rgb, up_head, sizeof up_head);
  assert_memory_equal(out.rgb + 7 * 6 * 3 - sizeof up_tail, up_tail, sizeof up_tail);
  poot_image_deinit(&out);
  POOT_ASSERT_OK(poot_image_resize_bicubic(&in, 5, 4, &out)); /* a copy */
  assert_memory_equal(out.rgb, src, sizeof src);
  poot_image_deinit(&out);
  POOT_ASSERT_STATUS(poot_image_resize_bicubic(&in, 0, 4, &out), POOT_INVALID_ARGUMENT);
}

static const char *write_tmp(const char *text) {
  static char path[256];
  snprintf(path, sizeof path, "/tmp/poot-vision-test-%d.json", (int)getpid());
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

static void test_preprocess_config(void **state) {
  (void)state;
  poot_vision_preprocess p;
  const char *path = write_tmp(
      "{\"image_processor_type\": \"CLIPImageProcessor\", \"size\": {\"shortest_edge\": 32},"
      " \"crop_size\": {\"height\": 32, \"width\": 32}, \"do_center_crop\": true,"
      " \"resample\": 3}");
  POOT_ASSERT_OK(poot_vision_preprocess_load(path, &p));
  assert_int_equal(p.resize, POOT_VISION_RESIZE_SHORTEST_EDGE);
  assert_int_equal(p.out_width, 32);
  assert_true(p.normalize && p.rescale);
  assert_true(p.mean[0] == 0.48145466f); /* CLIPImageProcessor's default */
  path = write_tmp(
      "{\"image_processor_type\": \"SiglipImageProcessor\", \"size\": {\"height\": "
      "48, \"width\": 40}, \"resample\": 2}");
  POOT_ASSERT_STATUS_MSG(poot_vision_preprocess_load(path, &p), POOT_UNSUPPORTED, "resample");
  path = write_tmp("{\"image_processor_type\": \"LlavaNextImageProcessor\"}");
  POOT_ASSERT_STATUS_MSG(poot_vision_preprocess_load(path, &p), POOT_UNSUPPORTED,
                         "LlavaNextImageProcessor");
  path = write_tmp(
      "{\"image_processor_type\": \"SiglipImageProcessor\", \"size\": {\"height\": "
      "48, \"width\": 40}}");
  POOT_ASSERT_OK(poot_vision_preprocess_load(path, &p));
  assert_int_equal(p.out_height, 48);
  assert_int_equal(p.out_width, 40);
  assert_true(p.std[2] == 0.5f);
  /* A 45 x 31 image to 40 x 48 pixels, channel-first. */
  char ip[2048];
  image_path("gradient.png", ip, sizeof ip);
  poot_image img;
  POOT_ASSERT_OK(poot_image_load(ip, &img));
  float *px = malloc(3 * 48 * 40 * sizeof *px);
  POOT_ASSERT_OK(poot_vision_preprocess_image(&p, &img, px));
  for (int i = 0; i < 3 * 48 * 40; i++) assert_true(px[i] >= -1.0f && px[i] <= 1.0f);
  free(px);
  poot_image_deinit(&img);
  remove(path);
}

static void test_expand_prompt(void **state) {
  (void)state;
  poot_vision_config c;
  memset(&c, 0, sizeof c);
  c.image_token_id = 9;
  c.rows = 3;
  const poot_token ids[] = {1, 9, 5, 9, 6};
  poot_token *out = NULL;
  size_t n = 0, images = 0, *first = NULL;
  POOT_ASSERT_OK(poot_vision_expand_prompt(&c, ids, 5, &out, &n, &first, &images));
  const poot_token want[] = {1, 9, 9, 9, 5, 9, 9, 9, 6};
  assert_int_equal(n, 9);
  assert_memory_equal(out, want, sizeof want);
  assert_int_equal(images, 2);
  assert_int_equal(first[0], 1);
  assert_int_equal(first[1], 5);
  poot_free(out);
  poot_free(first);
}

/* The bundled demo model has no vision tower. */
static void test_text_model_refuses(void **state) {
  (void)state;
  char p[2048];
  snprintf(p, sizeof p, "%s/models/poot-demo.gguf", poot_test_source_dir());
  FILE *f = fopen(p, "rb");
  if (!f) {
    printf("SKIP: models/poot-demo.gguf is absent\n");
    skip();
  }
  fclose(f);
  poot_model *m = NULL;
  POOT_ASSERT_OK(poot_model_open(p, NULL, &m));
  poot_vision *v = (poot_vision *)1;
  POOT_ASSERT_STATUS_MSG(poot_vision_open(m, p, &v), POOT_UNSUPPORTED, "has no vision tower");
  assert_null(v);
  poot_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_decode_committed),   cmocka_unit_test(test_decode_broken),
      cmocka_unit_test(test_resize_like_pillow), cmocka_unit_test(test_preprocess_config),
      cmocka_unit_test(test_expand_prompt),      cmocka_unit_test(test_text_model_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
