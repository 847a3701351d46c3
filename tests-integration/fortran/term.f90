! Termination and loud failures, chosen by the first argument:
!   stop       every image prints its ok line, then STOP 3 (the job exits 3)
!   errorstop  the last image ERROR STOPs 7 while the others wait in SYNC ALL
!   errorstr   image 1 ERROR STOPs with a message (the job exits 1)
!   pointer    a coindexed read through a pointer component associated with memory
!              that is not symmetric (not supported yet: must fail naming it)
!   unalloc    image 1 writes into an allocatable component not allocated on the last
!              image (an error naming _gfortran_caf_send_by_ref once)
program term
  implicit none
  type :: box
    integer, pointer :: q(:) => null()
  end type
  character(len=16) :: mode
  integer :: me, np, a(4)[*], v(2)
  integer, allocatable, target :: tgt(:)
  type(box) :: b[*]
  type :: abox
    integer, allocatable :: c(:)
  end type
  type(abox) :: ab[*]
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
  case ('pointer')
    allocate(tgt(3))
    tgt = me
    b%q => tgt
    sync all
    if (me == 1) v = b[np]%q(1:2)
    print *, v
    sync all
  case ('unalloc')
    sync all
    if (me == 1) ab[np]%c(1:2) = [1, 2]
    sync all
    print '(a)', 'not reached'
  end select
end program
