! SYNC ALL with a stopped image, chosen by the arguments:
!   world first|last  image 1 (or the last image) stops at once; the others do several
!                     SYNC ALLs with STAT=, each reporting STAT_STOPPED_IMAGE (with the
!                     effect of SYNC MEMORY only, as the standard says), then synchronize
!                     with SYNC IMAGES (a value put before it is seen after it) and end
!                     normally
!   pairs             the last image stops; once the others see it stopped, image 1 does
!                     SYNC ALL (STAT=) then SYNC IMAGES(2) while image 2 does SYNC
!                     IMAGES(1) then SYNC ALL (STAT=): no deadlock, as SYNC ALL does not
!                     wait for the running images once a member is known to have stopped
!   team              every image is in a team (one team at 3 images, odd/even at 4);
!                     the team's last image stops inside CHANGE TEAM, the others do the
!                     same inside the team, then stop there
!   nostat            the last image stops; the others SYNC ALL without STAT=: the job
!                     ends with an error naming the stopped image
program stopsync
  use iso_fortran_env, only: stat_stopped_image, team_type
  implicit none
  character(len=16) :: mode, who
  integer :: me, np, gone
  type(team_type) :: t
  integer :: b(0:1)[*]
  b = 0
  ! Nobody puts into b before its image has zeroed it.
  sync all
  call get_command_argument(1, mode)
  call get_command_argument(2, who)
  me = this_image()
  np = num_images()
  select case (trim(mode))
  case ('world')
    gone = np
    if (trim(who) == 'first') gone = 1
    call rounds(gone)
    print '(a,i0)', 'ok stopsync image=', this_image()
  case ('team')
    if (np == 4) then
      form team(mod(me, 2) + 1, t)
    else
      form team(1, t)
    end if
    change team(t)
      call rounds(num_images())
      print '(a,i0)', 'ok stopsync image=', me
      stop
    end team
  case ('pairs')
    if (me == np) then
      print '(a,i0)', 'ok stopsync image=', me
      stop
    end if
    do while (image_status(np) /= stat_stopped_image)
    end do
    gone = -1
    if (me == 1) then
      sync all(stat=gone)
      sync images(2)
    else if (me == 2) then
      sync images(1)
      sync all(stat=gone)
    else
      sync all(stat=gone)
    end if
    if (gone /= stat_stopped_image) then
      print '(a,i0,a,i0)', 'FAIL stopsync image=', me, ' stat=', gone
      error stop 1
    end if
    print '(a,i0)', 'ok stopsync image=', me
  case ('nostat')
    if (me == np) stop
    sync all
    print '(a)', 'not reached'
  case default
    error stop 'unknown mode'
  end select
contains
  ! Image `gone` of the current team stops; the others do 6 SYNC ALLs with STAT=, in a
  ! ring of the remaining images: each puts the round number at its right neighbour
  ! before the statement and finds its left neighbour's after it.
  subroutine rounds(gone)
    integer, intent(in) :: gone
    integer :: k, st, i, n, right, left
    character(len=100) :: msg
    i = this_image()
    n = num_images()
    if (i == gone) then
      print '(a,i0)', 'ok stopsync image=', me
      stop
    end if
    right = next(i)
    left = i
    do while (next(left) /= i)
      left = next(left)
    end do
    do k = 1, 6
      msg = ''
      sync all(stat=st, errmsg=msg)
      if (st /= stat_stopped_image) then
        print '(a,i0,a,i0,a,i0)', 'FAIL stopsync image=', me, ' round ', k, ' stat=', st
        error stop 1
      end if
      if (index(msg, 'stopped') == 0) then
        print '(a,i0,2a)', 'FAIL stopsync image=', me, ' errmsg: ', trim(msg)
        error stop 1
      end if
    end do
    ! The running images still synchronize with SYNC IMAGES.
    if (right /= i) then
      b(1)[right] = 7
      if (left == right) then
        sync images(right)
      else
        sync images([left, right])
      end if
      if (b(1) /= 7) then
        print '(a,i0,a,i0)', 'FAIL stopsync image=', me, ' got ', b(1)
        error stop 1
      end if
    end if
    ! A collective reports the stopped member too (a broadcast would complete without it).
    st = 0
    call co_broadcast(k, source_image=merge(2, 1, gone == 1), stat=st)
    if (st /= stat_stopped_image) then
      print '(a,i0,a,i0)', 'FAIL stopsync image=', me, ' co_broadcast stat=', st
      error stop 1
    end if
  end subroutine

  ! The next image after `i` in the ring of images other than the stopped one.
  integer function next(i)
    integer, intent(in) :: i
    next = mod(i, num_images()) + 1
    if (next == gone_image()) next = mod(next, num_images()) + 1
  end function

  integer function gone_image()
    gone_image = num_images()
    if (trim(mode) == 'world' .and. trim(who) == 'first') gone_image = 1
  end function
end program
