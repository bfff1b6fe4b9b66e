/* Frame capture in classic libpcap format, for the POSIX NIC
 * (MNIC_PCAP=<path>: every frame it sends and receives).
 *
 *   file header  24 B  magic 0xa1b23c4d (nanosecond timestamps), version
 *                      2.4, thiszone 0, sigfigs 0, snaplen 65535,
 *                      network 1 (LINKTYPE_ETHERNET)
 *   per frame    16 B  ts_sec, ts_nsec, incl_len, orig_len; then incl_len
 *                      bytes of the frame (Ethernet II, no FCS)
 *
 * Every field is written little-endian whatever the host, so a capture is
 * byte-identical on every machine; readers detect the order from the magic.
 * Written with stdio; buffered, flushed by pcap_flush() and pcap_close().
 * A writer that is not open (zeroed, failed to open, closed, or stopped
 * after a write error) ignores pcap_write(), so callers need no checks.
 */
#ifndef POSIX_PCAP_H
#define POSIX_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PCAP_MAGIC_NS      0xa1b23c4du
#define PCAP_VERSION_MAJOR 2u
#define PCAP_VERSION_MINOR 4u
#define PCAP_SNAPLEN       65535u
#define PCAP_LINKTYPE_ETHERNET 1u
#define PCAP_FILE_HDR_LEN  24u
#define PCAP_REC_HDR_LEN   16u

struct pcap_writer {
	FILE *f;                /* NULL: not capturing */
	const char *path;       /* for messages; the caller's string */
	uint64_t frames;        /* records written */
	uint64_t bytes;         /* file size so far */
	int error;              /* a write failed: capture stopped, reported once */
};

/* Create (truncate) path and write the file header.  0, or a negative
 * HAL_E* error with the reason on stderr (w is then not capturing). */
int pcap_open(struct pcap_writer *w, const char *path);
/* Append one frame seen at ts_ns (any epoch; CLOCK_REALTIME makes tools
 * print wall time).  Frames longer than the snap length are truncated. */
void pcap_write(struct pcap_writer *w, const void *frame, size_t len, uint64_t ts_ns);
/* Push buffered records to the file (e.g. when the event loop goes idle,
 * so that a killed process leaves a readable capture).  0 or -HAL_EIO. */
int pcap_flush(struct pcap_writer *w);
/* Flush and close; the writer is then not capturing.  Safe to repeat. */
void pcap_close(struct pcap_writer *w);

#endif
