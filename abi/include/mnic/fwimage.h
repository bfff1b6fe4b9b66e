/* Firmware storage formats: the firmware image, the boot record and the
 * layout of the slot flash.  Shared by the first-stage loader (boot/loader),
 * the firmware (mgmt/fwflash.c), libmnic/mnicctl and the tests.  Described
 * in docs/firmware-images.md.  Little-endian, fixed-width, every size pinned.
 *
 * ---- Image -------------------------------------------------------------
 *
 *   +--------------------------------+  0
 *   | struct mnic_fwimg_hdr (128 B)  |
 *   +--------------------------------+  hdr_size
 *   | payload (payload_size bytes):  |  copied to load_addr, entered at entry
 *   | the firmware, objcopy -O binary|
 *   +--------------------------------+  hdr_size + payload_size
 *   | TLV area (optional):           |  struct mnic_fwimg_tlv_info, then
 *   |   info {magic, total}          |  TLVs {type, len, value, pad to 4}
 *   +--------------------------------+
 *
 * digest = SHA-256 (FIPS 180-4) over the 128 header bytes with the digest
 * field set to zero, followed by the payload.  The TLV area is outside the
 * digest (as MCUboot's unprotected TLVs), so signing appends a TLV without
 * changing the digest; the Ed25519 signature TLV signs the 32 digest bytes.
 * The header does not record the TLV area: it starts right after the
 * payload and is present when its magic is there.
 */
#ifndef MNIC_FWIMAGE_H
#define MNIC_FWIMAGE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define MNIC_FWIMG_MAGIC       0x57464e4du   /* "MNFW" little-endian */
#define MNIC_FWIMG_HDR_VERSION 1u
#define MNIC_FWIMG_HDR_SIZE    128u
#define MNIC_FWIMG_DIGEST_LEN  32u

struct mnic_fw_version {
	uint8_t major;
	uint8_t minor;
	uint16_t patch;
	uint32_t build;
};
_Static_assert(sizeof(struct mnic_fw_version) == 8, "fw version");

struct mnic_fwimg_hdr {
	uint32_t magic;                /* MNIC_FWIMG_MAGIC */
	uint16_t hdr_version;          /* MNIC_FWIMG_HDR_VERSION */
	uint16_t hdr_size;             /* MNIC_FWIMG_HDR_SIZE: payload offset */
	uint32_t board_id;             /* board descriptor's board_id; must match */
	uint32_t flags;                /* 0 in header version 1 */
	struct mnic_fw_version version;
	uint64_t load_addr;            /* where the loader copies the payload */
	uint64_t entry;                /* where it jumps; inside the payload */
	uint32_t payload_size;
	uint32_t reserved0;            /* 0 */
	uint8_t digest[MNIC_FWIMG_DIGEST_LEN];
	char name[32];                 /* build description, NUL-padded */
	uint8_t reserved1[16];         /* 0 */
};
_Static_assert(sizeof(struct mnic_fwimg_hdr) == MNIC_FWIMG_HDR_SIZE, "image header");

#define MNIC_FWIMG_TLV_MAGIC   0x6d54u       /* "Tm" */
#define MNIC_FWIMG_TLV_MAX     4096u         /* whole TLV area, info included */
struct mnic_fwimg_tlv_info {
	uint16_t magic;                /* MNIC_FWIMG_TLV_MAGIC */
	uint16_t reserved;             /* 0 */
	uint32_t total;                /* bytes of the area, this info included */
};
_Static_assert(sizeof(struct mnic_fwimg_tlv_info) == 8, "tlv info");

struct mnic_fwimg_tlv {
	uint16_t type;                 /* MNIC_FWIMG_TLV_* */
	uint16_t len;                  /* value bytes; the next TLV starts 4-aligned */
};
_Static_assert(sizeof(struct mnic_fwimg_tlv) == 4, "tlv");
#define MNIC_FWIMG_TLV_KEYHASH 0x01u          /* SHA-256 of the Ed25519 public key (32) */
#define MNIC_FWIMG_TLV_ED25519 0x24u          /* Ed25519 signature of the digest (64) */

