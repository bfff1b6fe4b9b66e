/* POSIX backend internals: the pieces hal_platform_init() assembles, exposed
 * for the backend's own tests and for host tools that want a port or a BAR
 * without a whole platform.  Firmware code uses the hal/ headers only. */
#ifndef POSIX_POSIX_H
#define POSIX_POSIX_H

#include <stddef.h>
#include <stdint.h>

#include "hal/doorbell.h"
#include "hal/eth.h"
#include "hal/hostif.h"
#include "hal/platform.h"
#include "impair.h"

/* Board name and default BAR size come from qemu-board/boards/posix.board
 * through the generated board.h, like every board's. */
#define POSIX_BAR_SIZE_MIN 4096u

/* ---- eth over libvdeplug (eth_vde.c) ------------------------------------ */

/* One wire frame can leave the RX impairment as a duplicated pair followed
 * by a duplicated held frame. */
#define ETH_VDE_RXQ_SLOTS 4

struct eth_vde_frame {
	size_t len;
	uint8_t data[HAL_ETH_MAX_FRAME];
};

struct vdeconn;
struct pcap_writer;

struct eth_vde {
	struct hal_eth eth;          /* eth.priv points back here */
	struct vdeconn *conn;
	int fd;                      /* vde_datafd(): level-triggered, for poll() */
	struct impair tx_impair;     /* seeded with cfg.seed */
	struct impair rx_impair;     /* seeded with cfg.seed + 1 */
	unsigned rxq_head, rxq_count;
	struct eth_vde_frame rxq[ETH_VDE_RXQ_SLOTS];
	uint8_t wire[HAL_ETH_MAX_FRAME + 1];  /* +1 so an oversized datagram shows */
	uint8_t tx_pad[HAL_ETH_MIN_FRAME];
	uint64_t tx_send_errors;     /* vde_send() failures after the impairment */
	struct pcap_writer *pcap;    /* MNIC_PCAP capture, or NULL */
	int send_errno_logged;
	int tx_blocked;              /* the last ->tx found the socket full */
};

/* Join the switch at url (a vde_switch-compatible directory such as the one
 * `vde_plug null:// switch:///DIR` creates, or any libvdeplug URL whose data
 * fd is the frame socket) and announce mac to it.  name must outlive the
 * port; imp may be NULL (no impairment).  Returns 0 or a negative error,
 * logged on stderr. */
int eth_vde_open(struct eth_vde *v, const char *url, const char *name,
		 const uint8_t mac[HAL_ETH_ALEN], const struct impair_cfg *imp);
void eth_vde_close(struct eth_vde *v);

static inline int eth_vde_fd(const struct eth_vde *v)
{
	return v->fd;
}

/* Release a frame the TX impairment holds for reordering; called when the
 * NIC goes idle so that a held frame is delayed, never lost. */
void eth_vde_flush(struct eth_vde *v);

/* Frames already taken off the socket but not yet handed to ->rx. */
int eth_vde_rx_buffered(const struct eth_vde *v);

static inline struct eth_vde *eth_vde_of(struct hal_eth *eth)
{
	return (struct eth_vde *)eth->priv;
}

/* ---- host BAR and host memory over shared files (bar_shm.c) ------------- */

/* Map path (created 0600 and grown to size if smaller) shared, the same file
 * a QEMU NIC maps with -object memory-backend-file,share=on,mem-path=PATH.
 * path must outlive the mapping (it becomes h->backing).  Returns 0 or a
 * negative error, logged on stderr. */
int bar_shm_open(struct hal_hostif *h, const char *path, size_t size);
void bar_shm_close(struct hal_hostif *h);

/* The file behind a BAR from bar_shm_open() shrank below the mapping: 0
 * while it holds the whole mapping, else -HAL_EIO with the file and both
 * sizes logged on stderr (the NIC must then stop; bar_shm.c says why).  An
 * access that faults first ends the process from the SIGBUS handler with
 * the same report.  Either way the exit status is BAR_SHM_EXIT, the
 * firmware's "platform failed" (FW_EXIT_PLATFORM). */
int bar_shm_check(const struct hal_hostif *h);
#define BAR_SHM_EXIT 3

/* The host-memory aperture over a shared file, guarded as the BAR (a
 * shrink: the same check, report and exit).  size 0: the file's own size,
 * a non-zero multiple of 4096; else the file is grown to size if smaller.
 * One per process; path must outlive the mapping. */
