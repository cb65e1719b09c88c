/* The four Keccak instances ML-KEM needs (FIPS 202). */
#ifndef BYO_KECCAK_H
#define BYO_KECCAK_H
#include <stddef.h>
#include <stdint.h>

/* An incremental sponge: absorb any number of times, then squeeze any number of times. */
typedef struct {
    uint64_t lane[25];
    size_t rate;   /* bytes */
    size_t pos;    /* byte position inside the current block */
    uint8_t pad;   /* domain bits and first padding bit: 0x06 for SHA-3, 0x1f for SHAKE */
    int squeezing;
} sponge;

void sponge_init(sponge *s, size_t rate, uint8_t pad);
void sponge_absorb(sponge *s, const uint8_t *in, size_t len);
void sponge_squeeze(sponge *s, uint8_t *out, size_t len);

void sha3_256(uint8_t out[32], const uint8_t *in, size_t len);
void sha3_512(uint8_t out[64], const uint8_t *in, size_t len);
void shake256(uint8_t *out, size_t outlen, const uint8_t *in, size_t len);
#define SHAKE128_RATE 168
#define SHAKE256_RATE 136

#endif
