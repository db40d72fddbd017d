/* Several kernels at once, for backends' kernels_create: the cold start of
 * a plan is the driver's compiler (NVIDIA's Vulkan pipeline compiler takes
 * 50–100 ms a kernel, the CUDA driver's PTX JIT 20–600 ms), and kernels are
 * independent, so they are built on several threads. The backend's create
 * function must be safe on several threads at once (each backend says why
 * its is). The calling thread waits, and says every 5 s how far the work
 * is. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "poot/exec.h"

#define BUILD_NOTE_NS 5000000000ull
#define BUILD_MAX_THREADS 16

typedef struct build_job {
  poot_device *device;
  poot_device_kernel_create_fn create;
  const poot_kir_kernel *const *kirs;
  poot_device_kernel **out;
  poot_status *status; /* per kernel */
  uint32_t n;
  pthread_mutex_t lock;
  pthread_cond_t done_cv;
  uint32_t next; /* the next kernel to take */
  uint32_t done; /* kernels finished, made or failed */
  bool failed;   /* a kernel failed: take no more */
} build_job;

uint32_t poot_device_build_threads(uint32_t asked) {
  if (asked) return asked > BUILD_MAX_THREADS ? BUILD_MAX_THREADS : asked;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1) return 1;
  return cpus > BUILD_MAX_THREADS ? BUILD_MAX_THREADS : (uint32_t)cpus;
}

static void *build_worker(void *arg) {
  build_job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    uint32_t i = j->failed ? j->n : j->next;
    if (i < j->n) j->next++;
    pthread_mutex_unlock(&j->lock);
    if (i >= j->n) return NULL;
    poot_status st = j->create(j->device, j->kirs[i], &j->out[i]);
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
static void build_wait(build_job *j, uint32_t threads) {
  uint64_t t0 = poot_time_ns(), next_note = BUILD_NOTE_NS;
  pthread_mutex_lock(&j->lock);
  while (j->done < (j->failed ? j->next : j->n)) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    (void)pthread_cond_timedwait(&j->done_cv, &j->lock, &ts);
    uint64_t spent = poot_time_ns() - t0;
    if (spent >= next_note && j->done < j->n) {
      poot_log(POOT_LOG_WARN,
               "still compiling for %s: %u of %u kernels done in %.1f s (%u threads)",
               j->device->caps.name, j->done, j->n, (double)spent * 1e-9, threads);
      next_note = spent + BUILD_NOTE_NS;
    }
  }
  pthread_mutex_unlock(&j->lock);
}

/* Runs the job on up to `want` threads; the calling thread does the work
 * itself when none can be started. */
static void build_run(build_job *j, uint32_t want) {
  pthread_t tid[BUILD_MAX_THREADS];
  uint32_t started = 0;
  if (want > BUILD_MAX_THREADS) want = BUILD_MAX_THREADS;
  for (; started < want; started++)
    if (pthread_create(&tid[started], NULL, build_worker, j) != 0) break;
  if (started == 0) {
    (void)build_worker(j);
    return;
  }
  build_wait(j, started);
  for (uint32_t t = 0; t < started; t++) (void)pthread_join(tid[t], NULL);
}

/* One after another: the first failure ends it. */
static poot_status build_serial(poot_device *device, poot_device_kernel_create_fn create,
                                const poot_kir_kernel *const *kirs, uint32_t n,
                                poot_device_kernel **out) {
  for (uint32_t i = 0; i < n; i++) {
    poot_status st = create(device, kirs[i], &out[i]);
    if (st) {
      for (uint32_t k = 0; k < i; k++) {
        device->vt->kernel_destroy(device, out[k]);
        out[k] = NULL;
      }
      return st;
    }
  }
  return NULL;
}

poot_status poot_device_kernels_build(poot_device *device, poot_device_kernel_create_fn create,
                                      const poot_kir_kernel *const *kirs, uint32_t n,
                                      poot_device_kernel **out, uint32_t threads) {
  for (uint32_t i = 0; i < n; i++) out[i] = NULL;
  if (threads > n) threads = n;
  if (threads <= 1) return build_serial(device, create, kirs, n, out);
  build_job j = {.device = device, .create = create, .kirs = kirs, .out = out, .n = n};
  j.status = poot_calloc(n, sizeof *j.status);
  if (!j.status)
    return poot_status_make(POOT_OUT_OF_MEMORY, "%s: %u kernels", device->caps.name, n);
  if (pthread_mutex_init(&j.lock, NULL) != 0) {
    poot_free(j.status);
    return poot_status_make(POOT_INTERNAL, "%s: compile lock: %s", device->caps.name,
                            strerror(errno));
  }
  if (pthread_cond_init(&j.done_cv, NULL) != 0) {
    pthread_mutex_destroy(&j.lock);
    poot_free(j.status);
    return poot_status_make(POOT_INTERNAL, "%s: compile condition: %s", device->caps.name,
                            strerror(errno));
  }
  build_run(&j, threads);
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
      if (out[i]) device->vt->kernel_destroy(device, out[i]);
      out[i] = NULL;
    }
  return first;
}
