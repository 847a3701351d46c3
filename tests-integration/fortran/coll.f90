! Collective subroutines: co_sum, co_min, co_max (numbers and characters), co_broadcast,
! co_reduce (arguments by value, by reference, characters), with and without
! RESULT_IMAGE=, on contiguous and strided arguments.
module ops
  implicit none
  ! Over 16 bytes: returned through a hidden argument, which libcaf_rshmem supports.
  type :: stats
    integer :: n
    real(8) :: lo, hi
  end type
contains
  pure function merge_stats(a, b) result(c)
    type(stats), intent(in) :: a, b
    type(stats) :: c
    c%n = a%n + b%n
    c%lo = min(a%lo, b%lo)
    c%hi = max(a%hi, b%hi)
  end function
  pure function iadd(a, b) result(c)
    integer, value :: a, b
    integer :: c
    c = a + b
  end function
  pure function rmul(a, b) result(c)
    real(8), intent(in) :: a, b
    real(8) :: c
    c = a * b
  end function
  pure function lor(a, b) result(c)
    logical, intent(in) :: a, b
    logical :: c
    c = a .or. b
  end function
  pure function cmax(a, b) result(c)
    character(len=4), intent(in) :: a, b
    character(len=4) :: c
    integer :: i
    do i = 1, 4
      c(i:i) = max(a(i:i), b(i:i))
    end do
  end function
end module

