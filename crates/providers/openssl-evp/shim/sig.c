/*
 * Signatures through OpenSSL 3's EVP API: Ed25519, ECDSA P-256 with SHA-256, RSA PKCS#1
 * v1.5 and PSS with SHA-256.
 *
 * Keys are read and written in the encodings every cryptoscope provider shares:
 *   Ed25519  the 32-byte public key; the 32-byte seed (raw keys)
 *   P-256    the SEC 1 point (written uncompressed, 65 bytes); the 32-byte big-endian scalar
 *   RSA      PKCS#1 RSAPublicKey and RSAPrivateKey DER (i2d/d2i_PublicKey, _PrivateKey,
 *            OpenSSL's "type-specific" structures for RSA)
 *
 * Signing and verifying run what OpenSSL 3's TLS code runs per CertificateVerify
 * (ssl/statem/statem_lib.c): a new EVP_MD_CTX, EVP_DigestSignInit_ex (or
 * EVP_DigestVerifyInit_ex) on the prepared EVP_PKEY with the digest by name, the PSS
 * parameters set on its EVP_PKEY_CTX, one-shot EVP_DigestSign (EVP_DigestVerify), the
 * context freed. Nothing is kept between calls but the key.
 *
 * Functions return 1 on success and 0 on failure, cs_sig_verify also -1 when the library
 * could not run; nothing here aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

/* Schemes, as the Rust side numbers them. */
enum { CS_ED25519 = 0, CS_ECDSA_P256 = 1, CS_RSA_PKCS1 = 2, CS_RSA_PSS = 3 };

#define P256_POINT 65
#define P256_SCALAR 32
#define ED25519_KEY 32
#define PSS_SALT 32

static int is_rsa(int scheme) {
    return scheme == CS_RSA_PKCS1 || scheme == CS_RSA_PSS;
}

/* Writes DER made by `i2d` into out (cap bytes); its length into *len. */
static int put_der(const EVP_PKEY *pkey, int (*i2d)(const EVP_PKEY *, unsigned char **), uint8_t *out, size_t cap,
                   size_t *len) {
    unsigned char *der = NULL;
    int n = i2d(pkey, &der);
    int ok = n > 0 && (size_t)n <= cap;
    if (ok) {
        memcpy(out, der, (size_t)n);
        *len = (size_t)n;
    }
    OPENSSL_free(der);
    return ok;
}

/*
 * A new key pair of `scheme` (RSA: of `bits`), written into pk (pk_cap bytes) and sk
 * (sk_cap bytes); the bytes written into *pk_len and *sk_len.
 */
int cs_sig_keypair(int scheme, unsigned bits, uint8_t *pk, size_t pk_cap, size_t *pk_len, uint8_t *sk, size_t sk_cap,
                   size_t *sk_len) {
    EVP_PKEY *pkey = NULL;
    BIGNUM *d = NULL;
    int ok = 0;
    switch (scheme) {
    case CS_ED25519:
        pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
        *pk_len = pk_cap;
        *sk_len = sk_cap;
        ok = pkey != NULL && pk_cap >= ED25519_KEY && sk_cap >= ED25519_KEY &&
             EVP_PKEY_get_raw_public_key(pkey, pk, pk_len) > 0 && EVP_PKEY_get_raw_private_key(pkey, sk, sk_len) > 0;
        break;
    case CS_ECDSA_P256:
        pkey = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
        /* OpenSSL writes EC points uncompressed unless told otherwise. */
        ok = pkey != NULL && pk_cap >= P256_POINT && sk_cap >= P256_SCALAR &&
             EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, pk, pk_cap, pk_len) > 0 &&
             *pk_len == P256_POINT && EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &d) > 0 &&
             BN_bn2binpad(d, sk, P256_SCALAR) == P256_SCALAR;
        *sk_len = P256_SCALAR;
        break;
    case CS_RSA_PKCS1:
    case CS_RSA_PSS:
        pkey = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
        ok = pkey != NULL && put_der(pkey, i2d_PublicKey, pk, pk_cap, pk_len) &&
             put_der(pkey, i2d_PrivateKey, sk, sk_cap, sk_len);
        break;
    default:
        break;
    }
    BN_clear_free(d);
    EVP_PKEY_free(pkey);
    return ok;
}

/* A P-256 key from its scalar, with the point d·G that EC keys carry. */
static EVP_PKEY *p256_private(const uint8_t *sk, size_t len) {
    EVP_PKEY *pkey = NULL;
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    EC_POINT *q = group != NULL ? EC_POINT_new(group) : NULL;
    BIGNUM *d = len == P256_SCALAR ? BN_secure_new() : NULL;
    BN_CTX *bctx = BN_CTX_new();
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    uint8_t point[P256_POINT];
    if (q != NULL && d != NULL && bctx != NULL && bld != NULL && ctx != NULL && BN_bin2bn(sk, (int)len, d) != NULL &&
        !BN_is_zero(d) && BN_cmp(d, EC_GROUP_get0_order(group)) < 0 && EC_POINT_mul(group, q, d, NULL, NULL, bctx) &&
        EC_POINT_point2oct(group, q, POINT_CONVERSION_UNCOMPRESSED, point, sizeof point, bctx) == sizeof point &&
        OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, SN_X9_62_prime256v1, 0) &&
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d) &&
        OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point) &&
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
    BN_clear_free(d);
    EC_POINT_free(q);
    EC_GROUP_free(group);
    return pkey;
}

