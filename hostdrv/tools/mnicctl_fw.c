/* mnicctl: firmware images and flashing (mnicctl_fw.h).
 *
 * Images are built from the firmware ELF by reading its program headers
 * (PT_LOAD with file bytes: the payload spans the lowest to the highest
 * loaded byte, gaps zero), so no objcopy is needed.  Keys are made and
 * images signed with Ed25519 from libsodium; `image verify --pubkey` checks
 * the signature with the device's own verifier (boot/fwsig.c on
 * lib/ed25519.c), so the tool and the board cannot disagree.  Every check
 * of an image is the same code the loader and the firmware run
 * (boot/fwimage.c); `image keyslot` provisions a boot flash's key slot. */
#define _DEFAULT_SOURCE 1   /* usleep */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "boot/bootrec.h"
#include "boot/fwimage.h"
#include "boot/fwsig.h"
#include "lib/ed25519.h"
#include "lib/sha256.h"
#include "hal/errno.h"
#include "mnic/fwimage.h"
#include "mnicctl_fw.h"

/* Boards an image can be built for: the board descriptors' board_id and
 * RAM (the descriptors in qemu-board/boards/). */
static const struct fw_board {
	const char *name;
	uint32_t id;
	uint16_t machine;              /* ELF e_machine */
	uint64_t ram_base, ram_end;
} boards[] = {
	{ "qemu-virt-a15", 1, EM_ARM, 0x40000000ull, 0x48000000ull },
	{ "qemu-virt-a72", 2, EM_AARCH64, 0x40000000ull, 0x48000000ull },
};
#define N_BOARDS (sizeof(boards) / sizeof(boards[0]))

static const char *const slot_state_names[] = { "empty", "valid", "bad" };
static const char *const boot_event_names[] = { "none", "test", "confirmed", "reverted",
						"refused", "rescue" };
static const char *const upd_state_names[] = { "idle", "writing", "verified", "failed" };
static const char *const sig_policy_names[] = {
	[MNIC_FW_SIG_OPEN] = "open", [MNIC_FW_SIG_ENFORCED] = "enforced",
	[MNIC_FW_SIG_LOCKED] = "locked",
};
static const char *const sig_policy_text[] = {
	[MNIC_FW_SIG_OPEN] = "not enforced: no key provisioned, images are checked by digest only",
	[MNIC_FW_SIG_ENFORCED] = "enforced: only images signed by a provisioned key",
	[MNIC_FW_SIG_LOCKED] = "locked: the key slot is corrupt or revokes every key, no image is accepted",
};

static const char *name_of(const char *const *t, size_t n, unsigned v)
{
	return v < n ? t[v] : "?";
}
#define NAME(t, v) name_of(t, sizeof(t) / sizeof(t[0]), (v))

static int json;


static int fail_code(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mnicctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

static const struct fw_board *board_by_name(const char *s)
{
	for (size_t i = 0; i < N_BOARDS; i++)
		if (!strcmp(boards[i].name, s))
			return &boards[i];
	return NULL;
}

static const char *board_name(uint32_t id)
{
	for (size_t i = 0; i < N_BOARDS; i++)
		if (boards[i].id == id)
			return boards[i].name;
	return "unknown";
}

int mnicctl_fw_parse_version(const char *s, uint8_t *major, uint8_t *minor, uint16_t *patch,
			     uint32_t *build)
{
	unsigned long v[4] = { 0, 0, 0, 0 };
	const char *p = s;
	char *end;

	for (int i = 0; i < 4; i++) {
		if (i == 3 && *p == '\0' && p[-1] != '+')
			break;                 /* no "+N": build 0 */
		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		v[i] = strtoul(p, &end, 10);
		if (errno || end == p)
			return -1;
		p = end;
		if (i < 2 && *p++ != '.')
			return -1;
		if (i == 2 && *p != '\0' && *p++ != '+')
			return -1;
	}
	if (*p || v[0] > 255 || v[1] > 255 || v[2] > 65535 || v[3] > 0xffffffffu)
		return -1;
	*major = (uint8_t)v[0];
	*minor = (uint8_t)v[1];
	*patch = (uint16_t)v[2];
	*build = (uint32_t)v[3];
	return 0;
}

static const char *ver_str(const struct mnic_fw_version *v, char buf[32])
{
	snprintf(buf, 32, "%u.%u.%u+%u", v->major, v->minor, v->patch, v->build);
	return buf;
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

/* ---- files ------------------------------------------------------------------------ */

static int read_all(const char *path, uint8_t **buf, size_t *len, size_t max)
{
	struct stat st;
	FILE *f = fopen(path, "rb");

	*buf = NULL;
	if (!f)
		return fail_code(MNICCTL_DEVICE, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		fclose(f);
		return fail_code(MNICCTL_DEVICE, "%s: not a regular file of at most %zu bytes", path,
				 max);
	}
	*len = (size_t)st.st_size;
	*buf = malloc(*len ? *len : 1);
	if (!*buf || fread(*buf, 1, *len, f) != *len) {
		fclose(f);
		free(*buf);
		*buf = NULL;
		return fail_code(MNICCTL_DEVICE, "%s: read failed", path);
	}
	fclose(f);
	return MNICCTL_OK;
}

/* Write a temporary, then rename: a failed run never leaves half a file. */
static int write_all(const char *path, const void *a, size_t alen, const void *b, size_t blen)
{
	char tmp[4096];
	FILE *f;
	int ok;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return fail_code(MNICCTL_USAGE, "%s: path too long", path);
	f = fopen(tmp, "wb");
	if (!f)
		return fail_code(MNICCTL_DEVICE, "%s: cannot create: %s", tmp, strerror(errno));
	ok = fwrite(a, 1, alen, f) == alen && (!blen || fwrite(b, 1, blen, f) == blen);
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, path) != 0) {
		unlink(tmp);
		return fail_code(MNICCTL_DEVICE, "%s: write failed: %s", path, strerror(errno));
	}
	return MNICCTL_OK;
}

/* ---- ELF -> payload ---------------------------------------------------------------- */

struct seg {
	uint64_t paddr, filesz, off;
};

/* The loadable bytes of an ELF32/ELF64 little-endian executable.  Every
 * offset and size is checked against the file. */
