/* A minimal MPIR starter written from the spec's text (§2.5.2, §2.8), without MPI, for the
 * launch-model tests of mpir-types/tests/os_hostile.rs. It spawns N "MPI processes" (forks of
 * itself) that wait at MPIR_debug_gate (§2.8.8) when a tool is present, publishes the table,
 * raises MPIR_DEBUG_SPAWNED from a second thread (the tool must trace every thread), and raises
 * MPIR_DEBUG_ABORTING with MPIR_debug_abort_string if a process is never released or when
 * asked to.
 *
 * Usage: fake_starter N GATE_TIMEOUT_SECONDS [abort]
 * Exit status: 0 when every process was released and exited 0, 3 after an abort. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char *host_name;
    char *executable_name;
    int pid;
} MPIR_PROCDESC;

MPIR_PROCDESC *MPIR_proctable;
int MPIR_proctable_size;
volatile int MPIR_debug_state;
volatile int MPIR_being_debugged;
char *MPIR_debug_abort_string;
volatile int MPIR_debug_gate;
int MPIR_i_am_starter;

__attribute__((noinline)) void MPIR_Breakpoint(void) { __asm__ volatile("" ::: "memory"); }

static void *raise_event(void *arg) {
    (void)arg;
    MPIR_Breakpoint();
    return NULL;
}

static char abort_reason[256];

static void abort_job(const char *why) {
    snprintf(abort_reason, sizeof abort_reason, "%s", why);
    MPIR_debug_abort_string = abort_reason;
    MPIR_debug_state = 2; /* MPIR_DEBUG_ABORTING */
    MPIR_Breakpoint();
    exit(3);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2;
    int gate_timeout = argc > 2 ? atoi(argv[2]) : 20;
    int want_abort = argc > 3 && !strcmp(argv[3], "abort");
    static char host[256], exe[PATH_MAX];
    gethostname(host, sizeof host - 1);
    if (!realpath("/proc/self/exe", exe)) exe[0] = '\0';
    int debugged = MPIR_being_debugged;
    MPIR_proctable = calloc((size_t)n, sizeof *MPIR_proctable);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            /* An MPI process: wait at the gate while a tool is present. */
            time_t end = time(NULL) + gate_timeout;
            while (debugged && MPIR_debug_gate == 0) {
                if (time(NULL) > end) _exit(1);
                usleep(1000);
            }
            _exit(0);
        }
        MPIR_proctable[i].host_name = host;
        MPIR_proctable[i].executable_name = exe;
        MPIR_proctable[i].pid = pid;
    }
    MPIR_proctable_size = n;
    MPIR_debug_state = 1; /* MPIR_DEBUG_SPAWNED */
    if (debugged) {
        pthread_t t;
        pthread_create(&t, NULL, raise_event, NULL);
        pthread_join(t, NULL);
    }
    int failed = -1;
    for (int i = 0; i < n; i++) {
        int status;
        waitpid(MPIR_proctable[i].pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = i;
    }
    if (failed >= 0) {
        char why[64];
        snprintf(why, sizeof why, "rank %d was never released", failed);
        abort_job(why);
    }
    if (want_abort) abort_job("fake abort: requested");
    printf("debugged %d\n", debugged);
    return 0;
}
