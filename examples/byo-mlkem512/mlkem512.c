/* ML-KEM-512 from FIPS 203 (August 2024), written plainly for cryptoscope's bring-your-own
 * example: every step is the specification's algorithm with ordinary modular arithmetic,
 * no Montgomery tricks and no vector code, so it is easy to read and slow to run. Each
 * function names the FIPS 203 algorithm it follows.
 *
 * Randomness comes from the harness through randombytes(): 64 bytes (d || z) for a key pair,
 * 32 bytes (m) for an encapsulation, as ML-KEM.KeyGen and ML-KEM.Encaps draw them. */
#include <stdint.h>
#include <string.h>

#include "api.h"
#include "keccak.h"
#include "randombytes.h"

#define N 256
#define Q 3329
#define K 2
#define ETA1 3
#define ETA2 2
#define DU 10
#define DV 4

typedef struct { int16_t c[N]; } poly; /* coefficients kept in [0, Q) */

static int16_t mod_q(int32_t v) {
    v %= Q;
    return (int16_t)(v < 0 ? v + Q : v);
}

/* BitRev7 and the zetas 17^BitRev7(i) mod q (section 4.3). */
static unsigned bitrev7(unsigned i) {
    unsigned r = 0;
    for (int b = 0; b < 7; b++) r |= ((i >> b) & 1) << (6 - b);
    return r;
}

static int32_t pow17(unsigned e) {
    int32_t r = 1;
    for (unsigned i = 0; i < e; i++) r = (r * 17) % Q;
    return r;
}

static int16_t zeta[128], gamma_[128];
static int zetas_ready;

static void prepare_zetas(void) {
    for (unsigned i = 0; i < 128; i++) {
        zeta[i] = (int16_t)pow17(bitrev7(i));
        gamma_[i] = (int16_t)pow17(2 * bitrev7(i) + 1);
    }
    zetas_ready = 1;
}

/* Algorithm 9, NTT. */
static void ntt(poly *f) {
    if (!zetas_ready) prepare_zetas();
    unsigned i = 1;
    for (unsigned len = 128; len >= 2; len /= 2)
        for (unsigned start = 0; start < N; start += 2 * len) {
            int32_t z = zeta[i++];
            for (unsigned j = start; j < start + len; j++) {
                int16_t t = mod_q(z * f->c[j + len]);
                f->c[j + len] = mod_q(f->c[j] - t);
                f->c[j] = mod_q(f->c[j] + t);
            }
        }
}

/* Algorithm 10, NTT^-1, with the final multiplication by 128^-1 = 3303 mod q. */
static void ntt_inverse(poly *f) {
    if (!zetas_ready) prepare_zetas();
    unsigned i = 127;
    for (unsigned len = 2; len <= 128; len *= 2)
        for (unsigned start = 0; start < N; start += 2 * len) {
            int32_t z = zeta[i--];
            for (unsigned j = start; j < start + len; j++) {
                int16_t t = f->c[j];
                f->c[j] = mod_q(t + f->c[j + len]);
                f->c[j + len] = mod_q(z * (f->c[j + len] - t));
            }
        }
    for (unsigned j = 0; j < N; j++) f->c[j] = mod_q(f->c[j] * 3303);
}

/* Algorithms 11 and 12, MultiplyNTTs with BaseCaseMultiply; the product is added to h. */
static void multiply_add(poly *h, const poly *f, const poly *g) {
    if (!zetas_ready) prepare_zetas();
    for (unsigned i = 0; i < 128; i++) {
        int32_t a0 = f->c[2 * i], a1 = f->c[2 * i + 1], b0 = g->c[2 * i], b1 = g->c[2 * i + 1];
        int32_t c0 = mod_q(a0 * b0 + mod_q(a1 * b1) * gamma_[i]);
        int32_t c1 = mod_q(a0 * b1 + a1 * b0);
        h->c[2 * i] = mod_q(h->c[2 * i] + c0);
        h->c[2 * i + 1] = mod_q(h->c[2 * i + 1] + c1);
    }
}

static void add(poly *r, const poly *a) {
    for (unsigned j = 0; j < N; j++) r->c[j] = mod_q(r->c[j] + a->c[j]);
}

/* Algorithm 5, ByteEncode_d: d bits per coefficient, least significant bit first. */
static void byte_encode(uint8_t *out, const poly *f, unsigned d) {
    memset(out, 0, 32 * d);
    for (unsigned i = 0; i < N; i++)
        for (unsigned b = 0; b < d; b++)
            if ((f->c[i] >> b) & 1) out[(i * d + b) / 8] |= (uint8_t)(1u << ((i * d + b) % 8));
}

