! Termination and loud failures, chosen by the first argument:
!   stop       every image prints its ok line, then STOP 3 (the job exits 3)
!   errorstop  the last image ERROR STOPs 7 while the others wait in SYNC ALL
!   errorstr   image 1 ERROR STOPs with a message (the job exits 1)
!   vector     a coindexed read with a vector subscript (likewise)
!   component  allocating an allocatable component of a coarray (likewise)
program term
  implicit none
  type :: box
    integer, allocatable :: p(:)
  end type
  character(len=16) :: mode
  integer :: me, np, a(4)[*], v(2)
  type(box) :: b[*]
  me = this_image()
  np = num_images()
  a = me
  call get_command_argument(1, mode)
  select case (trim(mode))
  case ('stop')
    print '(a,i0)', 'ok term image=', me
    stop 3
  case ('errorstop')
    print '(a,i0)', 'ok term image=', me
    if (me == np) error stop 7
    sync all
    print '(a)', 'not reached'
  case ('errorstr')
    print '(a,i0)', 'ok term image=', me
    sync all
    if (me == 1) error stop 'bad thing'
    sync all
  case ('vector')
    sync all
    v = a([1, 3])[np]
    print *, v
  case ('component')
    allocate(b%p(3))
  end select
end program