static int elf_payload(const uint8_t *f, size_t len, const char *path, uint16_t *machine,
		       uint64_t *entry, uint64_t *lo, uint8_t **payload, uint32_t *plen)
{
	struct seg segs[32];
	unsigned n = 0, phnum, i;
	uint64_t phoff, phentsize, hi = 0;
	int is64;

	if (len < EI_NIDENT || memcmp(f, ELFMAG, SELFMAG))
		return fail_code(MNICCTL_FAILED, "%s: not an ELF file", path);
	if (f[EI_DATA] != ELFDATA2LSB)
		return fail_code(MNICCTL_FAILED, "%s: not a little-endian ELF", path);
	is64 = f[EI_CLASS] == ELFCLASS64;
	if (!is64 && f[EI_CLASS] != ELFCLASS32)
		return fail_code(MNICCTL_FAILED, "%s: unknown ELF class", path);
	if (is64) {
		Elf64_Ehdr e;

		if (len < sizeof(e))
			return fail_code(MNICCTL_FAILED, "%s: truncated ELF header", path);
		memcpy(&e, f, sizeof(e));
		*machine = e.e_machine;
		*entry = e.e_entry;
		phoff = e.e_phoff;
		phnum = e.e_phnum;
		phentsize = e.e_phentsize;
		if (e.e_type != ET_EXEC || phentsize != sizeof(Elf64_Phdr))
			return fail_code(MNICCTL_FAILED, "%s: not an executable ELF", path);
	} else {
		Elf32_Ehdr e;

		if (len < sizeof(e))
			return fail_code(MNICCTL_FAILED, "%s: truncated ELF header", path);
		memcpy(&e, f, sizeof(e));
		*machine = e.e_machine;
		*entry = e.e_entry;
		phoff = e.e_phoff;
		phnum = e.e_phnum;
		phentsize = e.e_phentsize;
		if (e.e_type != ET_EXEC || phentsize != sizeof(Elf32_Phdr))
			return fail_code(MNICCTL_FAILED, "%s: not an executable ELF", path);
	}
	if (phoff >= len || phnum > (len - phoff) / phentsize)
		return fail_code(MNICCTL_FAILED, "%s: program headers outside the file", path);
	*lo = UINT64_MAX;
	for (i = 0; i < phnum; i++) {
		const uint8_t *p = f + phoff + (uint64_t)i * phentsize;
		struct seg s;
		uint32_t type;

		if (is64) {
			Elf64_Phdr ph;

			memcpy(&ph, p, sizeof(ph));
			type = ph.p_type;
			s = (struct seg){ ph.p_paddr, ph.p_filesz, ph.p_offset };
		} else {
			Elf32_Phdr ph;

			memcpy(&ph, p, sizeof(ph));
			type = ph.p_type;
			s = (struct seg){ ph.p_paddr, ph.p_filesz, ph.p_offset };
		}
		if (type != PT_LOAD || s.filesz == 0)
			continue;
		if (s.off > len || s.filesz > len - s.off)
			return fail_code(MNICCTL_FAILED, "%s: segment %u outside the file", path, i);
		if (n == sizeof(segs) / sizeof(segs[0]))
			return fail_code(MNICCTL_FAILED, "%s: too many segments", path);
		if (s.paddr < *lo)
			*lo = s.paddr;
		if (s.paddr + s.filesz > hi)
			hi = s.paddr + s.filesz;
		segs[n++] = s;
	}
	if (!n)
		return fail_code(MNICCTL_FAILED, "%s: no loadable segment", path);
	if (hi - *lo > MNIC_FLASH_SLOT_SIZE - MNIC_FWIMG_HDR_SIZE)
		return fail_code(MNICCTL_FAILED, "%s: loadable span %llu bytes exceeds a slot (%u)",
				 path, (unsigned long long)(hi - *lo),
				 MNIC_FLASH_SLOT_SIZE - MNIC_FWIMG_HDR_SIZE);
	*plen = (uint32_t)(hi - *lo);
	*payload = calloc(1, *plen);
	if (!*payload)
		return fail_code(MNICCTL_DEVICE, "out of memory");
	for (i = 0; i < n; i++)
		memcpy(*payload + (segs[i].paddr - *lo), f + segs[i].off, segs[i].filesz);
	return MNICCTL_OK;
}

/* ---- image build / show / verify ------------------------------------------------- */

static const char *opt_val(int argc, const char **argv, int *i, const char *name)
{
	if (strcmp(argv[*i], name))
		return NULL;
	if (*i + 1 >= argc)
		return "";
	return argv[++*i];
}

