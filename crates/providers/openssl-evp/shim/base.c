/*
 * What the Rust side needs from libcrypto besides key exchange and signatures, through the
 * EVP API only, so one source serves every OpenSSL version it is compiled against: the
 * library's identity, message digests, block ciphers (ECB, no padding), AEADs, and the
 * X25519 and P-256 keys the key exchanges start from.
 *
 * CS_PROVIDER (the provider's canonical name) and CS_BUILD (how this libcrypto was
 * obtained) are set by the crate that compiles this file.
 *
 * Functions return 1 on success and 0 on failure (pointers: NULL); nothing here aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

#ifndef CS_PROVIDER
#error "CS_PROVIDER must name the provider"
#endif
#ifndef CS_BUILD
#define CS_BUILD "unknown build"
#endif

const char *cs_provider(void) { return CS_PROVIDER; }
/* Why this worker has no libcrypto of its own version (its vendored build failed), or NULL. */
const char *cs_unbuilt(void) {
#ifdef CS_UNBUILT
    return CS_UNBUILT;
#else
    return NULL;
#endif
}
const char *cs_build(void) { return CS_BUILD; }
/* The library's own version string ("OpenSSL 3.5.5 27 Jan 2026"), at run time. */
const char *cs_version(void) { return OpenSSL_version(OPENSSL_VERSION); }
const char *cs_built_on(void) { return OpenSSL_version(OPENSSL_BUILT_ON); }
/* The version of the headers this file was compiled with, as 0xMNN00PP0L. */
unsigned long cs_header_version(void) { return (unsigned long)OPENSSL_VERSION_NUMBER; }

/* ---- Message digests ---- */

/* A digest context for the EVP name `name`, initialised; NULL if this library lacks it. */
void *cs_md_new(const char *name) {
    EVP_MD *md = EVP_MD_fetch(NULL, name, NULL);
    EVP_MD_CTX *ctx = md == NULL ? NULL : EVP_MD_CTX_new();
    if (ctx != NULL && EVP_DigestInit_ex(ctx, md, NULL) <= 0) {
        EVP_MD_CTX_free(ctx);
        ctx = NULL;
    }
    EVP_MD_free(md); /* the context keeps its own reference */
    return ctx;
}

int cs_md_update(void *ctx, const uint8_t *data, size_t len) { return EVP_DigestUpdate(ctx, data, len) > 0; }

/* Writes the digest (len bytes: the digest's size) and frees nothing. */
int cs_md_final(void *ctx, uint8_t *out, size_t len) {
    unsigned int n = 0;
    if ((size_t)EVP_MD_CTX_get_size(ctx) != len) {
        return 0;
    }
    return EVP_DigestFinal_ex(ctx, out, &n) > 0 && n == len;
}

int cs_md_final_xof(void *ctx, uint8_t *out, size_t len) { return EVP_DigestFinalXOF(ctx, out, len) > 0; }

void *cs_md_copy(const void *ctx) {
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (c != NULL && EVP_MD_CTX_copy_ex(c, ctx) <= 0) {
        EVP_MD_CTX_free(c);
        c = NULL;
    }
    return c;
}

void cs_md_free(void *ctx) { EVP_MD_CTX_free(ctx); }

/* One-shot digest of `name` (SHA-256d's outer hash). */
int cs_md_oneshot(const char *name, const uint8_t *data, size_t len, uint8_t *out, size_t out_len) {
    void *ctx = cs_md_new(name);
    int ok = ctx != NULL && cs_md_update(ctx, data, len) && cs_md_final(ctx, out, out_len);
    cs_md_free(ctx);
    return ok;
}

/* ---- Ciphers: block ciphers in ECB and AEADs ---- */

/* Key length of the cipher `name`, 0 if this library lacks it. */
size_t cs_cipher_key_len(const char *name) {
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, NULL);
    size_t n = c == NULL ? 0 : (size_t)EVP_CIPHER_get_key_length(c);
    EVP_CIPHER_free(c);
    return n;
}

/* A context of cipher `name` keyed with `key` (its full length), for encryption (enc = 1) or
 * decryption (enc = 0), with padding off; NULL on failure. */
