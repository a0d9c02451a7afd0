/* The transport's side of a body: the protocols say which bytes (a chunk
 * of a file, a batch of frames with file bytes in its holes), this file
 * picks how they travel from the socket's TLS mode (sock.h's "bodies" and
 * "batches"). The model is h2o's h2o_sendvec_t, a vector that knows how
 * its bytes are produced, so that the protocol never does. */
#include "server/net/sock-int.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "server/core/bufpool.h"
#include "ktls/tls_seal.h"
#include "server/core/file_resident.h"
#include "server/net/sock.h"

/* How far sock_send_file asks ahead whether file bytes are cached: one
 * question per 8 MiB. */
#define FILE_RESIDENT_AHEAD (8u << 20)
/* The most of a body one sock_send_file looks at: the bytes it asks are
 * cached, and whether a splice (a pipe's 1 MiB) says more follows. A
 * sendfile takes at most SOCK_SENDFILE_MAX of them. */
#define SEND_FILE_STEP (2u << 20)
/* How far sock_batch_map asks at once: a send from a page that is not in
 * memory would wait for the disk inside the ring's submit, stalling every
 * connection of the worker; one look ahead covers the next batches (a
 * question per batch was a third of the system calls of a download). */
#define PAGES_RESIDENT_AHEAD (4u << 20)
/* The window of a file a response maps at once (struct sock_map): as far
 * as one residency question looks, so that both move once per 4 MiB. */
#define MAP_WINDOW PAGES_RESIDENT_AHEAD

/* Zero copy only where it can win. On plain HTTP over loopback, copying
 * beat zero copy on every measure here: a single 1 GiB download took
 * 0.21-0.25 server CPU-s per GiB by copy, 0.30-0.37 by sendfile and
 * 0.37-0.38 by the ring's splices; a bare sendfile loop without ktlsd
 * loses the same way to a read+send loop (the kernel's page-fragment skbs
 * cost the sender more than two copies on this VM). Under kTLS, zero copy
 * spares two copies of every byte besides the encryption (the kernel
 * encrypts from the page cache), which is what kTLS downloads are for.
 * Under user-space TLS ktlsd or OpenSSL must see the bytes to seal them. */
bool sock_body_zero_copy(const struct sock *s, enum config_tristate want, uint64_t size)
{
	if (want == CONFIG_OFF || !sock_can_splice(s))
		return false;
	if (want == CONFIG_ON)
		return true;
	return sock_ktls_tx(s) && size >= SOCK_ZERO_COPY_MIN;
}

/* The room of tx cut to what seals into a buffer of tx's size, under
 * ktlsd's sealer (tls_seal_fits), so that ct comes from tx's class of the
 * pool (bufpool.h). After sock_out_reserve, which leaves room for far
 * more than the records' overhead. */
static size_t sealed_room(const struct sock *s, size_t room)
{
	size_t fit = tls_seal_fits(s->wire.tx_cap);

	if (!s->wire.sealer || fit <= s->wire.tx_len)
		return room;
	fit -= s->wire.tx_len;
	return room < fit ? room : fit;
}

/* A chunk is what one file read and one send move (STAGE_CAP): with
 * user-space TLS the stage, sealed whole while the next chunk is read;
 * otherwise the send buffer, which would grow with the file if it took
 * more than a chunk ahead of the socket.
 *
 * Under ktlsd's sealer the chunk is cut so that its records fit in a
 * buffer of tx's size (tls_seal_fits): a whole 128 KiB chunk sealed into
 * 131,585 bytes, which took ct from the pool's 256 KiB class. And a socket
 * that follows its room reads its next chunk only once the last one's
 * records have left: its sends do not wait in the kernel
 * (sock_send_park), so the read ahead saves it no time, and it held a
 * second buffer through the send. Slow downloads come in waves
 * (bufpool.h), and each download in one held tx and ct at once: 384 KiB,
 * and the pool's hold did not cover such waves. With both, 1,000 HTTP/1.1
 * downloads at 64 KiB/s spent 0.53-0.59 CPU-s per GB steady against
 * 0.68-0.77 (four alternating pairs, AMD EPYC family 26), munmap fell
 * from 5.8% of the worker to 1.9%, and PSS per download by 4-15 KiB.
 * Holding one buffer, such a socket reads as much as its room takes, up
 * to a whole seal (SEAL_MAX): cut to 128 KiB, a 100 MB download that
 * stayed below the speed that shows a socket fast (strace's, in bench/run's
 * cost cell) made twice the reads and sends, 16.5 ring operations a MiB
 * against 8.5. */
char *sock_body_room(struct sock *s, size_t *room)
{
	bool sealed = s->wire.sealer != NULL;
	size_t cap;
	char *p;

	if (sealed && s->follow_room && s->ct_posted)
		return NULL; /* the send's completion drives the next chunk */
	cap = sock_fits(s, STAGE_CAP);
	if (cap == 0)
		return NULL;
	if (sock_user_tls(s)) {
		p = sock_out_reserve(s, 0, room);
	} else {
		size_t want = sealed && s->follow_room && cap > STAGE_CAP ? 2 * STAGE_CAP : STAGE_CAP;
		if (sock_out_len(s) >= (sealed ? tls_seal_fits(want) : want))
			return NULL;
		p = sock_out_reserve(s, want, room);
		if (p)
			*room = sealed_room(s, *room);
	}
	if (p && *room > cap)
		*room = cap;
	return p;
}