static int image_build(int argc, const char **argv)
{
	const char *board = NULL, *version = NULL, *out = NULL, *elf = NULL, *name = NULL, *v;
	const struct fw_board *b;
	struct mnic_fwimg_hdr h;
	struct fwimg_limits lim;
	uint8_t *f = NULL, *payload = NULL;
	uint64_t entry = 0, lo = 0;
	uint16_t machine = 0;
	uint32_t plen = 0;
	size_t flen;
	int rc;

	for (int i = 2; i < argc; i++) {
		if ((v = opt_val(argc, argv, &i, "--board")))
			board = v;
		else if ((v = opt_val(argc, argv, &i, "--version")))
			version = v;
		else if ((v = opt_val(argc, argv, &i, "-o")))
			out = v;
		else if ((v = opt_val(argc, argv, &i, "--name")))
			name = v;
		else if (argv[i][0] == '-')
			return mnicctl_usage("image build: unknown option '%s'", argv[i]);
		else if (elf)
			return mnicctl_usage("image build: one ELF only");
		else
			elf = argv[i];
	}
	if (!board || !version || !out || !elf || !*board || !*version || !*out)
		return mnicctl_usage("image build --board BOARD --version X.Y.Z[+N] -o IMG ELF");
	if (!(b = board_by_name(board)))
		return mnicctl_usage("image build: unknown board '%s' (qemu-virt-a15 or qemu-virt-a72)",
				  board);
	memset(&h, 0, sizeof(h));
	if (mnicctl_fw_parse_version(version, &h.version.major, &h.version.minor, &h.version.patch,
				     &h.version.build))
		return mnicctl_usage("image build: version '%s' is not X.Y.Z or X.Y.Z+N", version);
	if ((rc = read_all(elf, &f, &flen, 64u << 20)))
		return rc;
	rc = elf_payload(f, flen, elf, &machine, &entry, &lo, &payload, &plen);
	free(f);
	if (rc)
		return rc;
	if (machine != b->machine) {
		free(payload);
		return fail_code(MNICCTL_FAILED, "%s: ELF machine %u does not run on %s (wants %u)",
				 elf, machine, board, b->machine);
	}
	h.magic = MNIC_FWIMG_MAGIC;
	h.hdr_version = MNIC_FWIMG_HDR_VERSION;
	h.hdr_size = MNIC_FWIMG_HDR_SIZE;
	h.board_id = b->id;
	h.load_addr = lo;
	h.entry = entry;
	h.payload_size = plen;
	snprintf(h.name, sizeof(h.name), "%s", name ? name : board);
	lim = (struct fwimg_limits){ .board_id = b->id, .max_image = MNIC_FLASH_SLOT_SIZE,
				    .ram_base = b->ram_base, .ram_end = b->ram_end };
	if ((rc = fwimg_check_hdr(&h, &lim)) != FWIMG_OK) {
		free(payload);
		return fail_code(MNICCTL_FAILED, "%s: %s (load 0x%llx entry 0x%llx, %u bytes)", elf,
				 fwimg_strerror(rc), (unsigned long long)lo,
				 (unsigned long long)entry, plen);
	}
	fwimg_digest(&h, payload, h.digest);
	rc = write_all(out, &h, sizeof(h), payload, plen);
	free(payload);
	if (rc)
		return rc;
	if (!json)
		printf("%s: %s image %u.%u.%u+%u, %u payload bytes at 0x%llx\n", out, board,
		       h.version.major, h.version.minor, h.version.patch, h.version.build, plen,
		       (unsigned long long)lo);
	else
		printf("{\"file\":\"%s\",\"board\":\"%s\",\"payload_size\":%u}\n", out, board, plen);
	return MNICCTL_OK;
}

struct sig_find {
	const uint8_t *sig;
	unsigned n_tlv;
};

static int find_sig(void *ctx, uint16_t type, const uint8_t *v, uint16_t len)
{
	struct sig_find *s = ctx;

	s->n_tlv++;
	if (type == MNIC_FWIMG_TLV_ED25519 && len == crypto_sign_BYTES)
		s->sig = v;
	return 0;
}

/* Load and check a file: the parser's verdict, then the file must end
 * where the image ends. */
static int load_image(const char *path, uint8_t **img, size_t *len, struct fwimg_info *info,
		      int *verdict)
{
	static const struct fwimg_limits any = { .max_image = MNIC_FLASH_SLOT_SIZE };
	int rc;

	if ((rc = read_all(path, img, len, 64u << 20)))
		return rc;
	*verdict = fwimg_verify(*img, *len, &any, info);
	if (*verdict == FWIMG_OK && info->image_len != *len)
		*verdict = FWIMG_E_TRAILING;
	return MNICCTL_OK;
}

static int image_show_verify(int argc, const char **argv, int verify)
{
	const char *path = NULL, *pubkey = NULL, *board = NULL, *v;
	struct sig_find sf = { NULL, 0 };
	const struct fw_board *b = NULL;
	struct fwimg_info info;
	uint8_t *img = NULL, *pk = NULL;
	char dig[65], vs[32], sig_state[64] = "unsigned";
	size_t len, pklen;
	int rc, verdict;

	for (int i = 2; i < argc; i++) {
		if (verify && (v = opt_val(argc, argv, &i, "--pubkey")))
			pubkey = v;
		else if (verify && (v = opt_val(argc, argv, &i, "--board")))
			board = v;
		else if (argv[i][0] == '-')
			return mnicctl_usage("image %s: unknown option '%s'", argv[1], argv[i]);
		else if (path)
			return mnicctl_usage("image %s: one image only", argv[1]);
		else
			path = argv[i];
	}
	if (!path || (pubkey && !*pubkey) || (board && !(b = board_by_name(board))))
		return mnicctl_usage(verify ? "image verify [--board BOARD] [--pubkey KEY.pub] IMG"
					 : "image show IMG");
	if ((rc = load_image(path, &img, &len, &info, &verdict)))
		return rc;
	if (verdict == FWIMG_OK && b && info.hdr.board_id != b->id)
		verdict = FWIMG_E_BOARD;
	if (verdict == FWIMG_OK && info.tlv_off &&
	    fwimg_tlv_walk(img + info.tlv_off, info.tlv_len, find_sig, &sf) == FWIMG_OK && sf.sig)
		snprintf(sig_state, sizeof(sig_state), "ed25519 (not checked)");
	if (verdict == FWIMG_OK && pubkey) {
		/* the device's check (boot/fwsig.c) with a key slot holding this key */
		static const uint32_t one = 1;
		struct mnic_keyslot ks;
		struct fwsig_keys keys;
		int sr;

		if ((rc = read_all(pubkey, &pk, &pklen, 1024))) {
			free(img);
			return rc;
		}
		if (pklen != ED25519_PUBKEY_LEN || ed25519_pubkey_check(pk) != 0) {
			free(img);
			free(pk);
			return fail_code(MNICCTL_USAGE, "%s: not an Ed25519 public key (%u bytes, a point "
					 "of the curve)", pubkey, ED25519_PUBKEY_LEN);
		}
		fwsig_keyslot_build(&ks, (const uint8_t (*)[32])pk, &one, 1, 0);
		fwsig_keys_load(&keys, &ks);
		sr = fwsig_check(&keys, info.hdr.digest, info.tlv_off ? img + info.tlv_off : NULL,
				 info.tlv_len);
		snprintf(sig_state, sizeof(sig_state), "%s",
			 sr == FWIMG_OK ? "ok" : sr == FWIMG_E_UNSIGNED ? "MISSING"
				: sr == FWIMG_E_SIG_KEY ? "OTHER KEY" : sr == FWIMG_E_TLV ? "MALFORMED" : "BAD");
		free(pk);
	}
	hex(info.hdr.digest, 32, dig);
	if (json) {
		printf("{\"file\":\"%s\",\"bytes\":%zu,\"ok\":%s,\"error\":\"%s\",\"board_id\":%u,"
		       "\"board\":\"%s\",\"version\":\"%s\",\"load_addr\":%llu,\"entry\":%llu,"
		       "\"payload_size\":%u,\"digest\":\"%s\",\"tlv_bytes\":%u,\"signature\":\"%s\","
		       "\"name\":\"%.32s\"}\n",
		       path, len, verdict == FWIMG_OK ? "true" : "false",
		       verdict ? fwimg_strerror(verdict) : "", info.hdr.board_id,
		       board_name(info.hdr.board_id), ver_str(&info.hdr.version, vs),
		       (unsigned long long)info.hdr.load_addr, (unsigned long long)info.hdr.entry,
		       info.hdr.payload_size, dig, info.tlv_len, sig_state, info.hdr.name);
	} else {
		printf("firmware image %s (%zu bytes)\n", path, len);
		printf("  board       %u (%s)\n", info.hdr.board_id, board_name(info.hdr.board_id));
		printf("  version     %s\n", ver_str(&info.hdr.version, vs));
		printf("  name        %.32s\n", info.hdr.name);
		printf("  load/entry  0x%llx / 0x%llx\n", (unsigned long long)info.hdr.load_addr,
		       (unsigned long long)info.hdr.entry);
		printf("  payload     %u bytes\n", info.hdr.payload_size);
		printf("  sha256      %s\n", dig);
		printf("  tlv         %u bytes, signature %s\n", info.tlv_len, sig_state);
		printf("  verdict     %s\n", verdict == FWIMG_OK ? "ok" : fwimg_strerror(verdict));
	}
	free(img);
	if (verdict != FWIMG_OK) {
		fprintf(stderr, "mnicctl: %s: %s\n", path, fwimg_strerror(verdict));
		return MNICCTL_FAILED;
	}
	if (pubkey && strcmp(sig_state, "ok")) {
		fprintf(stderr, "mnicctl: %s: signature %s for %s\n", path, sig_state, pubkey);
		return MNICCTL_FAILED;
	}
	return MNICCTL_OK;
}

