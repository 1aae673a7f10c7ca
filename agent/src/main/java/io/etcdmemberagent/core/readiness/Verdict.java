package io.etcdmemberagent.core.readiness;

import io.etcdmemberagent.core.Alarm;
import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.MemberState;
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

  /** This verdict with one more check. */
  public Verdict withCheck(Check extra) {
    List<Check> more = new java.util.ArrayList<>(checks);
    more.add(extra);
    return new Verdict(decidedAt, state, stateDetail, memberId, lag, more, alarms, disk, peerTls);
  }

  /** The types of the alarms raised for this member, sorted, each once. */
  public List<String> ownAlarms() {
    return alarms.stream()
        .filter(a -> a.memberId() == memberId)
        .map(Alarm::type)
        .distinct()
        .sorted()
        .toList();
  }

  public Optional<Check> check(String name) {
    return checks.stream().filter(c -> c.name().equals(name)).findFirst();
  }
}
