! Vector subscripts on coindexed objects: reads, writes and image-to-image copies, in
! rank 1 and 2 (vector in either dimension, mixed with triplets and scalars), with
! non-default lower bounds, index kinds 2 and 8, kind conversion, allocatable coarrays,
! repeated indices on reads, and a copy onto the same image.
program vector
  implicit none
  integer, parameter :: n = 10
  integer :: a(n)[*], b(4, 6)[*], c(0:9)[*], d(-2:3, 5)[*]
  real(8) :: r(n)[*]
  integer, allocatable :: e(:)[:]
  integer :: me, np, nb, prv, i, j, k
  integer :: idx(3), x(3), y(3, 4), z(2, 3), w(4), cols(3)
  integer(2) :: i2(2)
  integer(8) :: i8(3), x8(3)
  real(8) :: rr(3)
  logical :: ok

  me = this_image()
  np = num_images()
  nb = merge(1, me + 1, me == np)   ! the next image
  prv = merge(np, me - 1, me == 1)  ! the previous image
  ok = .true.

  do i = 1, n
    a(i) = 100 * me + i
    r(i) = 100 * me + i
    c(i - 1) = 1000 * me + i - 1
  end do
  do j = 1, 6
    do i = 1, 4
      b(i, j) = 1000 * me + 10 * i + j
    end do
  end do
  do j = 1, 5
    do i = -2, 3
      d(i, j) = 1000 * me + 10 * (i + 2) + j
    end do
  end do
  allocate(e(-1:8)[*])
  do i = -1, 8
    e(i) = 100 * me + i
  end do
  sync all

  ! Reads.
  idx = [1, 5, 9]
  x = a(idx)[nb]
  call check('get rank 1', all(x == 100 * nb + idx))
  x = a([10, 2, 2])[nb]
  call check('get repeated, out of order', all(x == 100 * nb + [10, 2, 2]))
  y = b([4, 1, 2], 2:5)[nb]
  do j = 1, 4
    call check('get vector x triplet', all(y(:, j) == 1000 * nb + 10 * [4, 1, 2] + j + 1))
  end do
  cols = [6, 1, 3]
  z = b(2:4:2, cols)[nb]
  do j = 1, 3
    call check('get triplet x vector', all(z(:, j) == 1000 * nb + 10 * [2, 4] + cols(j)))
  end do
  w(1:3) = b([3, 1, 4], 5)[nb]
  call check('get vector x scalar', all(w(1:3) == 1000 * nb + 10 * [3, 1, 4] + 5))
  i2 = [int(9, 2), int(0, 2)]
  w(1:2) = c(i2)[nb]
  call check('get kind 2 indices, lbound 0', all(w(1:2) == 1000 * nb + [9, 0]))
  i8 = [3_8, -2_8, 0_8]
  w(1:3) = d(i8, 4)[nb]
  call check('get kind 8 indices, lbound -2', all(w(1:3) == 1000 * nb + 10 * ([3, -2, 0] + 2) + 4))
  x8 = a(idx)[nb]
  call check('get with kind conversion', all(x8 == 100 * nb + idx))
  w(1:3) = e([8, -1, 0])[nb]
  call check('get allocatable', all(w(1:3) == 100 * nb + [8, -1, 0]))
  rr = r([2, 4, 6])[nb]
  call check('get real(8)', all(rr == 100 * nb + [2, 4, 6]))
  sync all

  ! Writes: each image writes into the next image's arrays.
  a([2, 4, 6])[nb] = [-1, -2, -3] * me
  b([1, 3], [2, 5])[nb] = reshape([1, 2, 3, 4], [2, 2]) * me
  r([1, 10])[nb] = [0.5d0, 1.5d0] * me
  e([0, 7])[nb] = -me
  d([-1, 3], 2)[nb] = int([7_8, 8_8], 4) * me
  sync all
  call check('put rank 1', all(a([2, 4, 6]) == [-1, -2, -3] * prv))
  call check('put rank 1 untouched', all(a([1, 3, 5, 7, 8, 9, 10]) == 100 * me + [1, 3, 5, 7, 8, 9, 10]))
  call check('put rank 2', all(b([1, 3], [2, 5]) == reshape([1, 2, 3, 4], [2, 2]) * prv))
  call check('put rank 2 untouched', b(2, 2) == 1000 * me + 22 .and. b(1, 3) == 1000 * me + 13)
  call check('put real', all(r([1, 10]) == [0.5d0, 1.5d0] * prv))
  call check('put scalar to vector section', all(e([0, 7]) == -prv) .and. e(1) == 100 * me + 1)
  call check('put lbound -2', all(d([-1, 3], 2) == [7, 8] * prv) .and. d(0, 2) == 1000 * me + 22)
  sync all

  ! Image-to-image copies: into this image from the next, with vectors on either side.
  a([1, 3])[me] = a([9, 10])[nb]
  call check('sendget both vectors', all(a([1, 3]) == 100 * nb + [9, 10]))
  a(7:8)[me] = b([4, 2], 6)[nb]
  call check('sendget source vector', all(a(7:8) == 1000 * nb + 10 * [4, 2] + 6))
  a([5, 6])[me] = c(3:4)[nb]
  call check('sendget destination vector', all(a([5, 6]) == 1000 * nb + [3, 4]))
  r([3, 2])[me] = a([2, 4])[nb]
  call check('sendget with conversion', all(r([3, 2]) == real([-1, -2] * me, 8)))
  sync all

  ! On the same image, overlapping: a(3:5) = a([5, 4, 3]) reversed in place.
  k = a(3)
  j = a(5)
  a([3, 4, 5])[me] = a([5, 4, 3])[me]
  call check('same image reversal', a(5) == k .and. a(3) == j)
  sync all

  if (.not. ok) error stop 1
  print '(a,i0)', 'ok vector image=', me

contains

  subroutine check(what, cond)
    character(*), intent(in) :: what
    logical, intent(in) :: cond
    if (.not. cond) then
      print '(a,a,a,i0)', 'FAIL ', what, ' image=', me
      ok = .false.
    end if
  end subroutine

end program
