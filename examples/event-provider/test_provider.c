/*
 * test_provider.c: tests of libmpit_event_provider.so, run as 2 ranks with the provider in
 * LD_PRELOAD (examples/tests/event_provider.rs compiles and runs it):
 *
 *   LD_PRELOAD=.../libmpit_event_provider.so mpiexec -n 2 ./test_provider
 *
 * It finds the control API with dlsym (so it fails clearly if the provider is not preloaded)
 * and checks, against the standard (MPI-4.1 section 16.3.8): the queries, the error codes of
 * every misuse, the selection rule, the dropped handler and its ordering, the free callback
 * (once, never followed by a callback, also with in-flight callbacks on other threads), info
 * hints, instance validity, and that the events of real sends and receives between the two
 * ranks carry their true ranks, tags and sizes, in order, on the ordered source.
 * Prints "rank R: N checks, F failures"; exits non-zero on any failure.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpit_provider.h"

/* GCC takes MPI_STATUSES_IGNORE ((MPI_Status *) 1) passed to MPICH's `MPI_Status
 * array_of_statuses[]` parameter for a zero-sized array. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

/* ------------------------------------------------------------------------------------------ */
/* Checks                                                                                      */

static int g_rank = -1;
static atomic_int g_checks, g_fails;

#define CHECK(c)                                                                              \
    do {                                                                                      \
        atomic_fetch_add(&g_checks, 1);                                                       \
        if (!(c)) {                                                                           \
            atomic_fetch_add(&g_fails, 1);                                                    \
            fprintf(stderr, "FAIL rank %d line %d: %s\n", g_rank, __LINE__, #c);              \
        }                                                                                     \
    } while (0)

#define CHECK_EQ(a, b)                                                                        \
    do {                                                                                      \
        long long a_ = (long long) (a), b_ = (long long) (b);                                 \
        atomic_fetch_add(&g_checks, 1);                                                       \
        if (a_ != b_) {                                                                       \
            atomic_fetch_add(&g_fails, 1);                                                    \
            fprintf(stderr, "FAIL rank %d line %d: %s == %s (%lld != %lld)\n", g_rank,        \
                    __LINE__, #a, #b, a_, b_);                                                \
        }                                                                                     \
    } while (0)

#define CHECK_RC(call, want) CHECK_EQ((call), (want))

/* ------------------------------------------------------------------------------------------ */
/* The control API, found in the preloaded provider                                            */

static int (*p_raise)(int, int, const void *);
static int (*p_raise_at)(int, int, MPI_T_cb_safety, const void *);
static int (*p_raise_bound)(int, int, MPI_T_cb_safety, const void *, const void *);
static int (*p_raise_many)(int, int, MPI_T_cb_safety, const void *, const void *, size_t,
                           long long);
static int (*p_live)(void);
static long long (*p_invoked)(void);
static long long (*p_dropped)(void);
static long long (*p_reports)(void);
static long long (*p_frees)(void);
static void (*p_reset)(void);
static int (*p_set_activity)(MPI_T_cb_safety);
static int (*p_set_scope)(int);
static int (*p_abi)(void);
static int (*p_set_capacity)(long long);
static int (*p_defer_many)(int, int, const void *, size_t, long long);
static long long (*p_deliver)(void);

static void *sym(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    if (p == NULL) {
        fprintf(stderr, "rank %d: %s not found: is libmpit_event_provider.so in LD_PRELOAD?\n",
                g_rank, name);
        exit(2);
    }
    return p;
}

static void load_control_api(void)
{
    *(void **) &p_raise = sym("mpit_provider_raise");
    *(void **) &p_raise_at = sym("mpit_provider_raise_at");
    *(void **) &p_raise_bound = sym("mpit_provider_raise_bound");
    *(void **) &p_raise_many = sym("mpit_provider_raise_many");
    *(void **) &p_live = sym("mpit_provider_live_registrations");
    *(void **) &p_invoked = sym("mpit_provider_callbacks_invoked");
    *(void **) &p_dropped = sym("mpit_provider_events_dropped");
    *(void **) &p_reports = sym("mpit_provider_dropped_reports");
    *(void **) &p_frees = sym("mpit_provider_free_callbacks");
    *(void **) &p_reset = sym("mpit_provider_reset_counters");
    *(void **) &p_set_activity = sym("mpit_provider_set_activity_safety");
    *(void **) &p_set_scope = sym("mpit_provider_set_drop_scope");
    *(void **) &p_abi = sym("mpit_provider_abi_version");
    *(void **) &p_set_capacity = sym("mpit_provider_set_buffer_capacity");
    *(void **) &p_defer_many = sym("mpit_provider_defer_many");
    *(void **) &p_deliver = sym("mpit_provider_deliver_deferred");
}

/* ------------------------------------------------------------------------------------------ */
/* A log of callback invocations (main-thread tests)                                           */

enum { REC_EVENT = 1, REC_DROPPED, REC_FREE };

typedef struct {
    int kind;
    int id;     /* which registration (cbid.id) */
    int level;  /* the level the callback was registered at (cbid.level) */
    int ctx;    /* cb_safety passed by the provider */
    int source;
    MPI_Count ts;
    MPI_Count count; /* dropped handler */
    union {
        struct mpit_provider_p2p p2p;
        struct mpit_provider_comm_p2p comm;
        struct mpit_provider_test test;
        char bytes[64];
    } data;
} rec_t;

#define LOG_MAX 4096
static rec_t g_log[LOG_MAX];
static int g_nlog;

typedef struct {
    int id;
    int ev;
    int level;
} cbid_t;

static rec_t *log_add(int kind)
{
    if (g_nlog >= LOG_MAX) {
        fprintf(stderr, "rank %d: log full\n", g_rank);
        exit(3);
    }
    rec_t *r = &g_log[g_nlog++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    return r;
}

static size_t extent(int ev)
{
    switch (ev) {
    case MPIT_PROVIDER_EVENT_COMM_SEND:
    case MPIT_PROVIDER_EVENT_COMM_RECV:
        return sizeof(struct mpit_provider_comm_p2p);
    case MPIT_PROVIDER_EVENT_TEST:
        return sizeof(struct mpit_provider_test);
    case MPIT_PROVIDER_EVENT_EMPTY:
        return 0;
    default:
        return sizeof(struct mpit_provider_p2p);
    }
}

static MPI_T_event_instance g_stale_instance;

/* Sizes of the datatypes the provider uses, without calling MPI (not allowed at
 * MPI_T_CB_REQUIRE_MPI_RESTRICTED, nor before MPI_Init). */
static int dt_size(MPI_Datatype dt)
{
    if (dt == MPI_INT)
        return sizeof(int);
    if (dt == MPI_COUNT)
        return sizeof(MPI_Count);
    if (dt == MPI_DOUBLE)
        return sizeof(double);
    if (dt == MPI_UINT64_T)
        return sizeof(uint64_t);
    if (dt == MPI_CHAR)
        return 1;
    return -1;
}

/* Records an event: MPI_T_event_copy, then every element again with MPI_T_event_read, which
 * must agree; timestamp and source. */
static void rec_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety ctx,
                   void *ud)
{
    (void) reg;
    const cbid_t *id = ud;
    rec_t *r = log_add(REC_EVENT);
    r->id = id->id;
    r->level = id->level;
    r->ctx = ctx;
    CHECK_RC(MPI_T_event_get_source(inst, &r->source), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_get_timestamp(inst, &r->ts), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_copy(inst, r->data.bytes), MPI_SUCCESS);
    int n = 0;
    MPI_Datatype dt[4];
    MPI_Aint disp[4];
    n = 4;
    CHECK_RC(MPI_T_event_get_info(id->ev, NULL, NULL, NULL, dt, disp, &n, NULL, NULL, NULL, NULL,
                                  NULL),
             MPI_SUCCESS);
    for (int i = 0; i < n; i++) {
        char elem[16];
        memset(elem, 0x5a, sizeof elem);
        CHECK_RC(MPI_T_event_read(inst, i, elem), MPI_SUCCESS);
        int size = dt_size(dt[i]);
        CHECK(size > 0 && memcmp(elem, r->data.bytes + disp[i], (size_t) size) == 0);
    }
    /* misuse inside a callback */
    CHECK_RC(MPI_T_event_read(inst, n, r->data.bytes + 48), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_event_read(inst, -1, r->data.bytes + 48), MPI_T_ERR_INVALID_INDEX);
    if (n > 0)
        CHECK_RC(MPI_T_event_read(inst, 0, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_get_timestamp(inst, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_get_source(inst, NULL), MPI_T_ERR_INVALID);
    g_stale_instance = inst;
}

static void rec_dropped(MPI_Count count, MPI_T_event_registration reg, int source,
                        MPI_T_cb_safety ctx, void *ud)
{
    (void) reg;
    const cbid_t *id = ud;
    rec_t *r = log_add(REC_DROPPED);
    r->id = id->id;
    r->level = id->level;
    r->ctx = ctx;
    r->source = source;
    r->count = count;
}

static void rec_free(MPI_T_event_registration reg, MPI_T_cb_safety ctx, void *ud)
{
    (void) reg;
    const cbid_t *id = ud;
    rec_t *r = log_add(REC_FREE);
    r->id = id->id;
    r->ctx = ctx;
}

static int count_kind(int from, int kind, int id)
{
    int n = 0;
    for (int i = from; i < g_nlog; i++)
        if (g_log[i].kind == kind && (id < 0 || g_log[i].id == id))
            n++;
    return n;
}

static MPI_T_event_registration alloc_reg(int ev, void *obj)
{
    MPI_T_event_registration r = NULL;
    CHECK_RC(MPI_T_event_handle_alloc(ev, obj, MPI_INFO_NULL, &r), MPI_SUCCESS);
    return r;
}

static void free_reg(MPI_T_event_registration r, cbid_t *id)
{
    CHECK_RC(MPI_T_event_handle_free(r, id, rec_free), MPI_SUCCESS);
}

static struct mpit_provider_test test_data(uint64_t seq)
{
    struct mpit_provider_test d;
    memset(&d, 0, sizeof d);
    d.seq = seq;
    d.value = (double) seq / 4;
    d.id = (int) seq * 3;
    d.flag = 'a' + (char) (seq % 26);
    return d;
}

/* ------------------------------------------------------------------------------------------ */
/* 1. Queries                                                                                  */

static void test_before_init(void)
{
    int n;
    CHECK_RC(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_RC(MPI_T_source_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    MPI_T_event_registration r;
    CHECK_RC(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &r), MPI_T_ERR_NOT_INITIALIZED);
    struct mpit_provider_test d = test_data(1);
    CHECK_RC(p_raise(MPIT_PROVIDER_EVENT_TEST, 1, &d), MPI_T_ERR_NOT_INITIALIZED);
}

static void test_queries(void)
{
    int n = -1;
    CHECK_RC(MPI_T_source_get_num(&n), MPI_SUCCESS);
    CHECK_EQ(n, MPIT_PROVIDER_NUM_SOURCES);
    CHECK_RC(MPI_T_source_get_num(NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_get_num(&n), MPI_SUCCESS);
    CHECK_EQ(n, MPIT_PROVIDER_NUM_EVENTS);
    CHECK_RC(MPI_T_event_get_num(NULL), MPI_T_ERR_INVALID);
    CHECK_EQ(p_abi(), MPIT_PROVIDER_ABI_VERSION);

    /* sources */
    const char *names[] = {"monotonic", "realtime", "thread_cputime", "tsc"};
    for (int s = 0; s < MPIT_PROVIDER_NUM_SOURCES; s++) {
        char name[64], desc[512];
        int nl = sizeof name, dl = sizeof desc;
        MPI_T_source_order ord;
        MPI_Count tps = 0, maxt = 0;
        MPI_Info info = MPI_INFO_NULL;
        CHECK_RC(MPI_T_source_get_info(s, name, &nl, desc, &dl, &ord, &tps, &maxt, &info),
                 MPI_SUCCESS);
        CHECK(strcmp(name, names[s]) == 0);
        CHECK_EQ(nl, strlen(names[s]) + 1);
        CHECK(dl > 1);
        const int ordered = s == MPIT_PROVIDER_SOURCE_MONOTONIC || s == MPIT_PROVIDER_SOURCE_TSC;
        CHECK_EQ(ord, ordered ? MPI_T_SOURCE_ORDERED : MPI_T_SOURCE_UNORDERED);
        if (s == MPIT_PROVIDER_SOURCE_TSC) {
            /* Calibrated: 20 ms of CLOCK_MONOTONIC are 20 ms of ticks, within 10%. */
            CHECK(tps > 0);
            MPI_Count t0 = 0, t1 = 0;
            struct timespec a, b, pause = {0, 20000000};
            clock_gettime(CLOCK_MONOTONIC, &a);
            CHECK_RC(MPI_T_source_get_timestamp(s, &t0), MPI_SUCCESS);
            nanosleep(&pause, NULL);
            CHECK_RC(MPI_T_source_get_timestamp(s, &t1), MPI_SUCCESS);
            clock_gettime(CLOCK_MONOTONIC, &b);
            double ns = (double) (b.tv_sec - a.tv_sec) * 1e9 + (double) (b.tv_nsec - a.tv_nsec);
            double ticks_ns = (double) (t1 - t0) * 1e9 / (double) tps;
            CHECK(ticks_ns > 0.9 * ns && ticks_ns < 1.1 * ns);
        } else {
            CHECK_EQ(tps, 1000000000);
        }
        CHECK(maxt > 0);
        CHECK(info != MPI_INFO_NULL);
        if (info != MPI_INFO_NULL) {
            char v[64];
            int vl = sizeof v, flag = 0;
            MPI_Info_get_string(info, "mpit_provider_clock", &vl, v, &flag);
            CHECK(flag);
            MPI_Info_free(&info);
        }
        MPI_Count a = 0, b = 0;
        if (s == MPIT_PROVIDER_SOURCE_THREAD_CPUTIME) {
            CHECK_RC(MPI_T_source_get_timestamp(s, &a), MPI_T_ERR_NOT_SUPPORTED);
        } else {
            CHECK_RC(MPI_T_source_get_timestamp(s, &a), MPI_SUCCESS);
            CHECK_RC(MPI_T_source_get_timestamp(s, &b), MPI_SUCCESS);
            CHECK(a > 0 && b >= a);
        }
    }
    MPI_T_source_order ord;
    MPI_Count tps, maxt, ts;
    const int past_end = MPIT_PROVIDER_NUM_SOURCES;
    CHECK_RC(MPI_T_source_get_info(past_end, NULL, NULL, NULL, NULL, &ord, &tps, &maxt, NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_source_get_info(-1, NULL, NULL, NULL, NULL, &ord, &tps, &maxt, NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_source_get_info(0, NULL, NULL, NULL, NULL, NULL, &tps, &maxt, NULL),
             MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_source_get_timestamp(past_end, &ts), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_source_get_timestamp(0, NULL), MPI_T_ERR_INVALID);

    /* string convention: length query, truncation */
    int nl = 0;
    CHECK_RC(MPI_T_source_get_info(0, NULL, &nl, NULL, NULL, &ord, &tps, &maxt, NULL),
             MPI_SUCCESS);
    CHECK_EQ(nl, strlen("monotonic") + 1);
    char small[4];
    nl = sizeof small;
    CHECK_RC(MPI_T_source_get_info(0, small, &nl, NULL, NULL, &ord, &tps, &maxt, NULL),
             MPI_SUCCESS);
    CHECK(strcmp(small, "mon") == 0);
    CHECK_EQ(nl, strlen("monotonic") + 1);

    /* event types */
    const char *ev_names[] = {"unexp_message_enqueued", "unexp_message_dequeued", "p2p_send",
                              "p2p_recv", "comm_send", "comm_recv", "provider_test",
                              "provider_empty"};
    const int ev_n[] = {4, 4, 4, 4, 3, 3, 4, 0};
    for (int e = 0; e < MPIT_PROVIDER_NUM_EVENTS; e++) {
        char name[64], desc[512];
        int nl2 = sizeof name, dl = sizeof desc, verb = 0, ne = 4, bind = 0;
        MPI_Datatype dt[4];
        MPI_Aint disp[4];
        MPI_T_enum en = (MPI_T_enum) 1;
        MPI_Info info = MPI_INFO_NULL;
        CHECK_RC(MPI_T_event_get_info(e, name, &nl2, &verb, dt, disp, &ne, &en, &info, desc, &dl,
                                      &bind),
                 MPI_SUCCESS);
        CHECK(strcmp(name, ev_names[e]) == 0);
        CHECK_EQ(ne, ev_n[e]);
        CHECK(en == MPI_T_ENUM_NULL);
        CHECK(dl > 1);
        CHECK(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL);
        CHECK_EQ(bind, (e == MPIT_PROVIDER_EVENT_COMM_SEND || e == MPIT_PROVIDER_EVENT_COMM_RECV)
                           ? MPI_T_BIND_MPI_COMM
                           : MPI_T_BIND_NO_OBJECT);
        for (int i = 0; i < ne; i++) {
            CHECK(disp[i] >= 0 && (i == 0 ? disp[i] == 0 : disp[i] > disp[i - 1]));
            int size = dt_size(dt[i]);
            CHECK(size > 0 && (size_t) (disp[i] + size) <= extent(e));
        }
        if (e <= MPIT_PROVIDER_EVENT_P2P_RECV) {
            CHECK(dt[0] == MPI_INT && dt[1] == MPI_INT && dt[2] == MPI_COUNT && dt[3] == MPI_INT);
            CHECK(disp[0] == 0 && disp[1] == 4 && disp[2] == 8 && disp[3] == 16);
        }
        CHECK(info != MPI_INFO_NULL);
        if (info != MPI_INFO_NULL) {
            char v[64];
            int vl = sizeof v, flag = 0;
            MPI_Info_get_string(info, "mpit_provider_event", &vl, v, &flag);
            CHECK(flag && strcmp(v, ev_names[e]) == 0);
            MPI_Info_free(&info);
        }
        int idx = -1;
        CHECK_RC(MPI_T_event_get_index(ev_names[e], &idx), MPI_SUCCESS);
        CHECK_EQ(idx, e);
        /* every OUT argument may be NULL */
        CHECK_RC(MPI_T_event_get_info(e, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                      NULL, NULL),
                 MPI_SUCCESS);
    }
    /* truncation of the element arrays */
    {
        MPI_Datatype dt[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
        MPI_Aint disp[3] = {-1, -1, -7};
        int ne = 2;
        CHECK_RC(MPI_T_event_get_info(MPIT_PROVIDER_EVENT_TEST, NULL, NULL, NULL, dt, disp, &ne,
                                      NULL, NULL, NULL, NULL, NULL),
                 MPI_SUCCESS);
        CHECK_EQ(ne, 4);
        CHECK(dt[0] == MPI_UINT64_T && dt[1] == MPI_DOUBLE);
        CHECK(disp[0] == 0 && disp[1] == 8 && disp[2] == -7);
        ne = -1;
        CHECK_RC(MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, &ne, NULL, NULL, NULL,
                                      NULL, NULL),
                 MPI_T_ERR_INVALID);
    }
    int idx;
    CHECK_RC(MPI_T_event_get_index("no_such_event", &idx), MPI_T_ERR_INVALID_NAME);
    CHECK_RC(MPI_T_event_get_index(NULL, &idx), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_get_index("p2p_send", NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_event_get_info(MPIT_PROVIDER_NUM_EVENTS, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);

    /* categories: every event type in exactly one category */
    int ncat = 0, total = 0, cat_with = -1;
    CHECK_RC(MPI_T_category_get_num(&ncat), MPI_SUCCESS);
    for (int c = 0; c < ncat; c++) {
        int k = -1;
        CHECK_RC(MPI_T_category_get_num_events(c, &k), MPI_SUCCESS);
        if (k > 0)
            cat_with = c;
        total += k;
    }
    CHECK_EQ(total, MPIT_PROVIDER_NUM_EVENTS);
    if (cat_with >= 0) {
        int ind[MPIT_PROVIDER_NUM_EVENTS + 1];
        for (int i = 0; i <= MPIT_PROVIDER_NUM_EVENTS; i++)
            ind[i] = -1;
        CHECK_RC(MPI_T_category_get_events(cat_with, MPIT_PROVIDER_NUM_EVENTS + 1, ind),
                 MPI_SUCCESS);
        for (int i = 0; i < MPIT_PROVIDER_NUM_EVENTS; i++)
            CHECK_EQ(ind[i], i);
        CHECK_EQ(ind[MPIT_PROVIDER_NUM_EVENTS], -1);
        CHECK_RC(MPI_T_category_get_events(cat_with, -1, ind), MPI_T_ERR_INVALID);
        CHECK_RC(MPI_T_category_get_events(cat_with, 2, NULL), MPI_T_ERR_INVALID);
    }
    int k;
    CHECK_RC(MPI_T_category_get_num_events(ncat, &k), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_category_get_num_events(-1, &k), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_category_get_events(ncat, 0, NULL), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_category_get_num_events(0, NULL), MPI_T_ERR_INVALID);
}

/* ------------------------------------------------------------------------------------------ */
/* 2. Misuse of handles and the control API                                                    */

static void test_misuse(void)
{
    MPI_T_event_registration r = NULL, bogus = (MPI_T_event_registration) &g_checks;
    CHECK_RC(MPI_T_event_handle_alloc(MPIT_PROVIDER_NUM_EVENTS, NULL, MPI_INFO_NULL, &r),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_event_handle_alloc(-1, NULL, MPI_INFO_NULL, &r), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_handle_alloc(MPIT_PROVIDER_EVENT_COMM_SEND, NULL, MPI_INFO_NULL, &r),
             MPI_T_ERR_INVALID);
    MPI_Comm null = MPI_COMM_NULL;
    CHECK_RC(MPI_T_event_handle_alloc(MPIT_PROVIDER_EVENT_COMM_SEND, &null, MPI_INFO_NULL, &r),
             MPI_T_ERR_INVALID_HANDLE);

    MPI_Info info;
    CHECK_RC(MPI_T_event_register_callback(bogus, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL,
                                           rec_cb),
             MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_register_callback(NULL, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL,
                                           rec_cb),
             MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_handle_free(bogus, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_set_dropped_handler(bogus, rec_dropped), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_handle_get_info(bogus, &info), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_handle_set_info(bogus, MPI_INFO_NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_callback_get_info(bogus, MPI_T_CB_REQUIRE_NONE, &info),
             MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_callback_set_info(bogus, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL),
             MPI_T_ERR_INVALID_HANDLE);

    static cbid_t id = {90, MPIT_PROVIDER_EVENT_TEST, MPI_T_CB_REQUIRE_NONE};
    int live0 = p_live();
    r = alloc_reg(MPIT_PROVIDER_EVENT_TEST, NULL);
    CHECK_EQ(p_live(), live0 + 1);
    CHECK_RC(MPI_T_event_register_callback(r, (MPI_T_cb_safety) 4, MPI_INFO_NULL, &id, rec_cb),
             MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_register_callback(r, (MPI_T_cb_safety) -1, MPI_INFO_NULL, &id, rec_cb),
             MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_handle_get_info(r, NULL), MPI_T_ERR_INVALID);
    /* hints of a level without a callback */
    CHECK_RC(MPI_T_event_callback_get_info(r, MPI_T_CB_REQUIRE_NONE, &info), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_callback_set_info(r, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL),
             MPI_T_ERR_INVALID);

    /* instance handles outside their callback */
    CHECK_RC(MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &id, rec_cb),
             MPI_SUCCESS);
    int base = g_nlog;
    struct mpit_provider_test d = test_data(5);
    CHECK_RC(p_raise(MPIT_PROVIDER_EVENT_TEST, MPIT_PROVIDER_SOURCE_REALTIME, &d), MPI_SUCCESS);
    CHECK_EQ(count_kind(base, REC_EVENT, 90), 1);
    char buf[64];
    MPI_Count ts;
    int src;
    CHECK(g_stale_instance != NULL);
    CHECK_RC(MPI_T_event_read(g_stale_instance, 0, buf), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_copy(g_stale_instance, buf), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_get_timestamp(g_stale_instance, &ts), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_get_source(g_stale_instance, &src), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_read(NULL, 0, buf), MPI_T_ERR_INVALID_HANDLE);

    /* the control API */
    CHECK_RC(p_raise(MPIT_PROVIDER_NUM_EVENTS, 0, &d), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(p_raise(MPIT_PROVIDER_EVENT_TEST, MPIT_PROVIDER_NUM_SOURCES, &d),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(p_raise(MPIT_PROVIDER_EVENT_TEST, 0, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(p_raise(MPIT_PROVIDER_EVENT_EMPTY, 0, NULL), MPI_SUCCESS);
    CHECK_RC(p_raise(MPIT_PROVIDER_EVENT_COMM_SEND, 0, &d), MPI_T_ERR_INVALID);
    CHECK_RC(p_raise_at(MPIT_PROVIDER_EVENT_TEST, 0, (MPI_T_cb_safety) 9, &d), MPI_T_ERR_INVALID);
    CHECK_RC(p_set_activity((MPI_T_cb_safety) 9), MPI_T_ERR_INVALID);
    CHECK_RC(p_set_scope(7), MPI_T_ERR_INVALID);

    /* after free the handle is invalid everywhere */
    static cbid_t fid = {91, 0, 0};
    base = g_nlog;
    free_reg(r, &fid);
    CHECK_EQ(count_kind(base, REC_FREE, 91), 1);
    CHECK_EQ(p_live(), live0);
    CHECK_RC(MPI_T_event_handle_free(r, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &id, rec_cb),
             MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_set_dropped_handler(r, NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_handle_get_info(r, &info), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(p_raise(MPIT_PROVIDER_EVENT_TEST, 1, &d), MPI_SUCCESS);
    CHECK_EQ(count_kind(base, REC_EVENT, 90), 0);
    /* a NULL free callback is allowed */
    r = alloc_reg(MPIT_PROVIDER_EVENT_EMPTY, NULL);
    CHECK_RC(MPI_T_event_handle_free(r, NULL, NULL), MPI_SUCCESS);
    CHECK_EQ(p_live(), live0);
}

/* ------------------------------------------------------------------------------------------ */
/* 3. Info hints                                                                               */

static int info_has(MPI_Info info, const char *key, const char *want)
{
    char v[256];
    int vl = sizeof v, flag = 0;
    if (MPI_Info_get_string(info, key, &vl, v, &flag) != MPI_SUCCESS || !flag)
        return want == NULL;
    return want != NULL && strcmp(v, want) == 0;
}

static void test_info(void)
{
    MPI_Info in, out;
    MPI_Info_create(&in);
    MPI_Info_set(in, "mpit_provider_label", "first");
    MPI_Info_set(in, "ignored_hint", "x");
    MPI_T_event_registration r = NULL;
    CHECK_RC(MPI_T_event_handle_alloc(MPIT_PROVIDER_EVENT_P2P_SEND, NULL, in, &r), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_handle_get_info(r, &out), MPI_SUCCESS);
    CHECK(info_has(out, "mpit_provider_label", "first"));
    CHECK(info_has(out, "mpit_provider_event", "p2p_send"));
    CHECK(info_has(out, "mpit_provider_bind", "MPI_T_BIND_NO_OBJECT"));
    CHECK(info_has(out, "ignored_hint", NULL));
    MPI_Info_free(&out);
    /* set_info changes only the hints it names */
    MPI_Info upd;
    MPI_Info_create(&upd);
    MPI_Info_set(upd, "something_else", "y");
    CHECK_RC(MPI_T_event_handle_set_info(r, upd), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_handle_get_info(r, &out), MPI_SUCCESS);
    CHECK(info_has(out, "mpit_provider_label", "first"));
    MPI_Info_free(&out);
    MPI_Info_set(upd, "mpit_provider_label", "second");
    CHECK_RC(MPI_T_event_handle_set_info(r, upd), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_handle_get_info(r, &out), MPI_SUCCESS);
    CHECK(info_has(out, "mpit_provider_label", "second"));
    MPI_Info_free(&out);

    /* callback hints, per level; registering again overwrites them */
    static cbid_t id = {80, MPIT_PROVIDER_EVENT_P2P_SEND, MPI_T_CB_REQUIRE_THREAD_SAFE};
    MPI_Info_set(in, "mpit_provider_label", "cb");
    CHECK_RC(MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_THREAD_SAFE, in, &id, rec_cb),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_event_callback_get_info(r, MPI_T_CB_REQUIRE_THREAD_SAFE, &out), MPI_SUCCESS);
    CHECK(info_has(out, "mpit_provider_label", "cb"));
    CHECK(info_has(out, "mpit_provider_cb_safety", "MPI_T_CB_REQUIRE_THREAD_SAFE"));
    MPI_Info_free(&out);
    CHECK_RC(MPI_T_event_callback_set_info(r, MPI_T_CB_REQUIRE_THREAD_SAFE, upd), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_callback_get_info(r, MPI_T_CB_REQUIRE_THREAD_SAFE, &out), MPI_SUCCESS);
    CHECK(info_has(out, "mpit_provider_label", "second"));
    MPI_Info_free(&out);
    CHECK_RC(MPI_T_event_callback_get_info(r, MPI_T_CB_REQUIRE_THREAD_SAFE, NULL),
             MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, &id,
                                           rec_cb),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_event_callback_get_info(r, MPI_T_CB_REQUIRE_THREAD_SAFE, &out), MPI_SUCCESS);
    CHECK(info_has(out, "mpit_provider_label", NULL));
    MPI_Info_free(&out);
    /* removing the callback removes its hints */
    CHECK_RC(MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL,
                                           NULL),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_event_callback_get_info(r, MPI_T_CB_REQUIRE_THREAD_SAFE, &out),
             MPI_T_ERR_INVALID);
    MPI_Info_free(&in);
    MPI_Info_free(&upd);
    CHECK_RC(MPI_T_event_handle_free(r, NULL, NULL), MPI_SUCCESS);
}

/* ------------------------------------------------------------------------------------------ */
/* 4. The selection rule                                                                       */

static void test_selection(void)
{
    static cbid_t a = {10, MPIT_PROVIDER_EVENT_TEST, MPI_T_CB_REQUIRE_MPI_RESTRICTED};
    static cbid_t c = {10, MPIT_PROVIDER_EVENT_TEST, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE};
    static cbid_t n0 = {10, MPIT_PROVIDER_EVENT_TEST, MPI_T_CB_REQUIRE_NONE};
    MPI_T_event_registration r = alloc_reg(MPIT_PROVIDER_EVENT_TEST, NULL);
    /* the standard's advice: highest level first */
    CHECK_RC(MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, MPI_INFO_NULL,
                                           &c, rec_cb),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &a,
                                           rec_cb),
             MPI_SUCCESS);
    p_reset();
    /* context -> expected level: the lowest registered level >= context */
    const int want[4] = {MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_T_CB_REQUIRE_MPI_RESTRICTED,
                         MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE};
    /* the levels in order (0..3 in MPICH's header, 0x00/0x03/0x0F/0x3F in the MPI-5 ABI's) */
    const MPI_T_cb_safety level[4] = {MPI_T_CB_REQUIRE_NONE, MPI_T_CB_REQUIRE_MPI_RESTRICTED,
                                      MPI_T_CB_REQUIRE_THREAD_SAFE,
                                      MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE};
    for (int ctx = 0; ctx < 4; ctx++) {
        int base = g_nlog;
        struct mpit_provider_test d = test_data((uint64_t) ctx);
        CHECK_RC(p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, level[ctx], &d), MPI_SUCCESS);
        CHECK_EQ(g_nlog - base, 1);
        CHECK_EQ(g_log[base].level, want[ctx]);
        CHECK_EQ(g_log[base].ctx, (int) level[ctx]); /* cb_safety is the context's requirement */
        CHECK_EQ(g_log[base].data.test.seq, ctx);
        CHECK_EQ(g_log[base].source, 1);
    }
    CHECK_EQ(p_invoked(), 4);
    CHECK_EQ(p_dropped(), 0);
    /* a NONE callback takes NONE contexts */
    CHECK_RC(MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &n0, rec_cb),
             MPI_SUCCESS);
    int base = g_nlog;
    struct mpit_provider_test d = test_data(9);
    CHECK_RC(p_raise(MPIT_PROVIDER_EVENT_TEST, 1, &d), MPI_SUCCESS);
    CHECK_EQ(g_log[base].level, MPI_T_CB_REQUIRE_NONE);
    /* removing the highest level: THREAD_SAFE and ASYNC contexts are dropped */
    CHECK_RC(MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, MPI_INFO_NULL,
                                           NULL, NULL),
             MPI_SUCCESS);
    base = g_nlog;
    p_reset();
    CHECK_RC(p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d),
             MPI_SUCCESS);
    CHECK_RC(p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, &d),
             MPI_SUCCESS);
    CHECK_EQ(g_nlog - base, 0);
    CHECK_EQ(p_dropped(), 2);
    CHECK_RC(p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_MPI_RESTRICTED, &d),
             MPI_SUCCESS);
    CHECK_EQ(g_nlog - base, 1);
    CHECK_EQ(g_log[base].level, MPI_T_CB_REQUIRE_MPI_RESTRICTED);

    /* raise_many: stride and count */
    struct mpit_provider_test many[5];
    for (int i = 0; i < 5; i++)
        many[i] = test_data(100 + (uint64_t) i);
    base = g_nlog;
    CHECK_RC(p_raise_many(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_NONE, NULL, many,
                          sizeof many[0], 5),
             MPI_SUCCESS);
    CHECK_EQ(g_nlog - base, 5);
    for (int i = 0; i < 5 && base + i < g_nlog; i++) {
        CHECK_EQ(g_log[base + i].data.test.seq, 100 + i);
        CHECK(g_log[base + i].data.test.value == (double) (100 + i) / 4);
        CHECK_EQ(g_log[base + i].data.test.id, (100 + i) * 3);
        CHECK_EQ(g_log[base + i].data.test.flag, 'a' + (100 + i) % 26);
    }
    static cbid_t fid = {10, 0, 0};
    free_reg(r, &fid);
}

/* A raise from inside a callback is in (at least) that callback's context; the outer instance
 * is not valid inside the inner callback and valid again after. */
static MPI_T_event_registration g_outer_reg;
static int g_inner_ok;
static void outer_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety ctx,
                     void *ud)
{
    (void) reg;
    (void) ud;
    CHECK_EQ(ctx, MPI_T_CB_REQUIRE_THREAD_SAFE);
    int base = g_nlog;
    CHECK_RC(p_raise_at(MPIT_PROVIDER_EVENT_EMPTY, 1, MPI_T_CB_REQUIRE_NONE, NULL), MPI_SUCCESS);
    CHECK_EQ(g_nlog - base, 1);
    if (g_nlog - base == 1) {
        CHECK_EQ(g_log[base].level, MPI_T_CB_REQUIRE_THREAD_SAFE);
        CHECK_EQ(g_log[base].ctx, MPI_T_CB_REQUIRE_THREAD_SAFE);
    }
    /* the inner instance is gone, the outer one is valid again */
    char buf[8];
    CHECK_RC(MPI_T_event_copy(g_stale_instance, buf), MPI_T_ERR_INVALID_HANDLE);
    uint64_t seq = 0;
    CHECK_RC(MPI_T_event_read(inst, 0, &seq), MPI_SUCCESS);
    CHECK_EQ(seq, 77);
    g_inner_ok = 1;
}

static void test_nested(void)
{
    static cbid_t none = {20, MPIT_PROVIDER_EVENT_EMPTY, MPI_T_CB_REQUIRE_NONE};
    static cbid_t ts = {20, MPIT_PROVIDER_EVENT_EMPTY, MPI_T_CB_REQUIRE_THREAD_SAFE};
    MPI_T_event_registration inner = alloc_reg(MPIT_PROVIDER_EVENT_EMPTY, NULL);
    MPI_T_event_register_callback(inner, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, &ts,
                                  rec_cb);
    MPI_T_event_register_callback(inner, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &none, rec_cb);
    g_outer_reg = alloc_reg(MPIT_PROVIDER_EVENT_TEST, NULL);
    MPI_T_event_register_callback(g_outer_reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL,
                                  outer_cb);
    struct mpit_provider_test d = test_data(77);
    g_inner_ok = 0;
    CHECK_RC(p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d),
             MPI_SUCCESS);
    CHECK(g_inner_ok);
    MPI_T_event_handle_free(inner, NULL, NULL);
    MPI_T_event_handle_free(g_outer_reg, NULL, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* 5. Dropped events                                                                           */

static void test_dropped(void)
{
    static cbid_t a = {30, MPIT_PROVIDER_EVENT_TEST, MPI_T_CB_REQUIRE_MPI_RESTRICTED};
    static cbid_t b = {31, MPIT_PROVIDER_EVENT_EMPTY, MPI_T_CB_REQUIRE_MPI_RESTRICTED};
    CHECK_RC(p_set_scope(MPIT_PROVIDER_DROPS_PER_SOURCE), MPI_SUCCESS);
    MPI_T_event_registration ra = alloc_reg(MPIT_PROVIDER_EVENT_TEST, NULL);
    MPI_T_event_register_callback(ra, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &a, rec_cb);
    CHECK_RC(MPI_T_event_set_dropped_handler(ra, rec_dropped), MPI_SUCCESS);

    /* E1 delivered, E2 E3 dropped (THREAD_SAFE > RESTRICTED), E4: report(2) then E4 */
    struct mpit_provider_test d[4];
    for (int i = 0; i < 4; i++)
        d[i] = test_data((uint64_t) i + 1);
    int base = g_nlog;
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_NONE, &d[0]);
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d[1]);
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, &d[2]);
    CHECK_EQ(g_nlog - base, 1);
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_MPI_RESTRICTED, &d[3]);
    CHECK_EQ(g_nlog - base, 3);
    if (g_nlog - base == 3) {
        CHECK_EQ(g_log[base].kind, REC_EVENT);
        CHECK_EQ(g_log[base].data.test.seq, 1);
        CHECK_EQ(g_log[base + 1].kind, REC_DROPPED);
        CHECK_EQ(g_log[base + 1].count, 2);
        CHECK_EQ(g_log[base + 1].source, 1);
        CHECK_EQ(g_log[base + 1].ctx, MPI_T_CB_REQUIRE_MPI_RESTRICTED);
        CHECK_EQ(g_log[base + 1].id, 30); /* user_data of the callback chosen */
        CHECK_EQ(g_log[base + 2].kind, REC_EVENT);
        CHECK_EQ(g_log[base + 2].data.test.seq, 4);
    }

    /* per source: drops of sources 1 and 2 are reported before the next event of each */
    base = g_nlog;
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d[0]);
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d[0]);
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 2, MPI_T_CB_REQUIRE_THREAD_SAFE, &d[0]);
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 2, MPI_T_CB_REQUIRE_NONE, &d[1]);
    CHECK_EQ(g_nlog - base, 2);
    if (g_nlog - base == 2) {
        CHECK(g_log[base].kind == REC_DROPPED && g_log[base].source == 2 &&
              g_log[base].count == 1);
        CHECK(g_log[base + 1].kind == REC_EVENT && g_log[base + 1].source == 2);
    }
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_NONE, &d[2]);
    CHECK_EQ(g_nlog - base, 4);
    if (g_nlog - base == 4) {
        CHECK(g_log[base + 2].kind == REC_DROPPED && g_log[base + 2].source == 1 &&
              g_log[base + 2].count == 2);
        CHECK(g_log[base + 3].kind == REC_EVENT && g_log[base + 3].source == 1);
    }

    /* across registrations (the standard's E1..E5): ra's drop of source 1 is reported before
     * an event of source 1 of another type is delivered to rb */
    MPI_T_event_registration rb = alloc_reg(MPIT_PROVIDER_EVENT_EMPTY, NULL);
    MPI_T_event_register_callback(rb, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &b, rec_cb);
    base = g_nlog;
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d[0]);
    p_raise_at(MPIT_PROVIDER_EVENT_EMPTY, 1, MPI_T_CB_REQUIRE_NONE, NULL);
    CHECK_EQ(g_nlog - base, 2);
    if (g_nlog - base == 2) {
        CHECK(g_log[base].kind == REC_DROPPED && g_log[base].id == 30 &&
              g_log[base].count == 1 && g_log[base].source == 1);
        CHECK(g_log[base + 1].kind == REC_EVENT && g_log[base + 1].id == 31);
    }
    /* an event of another source does not report them */
    base = g_nlog;
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d[0]);
    p_raise_at(MPIT_PROVIDER_EVENT_EMPTY, 2, MPI_T_CB_REQUIRE_NONE, NULL);
    CHECK_EQ(g_nlog - base, 1);
    CHECK_EQ(count_kind(base, REC_DROPPED, -1), 0);
    /* nor one whose context no callback of ra suffices for: the report waits */
    p_raise_at(MPIT_PROVIDER_EVENT_EMPTY, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, NULL); /* dropped by rb too */
    CHECK_EQ(count_kind(base, REC_DROPPED, -1), 0);
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_NONE, &d[1]);
    CHECK_EQ(count_kind(base, REC_DROPPED, 30), 1);
    CHECK_EQ(count_kind(base, REC_EVENT, 30), 1);

    /* the model's scope: reported on the registration's own next event of the source */
    CHECK_RC(p_set_scope(MPIT_PROVIDER_DROPS_PER_REGISTRATION), MPI_SUCCESS);
    base = g_nlog;
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d[0]);
    p_raise_at(MPIT_PROVIDER_EVENT_EMPTY, 1, MPI_T_CB_REQUIRE_NONE, NULL);
    CHECK_EQ(g_nlog - base, 1);
    CHECK_EQ(g_log[base].id, 31);
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_NONE, &d[1]);
    CHECK_EQ(g_nlog - base, 3);
    CHECK(g_log[base + 1].kind == REC_DROPPED && g_log[base + 1].count == 1);
    CHECK_RC(p_set_scope(MPIT_PROVIDER_DROPS_PER_SOURCE), MPI_SUCCESS);

    /* no handler: nothing recorded; a new handler counts from zero */
    CHECK_RC(MPI_T_event_set_dropped_handler(ra, NULL), MPI_SUCCESS);
    base = g_nlog;
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d[0]);
    CHECK_RC(MPI_T_event_set_dropped_handler(ra, rec_dropped), MPI_SUCCESS);
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_NONE, &d[0]);
    CHECK_EQ(count_kind(base, REC_DROPPED, -1), 0);
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d[0]);
    CHECK_RC(MPI_T_event_set_dropped_handler(ra, rec_dropped), MPI_SUCCESS); /* resets */
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_NONE, &d[0]);
    CHECK_EQ(count_kind(base, REC_DROPPED, -1), 0);

    /* no callback at all: every event dropped and counted, reported once one is registered */
    MPI_T_event_registration rc = alloc_reg(MPIT_PROVIDER_EVENT_TEST, NULL);
    static cbid_t c = {32, MPIT_PROVIDER_EVENT_TEST, MPI_T_CB_REQUIRE_NONE};
    MPI_T_event_set_dropped_handler(rc, rec_dropped);
    base = g_nlog;
    for (int i = 0; i < 3; i++)
        p_raise(MPIT_PROVIDER_EVENT_TEST, 2, &d[0]);
    MPI_T_event_register_callback(rc, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &c, rec_cb);
    p_raise(MPIT_PROVIDER_EVENT_TEST, 2, &d[0]);
    int found = 0;
    for (int i = base; i < g_nlog; i++)
        if (g_log[i].kind == REC_DROPPED && g_log[i].id == 32) {
            found = 1;
            CHECK_EQ(g_log[i].count, 3);
            CHECK(i + 1 < g_nlog && g_log[i + 1].kind == REC_EVENT);
        }
    CHECK(found);
    static cbid_t fid = {33, 0, 0};
    free_reg(ra, &fid);
    free_reg(rb, &fid);
    free_reg(rc, &fid);
}

