! Coindexed sections: contiguous and strided, rank 1 to 3, negative strides, kind and
! type conversion, characters, overlap on the same image, sendget, allocatable coarrays.
program xfer
  implicit none
  integer :: me, np, right, left, i, j, k
  integer :: a(10)[*], v(5)
  real(8) :: b(4,5)[*], w(4)
  integer :: c3(3,4,5)[*], t3(2,2,3)
  integer(2) :: s2(6)[*]
  integer(8) :: l8(6)
  real(4) :: f4(3)[*]
  character(len=4) :: ch(3)[*]
  character(len=6) :: ch6
  integer, allocatable :: z(:,:)[:]
  ! Large coarrays (32 KiB and more) start 16 bytes past a page (token.rs, PLACE_FROM).
  real(8) :: big_s(5000)[*]
  real(8), allocatable :: big(:)[:], src(:)
  me = this_image()
  np = num_images()
  right = mod(me, np) + 1
  left = mod(me + np - 2, np) + 1
  a = [(me * 100 + i, i = 1, 10)]
  do j = 1, 5
    do i = 1, 4
      b(i, j) = me * 1000 + i * 10 + j
    end do
  end do
  do k = 1, 5
    do j = 1, 4
      do i = 1, 3
        c3(i, j, k) = me * 10000 + i * 100 + j * 10 + k
      end do
    end do
  end do
  s2 = [(int(me * 10 + i, 2), i = 1, 6)]
  f4 = [1.5, 2.5, 3.5] * me
  ch = ['ab', 'cd', 'ef']
  sync all

  ! Rank-1 strided get and a reversed one.
  v = a(1:9:2)[right]
  if (any(v /= [(right * 100 + i, i = 1, 9, 2)])) error stop 10
  v = a(10:2:-2)[right]
  if (any(v /= [(right * 100 + i, i = 10, 2, -2)])) error stop 11
  ! A row of a matrix (strided by 4 elements) and a column (contiguous).
  w(1:4) = b(:, 3)[right]
  if (any(w /= [(right * 1000 + i * 10 + 3, i = 1, 4)])) error stop 12
  v = int(b(2, :)[right])
  if (any(v /= [(right * 1000 + 20 + j, j = 1, 5)])) error stop 13
  ! Rank-3 strided section.
  t3 = c3(1:3:2, 2:3, 1:5:2)[right]
  do k = 1, 3
    do j = 1, 2
      do i = 1, 2
        if (t3(i, j, k) /= right * 10000 + (2*i - 1) * 100 + (j + 1) * 10 + (2*k - 1)) &
          error stop 14
      end do
    end do
  end do
  ! Kind conversion on get: integer(2) -> integer(8), real(4) -> real(8).
  l8 = s2(:)[right]
  if (any(l8 /= [(right * 10 + i, i = 1, 6)])) error stop 15
  w(1:3) = f4(:)[right]
  if (any(w(1:3) /= [1.5d0, 2.5d0, 3.5d0] * right)) error stop 16
  ! Characters: padding on get.
  ch6 = ch(2)[right]
  if (ch6 /= 'cd    ') error stop 17
  sync all

  ! Strided put with conversion (integer -> real(8)) into the left image's row 1.
  b(1, :)[left] = [(me * 7 + j, j = 1, 5)]
  ! Rank-3 strided put.
  c3(2, 1:4:3, 2:5:3)[left] = reshape([-1, -2, -3, -4] * me, [2, 2])
  ! Character truncation on put.
  ch6 = 'xyzzy'
  ch(3)[left] = ch6
  sync all
  if (any(b(1, :) /= [(right * 7 + j, j = 1, 5)])) error stop 20
  if (c3(2, 1, 2) /= -right .or. c3(2, 4, 2) /= -2 * right .or. &
      c3(2, 1, 5) /= -3 * right .or. c3(2, 4, 5) /= -4 * right) error stop 21
  if (c3(2, 2, 2) /= me * 10000 + 200 + 20 + 2) error stop 22
  if (ch(3) /= 'xyzz') error stop 23
  sync all

  ! Overlapping source and destination on this image.
  a = [(i, i = 1, 10)]
  a(2:10)[me] = a(1:9)
  if (any(a /= [1, (i, i = 1, 9)])) error stop 30
  a(1:9) = a(2:10)[me]
  if (any(a(1:9) /= [(i, i = 1, 9)])) error stop 31
  a(:)[me] = a(10:1:-1)
  if (any(a /= [9, (i, i = 9, 1, -1)])) error stop 32
  sync all

  ! Sendget: the right image's b row 4 into the left image's a(1:5).
  a = 0
  b(4, :) = [(me * 3 + j, j = 1, 5)]
  sync all
  a(1:9:2)[left] = b(4, :)[right]
  sync all
  ! My a was written by my right neighbour, from its right neighbour's b.
  k = mod(right, np) + 1
  if (any(a(1:9:2) /= [(k * 3 + j, j = 1, 5)])) error stop 40
  if (any(a(2:10:2) /= 0)) error stop 41
  sync all
  ! Sendget with this image on one side (read straight into, or written straight from,
  ! this image's coarray), with conversion from real(8).
  a(2:10:2)[me] = b(4, 5:1:-1)[right]
  if (any(a(2:10:2) /= [(right * 3 + j, j = 5, 1, -1)])) error stop 42
  sync all
  a(1:3)[left] = b(4, 1:5:2)[me]
  sync all
  if (any(a(1:3) /= [(right * 3 + j, j = 1, 5, 2)])) error stop 43
  sync all

  ! Allocatable coarrays: allocate, strided put, deallocate, again with another shape.
  allocate(z(4, 3)[*])
  z = me
  sync all
  z(2:4:2, :)[right] = -me
  sync all
  if (any(z(2:4:2, :) /= -left) .or. any(z(1:3:2, :) /= me)) error stop 50
  deallocate(z)
  allocate(z(0:2, 5)[*])
  z = 0
  sync all
  z(:, 5)[right] = [1, 2, 3] * me
  sync all
  if (any(z(:, 5) /= [1, 2, 3] * left)) error stop 51
  deallocate(z)

  ! Large coarrays, static and allocated between small ones: placed, and whole-array
  ! and section transfers between them and a large allocatable land where they should.
  if (mod(loc(big_s), 4096_8) /= 16) error stop 60
  allocate(z(2, 2)[*])
  allocate(big(6000)[*])
  if (mod(loc(big), 4096_8) /= 16) error stop 61
  allocate(src(6000))
  src = [(me * 10000 + i, i = 1, 6000)]
  big = 0
  big_s = 0
  sync all
  big(:)[right] = src
  big_s(2:5000:3)[right] = src(1:1667)
  sync all
  if (any(big /= [(left * 10000 + i, i = 1, 6000)])) error stop 62
  if (any(big_s(2:5000:3) /= [(left * 10000 + i, i = 1, 1667)])) error stop 63
  if (any(big_s(1:5000:3) /= 0)) error stop 64
  src = big(:)[left]
  if (any(src /= [(mod(left + np - 2, np) * 10000 + 10000 + i, i = 1, 6000)])) error stop 65
  sync all
  deallocate(big)
  allocate(big(4096)[*])
  if (mod(loc(big), 4096_8) /= 16) error stop 66
  big = me
  sync all
  if (any(big(:)[right] /= right)) error stop 67
  sync all
  deallocate(big, z)
  print '(a,i0)', 'ok xfer image=', me
end program
