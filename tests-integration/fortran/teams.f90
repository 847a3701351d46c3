! Teams: FORM TEAM (odd and even images), CHANGE TEAM / END TEAM, SYNC TEAM, TEAM_NUMBER,
! and inside a team: THIS_IMAGE / NUM_IMAGES, coindexed reads and writes and atomics with
! team image indices, SYNC ALL, SYNC IMAGES, co_sum / co_broadcast / co_max, CRITICAL, a
! coarray allocated over the team, a nested team, the team= selector of a coindexed write.
! Every image checks its values and prints "ok teams image=<n>".
program teams
  use iso_fortran_env, only: team_type, atomic_int_kind
  implicit none
  type(team_type) :: parity, solo
  integer :: me, np, tn, mt, nt, i, k, s, w(3)
  integer, allocatable :: big(:)
  integer :: a[*], sel[*], crit[*]
  integer(atomic_int_kind) :: cnt[*]
  integer, allocatable :: b(:)[:]
  me = this_image()
  np = num_images()
  a = 100 * me
  sel = 0
  crit = 0
  cnt = 0
  ! Team 1: images 1, 3, 5...; team 2: images 2, 4... (team image i is world image
  ! 2*(i-1)+tn).
  form team(2 - mod(me, 2), parity)
  tn = 2 - mod(me, 2)
  if (team_number() /= -1) call fail('team_number() of the initial team')
  if (team_number(parity) /= tn) call fail('team_number(parity)')
  ! team=: image 1 of this image's team (world image tn), written by its image 2.
  if (me == tn + 2) sel[1, team=parity] = me
  sync all
  if (me <= 2 .and. me + 2 <= np) then
    if (sel /= me + 2) call fail('a[1, team=] write')
  end if

  change team (parity)
    mt = this_image()
    nt = num_images()
    if (team_number() /= tn) call fail('team_number() in the team')
    if (nt /= merge((np + 1) / 2, np / 2, tn == 1)) call fail('num_images() in the team')
    if (mt /= (me + 1) / 2) call fail('this_image() in the team')
    ! Image indices are the team's: image 1 is world image tn.
    if (a[1] /= 100 * tn) call fail('coindexed read of team image 1')
    if (a[nt] /= 100 * (2 * (nt - 1) + tn)) call fail('coindexed read of the last team image')
    sync all
    ! Atomics and CRITICAL count the team's images only.
    call atomic_add(cnt[1], 1)
    critical
      crit[1] = crit[1] + me
    end critical
    sync all
    if (mt == 1) then
      if (cnt /= nt) call fail('atomic_add count in the team')
      if (crit /= sum([(2 * (i - 1) + tn, i = 1, nt)])) call fail('critical sum in the team')
    end if
    ! A coarray allocated over the team (its images only).
    allocate(b(nt)[*])
    b = 0
    sync all
    do i = 1, nt
      b(mt)[i] = me
    end do
    sync all
    do i = 1, nt
      if (b(i) /= 2 * (i - 1) + tn) call fail('coarray allocated in the team')
    end do
    ! Collectives over the team.
    s = me
    call co_sum(s)
    if (s /= sum([(2 * (i - 1) + tn, i = 1, nt)])) call fail('co_sum in the team')
    s = me
    call co_max(s)
    if (s /= 2 * (nt - 1) + tn) call fail('co_max in the team')
    ! A large vector: reduced from the array itself through the team's scratch buffer.
    allocate(big(30001))
    big = [(me + i, i = 1, size(big))]
    call co_sum(big)
    if (any(big /= [(sum([(2 * (k - 1) + tn, k = 1, nt)]) + nt * i, i = 1, size(big))])) &
        call fail('co_sum of a large vector in the team')
    deallocate(big)
    w = [me, tn, mt]
    call co_broadcast(w, nt)
    if (any(w /= [2 * (nt - 1) + tn, tn, nt])) call fail('co_broadcast in the team')
    ! SYNC IMAGES in team numbers: image 1 with every other, then all of them.
    if (mt == 1) then
      b(1)[nt] = -1
      sync images(*)
    else
      sync images(1)
    end if
    if (mt == nt .and. nt > 1) then
      if (b(1) /= -1) call fail('sync images in the team')
    end if
    sync team(parity)
    ! A nested team: every image alone.
    form team(mt, solo)
    change team (solo)
      if (num_images() /= 1 .or. this_image() /= 1) call fail('nested team images')
      if (team_number() /= mt) call fail('nested team number')
      s = me
      call co_sum(s)
      if (s /= me) call fail('co_sum in a team of one')
      sync all
    end team
    if (team_number() /= tn .or. this_image() /= mt) call fail('back in the parent team')
    sync all
    deallocate(b)
  end team

  if (this_image() /= me .or. num_images() /= np) call fail('back in the initial team')
  if (team_number() /= -1) call fail('team_number() back in the initial team')
  sync all
  s = me
  call co_sum(s)
  if (s /= np * (np + 1) / 2) call fail('co_sum over every image after END TEAM')
  ! A coarray allocated in the initial team after the team's: every image has it.
  allocate(b(np)[*])
  b(me)[mod(me, np) + 1] = me
  sync all
  if (b(mod(me + np - 2, np) + 1) /= mod(me + np - 2, np) + 1) call fail('coarray after END TEAM')
  deallocate(b)
  ! The same team value again.
  change team (parity)
    s = 1
    call co_sum(s)
    if (s /= num_images()) call fail('co_sum in the team, second time')
  end team
  print '(a,i0)', 'ok teams image=', me
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,2a)', 'FAIL teams image=', me, ': ', what
    error stop 1
  end subroutine
end program
