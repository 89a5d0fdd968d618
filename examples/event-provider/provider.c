/*
 * libmpit_event_provider.so: a test provider of the MPI-4 event API (MPI-4.1 section 16.3.8)
 * for MPICH, loaded ahead of MPICH's library with LD_PRELOAD.
 *
 * MPICH defines every MPI_ function as a weak alias of its PMPI_ twin, so the definitions
 * below win the dynamic symbol lookup over MPICH's and reach MPICH through PMPI_:
 *   - every MPI_T_event_* and MPI_T_source_* function, MPI_T_category_get_num_events and
 *     MPI_T_category_get_events: implemented here, following section 16.3.8;
 *   - MPI_T_init_thread / MPI_T_finalize: wrappers that count MPI_T's initialisations;
 *   - MPI_Send, MPI_Ssend, MPI_Isend, MPI_Issend, MPI_Recv, MPI_Irecv, MPI_Sendrecv and the
 *     completion functions (MPI_Wait/Test and their -all/-any/-some forms, MPI_Request_free):
 *     wrappers that raise events for real point-to-point traffic.
 * Every other MPI and MPI_T function is MPICH's. The control API is in mpit_provider.h;
 * README.md describes the rules and how each is implemented.
 *
 * Concurrency. Raising takes no lock (except an ORDERED source's): it walks the event type's
 * list of registrations (RCU style), reads each callback table under a seqlock, and announces
 * an epoch in its thread's record so that a freed registration is finished (free callback,
 * memory) only when no raise that may hold it runs any more (epoch-based reclamation).
 * Locks, none of them held while a user callback runs except src_lock:
 *   g_lock           serialises the registration-handle functions (writers of the lists and
 *                    callback tables); owns the list of live handles and the info labels.
 *   g_retire_lock    the list of freed registrations waiting to be finished.
 *   src_lock[s]      recursive mutex of an ORDERED source, held across the delivery of one
 *                    event so that callbacks of that source run in timestamp order.
 *   g_req_lock       the table of receive requests awaiting completion.
 * Order: src_lock -> g_lock -> g_retire_lock; g_req_lock is never held with another lock.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "mpit_provider.h"

/* The structs behind the event handles: the tags MPICH's mpi.h names, or the MPI-5 ABI's
 * (mpi_abi.h, built with mpicc_abi or mpicc -mpi-abi), whose handles are this provider's too. */
#if defined(MPI_ABI_VERSION)
#define REG_TAG MPI_T_event_registration_t
#define INST_TAG MPI_T_event_instance_t
#else
#define REG_TAG MPIR_T_event_registration_s
#define INST_TAG MPIR_T_event_instance_s
#endif

#define API __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

#define NSRC MPIT_PROVIDER_NUM_SOURCES
#define NEVT MPIT_PROVIDER_NUM_EVENTS
#define NLEVELS 4
#define MAX_ELEMS 4
#define COUNT_MAX ((MPI_Count)(~(unsigned long long)0 >> 1))
#define INFO_KEY_LABEL "mpit_provider_label"

/* ------------------------------------------------------------------------------------------ */
/* Static description of the sources and event types                                          */

/* The time-stamp counter, a clock of the provider's own (not a clockid of the kernel). */
#define CLOCK_TSC ((clockid_t) -100)

typedef struct {
    const char *name;
    const char *desc;
    MPI_T_source_order ordering;
    clockid_t clock;
    const char *clock_name;
    int on_demand; /* MPI_T_source_get_timestamp supported */
} source_t;

static const source_t sources[NSRC] = {
    {"monotonic",
     "CLOCK_MONOTONIC in nanoseconds; the point-to-point wrappers raise here; events of this "
     "source are delivered one at a time in timestamp order",
     MPI_T_SOURCE_ORDERED, CLOCK_MONOTONIC, "CLOCK_MONOTONIC", 1},
    {"realtime",
     "CLOCK_REALTIME in nanoseconds since the epoch; raises from several threads are "
     "delivered concurrently",
     MPI_T_SOURCE_UNORDERED, CLOCK_REALTIME, "CLOCK_REALTIME", 1},
    {"thread_cputime",
     "CPU time of the raising thread (CLOCK_THREAD_CPUTIME_ID) in nanoseconds; no ad-hoc "
     "timestamps (MPI_T_source_get_timestamp: MPI_T_ERR_NOT_SUPPORTED)",
     MPI_T_SOURCE_UNORDERED, CLOCK_THREAD_CPUTIME_ID, "CLOCK_THREAD_CPUTIME_ID", 0},
    {"tsc",
     "the CPU's time-stamp counter (rdtsc), ticks per second calibrated against "
     "CLOCK_MONOTONIC_RAW; delivered one at a time in timestamp order like monotonic",
     MPI_T_SOURCE_ORDERED, CLOCK_TSC, "TSC", 1},
};

typedef struct {
    const char *name;
    const char *desc;
    int verbosity;
    int bind;
    int n;
    MPI_Datatype dt[MAX_ELEMS];
    MPI_Aint disp[MAX_ELEMS];
    size_t size[MAX_ELEMS];
} evtype_t;

#define P2P_ELEMS                                                                            \
    4, {MPI_INT, MPI_INT, MPI_COUNT, MPI_INT},                                               \
        {offsetof(struct mpit_provider_p2p, peer), offsetof(struct mpit_provider_p2p, tag),  \
         offsetof(struct mpit_provider_p2p, bytes), offsetof(struct mpit_provider_p2p, comm)}, \
        {sizeof(int), sizeof(int), sizeof(MPI_Count), sizeof(int)}
#define COMM_ELEMS                                                                           \
    3, {MPI_INT, MPI_INT, MPI_COUNT},                                                        \
        {offsetof(struct mpit_provider_comm_p2p, peer),                                      \
         offsetof(struct mpit_provider_comm_p2p, tag),                                       \
         offsetof(struct mpit_provider_comm_p2p, bytes)},                                    \
        {sizeof(int), sizeof(int), sizeof(MPI_Count)}

static const evtype_t evtypes[NEVT] = {
    {"unexp_message_enqueued",
     "a message was waiting in the unexpected queue when a matching receive was posted "
     "(observed then); elements: source rank, tag, bytes, MPI_Comm_c2f of the communicator",
     MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, P2P_ELEMS},
    {"unexp_message_dequeued",
     "a message left the unexpected queue, matched by a receive; elements: source rank, tag, "
     "bytes, MPI_Comm_c2f of the communicator",
     MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, P2P_ELEMS},
    {"p2p_send",
     "a point-to-point send was started (MPI_Send, MPI_Ssend, MPI_Isend, MPI_Issend, "
     "MPI_Sendrecv); elements: destination rank, tag, bytes, MPI_Comm_c2f of the communicator",
     MPI_T_VERBOSITY_USER_DETAIL, MPI_T_BIND_NO_OBJECT, P2P_ELEMS},
    {"p2p_recv",
     "a point-to-point receive completed (MPI_Recv, MPI_Sendrecv, MPI_Irecv when completed); "
     "elements: source rank, tag, bytes, MPI_Comm_c2f of the communicator",
     MPI_T_VERBOSITY_USER_DETAIL, MPI_T_BIND_NO_OBJECT, P2P_ELEMS},
    {"comm_send",
     "a point-to-point send was started on the bound communicator; elements: destination "
     "rank, tag, bytes",
     MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_BIND_MPI_COMM, COMM_ELEMS},
    {"comm_recv",
     "a point-to-point receive completed on the bound communicator; elements: source rank, "
     "tag, bytes",
     MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_BIND_MPI_COMM, COMM_ELEMS},
    {"provider_test",
     "raised by the provider's control API only (tests, benchmarks); elements: sequence "
     "number, value, id, flag",
     MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_BIND_NO_OBJECT, 4,
     {MPI_UINT64_T, MPI_DOUBLE, MPI_INT, MPI_CHAR},
     {offsetof(struct mpit_provider_test, seq), offsetof(struct mpit_provider_test, value),
      offsetof(struct mpit_provider_test, id), offsetof(struct mpit_provider_test, flag)},
     {sizeof(uint64_t), sizeof(double), sizeof(int), sizeof(char)}},
    {"provider_empty", "raised by the provider's control API only; no elements",
     MPI_T_VERBOSITY_MPIDEV_ALL, MPI_T_BIND_NO_OBJECT, 0, {0}, {0}, {0}},
};

