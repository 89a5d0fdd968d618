/* Reproduces, without Rust, the crash behind mpit-safe's quirk guard
 * `mpich-unexp-message-dequeued-data` (mpit_safe::quirks::MPICH_DEQUEUED_EVENT_DATA).
 *
 * MPICH 4.0.2 built with --enable-mpit-events raises `unexp_message_dequeued` from
 * MPIDIG_recvq_search (src/mpid/ch4/src/mpidig_recvq.h) with the data pointer
 * `&MPIDIG_REQUEST(req, u.recv.source)` while `req` is still NULL (it is set from `curr` only
 * after the event), so the event's data lies at a small offset from address 0 and
 * MPI_T_event_read / MPI_T_event_copy fault inside MPICH.
 *
 * Two ranks. Rank 0 registers a callback on `unexp_message_enqueued` (reads element 0, the
 * sender's rank) and one on `unexp_message_dequeued`; rank 1 sends NMSG messages with distinct
 * tags before rank 0 posts the receives (ordered by a barrier; a probe for the last one makes sure
 * all have arrived), so each message goes through
 * MPICH's unexpected queue.
 *
 *   ./dequeued_event_read read   the dequeued callback calls MPI_T_event_read(element 0):
 *                                rank 0 dies of SIGSEGV; its handler prints the fault address
 *                                and whether it was inside MPI_T_event_read, then re-raises.
 *   ./dequeued_event_read meta   the dequeued callback reads only the source and timestamp:
 *                                the program completes (the event itself is fine).
 *
 * Build and run (mpich-ev: scripts/with-mpi mpich-ev sets MPICC, MPIEXEC and the FI_* pinning):
 *   $MPICC -O1 -g -o dequeued_event_read examples/quirks/dequeued_event_read.c
 *   $MPIEXEC -n 2 ./dequeued_event_read read
 * On an MPI without these event types it says so and exits 0.
 */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NMSG 3
#define TAG0 700

static volatile sig_atomic_t in_event_read;
static int enq_seen, enq_from_1, deq_seen, deq_meta_ok;
static int read_data; /* 1: the dequeued callback reads element 0 */

/* Async-signal-safe output of a message and an address in hex. */
static void say(const char *s)
{
    ssize_t r = write(STDOUT_FILENO, s, strlen(s));
    (void) r;
}

static void on_segv(int sig, siginfo_t *si, void *uctx)
{
    (void) uctx;
    char hex[2 + 16 + 1] = "0x";
    uintptr_t a = (uintptr_t) si->si_addr;
    for (int i = 0; i < 16; i++)
        hex[2 + i] = "0123456789abcdef"[(a >> (60 - 4 * i)) & 0xf];
    hex[18] = '\0';
    say("rank 0: SIGSEGV at address ");
    say(hex);
    say(in_event_read ? " inside MPI_T_event_read\n" : " outside MPI_T_event_read\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_enqueued(MPI_T_event_instance inst, MPI_T_event_registration reg,
                        MPI_T_cb_safety safety, void *user_data)
{
    (void) reg, (void) safety, (void) user_data;
    int peer = -1;
    enq_seen++;
    if (MPI_T_event_read(inst, 0, &peer) == MPI_SUCCESS && peer == 1)
        enq_from_1++;
}

static void on_dequeued(MPI_T_event_instance inst, MPI_T_event_registration reg,
                        MPI_T_cb_safety safety, void *user_data)
{
    (void) reg, (void) safety, (void) user_data;
    int source = -1;
    MPI_Count ts = -1;
    deq_seen++;
    if (MPI_T_event_get_source(inst, &source) == MPI_SUCCESS &&
        MPI_T_event_get_timestamp(inst, &ts) == MPI_SUCCESS && source >= 0)
        deq_meta_ok++;
    if (read_data) {
        int peer = -1;
        say("rank 0: unexp_message_dequeued: calling MPI_T_event_read(element 0)\n");
        in_event_read = 1;
        int rc = MPI_T_event_read(inst, 0, &peer);
        in_event_read = 0;
        printf("rank 0: MPI_T_event_read returned %d, element 0 = %d\n", rc, peer);
        fflush(stdout);
    }
}

static int check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "%s failed: %d\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return rc;
}

int main(int argc, char **argv)
{
    int provided, rank, size, enq = -1, deq = -1;
    read_data = !(argc > 1 && strcmp(argv[1], "meta") == 0);
    check(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), "MPI_T_init_thread");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* The event types are registered by MPI_Init; look them up after it. */
    if (MPI_T_event_get_index("unexp_message_enqueued", &enq) != MPI_SUCCESS ||
        MPI_T_event_get_index("unexp_message_dequeued", &deq) != MPI_SUCCESS) {
        if (rank == 0)
            printf("no unexp_message_enqueued/dequeued event types in this MPI: "
                   "nothing to reproduce\n");
        MPI_T_finalize();
        MPI_Finalize();
        return 0;
    }
    MPI_T_event_registration reg_enq = NULL, reg_deq = NULL;
    if (rank == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, NULL);
        check(MPI_T_event_handle_alloc(enq, NULL, MPI_INFO_NULL, &reg_enq), "handle_alloc");
        check(MPI_T_event_handle_alloc(deq, NULL, MPI_INFO_NULL, &reg_deq), "handle_alloc");
        check(MPI_T_event_register_callback(reg_enq, MPI_T_CB_REQUIRE_MPI_RESTRICTED,
                                            MPI_INFO_NULL, NULL, on_enqueued),
              "register_callback");
        check(MPI_T_event_register_callback(reg_deq, MPI_T_CB_REQUIRE_MPI_RESTRICTED,
                                            MPI_INFO_NULL, NULL, on_dequeued),
              "register_callback");
        printf("rank 0: registered on unexp_message_enqueued (%d) and unexp_message_dequeued "
               "(%d); mode %s\n", enq, deq, read_data ? "read" : "meta");
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int buf[NMSG] = { 0 };
    if (rank == 1)
        for (int i = 0; i < NMSG; i++)
            MPI_Send(&i, 1, MPI_INT, 0, TAG0 + i, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* The barrier orders the sends before the receives; probing for the last message makes
         * sure all have arrived in the unexpected queue (MPICH's shared-memory barrier need not
         * poll the message queues). */
        int flag = 0;
        while (!flag)
            MPI_Iprobe(1, TAG0 + NMSG - 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        for (int i = 0; i < NMSG; i++)
            MPI_Recv(&buf[i], 1, MPI_INT, 1, TAG0 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(MPI_T_event_handle_free(reg_enq, NULL, NULL), "handle_free");
        check(MPI_T_event_handle_free(reg_deq, NULL, NULL), "handle_free");
        printf("rank 0: %d unexp_message_enqueued (%d from rank 1), %d unexp_message_dequeued "
               "(%d with source and timestamp); no crash\n",
               enq_seen, enq_from_1, deq_seen, deq_meta_ok);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
