/* A worker's statistics (types only): the dimensions they are counted by,
 * the counters (arrays indexed by these dimensions, which server/status/metrics.c
 * names for --status-listen) and the snapshot a worker publishes (stats.h).
 * The transport, the protocols and the status listener count and read
 * them without knowing the worker. */
#ifndef KTLSD_SERVER_STATS_T_H
#define KTLSD_SERVER_STATS_T_H

#include <stdbool.h>
#include <stdint.h>

/* Which protocol answered a request. */
enum stat_proto { STAT_HTTP1, STAT_HTTP2, STAT_PROTOS };

/* Status classes 1xx to 5xx. */
#define STAT_CLASSES 5

/* Who encrypts what a connection sends: the kernel (kTLS), OpenSSL in
 * user space, or nobody (plain HTTP). */
enum stat_tls { STAT_TLS_KERNEL, STAT_TLS_USER, STAT_TLS_NONE, STAT_TLS_PATHS };

/* How bytes reached the socket: a send from user memory (heads, copied
 * bodies, HTTP/2 batches, records OpenSSL sealed), or a splice from the
 * page cache through a pipe (no copy). */
enum stat_via { STAT_VIA_SEND, STAT_VIA_SPLICE, STAT_VIAS };

enum stat_handshake { STAT_HS_FULL, STAT_HS_RESUMED, STAT_HS_FAILED, STAT_HANDSHAKES };

/* Which deadline passed (the --*-timeout options; linger: a closing
 * connection whose peer did not close within the 2 s we wait for it). */
enum stat_timeout {
	STAT_TO_HANDSHAKE,
	STAT_TO_HEADER,
	STAT_TO_IDLE,
	STAT_TO_SEND,
	STAT_TO_LINGER,
	STAT_TIMEOUTS,
};

/* A limit that refused a client something. */
enum stat_limit {
	STAT_LIMIT_CONNECTIONS,      /* --max-connections: accepted and closed at once */
	STAT_LIMIT_FDS,              /* accept failed: no file descriptor left (EMFILE, ENFILE) */
	STAT_LIMIT_HEADER,           /* --max-header-size or --max-headers: 431 */
	STAT_LIMIT_URI,              /* --max-uri: 414 */
	STAT_LIMIT_H2_HEADER_LIST,   /* --h2-max-header-list: the stream is reset */
	STAT_LIMIT_H2_RESETS,        /* --h2-reset-rate: GOAWAY */
	STAT_LIMIT_H2_CONTINUATIONS, /* --h2-max-continuations: the connection is dropped */
	STAT_LIMIT_H2_FLOOD,       /* nghttp2's flood guards (SETTINGS, PING, ...): dropped */
	STAT_LIMIT_CONN,           /* --limit-conn: 429, then closed (once per connection) */
	STAT_LIMIT_PROXY_HEADER,   /* proxy-protocol listener: no valid PROXY header in time */
	STAT_LIMIT_REQ,            /* --limit-req: a request answered 429 */
	STAT_LIMITS,
};

/* What an open connection is doing, as nginx's stub_status sees it. */
enum stat_conn {
	STAT_CONN_HANDSHAKE, /* the TLS handshake */
	STAT_CONN_READING,   /* a request head (HTTP/2: a header block) has begun to arrive */
	STAT_CONN_WRITING,   /* a response is owed */
	STAT_CONN_IDLE,      /* keep-alive, waiting for the next request */
	STAT_CONN_CLOSING,   /* answered, lingering or waiting for the ring to let go */
	STAT_CONN_STATES,
};

/* Sites, by a slot each that keeps its number for the life of the process
 * (stats.h, stats_site_slot): 0 is the top level's site and requests that
 * named none; a [site NAME] takes the next free slot the first time a
 * configuration names it; the last slot gathers names past them (a
 * process whose reloads named more than 64 sites). */
#define STAT_SITES 66
/* The status codes counted one by one, per site (stats.h, stat_codes);
 * the rest in a last "other". */
#define STAT_CODES 25
/* The latency buckets of a site's histogram (their bounds: stats.h). */
#define STAT_LATENCY_BUCKETS 8

struct stat_site {
	uint64_t codes[STAT_CODES];              /* responses by status code */
	uint64_t body_bytes;                     /* of their bodies, sent */
	uint64_t latency[STAT_LATENCY_BUCKETS];  /* responses that took at most each bound */
	uint64_t latency_ms;                     /* their durations, summed */
};

/* A worker's counters: plain integers that only the worker writes, on its
 * request path (no atomics, no lock). Others see the copy it publishes
 * each tick (struct worker_snapshot). The arrays are indexed by the
 * dimensions above. */
struct worker_stats {
	uint64_t accepted;
	uint64_t requests[STAT_PROTOS][STAT_CLASSES];  /* answered, by protocol and status class */
	uint64_t bytes_out[STAT_VIAS][STAT_TLS_PATHS]; /* taken by the socket */
	uint64_t handshakes[STAT_HANDSHAKES];
	uint64_t ktls_tx, ktls_off;              /* connections by TLS path */
	uint64_t body_copy, body_splice;         /* responses by body path */
	uint64_t send_ops, splice_ops, read_ops, recv_ops;
	uint64_t recv_ring, recv_nobufs;         /* recvs that took a ring buffer; found it empty */
	uint64_t timeouts[STAT_TIMEOUTS];
	uint64_t limits[STAT_LIMITS];
	uint64_t conn_limit_untracked;           /* --limit-conn could not count: let in (addr_limit.h) */
	uint64_t truncated;
	uint64_t h2_mapped_bytes;                /* HTTP/2 payloads sent from mapped file pages */
	uint64_t h1_mapped_bytes;                /* HTTP/1.1 bodies sealed from mapped file pages */
	uint64_t sendfile_calls;                 /* sendfile(2) of cached file bytes (sock_sendfile) */
	uint64_t ktls_hangups;                   /* kTLS connections failed by their hang-up watch */
	uint64_t room_waits;                     /* waits for a full socket, holding no buffer (sock.h) */
	uint64_t refused_sends;                  /* sends a slow socket took less than half of (sock.h) */
	uint64_t slow_socks;                     /* connections found slow at a tick (sock_tick) */
	uint64_t h2_stalls;                      /* ticks that found an HTTP/2 connection stalled (h2_tick) */
	struct stat_site sites[STAT_SITES];      /* by site slot */
};

/* Who encrypts for a connection, from its two flags. */
static inline enum stat_tls stats_tls_path(bool tls, bool ktls_tx)
{
	return !tls ? STAT_TLS_NONE : ktls_tx ? STAT_TLS_KERNEL : STAT_TLS_USER;
}

/* What the status listener shows of a worker: its counters and gauges as
 * of its last tick. Nothing but uint64_t, so that it is published and read
 * word by word (stats.h). */
struct worker_snapshot {
	struct worker_stats stats;
	uint64_t conns[STAT_CONN_STATES];        /* open connections by what they do */
	uint64_t conns_tls[STAT_TLS_PATHS];      /* ... and by who encrypts for them */
	uint64_t open_files;                     /* of the file cache and responses */
	uint64_t file_cache_entries, file_cache_hits, file_cache_revalidations;
	uint64_t file_cache_misses, file_cache_mem_hits;
	uint64_t buffer_bytes_used, buffer_bytes_kept; /* the buffer pool (bufpool.h) */
};

#define WORKER_SNAPSHOT_WORDS (sizeof(struct worker_snapshot) / sizeof(uint64_t))

#endif
