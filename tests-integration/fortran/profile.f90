! Collectives counted in the profile: `profile <k>` calls co_sum on 3 default integers
! k times, then co_broadcast of 2 of them once. Run with SHMEM_PROFILE=1, the summary
! at the end counts them under coll (12 and 8 bytes a call).
program profile
  implicit none
  integer :: v(3), k, i, me
  character(len=16) :: arg
  call get_command_argument(1, arg)
  read (arg, *) k
  me = this_image()
  do i = 1, k
    v = [1, me, i]
    call co_sum(v)
    if (v(1) /= num_images()) error stop "co_sum"
  end do
  v(1:2) = me
  call co_broadcast(v(1:2), 1)
  if (v(2) /= 1) error stop "co_broadcast"
  write (*, '(a, i0)') "ok profile image=", me
end program
