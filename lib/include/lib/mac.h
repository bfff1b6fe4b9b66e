/* The text form of an Ethernet MAC address, "xx:xx:xx:xx:xx:xx" (hex digits
 * in either case), as every command line of the project writes it: the
 * firmware's peers=, the POSIX NIC's --mac, mnicctl's overrides, the
 * switch's impairment rules. */
#ifndef LIB_MAC_H
#define LIB_MAC_H

#include <stdint.h>

#define LIB_MAC_TEXT_LEN 17   /* "xx:xx:xx:xx:xx:xx" */

/* 0..15 for a hex digit, else -1. */
int lib_hex_digit(char c);
/* The first LIB_MAC_TEXT_LEN characters of s as a MAC: 0 and mac[], or -1
 * (nothing past a bad character, or the string's end, is read).  What
 * follows them (s[LIB_MAC_TEXT_LEN]) is the caller's to judge. */
int lib_mac_parse(const char *s, uint8_t mac[6]);

#endif
