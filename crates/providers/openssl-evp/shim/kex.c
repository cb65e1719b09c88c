/*
 * Key exchange through OpenSSL 3's EVP API, as OpenSSL's own TLS 1.3 code uses it. First
 * FFDHE-2048 (RFC 7919) keys, the group chosen by name ("ffdhe2048"), for which the
 * `openssl` crate has no wrapper; then the parts of an exchange for every group.
 *
 * Every function returns 1 on success and 0 on failure; nothing here aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/dh.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#define FFDHE_BYTES 256

static EVP_PKEY *generate(void) {
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
    OSSL_PARAM params[] = {
        OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)"ffdhe2048", 0),
        OSSL_PARAM_END,
    };
    if (ctx == NULL || EVP_PKEY_keygen_init(ctx) <= 0 || EVP_PKEY_CTX_set_params(ctx, params) <= 0 ||
        EVP_PKEY_generate(ctx, &pkey) <= 0) {
        pkey = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

static int export_bn(const EVP_PKEY *pkey, const char *name, uint8_t out[FFDHE_BYTES]) {
    BIGNUM *bn = NULL;
    int ok = EVP_PKEY_get_bn_param(pkey, name, &bn) > 0 && BN_bn2binpad(bn, out, FFDHE_BYTES) == FFDHE_BYTES;
    BN_free(bn);
    return ok;
}

int cs_ffdhe2048_keypair(uint8_t pk[FFDHE_BYTES], uint8_t sk[FFDHE_BYTES]) {
    EVP_PKEY *pkey = generate();
    int ok = pkey != NULL && export_bn(pkey, OSSL_PKEY_PARAM_PUB_KEY, pk) && export_bn(pkey, OSSL_PKEY_PARAM_PRIV_KEY, sk);
    EVP_PKEY_free(pkey);
    return ok;
}

int cs_ffdhe2048_params(uint8_t p[FFDHE_BYTES], uint8_t g[FFDHE_BYTES]) {
    EVP_PKEY *pkey = generate();
    int ok = pkey != NULL && export_bn(pkey, OSSL_PKEY_PARAM_FFC_P, p) && export_bn(pkey, OSSL_PKEY_PARAM_FFC_G, g);
    EVP_PKEY_free(pkey);
    return ok;
}

/* Builds an EVP_PKEY from a raw private value; the public value g^x mod p is recomputed. */
void *cs_ffdhe2048_prepare(const uint8_t sk[FFDHE_BYTES]) {
    EVP_PKEY *tmpl = generate(), *pkey = NULL;
    BIGNUM *p = NULL, *g = NULL, *x = BN_bin2bn(sk, FFDHE_BYTES, NULL), *y = BN_new();
    BN_CTX *bctx = BN_CTX_new();
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
    if (tmpl && x && y && bctx && bld && ctx && EVP_PKEY_get_bn_param(tmpl, OSSL_PKEY_PARAM_FFC_P, &p) > 0 &&
        EVP_PKEY_get_bn_param(tmpl, OSSL_PKEY_PARAM_FFC_G, &g) > 0 && BN_mod_exp(y, g, x, p, bctx) &&
        OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "ffdhe2048", 0) &&
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, x) && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PUB_KEY, y) &&
        (params = OSSL_PARAM_BLD_to_param(bld)) != NULL && EVP_PKEY_fromdata_init(ctx) > 0 &&
        EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_KEYPAIR, params) > 0) {
        /* pkey set */
    } else {
        pkey = NULL;
    }
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(ctx);
    BN_CTX_free(bctx);
    BN_free(p);
    BN_free(g);
    BN_clear_free(x);
    BN_free(y);
    EVP_PKEY_free(tmpl);
    return pkey;
}

/*
 * Key exchange in parts, for every group, as OpenSSL 3's TLS 1.3 code runs it
 * (ssl/statem/extensions_srvr.c reads the key share, ssl/s3_lib.c ssl_derive derives):
 *
 *   cs_peer_decode   the peer's key share into a key of the own key's group
 *                    (EVP_PKEY_copy_parameters, EVP_PKEY_set1_encoded_public_key)
 *   cs_peer_check    the check EVP_PKEY_derive_set_peer runs: EVP_PKEY_public_check
 *   cs_derive_ctx    a derivation context with the peer set (and checked, when asked)
 *   cs_derive        EVP_PKEY_derive on such a context: all that `openssl speed` times
 */
#include <openssl/x509.h>

void *cs_peer_decode(void *own, const uint8_t *pk, size_t len) {
    EVP_PKEY *peer = EVP_PKEY_new();
    if (peer == NULL || EVP_PKEY_copy_parameters(peer, own) <= 0 || EVP_PKEY_set1_encoded_public_key(peer, pk, len) <= 0) {
        EVP_PKEY_free(peer);
        return NULL;
    }
    return peer;
}

/* The peer's key from a DER SubjectPublicKeyInfo (d2i_PUBKEY), all bytes consumed. */
void *cs_peer_from_spki(const uint8_t *der, size_t len) {
    const unsigned char *p = der;
    EVP_PKEY *peer = d2i_PUBKEY(NULL, &p, (long)len);
    if (peer != NULL && p != der + len) {
        EVP_PKEY_free(peer);
        return NULL;
    }
    return peer;
}

int cs_peer_check(void *peer) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, peer, NULL);
    int ok = ctx != NULL && EVP_PKEY_public_check(ctx) > 0;
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

void *cs_derive_ctx(void *own, void *peer, int validate) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, own, NULL);
    int ok = ctx != NULL && EVP_PKEY_derive_init(ctx) > 0;
    /* TLS 1.3 keeps a DH secret's leading zeros (RFC 8446 §7.4.1), as ssl_derive asks. */
    if (ok && EVP_PKEY_is_a(own, "DH"))
        ok = EVP_PKEY_CTX_set_dh_pad(ctx, 1) > 0;
    ok = ok && EVP_PKEY_derive_set_peer_ex(ctx, peer, validate) > 0;
    if (!ok) {
        EVP_PKEY_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

int cs_derive(void *ctx, uint8_t *ss, size_t len) {
    size_t out = len;
    return EVP_PKEY_derive(ctx, ss, &out) > 0 && out == len;
}

void cs_derive_ctx_free(void *ctx) {
    EVP_PKEY_CTX_free(ctx);
}

void cs_pkey_free(void *pkey) {
    EVP_PKEY_free(pkey);
}
