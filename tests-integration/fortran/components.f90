! Derived-type coarrays with allocatable and pointer components reached through a
! coindexed object (gfortran's _by_ref calls and registration kinds 7 and 8): every image
! allocates its components with its own sizes; the others read, write and copy them,
! ask ALLOCATED(), see deallocation and reallocation, through scalar, rank-1 and rank-2
! components, a component of a component, an array of derived type, vector subscripts,
! kind conversion, strides given as (::2), reallocation of an allocatable destination, and
! co_broadcast of a derived type with allocatable components.
module comp_types
  implicit none
  type :: inner
    integer, allocatable :: v(:)
  end type
  type :: t
    integer :: s
    real(8), allocatable :: p(:)
    integer, allocatable :: q(:, :)
    integer :: st(4)
    integer, allocatable :: sc
    type(inner) :: in
    integer, pointer :: ptr(:) => null()
  end type
  ! gfortran 12 crashes allocating a coarray of type t; a simpler type works.
  type :: u
    real(8), allocatable :: p(:)
  end type
end module

program components
  use comp_types
  implicit none
  type(t) :: obj[*]
  type(t) :: arr(3)[*]
  type(u), allocatable :: al[:]
  real(8), allocatable :: xa(:)
  real(8) :: x(4)
  integer :: me, np, nb, prv, i, j, k, y(2, 2), w(3)
  integer, allocatable :: ia(:)
  logical :: ok

  me = this_image()
  np = num_images()
  nb = merge(1, me + 1, me == np)
  prv = merge(np, me - 1, me == 1)
  ok = .true.

  ! Each image allocates its own components, of sizes of its own.
  obj%s = me
  obj%st = 10 * me + [1, 2, 3, 4]
  allocate(obj%p(5 + me))
  obj%p = [(100 * me + i, i = 1, 5 + me)]
  allocate(obj%q(0:2, 3))
  do j = 1, 3
    do i = 0, 2
      obj%q(i, j) = 1000 * me + 10 * i + j
    end do
  end do
  allocate(obj%sc)
  obj%sc = -me
  allocate(obj%in%v(3))
  obj%in%v = 10 * me + [1, 2, 3]
  allocate(obj%ptr(4))
  obj%ptr = 7 * me + [1, 2, 3, 4]
  do i = 1, 3
    arr(i)%s = i
    arr(i)%st = 0
  end do
  ! arr(2)%p only on even images.
  if (mod(me, 2) == 0) then
    allocate(arr(2)%p(2))
    arr(2)%p = [1.5d0, 2.5d0] * me
  end if
  sync all

  ! ALLOCATED() on another image.
  call check('allocated p', allocated(obj[nb]%p))
  call check('allocated arr(2)%p', allocated(arr(2)[nb]%p) .eqv. (mod(nb, 2) == 0))
  call check('not allocated arr(1)%p', .not. allocated(arr(1)[nb]%p))
  call check('allocated nested', allocated(obj[nb]%in%v))

  ! Reads.
  x = obj[nb]%p(2:5)
  call check('get section', all(x == 100 * nb + [2, 3, 4, 5]))
  xa = obj[nb]%p
  call check('get whole, reallocated', size(xa) == 5 + nb .and. lbound(xa, 1) == 1)
  call check('get whole values', all(xa == [(100 * nb + i, i = 1, 5 + nb)]))
  x(1:2) = obj[nb]%p(5 + nb:4 + nb:-1)
  call check('get reversed, remote size', all(x(1:2) == 100 * nb + [5 + nb, 4 + nb]))
  y = obj[nb]%q(1:2, 2:3)
  call check('get rank 2, lbound 0', all(y == reshape(1000 * nb + [12, 22, 13, 23], [2, 2])))
  w = obj[nb]%q(2, :)
  call check('get row', all(w == 1000 * nb + 20 + [1, 2, 3]))
  k = obj[nb]%st(3)
  call check('get static array element', k == 10 * nb + 3)
  k = obj[nb]%sc
  call check('get scalar component', k == -nb)
  w(1:2) = obj[nb]%in%v([3, 1])
  call check('get nested, vector subscript', all(w(1:2) == 10 * nb + [3, 1]))
  w(1:2) = obj[nb]%ptr(2:3)
  call check('get pointer component', all(w(1:2) == 7 * nb + [2, 3]))
  k = obj[nb]%p(1)
  call check('get with conversion', k == 100 * nb + 1)
  if (mod(nb, 2) == 0) then
    x(1:2) = arr(2)[nb]%p
    call check('get through array of derived type', all(x(1:2) == [1.5d0, 2.5d0] * nb))
  end if
  k = arr(3)[nb]%s
  call check('get plain component', k == 3)
  ia = obj[nb]%in%v
  call check('get into an unallocated array', size(ia) == 3 .and. all(ia == 10 * nb + [1, 2, 3]))
  ! (::2) reaches the runtime as a full range with a stride; (2::2) as an open end.
  w(1:2) = obj[nb]%in%v(::2)
  call check('get (::2)', all(w(1:2) == 10 * nb + [1, 3]))
  w(1:2) = obj[nb]%st(2::2)
  call check('get static (2::2)', all(w(1:2) == 10 * nb + [2, 4]))
  w(1:2) = obj[nb]%in%v(2::1)
  call check('get (2::1)', all(w(1:2) == 10 * nb + [2, 3]))
  w(1:2) = obj[nb]%st(::2)
  call check('get static (::2)', all(w(1:2) == 10 * nb + [1, 3]))
  y = obj[nb]%q(::2, 2:3)
  call check('get rank 2 (::2, :)', all(y == reshape(1000 * nb + [2, 22, 3, 23], [2, 2])))
  sync all

  ! Writes into the next image.
  obj[nb]%p(2:5) = -[1, 2, 3, 4] * me
  obj[nb]%sc = 42 * me
  obj[nb]%q(2, :) = [-1, -2, -3] * me
  obj[nb]%in%v(2) = 99 * me
  obj[nb]%ptr([1, 4]) = [5, 6] * me
  arr(1)[nb]%st(2:4:2) = [8, 9] * me
  obj[nb]%p(1) = 3 * me
  sync all
  call check('put section', all(obj%p(2:5) == -[1, 2, 3, 4] * prv))
  call check('put with conversion', obj%p(1) == 3 * prv)
  call check('put untouched', obj%p(5 + me) == 100 * me + 5 + me)
  call check('put scalar', obj%sc == 42 * prv)
  call check('put row', all(obj%q(2, :) == [-1, -2, -3] * prv) .and. obj%q(1, 1) == 1000 * me + 11)
  call check('put nested', all(obj%in%v == [10 * me + 1, 99 * prv, 10 * me + 3]))
  call check('put pointer, vector', all(obj%ptr == [5 * prv, 7 * me + 2, 7 * me + 3, 6 * prv]))
  call check('put static section', all(arr(1)%st == [0, 8 * prv, 0, 9 * prv]))
  sync all

  ! Strided writes: a full range with a stride, an open end, with conversion.
  obj[nb]%ptr(::2) = [11, 12] * me
  arr(3)[nb]%st(::3) = [real(8) :: 4, 5] * me
  sync all
  call check('put (::2)', all(obj%ptr == [11 * prv, 7 * me + 2, 12 * prv, 6 * prv]))
  call check('put static (::3), converted', all(arr(3)%st == [4 * prv, 0, 0, 5 * prv]))
  sync all

  ! Copies between images: from the next image into this one.
  obj[me]%q(0, 1:2) = obj[nb]%in%v(1:3:2)
  call check('sendget', all(obj%q(0, 1:2) == 10 * nb + [1, 3]))
  obj[me]%p(1:2) = obj[nb]%q(1, 2:3)
  call check('sendget with conversion', all(obj%p(1:2) == 1000 * nb + 10 + [2, 3]))
  sync all

  ! Deallocation is seen by the others; reallocation with another size too.
  deallocate(obj%p)
  sync all
  call check('deallocated', .not. allocated(obj[nb]%p))
  sync all
  allocate(obj%p(2 * me))
  obj%p = -me
  sync all
  xa = obj[nb]%p
  call check('reallocated', size(xa) == 2 * nb .and. all(xa == -nb))
  sync all

  ! An allocatable derived-type coarray.
  allocate(al[*])
  allocate(al%p(3))
  al%p = [1, 2, 3] * me
  sync all
  x(1) = al[nb]%p(2)
  call check('allocatable coarray component', x(1) == 2 * nb)
  sync all
  deallocate(al)

  ! co_broadcast of a derived type with allocatable components: gfortran 12 passes each
  ! component in a descriptor whose span and offset it leaves unset.
  call bcast_components()

  if (.not. ok) error stop 1
  print '(a,i0)', 'ok components image=', me

contains

  subroutine bcast_components()
    type :: dyn
      integer, allocatable :: v(:)
      logical, allocatable :: m(:, :)
      complex, allocatable :: c
      character(len=4), allocatable :: names(:)
    end type
    type(dyn) :: msg
    allocate(msg%v(3), msg%m(2, 2), msg%c, msg%names(2))
    if (me == np) then
      msg%v = [7, 8, 9]
      msg%m = reshape([.true., .false., .false., .true.], [2, 2])
      msg%c = (1.5, -2.5)
      msg%names = ['ab  ', 'cdef']
    else
      msg%v = 0
      msg%m = .false.
      msg%c = (0, 0)
      msg%names = '    '
    end if
    call co_broadcast(msg, source_image=np)
    call check('co_broadcast vector component', all(msg%v == [7, 8, 9]))
    call check('co_broadcast matrix component', &
      all(msg%m .eqv. reshape([.true., .false., .false., .true.], [2, 2])))
    call check('co_broadcast scalar component', msg%c == (1.5, -2.5))
    call check('co_broadcast character component', all(msg%names == ['ab  ', 'cdef']))
  end subroutine

  subroutine check(what, cond)
    character(*), intent(in) :: what
    logical, intent(in) :: cond
    if (.not. cond) then
      print '(a,a,a,i0)', 'FAIL ', what, ' image=', me
      ok = .false.
    end if
  end subroutine

end program
