/*
 * The post-quantum schemes OpenSSL 3.5 added, through the EVP API: ML-KEM-512/768/1024
 * (FIPS 203), ML-DSA-44/65/87 (FIPS 204) and SLH-DSA (FIPS 205), each chosen by its
 * OpenSSL name, which is the catalogue's ("ML-KEM-768", "SLH-DSA-SHA2-128f").
 *
 * Every random input of an operation comes from the caller, so that the harness draws it
 * as it does for the other providers and the published known answers can be reproduced:
 *
 *   ML-KEM key pair    the 64-byte seed d ‖ z            OSSL_PKEY_PARAM_ML_KEM_SEED
 *   ML-KEM encaps      the 32-byte message m             OSSL_KEM_PARAM_IKME
 *   ML-DSA key pair    the 32-byte seed ξ                OSSL_PKEY_PARAM_ML_DSA_SEED
 *   ML-DSA signing     the 32-byte rnd (hedged)          OSSL_SIGNATURE_PARAM_TEST_ENTROPY
 *   SLH-DSA key pair   SK.seed ‖ SK.prf ‖ PK.seed (3n)   OSSL_PKEY_PARAM_SLH_DSA_SEED
 *   SLH-DSA signing    the n-byte opt_rand (hedged)      OSSL_SIGNATURE_PARAM_TEST_ENTROPY
 *
 * (OpenSSL 3.5 and 4.0 read an SLH-DSA signature's opt_rand from TEST_ENTROPY; the
 * "additional-random" name in core_names.h is not read by their SLH-DSA.)
 *
 * Keys travel as the raw encodings the other providers share: the encoded public key and
 * the FIPS expanded secret key (ML-KEM's dk, ML-DSA's skEncode, SLH-DSA's SK.seed ‖ SK.prf
 * ‖ PK.seed ‖ PK.root), read and written as OSSL_PKEY_PARAM_PUB_KEY and _PRIV_KEY.
 *
 * Each operation runs as OpenSSL's TLS 1.3 code runs it (ssl/s3_lib.c for the KEM,
 * ssl/statem/statem_lib.c for CertificateVerify): a new EVP_PKEY_CTX (EVP_MD_CTX) on the
 * prepared key, init, one call, the context freed. Signatures are pure (no pre-hash), so
 * EVP_DigestSignInit_ex takes no digest.
 *
 * Compiled against headers older than 3.5 (Debian's 3.0), every function is a stub that
 * refuses: cs_pq_available says 0 and the Rust side lists none of these subjects.
 *
 * Functions return 1 on success and 0 on failure (pointers: NULL), cs_pq_verify also -1
 * when the verification could not be set up; nothing here aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

/* What cs_pq_available checks for, as the Rust side numbers it. */
enum { CS_PQ_KEM = 0, CS_PQ_SIG = 1 };

/* Bytes of ML-KEM's shared secret and encapsulation message m (FIPS 203). */
#define PQ_SS 32
#define PQ_M 32
/* The longest context string of FIPS 204 and 205. */
#define PQ_CTX_MAX 255

#if OPENSSL_VERSION_NUMBER >= 0x30500000L

/* Whether this libcrypto has `name`'s key management and its operation (a KEM or a
 * signature), fetched from the default library context as the operations fetch them. */
int cs_pq_available(const char *name, int kind) {
    EVP_KEYMGMT *km = EVP_KEYMGMT_fetch(NULL, name, NULL);
    int ok = km != NULL;
    if (ok && kind == CS_PQ_KEM) {
        EVP_KEM *kem = EVP_KEM_fetch(NULL, name, NULL);
        ok = kem != NULL;
        EVP_KEM_free(kem);
    } else if (ok && kind == CS_PQ_SIG) {
        EVP_SIGNATURE *sig = EVP_SIGNATURE_fetch(NULL, name, NULL);
        ok = sig != NULL;
        EVP_SIGNATURE_free(sig);
    } else {
        ok = 0;
    }
    EVP_KEYMGMT_free(km);
    ERR_clear_error();
    return ok;
}

/* The key generation parameter that takes `name`'s seed. */
static const char *seed_param(const char *name) {
    if (strncmp(name, "ML-KEM-", 7) == 0)
        return OSSL_PKEY_PARAM_ML_KEM_SEED;
    if (strncmp(name, "ML-DSA-", 7) == 0)
        return OSSL_PKEY_PARAM_ML_DSA_SEED;
    if (strncmp(name, "SLH-DSA-", 8) == 0)
        return OSSL_PKEY_PARAM_SLH_DSA_SEED;
    return NULL;
}

/* Writes the octet-string parameter `param` of pkey into out, which must be exactly its
 * length. */
static int export_exact(const EVP_PKEY *pkey, const char *param, uint8_t *out, size_t len) {
    size_t n = 0;
    return EVP_PKEY_get_octet_string_param(pkey, param, out, len, &n) > 0 && n == len;
}

