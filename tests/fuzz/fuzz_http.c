/*
 * fuzz_http.c — a fuzz target for what sked's HTTP server reads from a
 * request itself (cli/http/http.c; libmicrohttpd parses the request line and
 * the headers): a form body (cli_http_form, percent-decoding), the
 * redirect path a POST names (cli_http_own_path), Basic credentials
 * (cli_http_basic) and a listen address (cli_http_parse_listen).
 *
 * Oracles, beyond the sanitizers: a form value fits its buffer and is
 * NUL-terminated; a value found at index i exists for every index below;
 * a path cli_http_own_path accepts starts with '/', holds no "//" and
 * only the letters, digits and "/_-" a browser cannot read as another
 * host; credentials decode to a user without ':' and nothing longer than
 * the buffer, and encoding them again gives the header back.
 *
 * Input: the first line is the Authorization header, the redirect path
 * and the listen address; the rest is the form body. Built as a libFuzzer
 * program with -DSKED_LIBFUZZER (`make fuzz`) and as a plain program
 * replaying tests/fuzz/corpus/http.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "http/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
finding(const char *what)
{
	fprintf(stderr, "finding: %s\n", what);
	abort();
}

static void
b64(const char *in, size_t n, char *out)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	                          "qrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)in[i] << 16;
		if (i + 1 < n)
			v |= (unsigned char)in[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)in[i + 2];
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? tab[v & 63] : '=';
	}
	out[o] = '\0';
}

static void
check_form(const char *body, size_t n)
{
	static const char *const names[] = {"csrf",  "back", "id",
	                                    "scope", "",     "a"};
	struct cli_http_request rq;
	char buf[16];

	memset(&rq, 0, sizeof rq);
	rq.method = "POST";
	rq.path = "/";
	rq.body = body;
	rq.body_len = n;
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		int missing = 0;
		for (int i = 0; i < 8; i++) {
			memset(buf, 'X', sizeof buf);
			const char *v = cli_http_form(&rq, names[k], i, buf,
			                              sizeof buf);
			if (!v) {
				missing = 1;
				continue;
			}
			if (missing)
				finding("a form value after a missing one");
			if (v != buf || !memchr(buf, '\0', sizeof buf))
				finding("a form value not NUL-terminated in "
				        "its "
				        "buffer");
		}
	}
}

static void
check_path(const char *p)
{
	if (!cli_http_own_path(p))
		return;
	if (p[0] != '/' || strstr(p, "//"))
		finding("an accepted path leaves the site");
	for (const char *c = p; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '/' || *c == '_' ||
		      *c == '-'))
			finding("an accepted path holds another character");
}

static void
check_basic(const char *h)
{
	char buf[64], again[128], hdr[160];
	const char *user, *pass;

	if (cli_http_basic(h, buf, sizeof buf, &user, &pass) != 0)
		return;
	if (strchr(user, ':'))
		finding("a user name with ':'");
	if (strlen(user) + 1 + strlen(pass) >= sizeof buf)
		finding("credentials longer than their buffer");
	/* encode user:pass and decode it again: the same two strings */
	char joined[128];
	snprintf(joined, sizeof joined, "%s:%s", user, pass);
	b64(joined, strlen(joined), again);
	snprintf(hdr, sizeof hdr, "Basic %s", again);
	char u2[64], p2[64];
	snprintf(u2, sizeof u2, "%s", user);
	snprintf(p2, sizeof p2, "%s", pass);
	if (cli_http_basic(hdr, buf, sizeof buf, &user, &pass) != 0 ||
	    strcmp(user, u2) != 0 || strcmp(pass, p2) != 0)
		finding("credentials do not survive encoding again");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const char *nl = memchr(s, '\n', size);
	size_t ll = nl ? (size_t)(nl - s) : size;
	char line[512];

	if (ll >= sizeof line)
		ll = sizeof line - 1;
	memcpy(line, s, ll);
	line[ll] = '\0';
	check_path(line);
	check_basic(line);
	{
		struct sockaddr_storage ss;
		unsigned alen = 0;
		int loop = 0;
		char err[256];
		/* names are not resolved here: only numeric addresses */
		if (!strpbrk(line, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
		                   "RSTUVWXYZ") &&
		    cli_http_parse_listen(line, &ss, &alen, &loop, err,
		                          sizeof err) == 0 &&
		    alen > sizeof ss)
			finding("an address longer than its storage");
	}
	if (nl) {
		size_t off = (size_t)(nl - s) + 1;
		char *body = malloc(size - off + 1);
		if (!body)
			return 0;
		memcpy(body, s + off, size - off);
		body[size - off] = '\0';
		check_form(body, size - off);
		free(body);
	}
	return 0;
}

#include "fuzz_main.h"