/* A P-256 public key from a SEC 1 point; OpenSSL checks that it is on the curve. */
static EVP_PKEY *p256_public(const uint8_t *pk, size_t len) {
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    OSSL_PARAM params[] = {
        OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)SN_X9_62_prime256v1, 0),
        OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)pk, len),
        OSSL_PARAM_END,
    };
    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0 || EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
        pkey = NULL;
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

/* DER read by `d2i`, all bytes consumed. */
static EVP_PKEY *rsa_der(EVP_PKEY *(*d2i)(int, EVP_PKEY **, const unsigned char **, long), const uint8_t *der,
                         size_t len) {
    const unsigned char *p = der;
    EVP_PKEY *pkey = len <= 0x7fffffff ? d2i(EVP_PKEY_RSA, NULL, &p, (long)len) : NULL;
    if (pkey != NULL && p != der + len) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
    }
    return pkey;
}

/* The secret key `sk` of `scheme` as an EVP_PKEY, ready to sign; NULL if refused. */
void *cs_sig_private(int scheme, const uint8_t *sk, size_t len) {
    EVP_PKEY *pkey = NULL;
    switch (scheme) {
    case CS_ED25519:
        pkey = len == ED25519_KEY ? EVP_PKEY_new_raw_private_key_ex(NULL, "ED25519", NULL, sk, len) : NULL;
        break;
    case CS_ECDSA_P256:
        pkey = p256_private(sk, len);
        break;
    case CS_RSA_PKCS1:
    case CS_RSA_PSS:
        pkey = rsa_der(d2i_PrivateKey, sk, len);
        break;
    default:
        break;
    }
    ERR_clear_error();
    return pkey;
}

/* The public key `pk` of `scheme` as an EVP_PKEY, ready to verify; NULL if refused. */
void *cs_sig_public(int scheme, const uint8_t *pk, size_t len) {
    EVP_PKEY *pkey = NULL;
    switch (scheme) {
    case CS_ED25519:
        pkey = len == ED25519_KEY ? EVP_PKEY_new_raw_public_key_ex(NULL, "ED25519", NULL, pk, len) : NULL;
        break;
    case CS_ECDSA_P256:
        pkey = p256_public(pk, len);
        break;
    case CS_RSA_PKCS1:
    case CS_RSA_PSS:
        pkey = rsa_der(d2i_PublicKey, pk, len);
        break;
    default:
        break;
    }
    ERR_clear_error();
    return pkey;
}

/* The padding of `scheme` on a signing or verifying context (RSA), as TLS sets it. */
static int padding(int scheme, EVP_PKEY_CTX *pctx) {
    switch (scheme) {
    case CS_RSA_PKCS1:
        return EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) > 0;
    case CS_RSA_PSS:
        return EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) > 0 &&
               EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, PSS_SALT) > 0 &&
               EVP_PKEY_CTX_set_rsa_mgf1_md_name(pctx, "SHA256", NULL) > 0;
    default:
        return 1;
    }
}

/* Ed25519 takes no digest (pure EdDSA); the others SHA-256. */
static const char *digest(int scheme) {
    return scheme == CS_ED25519 ? NULL : "SHA256";
}

/* Signs msg into sig (cap bytes) with the prepared key; the signature's length into *len. */
int cs_sig_sign(int scheme, void *pkey, const uint8_t *msg, size_t msg_len, uint8_t *sig, size_t cap, size_t *len) {
    EVP_MD_CTX *mctx = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pctx = NULL;
    size_t out = cap;
    int ok = mctx != NULL && EVP_DigestSignInit_ex(mctx, &pctx, digest(scheme), NULL, NULL, pkey, NULL) > 0 &&
             (!is_rsa(scheme) || padding(scheme, pctx)) && EVP_DigestSign(mctx, sig, &out, msg, msg_len) > 0;
    EVP_MD_CTX_free(mctx);
    if (ok)
        *len = out;
    else
        ERR_clear_error();
    return ok;
}

/*
 * Verifies sig over msg with the prepared key: 1 valid, 0 rejected (malformed signatures
 * included), -1 when the verification could not be set up.
 */
int cs_sig_verify(int scheme, void *pkey, const uint8_t *msg, size_t msg_len, const uint8_t *sig, size_t sig_len) {
    EVP_MD_CTX *mctx = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pctx = NULL;
    int r = -1;
    if (mctx != NULL && EVP_DigestVerifyInit_ex(mctx, &pctx, digest(scheme), NULL, NULL, pkey, NULL) > 0 &&
        (!is_rsa(scheme) || padding(scheme, pctx)))
        r = EVP_DigestVerify(mctx, sig, sig_len, msg, msg_len) == 1 ? 1 : 0;
    EVP_MD_CTX_free(mctx);
    /* A rejection leaves errors on the thread's queue: cleared, so that none pile up. */
    if (r != 1)
        ERR_clear_error();
    return r;
}

void cs_sig_free(void *pkey) {
    EVP_PKEY_free(pkey);
}

/* The P-256 key of a 32-byte scalar, with its public point (the key exchanges' own key). */
void *cs_p256_prepare(const uint8_t sk[P256_SCALAR]) {
    return p256_private(sk, P256_SCALAR);
}
