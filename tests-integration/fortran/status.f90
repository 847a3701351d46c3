! Image status, chosen by the first argument:
!   running  every image is running: IMAGE_STATUS 0, no failed or stopped images
!   stopped  the last image stops; the others see it in SYNC ALL (STAT=), SYNC IMAGES
!            (STAT=) and a coindexed read (STAT=) as STAT_STOPPED_IMAGE, in IMAGE_STATUS
!            and STOPPED_IMAGES
!   failed   image 2 executes FAIL IMAGE (the job runs with SHMEM_FAULT_TOLERANT=1); the
!            others see STAT_FAILED_IMAGE in SYNC ALL, a coindexed read, IMAGE_STATUS,
!            FAILED_IMAGES and NUM_IMAGES(FAILED=)
!   failnoft image 2 executes FAIL IMAGE in a job that is not fault-tolerant: it ends
program status
  use iso_fortran_env, only: stat_stopped_image, stat_failed_image
  implicit none
  character(len=16) :: mode
  character(len=80) :: msg
  integer :: me, np, st, i, x, a[*]
  integer, allocatable :: l(:)
  me = this_image()
  np = num_images()
  a = me
  call get_command_argument(1, mode)
  select case (trim(mode))
  case ('running')
    do i = 1, np
      if (image_status(i) /= 0) call fail('image_status of a running image')
    end do
    l = failed_images()
    if (size(l) /= 0) call fail('failed_images not empty')
    l = stopped_images()
    if (size(l) /= 0) call fail('stopped_images not empty')
    if (num_images(failed=.true.) /= 0) call fail('num_images(failed=.true.)')
    if (num_images(failed=.false.) /= np) call fail('num_images(failed=.false.)')
    sync all(stat=st)
    if (st /= 0) call fail('sync all stat')
  case ('stopped')
    if (me == np) then
      print '(a,i0)', 'ok status image=', me
      stop
    end if
    msg = ''
    sync all(stat=st, errmsg=msg)
    if (st /= stat_stopped_image) call fail('sync all: stat is not STAT_STOPPED_IMAGE')
    if (len_trim(msg) == 0) call fail('sync all: no errmsg')
    sync images(np, stat=st)
    if (st /= stat_stopped_image) call fail('sync images: stat is not STAT_STOPPED_IMAGE')
    x = a[np, stat=st]
    if (st /= stat_stopped_image) call fail('coindexed read: stat is not STAT_STOPPED_IMAGE')
    if (image_status(np) /= stat_stopped_image) call fail('image_status of the stopped image')
    if (image_status(me) /= 0) call fail('image_status of this image')
    l = stopped_images()
    if (.not. any(l == np)) call fail('stopped_images misses the stopped image')
    do i = 1, size(l)
      if (image_status(l(i)) /= stat_stopped_image) call fail('stopped_images lists a running image')
    end do
    l = failed_images()
    if (size(l) /= 0) call fail('failed_images not empty')
  case ('failed')
    sync all
    if (me == 2) fail image
    sync all(stat=st)
    if (st /= stat_failed_image) call fail('sync all: stat is not STAT_FAILED_IMAGE')
    x = a[2, stat=st]
    if (st /= stat_failed_image) call fail('coindexed read: stat is not STAT_FAILED_IMAGE')
    x = a[me, stat=st]
    if (st /= 0 .or. x /= me) call fail('coindexed read of this image')
    if (image_status(2) /= stat_failed_image) call fail('image_status of the failed image')
    l = failed_images()
    if (size(l) /= 1) call fail('failed_images: not one image')
    if (l(1) /= 2) call fail('failed_images: not image 2')
    if (num_images(failed=.true.) /= 1) call fail('num_images(failed=.true.)')
    if (num_images(failed=.false.) /= np - 1) call fail('num_images(failed=.false.)')
    l = stopped_images()
    if (size(l) /= 0) call fail('stopped_images not empty')
    ! No survivor stops before all have checked (a stopped image would make the SYNC ALL
    ! above report STAT_STOPPED_IMAGE, which the standard puts first). SYNC IMAGES counts
    ! per pair, so the interrupted SYNC ALL does not disturb it.
    sync images(pack([(i, i = 1, np)], [(i /= 2, i = 1, np)]))
  case ('failnoft')
    sync all
    if (me == 2) fail image
    sync all
    print '(a)', 'not reached'
  case default
    call fail('unknown mode')
  end select
  print '(a,i0)', 'ok status image=', me
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,2a)', 'FAIL status image=', me, ': ', what
    error stop 1
  end subroutine
end program
