/* Classic libpcap capture writer (see pcap.h for the format). */
#include "pcap.h"

#include <errno.h>
#include <string.h>

#include "hal/errno.h"

static void le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* A failed write leaves a capture whose last record may be partial; stop
 * there (readers accept a file that ends early) and say so once. */
static void pcap_fail(struct pcap_writer *w, const char *what)
{
	if (!w->error)
		fprintf(stderr, "posix: pcap %s: %s: %s; capture stopped after %llu frames\n",
			w->path ? w->path : "?", what, strerror(errno),
			(unsigned long long)w->frames);
	w->error = 1;
}

int pcap_open(struct pcap_writer *w, const char *path)
{
	uint8_t h[PCAP_FILE_HDR_LEN];

	memset(w, 0, sizeof(*w));
	w->path = path;
	w->f = fopen(path, "wb");
	if (!w->f) {
		fprintf(stderr, "posix: pcap %s: cannot create: %s\n", path, strerror(errno));
		return -HAL_EIO;
	}
	le32(h, PCAP_MAGIC_NS);
	le16(h + 4, PCAP_VERSION_MAJOR);
	le16(h + 6, PCAP_VERSION_MINOR);
	le32(h + 8, 0);                         /* thiszone: timestamps are UTC */
	le32(h + 12, 0);                        /* sigfigs: always 0 */
	le32(h + 16, PCAP_SNAPLEN);
	le32(h + 20, PCAP_LINKTYPE_ETHERNET);
	if (fwrite(h, sizeof(h), 1, w->f) != 1) {
		pcap_fail(w, "cannot write the header");
		fclose(w->f);
		w->f = NULL;
		return -HAL_EIO;
	}
	w->bytes = sizeof(h);
	return 0;
}

void pcap_write(struct pcap_writer *w, const void *frame, size_t len, uint64_t ts_ns)
{
	uint8_t h[PCAP_REC_HDR_LEN];
	size_t incl = len < PCAP_SNAPLEN ? len : PCAP_SNAPLEN;

	if (!w->f || w->error)
		return;
	le32(h, (uint32_t)(ts_ns / 1000000000u));
	le32(h + 4, (uint32_t)(ts_ns % 1000000000u));
	le32(h + 8, (uint32_t)incl);
	le32(h + 12, (uint64_t)len > UINT32_MAX ? UINT32_MAX : (uint32_t)len);
	if (fwrite(h, sizeof(h), 1, w->f) != 1 || (incl && fwrite(frame, incl, 1, w->f) != 1)) {
		pcap_fail(w, "write failed");
		return;
	}
	w->frames++;
	w->bytes += sizeof(h) + incl;
}

int pcap_flush(struct pcap_writer *w)
{
	if (!w->f || w->error)
		return w->error ? -HAL_EIO : 0;
	if (fflush(w->f) != 0) {
		pcap_fail(w, "flush failed");
		return -HAL_EIO;
	}
	return 0;
}

void pcap_close(struct pcap_writer *w)
{
	if (!w->f)
		return;
	if (fflush(w->f) != 0)
		pcap_fail(w, "flush failed");
	if (fclose(w->f) != 0)
		pcap_fail(w, "close failed");
	w->f = NULL;
}
