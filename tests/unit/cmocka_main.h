/* Common includes for the CMocka unit tests. */
#ifndef TEST_CMOCKA_H
#define TEST_CMOCKA_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#endif
