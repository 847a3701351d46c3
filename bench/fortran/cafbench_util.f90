! cafbench_util.f90: timing, arguments and output shared by the Coarray Fortran benchmarks
! (bench/fortran/*.f90). Plain Fortran 2008; builds with any coarray compiler.
!
! Arguments every benchmark takes: --runtime=NAME (the name put in the JSON lines, e.g.
! rshmem or opencoarrays) and --quick (fewer batches and iterations).
!
! Output (image 1 only): one JSON object per line, in rshmem-bench's record shape
!   {"bench":..,"size":..,"pes":..,"metric":..,"value":..,"unit":..,"runtime":..}
! ("pes" is the number of images), and a human-readable line for each figure.
module cafbench_util
  use, intrinsic :: iso_fortran_env, only: int64, real64, output_unit
  implicit none
  private
  public :: bench_init, now, median, emit, say, quick, runtime, batches

  character(len=32) :: runtime = 'unknown'
  logical :: quick = .false.
  !> Timed batches per figure; the median batch is reported.
  integer :: batches = 7

contains

  subroutine bench_init()
    integer :: i
    character(len=64) :: arg
    do i = 1, command_argument_count()
      call get_command_argument(i, arg)
      if (arg == '--quick') then
        quick = .true.
      else if (arg(1:10) == '--runtime=') then
        runtime = arg(11:)
      end if
    end do
    if (quick) batches = 3
  end subroutine bench_init

  !> Wall-clock time in seconds.
  function now() result(t)
    real(real64) :: t
    integer(int64) :: c, r
    call system_clock(c, r)
    t = real(c, real64) / real(r, real64)
  end function now

  !> Median of v (v is reordered).
  function median(v) result(m)
    real(real64), intent(inout) :: v(:)
    real(real64) :: m, x
    integer :: i, j, n
    n = size(v)
    do i = 2, n
      x = v(i)
      j = i - 1
      do while (j >= 1)
        if (v(j) <= x) exit
        v(j + 1) = v(j)
        j = j - 1
      end do
      v(j + 1) = x
    end do
    if (mod(n, 2) == 1) then
      m = v(n / 2 + 1)
    else
      m = (v(n / 2) + v(n / 2 + 1)) / 2
    end if
  end function median

  !> One JSON record (image 1 only).
  subroutine emit(bench, size, metric, value, unit)
    character(len=*), intent(in) :: bench, metric, unit
    integer(int64), intent(in) :: size
    real(real64), intent(in) :: value
    character(len=400) :: line
    if (this_image() /= 1) return
    write (line, '(a,a,a,i0,a,i0,a,a,a,es12.5,a,a,a,a,a)') '{"bench":"', bench, '","size":', &
      size, ',"pes":', num_images(), ',"metric":"', metric, '","value":', value, &
      ',"unit":"', unit, '","runtime":"', trim(runtime), '"}'
    write (output_unit, '(a)') trim(squeeze(line))
    flush (output_unit)
  end subroutine emit

  !> A human-readable line (image 1 only).
  subroutine say(text)
    character(len=*), intent(in) :: text
    if (this_image() /= 1) return
    write (output_unit, '(a)') trim(text)
    flush (output_unit)
  end subroutine say

  !> `s` without blanks (the es edit descriptor pads with them).
  function squeeze(s) result(r)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: r
    integer :: i, k
    r = ' '
    k = 0
    do i = 1, len_trim(s)
      if (s(i:i) /= ' ') then
        k = k + 1
        r(k:k) = s(i:i)
      end if
    end do
  end function squeeze

end module cafbench_util