/* Deferred delivery: a buffer of 3 takes E1..E3 of five, E4 E5 are dropped; delivery then
 * reports the 2 drops and invokes E1..E3 in order, with the timestamps of their raising. */
static void test_deferred(void)
{
    static cbid_t a = {40, MPIT_PROVIDER_EVENT_TEST, MPI_T_CB_REQUIRE_NONE};
    MPI_T_event_registration ra = alloc_reg(MPIT_PROVIDER_EVENT_TEST, NULL);
    MPI_T_event_register_callback(ra, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &a, rec_cb);
    CHECK_RC(MPI_T_event_set_dropped_handler(ra, rec_dropped), MPI_SUCCESS);
    CHECK_RC(p_set_capacity(-1), MPI_T_ERR_INVALID);
    CHECK_RC(p_set_capacity(3), MPI_SUCCESS);
    CHECK_RC(p_defer_many(MPIT_PROVIDER_EVENT_COMM_SEND, 0, NULL, 0, 1), MPI_T_ERR_INVALID);
    CHECK_RC(p_defer_many(MPIT_PROVIDER_EVENT_TEST, 0, NULL, 0, 1), MPI_T_ERR_INVALID);
    CHECK_RC(p_defer_many(MPIT_PROVIDER_EVENT_TEST, MPIT_PROVIDER_NUM_SOURCES, NULL, 0, 1),
             MPI_T_ERR_INVALID_INDEX);
    struct mpit_provider_test d[5];
    for (int i = 0; i < 5; i++)
        d[i] = test_data((uint64_t) i + 1);
    p_reset();
    int base = g_nlog;
    MPI_Count before = 0;
    MPI_T_source_get_timestamp(0, &before);
    CHECK_RC(p_defer_many(MPIT_PROVIDER_EVENT_TEST, 0, d, sizeof d[0], 5), MPI_SUCCESS);
    MPI_Count after = 0;
    MPI_T_source_get_timestamp(0, &after);
    CHECK_EQ(g_nlog - base, 0);
    CHECK_EQ(p_dropped(), 2);
    CHECK_RC(p_set_capacity(8), MPI_T_ERR_INVALID); /* instances wait */
    CHECK_EQ(p_deliver(), 3);
    CHECK_EQ(g_nlog - base, 4);
    if (g_nlog - base == 4) {
        CHECK(g_log[base].kind == REC_DROPPED && g_log[base].count == 2 &&
              g_log[base].source == 0 && g_log[base].id == 40);
        for (int i = 1; i < 4; i++) {
            CHECK_EQ(g_log[base + i].kind, REC_EVENT);
            CHECK_EQ(g_log[base + i].data.test.seq, (uint64_t) i);
            /* raised between the two reads; an equal tick is moved up one (ordered source) */
            CHECK(g_log[base + i].ts >= before && g_log[base + i].ts <= after + 3);
            CHECK(i == 1 || g_log[base + i].ts > g_log[base + i - 1].ts);
        }
    }
    CHECK_EQ(p_invoked(), 3);
    CHECK_EQ(p_deliver(), 0);
    CHECK_RC(p_set_capacity(0), MPI_SUCCESS);
    static cbid_t fid = {41, 0, 0};
    free_reg(ra, &fid);
}

