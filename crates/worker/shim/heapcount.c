/*
 * cryptoscope heap counter: a preload library (LD_PRELOAD) for the memory pass of the
 * workers. It replaces malloc, calloc, realloc, free, posix_memalign, aligned_alloc,
 * memalign and valloc with wrappers over glibc's own entry points (__libc_malloc, ...)
 * and, between cryptoscope_heap_begin() and cryptoscope_heap_end(), counts allocations,
 * bytes requested and the live bytes of the blocks allocated in that window (peak and
 * at the end). Blocks allocated before the window and freed inside it are not counted:
 * the figures belong to the measured operation only.
 *
 * Outside the window every call costs one relaxed atomic load. The timing pass never
 * loads this library, so it cannot distort cycle counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

struct cryptoscope_heap_stats {
    uint64_t allocations;     /* successful allocation calls in the window */
    uint64_t frees;           /* frees (and reallocs) of blocks allocated in the window */
    uint64_t bytes_requested; /* sum of requested sizes */
    uint64_t peak_live;       /* most bytes of window blocks live at one time */
    uint64_t live_at_end;     /* bytes of window blocks still live at the end */
    uint64_t untracked;       /* blocks the table had no room for (figures then too low) */
};

/* Open-addressing table: pointer -> requested size, for blocks of the current window. */
#define SLOTS (1u << 16)
#define TOMBSTONE ((void *)1)
static struct {
    void *p;
    size_t n;
} table[SLOTS];

static int active;
static int lock;
static struct cryptoscope_heap_stats st;
static uint64_t live;

static void take(void) {
    while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
        ;
}
static void give(void) { __atomic_store_n(&lock, 0, __ATOMIC_RELEASE); }

static size_t slot_of(const void *p) {
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 48) & (SLOTS - 1);
}

static void note_alloc(void *p, size_t n) {
    if (!p || !__atomic_load_n(&active, __ATOMIC_RELAXED))
        return;
    take();
    st.allocations++;
    st.bytes_requested += n;
    size_t i = slot_of(p), k;
    for (k = 0; k < SLOTS; k++, i = (i + 1) & (SLOTS - 1)) {
        if (table[i].p == NULL || table[i].p == TOMBSTONE) {
            table[i].p = p;
            table[i].n = n;
            live += n;
            if (live > st.peak_live)
                st.peak_live = live;
            break;
        }
    }
    if (k == SLOTS)
        st.untracked++;
    give();
}

static void note_free(void *p) {
    if (!p || !__atomic_load_n(&active, __ATOMIC_RELAXED))
        return;
    take();
    size_t i = slot_of(p);
    for (size_t k = 0; k < SLOTS && table[i].p != NULL; k++, i = (i + 1) & (SLOTS - 1)) {
        if (table[i].p == p) {
            table[i].p = TOMBSTONE;
            live -= table[i].n;
            st.frees++;
            break;
        }
    }
    give();
}

void cryptoscope_heap_begin(void) {
    take();
    memset(table, 0, sizeof table);
    memset(&st, 0, sizeof st);
    live = 0;
    give();
    __atomic_store_n(&active, 1, __ATOMIC_SEQ_CST);
}

void cryptoscope_heap_end(struct cryptoscope_heap_stats *out) {
    __atomic_store_n(&active, 0, __ATOMIC_SEQ_CST);
    take();
    st.live_at_end = live;
    *out = st;
    give();
}

void *malloc(size_t n) {
    void *p = __libc_malloc(n);
    note_alloc(p, n);
    return p;
}

void *calloc(size_t a, size_t b) {
    void *p = __libc_calloc(a, b);
    note_alloc(p, a * b);
    return p;
}

void *realloc(void *old, size_t n) {
    void *p = __libc_realloc(old, n);
    if (p || n == 0)
        note_free(old);
    if (p)
        note_alloc(p, n);
    return p;
}

void free(void *p) {
    note_free(p);
    __libc_free(p);
}

void *memalign(size_t align, size_t n) {
    void *p = __libc_memalign(align, n);
    note_alloc(p, n);
    return p;
}

void *aligned_alloc(size_t align, size_t n) { return memalign(align, n); }

void *valloc(size_t n) { return memalign(4096, n); }

int posix_memalign(void **out, size_t align, size_t n) {
    if (align < sizeof(void *) || (align & (align - 1)) != 0)
        return EINVAL;
    void *p = memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
