! caf_himeno.f90: a small Himeno-style kernel: Jacobi iterations of a 7-point Poisson
! stencil on a 3-D grid split along its second dimension (64 x 32 x 64 points per image),
! with a halo exchange of the two boundary planes p(:, j, :) (strided sections with
! contiguous runs) to the neighbours by coindexed puts, and co_sum of the residual.
! Reports the time per iteration (us).
!
!   cafrun -n N ./caf_himeno [--quick] [--runtime=NAME]
program caf_himeno
  use, intrinsic :: iso_fortran_env, only: int64, real32, real64
  use cafbench_util
  implicit none
  integer, parameter :: nx = 64, ny = 32, nz = 64
  real(real32), allocatable :: p(:, :, :)[:]
  real(real32), allocatable :: wrk(:, :, :)
  real(real32), parameter :: omega = 0.8
  real(real64), allocatable :: t(:)
  real(real64) :: t0, gosa
  integer :: me, np, k, it, iters
  character(len=100) :: line

  call bench_init()
  me = this_image()
  np = num_images()
  allocate (p(0:nx + 1, 0:ny + 1, 0:nz + 1)[*])
  allocate (wrk(nx, ny, nz))
  call init_p()
  iters = merge(10, 40, quick)
  allocate (t(batches))
  sync all
  do k = 1, batches
    sync all
    t0 = now()
    do it = 1, iters
      call jacobi(gosa)
    end do
    t(k) = (now() - t0) / iters
  end do
  if (.not. (gosa >= 0)) error stop 'caf_himeno: residual is not a number'
  call emit('himeno', int(nx, int64) * ny * nz, 'time', median(t) * 1e6_real64, 'us')
  write (line, '(a, i0, a, f12.1, a, es12.4)') 'himeno  ', nx * ny * nz, &
    ' points/image: ', median(t) * 1e6_real64, ' us per iteration, residual ', gosa
  call say(line)

contains

  subroutine init_p()
    integer :: k
    p = 0
    do k = 0, nz + 1
      p(:, :, k) = real(k * k, real32) / real((nz + 1) * (nz + 1), real32)
    end do
  end subroutine init_p

  subroutine jacobi(res)
    real(real64), intent(out) :: res
    integer :: i, j, k
    real(real32) :: s0, ss
    res = 0
    do k = 1, nz
      do j = 1, ny
        do i = 1, nx
          s0 = (p(i + 1, j, k) + p(i - 1, j, k) + p(i, j + 1, k) + p(i, j - 1, k) &
                + p(i, j, k + 1) + p(i, j, k - 1)) / 6.0
          ss = s0 - p(i, j, k)
          res = res + ss * ss
          wrk(i, j, k) = p(i, j, k) + omega * ss
        end do
      end do
    end do
    ! The neighbours have read their halos from our boundary planes.
    sync all
    p(1:nx, 1:ny, 1:nz) = wrk
    ! Our boundary planes into the neighbours' halo planes.
    if (me > 1) p(1:nx, ny + 1, 1:nz)[me - 1] = p(1:nx, 1, 1:nz)
    if (me < np) p(1:nx, 0, 1:nz)[me + 1] = p(1:nx, ny, 1:nz)
    call co_sum(res)
    sync all
  end subroutine jacobi

end program caf_himeno
