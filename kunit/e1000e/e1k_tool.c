// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the e1000e boot (kunit/e1000e/run.sh) needs beyond busybox, in
 * the caller's network namespace: two ethtool calls (SIOCETHTOOL, there
 * is no ethtool(8)) and a raw frame sender.
 *
 *   e1k_tool tso <ifname> on|off        ETHTOOL_STSO, then reads it back
 *   e1k_tool stat <ifname> <name>...    the values of the named
 *                                       `ethtool -S` counters, one line
 *                                       "<name> <value>" each
 *   e1k_tool ring <ifname> <rx count>   ETHTOOL_SRINGPARAM (ethtool -G rx),
 *                                       then reads it back
 *   e1k_tool raw <ifname> <dst mac> <bytes> <count>
 *                                       <count> frames of <bytes> (header
 *                                       included) with the local
 *                                       experimental EtherType 0x88b5: not
 *                                       IP, so a NIC does not split them
 *
 * Exit 0, 1 on a failed call or an unknown counter, 2 on bad usage.
 */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int fd;
static const char *ifname;

static int ethtool(void *cmd)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

static int tso(const char *how)
{
	struct ethtool_value v = { .cmd = ETHTOOL_STSO };

	v.data = !strcmp(how, "on");
	if (ethtool(&v)) {
		fprintf(stderr, "e1k_tool: ETHTOOL_STSO %s: %s\n", ifname,
			strerror(errno));
		return 1;
	}
	v.cmd = ETHTOOL_GTSO;
	v.data = 2;
	if (ethtool(&v)) {
		fprintf(stderr, "e1k_tool: ETHTOOL_GTSO %s: %s\n", ifname,
			strerror(errno));
		return 1;
	}
	printf("TSO %s\n", v.data ? "on" : "off");
	return v.data != !strcmp(how, "on");
}

/*
 * rxcsum <on|off|get>: ETHTOOL_SRXCSUM (unless get), then what the
 * device has now (ETHTOOL_GRXCSUM): "rxcsum <0|1>".  Exit 0 whatever the
 * device kept (a bound provider keeps it on): the caller compares.
 */
static int rxcsum(const char *how)
{
	struct ethtool_value v = { .cmd = ETHTOOL_SRXCSUM };

	if (strcmp(how, "get")) {
		v.data = !strcmp(how, "on");
		if (ethtool(&v)) {
			fprintf(stderr, "e1k_tool: ETHTOOL_SRXCSUM %s: %s\n",
				ifname, strerror(errno));
			return 1;
		}
	}
	v.cmd = ETHTOOL_GRXCSUM;
	v.data = 2;
	if (ethtool(&v)) {
		fprintf(stderr, "e1k_tool: ETHTOOL_GRXCSUM %s: %s\n", ifname,
			strerror(errno));
		return 1;
	}
	printf("rxcsum %u\n", v.data);
	return 0;
}

static int show_stats(int argc, char **argv)
{
	struct {
		struct ethtool_sset_info hdr;
		uint32_t len;
	} info = { .hdr = { .cmd = ETHTOOL_GSSET_INFO,
			    .sset_mask = 1ULL << ETH_SS_STATS } };
	struct ethtool_gstrings *names;
	struct ethtool_stats *vals;
	uint32_t n, i;
	int a, rc = 0;

	if (ethtool(&info) || !info.hdr.sset_mask) {
		fprintf(stderr, "e1k_tool: ETHTOOL_GSSET_INFO %s: %s\n",
			ifname, strerror(errno));
		return 1;
	}
	n = info.len;
	names = calloc(1, sizeof(*names) + n * ETH_GSTRING_LEN);
	vals = calloc(1, sizeof(*vals) + n * sizeof(uint64_t));
	if (!names || !vals)
		return 1;
	names->cmd = ETHTOOL_GSTRINGS;
	names->string_set = ETH_SS_STATS;
	names->len = n;
	vals->cmd = ETHTOOL_GSTATS;
	vals->n_stats = n;
	if (ethtool(names) || ethtool(vals)) {
		fprintf(stderr, "e1k_tool: ETHTOOL_GSTRINGS/GSTATS %s: %s\n",
			ifname, strerror(errno));
		return 1;
	}
	for (a = 0; a < argc; a++) {
		for (i = 0; i < n; i++)
			if (!strncmp((char *)names->data + i * ETH_GSTRING_LEN,
				     argv[a], ETH_GSTRING_LEN))
				break;
		if (i == n) {
			fprintf(stderr, "e1k_tool: %s has no counter %s\n",
				ifname, argv[a]);
			rc = 1;
			continue;
		}
		printf("%s %llu\n", argv[a], (unsigned long long)vals->data[i]);
	}
	return rc;
}