static const char *const level_names[NLEVELS] = {
    "MPI_T_CB_REQUIRE_NONE", "MPI_T_CB_REQUIRE_MPI_RESTRICTED", "MPI_T_CB_REQUIRE_THREAD_SAFE",
    "MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE"};


/* ------------------------------------------------------------------------------------------ */
/* Dynamic state                                                                               */

typedef struct {
    _Atomic(MPI_T_event_cb_function *) fn;
    _Atomic(void *) user_data;
    char *label; /* hint mpit_provider_label; under g_lock */
} cbslot_t;

struct REG_TAG {
    int type;
    int bound;
    MPI_Comm comm;    /* the bound communicator's handle value (immutable) */
    atomic_uint seq;  /* seqlock over cb[].fn, cb[].user_data and dropped */
    cbslot_t cb[NLEVELS];
    _Atomic(MPI_T_event_dropped_cb_function *) dropped;
    _Atomic MPI_Count pending[NSRC]; /* unreported drops per source */
    atomic_int freed;
    MPI_T_event_free_cb_function *free_cb;
    void *free_user_data;
    unsigned long retire_epoch;
    char *label;                                    /* under g_lock */
    struct REG_TAG *live_next;  /* live list, under g_lock */
    struct REG_TAG *live_prev;
    _Atomic(struct REG_TAG *) next; /* the type's list (read without locks) */
    struct REG_TAG *retired_next;   /* under g_retire_lock */
};
typedef struct REG_TAG reg_t;

struct INST_TAG {
    int type;
    int source;
    MPI_Count timestamp;
    const void *data;
};
typedef struct INST_TAG inst_t;

typedef struct {
    _Atomic(reg_t *) head; /* registrations in allocation order; changed under g_lock */
    atomic_int nregs;
} evstate_t;

static evstate_t evs[NEVT];

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static reg_t *g_live;
static pthread_mutex_t src_lock[NSRC] = {
    PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
    PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP};
static MPI_Count src_last[NSRC]; /* last timestamp of an ORDERED source, under src_lock */

static atomic_int g_mpit_init; /* MPI_T_init_thread minus MPI_T_finalize */
static atomic_int g_live_regs;
static atomic_int g_activity_ctx = 1; /* MPI_T_CB_REQUIRE_MPI_RESTRICTED */
static atomic_int g_drop_scope = MPIT_PROVIDER_DROPS_PER_SOURCE;
static atomic_int g_pending_regs[NSRC]; /* registrations with unreported drops, per source */
static atomic_int g_category = -2;      /* index of MPICH's "CH4" category; -2 unknown */

/* The event instance whose callback runs on this thread (innermost), and the context of the
 * callback this thread is in (-1: none). */
static TLS inst_t *tls_inst;
static TLS int tls_ctx = -1;

static inline int initialized(void)
{
    return atomic_load_explicit(&g_mpit_init, memory_order_acquire) > 0;
}

/* Safety levels are indices 0..3 here (none < MPI restricted < thread safe < async-signal
 * safe); the header's constants are 0..3 in MPICH's mpi.h but 0x00, 0x03, 0x0F, 0x3F in the
 * MPI-5 ABI's, so every MPI_T_cb_safety crossing the API is translated. */
static const MPI_T_cb_safety safety_of[NLEVELS] = {
    MPI_T_CB_REQUIRE_NONE, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_T_CB_REQUIRE_THREAD_SAFE,
    MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE};

/* The level of a constant; -1 for a value that is none of them. */
static inline int level_of(MPI_T_cb_safety s)
{
    for (int l = 0; l < NLEVELS; l++)
        if (safety_of[l] == s)
            return l;
    return -1;
}

static inline int valid_level(int l)
{
    return l >= 0 && l < NLEVELS;
}

