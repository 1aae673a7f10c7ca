package io.etcdmemberagent.core;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The decision for one poll: the member's state, every readiness check, and whether it is ready.
 * The disk and peer-TLS checks are always here ({@code disk} only with a data dir); they are among
 * {@code checks} only when they gate readiness.
 */
public record Verdict(
    Instant decidedAt,
    MemberState state,
    String stateDetail,
    long memberId,
    OptionalLong lag,
    List<Check> checks,
    List<Alarm> alarms,
    Optional<Check> disk,
    Check peerTls) {

  public Verdict {
    checks = List.copyOf(checks);
    alarms = List.copyOf(alarms);
  }

  public boolean ready() {
    return checks.stream().allMatch(Check::passed);
  }

  public Optional<Check> check(String name) {
    return checks.stream().filter(c -> c.name().equals(name)).findFirst();
  }
}
