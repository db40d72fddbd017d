/* Several kernels at once: the cold start of a plan is the driver's
 * pipeline compiler (NVIDIA's takes 50–100 ms a kernel), and kernels are
 * independent, so kernels_create builds them on compile_threads threads.
 * Every call it makes is one poot__vk_kernel_create; what that touches is
 * safe on several threads: glslang compiles in parallel (src/kir/spirv.c),
 * vkCreateShaderModule, vkCreateDescriptorSetLayout, vkCreatePipelineLayout
 * and vkCreateComputePipelines need no external synchronization of the
 * device, and the VkPipelineCache is not created EXTERNALLY_SYNCHRONIZED,
 * so the driver synchronizes it. The device's counters take create_lock.
 * The calling thread waits, and says every 5 s how far the work is. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "vk_impl.h"

#define VK_COMPILE_NOTE_NS 5000000000ull

typedef struct compile_job {
  poot_device *device;
  const poot_kir_kernel *const *kirs;
  poot_device_kernel **out;
  poot_status *status; /* per kernel */
  uint32_t n;
  pthread_mutex_t lock;
  pthread_cond_t done_cv;
  uint32_t next; /* the next kernel to take */
  uint32_t done; /* kernels finished, made or failed */
  bool failed;   /* a kernel failed: take no more */
} compile_job;

static void *compile_worker(void *arg) {
  compile_job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    uint32_t i = j->failed ? j->n : j->next;
    if (i < j->n) j->next++;
    pthread_mutex_unlock(&j->lock);
    if (i >= j->n) return NULL;
    poot_status st = poot__vk_kernel_create(j->device, j->kirs[i], &j->out[i]);
    pthread_mutex_lock(&j->lock);
    j->status[i] = st;
    if (st) j->failed = true;
    j->done++;
    pthread_cond_signal(&j->done_cv);
    pthread_mutex_unlock(&j->lock);
  }
}

/* Waits until every kernel the workers take is finished, logging progress
 * every 5 s. */
static void compile_wait(compile_job *j, uint32_t threads) {
  uint64_t t0 = poot_time_ns(), next_note = VK_COMPILE_NOTE_NS;
  pthread_mutex_lock(&j->lock);
  while (j->done < (j->failed ? j->next : j->n)) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    (void)pthread_cond_timedwait(&j->done_cv, &j->lock, &ts);
    uint64_t spent = poot_time_ns() - t0;
    if (spent >= next_note && j->done < j->n) {
      poot_log(POOT_LOG_WARN, "still compiling for %s: %u of %u kernels done in %.1f s (%u threads)",
               j->device->caps.name, j->done, j->n, (double)spent * 1e-9, threads);
      next_note = spent + VK_COMPILE_NOTE_NS;
    }
  }
  pthread_mutex_unlock(&j->lock);
}

/* Runs the job on up to `want` threads; the calling thread does the work
 * itself when none can be started. */
static void compile_run(compile_job *j, uint32_t want) {
  pthread_t tid[16];
  uint32_t started = 0;
  if (want > 16) want = 16;
  for (; started < want; started++)
    if (pthread_create(&tid[started], NULL, compile_worker, j) != 0) break;
  if (started == 0) {
    (void)compile_worker(j);
    return;
  }
  compile_wait(j, started);
  for (uint32_t t = 0; t < started; t++) (void)pthread_join(tid[t], NULL);
}

poot_status poot__vk_kernels_create(poot_device *device, const poot_kir_kernel *const *kirs,
                                    uint32_t n, poot_device_kernel **out) {
  for (uint32_t i = 0; i < n; i++) out[i] = NULL;
  poot_vk_device *d = NULL;
  POOT_TRY(poot__vk_device_of(device, &d));
  /* The diagnostic stays one kernel after another: its last line names the
   * kernel a hung driver call is in, and its budget is a sum. */
  uint32_t threads = d->diag ? 1 : d->compile_threads;
  if (threads > n) threads = n;
  if (threads <= 1) {
    for (uint32_t i = 0; i < n; i++) {
      poot_status st = poot__vk_kernel_create(device, kirs[i], &out[i]);
      if (st) {
        for (uint32_t k = 0; k < i; k++) {
          poot__vk_kernel_destroy(device, out[k]);
          out[k] = NULL;
        }
        return st;
      }
    }
    return NULL;
  }
  compile_job j = {.device = device, .kirs = kirs, .out = out, .n = n};
  j.status = poot_calloc(n, sizeof *j.status);
  if (!j.status) return poot_status_make(POOT_OUT_OF_MEMORY, "vulkan: %u kernels", n);
  if (pthread_mutex_init(&j.lock, NULL) != 0) {
    poot_free(j.status);
    return poot_status_make(POOT_INTERNAL, "vulkan: compile lock: %s", strerror(errno));
  }
  if (pthread_cond_init(&j.done_cv, NULL) != 0) {
    pthread_mutex_destroy(&j.lock);
    poot_free(j.status);
    return poot_status_make(POOT_INTERNAL, "vulkan: compile condition: %s", strerror(errno));
  }
  compile_run(&j, threads);
  pthread_cond_destroy(&j.done_cv);
  pthread_mutex_destroy(&j.lock);
  /* The first failure in index order; the rest are dropped. */
  poot_status first = NULL;
  for (uint32_t i = 0; i < n; i++) {
    if (j.status[i] && !first)
      first = j.status[i];
    else if (j.status[i])
      poot_status_free(j.status[i]);
  }
  poot_free(j.status);
  if (first)
    for (uint32_t i = 0; i < n; i++) {
      if (out[i]) poot__vk_kernel_destroy(device, out[i]);
      out[i] = NULL;
    }
  return first;
}
