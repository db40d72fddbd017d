/* The runtime object (poot/runtime.h): a model, a device, the engine over
 * the device and the driver over both, made in stages and released in
 * reverse. */
#include "poot/runtime.h"

struct poot_runtime {
  poot_runtime_options options;
  poot_model *model;
  poot_device *device;
  poot_executor *executor;
  poot_driver *driver;
  poot_driver_options driver_options; /* the driver's, for poot_runtime_reopen_device */
};

poot_status poot_runtime_open(const poot_runtime_options *options, poot_runtime **out_runtime) {
  *out_runtime = NULL;
  if (!options || !options->model_path)
    return poot_status_make(POOT_INVALID_ARGUMENT, "the runtime needs a model path");
  poot_runtime *rt = poot_calloc(1, sizeof *rt);
  if (!rt) return poot_status_make(POOT_OUT_OF_MEMORY, "the runtime of %s", options->model_path);
  rt->options = *options;
  poot_model_open_options mo = {.tokenizer_path = options->tokenizer_path,
                                .skip_tokenizer = options->skip_tokenizer};
  poot_status st = poot_model_open(options->model_path, &mo, &rt->model);
  if (st) {
    poot_free(rt);
    return st;
  }
  *out_runtime = rt;
  return NULL;
}

poot_status poot_runtime_open_device(poot_runtime *runtime) {
  if (runtime->device)
    return poot_status_make(POOT_INVALID_ARGUMENT, "the runtime's device is already open");
  const char *spec = runtime->options.device ? runtime->options.device : "auto";
  POOT_TRY(poot_device_open(spec, runtime->options.device_options, &runtime->device));
  poot_status st = poot_engine_create(runtime->device, &runtime->executor);
  if (!st && (runtime->options.matmul_precision != POOT_MATMUL_HIGH || runtime->options.forms)) {
    poot_exec_target t = {.matmul_precision = runtime->options.matmul_precision,
                          .forms = runtime->options.forms};
    st = poot_exec_target_set(runtime->executor, &t);
    if (st) {
      poot_executor_destroy(runtime->executor);
      runtime->executor = NULL;
    }
  }
  if (st) {
    poot_device_destroy(runtime->device);
    runtime->device = NULL;
  }
  return st;
}

poot_status poot_runtime_create_driver(poot_runtime *runtime, const poot_driver_options *options) {
  if (runtime->driver)
    return poot_status_make(POOT_INVALID_ARGUMENT, "the runtime already has a driver");
  if (!runtime->device) POOT_TRY(poot_runtime_open_device(runtime));
  poot_driver_options o = options ? *options : runtime->options.driver;
  if (!o.program) o.program = runtime->options.model_path;
  runtime->driver_options = o;
  return poot_driver_create(runtime->executor, runtime->model, &o, &runtime->driver);
}

poot_status poot_runtime_reopen_device(poot_runtime *runtime) {
  bool had_driver = runtime->driver != NULL;
  poot_driver_destroy(runtime->driver);
  runtime->driver = NULL;
  poot_executor_destroy(runtime->executor);
  runtime->executor = NULL;
  poot_device_destroy(runtime->device);
  runtime->device = NULL;
  POOT_TRY(poot_runtime_open_device(runtime));
  if (!had_driver) return NULL;
  poot_driver_options o = runtime->driver_options;
  return poot_driver_create(runtime->executor, runtime->model, &o, &runtime->driver);
}

poot_status poot_runtime_create(const poot_runtime_options *options, poot_runtime **out_runtime) {
  *out_runtime = NULL;
  poot_runtime *rt = NULL;
  POOT_TRY(poot_runtime_open(options, &rt));
  poot_status st = poot_runtime_create_driver(rt, NULL);
  if (st) {
    poot_runtime_destroy(rt);
    return st;
  }
  *out_runtime = rt;
  return NULL;
}

void poot_runtime_destroy(poot_runtime *runtime) {
  if (!runtime) return;
  poot_driver_destroy(runtime->driver);
  poot_executor_destroy(runtime->executor);
  poot_device_destroy(runtime->device);
  poot_model_destroy(runtime->model);
  poot_free(runtime);
}

poot_model *poot_runtime_model(const poot_runtime *runtime) {
  return runtime->model;
}

poot_device *poot_runtime_device(const poot_runtime *runtime) {
  return runtime->device;
}

poot_executor *poot_runtime_executor(const poot_runtime *runtime) {
  return runtime->executor;
}

poot_driver *poot_runtime_driver(const poot_runtime *runtime) {
  return runtime->driver;
}

const poot_device_caps *poot_runtime_device_caps(const poot_runtime *runtime) {
  return runtime->device ? poot_device_caps_get(runtime->device) : NULL;
}
