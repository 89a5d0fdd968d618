/* mpit_prof.h: program regions for mpit-prof (libmpit_prof.so).
 *
 *   mpit_prof_region_begin("solve");
 *   ... MPI traffic ...
 *   mpit_prof_region_end("solve");
 *
 * Regions nest; each is a node of the profile's call tree, with the MPI calls made inside it
 * and what every performance variable did meanwhile. They count on the thread that called
 * MPI_Init, between MPI_Init and MPI_Finalize.
 *
 * The functions are declared weak: a program built with this header runs unchanged without
 * the profiler (the symbols are then NULL and the MPIT_PROF_BEGIN / MPIT_PROF_END macros do
 * nothing); under `mpit-prof` (LD_PRELOAD) the loader binds them to the library.
 *
 * Return values: 0 done; 1 not profiling on this thread (before MPI_Init, after MPI_Finalize,
 * another thread, profiling off); 2 (end only) no open region has that name, nothing changed;
 * 3 name is NULL.
 *
 * Fortran (bind(C); through dlsym, so the program also links and runs without the
 * profiler; tests/f/known_pattern.f90 is a complete example):
 *   interface
 *     type(c_funptr) function dlsym(handle, name) bind(C, name="dlsym")
 *       import :: c_ptr, c_funptr, c_char
 *       type(c_ptr), value :: handle
 *       character(kind=c_char), dimension(*) :: name
 *     end function
 *   end interface
 *   abstract interface
 *     integer(c_int) function region_fn(name) bind(C)
 *       import :: c_int, c_char
 *       character(kind=c_char), dimension(*) :: name
 *     end function
 *   end interface
 *   procedure(region_fn), pointer :: region_begin => null()
 *   call c_f_procpointer(dlsym(c_null_ptr, "mpit_prof_region_begin" // c_null_char), &
 *                        region_begin)
 *   if (associated(region_begin)) rc = region_begin("solve" // c_null_char)
 * Python:
 *   prof = ctypes.CDLL(None)   # the process's global symbols: the preloaded library
 *   prof.mpit_prof_region_begin(b"solve")
 */
#ifndef MPIT_PROF_H
#define MPIT_PROF_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MPIT_PROF_WEAK __attribute__((weak))
#else
#define MPIT_PROF_WEAK
#endif

/* Enters region `name` inside the innermost open one. */
int mpit_prof_region_begin(const char *name) MPIT_PROF_WEAK;

/* Leaves region `name` (and the regions opened inside it and not left). */
int mpit_prof_region_end(const char *name) MPIT_PROF_WEAK;

/* Calls that do nothing when the profiler is not loaded. */
#define MPIT_PROF_BEGIN(name) \
  ((void)(mpit_prof_region_begin ? mpit_prof_region_begin(name) : 0))
#define MPIT_PROF_END(name) \
  ((void)(mpit_prof_region_end ? mpit_prof_region_end(name) : 0))

#ifdef __cplusplus
}
#endif

#endif /* MPIT_PROF_H */