/* ---- keys and signatures (libsodium Ed25519) --------------------------------------- */

static int image_keygen(int argc, const char **argv)
{
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	char pub[4096];
	int rc;

	if (argc != 4 || strcmp(argv[2], "-o"))
		return mnicctl_usage("image keygen -o KEY   (writes KEY secret, KEY.pub public)");
	if (sodium_init() < 0)
		return fail_code(MNICCTL_DEVICE, "libsodium init failed");
	crypto_sign_keypair(pk, sk);
	if (snprintf(pub, sizeof(pub), "%s.pub", argv[3]) >= (int)sizeof(pub))
		return mnicctl_usage("key path too long");
	rc = write_all(argv[3], sk, sizeof(sk), NULL, 0);
	if (!rc)
		rc = chmod(argv[3], 0600) ? fail_code(MNICCTL_DEVICE, "chmod %s failed", argv[3]) : 0;
	if (!rc)
		rc = write_all(pub, pk, sizeof(pk), NULL, 0);
	sodium_memzero(sk, sizeof(sk));
	if (!rc && !json)
		printf("%s: Ed25519 secret key, %s: public key\n", argv[3], pub);
	return rc;
}

static int image_sign(int argc, const char **argv)
{
	const char *key = NULL, *path = NULL, *out = NULL, *v;
	unsigned char sig[crypto_sign_BYTES], pk[crypto_sign_PUBLICKEYBYTES];
	uint8_t *img = NULL, *sk = NULL, tlv[8 + 4 + 32 + 4 + crypto_sign_BYTES];
	struct mnic_fwimg_tlv_info ti = { MNIC_FWIMG_TLV_MAGIC, 0, sizeof(tlv) };
	struct mnic_fwimg_tlv t;
	struct fwimg_info info;
	size_t len, sklen, body;
	int rc, verdict;

	for (int i = 2; i < argc; i++) {
		if ((v = opt_val(argc, argv, &i, "--key")))
			key = v;
		else if ((v = opt_val(argc, argv, &i, "-o")))
			out = v;
		else if (argv[i][0] == '-')
			return mnicctl_usage("image sign: unknown option '%s'", argv[i]);
		else if (path)
			return mnicctl_usage("image sign: one image only");
		else
			path = argv[i];
	}
	if (!key || !path || !*key || (out && !*out))
		return mnicctl_usage("image sign --key KEY [-o OUT] IMG");
	if (sodium_init() < 0)
		return fail_code(MNICCTL_DEVICE, "libsodium init failed");
	if ((rc = load_image(path, &img, &len, &info, &verdict)))
		return rc;
	if (verdict != FWIMG_OK) {
		free(img);
		return fail_code(MNICCTL_FAILED, "%s: %s: refusing to sign", path,
				 fwimg_strerror(verdict));
	}
	if ((rc = read_all(key, &sk, &sklen, 1024))) {
		free(img);
		return rc;
	}
	if (sklen != crypto_sign_SECRETKEYBYTES) {
		free(img);
		free(sk);
		return fail_code(MNICCTL_USAGE, "%s: not an Ed25519 secret key (%d bytes)", key,
				 crypto_sign_SECRETKEYBYTES);
	}
	/* The signature covers the digest, which covers header + payload. */
	crypto_sign_detached(sig, NULL, info.hdr.digest, 32, sk);
	crypto_sign_ed25519_sk_to_pk(pk, sk);
	sodium_memzero(sk, sklen);
	free(sk);
	memcpy(tlv, &ti, sizeof(ti));
	t = (struct mnic_fwimg_tlv){ MNIC_FWIMG_TLV_KEYHASH, 32 };
	memcpy(tlv + 8, &t, 4);
	sha256(pk, sizeof(pk), tlv + 12);
	t = (struct mnic_fwimg_tlv){ MNIC_FWIMG_TLV_ED25519, crypto_sign_BYTES };
	memcpy(tlv + 44, &t, 4);
	memcpy(tlv + 48, sig, sizeof(sig));
	body = MNIC_FWIMG_HDR_SIZE + info.hdr.payload_size;   /* replaces any old TLV area */
	rc = write_all(out ? out : path, img, body, tlv, sizeof(tlv));
	free(img);
	if (!rc && !json)
		printf("%s: signed (Ed25519, key %s)\n", out ? out : path, key);
	return rc;
}