static int ring(int count)
{
	struct ethtool_ringparam r = { .cmd = ETHTOOL_GRINGPARAM };

	if (ethtool(&r)) {
		fprintf(stderr, "e1k_tool: ETHTOOL_GRINGPARAM %s: %s\n", ifname,
			strerror(errno));
		return 1;
	}
	r.cmd = ETHTOOL_SRINGPARAM;
	r.rx_pending = count;
	if (ethtool(&r)) {
		fprintf(stderr, "e1k_tool: ETHTOOL_SRINGPARAM %s: %s\n", ifname,
			strerror(errno));
		return 1;
	}
	r.cmd = ETHTOOL_GRINGPARAM;
	if (ethtool(&r)) {
		fprintf(stderr, "e1k_tool: ETHTOOL_GRINGPARAM %s: %s\n", ifname,
			strerror(errno));
		return 1;
	}
	printf("rx descriptors %u\n", r.rx_pending);
	return r.rx_pending != (unsigned int)count;
}

static int raw(const char *mac, int bytes, int count)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	unsigned char frame[ETH_FRAME_LEN];
	unsigned int m[ETH_ALEN];
	struct ifreq ifr;
	int s, i;

	if (bytes < ETH_ZLEN || bytes > ETH_FRAME_LEN ||
	    sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
		   &m[4], &m[5]) != ETH_ALEN) {
		fprintf(stderr, "e1k_tool: bad MAC or size\n");
		return 2;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFINDEX, &ifr)) {
		fprintf(stderr, "e1k_tool: %s: %s\n", ifname, strerror(errno));
		return 1;
	}
	sll.sll_ifindex = ifr.ifr_ifindex;
	if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		fprintf(stderr, "e1k_tool: %s: %s\n", ifname, strerror(errno));
		return 1;
	}
	memset(frame, 0x5a, sizeof(frame));
	for (i = 0; i < ETH_ALEN; i++)
		frame[i] = m[i];
	memcpy(frame + ETH_ALEN, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	frame[12] = 0x88;
	frame[13] = 0xb5;
	s = socket(AF_PACKET, SOCK_RAW, 0);
	if (s < 0) {
		perror("e1k_tool: AF_PACKET socket");
		return 1;
	}
	for (i = 0; i < count; i++)
		if (sendto(s, frame, bytes, 0, (struct sockaddr *)&sll,
			   sizeof(sll)) != bytes) {
			perror("e1k_tool: sendto");
			return 1;
		}
	printf("sent %d frames of %d bytes\n", count, bytes);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4 || (strcmp(argv[1], "tso") && strcmp(argv[1], "stat") &&
			 strcmp(argv[1], "ring") && strcmp(argv[1], "rxcsum") &&
			 (strcmp(argv[1], "raw") || argc != 6))) {
		fprintf(stderr, "usage: e1k_tool tso <ifname> on|off\n"
				"       e1k_tool stat <ifname> <counter>...\n"
				"       e1k_tool ring <ifname> <rx count>\n"
				"       e1k_tool rxcsum <ifname> on|off|get\n"
				"       e1k_tool raw <ifname> <dst mac> <bytes> <count>\n");
		return 2;
	}
	ifname = argv[2];
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("e1k_tool: socket");
		return 1;
	}
	if (!strcmp(argv[1], "tso"))
		return tso(argv[3]);
	if (!strcmp(argv[1], "ring"))
		return ring(atoi(argv[3]));
	if (!strcmp(argv[1], "rxcsum"))
		return rxcsum(argv[3]);
	if (!strcmp(argv[1], "raw"))
		return raw(argv[3], atoi(argv[4]), atoi(argv[5]));
	return show_stats(argc - 3, argv + 3);
}