static inline MPI_Count clock_ticks(clockid_t c)
{
    struct timespec ts;
#if defined(__x86_64__)
    if (c == CLOCK_TSC)
        return (MPI_Count) (__rdtsc() & (~0ULL >> 1));
#endif
    clock_gettime(c == CLOCK_TSC ? CLOCK_MONOTONIC : c, &ts);
    return (MPI_Count) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static MPI_Count g_tsc_hz;
static pthread_once_t g_tsc_once = PTHREAD_ONCE_INIT;

/* Ticks per second of the time-stamp counter: counted over 5 ms of CLOCK_MONOTONIC_RAW. */
static void calibrate_tsc(void)
{
#if defined(__x86_64__)
    struct timespec a, b, pause = {0, 5000000};
    clock_gettime(CLOCK_MONOTONIC_RAW, &a);
    unsigned long long t0 = __rdtsc();
    nanosleep(&pause, NULL);
    clock_gettime(CLOCK_MONOTONIC_RAW, &b);
    unsigned long long t1 = __rdtsc();
    double ns = (double) (b.tv_sec - a.tv_sec) * 1e9 + (double) (b.tv_nsec - a.tv_nsec);
    g_tsc_hz = (MPI_Count) ((double) (t1 - t0) * 1e9 / ns);
#else
    g_tsc_hz = 1000000000;
#endif
}

/* Ticks per second of source `src`. */
static MPI_Count source_tps(int src)
{
    if (sources[src].clock != CLOCK_TSC)
        return 1000000000;
    pthread_once(&g_tsc_once, calibrate_tsc);
    return g_tsc_hz;
}

/* The standard's convention for returning strings (section 16.3.3): at most *len - 1
 * characters and a NUL; *len returns the string's length plus one; a NULL buffer or a zero
 * length only returns the length; a NULL length ignores both. */
static void string_out(const char *src, char *dst, int *len)
{
    if (len == NULL)
        return;
    size_t n = strlen(src);
    if (dst != NULL && *len > 0) {
        size_t m = n < (size_t) (*len - 1) ? n : (size_t) (*len - 1);
        memcpy(dst, src, m);
        dst[m] = '\0';
    }
    *len = (int) n + 1;
}

/* A new info object holding the given pairs (NULL values skipped). MPI-4.0 lets MPI_Info_*
 * be called before MPI_Init and after MPI_Finalize; MPICH 4.0.2 and 5.0.2 do (measured). */
static int new_info(MPI_Info *out, const char *const *kv, int npairs)
{
    MPI_Info info;
    if (PMPI_Info_create(&info) != MPI_SUCCESS) {
        *out = MPI_INFO_NULL;
        return MPI_T_ERR_MEMORY;
    }
    for (int i = 0; i < npairs; i++)
        if (kv[2 * i + 1] != NULL)
            PMPI_Info_set(info, kv[2 * i], kv[2 * i + 1]);
    *out = info;
    return MPI_SUCCESS;
}

/* The value of the hint `key` in info (a malloc'd string), or NULL. */
static char *info_value(MPI_Info info, const char *key)
{
    if (info == MPI_INFO_NULL)
        return NULL;
    char buf[MPI_MAX_INFO_VAL + 1];
    int len = (int) sizeof buf, flag = 0;
    if (PMPI_Info_get_string(info, key, &len, buf, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    buf[sizeof buf - 1] = '\0';
    return strdup(buf);
}

static int ch4_category(void)
{
    int c = atomic_load(&g_category);
    if (c == -2) {
        if (PMPI_T_category_get_index("CH4", &c) != MPI_SUCCESS)
            c = -1;
        atomic_store(&g_category, c);
    }
    return c;
}

/* ------------------------------------------------------------------------------------------ */
/* Per-thread records: epoch announcements for reclamation, and the counters                   */
/*                                                                                             */
/* Raises read the registration lists without locks (RCU style). A raise announces the global  */
/* epoch in its thread's record for its whole duration (callbacks included; nested raises keep */
/* the outer announcement). MPI_T_event_handle_free unlinks the registration, then retires it */
/* at epoch E (and advances the epoch); it is finished (free callback, then memory released)   */
/* once no thread announces an epoch <= E: no raise that could have seen it is still running. */
/* Whoever ends the last such raise (or the free itself, when none runs) finishes it.          */

typedef struct thr_rec {
    atomic_ulong epoch; /* 0: not raising */
    atomic_int in_use;
    atomic_llong invoked, dropped, reports, frees; /* written by the owner only */
    struct thr_rec *next;
} thr_rec_t;

static _Atomic(thr_rec_t *) g_threads;
static atomic_ulong g_epoch = 1;
static pthread_mutex_t g_retire_lock = PTHREAD_MUTEX_INITIALIZER;
static reg_t *g_retired;
static atomic_int g_nretired;
static pthread_key_t g_rec_key;
static pthread_once_t g_rec_once = PTHREAD_ONCE_INIT;
static long long st_base[4]; /* counters at the last reset */

static TLS thr_rec_t *tls_rec;
static TLS int tls_depth;

static void rec_release(void *p)
{
    thr_rec_t *r = p;
    atomic_store(&r->epoch, 0);
    atomic_store(&r->in_use, 0);
}

static void rec_key_init(void)
{
    pthread_key_create(&g_rec_key, rec_release);
}

/* This thread's record: a free one (of an exited thread) is reused, else a new one. */
static thr_rec_t *rec_get(void)
{
    if (tls_rec != NULL)
        return tls_rec;
    pthread_once(&g_rec_once, rec_key_init);
    thr_rec_t *r;
    for (r = atomic_load(&g_threads); r != NULL; r = r->next) {
        int zero = 0;
        if (atomic_compare_exchange_strong(&r->in_use, &zero, 1))
            break;
    }
    if (r == NULL) {
        r = calloc(1, sizeof *r);
        if (r == NULL)
            abort(); /* a few dozen bytes per thread */
        atomic_init(&r->in_use, 1);
        thr_rec_t *head = atomic_load(&g_threads);
        do
            r->next = head;
        while (!atomic_compare_exchange_weak(&g_threads, &head, r));
    }
    pthread_setspecific(g_rec_key, r);
    tls_rec = r;
    return r;
}

static inline void count(atomic_llong *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

static long long counter_sum(int which)
{
    long long s = 0;
    for (thr_rec_t *r = atomic_load(&g_threads); r != NULL; r = r->next) {
        atomic_llong *c[4] = {&r->invoked, &r->dropped, &r->reports, &r->frees};
        s += atomic_load_explicit(c[which], memory_order_relaxed);
    }
    return s;
}

static inline void read_enter(void)
{
    if (tls_depth++ == 0) {
        thr_rec_t *r = rec_get();
        /* seq_cst: the announcement is ordered before every list load of this raise */
        atomic_store(&r->epoch, atomic_load(&g_epoch));
    }
}

static void reclaim(int ctx);

static inline void read_exit(int ctx)
{
    if (--tls_depth == 0) {
        atomic_store_explicit(&tls_rec->epoch, 0, memory_order_release);
        if (atomic_load_explicit(&g_nretired, memory_order_relaxed) > 0)
            reclaim(ctx);
    }
}

/* Runs the free callback (in the context of the thread that finishes the registration) and
 * releases the registration. */
static void finish(reg_t *r, int ctx)
{
    if (r->free_cb != NULL) {
        inst_t *saved_inst = tls_inst;
        int saved_ctx = tls_ctx;
        tls_inst = NULL;
        tls_ctx = ctx;
        r->free_cb(r, safety_of[ctx], r->free_user_data);
        tls_inst = saved_inst;
        tls_ctx = saved_ctx;
        count(&rec_get()->frees);
    }
    for (int l = 0; l < NLEVELS; l++)
        free(r->cb[l].label);
    free(r->label);
    free(r);
    atomic_fetch_sub(&g_live_regs, 1);
}

/* Finishes every retired registration no running raise can still hold. */
static void reclaim(int ctx)
{
    pthread_mutex_lock(&g_retire_lock);
    unsigned long min = ~0UL;
    for (thr_rec_t *t = atomic_load(&g_threads); t != NULL; t = t->next) {
        unsigned long e = atomic_load(&t->epoch);
        if (e != 0 && e < min)
            min = e;
    }
    reg_t *done = NULL;
    for (reg_t **p = &g_retired; *p != NULL;) {
        reg_t *r = *p;
        if (r->retire_epoch < min) {
            *p = r->retired_next;
            r->retired_next = done;
            done = r;
            atomic_fetch_sub(&g_nretired, 1);
        } else {
            p = &r->retired_next;
        }
    }
    pthread_mutex_unlock(&g_retire_lock);
    while (done != NULL) {
        reg_t *next = done->retired_next;
        finish(done, ctx);
        done = next;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Registrations                                                                               */

/* Under g_lock: is r a live (allocated, not yet freed) registration handle? Compares
 * pointers only, so a stale or garbage handle is never dereferenced. */
static int live_locked(reg_t *r)
{
    if (r == NULL)
        return 0;
    for (reg_t *p = g_live; p != NULL; p = p->live_next)
        if (p == r)
            return 1;
    return 0;
}

static void pending_clear(reg_t *r)
{
    for (int s = 0; s < NSRC; s++)
        if (atomic_exchange(&r->pending[s], 0) > 0)
            atomic_fetch_sub(&g_pending_regs[s], 1);
}

/* Writers of the callback table (under g_lock, hence one at a time). */
static inline void seq_write_begin(reg_t *r)
{
    unsigned s = atomic_load_explicit(&r->seq, memory_order_relaxed);
    atomic_store_explicit(&r->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static inline void seq_write_end(reg_t *r)
{
    unsigned s = atomic_load_explicit(&r->seq, memory_order_relaxed);
    atomic_store_explicit(&r->seq, s + 1, memory_order_release);
}

typedef struct {
    MPI_T_event_cb_function *fn; /* NULL: no registered level is sufficient */
    void *user_data;
    MPI_T_event_dropped_cb_function *dropped;
} choice_t;

/* The selection rule: the callback with the lowest safety level that is valid in the context,
 * i.e. the first registered level >= ctx. A consistent snapshot of the table (seqlock). */
static inline choice_t choose(reg_t *r, int ctx)
{
    choice_t c;
    for (;;) {
        unsigned s1 = atomic_load_explicit(&r->seq, memory_order_acquire);
        if (s1 & 1)
            continue;
        c.fn = NULL;
        c.user_data = NULL;
        for (int l = ctx; l < NLEVELS; l++) {
            c.fn = atomic_load_explicit(&r->cb[l].fn, memory_order_relaxed);
            if (c.fn != NULL) {
                c.user_data = atomic_load_explicit(&r->cb[l].user_data, memory_order_relaxed);
                break;
            }
        }
        c.dropped = atomic_load_explicit(&r->dropped, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&r->seq, memory_order_relaxed) == s1)
            return c;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Raising events                                                                              */

static inline void call_dropped(MPI_T_event_dropped_cb_function *h, MPI_Count n, reg_t *r,
                                int src, int ctx, void *user_data)
{
    inst_t *saved_inst = tls_inst;
    int saved_ctx = tls_ctx;
    tls_inst = NULL;
    tls_ctx = ctx;
    h(n, r, src, safety_of[ctx], user_data);
    tls_inst = saved_inst;
    tls_ctx = saved_ctx;
    count(&tls_rec->reports);
}

/* Takes r's unreported drops of src (0: none). */
static inline MPI_Count take_pending(reg_t *r, int src)
{
    if (atomic_load_explicit(&r->pending[src], memory_order_relaxed) == 0)
        return 0;
    MPI_Count n = atomic_exchange(&r->pending[src], 0);
    if (n > 0)
        atomic_fetch_sub(&g_pending_regs[src], 1);
    return n;
}

/* MPIT_PROVIDER_DROPS_PER_SOURCE: reports, for every registration with unreported drops of
 * source src and a callback sufficient for ctx, its drops to its dropped handler. Inside a
 * read section. */
static void flush_drops(int src, int ctx)
{
    for (int t = 0; t < NEVT; t++) {
        for (reg_t *r = atomic_load(&evs[t].head); r != NULL; r = atomic_load(&r->next)) {
            if (atomic_load_explicit(&g_pending_regs[src], memory_order_acquire) == 0)
                return;
            if (atomic_load_explicit(&r->pending[src], memory_order_relaxed) == 0 ||
                atomic_load_explicit(&r->freed, memory_order_acquire))
                continue;
            choice_t c = choose(r, ctx);
            if (c.fn == NULL || c.dropped == NULL)
                continue; /* nothing sufficient for ctx: the report waits (section 16.3.8.5) */
            MPI_Count n = take_pending(r, src);
            if (n > 0)
                call_dropped(c.dropped, n, r, src, ctx, c.user_data);
        }
    }
}

/* Records a drop of source src for r when it has a dropped handler ("with no handler, no data
 * loss is recorded"), saturating at the largest MPI_Count. */
static void record_drop(reg_t *r, int src, MPI_T_event_dropped_cb_function *handler)
{
    count(&tls_rec->dropped);
    if (handler == NULL)
        return;
    MPI_Count c = atomic_load(&r->pending[src]);
    while (c < COUNT_MAX && !atomic_compare_exchange_weak(&r->pending[src], &c, c + 1))
        ;
    if (c == 0)
        atomic_fetch_add(&g_pending_regs[src], 1);
}

/* Raises one instance. Arguments already validated; ctx already includes the enclosing
 * callback's context. ts: the instance's timestamp, or -1 to take it at delivery. */
static void raise_one_at(int ev, int src, int ctx, const void *obj, const void *data,
                         MPI_Count ts)
{
    evstate_t *es = &evs[ev];
    if (atomic_load_explicit(&es->nregs, memory_order_relaxed) == 0 &&
        atomic_load_explicit(&g_pending_regs[src], memory_order_relaxed) == 0)
        return; /* nobody to deliver or report to */
    const int ordered = sources[src].ordering == MPI_T_SOURCE_ORDERED;
    read_enter();
    if (ordered)
        pthread_mutex_lock(&src_lock[src]);
    if (atomic_load_explicit(&g_pending_regs[src], memory_order_acquire) > 0 &&
        atomic_load_explicit(&g_drop_scope, memory_order_relaxed) ==
            MPIT_PROVIDER_DROPS_PER_SOURCE)
        flush_drops(src, ctx);

    const int bound = evtypes[ev].bind != MPI_T_BIND_NO_OBJECT;
    const MPI_Comm comm = bound ? *(const MPI_Comm *) obj : MPI_COMM_NULL;
    inst_t inst;
    inst.type = ev;
    inst.source = src;
    inst.data = data;
    inst.timestamp = ts; /* else taken when the first callback is found */
    int stamped = 0;
    inst_t *saved_inst = tls_inst;
    int saved_ctx = tls_ctx;
    for (reg_t *r = atomic_load(&es->head); r != NULL; r = atomic_load(&r->next)) {
        if (atomic_load_explicit(&r->freed, memory_order_acquire) || (bound && r->comm != comm))
            continue;
        choice_t c = choose(r, ctx);
        if (c.fn == NULL) {
            record_drop(r, src, c.dropped);
            continue;
        }
        if (!stamped) {
            stamped = 1;
            if (inst.timestamp < 0)
                inst.timestamp = clock_ticks(sources[src].clock);
            if (ordered) { /* strictly increasing in delivery order */
                if (inst.timestamp <= src_last[src])
                    inst.timestamp = src_last[src] + 1;
                src_last[src] = inst.timestamp;
            }
        }
        if (c.dropped != NULL) {
            MPI_Count n = take_pending(r, src);
            if (n > 0)
                call_dropped(c.dropped, n, r, src, ctx, c.user_data);
        }
        tls_inst = &inst;
        tls_ctx = ctx;
        c.fn(&inst, r, safety_of[ctx], c.user_data);
        tls_inst = saved_inst;
        tls_ctx = saved_ctx;
        count(&tls_rec->invoked);
    }
    if (ordered)
        pthread_mutex_unlock(&src_lock[src]);
    read_exit(ctx);
}

static void raise_one(int ev, int src, int ctx, const void *obj, const void *data)
{
    raise_one_at(ev, src, ctx, obj, data, -1);
}

static int raise_checked(int ev, int src, int ctx, const void *obj, const void *data,
                         size_t stride, long long n)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    if (ev < 0 || ev >= NEVT || src < 0 || src >= NSRC)
        return MPI_T_ERR_INVALID_INDEX;
    if (!valid_level(ctx) || n < 0 || (evtypes[ev].n > 0 && data == NULL) ||
        (evtypes[ev].bind != MPI_T_BIND_NO_OBJECT && obj == NULL))
        return MPI_T_ERR_INVALID;
    if (tls_ctx > ctx)
        ctx = tls_ctx; /* a raise from inside a callback is at least that callback's context */
    const char *d = data;
    for (long long i = 0; i < n; i++, d += stride)
        raise_one(ev, src, ctx, obj, d);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* The control API (mpit_provider.h)                                                           */

API int mpit_provider_abi_version(void)
{
    return MPIT_PROVIDER_ABI_VERSION;
}

API int mpit_provider_raise(int event_index, int source_index, const void *data)
{
    return raise_checked(event_index, source_index, 0, NULL, data, 0, 1);
}

API int mpit_provider_raise_at(int event_index, int source_index, MPI_T_cb_safety context,
                               const void *data)
{
    return raise_checked(event_index, source_index, level_of(context), NULL, data, 0, 1);
}

API int mpit_provider_raise_bound(int event_index, int source_index, MPI_T_cb_safety context,
                                  const void *obj_handle, const void *data)
{
    return raise_checked(event_index, source_index, level_of(context), obj_handle, data, 0, 1);
}

API int mpit_provider_raise_many(int event_index, int source_index, MPI_T_cb_safety context,
                                 const void *obj_handle, const void *data, size_t stride,
                                 long long count)
{
    return raise_checked(event_index, source_index, level_of(context), obj_handle, data,
                         stride, count);
}

API int mpit_provider_live_registrations(void)
{
    return atomic_load(&g_live_regs);
}

static long long counter(int which)
{
    pthread_mutex_lock(&g_retire_lock);
    long long v = counter_sum(which) - st_base[which];
    pthread_mutex_unlock(&g_retire_lock);
    return v;
}

API long long mpit_provider_callbacks_invoked(void)
{
    return counter(0);
}

API long long mpit_provider_events_dropped(void)
{
    return counter(1);
}

API long long mpit_provider_dropped_reports(void)
{
    return counter(2);
}

API long long mpit_provider_free_callbacks(void)
{
    return counter(3);
}

API void mpit_provider_reset_counters(void)
{
    pthread_mutex_lock(&g_retire_lock);
    for (int i = 0; i < 4; i++)
        st_base[i] = counter_sum(i);
    pthread_mutex_unlock(&g_retire_lock);
}

API int mpit_provider_set_activity_safety(MPI_T_cb_safety context)
{
    int level = level_of(context);
    if (!valid_level(level))
        return MPI_T_ERR_INVALID;
    atomic_store(&g_activity_ctx, level);
    return MPI_SUCCESS;
}

API int mpit_provider_set_drop_scope(int scope)
{
    if (scope != MPIT_PROVIDER_DROPS_PER_SOURCE && scope != MPIT_PROVIDER_DROPS_PER_REGISTRATION)
        return MPI_T_ERR_INVALID;
    atomic_store(&g_drop_scope, scope);
    return MPI_SUCCESS;
}

/* Deferred delivery: instances kept in a bounded buffer, their callbacks invoked later
 * (section 16.3.8.5: "An implementation is allowed to buffer such events and delay the
 * callback invocation"; what "cannot be buffered" is dropped). */
#define DEFER_DATA 32
typedef struct {
    int ev, src;
    MPI_Count ts;
    unsigned char data[DEFER_DATA];
} deferred_t;
static pthread_mutex_t g_defer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_deliver_lock = PTHREAD_MUTEX_INITIALIZER; /* one delivery at a time */
static deferred_t *g_deferred, *g_spare; /* g_defer_cap slots each; g_defer_len of g_deferred full */
static long long g_defer_cap, g_defer_len;

static size_t extent_of(int ev)
{
    size_t e = 0;
    for (int i = 0; i < evtypes[ev].n; i++)
        if ((size_t) evtypes[ev].disp[i] + evtypes[ev].size[i] > e)
            e = (size_t) evtypes[ev].disp[i] + evtypes[ev].size[i];
    return e;
}

/* An instance of ev from src that could not be buffered: dropped for every registration. */
static void drop_everywhere(int ev, int src)
{
    read_enter();
    for (reg_t *r = atomic_load(&evs[ev].head); r != NULL; r = atomic_load(&r->next)) {
        if (atomic_load_explicit(&r->freed, memory_order_acquire))
            continue;
        record_drop(r, src, choose(r, 0).dropped);
    }
    read_exit(0);
}

API int mpit_provider_set_buffer_capacity(long long n)
{
    if (n < 0 || tls_depth > 0)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&g_deliver_lock);
    pthread_mutex_lock(&g_defer_lock);
    int rc = MPI_SUCCESS;
    if (g_defer_len > 0) {
        rc = MPI_T_ERR_INVALID;
    } else {
        deferred_t *b = n > 0 ? calloc((size_t) n, sizeof *b) : NULL;
        deferred_t *spare = n > 0 ? calloc((size_t) n, sizeof *b) : NULL;
        if (n > 0 && (b == NULL || spare == NULL)) {
            free(b);
            free(spare);
            rc = MPI_T_ERR_OUT_OF_HANDLES;
        } else {
            free(g_deferred);
            free(g_spare);
            g_deferred = b;
            g_spare = spare;
            g_defer_cap = n;
        }
    }
    pthread_mutex_unlock(&g_defer_lock);
    pthread_mutex_unlock(&g_deliver_lock);
    return rc;
}

API int mpit_provider_defer_many(int event_index, int source_index, const void *data,
                                 size_t stride, long long count)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    if (event_index < 0 || event_index >= NEVT || source_index < 0 || source_index >= NSRC)
        return MPI_T_ERR_INVALID_INDEX;
    const size_t extent = extent_of(event_index);
    if (count < 0 || (extent > 0 && data == NULL) ||
        evtypes[event_index].bind != MPI_T_BIND_NO_OBJECT)
        return MPI_T_ERR_INVALID;
    const char *d = data;
    for (long long i = 0; i < count; i++, d += stride) {
        if (atomic_load_explicit(&evs[event_index].nregs, memory_order_relaxed) == 0)
            continue; /* nobody to deliver or report to */
        MPI_Count ts = clock_ticks(sources[source_index].clock);
        pthread_mutex_lock(&g_defer_lock);
        int kept = g_defer_len < g_defer_cap;
        if (kept) {
            deferred_t *e = &g_deferred[g_defer_len++];
            e->ev = event_index;
            e->src = source_index;
            e->ts = ts;
            if (extent > 0)
                memcpy(e->data, d, extent);
        }
        pthread_mutex_unlock(&g_defer_lock);
        if (!kept)
            drop_everywhere(event_index, source_index);
    }
    return MPI_SUCCESS;
}

API long long mpit_provider_deliver_deferred(void)
{
    /* Swapped with the spare under the lock, delivered outside it: callbacks may defer more. */
    if (tls_depth > 0)
        return -1; /* inside a callback: the buffer being delivered must stay */
    pthread_mutex_lock(&g_deliver_lock);
    pthread_mutex_lock(&g_defer_lock);
    deferred_t *b = g_deferred;
    long long n = g_defer_len;
    g_deferred = g_spare;
    g_spare = b;
    g_defer_len = 0;
    pthread_mutex_unlock(&g_defer_lock);
    const int ctx = tls_ctx > 0 ? tls_ctx : 0; /* -1 outside every callback */
    for (long long i = 0; i < n; i++)
        raise_one_at(b[i].ev, b[i].src, ctx, NULL, b[i].data, b[i].ts);
    pthread_mutex_unlock(&g_deliver_lock);
    return n;
}

/* ------------------------------------------------------------------------------------------ */
/* MPI_T initialisation                                                                        */

API int MPI_T_init_thread(int required, int *provided)
{
    int rc = PMPI_T_init_thread(required, provided);
    if (rc == MPI_SUCCESS)
        atomic_fetch_add(&g_mpit_init, 1);
    return rc;
}

API int MPI_T_finalize(void)
{
    int rc = PMPI_T_finalize();
    if (rc == MPI_SUCCESS) {
        int c = atomic_load(&g_mpit_init);
        while (c > 0 && !atomic_compare_exchange_weak(&g_mpit_init, &c, c - 1))
            ;
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Sources (section 16.3.8.1)                                                                  */

API int MPI_T_source_get_num(int *num_sources)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    if (num_sources == NULL)
        return MPI_T_ERR_INVALID;
    *num_sources = NSRC;
    return MPI_SUCCESS;
}

API int MPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc,
                              int *desc_len, MPI_T_source_order *ordering,
                              MPI_Count *ticks_per_second, MPI_Count *max_ticks, MPI_Info *info)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    if (source_index < 0 || source_index >= NSRC)
        return MPI_T_ERR_INVALID_INDEX;
    if (ordering == NULL || ticks_per_second == NULL || max_ticks == NULL)
        return MPI_T_ERR_INVALID;
    const source_t *s = &sources[source_index];
    if (info != NULL) {
        const char *kv[] = {"mpit_provider_clock", s->clock_name, "mpit_provider_timestamps",
                            s->on_demand ? "on_demand" : "not_supported"};
        int rc = new_info(info, kv, 2);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    string_out(s->name, name, name_len);
    string_out(s->desc, desc, desc_len);
    *ordering = s->ordering;
    *ticks_per_second = source_tps(source_index);
    *max_ticks = COUNT_MAX;
    return MPI_SUCCESS;
}

API int MPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    if (source_index < 0 || source_index >= NSRC)
        return MPI_T_ERR_INVALID_INDEX;
    if (timestamp == NULL)
        return MPI_T_ERR_INVALID;
    if (!sources[source_index].on_demand)
        return MPI_T_ERR_NOT_SUPPORTED;
    *timestamp = clock_ticks(sources[source_index].clock);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* Event type queries (section 16.3.8.3) and categories                                        */

API int MPI_T_event_get_num(int *num_events)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    if (num_events == NULL)
        return MPI_T_ERR_INVALID;
    *num_events = NEVT;
    return MPI_SUCCESS;
}

static const char *bind_name(int bind)
{
    return bind == MPI_T_BIND_MPI_COMM ? "MPI_T_BIND_MPI_COMM" : "MPI_T_BIND_NO_OBJECT";
}

API int MPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                             MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                             int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                             int *desc_len, int *bind)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    if (event_index < 0 || event_index >= NEVT)
        return MPI_T_ERR_INVALID_INDEX;
    if (num_elements != NULL && *num_elements < 0)
        return MPI_T_ERR_INVALID;
    const evtype_t *e = &evtypes[event_index];
    if (info != NULL) {
        const char *kv[] = {"mpit_provider_event", e->name, "mpit_provider_bind",
                            bind_name(e->bind)};
        int rc = new_info(info, kv, 2);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    string_out(e->name, name, name_len);
    if (verbosity != NULL)
        *verbosity = e->verbosity;
    if (num_elements != NULL) {
        int m = *num_elements < e->n ? *num_elements : e->n;
        for (int i = 0; i < m; i++) {
            if (array_of_datatypes != NULL)
                array_of_datatypes[i] = e->dt[i];
            if (array_of_displacements != NULL)
                array_of_displacements[i] = e->disp[i];
        }
        *num_elements = e->n;
    }
    if (enumtype != NULL)
        *enumtype = MPI_T_ENUM_NULL;
    string_out(e->desc, desc, desc_len);
    if (bind != NULL)
        *bind = e->bind;
    return MPI_SUCCESS;
}

API int MPI_T_event_get_index(const char *name, int *event_index)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    if (name == NULL || event_index == NULL)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < NEVT; i++)
        if (strcmp(name, evtypes[i].name) == 0) {
            *event_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

/* Every event type belongs to MPICH's "CH4" category (where MPICH puts its own RECVQ events). */
static int category_check(int cat_index)
{
    int n = 0;
    int rc = PMPI_T_category_get_num(&n);
    if (rc != MPI_SUCCESS)
        return rc;
    return cat_index < 0 || cat_index >= n ? MPI_T_ERR_INVALID_INDEX : MPI_SUCCESS;
}

API int MPI_T_category_get_num_events(int cat_index, int *num_events)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    int rc = category_check(cat_index);
    if (rc != MPI_SUCCESS)
        return rc;
    if (num_events == NULL)
        return MPI_T_ERR_INVALID;
    *num_events = cat_index == ch4_category() ? NEVT : 0;
    return MPI_SUCCESS;
}

API int MPI_T_category_get_events(int cat_index, int len, int indices[])
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    int rc = category_check(cat_index);
    if (rc != MPI_SUCCESS)
        return rc;
    if (len < 0 || (len > 0 && indices == NULL))
        return MPI_T_ERR_INVALID;
    if (cat_index == ch4_category())
        for (int i = 0; i < len && i < NEVT; i++)
            indices[i] = i;
    return MPI_SUCCESS;
}


/* ------------------------------------------------------------------------------------------ */
/* Registration handles (section 16.3.8.4) and dropped handlers (16.3.8.5)                     */

API int MPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                                 MPI_T_event_registration *event_registration)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    if (event_index < 0 || event_index >= NEVT)
        return MPI_T_ERR_INVALID_INDEX;
    if (event_registration == NULL)
        return MPI_T_ERR_INVALID;
    const evtype_t *e = &evtypes[event_index];
    MPI_Comm comm = MPI_COMM_NULL;
    if (e->bind == MPI_T_BIND_MPI_COMM) {
        if (obj_handle == NULL)
            return MPI_T_ERR_INVALID;
        comm = *(MPI_Comm *) obj_handle;
        if (comm == MPI_COMM_NULL)
            return MPI_T_ERR_INVALID_HANDLE;
    }
    reg_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return MPI_T_ERR_MEMORY;
    r->type = event_index;
    r->bound = e->bind != MPI_T_BIND_NO_OBJECT;
    r->comm = comm;

    pthread_mutex_lock(&g_lock);
    r->label = info_value(info, INFO_KEY_LABEL);
    /* appended: registrations see events in allocation order */
    _Atomic(reg_t *) *link = &evs[event_index].head;
    for (reg_t *p = atomic_load(link); p != NULL; p = atomic_load(link))
        link = &p->next;
    atomic_store(link, r);
    atomic_fetch_add(&evs[event_index].nregs, 1);
    r->live_next = g_live;
    if (g_live != NULL)
        g_live->live_prev = r;
    g_live = r;
    atomic_fetch_add(&g_live_regs, 1);
    pthread_mutex_unlock(&g_lock);
    *event_registration = r;
    return MPI_SUCCESS;
}

/* Takes g_lock and checks the handle; on success returns with g_lock held. */
static int lock_handle(reg_t *r)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    pthread_mutex_lock(&g_lock);
    if (!live_locked(r)) {
        pthread_mutex_unlock(&g_lock);
        return MPI_T_ERR_INVALID_HANDLE;
    }
    return MPI_SUCCESS;
}