/* Algorithm 6, ByteDecode_d (modulo q for d = 12). */
static void byte_decode(poly *f, const uint8_t *in, unsigned d) {
    for (unsigned i = 0; i < N; i++) {
        int32_t v = 0;
        for (unsigned b = 0; b < d; b++) v |= ((in[(i * d + b) / 8] >> ((i * d + b) % 8)) & 1) << b;
        f->c[i] = d == 12 ? mod_q(v) : (int16_t)v;
    }
}

/* Compress_d and Decompress_d (equations 4.7 and 4.8), rounding half up. */
static void compress(poly *f, unsigned d) {
    for (unsigned i = 0; i < N; i++)
        f->c[i] = (int16_t)(((((uint32_t)f->c[i] << d) + Q / 2) / Q) & ((1u << d) - 1));
}

static void decompress(poly *f, unsigned d) {
    for (unsigned i = 0; i < N; i++)
        f->c[i] = (int16_t)(((uint32_t)f->c[i] * Q + (1u << (d - 1))) >> d);
}

/* Algorithm 7, SampleNTT: rejection sampling from SHAKE128(rho || j || i). */
static void sample_ntt(poly *a, const uint8_t rho[32], uint8_t j, uint8_t i) {
    sponge s;
    uint8_t seed[34];
    memcpy(seed, rho, 32);
    seed[32] = j;
    seed[33] = i;
    sponge_init(&s, SHAKE128_RATE, 0x1f);
    sponge_absorb(&s, seed, sizeof seed);
    unsigned n = 0;
    while (n < N) {
        uint8_t c[3];
        sponge_squeeze(&s, c, 3);
        int32_t d1 = c[0] + 256 * (c[1] % 16);
        int32_t d2 = c[1] / 16 + 16 * c[2];
        if (d1 < Q) a->c[n++] = (int16_t)d1;
        if (d2 < Q && n < N) a->c[n++] = (int16_t)d2;
    }
}

/* Algorithm 8, SamplePolyCBD_eta over PRF_eta(s, b) = SHAKE256(s || b, 64 eta). */
static void sample_cbd(poly *f, const uint8_t s[32], uint8_t b, unsigned eta) {
    uint8_t in[33], buf[64 * ETA1];
    memcpy(in, s, 32);
    in[32] = b;
    shake256(buf, 64 * eta, in, sizeof in);
    for (unsigned i = 0; i < N; i++) {
        int32_t x = 0, y = 0;
        for (unsigned j = 0; j < eta; j++) {
            unsigned bx = 2 * i * eta + j, by = 2 * i * eta + eta + j;
            x += (buf[bx / 8] >> (bx % 8)) & 1;
            y += (buf[by / 8] >> (by % 8)) & 1;
        }
        f->c[i] = mod_q(x - y);
    }
}

/* A_hat[i][j] = SampleNTT(rho || j || i); `transposed` gives A_hat^T. */
static void matrix(poly a[K][K], const uint8_t rho[32], int transposed) {
    for (uint8_t i = 0; i < K; i++)
        for (uint8_t j = 0; j < K; j++)
            sample_ntt(transposed ? &a[j][i] : &a[i][j], rho, j, i);
}

/* Algorithm 13, K-PKE.KeyGen: ek = ByteEncode12(t_hat) || rho, dk = ByteEncode12(s_hat). */
static void pke_keygen(uint8_t ek[384 * K + 32], uint8_t dk[384 * K], const uint8_t d[32]) {
    uint8_t in[33], g[64];
    memcpy(in, d, 32);
    in[32] = K;
    sha3_512(g, in, sizeof in);
    const uint8_t *rho = g, *sigma = g + 32;
    poly a[K][K], s[K], e[K], t[K];
    matrix(a, rho, 0);
    uint8_t nonce = 0;
    for (unsigned i = 0; i < K; i++) sample_cbd(&s[i], sigma, nonce++, ETA1);
    for (unsigned i = 0; i < K; i++) sample_cbd(&e[i], sigma, nonce++, ETA1);
    for (unsigned i = 0; i < K; i++) {
        ntt(&s[i]);
        ntt(&e[i]);
    }
    for (unsigned i = 0; i < K; i++) {
        t[i] = e[i];
        for (unsigned j = 0; j < K; j++) multiply_add(&t[i], &a[i][j], &s[j]);
    }
    for (unsigned i = 0; i < K; i++) {
        byte_encode(ek + 384 * i, &t[i], 12);
        byte_encode(dk + 384 * i, &s[i], 12);
    }
    memcpy(ek + 384 * K, rho, 32);
}

