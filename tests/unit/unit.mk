# Host unit tests: one CMocka binary per name, mirroring the tree.
# <name>_SRCS lists the test and the real sources it drives;
# <name>_CFLAGS/_LIBS are extras.  Built plainly and with ASan+UBSan.

UNIT_TESTS += test_timer
test_timer_SRCS := tests/unit/firmware/test_timer.c firmware/timer.c

UNIT_TESTS += test_fmt
test_fmt_SRCS := tests/unit/firmware/test_fmt.c firmware/fmt.c

UNIT_TESTS += test_args
test_args_SRCS := tests/unit/firmware/test_args.c firmware/args.c firmware/log.c firmware/fmt.c

UNIT_TESTS += test_loop
test_loop_SRCS := tests/unit/firmware/test_loop.c firmware/loop.c firmware/timer.c

UNIT_TESTS += test_crc32
test_crc32_SRCS := tests/unit/rocev2/test_crc32.c rocev2/crc32.c