/* ---- key slot (boot flash: flash0, the loader's read-only bank) ----------
 * Provisioned with the loader (`mnicctl image keyslot`), never written by
 * the firmware.  Up to two Ed25519 public keys, each with its version (a
 * generation: a rotation provisions the next one beside it), and the
 * revocation counter: a key whose version is below revoked_below signs
 * nothing any more.  An image must carry a KEYHASH naming one of the keys
 * and that key's ED25519 signature of its digest.
 *   no slot (no magic: erased or zero) -> open board: images are checked
 *     by digest only, and FW_QUERY / `mnicctl info` say so;
 *   a slot with the magic but a bad version, size or CRC, or with no key
 *     left unrevoked -> locked: every image is refused (fail closed).
 * docs/firmware-images.md, "Signed images". */
#define MNIC_BOOTROM_KEYSLOT   0x00040000u   /* offset in flash0: the sector after the loader's */
#define MNIC_KEYSLOT_MAGIC     0x534b4e4du   /* "MNKS" */
#define MNIC_KEYSLOT_VERSION   1u
#define MNIC_KEYSLOT_KEYS      2u

struct mnic_keyslot_key {
	uint32_t key_version;          /* 0: entry unused */
	uint32_t reserved;             /* 0 */
	uint8_t pubkey[32];            /* Ed25519 (RFC 8032 5.1.5 encoding) */
};
_Static_assert(sizeof(struct mnic_keyslot_key) == 40, "keyslot key");

struct mnic_keyslot {
	uint32_t magic;                /* MNIC_KEYSLOT_MAGIC */
	uint16_t version;              /* MNIC_KEYSLOT_VERSION */
	uint16_t size;                 /* sizeof(struct mnic_keyslot) */
	uint32_t revoked_below;        /* revocation counter: key_version < it is refused */
	uint32_t reserved0;            /* 0 */
	struct mnic_keyslot_key key[MNIC_KEYSLOT_KEYS];
	uint8_t reserved1[28];         /* 0 */
	uint32_t crc;                  /* CRC-32 (IEEE 802.3) of bytes [0, 124) */
};
_Static_assert(sizeof(struct mnic_keyslot) == 128, "keyslot");

/* ---- slot flash layout (offsets in the board's second flash bank) ------
 * Two copies of the boot record in two sectors, then two slots.  Sectors
 * are 256 KiB on QEMU virt (pflash_cfi01, 2 x 16-bit devices). */
#define MNIC_FLASH_SECTOR      0x00040000u
#define MNIC_FLASH_BOOTREC0    0x00000000u
#define MNIC_FLASH_BOOTREC1    0x00040000u
#define MNIC_FLASH_SLOT_A      0x00100000u
#define MNIC_FLASH_SLOT_B      0x00300000u
#define MNIC_FLASH_SLOT_SIZE   0x00200000u
#define MNIC_FLASH_SIZE        0x04000000u   /* the bank QEMU virt maps (64 MiB) */
#define MNIC_FLASH_USED        (MNIC_FLASH_SLOT_B + MNIC_FLASH_SLOT_SIZE)

/* ---- boot record --------------------------------------------------------
 * The newest of the two copies with a good magic, size and CRC wins
 * (serial-number order of seq); a write goes to the other copy's sector,
 * so a torn write leaves the previous record intact. */
#define MNIC_BOOTREC_MAGIC     0x5242464du   /* "MFBR" */
#define MNIC_BOOTREC_VERSION   1u
#define MNIC_SLOT_A            0u
#define MNIC_SLOT_B            1u
#define MNIC_SLOT_NONE         0xffu
#define MNIC_BOOT_MAX_BOOTS    3u            /* default N for a test slot */

enum mnic_slot_state {
	MNIC_SLOT_EMPTY = 0,           /* erased or being written: not bootable */
	MNIC_SLOT_VALID = 1,           /* verified after writing: bootable */
	MNIC_SLOT_BAD = 2,             /* failed verification or its test: not bootable */
};

enum mnic_boot_event {
	MNIC_BOOT_EV_NONE = 0,
	MNIC_BOOT_EV_TEST = 1,         /* booting the test slot (boot_count counts it) */
	MNIC_BOOT_EV_CONFIRMED = 2,    /* the test slot confirmed itself */
	MNIC_BOOT_EV_REVERTED = 3,     /* test slot failed max_boots times: reverted */
	MNIC_BOOT_EV_REFUSED = 4,      /* a slot failed verification at boot */
	MNIC_BOOT_EV_RESCUE = 5,       /* record named no bootable slot; found one */
};

