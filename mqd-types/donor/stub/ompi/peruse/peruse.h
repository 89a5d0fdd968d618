/*
 * Stand-in for Open MPI's `ompi/peruse/peruse.h`, which libopenmpi-dev does not install but
 * `ompi/peruse/peruse-internal.h` (included by the PML base headers) includes. Debian builds
 * Open MPI without PERUSE (OMPI_WANT_PERUSE is 0), so only the handle type is referred to, by
 * a callback typedef that no layout depends on.
 */
#ifndef MQD_DONOR_PERUSE_STUB_H
#define MQD_DONOR_PERUSE_STUB_H
typedef void *peruse_event_h;
#endif
