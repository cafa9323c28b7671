/*
 * worker/hook_rules.c — what the HTTP handler code asks of the webhook
 * rules (docs/operations.md, "Webhooks"): whether a delivery's URL is
 * one this worker's configuration names, the signature a delivery
 * carries, and releasing the rules.
 *
 * Layer: the worker, below curl.c and setup.c, which call it; it calls
 * nothing of the worker's (hooks.c, which sets the rules up and runs the
 * leader's chore, stands above both). The secret is read from
 * SKED_HOOK_SECRET when a delivery is signed, never copied, logged or
 * put in a message.
 */
#include "worker/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hooks.h"

#ifdef SKED_HAVE_CURL
#include <openssl/evp.h>
#include <openssl/params.h>
#endif

void
sked__wk_hooks_free(sked_worker *w)
{
	for (size_t i = 0; i < w->nhooks; i++) {
		free(w->hooks[i].kind);
		free(w->hooks[i].queue);
		free(w->hooks[i].url);
	}
	free(w->hooks);
	w->hooks = NULL;
	w->nhooks = 0;
}

/* 1 when url is one of this worker's on_end URLs: a delivery goes only
 * where the configuration says, whoever enqueued it */
int
sked__wk_hook_url_ok(const sked_worker *w, const char *url)
{
	for (size_t i = 0; i < w->nhooks; i++)
		if (strcmp(w->hooks[i].url, url) == 0)
			return 1;
	return 0;
}

#ifdef SKED_HAVE_CURL
int
sked__wk_hook_sign(const char *body, size_t len, long long t, char *out,
                   size_t out_sz)
{
	const char *secret = getenv("SKED_HOOK_SECRET");
	if (!secret || !*secret || out_sz < 2 * EVP_MAX_MD_SIZE + 1)
		return SKED_EINVAL;
	char ts[32];
	int tl = snprintf(ts, sizeof ts, "%lld.", t);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	/* HMAC-SHA256 over "t." followed by the body */
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[2] = {
	        OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
	        OSSL_PARAM_construct_end()};
	size_t got = 0;
	int ok = ctx &&
	         EVP_MAC_init(ctx, (const unsigned char *)secret,
	                      strlen(secret), params) == 1 &&
	         EVP_MAC_update(ctx, (const unsigned char *)ts, (size_t)tl) ==
	                 1 &&
	         EVP_MAC_update(ctx, (const unsigned char *)body, len) == 1 &&
	         EVP_MAC_final(ctx, md, &got, sizeof md) == 1;
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	if (!ok)
		return SKED_EIO;
	mdlen = (unsigned int)got;
	for (unsigned int i = 0; i < mdlen; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[2 * mdlen] = '\0';
	return SKED_OK;
}
#endif