/* ------------------------------------------------------------------------------------------ */
/* 6. Free callbacks                                                                           */

static atomic_int f_free_calls, f_cb_after_free, f_cb_calls, f_in_cb, f_cb_done;
static atomic_int f_free_saw_done;
static MPI_T_event_registration f_reg;

static void self_free_cb(MPI_T_event_instance inst, MPI_T_event_registration reg,
                         MPI_T_cb_safety ctx, void *ud)
{
    (void) inst;
    (void) ctx;
    atomic_fetch_add(&f_cb_calls, 1);
    CHECK_RC(MPI_T_event_handle_free(reg, ud, rec_free), MPI_SUCCESS);
    CHECK_EQ(count_kind(0, REC_FREE, 40), 0); /* not while this invocation runs */
    CHECK_RC(MPI_T_event_handle_free(reg, ud, rec_free), MPI_T_ERR_INVALID_HANDLE);
}

static void slow_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety ctx,
                    void *ud)
{
    (void) inst;
    (void) reg;
    (void) ctx;
    (void) ud;
    if (atomic_load(&f_free_calls) > 0)
        atomic_fetch_add(&f_cb_after_free, 1);
    atomic_fetch_add(&f_cb_calls, 1);
    atomic_store(&f_in_cb, 1);
    usleep(200000);
    atomic_store(&f_cb_done, 1);
}