/* ---- provisioning: the key slot of a boot flash (flash0) file ------------------------ */

/* "KEY.pub" or "KEY.pub:VERSION" */
static int parse_key_arg(const char *arg, uint8_t pk[32], uint32_t *version)
{
	char path[4096];
	const char *colon = strrchr(arg, ':');
	uint8_t *b = NULL;
	size_t n, len;
	int rc;

	*version = 1;
	n = colon ? (size_t)(colon - arg) : strlen(arg);
	if (n == 0 || n >= sizeof(path) ||
	    (colon && (mnicctl_parse_u32(colon + 1, version) || *version == 0)))
		return mnicctl_usage("image keyslot: --pubkey KEY.pub[:VERSION], VERSION >= 1");
	memcpy(path, arg, n);
	path[n] = '\0';
	if ((rc = read_all(path, &b, &len, 1024)))
		return rc;
	if (len != ED25519_PUBKEY_LEN || ed25519_pubkey_check(b) != 0) {
		free(b);
		return fail_code(MNICCTL_FAILED, "%s: not an Ed25519 public key (%u bytes, a point of "
				 "the curve outside its small subgroup)", path, ED25519_PUBKEY_LEN);
	}
	memcpy(pk, b, 32);
	free(b);
	return MNICCTL_OK;
}

static int image_keyslot(int argc, const char **argv)
{
	uint8_t pks[MNIC_KEYSLOT_KEYS][32];
	uint32_t vers[MNIC_KEYSLOT_KEYS], revoked = 0;
	const char *path = NULL, *v;
	struct mnic_keyslot ks;
	struct fwsig_keys keys;
	unsigned n = 0;
	FILE *f;
	int rc;

	for (int i = 2; i < argc; i++) {
		if ((v = opt_val(argc, argv, &i, "--pubkey"))) {
			if (n >= MNIC_KEYSLOT_KEYS)
				return mnicctl_usage("image keyslot: at most %u keys", MNIC_KEYSLOT_KEYS);
			if ((rc = parse_key_arg(v, pks[n], &vers[n])))
				return rc;
			n++;
		} else if ((v = opt_val(argc, argv, &i, "--revoke-below"))) {
			if (mnicctl_parse_u32(v, &revoked))
				return mnicctl_usage("image keyslot: --revoke-below N");
		} else if (argv[i][0] == '-') {
			return mnicctl_usage("image keyslot: unknown option '%s'", argv[i]);
		} else if (path) {
			return mnicctl_usage("image keyslot: one flash0 file only");
		} else {
			path = argv[i];
		}
	}
	if (!path || !n)
		return mnicctl_usage("image keyslot FLASH0 --pubkey KEY.pub[:VERSION] "
				     "[--pubkey KEY2.pub[:VERSION]] [--revoke-below N]");
	if (n == 2 && vers[0] == vers[1])
		return fail_code(MNICCTL_USAGE, "image keyslot: two keys of version %u", vers[0]);
	fwsig_keyslot_build(&ks, (const uint8_t (*)[32])pks, vers, n, revoked);
	if (fwsig_keys_load(&keys, &ks) != FWSIG_ENFORCED)
		return fail_code(MNICCTL_FAILED, "image keyslot: every key is revoked (below %u): the "
				 "board would accept no image", revoked);
	f = fopen(path, "r+b");
	if (!f)
		return fail_code(MNICCTL_DEVICE, "%s: %s (a copy of build/BOARD/loader/flash0.bin)",
				 path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || ftell(f) < (long)(MNIC_BOOTROM_KEYSLOT + sizeof(ks))) {
		fclose(f);
		return fail_code(MNICCTL_FAILED, "%s: too small for a boot flash (the key slot is at "
				 "0x%x)", path, MNIC_BOOTROM_KEYSLOT);
	}
	rc = fseek(f, MNIC_BOOTROM_KEYSLOT, SEEK_SET) || fwrite(&ks, sizeof(ks), 1, f) != 1;
	if (fclose(f) || rc)
		return fail_code(MNICCTL_DEVICE, "%s: write failed", path);
	if (!json)
		printf("%s: key slot with %u key%s, revoked below %u\n", path, n, n > 1 ? "s" : "",
		       revoked);
	return MNICCTL_OK;
}

/* ---- a slot-flash file for QEMU (-drive if=pflash,unit=1) -------------------------- */

/* The file's bytes as a hal_flash (NOR: erase sets 0xff, a write ANDs). */
static int mf_read(struct hal_flash *f, uint32_t off, void *dst, uint32_t len)
{
	memcpy(dst, (uint8_t *)f->priv + off, len);
	return 0;
}

static int mf_write(struct hal_flash *f, uint32_t off, const void *src, uint32_t len)
{
	uint8_t *mem = f->priv;
	const uint8_t *p = src;

	for (uint32_t i = 0; i < len; i++)
		mem[off + i] &= p[i];
	return 0;
}

static int mf_erase(struct hal_flash *f, uint32_t off)
{
	memset((uint8_t *)f->priv + off, 0xff, f->info->erase_block);
	return 0;
}

static const uint8_t *mf_map(struct hal_flash *f, uint32_t off, uint32_t len)
{
	(void)len;
	return (const uint8_t *)f->priv + off;
}

static const struct hal_flash_ops mem_flash_ops = {
	.read = mf_read, .write = mf_write, .erase = mf_erase, .map = mf_map,
};
static const struct hal_flash_info mem_flash_info = { MNIC_FLASH_SIZE, MNIC_FLASH_SECTOR, 4 };

