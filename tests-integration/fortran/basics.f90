! this_image, num_images, static coarrays of several types, scalar put and get.
program basics
  implicit none
  integer :: a(10)[*], me, np, i, right, left
  real(8) :: r[*]
  character(len=5) :: c[*]
  logical :: l[*]
  me = this_image()
  np = num_images()
  if (me < 1 .or. me > np) error stop 2
  right = mod(me, np) + 1
  left = mod(me + np - 2, np) + 1
  a = [(me * 100 + i, i = 1, 10)]
  r = me * 0.5d0
  c = 'img' // achar(iachar('0') + me)
  l = mod(me, 2) == 0
  sync all
  ! Scalar gets from the right neighbour.
  if (a(3)[right] /= right * 100 + 3) error stop 3
  if (r[right] /= right * 0.5d0) error stop 4
  if (c[right] /= 'img' // achar(iachar('0') + right)) error stop 5
  if (l[right] .neqv. (mod(right, 2) == 0)) error stop 6
  sync all
  ! Scalar put to the left neighbour's a(10).
  a(10)[left] = -me
  sync all
  if (a(10) /= -right) error stop 7
  print '(a,i0)', 'ok basics image=', me
end program
