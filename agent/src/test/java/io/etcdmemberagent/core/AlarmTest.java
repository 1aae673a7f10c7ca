package io.etcdmemberagent.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class AlarmTest {
  @Test
  void parsesEtcdsAlarmTextsAndIgnoresOtherErrors() {
    assertThat(
            Alarm.parseAll(
                List.of(
                    "etcdserver: no leader",
                    "memberID:10276657743932975437 alarm:NOSPACE ",
                    "memberID:12 alarm:CORRUPT")))
        .containsExactly(
            new Alarm(Long.parseUnsignedLong("10276657743932975437"), "NOSPACE"),
            new Alarm(12, "CORRUPT"));
  }
}
