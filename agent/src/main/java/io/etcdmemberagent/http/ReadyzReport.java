package io.etcdmemberagent.http;

import io.etcdmemberagent.core.Check;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Renders readiness checks the way kube-apiserver's /readyz does. */
final class ReadyzReport {

  record Answer(int status, String body) {}

  private ReadyzReport() {}

  /** {@code /readyz}: "ok" when ready and not verbose; otherwise one line per check. */
  static Answer all(List<Check> checks, Set<String> excluded, boolean verbose) {
    boolean ready =
        checks.stream().filter(c -> !excluded.contains(c.name())).allMatch(Check::passed);
    if (ready && !verbose) {
      return new Answer(200, "ok\n");
    }
    StringBuilder body = new StringBuilder();
    for (Check c : checks) {
      if (excluded.contains(c.name())) {
        body.append("[+]").append(c.name()).append(" excluded: ok\n");
      } else {
        body.append(line(c)).append('\n');
      }
    }
    body.append(ready ? "readyz check passed\n" : "readyz check failed\n");
    return new Answer(ready ? 200 : 503, body.toString());
  }

  /** {@code /readyz/<check>}: that one check, 404 when there is no such check. */
  static Answer one(List<Check> checks, String name) {
    Optional<Check> check = checks.stream().filter(c -> c.name().equals(name)).findFirst();
    if (check.isEmpty()) {
      return new Answer(404, "no such check: " + name + "\n");
    }
    return new Answer(check.get().passed() ? 200 : 503, line(check.get()) + "\n");
  }

  private static String line(Check c) {
    return c.passed() ? "[+]" + c.name() + " ok" : "[-]" + c.name() + " failed: " + c.message();
  }
}
