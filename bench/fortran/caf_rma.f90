! caf_rma.f90: coindexed transfers between image 1 and image 2 (the other images wait).
!
! - caf_put / caf_get: `buf(1:n)[2] = loc(1:n)` / `loc(1:n) = buf(1:n)[2]`, 8 B to 4 MiB:
!   time per statement (us) and bandwidth (MB/s).
! - caf_strided_put / caf_strided_get: the 2-D section s(1:st*E1:st, 1:E2) of an integer
!   coarray (E1 x E2 = 256 x 64 elements, element stride st = 2..32 integers, seed 003's
!   2-D strided test), moved by one whole-section statement ("section") or by one
!   coindexed statement per element in a loop ("naive"): time per section (us).
!
!   cafrun -n 2 ./caf_rma [--quick] [--runtime=NAME]
program caf_rma
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use cafbench_util
  implicit none
  integer, parameter :: maxbytes = 4 * 1024 * 1024
  integer, parameter :: e1 = 256, e2 = 64, maxst = 32
  real(real64), allocatable :: buf(:)[:]
  real(real64), allocatable :: loc(:)
  integer, save :: s2(e1 * maxst, e2)[*]
  ! Not allocatable: gfortran 12 reads into an allocatable through caf_get_by_ref.
  integer, save :: l2(e1, e2)
  integer(int64) :: bytes
  integer :: st, i, j

  call bench_init()
  allocate (buf(maxbytes / 8)[*])
  allocate (loc(maxbytes / 8))
  buf = real(this_image(), real64)
  loc = 0.5_real64
  s2 = this_image()
  do j = 1, e2
    do i = 1, e1
      l2(i, j) = i + 1000 * j
    end do
  end do
  sync all

  call say('# caf_put / caf_get: image 1 <-> image 2, per statement ('//trim(runtime)//')')
  call say('#   bytes       put us      put MB/s      get us      get MB/s')
  bytes = 8
  do
    call contiguous(bytes)
    if (bytes >= maxbytes) exit
    if (quick) then
      bytes = min(bytes * 8, int(maxbytes, int64))
    else
      bytes = min(bytes * 4, int(maxbytes, int64))
    end if
  end do

  call say('# caf_strided_put / caf_strided_get: s(1:st*256:st, 1:64), time per section, us')
  call say('#  stride   put naive  put section   get naive  get section')
  st = 2
  do while (st <= maxst)
    call strided(st)
    st = st * 2
  end do

  ! The data arrived: image 2's section holds image 1's last put.
  sync all
  if (this_image() == 2) then
    if (s2(1 + (e1 - 1) * maxst, e2) /= l2(e1, e2)) error stop 'caf_rma: strided put lost'
  end if
  sync all

contains

  !> Iterations per batch for a transfer of `b` bytes (a few ms per batch).
  integer function iters_for(b)
    integer(int64), intent(in) :: b
    iters_for = int(max(2_int64, min(2000_int64, 8000000_int64 / (b + 2000))))
    if (quick) iters_for = max(2, iters_for / 2)
  end function iters_for

  subroutine contiguous(b)
    integer(int64), intent(in) :: b
    real(real64) :: tput(batches), tget(batches), t0, put_us, get_us
    integer :: n, it, k, iters
    character(len=120) :: line
    n = int(b / 8)
    iters = iters_for(b)
    do k = 1, batches
      sync all
      if (this_image() == 1) then
        t0 = now()
        do it = 1, iters
          buf(1:n)[2] = loc(1:n)
        end do
        sync memory
        tput(k) = (now() - t0) / iters
      end if
      sync all
      if (this_image() == 1) then
        t0 = now()
        do it = 1, iters
          loc(1:n) = buf(1:n)[2]
        end do
        tget(k) = (now() - t0) / iters
        if (loc(n) /= 0.5_real64) error stop 'caf_rma: get read a wrong value'
      end if
    end do
    sync all
    if (this_image() /= 1) return
    put_us = median(tput) * 1e6_real64
    get_us = median(tget) * 1e6_real64
    call emit('caf_put', b, 'time', put_us, 'us')
    call emit('caf_put', b, 'bandwidth', b / put_us, 'MB/s')
    call emit('caf_get', b, 'time', get_us, 'us')
    call emit('caf_get', b, 'bandwidth', b / get_us, 'MB/s')
    write (line, '(i9, 4f13.3)') b, put_us, b / put_us, get_us, b / get_us
    call say(line)
  end subroutine contiguous

  subroutine strided(st)
    integer, intent(in) :: st
    real(real64) :: t(batches, 4), t0, us(4)
    integer :: k, i, j, reps, m
    character(len=120) :: line
    character(len=*), parameter :: names(4) = [character(len=24) :: &
      'caf_strided_put_naive', 'caf_strided_put', 'caf_strided_get_naive', 'caf_strided_get']
    reps = 1
    if (.not. quick) reps = 2
    do k = 1, batches
      sync all
      if (this_image() == 1) then
        ! Naive: one coindexed statement per element.
        t0 = now()
        do m = 1, reps
          do j = 1, e2
            do i = 1, e1
              s2(1 + (i - 1) * st, j)[2] = l2(i, j)
            end do
          end do
        end do
        sync memory
        t(k, 1) = (now() - t0) / reps
        ! The whole section in one statement.
        t0 = now()
        do m = 1, 4 * reps
          s2(1:st * e1:st, 1:e2)[2] = l2
        end do
        sync memory
        t(k, 2) = (now() - t0) / (4 * reps)
        t0 = now()
        do m = 1, reps
          do j = 1, e2
            do i = 1, e1
              l2(i, j) = s2(1 + (i - 1) * st, j)[2]
            end do
          end do
        end do
        t(k, 3) = (now() - t0) / reps
        t0 = now()
        do m = 1, 4 * reps
          l2 = s2(1:st * e1:st, 1:e2)[2]
        end do
        t(k, 4) = (now() - t0) / (4 * reps)
        if (l2(e1, e2) /= e1 + 1000 * e2) error stop 'caf_rma: strided get read a wrong value'
      end if
    end do
    sync all
    if (this_image() /= 1) return
    do m = 1, 4
      us(m) = median(t(:, m)) * 1e6_real64
      call emit(trim(names(m)), int(st, int64), 'time', us(m), 'us')
    end do
    write (line, '(i8, 4f13.1)') st, us
    call say(line)
  end subroutine strided

end program caf_rma
