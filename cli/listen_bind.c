/* libbubblescope_listen.so: preloaded (LD_PRELOAD) into mpirun, OpenMPI's
 * daemons (orted) and the ranks of a `run` (cli/mpirun.h). OpenMPI 4's TCP
 * listeners (oob_tcp in mpirun and orted, btl_tcp in the ranks) bind the
 * wildcard addresses (0.0.0.0 and [::]) whatever oob_tcp_if_include and
 * btl_tcp_if_include say; this bind() binds such a socket to one address
 * instead, so nothing of the job listens on another interface:
 * - BUBBLESCOPE_LISTEN_NET unset or empty (a job on this machine alone): the
 *   loopback address of the socket's family;
 * - BUBBLESCOPE_LISTEN_NET=LIST (run --net-if: comma-separated interface
 *   names or CIDR networks, e.g. "eth1" or "10.0.0.0/24"): the first
 *   address of this host (getifaddrs order) of the socket's family on a
 *   named interface or in a named network, else loopback (a family the list
 *   does not cover is not listened on from elsewhere either).
 * Every other bind() passes through unchanged. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*BindFn)(int, const struct sockaddr*, socklen_t);

/* Whether the first `bits` bits of a and b (bytes in network order) agree. */
static int samePrefix(const unsigned char* a, const unsigned char* b, int bits) {
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const unsigned char mask = bits >= 8 ? 0xff : (unsigned char)(0xff << (8 - bits));
    if ((a[i] & mask) != (b[i] & mask)) return 0;
  }
  return 1;
}

/* Whether `entry` (one item of the list: an interface name or a CIDR
 * network) names interface `name` or holds `addr` (family `family`). */
static int entryMatches(const char* entry, const char* name, int family, const void* addr) {
  const char* slash = strchr(entry, '/');
  if (slash == NULL) return strcmp(entry, name) == 0;
  char network[INET6_ADDRSTRLEN];
  const size_t length = (size_t)(slash - entry);
  if (length >= sizeof network) return 0;
  memcpy(network, entry, length);
  network[length] = '\0';
  unsigned char bytes[sizeof(struct in6_addr)];
  if (inet_pton(family, network, bytes) != 1) return 0;
  char* end = NULL;
  const long bits = strtol(slash + 1, &end, 10);
  const long maxBits = family == AF_INET ? 32 : 128;
  if (end == slash + 1 || *end != '\0' || bits < 0 || bits > maxBits) return 0;
  return samePrefix((const unsigned char*)addr, bytes, (int)bits);
}

/* Whether interface `name` with address `addr` is in the comma-separated
 * `list`. */
static int listed(const char* list, const char* name, int family, const void* addr) {
  char entry[128];
  for (const char* p = list; *p != '\0';) {
    const char* comma = strchr(p, ',');
    const size_t length = comma ? (size_t)(comma - p) : strlen(p);
    if (length > 0 && length < sizeof entry) {
      memcpy(entry, p, length);
      entry[length] = '\0';
      if (entryMatches(entry, name, family, addr)) return 1;
    }
    p += length + (comma ? 1 : 0);
  }
  return 0;
}

/* Rewrites the wildcard address in `out` (family out->ss_family) to the
 * address this socket should listen on instead. */
static void chooseAddress(struct sockaddr_storage* out) {
  const int family = out->ss_family;
  const char* list = getenv("BUBBLESCOPE_LISTEN_NET");
  struct ifaddrs* all = NULL;
  if (list != NULL && *list != '\0' && getifaddrs(&all) == 0) {
    for (const struct ifaddrs* i = all; i != NULL; i = i->ifa_next) {
      if (i->ifa_addr == NULL || i->ifa_addr->sa_family != family) continue;
      const void* addr = family == AF_INET
                             ? (const void*)&((const struct sockaddr_in*)i->ifa_addr)->sin_addr
                             : (const void*)&((const struct sockaddr_in6*)i->ifa_addr)->sin6_addr;
      if (!listed(list, i->ifa_name, family, addr)) continue;
      if (family == AF_INET) {
        ((struct sockaddr_in*)out)->sin_addr = *(const struct in_addr*)addr;
      } else {
        struct sockaddr_in6* in6 = (struct sockaddr_in6*)out;
        in6->sin6_addr = *(const struct in6_addr*)addr;
        in6->sin6_scope_id = ((const struct sockaddr_in6*)i->ifa_addr)->sin6_scope_id;
      }
      freeifaddrs(all);
      return;
    }
  }
  if (all != NULL) freeifaddrs(all);
  if (family == AF_INET) {
    ((struct sockaddr_in*)out)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  } else {
    ((struct sockaddr_in6*)out)->sin6_addr = in6addr_loopback;
  }
}

int bind(int fd, const struct sockaddr* addr, socklen_t len) {
  static BindFn real = NULL;
  if (real == NULL) real = (BindFn)dlsym(RTLD_NEXT, "bind");
  struct sockaddr_storage chosen;
  if (addr != NULL && addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
    memcpy(&chosen, addr, sizeof(struct sockaddr_in));
    if (((struct sockaddr_in*)&chosen)->sin_addr.s_addr == htonl(INADDR_ANY)) {
      chooseAddress(&chosen);
      return real(fd, (const struct sockaddr*)&chosen, sizeof(struct sockaddr_in));
    }
  } else if (addr != NULL && addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
    memcpy(&chosen, addr, sizeof(struct sockaddr_in6));
    if (IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6*)&chosen)->sin6_addr)) {
      chooseAddress(&chosen);
      return real(fd, (const struct sockaddr*)&chosen, sizeof(struct sockaddr_in6));
    }
  }
  return real(fd, addr, len);
}
