/* mpp/shmem.h: the deprecated header path of OpenSHMEM; same as <shmem.h>. */
#include "../shmem.h"