static void counting_free(MPI_T_event_registration reg, MPI_T_cb_safety ctx, void *ud)
{
    (void) reg;
    (void) ctx;
    (void) ud;
    if (atomic_load(&f_cb_done))
        atomic_store(&f_free_saw_done, 1);
    atomic_fetch_add(&f_free_calls, 1);
}

static void *slow_raiser(void *arg)
{
    (void) arg;
    struct mpit_provider_test d = test_data(1);
    p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d);
    return NULL;
}

static atomic_int s_stop;
static void stress_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety ctx,
                      void *ud)
{
    (void) reg;
    (void) ud;
    if (atomic_load(&f_free_calls) > 0)
        atomic_fetch_add(&f_cb_after_free, 1);
    uint64_t seq;
    if (MPI_T_event_read(inst, 0, &seq) != MPI_SUCCESS || ctx != MPI_T_CB_REQUIRE_THREAD_SAFE)
        atomic_fetch_add(&g_fails, 1);
    atomic_fetch_add(&f_cb_calls, 1);
}

static void *stress_raiser(void *arg)
{
    long id = (long) arg;
    struct mpit_provider_test d = test_data((uint64_t) id);
    while (!atomic_load(&s_stop))
        for (int i = 0; i < 100; i++)
            p_raise_at(MPIT_PROVIDER_EVENT_TEST, (int) (id % 2) + 1, MPI_T_CB_REQUIRE_THREAD_SAFE,
                       &d);
    return NULL;
}

