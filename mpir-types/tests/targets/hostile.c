/* A hostile MPIR "starter" for the garbage-memory tests (mpir-types/tests/os_hostile.rs):
 * it exports the starter's symbols with garbage in them, prints their addresses, then waits
 * to be attached to (and killed).
 *
 * Usage: hostile MODE
 *   huge          MPIR_proctable_size = INT_MAX, MPIR_proctable wild
 *   negative      MPIR_proctable_size = -5
 *   wild-table    3 entries at an address below mmap_min_addr (never mapped)
 *   wild-string   a valid table whose rank 1 host_name points below mmap_min_addr
 *   null-string   a valid table whose rank 0 executable_name is NULL
 *   unterminated  host names 1 MiB long without a NUL
 *   big           100000 valid entries sharing two strings
 *   bad-state     one valid entry, MPIR_debug_state = 12345
 *   spawn-huge    like huge, but raises MPIR_DEBUG_SPAWNED through MPIR_Breakpoint when
 *                 MPIR_being_debugged is set (for the launch model) */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
int MPIR_i_am_starter;
int MPIR_partial_attach_ok;

__attribute__((noinline)) void MPIR_Breakpoint(void) { __asm__ volatile("" ::: "memory"); }

static MPIR_PROCDESC *table(int n, char *host, char *exe) {
    MPIR_PROCDESC *t = calloc((size_t)n, sizeof *t);
    for (int i = 0; i < n; i++) {
        t[i].host_name = host;
        t[i].executable_name = exe;
        t[i].pid = 1000 + i;
    }
    return t;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "huge";
    char *host = "node0", *exe = "/bin/app";
    MPIR_debug_state = 1;
    if (!strcmp(mode, "huge") || !strcmp(mode, "spawn-huge")) {
        MPIR_proctable_size = INT_MAX;
        MPIR_proctable = (MPIR_PROCDESC *)(uintptr_t)0xdeadbeef0000ULL;
    } else if (!strcmp(mode, "negative")) {
        MPIR_proctable_size = -5;
        MPIR_proctable = table(1, host, exe);
    } else if (!strcmp(mode, "wild-table")) {
        MPIR_proctable_size = 3;
        MPIR_proctable = (MPIR_PROCDESC *)(uintptr_t)0x1000;
    } else if (!strcmp(mode, "wild-string")) {
        MPIR_proctable_size = 2;
        MPIR_proctable = table(2, host, exe);
        MPIR_proctable[1].host_name = (char *)(uintptr_t)0x2000;
    } else if (!strcmp(mode, "null-string")) {
        MPIR_proctable_size = 2;
        MPIR_proctable = table(2, host, exe);
        MPIR_proctable[0].executable_name = NULL;
    } else if (!strcmp(mode, "unterminated")) {
        size_t n = 1 << 20;
        char *s = malloc(n);
        memset(s, 'A', n);
        MPIR_proctable_size = 2;
        MPIR_proctable = table(2, s, exe);
    } else if (!strcmp(mode, "big")) {
        MPIR_proctable_size = 100000;
        MPIR_proctable = table(MPIR_proctable_size, host, exe);
    } else if (!strcmp(mode, "bad-state")) {
        MPIR_proctable_size = 1;
        MPIR_proctable = table(1, host, exe);
        MPIR_debug_state = 12345;
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    printf("pid %d\n", (int)getpid());
    printf("sym MPIR_proctable %p\n", (void *)&MPIR_proctable);
    printf("sym MPIR_proctable_size %p\n", (void *)&MPIR_proctable_size);
    printf("sym MPIR_debug_state %p\n", (void *)&MPIR_debug_state);
    printf("sym MPIR_Breakpoint %p\n", (void *)&MPIR_Breakpoint);
    printf("ready\n");
    fflush(stdout);
    if (!strcmp(mode, "spawn-huge") && MPIR_being_debugged) MPIR_Breakpoint();
    for (int i = 0; i < 600; i++) sleep(1);
    return 0;
}