static int image_flash_file(int argc, const char **argv)
{
	const char *out = NULL, *slot[2] = { NULL, NULL }, *v;
	struct hal_flash f = { &mem_flash_ops, &mem_flash_info, { 0, 0 }, NULL };
	struct mnic_bootrec r;
	uint32_t board = 0;
	int rc = MNICCTL_OK;

	for (int i = 2; i < argc; i++) {
		if ((v = opt_val(argc, argv, &i, "-o")))
			out = v;
		else if ((v = opt_val(argc, argv, &i, "--slot-a")))
			slot[0] = v;
		else if ((v = opt_val(argc, argv, &i, "--slot-b")))
			slot[1] = v;
		else
			return mnicctl_usage("image flash-file: unknown argument '%s'", argv[i]);
	}
	if (!out || !*out || (!slot[0] && !slot[1]) || (slot[0] && !*slot[0]) ||
	    (slot[1] && !*slot[1]))
		return mnicctl_usage("image flash-file -o FLASH.bin --slot-a IMG [--slot-b IMG]");
	f.priv = malloc(MNIC_FLASH_SIZE);
	if (!f.priv)
		return fail_code(MNICCTL_DEVICE, "out of memory");
	memset(f.priv, 0xff, MNIC_FLASH_SIZE);
	bootrec_default(&r);
	r.active = slot[0] ? MNIC_SLOT_A : MNIC_SLOT_B;
	for (unsigned s = 0; s < 2 && !rc; s++) {
		struct fwimg_info info;
		uint8_t *img;
		size_t len;
		int verdict;

		if (!slot[s])
			continue;
		if ((rc = load_image(slot[s], &img, &len, &info, &verdict)))
			break;
		if (verdict != FWIMG_OK)
			rc = fail_code(MNICCTL_FAILED, "%s: %s", slot[s], fwimg_strerror(verdict));
		else if (board && info.hdr.board_id != board)
			rc = fail_code(MNICCTL_FAILED, "%s: for board %u, the other slot for %u",
				       slot[s], info.hdr.board_id, board);
		if (!rc) {
			board = info.hdr.board_id;
			memcpy((uint8_t *)f.priv + boot_slot_off(s), img, len);
			r.state[s] = MNIC_SLOT_VALID;
			r.ver[s] = info.hdr.version;
		}
		free(img);
	}
	if (!rc && bootrec_store(&f, &r) != 0)
		rc = fail_code(MNICCTL_DEVICE, "boot record write failed");
	if (!rc)
		rc = write_all(out, f.priv, MNIC_FLASH_SIZE, NULL, 0);
	free(f.priv);
	if (!rc && !json)
		printf("%s: slot flash, %u MiB, active slot %c\n", out, MNIC_FLASH_SIZE >> 20,
		       'A' + r.active);
	return rc;
}

static const struct {
	const char *name;
	int (*fn)(int argc, const char **argv);
} image_verbs[] = {
	{ "build", image_build },
	{ "keygen", image_keygen },
	{ "sign", image_sign },
	{ "keyslot", image_keyslot },
	{ "flash-file", image_flash_file },
};

static int image_show(int argc, const char **argv)
{
	return image_show_verify(argc, argv, 0);
}

static int image_verify(int argc, const char **argv)
{
	return image_show_verify(argc, argv, 1);
}

int mnicctl_fw_image(const struct mnicctl_opts *o, int argc, const char **argv)
{
	json = o->json;
	if (argc >= 2 && !strcmp(argv[1], "show"))
		return image_show(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "verify"))
		return image_verify(argc, argv);
	for (size_t i = 0; argc >= 2 && i < sizeof(image_verbs) / sizeof(image_verbs[0]); i++)
		if (!strcmp(argv[1], image_verbs[i].name))
			return image_verbs[i].fn(argc, argv);
	return mnicctl_usage("image build|show|verify|sign|keygen|keyslot|flash-file ...");
}

int mnicctl_fw_is_image(const char *path)
{
	uint32_t magic = 0;
	FILE *f = fopen(path, "rb");
	int yes;

	if (!f)
		return 0;
	yes = fread(&magic, 1, 4, f) == 4 && magic == MNIC_FWIMG_MAGIC;
	fclose(f);
	return yes;
}

/* ---- on a device: fw, flash --------------------------------------------------------- */

static int query_slots(struct mnic_dev *dev, struct mnic_cmd_fw_slots_out *s);

int mnicctl_fw_sig_policy(struct mnic_dev *dev, const char **name, const char **text)
{
	struct mnic_cmd_fw_slots_out s;
	int rc = query_slots(dev, &s);

	if (rc)
		return rc;
	*name = NAME(sig_policy_names, s.sig_policy);
	*text = NAME(sig_policy_text, s.sig_policy);
	return 0;
}

static int dev_fail(struct mnic_dev *dev, const char *what)
{
	const struct mnic_cmd_result *r = mnic_last_error(dev);
	uint32_t site = MNIC_SYND_SITE(r->syndrome);

	if (r->layer == MNIC_ERR_STATUS && site >= MNIC_FW_SITE_IMAGE &&
	    site < MNIC_FW_SITE_IMAGE + FWIMG_NUM_ERRS)
		fprintf(stderr, "mnicctl: %s: the NIC refused the image: %s\n", what,
			fwimg_strerror((int)(site - MNIC_FW_SITE_IMAGE)));
	else
		fprintf(stderr, "mnicctl: %s: %s\n", what, mnic_strerror_last(dev));
	return r->layer == MNIC_ERR_STATUS ? MNICCTL_FAILED : MNICCTL_DEVICE;
}

static int query_slots(struct mnic_dev *dev, struct mnic_cmd_fw_slots_out *s)
{
	struct mnic_cmd_simple_in in = { { MNIC_CMD_FW_QUERY, MNIC_FW_QUERY_SLOTS, 0, 0 } };

	memset(s, 0, sizeof(*s));
	return mnic_cmd(dev, &in, sizeof(in), s, sizeof(*s), NULL);
}

