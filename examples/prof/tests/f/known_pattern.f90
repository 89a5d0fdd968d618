! The known pattern in Fortran (mpif.h binding): rank i sends i+1 messages of
! 1000*(i+1) bytes to rank (i+1) mod n inside region "exchange", marked through bind(C).
! Prints one line per rank.
program known_pattern
  use, intrinsic :: iso_c_binding
  implicit none
  include 'mpif.h'
  ! The region API through dlsym: the program links and runs without the profiler too (the
  ! pointers then stay null).
  interface
    type(c_funptr) function dlsym(handle, name) bind(C, name="dlsym")
      import :: c_ptr, c_funptr, c_char
      type(c_ptr), value :: handle
      character(kind=c_char), dimension(*) :: name
    end function
  end interface
  abstract interface
    integer(c_int) function region_fn(name) bind(C)
      import :: c_int, c_char
      character(kind=c_char), dimension(*) :: name
    end function
  end interface
  procedure(region_fn), pointer :: region_begin => null(), region_end => null()
  integer :: ierr, rank, nranks, to, from, k, phase, rc
  integer :: status(MPI_STATUS_SIZE)
  character, allocatable :: sbuf(:), rbuf(:)

  call c_f_procpointer(dlsym(c_null_ptr, "mpit_prof_region_begin" // c_null_char), region_begin)
  call c_f_procpointer(dlsym(c_null_ptr, "mpit_prof_region_end" // c_null_char), region_end)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  to = mod(rank + 1, nranks)
  from = mod(rank + nranks - 1, nranks)
  allocate(sbuf(1000 * (rank + 1)), rbuf(1000 * (from + 1)))
  sbuf = 'x'
  if (associated(region_begin)) rc = region_begin("exchange" // c_null_char)
  do phase = 0, 1
    if ((mod(rank, 2) == 0) .eqv. (phase == 0)) then
      do k = 1, rank + 1
        call MPI_Send(sbuf, size(sbuf), MPI_BYTE, to, 7, MPI_COMM_WORLD, ierr)
      end do
    else
      do k = 1, from + 1
        call MPI_Recv(rbuf, size(rbuf), MPI_BYTE, from, 7, MPI_COMM_WORLD, status, ierr)
      end do
    end if
  end do
  if (associated(region_end)) rc = region_end("exchange" // c_null_char)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  print '(a,i0,a,i0)', 'fortran rank ', rank, ' of ', nranks
  call MPI_Finalize(ierr)
end program
