/* A starter whose MPIR symbols are in a library it loads with dlopen after start-up: the
 * launch model must find them at a later _dl_debug_state call (mpir-types/tests/os_hostile.rs).
 *
 * Usage: dlopen_starter LIBRARY ARGS...  (calls LIBRARY's starter_main(argc - 1, argv + 1)) */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    int (*starter_main)(int, char **) = (int (*)(int, char **))dlsym(lib, "starter_main");
    return starter_main ? starter_main(argc - 1, argv + 1) : 2;
}