int hostmem_shm_open(struct hal_hostmem *hm, const char *path, size_t size);
void hostmem_shm_close(struct hal_hostmem *hm);
int hostmem_shm_check(const struct hal_hostmem *hm);
/* How often the platform's poll looks (a clock read per loop iteration,
 * an fstat per period). */
#define BAR_SHM_CHECK_NS (10ull * 1000000ull)

/* ---- the doorbell channel (doorbell.c; protocol: mnic/dbch.h) ----------- */

/* Hosts connected at once (more are refused, dbch_hosts_refused), and the
 * vectors each may give (0: the command queue). */
#define POSIX_DB_MAX_HOSTS 16u
#define POSIX_DB_VECTORS 8u       /* 0: command queue; 1..7: event queues */

struct pollfd;

struct posix_db_host {
	int sock;                           /* -1: a free slot */
	int vec_fd[POSIX_DB_VECTORS];       /* the host's eventfds; -1: not given */
};

struct posix_doorbell {
	struct hal_doorbell db;             /* db.priv points back here */
	const char *path;                   /* the socket; must outlive the channel */
	int listen_fd;
	int ring_fd;                        /* one eventfd every host rings */
	struct posix_db_host hosts[POSIX_DB_MAX_HOSTS];
	unsigned n_hosts;
};

/* Listen at path (a stale socket there is replaced; any other file is
 * -HAL_EEXIST).  Returns 0 or a negative error, logged on stderr. */
int posix_doorbell_open(struct posix_doorbell *pd, const char *path);
/* Close every host, the socket (unlinked) and the ring. */
void posix_doorbell_close(struct posix_doorbell *pd);
/* Accept hosts, take their messages, drop those that left; never blocks. */
void posix_doorbell_serve(struct posix_doorbell *pd);
/* The descriptors a wait sleeps on (ring, listener, hosts; at most
 * POSIX_DB_POLLFDS) into pfd; returns how many.  The first is the ring. */
#define POSIX_DB_POLLFDS (POSIX_DB_MAX_HOSTS + 2u)
unsigned posix_doorbell_pollfds(const struct posix_doorbell *pd, struct pollfd *pfd);

/* Shared by both channels (doorbell.c): whether fd is an eventfd (only
 * those may be written by a raise: a pipe could block the NIC); write 1 to
 * a host's eventfd, counted in d's raises / raise_failed. */
int posix_is_eventfd(int fd);
void posix_efd_raise(struct hal_doorbell *d, int fd);

/* ---- a peer of an mnic-ivshmem-server (ivsh_peer.c) --------------------- */

/* Peers of the server this NIC keeps vectors of (host VMs, libmnic BAR
 * processes; more are refused, dbch_hosts_refused). */
#define POSIX_IVSH_MAX_PEERS 16u

struct posix_ivsh_peer {
	int32_t id;                         /* -1: a free slot */
	unsigned n;                         /* vectors announced, fd[0..n-1] */
	int fd[POSIX_DB_VECTORS];           /* written to interrupt it */
};

struct posix_ivsh {
	struct hal_doorbell db;             /* db.priv points back here */
	int sock;                           /* the server; -1 once it went */
	uint32_t self_id;
	unsigned n_own;
	int own_fd[POSIX_DB_VECTORS];       /* ours: a host writes one to ring */
	int extra_rang;                     /* a vector >= 1 was rung (serve) */
	struct posix_ivsh_peer peers[POSIX_IVSH_MAX_PEERS];
};

/* Connect to the server at path and take the setup (at most 2 s); 0 or a
 * negative error, logged on stderr. */
int posix_ivsh_open(struct posix_ivsh *pi, const char *path);
void posix_ivsh_close(struct posix_ivsh *pi);
/* Peers arriving and leaving, our vectors >= 1 consumed; never blocks. */
void posix_ivsh_serve(struct posix_ivsh *pi);
/* The descriptors a wait sleeps on (our vectors, the server; at most
 * POSIX_IVSH_POLLFDS) into pfd; returns how many.  The first is vector 0. */
#define POSIX_IVSH_POLLFDS (POSIX_DB_VECTORS + 1u)
unsigned posix_ivsh_pollfds(const struct posix_ivsh *pi, struct pollfd *pfd);

/* ---- platform (platform.c) ---------------------------------------------- */

/* Undo hal_platform_init(): close the ports, unmap the BAR.  Also run at
 * exit; lets a test initialise the platform more than once. */
void posix_platform_fini(struct hal_platform *p);

#endif
