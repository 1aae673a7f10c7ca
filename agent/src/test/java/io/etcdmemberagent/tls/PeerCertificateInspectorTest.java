package io.etcdmemberagent.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.tls.PeerTlsFacts;
import io.etcdmemberagent.core.tls.PeerUrlFacts;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.TestPki;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Trust is the chain's alone; expiry is left to the evaluator and its own clock. */
class PeerCertificateInspectorTest {

  @TempDir Path dir;

  private PeerUrlFacts.Inspected inspect(TestPki pki, TestPki.Issued cert, Instant at) {
    PeerCertificateInspector inspector =
        new PeerCertificateInspector(
            Optional.of(cert.cert()),
            Optional.of(pki.caCert()),
            Duration.ofMillis(200),
            Clock.fixed(at, ZoneOffset.UTC));
    // Nobody listens on the port: the inspector falls back to --peer-cert.
    PeerTlsFacts facts = inspector.inspect(List.of("https://127.0.0.1:" + FreePorts.next()));
    return (PeerUrlFacts.Inspected) ((PeerTlsFacts.Inspected) facts).urls().get(0);
  }

  private static TestPki.Issued endedASecondAgo(TestPki pki, Instant now) {
    return pki.issue(
        "ended",
        now.minus(Duration.ofDays(1)),
        now.minusSeconds(1),
        List.of(),
        List.of("127.0.0.1"));
  }

  @Test
  void aCertificateThatJustEndedStillChainsToItsCa() {
    TestPki pki = new TestPki(dir, "peer");
    Instant now = Instant.now();
    PeerUrlFacts.Inspected facts = inspect(pki, endedASecondAgo(pki, now), now);
    assertThat(facts.trust()).isEqualTo(PeerUrlFacts.Trust.TRUSTED);
    assertThat(facts.notAfter()).isBefore(now);
  }

  @Test
  void aCertificateOfAnotherCaIsUntrustedWhateverTheTime() {
    TestPki ours = new TestPki(dir, "ours");
    TestPki other = new TestPki(dir, "other");
    Instant now = Instant.now();
    PeerUrlFacts.Inspected facts = inspect(ours, endedASecondAgo(other, now), now);
    assertThat(facts.trust()).isEqualTo(PeerUrlFacts.Trust.UNTRUSTED);
  }
}