static void print_slots(const struct mnic_cmd_fw_slots_out *s)
{
	struct mnic_fw_version v;
	struct mnic_bootrec r;
	char vs[32];

	memcpy(&r, s->bootrec, sizeof(r));
	memcpy(&v, s->running_version, sizeof(v));
	if (json) {
		printf("{\"board_id\":%u,\"board\":\"%s\",\"flash\":%s,\"loader\":%s,"
		       "\"confirmed\":%s,\"running\":{\"version\":\"%s\",\"slot\":\"%s\","
		       "\"boot_event\":\"%s\",\"boot_count\":%u},",
		       s->board_id, board_name(s->board_id), s->flags & MNIC_FW_F_FLASH ? "true" : "false",
		       s->flags & MNIC_FW_F_LOADER ? "true" : "false",
		       s->flags & MNIC_FW_F_CONFIRMED ? "true" : "false", ver_str(&v, vs),
		       s->running_slot == 0 ? "A" : s->running_slot == 1 ? "B" : "none",
		       NAME(boot_event_names, s->boot_event), s->boot_count);
		printf("\"slots\":[");
		for (int i = 0; i < 2; i++) {
			memcpy(&v, s->slot[i].version, sizeof(v));
			printf("%s{\"slot\":\"%c\",\"state\":\"%s\",\"version\":\"%s\",\"active\":%s,"
			       "\"test\":%s,\"running\":%s,\"image_error\":\"%s\",\"payload_size\":%u}",
			       i ? "," : "", 'A' + i, NAME(slot_state_names, s->slot[i].state),
			       ver_str(&v, vs), s->slot[i].flags & MNIC_FW_SLOT_F_ACTIVE ? "true" : "false",
			       s->slot[i].flags & MNIC_FW_SLOT_F_TEST ? "true" : "false",
			       s->slot[i].flags & MNIC_FW_SLOT_F_RUNNING ? "true" : "false",
			       s->slot[i].image_err ? fwimg_strerror(s->slot[i].image_err) : "",
			       s->slot[i].payload_size);
		}
		printf("],\"bootrec\":{\"seq\":%u,\"active\":%u,\"test\":%d,\"boot_count\":%u,"
		       "\"max_boots\":%u,\"reverts\":%u,\"last_event\":\"%s\",\"min_version\":\"%s\"},"
		       "\"signature\":{\"policy\":\"%s\",\"revoked_below\":%u,"
		       "\"key_versions\":[%u,%u]},"
		       "\"update\":{\"state\":\"%s\",\"written\":%u,\"total\":%u}}\n",
		       r.seq, r.active, r.test == MNIC_SLOT_NONE ? -1 : r.test, r.boot_count,
		       r.max_boots, r.reverts, NAME(boot_event_names, r.last_event),
		       ver_str(&r.min_version, vs), NAME(sig_policy_names, s->sig_policy),
		       s->revoked_below, s->key_version[0], s->key_version[1],
		       NAME(upd_state_names, s->update_state), s->update_written, s->update_total);
		return;
	}
	printf("board       %u (%s)%s\n", s->board_id, board_name(s->board_id),
	       s->flags & MNIC_FW_F_FLASH ? "" : ", no slot flash");
	printf("running     %s from slot %s, boot event %s%s\n", ver_str(&v, vs),
	       s->running_slot == 0 ? "A" : s->running_slot == 1 ? "B" : "none (no loader)",
	       NAME(boot_event_names, s->boot_event),
	       s->flags & MNIC_FW_F_CONFIRMED ? ", confirmed" : "");
	for (int i = 0; i < 2; i++) {
		memcpy(&v, s->slot[i].version, sizeof(v));
		printf("slot %c      %-6s %-14s%s%s%s%s%s\n", 'A' + i,
		       NAME(slot_state_names, s->slot[i].state), ver_str(&v, vs),
		       s->slot[i].flags & MNIC_FW_SLOT_F_ACTIVE ? " active" : "",
		       s->slot[i].flags & MNIC_FW_SLOT_F_TEST ? " test" : "",
		       s->slot[i].flags & MNIC_FW_SLOT_F_RUNNING ? " running" : "",
		       s->slot[i].image_err ? " image: " : "",
		       s->slot[i].image_err ? fwimg_strerror(s->slot[i].image_err) : "");
	}
	printf("boot record seq %u, test %s, boot count %u/%u, reverts %u, last event %s\n", r.seq,
	       r.test == MNIC_SLOT_NONE ? "none" : r.test ? "B" : "A", r.boot_count, r.max_boots,
	       r.reverts, NAME(boot_event_names, r.last_event));
	printf("rollback    images older than %s are refused\n", ver_str(&r.min_version, vs));
	printf("signature   %s", NAME(sig_policy_text, s->sig_policy));
	if (s->sig_policy == MNIC_FW_SIG_ENFORCED)
		printf(" (key versions %u, %u; revoked below %u)", s->key_version[0],
		       s->key_version[1], s->revoked_below);
	printf("\n");
	if (s->update_state != FWUPD_IDLE)
		printf("update      %s, %u/%u bytes\n", NAME(upd_state_names, s->update_state),
		       s->update_written, s->update_total);
}

static int activate(struct mnic_dev *dev, uint32_t max_boots)
{
	struct mnic_cmd_fw_activate_in in;
	struct mnic_cmd_simple_out out;

	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_FW_ACTIVATE;
	in.max_boots = max_boots;
	if (mnic_cmd(dev, &in, sizeof(in), &out, sizeof(out), NULL))
		return dev_fail(dev, "FW_ACTIVATE");
	return MNICCTL_OK;
}