struct mnic_bootrec {
	uint32_t magic;                /* MNIC_BOOTREC_MAGIC */
	uint16_t version;              /* MNIC_BOOTREC_VERSION */
	uint16_t size;                 /* sizeof(struct mnic_bootrec) */
	uint32_t seq;                  /* +1 per write */
	uint8_t active;                /* confirmed slot */
	uint8_t test;                  /* slot on trial, or MNIC_SLOT_NONE */
	uint8_t boot_count;            /* boots of the test slot so far */
	uint8_t max_boots;             /* test reverts when boot_count reaches it */
	uint8_t state[2];              /* enum mnic_slot_state per slot */
	uint8_t last_event;            /* enum mnic_boot_event */
	uint8_t last_slot;             /* slot of last_event */
	struct mnic_fw_version ver[2]; /* per slot, as verified when written */
	uint32_t reverts;              /* test slots reverted, ever */
	struct mnic_fw_version min_version; /* anti-rollback: older images are refused;
					      raised to a test slot's version when it
					      confirms, never lowered (bootrec_store) */
	uint8_t reserved[12];          /* 0 */
	uint32_t crc;                  /* CRC-32 (IEEE 802.3) of bytes [0, 60) */
};
_Static_assert(sizeof(struct mnic_bootrec) == 64, "boot record");

/* ---- loader -> firmware hand-off (RAM, board's handoff_addr) ------------
 * Which slot the loader verified and entered, and that image's header. */
#define MNIC_HANDOFF_MAGIC     0x46444e48u   /* "HNDF" */
struct mnic_boot_handoff {
	uint32_t magic;
	uint8_t slot;                  /* MNIC_SLOT_A/B */
	uint8_t event;                 /* enum mnic_boot_event of this boot */
	uint8_t boot_count;            /* test boots so far (this one included) */
	uint8_t reserved;
	struct mnic_fwimg_hdr hdr;
};
_Static_assert(sizeof(struct mnic_boot_handoff) == 136, "boot handoff");

/* Why an image is refused, in check order: enum fwimg_err (boot/fwimage.h)
 * is this list; the device answers a FW_FLASH_* refusal with syndrome site
 * MNIC_FW_SITE_IMAGE (mnic/cmd.h) + the error's number.  Append only. */
#define MNIC_FWIMG_ERR_LIST(X)                                                             \
	X(FWIMG_OK, "ok")                                                        \
	X(FWIMG_E_TRUNCATED, "truncated: shorter than its header says")          \
	X(FWIMG_E_MAGIC, "bad magic: not a firmware image")                      \
	X(FWIMG_E_HDR_VERSION, "unsupported header version")                     \
	X(FWIMG_E_HDR_SIZE, "bad header size")                                   \
	X(FWIMG_E_RESERVED, "reserved field or flags not zero")                  \
	X(FWIMG_E_BOARD, "image is for another board")                           \
	X(FWIMG_E_OVERSIZED, "payload larger than the slot")                     \
	X(FWIMG_E_EMPTY, "empty payload")                                        \
	X(FWIMG_E_LOAD, "load address or entry outside the board's RAM")         \
	X(FWIMG_E_DIGEST, "SHA-256 digest mismatch (corrupt image)")             \
	X(FWIMG_E_TLV, "malformed TLV area")                                     \
	X(FWIMG_E_TRAILING, "bytes after the image")                             \
	X(FWIMG_E_ROLLBACK, "version below the board's minimum (anti-rollback): use a newer image") \
	X(FWIMG_E_UNSIGNED, "not signed, and this board has a key provisioned: sign it (mnicctl image sign)") \
	X(FWIMG_E_SIG_KEY, "signed by a key this board does not hold")          \
	X(FWIMG_E_SIG_REVOKED, "signed by a revoked key (key version below the board's revocation counter)") \
	X(FWIMG_E_SIG_BAD, "signature does not verify (image or signature altered)") \
	X(FWIMG_E_KEYSLOT, "the board's key slot is corrupt or revokes every key: it accepts no image")

#endif
