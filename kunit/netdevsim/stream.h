/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The seeded byte stream the netdevsim tools send and check: xorshift64*,
 * eight bytes a step, least significant first.  A seed of 0 means the
 * default seed.
 */
#ifndef NSIM_STREAM_H
#define NSIM_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct stream {
	uint64_t state;
	uint64_t word;
	unsigned int left;	/* bytes of word not yet used */
};

static inline void stream_init(struct stream *s, uint64_t seed)
{
	s->state = seed ? seed : 0x9e3779b97f4a7c15ULL;
	s->left = 0;
}

static inline unsigned char stream_next(struct stream *s)
{
	unsigned char c;

	if (!s->left) {
		s->state ^= s->state >> 12;
		s->state ^= s->state << 25;
		s->state ^= s->state >> 27;
		s->word = s->state * 0x2545f4914f6cdd1dULL;
		s->left = 8;
	}
	c = s->word & 0xff;
	s->word >>= 8;
	s->left--;
	return c;
}

/*
 * The receivers' one verification routine (nsim_tcp recv and devmem,
 * netgpu-rx): compare @len bytes at @p with the next bytes of the stream,
 * @off being the stream offset of @p[0].  Returns the mismatches; the
 * offset of the first one goes to *@first_bad if that is still negative.
 * The state is worked on in a local copy, so that every receiver pays
 * the same per byte (scripts/bench-rx compares them).
 */
static inline unsigned long long stream_verify(struct stream *s,
					       const unsigned char *p,
					       size_t len, unsigned long long off,
					       long long *first_bad)
{
	struct stream st = *s;
	unsigned long long bad = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] != stream_next(&st)) {
			if (*first_bad < 0)
				*first_bad = off + i;
			bad++;
		}
	}
	*s = st;
	return bad;
}

#endif /* NSIM_STREAM_H */
