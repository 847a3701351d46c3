! FORM TEAM / CHANGE TEAM / END TEAM in a loop (the first argument: iterations), with a
! team heap and a symmetric heap far too small to hold an arena (and a core team slot)
! per iteration: the team each FORM TEAM replaces, with the team formed inside it, must
! be returned. Each iteration also uses the team: SYNC ALL, a coarray allocated in it,
! co_sum, and a nested team formed from it.
program teamloop
  use iso_fortran_env, only: team_type
  implicit none
  type(team_type) :: t, u
  character(len=16) :: arg
  integer :: n, k, me, np, s
  integer, allocatable :: c(:)[:]
  call get_command_argument(1, arg)
  read (arg, *) n
  me = this_image()
  np = num_images()
  do k = 1, n
    form team(mod(me + k, 2) + 1, t)
    change team(t)
      allocate (c(100)[*])
      c = this_image() + k
      sync all
      s = c(1)[mod(this_image(), num_images()) + 1]
      if (s /= mod(this_image(), num_images()) + 1 + k) call fail('coarray in the team')
      s = 1
      call co_sum(s)
      if (s /= num_images()) call fail('co_sum in the team')
      deallocate (c)
      form team(1, u)
      change team(u)
        sync all
      end team
    end team
  end do
  sync all
  print '(a,i0)', 'ok teamloop image=', me
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,a,i0,2a)', 'FAIL teamloop image=', me, ' iteration ', k, ': ', what
    error stop 1
  end subroutine
end program