API int MPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    reg_t *r = event_registration;
    int rc = lock_handle(r);
    if (rc != MPI_SUCCESS)
        return rc;
    char *label = info_value(info, INFO_KEY_LABEL);
    if (label != NULL) { /* hints not in info keep their values */
        free(r->label);
        r->label = label;
    }
    pthread_mutex_unlock(&g_lock);
    return MPI_SUCCESS;
}

API int MPI_T_event_handle_get_info(MPI_T_event_registration event_registration,
                                    MPI_Info *info_used)
{
    reg_t *r = event_registration;
    int rc = lock_handle(r);
    if (rc != MPI_SUCCESS)
        return rc;
    if (info_used == NULL) {
        pthread_mutex_unlock(&g_lock);
        return MPI_T_ERR_INVALID;
    }
    const char *kv[] = {"mpit_provider_event", evtypes[r->type].name, "mpit_provider_bind",
                        bind_name(evtypes[r->type].bind), INFO_KEY_LABEL, r->label};
    rc = new_info(info_used, kv, 3);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

API int MPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                      MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                      MPI_T_event_cb_function event_cb_function)
{
    reg_t *r = event_registration;
    int rc = lock_handle(r);
    if (rc != MPI_SUCCESS)
        return rc;
    int level = level_of(cb_safety);
    if (!valid_level(level)) {
        pthread_mutex_unlock(&g_lock);
        return MPI_T_ERR_INVALID;
    }
    /* Registering overwrites the function, user data and hints of that level; NULL removes. */
    char *label = event_cb_function != NULL ? info_value(info, INFO_KEY_LABEL) : NULL;
    seq_write_begin(r);
    atomic_store_explicit(&r->cb[level].fn, event_cb_function, memory_order_relaxed);
    atomic_store_explicit(&r->cb[level].user_data,
                          event_cb_function != NULL ? user_data : NULL, memory_order_relaxed);
    seq_write_end(r);
    free(r->cb[level].label);
    r->cb[level].label = label;
    pthread_mutex_unlock(&g_lock);
    return MPI_SUCCESS;
}

