/* Keccak-f[1600] and its sponge, from FIPS 202 sections 3 and 4. The round constants and
 * rotation offsets are derived at first use from the specification's definitions (the rc
 * LFSR of Algorithm 5 and the (x, y) walk of Algorithm 2) rather than typed in. */
#include "keccak.h"
#include <string.h>

static uint64_t round_constant[24];
static unsigned rotation[25];
static int ready;

/* rc(t) of FIPS 202 Algorithm 5: bit 0 of the LFSR x^8 + x^6 + x^5 + x^4 + 1 after t steps. */
static int rc_bit(unsigned t) {
    unsigned r = 1; /* R = 10000000, bit i of R is bit i of r */
    if (t % 255 == 0) return 1;
    for (unsigned i = 0; i < t % 255; i++) {
        unsigned r8 = (r >> 7) & 1;
        r = (r << 1) & 0x1ff;  /* R = 0 || R, R[8] moves up */
        r ^= r8;               /* R[0] ^= R[8] */
        r ^= r8 << 4;          /* R[4] ^= R[8] */
        r ^= r8 << 5;          /* R[5] ^= R[8] */
        r ^= r8 << 6;          /* R[6] ^= R[8] */
        r &= 0xff;
    }
    return r & 1;
}

static void prepare(void) {
    for (unsigned ir = 0; ir < 24; ir++) {
        uint64_t rc = 0;
        for (unsigned j = 0; j <= 6; j++)
            if (rc_bit(j + 7 * ir)) rc |= (uint64_t)1 << ((1u << j) - 1);
        round_constant[ir] = rc;
    }
    unsigned x = 1, y = 0;
    rotation[0] = 0;
    for (unsigned t = 0; t < 24; t++) {
        rotation[x + 5 * y] = ((t + 1) * (t + 2) / 2) % 64;
        unsigned nx = y, ny = (2 * x + 3 * y) % 5;
        x = nx;
        y = ny;
    }
    ready = 1;
}

static uint64_t rotl(uint64_t v, unsigned n) { return n ? (v << n) | (v >> (64 - n)) : v; }

static void permute(uint64_t a[25]) {
    if (!ready) prepare();
    for (unsigned ir = 0; ir < 24; ir++) {
        uint64_t c[5], d[5], b[25];
        for (unsigned x = 0; x < 5; x++)
            c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
        for (unsigned x = 0; x < 5; x++) d[x] = c[(x + 4) % 5] ^ rotl(c[(x + 1) % 5], 1);
        for (unsigned i = 0; i < 25; i++) a[i] ^= d[i % 5];            /* theta */
        for (unsigned x = 0; x < 5; x++)                                /* rho and pi */
            for (unsigned y = 0; y < 5; y++)
                b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl(a[x + 5 * y], rotation[x + 5 * y]);
        for (unsigned y = 0; y < 5; y++)                                /* chi */
            for (unsigned x = 0; x < 5; x++)
                a[x + 5 * y] = b[x + 5 * y] ^ (~b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]);
#if defined(CS_EXTRA_WORK) && CS_EXTRA_WORK > 0
        /* Deliberate extra work for the A/B example (docs/ab.md): a chain of CS_EXTRA_WORK
         * dependent multiply-adds per round, each kept by an empty asm statement the compiler
         * cannot see through. The state is untouched: the results stay the same. */
        uint64_t w = a[ir % 25];
        for (unsigned k = 0; k < CS_EXTRA_WORK; k++) {
            w = w * 0x9E3779B97F4A7C15ull + k;
            __asm__ volatile("" : "+r"(w));
        }
#endif
        a[0] ^= round_constant[ir];                                     /* iota */
    }
}

static void xor_byte(uint64_t *lane, size_t i, uint8_t v) { lane[i / 8] ^= (uint64_t)v << (8 * (i % 8)); }
static uint8_t get_byte(const uint64_t *lane, size_t i) { return (uint8_t)(lane[i / 8] >> (8 * (i % 8))); }

void sponge_init(sponge *s, size_t rate, uint8_t pad) {
    memset(s, 0, sizeof *s);
    s->rate = rate;
    s->pad = pad;
}

void sponge_absorb(sponge *s, const uint8_t *in, size_t len) {
    for (size_t i = 0; i < len; i++) {
        xor_byte(s->lane, s->pos++, in[i]);
        if (s->pos == s->rate) {
            permute(s->lane);
            s->pos = 0;
        }
    }
}

void sponge_squeeze(sponge *s, uint8_t *out, size_t len) {
    if (!s->squeezing) {
        xor_byte(s->lane, s->pos, s->pad);
        xor_byte(s->lane, s->rate - 1, 0x80);
        permute(s->lane);
        s->pos = 0;
        s->squeezing = 1;
    }
    for (size_t i = 0; i < len; i++) {
        if (s->pos == s->rate) {
            permute(s->lane);
            s->pos = 0;
        }
        out[i] = get_byte(s->lane, s->pos++);
    }
}

static void hash(uint8_t *out, size_t outlen, size_t rate, uint8_t pad, const uint8_t *in, size_t len) {
    sponge s;
    sponge_init(&s, rate, pad);
    sponge_absorb(&s, in, len);
    sponge_squeeze(&s, out, outlen);
}

void sha3_256(uint8_t out[32], const uint8_t *in, size_t len) { hash(out, 32, 136, 0x06, in, len); }
void sha3_512(uint8_t out[64], const uint8_t *in, size_t len) { hash(out, 64, 72, 0x06, in, len); }
void shake256(uint8_t *out, size_t outlen, const uint8_t *in, size_t len) { hash(out, outlen, 136, 0x1f, in, len); }
