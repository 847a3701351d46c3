! caf_sync.f90: image control and collectives on every image.
!
! - sync_all: `sync all`, time per statement (us).
! - sync_images: `sync images([left, right])` with the ring neighbours, time per statement.
! - co_sum: `co_sum` of one real(8) (8 B) and of 131072 real(8) (1 MiB), time per call.
! - lock_mcs: every image repeatedly `lock(lk[1])`, increments a counter on image 1,
!   `unlock(lk[1])` (the runtime's lock); time per lock/unlock pair, all images together.
! - lock_cas: the same with a spin lock written in Fortran (atomic_cas to take it,
!   atomic_define to give it back, sync memory around the critical section).
! - dht: seed 003's distributed hash table: every image inserts or counts random keys in a
!   table spread over all images (1024 buckets per image, linear probing), each bucket
!   guarded by a lock on its image; time per update, all images together.
!
!   cafrun -n N ./caf_sync [--quick] [--runtime=NAME]
program caf_sync
  use, intrinsic :: iso_fortran_env, only: int64, real64, lock_type, atomic_int_kind
  use cafbench_util
  implicit none
  integer, parameter :: nb = 1024
  type(lock_type) :: lk[*]
  type(lock_type) :: dlk(nb)[*]
  integer(atomic_int_kind) :: spin[*]
  integer :: counter[*]
  integer(int64) :: keys(nb)[*], vals(nb)[*]
  real(real64), allocatable :: big(:)
  real(real64) :: x
  integer :: me, np

  call bench_init()
  me = this_image()
  np = num_images()
  spin = 0
  counter = 0
  keys = 0
  vals = 0
  allocate (big(131072))
  sync all

  call say('# image control and collectives, '//trim(runtime)//', time per operation (us)')
  call bench_sync_all()
  call bench_sync_images()
  call bench_co_sum()
  call bench_locks()
  call bench_dht()

contains

  subroutine report(bench, size, us)
    character(len=*), intent(in) :: bench
    integer(int64), intent(in) :: size
    real(real64), intent(in) :: us
    character(len=100) :: line
    call emit(bench, size, 'time', us, 'us')
    write (line, '(a24, i9, a, f14.3, a)') bench, size, ' B', us, ' us'
    call say(line)
  end subroutine report

  !> Median over batches of the per-operation time that image 1 saw, in us.
  subroutine finish(bench, size, t)
    character(len=*), intent(in) :: bench
    integer(int64), intent(in) :: size
    real(real64), intent(inout) :: t(:)
    call report(bench, size, median(t) * 1e6_real64)
  end subroutine finish

  subroutine bench_sync_all()
    real(real64) :: t(batches), t0
    integer :: k, it, iters
    iters = merge(500, 2000, quick)
    ! Warm-up: the first statements after start-up also wait for late images.
    do it = 1, iters
      sync all
    end do
    do k = 1, batches
      sync all
      t0 = now()
      do it = 1, iters
        sync all
      end do
      t(k) = (now() - t0) / iters
    end do
    call finish('sync_all', 0_int64, t)
  end subroutine bench_sync_all

  subroutine bench_sync_images()
    real(real64) :: t(batches), t0
    integer :: k, it, iters, left, right
    iters = merge(500, 2000, quick)
    left = merge(np, me - 1, me == 1)
    right = merge(1, me + 1, me == np)
    do k = 1, batches
      sync all
      t0 = now()
      if (left == right) then
        do it = 1, iters
          sync images(left)
        end do
      else
        do it = 1, iters
          sync images([left, right])
        end do
      end if
      t(k) = (now() - t0) / iters
    end do
    call finish('sync_images', 0_int64, t)
  end subroutine bench_sync_images

  subroutine bench_co_sum()
    real(real64) :: t(batches), t0
    integer :: k, it, iters
    iters = merge(200, 1000, quick)
    do k = 1, batches
      sync all
      t0 = now()
      do it = 1, iters
        x = 1.0_real64
        call co_sum(x)
      end do
      t(k) = (now() - t0) / iters
    end do
    if (x /= np) error stop 'caf_sync: co_sum of 8 B is wrong'
    call finish('co_sum', 8_int64, t)
    iters = merge(5, 20, quick)
    do k = 1, batches
      sync all
      t0 = now()
      do it = 1, iters
        big = 1.0_real64
        call co_sum(big)
      end do
      t(k) = (now() - t0) / iters
    end do
    if (big(size(big)) /= np) error stop 'caf_sync: co_sum of 1 MiB is wrong'
    call finish('co_sum', 8_int64 * size(big), t)
  end subroutine bench_co_sum

  subroutine bench_locks()
    real(real64) :: t(batches), t0
    integer :: k, it, iters
    integer(atomic_int_kind) :: old
    iters = merge(200, 1000, quick)
    do k = 1, batches
      sync all
      t0 = now()
      do it = 1, iters
        lock (lk[1])
        counter[1] = counter[1] + 1
        unlock (lk[1])
      end do
      sync all
      t(k) = (now() - t0) / (iters * np)
    end do
    if (me == 1 .and. counter /= batches * iters * np) error stop 'caf_sync: MCS lock lost updates'
    call finish('lock_mcs', 0_int64, t)
    sync all
    counter = 0
    sync all
    do k = 1, batches
      sync all
      t0 = now()
      do it = 1, iters
        do
          call atomic_cas(spin[1], old, 0, me)
          if (old == 0) exit
        end do
        sync memory
        counter[1] = counter[1] + 1
        sync memory
        call atomic_define(spin[1], 0)
      end do
      sync all
      t(k) = (now() - t0) / (iters * np)
    end do
    if (me == 1 .and. counter /= batches * iters * np) error stop 'caf_sync: CAS lock lost updates'
    call finish('lock_cas', 0_int64, t)
  end subroutine bench_locks

  subroutine bench_dht()
    real(real64) :: t(batches), t0
    integer :: k, it, iters, owner, slot, tries
    integer(int64) :: rng, key, h, seen, total
    iters = merge(200, 1000, quick)
    rng = 12345_int64 + 7919_int64 * me
    do k = 1, batches
      sync all
      t0 = now()
      do it = 1, iters
        ! Keys 1..nb*np/2: the table never fills, and images often meet on a key.
        rng = iand(rng * 6364136223846793005_int64 + 1442695040888963407_int64, huge(rng))
        key = 1 + mod(ishft(rng, -17), int(nb * np / 2, int64))
        h = mod(key * 2654435761_int64, int(nb * np, int64))
        owner = int(h / nb) + 1
        slot = int(mod(h, int(nb, int64))) + 1
        do tries = 1, nb * np
          lock (dlk(slot)[owner])
          seen = keys(slot)[owner]
          if (seen == 0) then
            keys(slot)[owner] = key
            vals(slot)[owner] = 1
          else if (seen == key) then
            vals(slot)[owner] = vals(slot)[owner] + 1
          end if
          unlock (dlk(slot)[owner])
          if (seen == 0 .or. seen == key) exit
          slot = slot + 1
          if (slot > nb) then
            slot = 1
            owner = mod(owner, np) + 1
          end if
        end do
      end do
      sync all
      t(k) = (now() - t0) / (iters * np)
    end do
    total = sum(vals)
    call co_sum(total)
    if (total /= int(batches, int64) * iters * np) error stop 'caf_sync: DHT lost updates'
    call finish('dht', 0_int64, t)
  end subroutine bench_dht

end program caf_sync