int mnicctl_fw_cmd(const struct mnicctl_opts *o, struct mnic_dev *dev, int argc, const char **argv)
{
	struct mnic_cmd_fw_slots_out s;
	uint32_t max_boots = 0;

	json = o->json;
	if (argc >= 2 && !strcmp(argv[1], "activate")) {
		if (argc == 4 && !strcmp(argv[2], "--max-boots") &&
		    !mnicctl_parse_u32(argv[3], &max_boots) && max_boots <= 255)
			;
		else if (argc != 2)
			return mnicctl_usage("fw activate [--max-boots N]");
		int rc = activate(dev, max_boots);

		if (rc)
			return rc;
		if (!json)
			printf("inactive slot activated as test; the NIC resets\n");
		return MNICCTL_OK;
	}
	if (argc != 1)
		return mnicctl_usage("fw | fw activate [--max-boots N]");
	if (query_slots(dev, &s))
		return dev_fail(dev, "FW_QUERY");
	print_slots(&s);
	return MNICCTL_OK;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(uint32_t done, uint32_t total, double t0, int tty, int *last_decile)
{
	int pct = total ? (int)((uint64_t)done * 100 / total) : 100, bar = pct / 4;
	double dt = now_s() - t0;

	if (tty) {
		fprintf(stderr, "\r[%.*s%*s] %3d%% %u/%u B %.0f KiB/s", bar,
			"#########################", 25 - bar, "", pct, done, total,
			dt > 0 ? done / 1024.0 / dt : 0.0);
		if (done == total)
			fputc('\n', stderr);
	} else if (pct / 10 != *last_decile) {
		*last_decile = pct / 10;
		fprintf(stderr, "flash: %3d%% %u/%u bytes\n", pct, done, total);
	}
}

/* Wait for the NIC to come back after a reset and report what runs. */
static int wait_back(const struct mnicctl_opts *o, const struct mnic_fwimg_hdr *h)
{
	double deadline = now_s() + (o->timeout_ms ? o->timeout_ms / 1000.0 : 60.0);
	struct mnic_cmd_fw_slots_out s;
	struct mnic_fw_version v;
	struct mnic_dev *d = NULL;
	char a[32], b[32];

	usleep(300000);   /* the firmware resets ~100 ms after its reply */
	while (now_s() < deadline) {
		if (mnic_open_mgmt(o->dev, &d) == 0) {
			if (query_slots(d, &s) == 0 && (s.flags & MNIC_FW_F_CONFIRMED)) {
				mnic_close(d);
				memcpy(&v, s.running_version, sizeof(v));
				if (memcmp(&v, &h->version, sizeof(v)) == 0) {
					if (!json)
						printf("running %s from slot %c, confirmed\n",
						       ver_str(&v, a), 'A' + s.running_slot);
					return MNICCTL_OK;
				}
				return fail_code(MNICCTL_FAILED,
						 "the NIC came back on %s, not %s (reverted?)",
						 ver_str(&v, a), ver_str(&h->version, b));
			}
			mnic_close(d);
			d = NULL;
		}
		usleep(100000);
	}
	return fail_code(MNICCTL_DEVICE, "the NIC did not come back confirmed in time");
}

int mnicctl_flash_cmd(const struct mnicctl_opts *o, struct mnic_dev *dev, int argc,
		      const char **argv)
{
	const char *path = NULL;
	struct mnic_cmd_fw_flash_begin_in bin;
	struct mnic_cmd_fw_flash_end_out eout;
	struct mnic_cmd_simple_in ein = { { MNIC_CMD_FW_FLASH_END, 0, 0, 0 } };
	struct mnic_cmd_simple_out sout;
	struct fwimg_info info;
	uint8_t *img = NULL, *buf;
	int do_activate = 0, wait = 0, host_check = 1, rc, verdict, tty = isatty(2), dec = -1;
	uint32_t chunk = MNIC_FW_FLASH_CHUNK_MAX, off;
	size_t len;
	double t0;

	json = o->json;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--activate"))
			do_activate = 1;
		else if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (!strcmp(argv[i], "--no-host-check"))
			host_check = 0;   /* the device's checks alone (tests of the device) */
		else if (argv[i][0] == '-')
			return mnicctl_usage("flash: unknown option '%s'", argv[i]);
		else if (path)
			return mnicctl_usage("flash: one image only");
		else
			path = argv[i];
	}
	if (!path || (wait && !do_activate))
		return mnicctl_usage("flash IMG [--activate [--wait]] [--no-host-check]");
	if ((rc = load_image(path, &img, &len, &info, &verdict)))
		return rc;
	if (verdict != FWIMG_OK && (host_check || len < MNIC_FWIMG_HDR_SIZE || len > UINT32_MAX)) {
		free(img);
		return fail_code(MNICCTL_FAILED, "%s: %s: not sending it", path,
				 fwimg_strerror(verdict));
	}
	memset(&bin, 0, sizeof(bin));
	bin.hdr.opcode = MNIC_CMD_FW_FLASH_BEGIN;
	bin.total = (uint32_t)len;
	memcpy(bin.image_hdr, img, sizeof(bin.image_hdr));
	if (mnic_cmd(dev, &bin, sizeof(bin), &sout, sizeof(sout), NULL)) {
		free(img);
		return dev_fail(dev, "FW_FLASH_BEGIN");
	}
	buf = malloc(sizeof(struct mnic_cmd_fw_flash_data_in) + chunk);
	if (!buf) {
		free(img);
		return fail_code(MNICCTL_DEVICE, "out of memory");
	}
	t0 = now_s();
	for (off = 0; off < len;) {
		struct mnic_cmd_fw_flash_data_in din;
		uint32_t n = len - off < chunk ? (uint32_t)(len - off) : chunk;

		memset(&din, 0, sizeof(din));
		din.hdr.opcode = MNIC_CMD_FW_FLASH_DATA;
		din.offset = off;
		din.len = n;
		memcpy(buf, &din, sizeof(din));
		memcpy(buf + sizeof(din), img + off, n);
		if (mnic_cmd(dev, buf, (uint32_t)sizeof(din) + n, &sout, sizeof(sout), NULL)) {
			free(buf);
			free(img);
			if (tty)
				fputc('\n', stderr);
			return dev_fail(dev, "FW_FLASH_DATA");
		}
		off += n;
		progress(off, (uint32_t)len, t0, tty, &dec);
	}
	free(buf);
	memset(&eout, 0, sizeof(eout));
	if (mnic_cmd(dev, &ein, sizeof(ein), &eout, sizeof(eout), NULL)) {
		free(img);
		return dev_fail(dev, "FW_FLASH_END");
	}
	if (json)
		printf("{\"file\":\"%s\",\"bytes\":%zu,\"slot\":\"%c\",\"seconds\":%.3f}\n", path, len,
		       'A' + eout.slot, now_s() - t0);
	else
		printf("%s: %zu bytes written to slot %c and verified (%.1f s)\n", path, len,
		       'A' + eout.slot, now_s() - t0);
	rc = MNICCTL_OK;
	if (do_activate) {
		rc = activate(dev, 0);
		if (!rc && !json)
			printf("slot %c activated as test; the NIC resets\n", 'A' + eout.slot);
		if (!rc && wait)
			rc = wait_back(o, &info.hdr);
	}
	free(img);
	return rc;
}
