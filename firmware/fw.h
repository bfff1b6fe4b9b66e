/* Firmware entry used by every platform's startup: boards call it after
 * building argv from semihosting, POSIX from main(). */
#ifndef FW_H
#define FW_H
int fw_main(int argc, char **argv);
#endif