/* Algorithm 14, K-PKE.Encrypt. */
static void pke_encrypt(uint8_t c[CRYPTO_CIPHERTEXTBYTES], const uint8_t ek[384 * K + 32],
                        const uint8_t m[32], const uint8_t r[32]) {
    poly t[K], at[K][K], y[K], e1[K], e2, u[K], v, mu;
    for (unsigned i = 0; i < K; i++) byte_decode(&t[i], ek + 384 * i, 12);
    matrix(at, ek + 384 * K, 1);
    uint8_t nonce = 0;
    for (unsigned i = 0; i < K; i++) sample_cbd(&y[i], r, nonce++, ETA1);
    for (unsigned i = 0; i < K; i++) sample_cbd(&e1[i], r, nonce++, ETA2);
    sample_cbd(&e2, r, nonce, ETA2);
    for (unsigned i = 0; i < K; i++) ntt(&y[i]);
    for (unsigned i = 0; i < K; i++) {
        memset(&u[i], 0, sizeof u[i]);
        for (unsigned j = 0; j < K; j++) multiply_add(&u[i], &at[i][j], &y[j]);
        ntt_inverse(&u[i]);
        add(&u[i], &e1[i]);
    }
    memset(&v, 0, sizeof v);
    for (unsigned j = 0; j < K; j++) multiply_add(&v, &t[j], &y[j]);
    ntt_inverse(&v);
    add(&v, &e2);
    byte_decode(&mu, m, 1);
    decompress(&mu, 1);
    add(&v, &mu);
    for (unsigned i = 0; i < K; i++) {
        compress(&u[i], DU);
        byte_encode(c + 32 * DU * i, &u[i], DU);
    }
    compress(&v, DV);
    byte_encode(c + 32 * DU * K, &v, DV);
}

/* Algorithm 15, K-PKE.Decrypt. */
static void pke_decrypt(uint8_t m[32], const uint8_t dk[384 * K], const uint8_t *c) {
    poly u[K], v, s, w;
    for (unsigned i = 0; i < K; i++) {
        byte_decode(&u[i], c + 32 * DU * i, DU);
        decompress(&u[i], DU);
        ntt(&u[i]);
    }
    byte_decode(&v, c + 32 * DU * K, DV);
    decompress(&v, DV);
    memset(&w, 0, sizeof w);
    for (unsigned i = 0; i < K; i++) {
        byte_decode(&s, dk + 384 * i, 12);
        multiply_add(&w, &s, &u[i]);
    }
    ntt_inverse(&w);
    for (unsigned j = 0; j < N; j++) w.c[j] = mod_q(v.c[j] - w.c[j]);
    compress(&w, 1);
    byte_encode(m, &w, 1);
}

/* Algorithm 19, ML-KEM.KeyGen (with Algorithm 16): dk = dk_pke || ek || H(ek) || z. */
int crypto_kem_keypair(unsigned char *pk, unsigned char *sk) {
    uint8_t dz[64];
    randombytes(dz, sizeof dz);
    pke_keygen(pk, sk, dz);
    memcpy(sk + 384 * K, pk, CRYPTO_PUBLICKEYBYTES);
    sha3_256(sk + 384 * K + CRYPTO_PUBLICKEYBYTES, pk, CRYPTO_PUBLICKEYBYTES);
    memcpy(sk + 384 * K + CRYPTO_PUBLICKEYBYTES + 32, dz + 32, 32);
    return 0;
}

/* Algorithm 20, ML-KEM.Encaps (with Algorithm 17): (K, r) = G(m || H(ek)). */
int crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk) {
    uint8_t in[64], kr[64];
    randombytes(in, 32);
    sha3_256(in + 32, pk, CRYPTO_PUBLICKEYBYTES);
    sha3_512(kr, in, sizeof in);
    pke_encrypt(ct, pk, in, kr + 32);
    memcpy(ss, kr, 32);
    return 0;
}

/* Algorithm 21, ML-KEM.Decaps (with Algorithm 18): implicit rejection with
 * K_bar = J(z || c), chosen without a branch on the comparison. */
int crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk) {
    const uint8_t *dk = sk, *ek = sk + 384 * K, *h = ek + CRYPTO_PUBLICKEYBYTES, *z = h + 32;
    uint8_t in[64], kr[64], again[CRYPTO_CIPHERTEXTBYTES], zc[32 + CRYPTO_CIPHERTEXTBYTES], reject[32];
    pke_decrypt(in, dk, ct);
    memcpy(in + 32, h, 32);
    sha3_512(kr, in, sizeof in);
    memcpy(zc, z, 32);
    memcpy(zc + 32, ct, CRYPTO_CIPHERTEXTBYTES);
    shake256(reject, 32, zc, sizeof zc);
    pke_encrypt(again, ek, in, kr + 32);
    uint8_t diff = 0;
    for (unsigned i = 0; i < CRYPTO_CIPHERTEXTBYTES; i++) diff |= again[i] ^ ct[i];
    uint8_t keep = (uint8_t)(((uint32_t)diff - 1) >> 8); /* 0xff when equal, 0 otherwise */
    for (unsigned i = 0; i < 32; i++) ss[i] = (uint8_t)((kr[i] & keep) | (reject[i] & ~keep));
    return 0;
}
