/* Negative error codes used across the firmware (values match Linux so that
 * they print the same on every side of the host interface). */
#ifndef HAL_ERRNO_H
#define HAL_ERRNO_H
#define HAL_EIO      5
#define HAL_ENXIO    6
#define HAL_E2BIG    7
#define HAL_EAGAIN   11
#define HAL_ENOMEM   12
#define HAL_EACCES   13
#define HAL_EFAULT   14
#define HAL_EBUSY    16
#define HAL_EEXIST   17
#define HAL_ENODEV   19
#define HAL_EINVAL   22
#define HAL_ENOSPC   28
#define HAL_ERANGE   34
#define HAL_ENOTSUP  95   /* EOPNOTSUPP: the platform cannot do this */
#define HAL_ETIMEDOUT 110
#endif