void *cs_cipher_new(const char *name, const uint8_t *key, size_t key_len, int enc) {
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, NULL);
    EVP_CIPHER_CTX *ctx = c == NULL ? NULL : EVP_CIPHER_CTX_new();
    int ok = ctx != NULL && (size_t)EVP_CIPHER_get_key_length(c) == key_len &&
             EVP_CipherInit_ex2(ctx, c, key, NULL, enc, NULL) > 0 && EVP_CIPHER_CTX_set_padding(ctx, 0) > 0;
    EVP_CIPHER_free(c);
    if (!ok) {
        EVP_CIPHER_CTX_free(ctx);
        ctx = NULL;
    }
    return ctx;
}

void cs_cipher_free(void *ctx) { EVP_CIPHER_CTX_free(ctx); }

/* ECB over whole blocks, in place (EVP allows in == out for ECB). */
int cs_ecb(void *ctx, uint8_t *data, size_t len) {
    int n = 0;
    return len <= INT32_MAX && EVP_CipherUpdate(ctx, data, &n, data, (int)len) > 0 && (size_t)n == len;
}

/* AEAD encryption with the context's key: a new 12-byte nonce, the AAD, `data` encrypted in
 * place, the 16-byte tag written. */
int cs_aead_seal(void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len, uint8_t *data, size_t len,
                 uint8_t tag[16]) {
    int n = 0, fin = 0;
    uint8_t none[16];
    if (aad_len > INT32_MAX || len > INT32_MAX || EVP_EncryptInit_ex2(ctx, NULL, NULL, nonce, NULL) <= 0) {
        return 0;
    }
    if (aad_len > 0 && EVP_EncryptUpdate(ctx, NULL, &n, aad, (int)aad_len) <= 0) {
        return 0;
    }
    n = 0;
    if (len > 0 && EVP_EncryptUpdate(ctx, data, &n, data, (int)len) <= 0) {
        return 0;
    }
    if (EVP_EncryptFinal_ex(ctx, none, &fin) <= 0 || (size_t)(n + fin) != len) {
        return 0;
    }
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0;
}

/* AEAD decryption: 1 if the tag matched (plaintext in out), 0 if it did not, -1 on any
 * other failure. */
int cs_aead_open(void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len, const uint8_t *ct, size_t len,
                 const uint8_t tag[16], uint8_t *out) {
    int n = 0, fin = 0;
    uint8_t none[16];
    if (aad_len > INT32_MAX || len > INT32_MAX || EVP_DecryptInit_ex2(ctx, NULL, NULL, nonce, NULL) <= 0) {
        return -1;
    }
    if (aad_len > 0 && EVP_DecryptUpdate(ctx, NULL, &n, aad, (int)aad_len) <= 0) {
        return -1;
    }
    n = 0;
    if (len > 0 && EVP_DecryptUpdate(ctx, out, &n, ct, (int)len) <= 0) {
        return -1;
    }
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, (void *)tag) <= 0) {
        return -1;
    }
    /* EVP_DecryptFinal_ex fails when the tag does not match. */
    if (EVP_DecryptFinal_ex(ctx, none, &fin) <= 0) {
        return 0;
    }
    return (size_t)(n + fin) == len ? 1 : -1;
}

/* ---- The own keys of X25519 and P-256 ---- */

/* A new X25519 key: 32-byte public and private values. */
int cs_x25519_keypair(uint8_t pk[32], uint8_t sk[32]) {
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
    size_t np = 32, ns = 32;
    int ok = k != NULL && EVP_PKEY_get_raw_public_key(k, pk, &np) > 0 && np == 32 &&
             EVP_PKEY_get_raw_private_key(k, sk, &ns) > 0 && ns == 32;
    EVP_PKEY_free(k);
    return ok;
}

/* The X25519 key of a 32-byte private value. */
void *cs_x25519_prepare(const uint8_t sk[32]) {
    return EVP_PKEY_new_raw_private_key_ex(NULL, "X25519", NULL, sk, 32);
}

/* A new P-256 key: the uncompressed point (65 bytes) and the scalar (32 bytes, big-endian). */
int cs_p256_keypair(uint8_t pk[65], uint8_t sk[32]) {
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    BIGNUM *d = NULL;
    size_t n = 0;
    int ok = k != NULL &&
             EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pk, 65, &n) > 0 && n == 65 &&
             EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_PRIV_KEY, &d) > 0 && BN_bn2binpad(d, sk, 32) == 32;
    BN_clear_free(d);
    EVP_PKEY_free(k);
    return ok;
}