/*
 * A key pair of `name` generated from `seed` (the whole input of the standard's key
 * generation, see the table above), written into pk and sk, which must be exactly the
 * public key's and the expanded secret key's lengths.
 */
int cs_pq_keypair(const char *name, const uint8_t *seed, size_t seed_len, uint8_t *pk, size_t pk_len, uint8_t *sk,
                  size_t sk_len) {
    const char *param = seed_param(name);
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = param == NULL ? NULL : EVP_PKEY_CTX_new_from_name(NULL, name, NULL);
    OSSL_PARAM params[] = {
        OSSL_PARAM_octet_string(param == NULL ? "" : param, (void *)seed, seed_len),
        OSSL_PARAM_END,
    };
    int ok = ctx != NULL && EVP_PKEY_keygen_init(ctx) > 0 && EVP_PKEY_CTX_set_params(ctx, params) > 0 &&
             EVP_PKEY_generate(ctx, &pkey) > 0 && export_exact(pkey, OSSL_PKEY_PARAM_PUB_KEY, pk, pk_len) &&
             export_exact(pkey, OSSL_PKEY_PARAM_PRIV_KEY, sk, sk_len);
    EVP_PKEY_free(pkey);
    EVP_PKEY_CTX_free(ctx);
    if (!ok)
        ERR_clear_error();
    return ok;
}

/*
 * The secret key `sk` of `name` (the expanded encoding) as an EVP_PKEY, with its public
 * key; NULL if OpenSSL refuses it. OpenSSL checks on import what RustCrypto checks and
 * more: ML-KEM that dk holds H(ek) of its ek, and (by default) an encapsulation and
 * decapsulation with it; ML-DSA that s1 and s2 are in range and that tr is H(pk) of the
 * public key recomputed from the secret key; SLH-DSA nothing beyond the length.
 */
void *cs_pq_private(const char *name, const uint8_t *sk, size_t len) {
    EVP_PKEY *pkey = EVP_PKEY_new_raw_private_key_ex(NULL, name, NULL, sk, len);
    if (pkey == NULL)
        ERR_clear_error();
    return pkey;
}

/* The encoded public key `pk` of `name` as an EVP_PKEY; NULL if refused (ML-KEM: the
 * modulus check of FIPS 203 §7.2 included). */
void *cs_pq_public(const char *name, const uint8_t *pk, size_t len) {
    EVP_PKEY *pkey = EVP_PKEY_new_raw_public_key_ex(NULL, name, NULL, pk, len);
    if (pkey == NULL)
        ERR_clear_error();
    return pkey;
}

/* ML-KEM encapsulation to a public key with the message m given: ct (exactly ct_len
 * bytes) and the 32-byte shared secret. */
int cs_pq_encaps(void *pkey, const uint8_t m[PQ_M], uint8_t *ct, size_t ct_len, uint8_t ss[PQ_SS]) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    size_t nc = ct_len, ns = PQ_SS;
    OSSL_PARAM params[] = {
        OSSL_PARAM_octet_string(OSSL_KEM_PARAM_IKME, (void *)m, PQ_M),
        OSSL_PARAM_END,
    };
    int ok = ctx != NULL && EVP_PKEY_encapsulate_init(ctx, params) > 0 &&
             EVP_PKEY_encapsulate(ctx, ct, &nc, ss, &ns) > 0 && nc == ct_len && ns == PQ_SS;
    EVP_PKEY_CTX_free(ctx);
    if (!ok)
        ERR_clear_error();
    return ok;
}

/* ML-KEM decapsulation of ct (of any length: OpenSSL refuses a wrong one) with a prepared
 * secret key into the 32-byte shared secret. A ciphertext of the right length that fails
 * FIPS 203's re-encryption check gives the implicit-rejection secret, not a failure. */
int cs_pq_decaps(void *pkey, const uint8_t *ct, size_t ct_len, uint8_t ss[PQ_SS]) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    size_t ns = PQ_SS;
    int ok = ctx != NULL && EVP_PKEY_decapsulate_init(ctx, NULL) > 0 &&
             EVP_PKEY_decapsulate(ctx, ss, &ns, ct, ct_len) > 0 && ns == PQ_SS;
    EVP_PKEY_CTX_free(ctx);
    if (!ok)
        ERR_clear_error();
    return ok;
}

/* The signature parameters: the context string when there is one, the signing randomness
 * when given (rnd_len > 0). */
static void sig_params(OSSL_PARAM params[3], const uint8_t *ctx, size_t ctx_len, const uint8_t *rnd, size_t rnd_len) {
    size_t i = 0;
    if (ctx_len > 0)
        params[i++] = OSSL_PARAM_construct_octet_string(OSSL_SIGNATURE_PARAM_CONTEXT_STRING, (void *)ctx, ctx_len);
    if (rnd_len > 0)
        params[i++] = OSSL_PARAM_construct_octet_string(OSSL_SIGNATURE_PARAM_TEST_ENTROPY, (void *)rnd, rnd_len);
    params[i] = OSSL_PARAM_construct_end();
}