static void test_free(void)
{
    int live0 = p_live();
    /* freed from inside its own callback: the free callback runs after that invocation */
    static cbid_t id = {40, MPIT_PROVIDER_EVENT_TEST, MPI_T_CB_REQUIRE_NONE};
    MPI_T_event_registration r = alloc_reg(MPIT_PROVIDER_EVENT_TEST, NULL);
    MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &id, self_free_cb);
    struct mpit_provider_test d = test_data(1);
    int base = g_nlog;
    atomic_store(&f_cb_calls, 0);
    CHECK_RC(p_raise(MPIT_PROVIDER_EVENT_TEST, 1, &d), MPI_SUCCESS);
    CHECK_EQ(atomic_load(&f_cb_calls), 1);
    CHECK_EQ(count_kind(base, REC_FREE, 40), 1);
    CHECK_RC(p_raise(MPIT_PROVIDER_EVENT_TEST, 1, &d), MPI_SUCCESS);
    CHECK_EQ(atomic_load(&f_cb_calls), 1);
    CHECK_EQ(count_kind(base, REC_FREE, 40), 1);
    CHECK_EQ(p_live(), live0);

    /* freed on this thread while its callback runs on another: MPI_T_event_handle_free returns
     * at once; the free callback runs once, after the in-flight invocation has returned */
    atomic_store(&f_free_calls, 0);
    atomic_store(&f_cb_calls, 0);
    atomic_store(&f_cb_after_free, 0);
    atomic_store(&f_in_cb, 0);
    atomic_store(&f_cb_done, 0);
    f_reg = alloc_reg(MPIT_PROVIDER_EVENT_TEST, NULL);
    MPI_T_event_register_callback(f_reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL,
                                  slow_cb);
    pthread_t t;
    pthread_create(&t, NULL, slow_raiser, NULL);
    while (!atomic_load(&f_in_cb))
        usleep(1000);
    CHECK_RC(MPI_T_event_handle_free(f_reg, NULL, counting_free), MPI_SUCCESS);
    CHECK_EQ(atomic_load(&f_free_calls), 0);
    CHECK_RC(p_raise_at(MPIT_PROVIDER_EVENT_TEST, 1, MPI_T_CB_REQUIRE_THREAD_SAFE, &d),
             MPI_SUCCESS);
    pthread_join(t, NULL);
    CHECK_EQ(atomic_load(&f_free_calls), 1);
    CHECK_EQ(atomic_load(&f_free_saw_done), 1);
    CHECK_EQ(atomic_load(&f_cb_calls), 1);
    CHECK_EQ(p_live(), live0);

    /* stress: 4 threads raise at THREAD_SAFE on two unordered sources while the handle is
     * freed; the free callback runs exactly once and no callback runs after it */
    atomic_store(&f_free_calls, 0);
    atomic_store(&f_cb_calls, 0);
    atomic_store(&f_cb_after_free, 0);
    atomic_store(&f_cb_done, 0);
    atomic_store(&s_stop, 0);
    for (int round = 0; round < 5; round++) {
        f_reg = alloc_reg(MPIT_PROVIDER_EVENT_TEST, NULL);
        MPI_T_event_register_callback(f_reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL,
                                      stress_cb);
        atomic_store(&f_free_calls, 0);
        atomic_store(&s_stop, 0);
        pthread_t th[4];
        for (long i = 0; i < 4; i++)
            pthread_create(&th[i], NULL, stress_raiser, (void *) i);
        usleep(20000);
        CHECK_RC(MPI_T_event_handle_free(f_reg, NULL, counting_free), MPI_SUCCESS);
        usleep(20000);
        atomic_store(&s_stop, 1);
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        CHECK_EQ(atomic_load(&f_free_calls), 1);
        CHECK_EQ(atomic_load(&f_cb_after_free), 0);
        CHECK_EQ(p_live(), live0);
    }
    CHECK(atomic_load(&f_cb_calls) > 0);
}

