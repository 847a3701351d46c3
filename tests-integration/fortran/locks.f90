! Locks under contention, in the protocol RSHMEM_CAF_LOCK chooses: every image takes
! two locks (at image 1 and at the last image) many times, with LOCK and with
! ACQUIRED_LOCK=, and checks inside that nobody else is in the section.
! `locks stop`: image 1 stops holding a lock; the others' LOCK with STAT= must report
! STAT_STOPPED_IMAGE instead of waiting for ever.
program locks
  use iso_fortran_env, only: lock_type, STAT_STOPPED_IMAGE
  implicit none
  type(lock_type) :: lk[*]
  integer :: holder[*], count[*], tries[*]
  integer :: me, np, i, t, h, st
  logical :: got
  character(len=8) :: mode
  integer, parameter :: iters = 3000
  me = this_image()
  np = num_images()
  call get_command_argument(1, mode)
  if (mode == 'stop') then
    if (me == 1) lock(lk[np])
    sync all
    if (me == 1) stop
    lock(lk[np], stat=st)
    if (st /= STAT_STOPPED_IMAGE) then
      print '(a,i0,a,i0)', 'image ', me, ': LOCK behind a stopped holder gave stat=', st
      error stop 21
    end if
    print '(a,i0)', 'ok locks image=', me
    stop
  end if
  holder = 0
  count = 0
  tries = 0
  sync all
  do i = 1, iters
    t = merge(1, np, mod(i, 2) == 0)
    if (mod(i, 7) == 0) then
      lock(lk[t], acquired_lock=got)
      if (.not. got) cycle
      tries[t] = tries[t] + 1
    else
      lock(lk[t])
    end if
    h = holder[t]
    if (h /= 0) then
      print '(a,i0,a,i0,a,i0)', 'image ', me, ' found image ', h, ' inside the lock at ', t
      error stop 1
    end if
    holder[t] = me
    count[t] = count[t] + 1
    if (holder[t] /= me) error stop 2
    holder[t] = 0
    unlock(lk[t])
  end do
  sync all
  if (me == 1) then
    ! Every image made iters/2 blocking LOCKs at each target, less its successful tries
    ! (counted separately): the counts add up only if no update was lost.
    h = 0
    do t = 1, np
      h = h + count[t]
    end do
    if (h /= np * (iters - iters / 7) + sum_tries()) error stop 3
  end if
  sync all
  print '(a,i0)', 'ok locks image=', me
contains
  integer function sum_tries()
    integer :: k
    sum_tries = 0
    do k = 1, np
      sum_tries = sum_tries + tries[k]
    end do
  end function
end program
