// Runs a check in a forked child that first drops to an unprivileged user
// (uid/gid 65534, "nobody"), as setpriv --reuid=65534 --regid=65534
// --clear-groups does: root ignores file permissions, so read-only folders
// are only tested as another user. Without root the child keeps this user.
#pragma once

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace bubblescope::testing {

struct UnprivilegedChild {
  pid_t pid = -1;
  int output = -1;  // the read end of the child's message
};

struct ChildResult {
  bool ran = false;     // false: fork failed or privileges could not be dropped
  std::string message;  // what the child's body returned
};

// Forks; the child drops privileges, runs `body` and passes back the
// string it returns. The parent goes on at once: finish() collects it.
template <class Body>
UnprivilegedChild startAsNobody(Body body) {
  int pipeFd[2];
  if (pipe(pipeFd) != 0) return {};
  const pid_t child = fork();
  if (child < 0) return {};
  if (child == 0) {
    close(pipeFd[0]);
    if (geteuid() == 0 &&
        (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
      _exit(3);
    }
    const std::string message = body();
    (void)!write(pipeFd[1], message.data(), message.size());
    _exit(0);
  }
  close(pipeFd[1]);
  return {child, pipeFd[0]};
}

inline ChildResult finish(UnprivilegedChild child) {
  ChildResult result;
  if (child.pid < 0) return result;
  char buf[512];
  for (ssize_t n; (n = read(child.output, buf, sizeof buf)) > 0;) result.message.append(buf, n);
  close(child.output);
  int status = 0;
  waitpid(child.pid, &status, 0);
  result.ran = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return result;
}

template <class Body>
ChildResult runAsNobody(Body body) {
  return finish(startAsNobody(body));
}

}  // namespace bubblescope::testing
