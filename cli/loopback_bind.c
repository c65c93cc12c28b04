/* libbubblescope_loopback.so: preloaded into mpirun (LD_PRELOAD) for a job
 * whose ranks are all on this machine. OpenMPI 4's out-of-band TCP listener
 * binds the wildcard addresses (0.0.0.0 and [::]) whatever oob_tcp_if_include
 * says; this bind() binds such a socket to the loopback address of its family
 * instead, so nothing of a local run is reachable from another machine.
 * Every other bind() passes through unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*BindFn)(int, const struct sockaddr*, socklen_t);

int bind(int fd, const struct sockaddr* addr, socklen_t len) {
  static BindFn real = NULL;
  if (real == NULL) real = (BindFn)dlsym(RTLD_NEXT, "bind");
  if (addr != NULL && addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
    struct sockaddr_in in4;
    memcpy(&in4, addr, sizeof in4);
    if (in4.sin_addr.s_addr == htonl(INADDR_ANY)) {
      in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      return real(fd, (const struct sockaddr*)&in4, sizeof in4);
    }
  } else if (addr != NULL && addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
    struct sockaddr_in6 in6;
    memcpy(&in6, addr, sizeof in6);
    if (IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr)) {
      in6.sin6_addr = in6addr_loopback;
      return real(fd, (const struct sockaddr*)&in6, sizeof in6);
    }
  }
  return real(fd, addr, len);
}
