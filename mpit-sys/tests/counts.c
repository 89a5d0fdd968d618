/* The C reference of mpit-sys/tests/counts.rs (and of scripts/test's summary): MPI_T's
 * counts of control variables, performance variables, categories, event types and sources,
 * before and after MPI_Init, in the ordering every implementation here survives. Prints
 * "before C P K E S" and "after C P K E S" (-1 where the header has no event API). */
#include <mpi.h>
#include <stdio.h>
static void counts(const char *when) {
    int c = -1, p = -1, k = -1, e = -1, s = -1;
    if (MPI_T_cvar_get_num(&c) || MPI_T_pvar_get_num(&p) || MPI_T_category_get_num(&k)) {
        printf("error\n");
        return;
    }
#if MPI_VERSION >= 4
    if (MPI_T_event_get_num(&e) || MPI_T_source_get_num(&s)) { printf("error\n"); return; }
#endif
    printf("%s %d %d %d %d %d\n", when, c, p, k, e, s);
}
int main(void) {
    int provided;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided)) return 1;
    counts("before");
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided)) return 2;
    counts("after");
    if (MPI_T_finalize()) return 3;
    return MPI_Finalize() ? 4 : 0;
}
