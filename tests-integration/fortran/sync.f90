! SYNC ALL, SYNC IMAGES (lists, *, back to back), SYNC MEMORY, STAT= and ERRMSG=.
program sync
  implicit none
  integer :: me, np, right, left, i, st, round
  integer :: x[*], got(100)[*]
  character(len=60) :: msg
  me = this_image()
  np = num_images()
  right = mod(me, np) + 1
  left = mod(me + np - 2, np) + 1
  x = 0
  sync all(stat=st, errmsg=msg)
  if (st /= 0) error stop 2
  ! A token passed around the ring with pairwise SYNC IMAGES, several rounds back to back.
  do round = 1, 5
    if (me == 1) then
      x[right] = round
      sync images(right)
      if (np > 1) sync images(left)
    else
      sync images(left)
      if (x /= round) error stop 3
      x[right] = round
      sync images(right)
    end if
  end do
  if (x /= 5) error stop 4
  ! Image 1 against all others with a list; the others against image 1.
  if (me == 1) then
    got = 0
    sync images(*)
    sync images([(i, i = 2, np)], stat=st)
    if (st /= 0) error stop 5
    do i = 2, np
      if (got(i) /= i) error stop 6
    end do
  else
    sync images(1)
    got(me)[1] = me
    sync memory
    sync images([1], stat=st)
    if (st /= 0) error stop 7
  end if
  ! Including this image in the list is allowed.
  sync images([me])
  ! Errors with STAT=: a duplicate image and an image out of range.
  if (np >= 2) then
    sync images([right, right], stat=st, errmsg=msg)
    if (st == 0) error stop 8
  end if
  msg = ''
  sync images([np + 1], stat=st, errmsg=msg)
  if (st == 0 .or. len_trim(msg) == 0) error stop 9
  sync all
  print '(a,i0)', 'ok sync image=', me
end program