/*
 * Signs msg (pure ML-DSA or SLH-DSA) under the context string ctx (at most 255 bytes) with
 * a prepared secret key, the signing randomness rnd given (ML-DSA: 32 bytes; SLH-DSA: n
 * bytes), into sig, which must be exactly the signature's length.
 */
int cs_pq_sign(void *pkey, const uint8_t *msg, size_t msg_len, const uint8_t *ctx, size_t ctx_len, const uint8_t *rnd,
               size_t rnd_len, uint8_t *sig, size_t sig_len) {
    EVP_MD_CTX *mctx = ctx_len <= PQ_CTX_MAX && rnd_len > 0 ? EVP_MD_CTX_new() : NULL;
    OSSL_PARAM params[3];
    size_t out = sig_len;
    int ok;
    sig_params(params, ctx, ctx_len, rnd, rnd_len);
    ok = mctx != NULL && EVP_DigestSignInit_ex(mctx, NULL, NULL, NULL, NULL, pkey, params) > 0 &&
         EVP_DigestSign(mctx, sig, &out, msg, msg_len) > 0 && out == sig_len;
    EVP_MD_CTX_free(mctx);
    if (!ok)
        ERR_clear_error();
    return ok;
}

/*
 * Verifies sig over msg under the context string ctx with a prepared public key: 1 valid,
 * 0 rejected (a malformed signature or one of the wrong length included), -1 when the
 * verification could not be set up (a context over 255 bytes among them).
 */
int cs_pq_verify(void *pkey, const uint8_t *msg, size_t msg_len, const uint8_t *ctx, size_t ctx_len,
                 const uint8_t *sig, size_t sig_len) {
    EVP_MD_CTX *mctx = ctx_len <= PQ_CTX_MAX ? EVP_MD_CTX_new() : NULL;
    OSSL_PARAM params[3];
    int r = -1;
    sig_params(params, ctx, ctx_len, NULL, 0);
    if (mctx != NULL && EVP_DigestVerifyInit_ex(mctx, NULL, NULL, NULL, NULL, pkey, params) > 0)
        r = EVP_DigestVerify(mctx, sig, sig_len, msg, msg_len) == 1 ? 1 : 0;
    EVP_MD_CTX_free(mctx);
    /* A rejection leaves errors on the thread's queue: cleared, so that none pile up. */
    if (r != 1)
        ERR_clear_error();
    return r;
}

#else /* OpenSSL before 3.5: none of these schemes; every function refuses. */

int cs_pq_available(const char *name, int kind) {
    (void)name;
    (void)kind;
    return 0;
}

int cs_pq_keypair(const char *name, const uint8_t *seed, size_t seed_len, uint8_t *pk, size_t pk_len, uint8_t *sk,
                  size_t sk_len) {
    (void)name;
    (void)seed;
    (void)seed_len;
    (void)pk;
    (void)pk_len;
    (void)sk;
    (void)sk_len;
    return 0;
}

void *cs_pq_private(const char *name, const uint8_t *sk, size_t len) {
    (void)name;
    (void)sk;
    (void)len;
    return NULL;
}

void *cs_pq_public(const char *name, const uint8_t *pk, size_t len) {
    (void)name;
    (void)pk;
    (void)len;
    return NULL;
}

int cs_pq_encaps(void *pkey, const uint8_t m[PQ_M], uint8_t *ct, size_t ct_len, uint8_t ss[PQ_SS]) {
    (void)pkey;
    (void)m;
    (void)ct;
    (void)ct_len;
    (void)ss;
    return 0;
}

int cs_pq_decaps(void *pkey, const uint8_t *ct, size_t ct_len, uint8_t ss[PQ_SS]) {
    (void)pkey;
    (void)ct;
    (void)ct_len;
    (void)ss;
    return 0;
}

int cs_pq_sign(void *pkey, const uint8_t *msg, size_t msg_len, const uint8_t *ctx, size_t ctx_len, const uint8_t *rnd,
               size_t rnd_len, uint8_t *sig, size_t sig_len) {
    (void)pkey;
    (void)msg;
    (void)msg_len;
    (void)ctx;
    (void)ctx_len;
    (void)rnd;
    (void)rnd_len;
    (void)sig;
    (void)sig_len;
    return 0;
}

int cs_pq_verify(void *pkey, const uint8_t *msg, size_t msg_len, const uint8_t *ctx, size_t ctx_len,
                 const uint8_t *sig, size_t sig_len) {
    (void)pkey;
    (void)msg;
    (void)msg_len;
    (void)ctx;
    (void)ctx_len;
    (void)sig;
    (void)sig_len;
    return -1;
}

#endif

/* Frees a key of cs_pq_private or cs_pq_public (NULL allowed). */
void cs_pq_free(void *pkey) {
    EVP_PKEY_free(pkey);
}