/* Callback hints of a level that has no callback: MPI_T_ERR_INVALID (there is no callback
 * whose hints could be set or returned). */
API int MPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                      MPI_T_cb_safety cb_safety, MPI_Info info)
{
    reg_t *r = event_registration;
    int rc = lock_handle(r);
    if (rc != MPI_SUCCESS)
        return rc;
    int level = level_of(cb_safety);
    if (!valid_level(level) || atomic_load(&r->cb[level].fn) == NULL) {
        pthread_mutex_unlock(&g_lock);
        return MPI_T_ERR_INVALID;
    }
    char *label = info_value(info, INFO_KEY_LABEL);
    if (label != NULL) {
        free(r->cb[level].label);
        r->cb[level].label = label;
    }
    pthread_mutex_unlock(&g_lock);
    return MPI_SUCCESS;
}

API int MPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                      MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    reg_t *r = event_registration;
    int rc = lock_handle(r);
    if (rc != MPI_SUCCESS)
        return rc;
    int level = level_of(cb_safety);
    if (info_used == NULL || !valid_level(level) || atomic_load(&r->cb[level].fn) == NULL) {
        pthread_mutex_unlock(&g_lock);
        return MPI_T_ERR_INVALID;
    }
    const char *kv[] = {"mpit_provider_cb_safety", level_names[level], INFO_KEY_LABEL,
                        r->cb[level].label};
    rc = new_info(info_used, kv, 2);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

