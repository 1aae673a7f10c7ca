package io.etcdmemberagent.core.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.publish.ConditionNames;
import io.etcdmemberagent.core.publish.ConditionStatus;
import io.etcdmemberagent.core.publish.DesiredConditions;
import io.etcdmemberagent.core.publish.PodCondition;
import io.etcdmemberagent.core.readiness.MemberEvaluator;
import io.etcdmemberagent.core.readiness.MemberEvaluatorTest;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.readiness.ReadinessPolicy;
import io.etcdmemberagent.core.readiness.Verdict;
import io.etcdmemberagent.core.tls.PeerUrlFacts.Trust;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class PeerTlsEvaluatorTest {

  static final Instant NOW = Instant.parse("2026-12-02T10:00:00Z");
  static final PeerTlsEvaluator EVALUATOR =
      new PeerTlsEvaluator(new PeerTlsPolicy(Duration.ofDays(30), false));
  static final String URL = "https://etcd-0.etcd:2380";

  static PeerUrlFacts cert(Duration validFor, boolean hostMatches, Trust trust) {
    return new PeerUrlFacts.Inspected(
        URL,
        "served",
        "CN=etcd-0",
        NOW.minus(Duration.ofDays(1)),
        NOW.plus(validFor),
        hostMatches,
        trust,
        trust == Trust.UNTRUSTED ? "Path does not chain with any of the trust anchors" : "");
  }

  static Check check(PeerUrlFacts... urls) {
    return EVALUATOR.check(new PeerTlsFacts.Inspected(List.of(urls), NOW), NOW);
  }

  @Test
  void namesTheFirstProblem() {
    Duration year = Duration.ofDays(365);
    assertThat(check(cert(year, true, Trust.TRUSTED)).reason()).isEqualTo("PeerTlsValid");
    assertThat(check(cert(year, true, Trust.TRUSTED)).passed()).isTrue();
    assertThat(check(cert(year, true, Trust.NO_CA)).message()).contains("no --peer-cacert");
    assertThat(check(new PeerUrlFacts.Plain("http://etcd-0.etcd:2380")).reason())
        .isEqualTo("PlainHttpPeerUrl");
    assertThat(
            check(cert(year, true, Trust.TRUSTED), new PeerUrlFacts.Plain("http://x:2380"))
                .reason())
        .isEqualTo("PlainHttpPeerUrl");
    assertThat(check(cert(Duration.ofHours(-1), true, Trust.TRUSTED)).reason())
        .isEqualTo("CertificateExpired");
    assertThat(check(cert(Duration.ofDays(3), true, Trust.TRUSTED)).reason())
        .isEqualTo("CertificateExpiresSoon");
    assertThat(check(cert(year, false, Trust.TRUSTED)).reason())
        .isEqualTo("CertificateHostMismatch");
    assertThat(check(cert(year, true, Trust.UNTRUSTED)).reason()).isEqualTo("CertificateUntrusted");
    assertThat(check(new PeerUrlFacts.Unavailable(URL, "connection refused")).reason())
        .isEqualTo("CertificateUnavailable");
    assertThat(EVALUATOR.check(new PeerTlsFacts.Unknown("no member list"), NOW).reason())
        .isEqualTo("PeerUrlsUnknown");
  }

  @Test
  void plainHttpChosenOnPurposeIsNoProblemButAnHttpsUrlIsStillJudged() {
    PeerTlsEvaluator notRequired =
        new PeerTlsEvaluator(new PeerTlsPolicy(Duration.ofDays(30), false, false));
    Check plain =
        notRequired.check(
            new PeerTlsFacts.Inspected(
                List.of(new PeerUrlFacts.Plain("http://etcd-0.etcd:2380")), NOW),
            NOW);
    assertThat(plain.passed()).isTrue();
    assertThat(plain.reason()).isEqualTo("PeerTlsNotRequired");
    Check expired =
        notRequired.check(
            new PeerTlsFacts.Inspected(
                List.of(
                    new PeerUrlFacts.Plain("http://etcd-0.etcd:2380"),
                    cert(Duration.ofHours(-1), true, Trust.TRUSTED)),
                NOW),
            NOW);
    assertThat(expired.reason()).isEqualTo("CertificateExpired");
  }

  @Test
  void theConditionIsUnknownOnlyWhenTheAgentCannotTell() {
    PodCondition bad = condition(check(cert(Duration.ofHours(-1), true, Trust.TRUSTED)));
    PodCondition unknown = condition(check(new PeerUrlFacts.Unavailable(URL, "refused")));
    PodCondition good = condition(check(cert(Duration.ofDays(365), true, Trust.TRUSTED)));
    assertThat(bad.status()).isEqualTo(ConditionStatus.FALSE);
    assertThat(unknown.status()).isEqualTo(ConditionStatus.UNKNOWN);
    assertThat(good.status()).isEqualTo(ConditionStatus.TRUE);
  }

  @Test
  void gatesReadinessOnlyWhenConfigured() {
    MemberSnapshot base =
        MemberEvaluatorTest.snapshot(
            MemberEvaluatorTest.answered(
                MemberEvaluatorTest.status(false, MemberEvaluatorTest.LEADER, 1000)),
            MemberEvaluatorTest.members(MemberEvaluatorTest.self(false, true)),
            MemberEvaluatorTest.leaderAt(1000));
    MemberSnapshot plain =
        new MemberSnapshot(
            base.takenAt(),
            base.local(),
            base.membership(),
            base.leader(),
            base.ownPeerUrls(),
            0,
            java.util.Optional.empty(),
            new PeerTlsFacts.Inspected(List.of(new PeerUrlFacts.Plain("http://x:2380")), NOW),
            java.util.Optional.empty());
    Verdict lenient = new MemberEvaluator(new ReadinessPolicy(100)).evaluate(plain);
    Verdict strict =
        new MemberEvaluator(
                new ReadinessPolicy(100),
                java.util.Optional.empty(),
                new PeerTlsEvaluator(new PeerTlsPolicy(Duration.ofDays(30), true)))
            .evaluate(plain);
    assertThat(lenient.ready()).isTrue();
    assertThat(lenient.peerTls().reason()).isEqualTo("PlainHttpPeerUrl");
    assertThat(strict.ready()).isFalse();
    assertThat(strict.check(CheckNames.PEER_TLS)).isPresent();
  }

  private static PodCondition condition(Check check) {
    Verdict v =
        new MemberEvaluator(new ReadinessPolicy(100))
            .evaluate(
                MemberEvaluatorTest.snapshot(
                    MemberEvaluatorTest.REFUSED,
                    new Membership.Unknown("x"),
                    MemberEvaluatorTest.NO_LEADER));
    Verdict withPeer =
        new Verdict(
            v.decidedAt(),
            v.state(),
            v.stateDetail(),
            v.memberId(),
            v.lag(),
            v.checks(),
            v.alarms(),
            v.disk(),
            check);
    return DesiredConditions.from(withPeer, MemberEvaluatorTest.NOT_WATCHING).stream()
        .filter(c -> c.name().equals(ConditionNames.PEER_TLS))
        .findFirst()
        .orElseThrow();
  }
}