/* ------------------------------------------------------------------------------------------ */
/* 7. Real traffic between the two ranks                                                       */

/* The communicator as the provider reports it (MPI_Comm_toint in the MPI-5 ABI). */
static int comm_int(MPI_Comm comm)
{
#if defined(MPI_ABI_VERSION)
    return MPI_Comm_toint(comm);
#else
    return (int) MPI_Comm_c2f(comm);
#endif
}

static int cmp_p2p(const rec_t *r, int peer, int tag, MPI_Count bytes, MPI_Comm comm)
{
    return r->data.p2p.peer == peer && r->data.p2p.tag == tag && r->data.p2p.bytes == bytes &&
           r->data.p2p.comm == comm_int(comm);
}

static void test_traffic(int rank, int size)
{
    CHECK_EQ(size, 2);
    const int peer = 1 - rank;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm world = MPI_COMM_WORLD;

    static cbid_t ids[6] = {{50, MPIT_PROVIDER_EVENT_P2P_SEND, MPI_T_CB_REQUIRE_MPI_RESTRICTED},
                            {51, MPIT_PROVIDER_EVENT_P2P_RECV, MPI_T_CB_REQUIRE_MPI_RESTRICTED},
                            {52, MPIT_PROVIDER_EVENT_COMM_SEND, MPI_T_CB_REQUIRE_MPI_RESTRICTED},
                            {53, MPIT_PROVIDER_EVENT_COMM_RECV, MPI_T_CB_REQUIRE_MPI_RESTRICTED},
                            {54, MPIT_PROVIDER_EVENT_UNEXP_ENQUEUED, MPI_T_CB_REQUIRE_MPI_RESTRICTED},
                            {55, MPIT_PROVIDER_EVENT_UNEXP_DEQUEUED, MPI_T_CB_REQUIRE_MPI_RESTRICTED}};
    MPI_T_event_registration rs = alloc_reg(MPIT_PROVIDER_EVENT_P2P_SEND, NULL);
    MPI_T_event_registration rr = alloc_reg(MPIT_PROVIDER_EVENT_P2P_RECV, NULL);
    MPI_T_event_registration rcs = alloc_reg(MPIT_PROVIDER_EVENT_COMM_SEND, &world);
    MPI_T_event_registration rcr = alloc_reg(MPIT_PROVIDER_EVENT_COMM_RECV, &dup);
    MPI_T_event_register_callback(rs, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &ids[0],
                                  rec_cb);
    MPI_T_event_register_callback(rr, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &ids[1],
                                  rec_cb);
    MPI_T_event_register_callback(rcs, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &ids[2],
                                  rec_cb);
    MPI_T_event_register_callback(rcr, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &ids[3],
                                  rec_cb);
    int base = g_nlog;

    /* a) blocking sends of 1..5 ints with tags 100..104 from rank 0; received by tag, the last
     *    one with MPI_ANY_SOURCE/MPI_ANY_TAG */
    int buf[64];
    for (int i = 0; i < 64; i++)
        buf[i] = i;
    if (rank == 0) {
        for (int i = 0; i < 5; i++)
            MPI_Send(buf, i + 1, MPI_INT, 1, 100 + i, MPI_COMM_WORLD);
    } else {
        for (int i = 0; i < 4; i++)
            MPI_Recv(buf, 64, MPI_INT, 0, 100 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Status st;
        MPI_Recv(buf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK_EQ(st.MPI_TAG, 104);
    }
    /* b) nonblocking on the duplicate: rank 1 sends 2 doubles (tag 300) and 3 chars (tag 301)
     *    with Isend; rank 0 receives with Irecv + Waitall (statuses ignored) */
    double dbl[2] = {1.5, 2.5};
    char chars[3] = {'x', 'y', 'z'};
    if (rank == 1) {
        MPI_Request q[2];
        MPI_Isend(dbl, 2, MPI_DOUBLE, 0, 300, dup, &q[0]);
        MPI_Isend(chars, 3, MPI_CHAR, 0, 301, dup, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    } else {
        double rd[2];
        char rc[3];
        MPI_Request q[2];
        MPI_Irecv(rd, 2, MPI_DOUBLE, 1, 300, dup, &q[0]);
        MPI_Irecv(rc, 3, MPI_CHAR, 1, 301, dup, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        CHECK(rd[1] == 2.5 && rc[2] == 'z');
    }
    /* c) MPI_Sendrecv both ways: 7 ints, tag 400 + rank */
    MPI_Status st;
    MPI_Sendrecv(buf, 7, MPI_INT, peer, 400 + rank, buf + 8, 7, MPI_INT, peer, 400 + peer,
                 MPI_COMM_WORLD, &st);
    CHECK_EQ(st.MPI_SOURCE, peer);
    /* d) Irecv + Wait / Isend + Test loop: rank 0 -> rank 1, 10 ints, tag 500 */
    if (rank == 0) {
        MPI_Request q;
        int flag = 0;
        MPI_Isend(buf, 10, MPI_INT, 1, 500, MPI_COMM_WORLD, &q);
        while (!flag)
            MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    } else {
        MPI_Request q;
        MPI_Irecv(buf + 16, 10, MPI_INT, 0, 500, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, &st);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Expected: this rank's sends (p2p_send, comm_send for world only) and receives (p2p_recv,
     * comm_recv for dup only), in program order, all on the ordered source. */
    typedef struct {
        int id, peer, tag;
        MPI_Count bytes;
        MPI_Comm comm;
    } exp_t;
    exp_t exp[32];
    int ne = 0;
    const MPI_Count I = sizeof(int);
#define EXPECT(id_, peer_, tag_, bytes_, comm_)                                               \
    exp[ne++] = (exp_t){id_, peer_, tag_, bytes_, comm_}
    if (rank == 0) {
        for (int i = 0; i < 5; i++) {
            EXPECT(50, 1, 100 + i, (i + 1) * I, world);
            EXPECT(52, 1, 100 + i, (i + 1) * I, world);
        }
        EXPECT(51, 1, 300, 2 * sizeof(double), dup);
        EXPECT(53, 1, 300, 2 * sizeof(double), dup);
        EXPECT(51, 1, 301, 3, dup);
        EXPECT(53, 1, 301, 3, dup);
        EXPECT(50, 1, 400, 7 * I, world);
        EXPECT(52, 1, 400, 7 * I, world);
        EXPECT(51, 1, 401, 7 * I, world);
        EXPECT(50, 1, 500, 10 * I, world);
        EXPECT(52, 1, 500, 10 * I, world);
    } else {
        for (int i = 0; i < 5; i++)
            EXPECT(51, 0, 100 + i, (i + 1) * I, world);
        EXPECT(50, 0, 300, 2 * sizeof(double), dup);
        EXPECT(50, 0, 301, 3, dup);
        EXPECT(50, 0, 401, 7 * I, world);
        EXPECT(52, 0, 401, 7 * I, world);
        EXPECT(51, 0, 400, 7 * I, world);
        EXPECT(51, 0, 500, 10 * I, world);
    }
    CHECK_EQ(g_nlog - base, ne);
    MPI_Count last_ts = 0;
    for (int i = 0; i < ne && base + i < g_nlog; i++) {
        const rec_t *r = &g_log[base + i];
        CHECK_EQ(r->kind, REC_EVENT);
        CHECK_EQ(r->id, exp[i].id);
        CHECK_EQ(r->source, MPIT_PROVIDER_SOURCE_MONOTONIC);
        CHECK_EQ(r->ctx, MPI_T_CB_REQUIRE_MPI_RESTRICTED);
        CHECK(r->ts > last_ts); /* ordered source: strictly increasing in delivery order */
        last_ts = r->ts;
        if (r->id == 52 || r->id == 53) {
            CHECK(r->data.comm.peer == exp[i].peer && r->data.comm.tag == exp[i].tag &&
                  r->data.comm.bytes == exp[i].bytes);
        } else {
            CHECK(cmp_p2p(r, exp[i].peer, exp[i].tag, exp[i].bytes, exp[i].comm));
        }
        if (!(r->id == exp[i].id))
            fprintf(stderr, "rank %d event %d: id %d peer %d tag %d bytes %lld\n", rank, i,
                    r->id, r->data.p2p.peer, r->data.p2p.tag, (long long) r->data.p2p.bytes);
    }

    /* e) the unexpected queue: rank 0 sends 3 messages (tags 200..202, 1..3 ints) before
     *    rank 1 receives; rank 1 waits (MPI_Iprobe) until all three have arrived, then
     *    receives them with MPI_ANY_TAG */
    MPI_T_event_registration ren = alloc_reg(MPIT_PROVIDER_EVENT_UNEXP_ENQUEUED, NULL);
    MPI_T_event_registration rde = alloc_reg(MPIT_PROVIDER_EVENT_UNEXP_DEQUEUED, NULL);
    MPI_T_event_register_callback(ren, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &ids[4],
                                  rec_cb);
    MPI_T_event_register_callback(rde, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &ids[5],
                                  rec_cb);
    MPI_Barrier(MPI_COMM_WORLD);
    base = g_nlog;
    if (rank == 0) {
        for (int i = 0; i < 3; i++)
            MPI_Send(buf, i + 1, MPI_INT, 1, 200 + i, MPI_COMM_WORLD);
    } else {
        for (int i = 0; i < 3; i++) {
            int flag = 0;
            while (!flag)
                MPI_Iprobe(0, 200 + i, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < 3; i++)
            MPI_Recv(buf, 64, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank == 1) {
        CHECK_EQ(g_nlog - base, 9);
        for (int i = 0; i < 3 && base + 3 * i + 2 < g_nlog; i++) {
            const rec_t *r = &g_log[base + 3 * i];
            CHECK_EQ(r[0].id, 54);
            CHECK_EQ(r[1].id, 55);
            CHECK_EQ(r[2].id, 51);
            for (int k = 0; k < 3; k++)
                CHECK(cmp_p2p(&r[k], 0, 200 + i, (i + 1) * I, world));
        }
    } else {
        CHECK_EQ(count_kind(base, REC_EVENT, 54) + count_kind(base, REC_EVENT, 55), 0);
        CHECK_EQ(count_kind(base, REC_EVENT, 50), 3);
    }
    /* the unexpected path of MPI_Irecv and MPI_Sendrecv: rank 0 sends tag 210 (4 ints) and
     * tag 211 (5 ints); rank 1 receives 210 with MPI_Irecv and 211 with MPI_Sendrecv */
    MPI_Barrier(MPI_COMM_WORLD);
    base = g_nlog;
    if (rank == 0) {
        MPI_Send(buf, 4, MPI_INT, 1, 210, MPI_COMM_WORLD);
        MPI_Send(buf, 5, MPI_INT, 1, 211, MPI_COMM_WORLD);
        MPI_Recv(buf, 64, MPI_INT, 1, 212, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        int flag = 0;
        while (!flag)
            MPI_Iprobe(0, 211, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Request q;
        MPI_Irecv(buf, 64, MPI_INT, 0, 210, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Sendrecv(buf, 1, MPI_INT, 0, 212, buf + 32, 32, MPI_INT, 0, 211, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        /* enq 210, deq 210, recv 210 (at MPI_Wait), send 212, enq 211, deq 211, recv 211 */
        CHECK_EQ(g_nlog - base, 8);
        if (g_nlog - base == 8) {
            const rec_t *r = &g_log[base];
            CHECK(r[0].id == 54 && cmp_p2p(&r[0], 0, 210, 4 * I, world));
            CHECK(r[1].id == 55 && cmp_p2p(&r[1], 0, 210, 4 * I, world));
            CHECK(r[2].id == 51 && cmp_p2p(&r[2], 0, 210, 4 * I, world));
            CHECK(r[3].id == 50 && cmp_p2p(&r[3], 0, 212, I, world));
            CHECK(r[4].id == 52);
            CHECK(r[5].id == 54 && cmp_p2p(&r[5], 0, 211, 5 * I, world));
            CHECK(r[6].id == 55 && cmp_p2p(&r[6], 0, 211, 5 * I, world));
            CHECK(r[7].id == 51 && cmp_p2p(&r[7], 0, 211, 5 * I, world));
        }
    }

    /* f) a bound raise from the control API reaches the registration of that communicator
     *    only; the activity context is configurable */
    base = g_nlog;
    struct mpit_provider_comm_p2p cd = {7, 8, 9};
    CHECK_RC(p_raise_bound(MPIT_PROVIDER_EVENT_COMM_RECV, 1, MPI_T_CB_REQUIRE_NONE, &world, &cd),
             MPI_SUCCESS);
    CHECK_EQ(g_nlog - base, 0);
    CHECK_RC(p_raise_bound(MPIT_PROVIDER_EVENT_COMM_RECV, 1, MPI_T_CB_REQUIRE_NONE, &dup, &cd),
             MPI_SUCCESS);
    CHECK_EQ(g_nlog - base, 1);
    CHECK(g_log[base].id == 53 && g_log[base].data.comm.peer == 7 &&
          g_log[base].data.comm.bytes == 9);
    CHECK_RC(p_set_activity(MPI_T_CB_REQUIRE_THREAD_SAFE), MPI_SUCCESS);
    p_reset();
    base = g_nlog;
    MPI_Sendrecv(buf, 1, MPI_INT, peer, 600, buf + 1, 1, MPI_INT, peer, 600, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK_EQ(g_nlog - base, 0); /* RESTRICTED callbacks are not sufficient */
    CHECK(p_dropped() >= 3);
    CHECK_RC(p_set_activity(MPI_T_CB_REQUIRE_MPI_RESTRICTED), MPI_SUCCESS);

    static cbid_t fid = {59, 0, 0};
    free_reg(rs, &fid);
    free_reg(rr, &fid);
    free_reg(rcs, &fid);
    free_reg(rcr, &fid);
    free_reg(ren, &fid);
    free_reg(rde, &fid);
    MPI_Comm_free(&dup);
}

/* ------------------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    load_control_api();
    test_before_init();

    /* One MPI_T epoch open across MPI_Init, closed before MPI_Finalize (see the README). */
    int provided = 0;
    if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_T_init_thread failed\n");
        return 2;
    }
    test_queries(); /* before MPI_Init: info objects too */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g_rank = rank;
    int live0 = p_live();

    test_misuse();
    test_info();
    test_selection();
    test_nested();
    test_dropped();
    test_deferred();
    test_free();
    MPI_Barrier(MPI_COMM_WORLD);
    test_traffic(rank, size);
    CHECK_EQ(p_live(), live0);
    CHECK_EQ(live0, 0);

    MPI_T_finalize();
    int n;
    CHECK_RC(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    struct mpit_provider_test d = test_data(1);
    CHECK_RC(p_raise(MPIT_PROVIDER_EVENT_TEST, 1, &d), MPI_T_ERR_NOT_INITIALIZED);

    int fails = atomic_load(&g_fails), total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d: %d checks, %d failures\n", rank, atomic_load(&g_checks), fails);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("event provider test: %s (%d failures on %d ranks)\n", total ? "FAILED" : "OK",
               total, size);
    MPI_Finalize();
    return total ? 1 : 0;
}