API int MPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                        MPI_T_event_dropped_cb_function dropped_cb_function)
{
    reg_t *r = event_registration;
    int rc = lock_handle(r);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The count covers drops since this handler was set; NULL: nothing is recorded. */
    seq_write_begin(r);
    atomic_store_explicit(&r->dropped, dropped_cb_function, memory_order_relaxed);
    seq_write_end(r);
    pending_clear(r);
    pthread_mutex_unlock(&g_lock);
    return MPI_SUCCESS;
}

API int MPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                                MPI_T_event_free_cb_function free_cb_function)
{
    reg_t *r = event_registration;
    int rc = lock_handle(r);
    if (rc != MPI_SUCCESS)
        return rc;
    /* From now on the handle is invalid and no new delivery can start... */
    if (r->live_prev != NULL)
        r->live_prev->live_next = r->live_next;
    else
        g_live = r->live_next;
    if (r->live_next != NULL)
        r->live_next->live_prev = r->live_prev;
    _Atomic(reg_t *) *link = &evs[r->type].head;
    while (atomic_load(link) != r)
        link = &atomic_load(link)->next;
    atomic_store(link, atomic_load(&r->next)); /* r->next stays valid for raises on r */
    atomic_fetch_sub(&evs[r->type].nregs, 1);
    atomic_store(&r->freed, 1);
    pending_clear(r);
    r->free_cb = free_cb_function;
    r->free_user_data = user_data;
    /* ...and it is finished (free callback) once no raise that may hold it runs any more:
     * possibly at once, possibly when the raise this is called from (or one on another
     * thread) ends. */
    pthread_mutex_lock(&g_retire_lock);
    r->retire_epoch = atomic_fetch_add(&g_epoch, 1);
    r->retired_next = g_retired;
    g_retired = r;
    atomic_fetch_add(&g_nretired, 1);
    pthread_mutex_unlock(&g_retire_lock);
    pthread_mutex_unlock(&g_lock);
    reclaim(tls_ctx < 0 ? 0 : tls_ctx);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* Event data and metadata (sections 16.3.8.6, 16.3.8.7): valid only inside the callback      */
/* invocation the instance was passed to (the innermost one on this thread).                   */

static inline int check_instance(const inst_t *inst)
{
    if (!initialized())
        return MPI_T_ERR_NOT_INITIALIZED;
    if (inst == NULL || inst != tls_inst)
        return MPI_T_ERR_INVALID_HANDLE;
    return MPI_SUCCESS;
}

API int MPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    int rc = check_instance(event_instance);
    if (rc != MPI_SUCCESS)
        return rc;
    const evtype_t *e = &evtypes[event_instance->type];
    if (element_index < 0 || element_index >= e->n)
        return MPI_T_ERR_INVALID_INDEX;
    if (buffer == NULL)
        return MPI_T_ERR_INVALID;
    memcpy(buffer, (const char *) event_instance->data + e->disp[element_index],
           e->size[element_index]);
    return MPI_SUCCESS;
}

