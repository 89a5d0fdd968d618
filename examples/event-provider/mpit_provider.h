/*
 * mpit_provider.h: the control API of libmpit_event_provider.so, a test provider of the
 * MPI-4 event API (MPI-4.1 section 16.3.8) for MPICH, loaded with LD_PRELOAD.
 *
 * The provider implements every MPI_T_event_* and MPI_T_source_* function (and
 * MPI_T_category_get_num_events / MPI_T_category_get_events) of MPICH's mpi.h; the rest of
 * MPI_T passes through to MPICH. This header adds what a test or a benchmark needs on top:
 * the indices of the provider's sources and event types, the layouts of their event data,
 * and entry points that raise events on demand. See README.md in this directory.
 *
 * The indices below are what the provider exposes; portable tools should still look event
 * types up by name (MPI_T_event_get_index) and sources by MPI_T_source_get_info.
 */
#ifndef MPIT_PROVIDER_H_INCLUDED
#define MPIT_PROVIDER_H_INCLUDED

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this control API; mpit_provider_abi_version() returns it. */
#define MPIT_PROVIDER_ABI_VERSION 2

/* Sources (MPI_T_source_get_info). */
enum mpit_provider_source {
    /* "monotonic": MPI_T_SOURCE_ORDERED, CLOCK_MONOTONIC in ns (1e9 ticks/s), timestamps on
     * demand. The point-to-point wrappers raise their events here. Raises of this source are
     * serialised (callbacks included) so that timestamps strictly increase in callback order. */
    MPIT_PROVIDER_SOURCE_MONOTONIC = 0,
    /* "realtime": MPI_T_SOURCE_UNORDERED, CLOCK_REALTIME in ns since the epoch, on demand.
     * Raises from several threads run concurrently. */
    MPIT_PROVIDER_SOURCE_REALTIME = 1,
    /* "thread_cputime": MPI_T_SOURCE_UNORDERED, CLOCK_THREAD_CPUTIME_ID of the raising thread
     * in ns; MPI_T_source_get_timestamp returns MPI_T_ERR_NOT_SUPPORTED (no meaningful ad-hoc
     * timestamp for "the" source when every thread has its own clock). */
    MPIT_PROVIDER_SOURCE_THREAD_CPUTIME = 2,
    /* "tsc": MPI_T_SOURCE_ORDERED like "monotonic", but ticks of the CPU's invariant time-stamp
     * counter (rdtsc; about half the cost of clock_gettime), with ticks per second calibrated
     * against CLOCK_MONOTONIC_RAW once per process; on demand. Off x86-64 it is
     * CLOCK_MONOTONIC in ns. */
    MPIT_PROVIDER_SOURCE_TSC = 3,
    MPIT_PROVIDER_NUM_SOURCES = 4
};

/* Event types (MPI_T_event_get_info). */
enum mpit_provider_event {
    /* "unexp_message_enqueued": a message was found waiting in the unexpected queue when a
     * receive was posted (struct mpit_provider_p2p: peer = source rank). */
    MPIT_PROVIDER_EVENT_UNEXP_ENQUEUED = 0,
    /* "unexp_message_dequeued": that message was matched by the receive and left the queue. */
    MPIT_PROVIDER_EVENT_UNEXP_DEQUEUED = 1,
    /* "p2p_send": a send was started (MPI_Send, MPI_Ssend, MPI_Isend, MPI_Issend, MPI_Sendrecv). */
    MPIT_PROVIDER_EVENT_P2P_SEND = 2,
    /* "p2p_recv": a receive completed (MPI_Recv, MPI_Sendrecv, MPI_Irecv at its completion). */
    MPIT_PROVIDER_EVENT_P2P_RECV = 3,
    /* "comm_send" / "comm_recv": the same, bound to a communicator (MPI_T_BIND_MPI_COMM,
     * struct mpit_provider_comm_p2p); a registration sees the events of its communicator only. */
    MPIT_PROVIDER_EVENT_COMM_SEND = 4,
    MPIT_PROVIDER_EVENT_COMM_RECV = 5,
    /* "provider_test": raised by the control API only (struct mpit_provider_test). */
    MPIT_PROVIDER_EVENT_TEST = 6,
    /* "provider_empty": raised by the control API only; no elements. */
    MPIT_PROVIDER_EVENT_EMPTY = 7,
    MPIT_PROVIDER_NUM_EVENTS = 8
};

/* Event data of unexp_message_enqueued/dequeued, p2p_send and p2p_recv: elements
 * peer (MPI_INT, displacement 0), tag (MPI_INT, 4), bytes (MPI_COUNT, 8),
 * comm (MPI_INT, 16: MPI_Comm_c2f of the communicator); extent sizeof = 24. */
struct mpit_provider_p2p {
    int peer;
    int tag;
    MPI_Count bytes;
    int comm;
};

/* Event data of comm_send and comm_recv: peer (MPI_INT, 0), tag (MPI_INT, 4),
 * bytes (MPI_COUNT, 8); extent 16. */
struct mpit_provider_comm_p2p {
    int peer;
    int tag;
    MPI_Count bytes;
};

