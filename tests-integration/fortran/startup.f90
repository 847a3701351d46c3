! What happens before and at the program's first statements: static coarrays with initial
! values, written by another image at once (the images must not overwrite each other's
! writes with their initial values), and RANDOM_INIT's four cases across the images.
program startup
  implicit none
  integer :: a(3)[*] = 1, b(3)[*] = 2
  integer :: me, np, left, right, n
  integer, allocatable :: seed(:), first(:)
  logical :: ok

  me = this_image()
  np = num_images()
  left = merge(np, me - 1, me == 1)
  right = merge(1, me + 1, me == np)
  ok = .true.

  ! No SYNC first: the right neighbour's initial value must already be there.
  if (mod(me, 2) == 0) then
    a(:)[right] = a(:)[right] + me
  else
    b(:)[left] = b(:)[left] + me
  end if
  sync all
  if (mod(me, 2) == 0) then
    call check('initial value kept, a', all(a(:)[right] == 1 + me))
  else if (np > 1 .or. me /= 1) then
    call check('initial value kept, b', all(b(:)[left] == 2 + me))
  end if
  sync all

  call random_seed(size=n)
  allocate(seed(n), first(n))

  ! repeatable, distinct: images differ in every word; the same again on a second call.
  call random_init(.true., .true.)
  call random_seed(get=seed)
  first = seed
  call co_broadcast(first, 1)
  if (me /= 1) call check('(T,T) distinct', all(seed /= first))
  first = seed
  call random_init(.true., .true.)
  call random_seed(get=seed)
  call check('(T,T) repeatable', all(seed == first))

  ! repeatable, not distinct: the same on every image.
  call random_init(.true., .false.)
  call random_seed(get=seed)
  first = seed
  call co_broadcast(first, 1)
  call check('(T,F) same everywhere', all(seed == first))

  ! Not repeatable, not distinct: the same on every image, new at the next call.
  call random_init(.false., .false.)
  call random_seed(get=seed)
  first = seed
  call co_broadcast(first, 1)
  call check('(F,F) same everywhere', all(seed == first))
  call random_init(.false., .false.)
  call random_seed(get=seed)
  call check('(F,F) new at the next call', any(seed /= first))

  ! Not repeatable, distinct: images differ.
  call random_init(.false., .true.)
  call random_seed(get=seed)
  first = seed
  call co_broadcast(first, 1)
  if (me /= 1) call check('(F,T) distinct', any(seed /= first))

  if (.not. ok) error stop 1
  print '(a,i0)', 'ok startup image=', me

contains

  subroutine check(what, cond)
    character(*), intent(in) :: what
    logical, intent(in) :: cond
    if (.not. cond) then
      print '(a,a,a,i0)', 'FAIL ', what, ' image=', me
      ok = .false.
    end if
  end subroutine

end program
