! Atomic subroutines, events, locks (contended, ACQUIRED_LOCK=, STAT=), CRITICAL.
program atomics
  use iso_fortran_env
  implicit none
  integer, parameter :: iters = 200
  integer :: me, np, i, old, st, cnt
  integer(atomic_int_kind) :: counter[*], bits[*], flag[*]
  logical(atomic_logical_kind) :: done[*]
  logical :: acq
  integer :: shared[*], crit_count[*]
  type(event_type) :: ev[*], evs(3)[*]
  type(lock_type) :: lk[*], lks(2)[*]
  me = this_image()
  np = num_images()
  call atomic_define(counter, 0)
  call atomic_define(bits, 0)
  call atomic_define(flag, 0)
  call atomic_define(done, .false.)
  shared = 0
  crit_count = 0
  sync all

  ! Every image adds to image 1's counter; fetch forms and bitwise operations.
  do i = 1, iters
    call atomic_add(counter[1], 1)
  end do
  call atomic_fetch_add(counter[1], 1000, old)
  if (old < 0) error stop 2
  call atomic_or(bits[1], ishft(1, me - 1))
  call atomic_fetch_and(bits[1], -1, old)
  sync all
  if (me == 1) then
    call atomic_ref(i, counter)
    if (i /= np * (iters + 1000)) error stop 3
    call atomic_ref(i, bits)
    if (i /= 2**np - 1) error stop 4
  end if
  ! Compare-and-swap: exactly one image wins image 1's flag.
  call atomic_cas(flag[1], old, 0, me)
  sync all
  call atomic_ref(i, flag[1])
  if (i < 1 .or. i > np) error stop 5
  if (old == 0 .and. i /= me) error stop 6
  call atomic_define(done[np], .true.)
  sync all
  if (me == np) then
    call atomic_ref(acq, done)
    if (.not. acq) error stop 7
  end if

  ! Events: every image posts to image 1, which waits for all of them.
  event post(ev[1])
  if (me == 1) then
    event wait(ev, until_count=np)
    call event_query(ev, cnt)
    if (cnt /= 0) error stop 8
  end if
  ! Element events: image 1 posts evs(2) on every image twice, each waits for 2.
  if (me == 1) then
    do i = 1, np
      event post(evs(2)[i])
      event post(evs(2)[i])
    end do
  end if
  event wait(evs(2), until_count=2)
  call event_query(evs(3), cnt)
  if (cnt /= 0) error stop 9
  sync all

  ! A lock at image 1 guards a read-modify-write of image 1's `shared`.
  do i = 1, iters
    lock(lk[1])
    shared[1] = shared[1] + 1
    unlock(lk[1])
  end do
  ! Locks at other images, by element.
  lock(lks(2)[np])
  lock(lks(2)[np], stat=st)
  if (st /= STAT_LOCKED) error stop 10
  unlock(lks(2)[np])
  unlock(lks(2)[np], stat=st)
  if (st == 0) error stop 11
  ! CRITICAL.
  do i = 1, iters
    critical
      crit_count[1] = crit_count[1] + 1
    end critical
  end do
  sync all
  if (me == 1) then
    if (shared /= np * iters) error stop 12
    if (crit_count /= np * iters) error stop 13
  end if
  ! ACQUIRED_LOCK=: image 1 holds the lock; the others fail to acquire it.
  if (me == 1) lock(lk[1])
  sync all
  if (me /= 1) then
    lock(lk[1], acquired_lock=acq)
    if (acq) error stop 14
    unlock(lk[1], stat=st)
    if (st /= STAT_LOCKED_OTHER_IMAGE) error stop 15
  end if
  sync all
  if (me == 1) unlock(lk[1])
  sync all
  if (me == np) then
    lock(lk[1], acquired_lock=acq)
    if (.not. acq) error stop 16
    unlock(lk[1])
  end if
  sync all
  print '(a,i0)', 'ok atomics image=', me
end program