API int MPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    int rc = check_instance(event_instance);
    if (rc != MPI_SUCCESS)
        return rc;
    const evtype_t *e = &evtypes[event_instance->type];
    if (buffer == NULL && e->n > 0)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < e->n; i++) /* elements only; padding bytes are left alone */
        memcpy((char *) buffer + e->disp[i], (const char *) event_instance->data + e->disp[i],
               e->size[i]);
    return MPI_SUCCESS;
}

API int MPI_T_event_get_timestamp(MPI_T_event_instance event_instance,
                                  MPI_Count *event_timestamp)
{
    int rc = check_instance(event_instance);
    if (rc != MPI_SUCCESS)
        return rc;
    if (event_timestamp == NULL)
        return MPI_T_ERR_INVALID;
    *event_timestamp = event_instance->timestamp;
    return MPI_SUCCESS;
}

API int MPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    int rc = check_instance(event_instance);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source_index == NULL)
        return MPI_T_ERR_INVALID;
    *source_index = event_instance->source;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* Events from real point-to-point traffic                                                     */

static inline int watching(int ev)
{
    return initialized() && atomic_load_explicit(&evs[ev].nregs, memory_order_relaxed) > 0;
}

/* The communicator as an int, as Fortran sees it (MPI_Comm_toint in the MPI-5 ABI). */
static inline int comm_int(MPI_Comm comm)
{
#if defined(MPI_ABI_VERSION)
    return PMPI_Comm_toint(comm);
#else
    return (int) PMPI_Comm_c2f(comm);
#endif
}

static void activity(int ev_plain, int ev_comm, MPI_Comm comm, int peer, int tag,
                     MPI_Count bytes)
{
    int ctx = atomic_load_explicit(&g_activity_ctx, memory_order_relaxed);
    if (tls_ctx > ctx)
        ctx = tls_ctx;
    if (watching(ev_plain)) {
        struct mpit_provider_p2p d;
        memset(&d, 0, sizeof d);
        d.peer = peer;
        d.tag = tag;
        d.bytes = bytes;
        d.comm = comm_int(comm);
        raise_one(ev_plain, MPIT_PROVIDER_SOURCE_MONOTONIC, ctx, NULL, &d);
    }
    if (ev_comm >= 0 && watching(ev_comm)) {
        struct mpit_provider_comm_p2p d;
        memset(&d, 0, sizeof d);
        d.peer = peer;
        d.tag = tag;
        d.bytes = bytes;
        raise_one(ev_comm, MPIT_PROVIDER_SOURCE_MONOTONIC, ctx, &comm, &d);
    }
}

static inline int watching_sends(void)
{
    return watching(MPIT_PROVIDER_EVENT_P2P_SEND) || watching(MPIT_PROVIDER_EVENT_COMM_SEND);
}

static inline int watching_recvs(void)
{
    return watching(MPIT_PROVIDER_EVENT_P2P_RECV) || watching(MPIT_PROVIDER_EVENT_COMM_RECV);
}

static inline int watching_unexp(void)
{
    return watching(MPIT_PROVIDER_EVENT_UNEXP_ENQUEUED) ||
           watching(MPIT_PROVIDER_EVENT_UNEXP_DEQUEUED);
}

static void send_event(int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    if (dest == MPI_PROC_NULL || !watching_sends())
        return;
    MPI_Count size = 0;
    PMPI_Type_size_x(dt, &size);
    activity(MPIT_PROVIDER_EVENT_P2P_SEND, MPIT_PROVIDER_EVENT_COMM_SEND, comm, dest, tag,
             size * count);
}

static MPI_Count status_bytes(const MPI_Status *st)
{
    MPI_Count n = 0;
    PMPI_Get_elements_x(st, MPI_BYTE, &n);
    return n;
}

static void recv_event(const MPI_Status *st, MPI_Comm comm)
{
    if (st->MPI_SOURCE == MPI_PROC_NULL || !watching_recvs())
        return;
    int cancelled = 0;
    PMPI_Test_cancelled(st, &cancelled);
    if (cancelled)
        return;
    activity(MPIT_PROVIDER_EVENT_P2P_RECV, MPIT_PROVIDER_EVENT_COMM_RECV, comm, st->MPI_SOURCE,
             st->MPI_TAG, status_bytes(st));
}

static void unexp_event(int ev, const MPI_Status *st, MPI_Comm comm)
{
    if (watching(ev))
        activity(ev, -1, comm, st->MPI_SOURCE, st->MPI_TAG, status_bytes(st));
}

/* The table of nonblocking receives awaiting completion: request handle -> communicator. */
#define REQ_BUCKETS 1024
typedef struct req_node {
    MPI_Request req;
    MPI_Comm comm;
    struct req_node *next;
} req_node_t;
static req_node_t *req_table[REQ_BUCKETS];
static pthread_mutex_t g_req_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_req_count;

static inline unsigned req_hash(MPI_Request r)
{
    return ((unsigned) (uintptr_t) r * 2654435761u) >> 22; /* 10 bits */
}

/* Removes req's entry; returns 1 and its communicator if there was one. */
static int req_take(MPI_Request req, MPI_Comm *comm)
{
    if (atomic_load_explicit(&g_req_count, memory_order_relaxed) == 0 || req == MPI_REQUEST_NULL)
        return 0;
    int found = 0;
    pthread_mutex_lock(&g_req_lock);
    for (req_node_t **p = &req_table[req_hash(req)]; *p != NULL; p = &(*p)->next)
        if ((*p)->req == req) {
            req_node_t *n = *p;
            *p = n->next;
            if (comm != NULL)
                *comm = n->comm;
            free(n);
            atomic_fetch_sub(&g_req_count, 1);
            found = 1;
            break;
        }
    pthread_mutex_unlock(&g_req_lock);
    return found;
}

/* Records a receive request (comm != MPI_COMM_NULL) or forgets a stale entry of the same
 * handle value (a request created by another wrapper). */
static void req_put(MPI_Request req, MPI_Comm comm)
{
    if (req == MPI_REQUEST_NULL)
        return;
    req_take(req, NULL);
    if (comm == MPI_COMM_NULL)
        return;
    req_node_t *n = malloc(sizeof *n);
    if (n == NULL)
        return;
    n->req = req;
    n->comm = comm;
    pthread_mutex_lock(&g_req_lock);
    unsigned h = req_hash(req);
    n->next = req_table[h];
    req_table[h] = n;
    atomic_fetch_add(&g_req_count, 1);
    pthread_mutex_unlock(&g_req_lock);
}

static inline int any_requests(void)
{
    return atomic_load_explicit(&g_req_count, memory_order_relaxed) > 0;
}

API int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    int rc = PMPI_Send(buf, count, datatype, dest, tag, comm);
    if (rc == MPI_SUCCESS)
        send_event(count, datatype, dest, tag, comm);
    return rc;
}

API int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm)
{
    int rc = PMPI_Ssend(buf, count, datatype, dest, tag, comm);
    if (rc == MPI_SUCCESS)
        send_event(count, datatype, dest, tag, comm);
    return rc;
}

API int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    int rc = PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
    if (rc == MPI_SUCCESS) {
        if (any_requests())
            req_put(*request, MPI_COMM_NULL);
        send_event(count, datatype, dest, tag, comm);
    }
    return rc;
}

API int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    int rc = PMPI_Issend(buf, count, datatype, dest, tag, comm, request);
    if (rc == MPI_SUCCESS) {
        if (any_requests())
            req_put(*request, MPI_COMM_NULL);
        send_event(count, datatype, dest, tag, comm);
    }
    return rc;
}

/* A blocking receive. When someone watches the unexpected-queue events, a message already
 * waiting (matched by MPI_Improbe exactly as the receive would match it) is received with
 * MPI_Mrecv, raising unexp_message_enqueued before and unexp_message_dequeued after. */
