package io.etcdmemberagent.core.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class CertificateRenewalTest {

  static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
  static final Instant END = START.plus(Duration.ofDays(360));

  @Test
  void dueOnceTwoThirdsOfTheValidityPassed() {
    assertThat(CertificateRenewal.due(START, END, START.plus(Duration.ofDays(239)))).isFalse();
    assertThat(CertificateRenewal.due(START, END, START.plus(Duration.ofDays(240)))).isTrue();
    assertThat(CertificateRenewal.due(START, END, END.plusSeconds(1))).as("expired").isTrue();
  }

  @Test
  void aCertificateWithoutValidityIsAlwaysDue() {
    assertThat(CertificateRenewal.due(START, START, START.minusSeconds(1))).isTrue();
    assertThat(CertificateRenewal.due(END, START, START)).isTrue();
  }
}
