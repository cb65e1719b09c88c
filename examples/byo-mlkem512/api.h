/* ML-KEM-512 (FIPS 203), written for cryptoscope as the bring-your-own example.
 * Sizes from FIPS 203, Table 3 (k = 2, du = 10, dv = 4). */
#ifndef BYO_MLKEM512_API_H
#define BYO_MLKEM512_API_H

#define CRYPTO_PUBLICKEYBYTES 800
#define CRYPTO_SECRETKEYBYTES 1632
#define CRYPTO_CIPHERTEXTBYTES 768
#define CRYPTO_BYTES 32
#define CRYPTO_ALGNAME "ML-KEM-512"

int crypto_kem_keypair(unsigned char *pk, unsigned char *sk);
int crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk);
int crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk);

#endif
