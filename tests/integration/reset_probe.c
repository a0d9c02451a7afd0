/* What a sender learns about a client that reset the connection, over plain
 * TCP and with the kernel's TLS (tests/uml/guest-tests, section 6):
 *
 *   reset_probe FILE
 *
 * For each of "tcp" and "ktls": a loopback connection whose receiver reads
 * nothing; the sender (nonblocking, kTLS TX with a dummy AES-128-GCM key for
 * "ktls") sendfiles FILE until the socket is full; the receiver closes with
 * unread data, which resets the connection; the sender reads SO_ERROR once
 * (as any recv would: both clear the socket's error), then polls and
 * sendfiles up to 1,000 times, or until 3 fail. It prints one line each:
 *
 *   tcp: revents=0x.. accepted=BYTES calls=N failed=N first_error=TEXT
 *
 * revents is what poll reported for POLLOUT after the reset (POLLHUP is
 * 0x10, POLLERR 0x8); accepted counts what sendfile took after it. Exit
 * status 0 when both ran, 2 when one could not be set up (no kTLS here). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/tls.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SOL_TLS
#define SOL_TLS 282
#endif

static int probe(int file, int ktls)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int rcvbuf = 8192;
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	int cfd = socket(AF_INET, SOCK_STREAM, 0);

	if (lfd < 0 || cfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(lfd, 1) < 0 || getsockname(lfd, (struct sockaddr *)&a, &alen) < 0 ||
	    setsockopt(cfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0 ||
	    connect(cfd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("reset_probe: loopback connection");
		return -1;
	}
	int sfd = accept(lfd, NULL, NULL);
	if (sfd < 0) {
		perror("reset_probe: accept");
		return -1;
	}
	if (ktls) {
		struct tls12_crypto_info_aes_gcm_128 ci = {0};
		ci.info.version = TLS_1_3_VERSION;
		ci.info.cipher_type = TLS_CIPHER_AES_GCM_128;
		if (setsockopt(sfd, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) < 0 ||
		    setsockopt(sfd, SOL_TLS, TLS_TX, &ci, sizeof(ci)) < 0) {
			printf("ktls: not available: %s\n", strerror(errno));
			return -1;
		}
	}
	fcntl(sfd, F_SETFL, O_NONBLOCK);
	off_t off = 0;
	while (sendfile(sfd, file, &off, 65536) > 0)
		;
	close(cfd); /* unread data: the receiver resets */
	usleep(100 * 1000);
	int err = 0;
	socklen_t elen = sizeof(err);
	getsockopt(sfd, SOL_SOCKET, SO_ERROR, &err, &elen);

	long long accepted = 0;
	int calls = 0, failed = 0, first = 0;
	short revents = 0;
	for (int i = 0; i < 1000 && failed < 3; i++) {
		struct pollfd p = {sfd, POLLOUT, 0};
		poll(&p, 1, 1000);
		if (i == 0)
			revents = p.revents;
		ssize_t r = sendfile(sfd, file, &off, 65536);
		calls++;
		if (r > 0) {
			accepted += r;
		} else if (r == 0) {
			off = 0; /* the file's end: from the start again */
		} else if (errno != EAGAIN) {
			if (!failed++)
				first = errno;
		}
	}
	printf("%s: revents=%#x accepted=%lld calls=%d failed=%d first_error=%s\n",
	       ktls ? "ktls" : "tcp", (unsigned)revents, accepted, calls, failed,
	       failed ? strerror(first) : "none");
	close(sfd);
	close(lfd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: reset_probe FILE\n");
		return 2;
	}
	int file = open(argv[1], O_RDONLY);
	if (file < 0) {
		perror(argv[1]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	int rc = probe(file, 0) < 0 ? 2 : 0;
	if (probe(file, 1) < 0)
		rc = 2;
	return rc;
}