enum sock_file_result sock_send_file(struct sock *s, const struct sock_file *f, uint64_t off,
				     size_t len, bool more, size_t *sent)
{
	*sent = 0;
	if (len > SEND_FILE_STEP)
		len = SEND_FILE_STEP;
	if (!f->resident_to ||
	    !file_resident_ahead(f->fd, f->resident_to, off, len, f->end, FILE_RESIDENT_AHEAD)) {
		size_t n = len < PIPEPOOL_PIPE_SIZE ? len : PIPEPOOL_PIPE_SIZE;
		sock_splice_file(s, f->fd, off, n, more || len > n);
		return s->closing ? SOCK_FILE_FAILED : SOCK_FILE_QUEUED;
	}
	switch (sock_sendfile(s, f->fd, off, len, sent)) {
	case SOCK_SENDFILE_SENT:
		return SOCK_FILE_SENT;
	case SOCK_SENDFILE_WAIT:
		return SOCK_FILE_WAIT;
	case SOCK_SENDFILE_EOF:
		return SOCK_FILE_EOF;
	case SOCK_SENDFILE_FAILED:
		break;
	}
	return SOCK_FILE_FAILED;
}

/* ---- batches ---- */

/* With user-space TLS the batch is the stage, sealed whole into tx when it
 * leaves, so the next batch is filled while the last one's records are
 * sent, and a batch that could not leave yet grows. Otherwise it is the
 * send buffer's room (the kernel, or ktlsd's sealer, encrypts what is
 * sent): a batch is opened only once the last one is all out, and one that
 * has not left is not added to. So too in every mode while the room is
 * followed: a batch filled beside a send that then waits for POLLOUT
 * would be held as long as it waits. */
char *sock_batch_open(struct sock *s, size_t want, size_t *room)
{
	bool stage = sock_user_tls(s), grows = stage && !s->follow_room;
	char *p;

	if (s->batch_open) {
		if (!grows)
			return NULL;
		*room = s->stage_cap - s->stage_len;
		return s->stage + s->stage_len;
	}
	/* No batch now: bytes queued with no send in flight (what OpenSSL
	 * wrote outside a batch, a control record, the stage's last batch)
	 * leave (sock_send: a no-op while busy or with nothing queued), so
	 * that their send's completion brings the next turn; nothing else
	 * would. */
	if (!grows && (sock_busy(s) || sock_tx_pending(s))) {
		sock_send(s, 0);
		return NULL;
	}
	/* A new batch, no larger than the socket takes now (sock.h,
	 * SOCK_NOTSENT_LOWAT): a full socket waits for room holding none. */
	size_t fits = sock_fits(s, want);
	if (fits == 0) {
		sock_send(s, 0);
		return NULL;
	}
	if (fits < want)
		want = fits > SOCK_BATCH_MIN ? fits : SOCK_BATCH_MIN;
	if (stage && s->stage && s->stage_cap < want && s->stage_len == 0 && !s->stage_fills) {
		/* Sized for a body's chunk: a batch wants the whole of want. */
		bufpool_put(s->env->bufs, s->stage, s->stage_cap);
		s->stage = NULL;
		s->stage_cap = 0;
	}
	if (stage && !s->stage) {
		/* A batch cut to the room gets a stage its size. */
		size_t cap = want > STAGE_CAP || fits != SIZE_MAX ? want : STAGE_CAP;
		s->stage = bufpool_get(s->env->bufs, cap, &s->stage_cap);
		if (!s->stage)
			return NULL;
	}
	p = sock_out_reserve(s, want, room);
	if (!p)
		return NULL;
	if (fits != SIZE_MAX && *room > want)
		*room = want;
	*room = sealed_room(s, *room);
	sock_fill_begin(s);
	s->batch_open = true;
	return p;
}

void sock_batch_drop(struct sock *s)
{
	if (!s->batch_open)
		return;
	s->batch_open = false;
	sock_fill_end(s);
}

int sock_batch_send(struct sock *s, size_t len)
{
	if (s->closing)
		return -1;
	if (!s->batch_open) {
		sock_bug(s, "a batch sent that was never opened");
		return -1;
	}
	/* With user-space TLS the last batch's records leave first: the stage
	 * is sealed into tx only when tx is empty. */
	if (sock_busy(s) || (sock_user_tls(s) && sock_tx_pending(s))) {
		sock_send(s, 0); /* queued bytes go (sock_batch_open); drive() follows */
		return 0;
	}
	s->batch_open = false;
	sock_fill_end(s);
	sock_out_commit(s, len); /* refused while a read into it is open */
	if (s->closing)
		return -1;
	sock_send(s, 0);
	return s->closing ? -1 : 1;
}