program coll
  use ops
  implicit none
  integer :: me, np, i, st
  integer :: x(5), m(3, 4), s
  integer(8) :: big
  real(8) :: r, rv(3)
  real(4) :: f
  complex(8) :: z
  character(len=4) :: ch
  character(len=30) :: msg
  logical :: l
  type(stats) :: st3, sv(3)
  integer, allocatable :: iv(:), iw(:, :)
  real(8), allocatable :: dv(:)
  me = this_image()
  np = num_images()

  x = [(me * i, i = 1, 5)]
  call co_sum(x)
  if (any(x /= [(i * np * (np + 1) / 2, i = 1, 5)])) error stop 2
  big = 2_8**40 + me
  call co_sum(big)
  if (big /= np * 2_8**40 + np * (np + 1) / 2) error stop 3
  r = me * 0.5d0
  call co_sum(r, result_image=1, stat=st, errmsg=msg)
  if (st /= 0) error stop 4
  if (me == 1 .and. r /= 0.25d0 * np * (np + 1)) error stop 5
  ! The other images' argument is left as it was (undefined in the standard; what
  ! OpenCoarrays and gfortran's single-image library do).
  if (me /= 1 .and. r /= me * 0.5d0) error stop 51
  z = cmplx(me, -me, 8)
  call co_sum(z)
  if (z /= cmplx(np * (np + 1) / 2, -np * (np + 1) / 2, 8)) error stop 6
  f = real(me)
  call co_max(f)
  if (f /= real(np)) error stop 7
  s = me
  call co_min(s, result_image=np)
  if (me == np .and. s /= 1) error stop 8
  if (me /= np .and. s /= me) error stop 81
  ! A strided argument: every other column of a matrix.
  m = me
  call co_max(m(:, 1:4:2))
  if (any(m(:, 1:4:2) /= np) .or. any(m(:, 2:4:2) /= me)) error stop 9
  ! Large vectors (the single-copy path from the argument itself), of a length no
  ! number of images divides.
  allocate(iv(100003), dv(70001), iw(3, 50001))
  iv = [(me + i, i = 1, size(iv))]
  call co_sum(iv)
  if (any(iv /= [(np * i + np * (np + 1) / 2, i = 1, size(iv))])) error stop 90
  dv = [(me * 0.5d0 + i, i = 1, size(dv))]
  call co_sum(dv, result_image=np)
  if (me == np .and. any(dv /= [(np * i + 0.25d0 * np * (np + 1), i = 1, size(dv))])) &
      error stop 91
  if (me /= np .and. any(dv /= [(me * 0.5d0 + i, i = 1, size(dv))])) error stop 92
  iv = [(mod(i + me, np + 3), i = 1, size(iv))]
  call co_min(iv)
  if (any(iv /= [(min_over(i), i = 1, size(iv))])) error stop 93
  iw = me
  call co_max(iw(2, :))
  if (any(iw(2, :) /= np) .or. any(iw(1, :) /= me) .or. any(iw(3, :) /= me)) error stop 94
  ! Characters.
  ch = achar(iachar('a') + me) // 'xyz'
  call co_max(ch)
  if (ch /= achar(iachar('a') + np) // 'xyz') error stop 10
  ch = achar(iachar('a') + me) // 'xyz'
  call co_min(ch)
  if (ch /= 'bxyz') error stop 11

  ! co_broadcast from the last image, contiguous and strided.
  x = me
  call co_broadcast(x, source_image=np)
  if (any(x /= np)) error stop 12
  m = me
  call co_broadcast(m(2, :), 1)
  if (any(m(2, :) /= 1) .or. any(m(1, :) /= me)) error stop 13
  ch = 'im' // achar(iachar('0') + me) // '!'
  call co_broadcast(ch, 1)
  if (ch /= 'im1!') error stop 14

  ! co_reduce.
  s = me
  call co_reduce(s, iadd)
  if (s /= np * (np + 1) / 2) error stop 15
  rv = [1d0, 2d0, 0.5d0] * me
  call co_reduce(rv, rmul, result_image=1)
  if (me == 1) then
    r = 1
    do i = 1, np
      r = r * i
    end do
    if (any(abs(rv - [1d0, 2d0**np, 0.5d0**np] * r) > 1d-9 * r)) error stop 16
  else if (any(rv /= [1d0, 2d0, 0.5d0] * me)) then
    error stop 161
  end if
  l = me == np
  call co_reduce(l, lor)
  if (.not. l) error stop 17
  st3 = stats(me, -1d0 * me, 0.5d0 * me)
  call co_reduce(st3, merge_stats)
  if (st3%n /= np * (np + 1) / 2 .or. st3%lo /= -1d0 * np .or. st3%hi /= 0.5d0 * np) &
      error stop 19
  sv = [(stats(me * i, me + 0.25d0 * i, -1d0 * me), i = 1, 3)]
  call co_reduce(sv, merge_stats, result_image=1)
  if (me == 1 .and. any(sv%n /= [(i * np * (np + 1) / 2, i = 1, 3)])) error stop 191
  if (me == 1 .and. any(sv%lo /= [(1 + 0.25d0 * i, i = 1, 3)])) error stop 192
  if (me /= 1 .and. any(sv%n /= [(me * i, i = 1, 3)])) error stop 193
  ch = achar(iachar('a') + me - 1) // achar(iachar('z') - me + 1) // '..'
  call co_reduce(ch, cmax)
  if (ch /= achar(iachar('a') + np - 1) // 'z..') error stop 18
  ! STAT= with an image out of range.
  st = 0
  call co_sum(s, result_image=np + 1, stat=st)
  if (st == 0) error stop 20
  ! With ERRMSG= too, on every collective: gfortran 12 passes the message variable by
  ! value (the runtime cannot fill it), which must not shift the other arguments into a
  ! crash; STAT= still says what went wrong.
  st = 0
  call co_sum(s, result_image=np + 1, stat=st, errmsg=msg)
  if (st == 0) error stop 21
  st = 0
  call co_max(s, result_image=np + 1, stat=st, errmsg=msg)
  if (st == 0) error stop 22
  st = 0
  call co_min(ch, result_image=np + 1, stat=st, errmsg=msg)
  if (st == 0) error stop 23
  st = 0
  call co_broadcast(s, np + 1, stat=st, errmsg=msg)
  if (st == 0) error stop 24
  st = 0
  call co_reduce(s, iadd, result_image=np + 1, stat=st, errmsg=msg)
  if (st == 0) error stop 25
  sync all
  print '(a,i0)', 'ok coll image=', me
contains
  ! The smallest of mod(i + k, np + 3) over the images k.
  integer function min_over(i)
    integer, intent(in) :: i
    integer :: k
    min_over = huge(0)
    do k = 1, np
      min_over = min(min_over, mod(i + k, np + 3))
    end do
  end function
end program