/* Event data of provider_test: seq (MPI_UINT64_T, 0), value (MPI_DOUBLE, 8),
 * id (MPI_INT, 16), flag (MPI_CHAR, 20); extent 24. */
struct mpit_provider_test {
    uint64_t seq;
    double value;
    int id;
    char flag;
};

/* How dropped-event reports are scheduled (mpit_provider_set_drop_scope). */
enum mpit_provider_drop_scope {
    /* Before any event of source S is delivered, every registration with unreported drops
     * of S is reported (when it has a callback sufficient for the context): the standard's
     * E1..E5 example taken literally. The default. */
    MPIT_PROVIDER_DROPS_PER_SOURCE = 0,
    /* A registration's drops of source S are reported just before the next event of S is
     * delivered to that same registration (mpit-core's event_model). */
    MPIT_PROVIDER_DROPS_PER_REGISTRATION = 1
};

/* MPIT_PROVIDER_ABI_VERSION. */
int mpit_provider_abi_version(void);

/* Raise one event of type event_index from source source_index in a context that requires
 * MPI_T_CB_REQUIRE_NONE. data points to the event data laid out by the type's displacements
 * (the layout MPI_T_event_copy produces; NULL allowed for a type without elements). Types bound
 * to an object need mpit_provider_raise_bound. The callbacks run on the calling thread before
 * this returns. Returns MPI_SUCCESS, MPI_T_ERR_NOT_INITIALIZED (MPI_T not initialised),
 * MPI_T_ERR_INVALID_INDEX (event or source index), MPI_T_ERR_INVALID (NULL data, bad context,
 * bound type without object). Raising from a real signal handler is not supported (the
 * ordered source takes a mutex; a thread's first raise allocates its record):
 * MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE is a declared context. */
int mpit_provider_raise(int event_index, int source_index, const void *data);

/* The same from a context that requires `context` (the "context" of the standard's selection
 * rule: the callback registered at the lowest level >= context is invoked; none: dropped).
 * Raised from inside a callback, the context is at least the enclosing callback's. */
int mpit_provider_raise_at(int event_index, int source_index, MPI_T_cb_safety context,
                           const void *data);

/* The same for any type; obj_handle points to the handle of the object the event concerns
 * (an MPI_Comm for comm_send/comm_recv), NULL for types bound to no object. */
int mpit_provider_raise_bound(int event_index, int source_index, MPI_T_cb_safety context,
                              const void *obj_handle, const void *data);

/* Raise `count` events in a loop: the i-th with data (const char *) data + i * stride
 * (stride 0: the same data every time). For benchmarks: one call, no per-event FFI. */
int mpit_provider_raise_many(int event_index, int source_index, MPI_T_cb_safety context,
                             const void *obj_handle, const void *data, size_t stride,
                             long long count);

/* Registrations allocated and not yet finished: MPI_T_event_handle_free not called yet, or
 * called while a raise that may hold the registration still runs (the free callback runs when
 * the last such raise ends). */
int mpit_provider_live_registrations(void);

/* Counters since the last mpit_provider_reset_counters(): event callbacks invoked, event
 * instances dropped for a registration (no callback at a sufficient level; counted whether or
 * not a dropped handler is set), dropped-handler invocations, free-callback invocations. */
long long mpit_provider_callbacks_invoked(void);
long long mpit_provider_events_dropped(void);
long long mpit_provider_dropped_reports(void);
long long mpit_provider_free_callbacks(void);
void mpit_provider_reset_counters(void);

/* Context the point-to-point wrappers raise their events in (default
 * MPI_T_CB_REQUIRE_MPI_RESTRICTED, as MPICH's own RECVQ events). Returns MPI_SUCCESS or
 * MPI_T_ERR_INVALID. */
int mpit_provider_set_activity_safety(MPI_T_cb_safety context);

/* enum mpit_provider_drop_scope; returns MPI_SUCCESS or MPI_T_ERR_INVALID. */
int mpit_provider_set_drop_scope(int scope);

/* Deferred delivery, the implementation that buffers events and invokes their callbacks later
 * (MPI-4.1 section 16.3.8.5): mpit_provider_defer_many raises `count` instances of a type bound
 * to no object (the i-th with data (const char *) data + i * stride), each timestamped when
 * raised and kept in a buffer of mpit_provider_set_buffer_capacity(n) instances (default 0); an
 * instance the full buffer cannot take is dropped for every registration of its type (counted
 * in mpit_provider_events_dropped, reported by the dropped handlers before the next delivery
 * of its source). mpit_provider_deliver_deferred invokes the buffered instances' callbacks in
 * the order raised, in the caller's context, and returns how many instances it delivered (-1
 * from inside a callback). set_buffer_capacity returns MPI_T_ERR_INVALID while instances wait
 * or from inside a callback. */
int mpit_provider_set_buffer_capacity(long long n);
int mpit_provider_defer_many(int event_index, int source_index, const void *data,
                             size_t stride, long long count);
long long mpit_provider_deliver_deferred(void);

#ifdef __cplusplus
}
#endif

#endif /* MPIT_PROVIDER_H_INCLUDED */
