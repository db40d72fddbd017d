/* poot/runtime.h — one runtime object over a model (docs/runtime.md).
 *
 * A runtime owns what a program needs to run one model on one device: the
 * opened model, the device, the engine over it and the generation driver.
 * Every tool that runs a model on a device, and the server, goes through it,
 * so the device is chosen (the first present of ptx, rocm, vulkan, wgpu, or
 * one named) and the objects are wired in one place.
 *
 * The parts are made in stages because a caller may need the model before
 * it can size the driver (the KV capacity follows the prompt's length and
 * the model's context length), and a benchmark times the stages apart:
 *
 *   poot_runtime_open          the model (and its tokenizer)
 *   poot_runtime_open_device   the device and the engine over it
 *   poot_runtime_create_driver the driver over the engine and the model
 *
 * poot_runtime_create runs the three in order. poot_runtime_destroy releases
 * whatever stages were made, in reverse order.
 *
 * Not thread safe: one runtime is used from one thread at a time (the
 * driver's rule). */
#ifndef POOT_RUNTIME_H
#define POOT_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "poot/base.h"
#include "poot/devices.h"
#include "poot/exec.h"
#include "poot/llm/driver.h"
#include "poot/llm/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct poot_runtime poot_runtime;

typedef struct poot_runtime_options {
  /* A GGUF file, a safetensors folder with config.json, or a llama2.c
   * checkpoint (required; borrowed, it must outlive the runtime). */
  const char *model_path;
  /* poot_model_open_options: the tokenizer file of a llama2.c checkpoint
   * or an override (NULL: the model's own); open without a tokenizer. */
  const char *tokenizer_path;
  bool skip_tokenizer;
  /* "auto" or NULL (the first present of ptx, rocm, vulkan, wgpu), a
   * backend name, or "backend:index" (poot_device_open). */
  const char *device;
  /* Options of poot_device_open (NULL: the device's defaults; borrowed). */
  const poot_device_open_options *device_options;
  /* Options of poot_driver_create; a NULL program becomes model_path. */
  poot_driver_options driver;
  /* The engine's poot_exec_target.matmul_precision (POOT_MATMUL_HIGH, the
   * default, or POOT_MATMUL_MEDIUM: docs/compiler.md "Numerics"). */
  poot_matmul_precision matmul_precision;
  /* The engine's poot_exec_target.forms (0: the compiler's defaults). */
  uint32_t forms;
} poot_runtime_options;

static inline poot_runtime_options poot_runtime_options_default(void) {
  poot_runtime_options o = {.model_path = NULL,
                            .tokenizer_path = NULL,
                            .skip_tokenizer = false,
                            .device = "auto",
                            .device_options = NULL,
                            .driver = poot_driver_options_default(),
                            .matmul_precision = POOT_MATMUL_HIGH,
                            .forms = 0};
  return o;
}

/* Opens the model of options->model_path (options copied; its strings are
 * borrowed). INVALID_ARGUMENT without a model path; the statuses of
 * poot_model_open (NOT_FOUND, IO, FORMAT, UNSUPPORTED, INVALID_ARGUMENT);
 * OUT_OF_MEMORY. */
POOT_MUST_USE poot_status poot_runtime_open(const poot_runtime_options *options,
                                            poot_runtime **out_runtime);

/* Opens the device of the options and creates the engine over it.
 * INVALID_ARGUMENT when it is already open or the backend name is unknown;
 * NO_DEVICE naming what was tried and why each is absent; the engine's
 * OUT_OF_MEMORY and POISONED. */
POOT_MUST_USE poot_status poot_runtime_open_device(poot_runtime *runtime);

/* Creates the driver over the engine and the model with `options` (NULL:
 * the runtime options' driver; a NULL program becomes the model path).
 * Opens the device first when it is not open. INVALID_ARGUMENT when a driver
 * exists; the statuses of poot_driver_create. */
POOT_MUST_USE poot_status poot_runtime_create_driver(poot_runtime *runtime,
                                                     const poot_driver_options *options);

/* poot_runtime_open, then poot_runtime_create_driver: a runtime ready to
 * generate. On failure nothing is left open. */
POOT_MUST_USE poot_status poot_runtime_create(const poot_runtime_options *options,
                                              poot_runtime **out_runtime);

/* After a fault that poisoned the device (POISONED, DEVICE_LOST, TIMEOUT):
 * releases the driver, the engine and the device, opens the device again (a
 * new device context) and, when there was a driver, creates it again with
 * the options it was made with. The model stays open. Borrowed pointers to
 * the old parts are invalid afterwards. The statuses of
 * poot_runtime_open_device and poot_driver_create; on failure the stages
 * not remade are NULL (a later call may try again). */
POOT_MUST_USE poot_status poot_runtime_reopen_device(poot_runtime *runtime);

/* Releases the driver, the engine, the device and the model. NULL-safe. */
void poot_runtime_destroy(poot_runtime *runtime);

/* Borrowed parts, valid until poot_runtime_destroy; NULL for a stage not
 * made yet. */
poot_model *poot_runtime_model(const poot_runtime *runtime);
poot_device *poot_runtime_device(const poot_runtime *runtime);
poot_executor *poot_runtime_executor(const poot_runtime *runtime);
poot_driver *poot_runtime_driver(const poot_runtime *runtime);
/* The open device's capabilities; NULL before poot_runtime_open_device. */
const poot_device_caps *poot_runtime_device_caps(const poot_runtime *runtime);

#ifdef __cplusplus
}
#endif

#endif
