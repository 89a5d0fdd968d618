/* A PMIx query's answer (PMIX_QUERY_NAMESPACES and PMIX_QUERY_PROC_TABLE results, as a host
 * fills them: PMIx Standard v4.2, "Job Management and Reporting") built with the installed
 * pmix_common.h's own structures in one static arena, and dumped for
 * mpir-types/tests/pmix_abi.rs: a line "ARENA USED RESULTS" (the arena's address in hex, the
 * bytes used, the offset of the two-element results array), then the used bytes in hex. The
 * pointers in it point into the arena, so the bytes mapped at the arena's address are the
 * answer as the C compiler laid it out. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix_common.h>

static unsigned char arena[16384] __attribute__((aligned(64)));
static size_t used;

/* n zeroed bytes of the arena, 16-aligned. */
static void *take(size_t n) {
    void *p = arena + used;
    used += (n + 15) & ~(size_t)15;
    if (used > sizeof arena) {
        fprintf(stderr, "arena full\n");
        exit(1);
    }
    return p;
}

static char *str(const char *s) {
    char *p = take(strlen(s) + 1);
    memcpy(p, s, strlen(s) + 1);
    return p;
}

int main(void) {
    static const char *hosts[] = {"node0", "node1"};
    pmix_info_t *results = take(2 * sizeof *results);
    memcpy(results[0].key, PMIX_QUERY_NAMESPACES, sizeof PMIX_QUERY_NAMESPACES);
    results[0].value.type = PMIX_STRING;
    results[0].value.data.string = str("prterun-node0-77@0,prterun-node0-77@1");

    memcpy(results[1].key, PMIX_QUERY_PROC_TABLE, sizeof PMIX_QUERY_PROC_TABLE);
    results[1].value.type = PMIX_DATA_ARRAY;
    pmix_data_array_t *darray = take(sizeof *darray);
    results[1].value.data.darray = darray;
    darray->type = PMIX_PROC_INFO;
    darray->size = 4;
    pmix_proc_info_t *procs = take(4 * sizeof *procs);
    darray->array = procs;
    char *exe = str("/home/me/a.out");
    /* In reverse rank order: the decoder places each by its rank. */
    for (int i = 0; i < 4; i++) {
        pmix_rank_t rank = 3 - i;
        memcpy(procs[i].proc.nspace, "prterun-node0-77@1", sizeof "prterun-node0-77@1");
        procs[i].proc.rank = rank;
        procs[i].hostname = str(hosts[rank % 2]);
        procs[i].executable_name = exe;
        procs[i].pid = 4000 + (pid_t)rank;
        procs[i].exit_code = (int)rank;
        procs[i].state = PMIX_PROC_STATE_RUNNING;
    }

    printf("%llx %zu %zu\n", (unsigned long long)(uintptr_t)arena, used,
           (size_t)((unsigned char *)results - arena));
    for (size_t i = 0; i < used; i++) {
        printf("%02x", arena[i]);
    }
    printf("\n");
    return 0;
}
