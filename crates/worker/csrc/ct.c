/* Valgrind client requests for the constant-time audit (`cryptoscope ct`).
 *
 * Memcheck tracks, bit by bit, whether memory holds "defined" data. Marking secret inputs
 * undefined before an operation makes memcheck report every conditional branch and every
 * memory address computed from them ("Conditional jump or move depends on uninitialised
 * value(s)", "Use of uninitialised value"): exactly the data flows a constant-time
 * implementation must not have. Outside valgrind these requests are a few no-op
 * instructions. */
#include <stddef.h>

#ifdef CRYPTOSCOPE_HAVE_MEMCHECK_H
#include <valgrind/memcheck.h>

void cryptoscope_ct_secret(const void *p, size_t n) { VALGRIND_MAKE_MEM_UNDEFINED(p, n); }
void cryptoscope_ct_public(const void *p, size_t n) { VALGRIND_MAKE_MEM_DEFINED(p, n); }
int cryptoscope_ct_on_valgrind(void) { return RUNNING_ON_VALGRIND ? 1 : 0; }
int cryptoscope_ct_available(void) { return 1; }
#else
void cryptoscope_ct_secret(const void *p, size_t n) { (void)p; (void)n; }
void cryptoscope_ct_public(const void *p, size_t n) { (void)p; (void)n; }
int cryptoscope_ct_on_valgrind(void) { return 0; }
int cryptoscope_ct_available(void) { return 0; }
#endif
