/* Element-wise reduction steps on C `long double`, whose format (x87 extended on x86-64,
 * binary128 on aarch64, double elsewhere) only the C compiler knows: rshmem's reductions
 * call this for the longdouble routines. NaN operands are ignored by min and max, as
 * fminl/fmaxl do, which matches the Rust float reductions. */
#include <stddef.h>

enum { LD_MIN = 0, LD_MAX = 1, LD_SUM = 2, LD_PROD = 3 };

void rshmem_longdouble_fold(int op, long double *acc, const long double *src, size_t n)
{
    size_t i;
    switch (op) {
    case LD_MIN:
        for (i = 0; i < n; i++) {
            long double a = acc[i], s = src[i];
            if (a != a || s < a)
                acc[i] = s;
        }
        break;
    case LD_MAX:
        for (i = 0; i < n; i++) {
            long double a = acc[i], s = src[i];
            if (a != a || s > a)
                acc[i] = s;
        }
        break;
    case LD_SUM:
        for (i = 0; i < n; i++)
            acc[i] += src[i];
        break;
    case LD_PROD:
        for (i = 0; i < n; i++)
            acc[i] *= src[i];
        break;
    default:
        break;
    }
}
