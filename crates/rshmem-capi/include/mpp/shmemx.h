/* mpp/shmemx.h: the deprecated header path of the extensions; same as <shmemx.h>. */
#include "../shmemx.h"