void sock_map_release(struct sock_map *m)
{
	if (m->base)
		munmap((void *)m->base, m->len);
	if (m->old)
		munmap((void *)m->old, m->old_len);
	*m = (struct sock_map){0};
}

/* A window onto [off, off + len) of f (f->end bytes long), the one before
 * kept while holes still point into it: false when it still must be and a
 * third would be needed (the caller reads instead), or mmap fails. */
static bool map_window(struct sock *s, const struct sock_file *f, struct sock_map *m, uint64_t off,
		       uint64_t len)
{
	if (m->old && !sock_out_maps_into(s, m->old, m->old_len)) {
		munmap((void *)m->old, m->old_len);
		m->old = NULL;
	}
	if (m->base && off >= m->off && off + len <= m->off + m->len)
		return true;
	if (m->old)
		return false;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t from = off & ~(page - 1);
	uint64_t to = from + MAP_WINDOW > off + len ? from + MAP_WINDOW : off + len;
	if (to > f->end)
		to = f->end;
	void *w = mmap(NULL, (size_t)(to - from), PROT_READ, MAP_SHARED, f->fd, (off_t)from);
	if (w == MAP_FAILED)
		return false;
	if (m->base && sock_out_maps_into(s, m->base, m->len)) {
		m->old = m->base;
		m->old_len = m->len;
	} else if (m->base) {
		munmap((void *)m->base, m->len);
	}
	m->base = w;
	m->off = from;
	m->len = (size_t)(to - from);
	return true;
}

/* The holes leave from the file's pages at off on, mapped into *m, where
 * those pages are cached (a fault on the worker must not wait for the
 * disk). */
static bool map_holes(struct sock *s, unsigned room, const struct sock_file *f, struct sock_map *m,
		      uint64_t off, const struct iovec *holes, int n)
{
	if (n <= 0 || room < (unsigned)n || f->fd < 0 || f->end == 0 || !f->resident_to)
		return false;
	uint64_t len = 0;
	for (int i = 0; i < n; i++)
		len += holes[i].iov_len;
	/* Nothing past the file's end may be taken from a mapping. */
	if (off > f->end || len > f->end - off)
		return false;
	/* Asked first: a file whose residency the kernel will not tell (one
	 * the server could not write) is never mapped at all. */
	if (!file_resident_ahead(f->fd, f->resident_to, off, len, f->end, PAGES_RESIDENT_AHEAD)) {
		m->met_disk = true;
		return false;
	}
	/* Under ktlsd's sealer a download's bytes are sealed from the file's
	 * mapped pages only once its file has come from the disk (m->met_disk):
	 * the pages a read just brought in are slow to touch the first time
	 * (seal_slice.h: a fault in the host each, on this VM), and a seal from
	 * them takes them a slice at a time between two looks at the ring, where
	 * a ring read's copy takes a whole chunk at once inside the worker's turn
	 * (eight cold downloads, a probe's p99 3.15 ms by reads against 0.90
	 * mapped, `bench/run --quick`, AMD EPYC family 26; half the worker's
	 * samples in the reads' _copy_to_iter).
	 *
	 * Cached pages, slow download or fast, seal for less from a read's copy.
	 * Through a mapping each page costs a PTE and a first touch, both of
	 * which trap to the hypervisor on these VMs (`Hypervisor detected: PVM`):
	 * 10,000 HTTP/2 downloads at 64 KiB/s spent 17% of the worker in page
	 * faults and 16% more on AES-GCM's first load of each new page
	 * (CRYPTO_gcm128_encrypt's `movzbl (%r10)`, perf annotate), and cost
	 * 1.77-2.68 CPU-s per GB steady against 0.98-1.45 by reads (AMD EPYC
	 * family 26, alternating pairs; 1,000 downloads 1.27-2.34 against
	 * 1.07-1.48). A fast one read too: AES-GCM reading the pages through the
	 * mapping cost more than the read's copy (one 1 GiB download, five
	 * alternating triples: 0.52 CPU-s per GB by reads, 0.69 mapped). */
	if (s->wire.sealing && !m->met_disk)
		return false;
	if (!map_window(s, f, m, off, len))
		return false;
	const char *src = m->base + (off - m->off);
	for (int i = 0; i < n; i++) {
		sock_out_map(s, holes[i].iov_base, src, holes[i].iov_len);
		src += holes[i].iov_len;
	}
	return true;
}

bool sock_batch_map(struct sock *s, const struct sock_file *f, struct sock_map *m,
		    uint64_t off, const struct iovec *holes, int n)
{
	/* Room under the kernel's TLS, plain TCP and ktlsd's sealer, not
	 * OpenSSL's records (sock_out_map_room). */
	return s->batch_open && map_holes(s, sock_out_map_room(s), f, m, off, holes, n);
}

bool sock_body_map(struct sock *s, const struct sock_file *f, struct sock_map *m, char *at,
		   uint64_t off, size_t len)
{
	const struct iovec hole = {at, len};

	return !s->batch_open && map_holes(s, sock_out_seal_map_room(s), f, m, off, &hole, 1);
}
