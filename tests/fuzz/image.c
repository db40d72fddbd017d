/* libFuzzer target: the image entry (src/llm/vision/image.c: PNG, JPEG and
 * WebP through libpng, libjpeg-turbo and libwebp, converted to RGB) on
 * arbitrary bytes, then the processors' resize of whatever decodes. */
#include <stdint.h>
#include <string.h>

#include "poot/llm/vision.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  poot_image img;
  poot_status s = poot_image_decode(data, size, "fuzz", &img);
  if (s) {
    if (img.rgb || img.width || img.height) __builtin_trap(); /* nothing held on failure */
    poot_status_free(s);
    return 0;
  }
  if (img.width < 1 || img.height < 1 || !img.rgb) __builtin_trap();
  /* Keep the resize small: the decoded size is attacker-chosen. */
  if ((uint64_t)img.width * (uint64_t)img.height <= (1u << 16)) {
    poot_image out;
    s = poot_image_resize_bicubic(&img, 7, 5, &out);
    if (s) __builtin_trap();
    poot_image_deinit(&out);
  }
  poot_image_deinit(&img);
  return 0;
}