static int recv_impl(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Status *status)
{
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc;
    if (source != MPI_PROC_NULL && watching_unexp()) {
        int flag = 0;
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status pst;
        rc = PMPI_Improbe(source, tag, comm, &flag, &msg, &pst);
        if (rc != MPI_SUCCESS)
            return rc;
        if (flag) {
            unexp_event(MPIT_PROVIDER_EVENT_UNEXP_ENQUEUED, &pst, comm);
            rc = PMPI_Mrecv(buf, count, datatype, &msg, st);
            unexp_event(MPIT_PROVIDER_EVENT_UNEXP_DEQUEUED, &pst, comm);
            if (rc == MPI_SUCCESS)
                recv_event(st, comm);
            return rc;
        }
    }
    if (!watching_recvs())
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    rc = PMPI_Recv(buf, count, datatype, source, tag, comm, st);
    if (rc == MPI_SUCCESS)
        recv_event(st, comm);
    return rc;
}

API int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                 MPI_Comm comm, MPI_Status *status)
{
    return recv_impl(buf, count, datatype, source, tag, comm, status);
}

API int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    int rc;
    if (source != MPI_PROC_NULL && watching_unexp()) {
        int flag = 0;
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status pst;
        rc = PMPI_Improbe(source, tag, comm, &flag, &msg, &pst);
        if (rc != MPI_SUCCESS)
            return rc;
        if (flag) {
            unexp_event(MPIT_PROVIDER_EVENT_UNEXP_ENQUEUED, &pst, comm);
            rc = PMPI_Imrecv(buf, count, datatype, &msg, request);
            unexp_event(MPIT_PROVIDER_EVENT_UNEXP_DEQUEUED, &pst, comm);
            if (rc == MPI_SUCCESS)
                req_put(*request, comm);
            return rc;
        }
    }
    rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
    /* Tracked whether or not anyone watches now: a registration may come before completion. */
    if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
        req_put(*request, comm);
    return rc;
}

API int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    if (source != MPI_PROC_NULL && watching_unexp()) {
        /* Isend + receive (with the unexpected-queue check) + wait: what MPI_Sendrecv does. */
        MPI_Request sreq;
        int rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &sreq);
        if (rc != MPI_SUCCESS)
            return rc;
        send_event(sendcount, sendtype, dest, sendtag, comm);
        rc = recv_impl(recvbuf, recvcount, recvtype, source, recvtag, comm, status);
        int rc2 = PMPI_Wait(&sreq, MPI_STATUS_IGNORE);
        return rc != MPI_SUCCESS ? rc : rc2;
    }
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, st);
    if (rc == MPI_SUCCESS) {
        send_event(sendcount, sendtype, dest, sendtag, comm);
        recv_event(st, comm);
    }
    return rc;
}

/* Completion: a tracked receive request that completes raises p2p_recv/comm_recv. */

static void completed(MPI_Request old, const MPI_Status *st)
{
    MPI_Comm comm;
    if (req_take(old, &comm))
        recv_event(st, comm);
}

API int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (!any_requests() || request == NULL)
        return PMPI_Wait(request, status);
    MPI_Request old = *request;
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Wait(request, st);
    if (rc == MPI_SUCCESS)
        completed(old, st);
    return rc;
}

API int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (!any_requests() || request == NULL || flag == NULL)
        return PMPI_Test(request, flag, status);
    MPI_Request old = *request;
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Test(request, flag, st);
    if (rc == MPI_SUCCESS && *flag)
        completed(old, st);
    return rc;
}

/* Copies of the request handles and a status array for the -all/-any/-some forms. */
typedef struct {
    MPI_Request oldl[16];
    MPI_Status stl[16];
    MPI_Request *old;
    MPI_Status *st;
} multi_t;

static int multi_begin(multi_t *m, int n, const MPI_Request *reqs, MPI_Status *user_st)
{
    m->old = n <= 16 ? m->oldl : malloc(sizeof(MPI_Request) * (size_t) n);
    m->st = user_st; /* NULL: the -any forms, which need no status array */
    if (user_st == MPI_STATUSES_IGNORE)
        m->st = n <= 16 ? m->stl : malloc(sizeof(MPI_Status) * (size_t) n);
    if (m->old == NULL || m->st == NULL) {
        if (m->old != m->oldl)
            free(m->old);
        if (m->st != user_st && m->st != m->stl)
            free(m->st);
        return 0;
    }
    memcpy(m->old, reqs, sizeof(MPI_Request) * (size_t) n);
    return 1;
}

static void multi_end(multi_t *m, MPI_Status *user_st)
{
    if (m->old != m->oldl)
        free(m->old);
    if (m->st != user_st && m->st != m->stl)
        free(m->st);
}

/* After an -all form: every request completed (MPI_SUCCESS), or those whose status says
 * MPI_SUCCESS and whose handle was released (MPI_ERR_IN_STATUS). */
static void all_completed(multi_t *m, int n, const MPI_Request *reqs, int rc)
{
    for (int i = 0; i < n; i++) {
        if (rc == MPI_SUCCESS ||
            (rc == MPI_ERR_IN_STATUS && m->st[i].MPI_ERROR == MPI_SUCCESS &&
             reqs[i] == MPI_REQUEST_NULL))
            completed(m->old[i], &m->st[i]);
    }
}

API int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    multi_t m;
    if (!any_requests() || count <= 0 || array_of_requests == NULL ||
        !multi_begin(&m, count, array_of_requests, array_of_statuses))
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    int rc = PMPI_Waitall(count, array_of_requests, m.st);
    all_completed(&m, count, array_of_requests, rc);
    multi_end(&m, array_of_statuses);
    return rc;
}

API int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                    MPI_Status array_of_statuses[])
{
    multi_t m;
    if (!any_requests() || count <= 0 || array_of_requests == NULL || flag == NULL ||
        !multi_begin(&m, count, array_of_requests, array_of_statuses))
        return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    int rc = PMPI_Testall(count, array_of_requests, flag, m.st);
    if (*flag)
        all_completed(&m, count, array_of_requests, rc);
    multi_end(&m, array_of_statuses);
    return rc;
}

API int MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
    multi_t m;
    if (!any_requests() || count <= 0 || array_of_requests == NULL || indx == NULL ||
        !multi_begin(&m, count, array_of_requests, NULL))
        return PMPI_Waitany(count, array_of_requests, indx, status);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Waitany(count, array_of_requests, indx, st);
    if (rc == MPI_SUCCESS && *indx != MPI_UNDEFINED)
        completed(m.old[*indx], st);
    multi_end(&m, NULL);
    return rc;
}

API int MPI_Testany(int count, MPI_Request array_of_requests[], int *indx, int *flag,
                    MPI_Status *status)
{
    multi_t m;
    if (!any_requests() || count <= 0 || array_of_requests == NULL || indx == NULL ||
        flag == NULL || !multi_begin(&m, count, array_of_requests, NULL))
        return PMPI_Testany(count, array_of_requests, indx, flag, status);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Testany(count, array_of_requests, indx, flag, st);
    if (rc == MPI_SUCCESS && *flag && *indx != MPI_UNDEFINED)
        completed(m.old[*indx], st);
    multi_end(&m, NULL);
    return rc;
}

static void some_completed(multi_t *m, int outcount, const int *indices, int rc)
{
    if (outcount == MPI_UNDEFINED)
        return;
    for (int k = 0; k < outcount; k++)
        if (rc == MPI_SUCCESS || m->st[k].MPI_ERROR == MPI_SUCCESS)
            completed(m->old[indices[k]], &m->st[k]);
}

API int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                     int array_of_indices[], MPI_Status array_of_statuses[])
{
    multi_t m;
    if (!any_requests() || incount <= 0 || array_of_requests == NULL || outcount == NULL ||
        array_of_indices == NULL ||
        !multi_begin(&m, incount, array_of_requests, array_of_statuses))
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    int rc = PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, m.st);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
        some_completed(&m, *outcount, array_of_indices, rc);
    multi_end(&m, array_of_statuses);
    return rc;
}

API int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                     int array_of_indices[], MPI_Status array_of_statuses[])
{
    multi_t m;
    if (!any_requests() || incount <= 0 || array_of_requests == NULL || outcount == NULL ||
        array_of_indices == NULL ||
        !multi_begin(&m, incount, array_of_requests, array_of_statuses))
        return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    int rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, m.st);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
        some_completed(&m, *outcount, array_of_indices, rc);
    multi_end(&m, array_of_statuses);
    return rc;
}

API int MPI_Request_free(MPI_Request *request)
{
    MPI_Request old = request != NULL ? *request : MPI_REQUEST_NULL;
    int rc = PMPI_Request_free(request);
    if (rc == MPI_SUCCESS)
        req_take(old, NULL); /* its completion will never be seen */
    return rc;
}
