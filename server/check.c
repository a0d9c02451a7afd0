#include "server/check.h"

#include <string.h>
#include <sys/utsname.h>

#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include "ktls/ktls.h"
#include "server/core/ring.h"
#include "server/core/rxring.h"
#include "server/net/sock.h"

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

int check_report(const struct config *cfg, FILE *out)
{
	struct ktls_support k;
	struct ring_features f;
	struct io_uring ring;
	struct utsname u;
	char feats[256];
	bool ring_ok;

	uname(&u);
	ktls_probe(&k);
	ring_ok = ring_init(&ring, 8, &f) == 0;
	if (ring_ok) {
		struct rxring rx;
		f.buf_ring = f.op_recv && rxring_init(&rx, &ring) == 0;
		io_uring_queue_exit(&ring);
		if (f.buf_ring)
			rxring_free(&rx);
	}

	fprintf(out, "kernel: %s %s %s\n", u.sysname, u.release, u.machine);
	if (k.ulp)
		fprintf(out, "kernel TLS: yes (the 'tls' TCP ULP attaches)\n");
	else
		fprintf(out, "kernel TLS: no (attaching the 'tls' TCP ULP: %s; kernel built without "
			     "CONFIG_TLS, or tls.ko not loadable)\n",
			strerror(k.ulp_errno));
	for (int v = 0; v < 2; v++) {
		fprintf(out, "  TLS %s transmit offload:", v ? "1.3" : "1.2");
		for (int i = 0; i < 3; i++)
			fprintf(out, " %s=%s", ktls_cipher_names[i], yes(k.tx[v][i]));
		fputc('\n', out);
	}
	fprintf(out, "  receive offload: not used by design (requests are small; OpenSSL 3.0 "
		     "offloads RX for TLS 1.2 only)\n");
	fprintf(out, "OpenSSL: %s; kTLS support compiled in: %s\n", OpenSSL_version(OPENSSL_VERSION),
		yes(k.openssl));
	if (ring_ok) {
		ring_features_describe(&f, feats, sizeof(feats));
		fprintf(out, "%s\n", feats);
	} else {
		fprintf(out, "io_uring: unavailable (ktlsd cannot run here)\n");
	}

	bool ktls = cfg->ktls != CONFIG_OFF && k.ulp && k.openssl;
	bool splice = cfg->sendfile != CONFIG_OFF && ring_ok && f.splice;
	const char *word[] = {"auto", "on", "off"};
	char auto_body[64];
	snprintf(auto_body, sizeof(auto_body), "splice (bodies under %u KiB: copy)",
		 SOCK_ZERO_COPY_MIN / 1024);
	const char *ktls_body = !splice ? "copy" : cfg->sendfile == CONFIG_ON ? "splice" : auto_body;
	fprintf(out, "with --ktls=%s --sendfile=%s:\n", word[cfg->ktls], word[cfg->sendfile]);
	if (cfg->ktls == CONFIG_ON && !ktls)
		fprintf(out, "  ktlsd would refuse to start (--ktls on without kernel TLS)\n");
	else if (ktls)
		fprintf(out, "  HTTPS: ktls=tx body=%s where the negotiated cipher can be offloaded "
			     "(see above), else ktls=off body=copy\n",
			ktls_body);
	else if (cfg->tls_records == CONFIG_RECORDS_KTLSD && k.openssl)
		fprintf(out, "  HTTPS: ktls=off body=copy (ktlsd seals records in user space: "
			     "--tls-records ktlsd)\n");
	else
		fprintf(out, "  HTTPS: ktls=off body=copy (OpenSSL encrypts in user space)\n");
	fprintf(out, "  plain HTTP: body=%s\n",
		splice && cfg->sendfile == CONFIG_ON ? "splice" : "copy");
	return 0;
}
