! Collectives on integer(16) (values beyond 64 bits): co_sum, co_min, co_max, co_reduce
! (by value and by reference), scalars and arrays.
program kind16
  implicit none
  integer, parameter :: k = 16
  integer(k), parameter :: big = 2_k**70
  integer(k) :: s, a(3), want
  integer :: me, np, i
  me = this_image()
  np = num_images()
  s = big * me
  call co_sum(s)
  want = big * (np * (np + 1) / 2)
  if (s /= want) call fail('co_sum scalar')
  a = [(big * me + i, i = 1, 3)]
  call co_max(a)
  if (any(a /= [(big * np + i, i = 1, 3)])) call fail('co_max array')
  a = [(-big * me + i, i = 1, 3)]
  call co_min(a)
  if (any(a /= [(-big * np + i, i = 1, 3)])) call fail('co_min array')
  s = big + me
  call co_reduce(s, add)
  if (s /= big * np + np * (np + 1) / 2) call fail('co_reduce by reference')
  s = big - me
  call co_reduce(s, mx, result_image=1)
  if (me == 1 .and. s /= big - 1) call fail('co_reduce result_image')
  print '(a,i0)', 'ok kind16 image=', me
contains
  pure function add(x, y) result(z)
    integer(k), intent(in) :: x, y
    integer(k) :: z
    z = x + y
  end function
  pure function mx(x, y) result(z)
    integer(k), value :: x, y
    integer(k) :: z
    z = max(x, y)
  end function
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,2a)', 'FAIL kind16 image=', me, ': ', what
    error stop 1
  end subroutine
end program
