/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The seeded byte stream the netdevsim tools send and check: xorshift64*,
 * eight bytes a step, least significant first.  A seed of 0 means the
 * default seed.
 */
#ifndef NSIM_STREAM_H
#define NSIM_STREAM_H

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

#endif /* NSIM_STREAM_H */
