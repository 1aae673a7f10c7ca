package io.etcdmemberagent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class GoDurationTest {

  @ParameterizedTest
  @CsvSource({
    "500ms,500",
    "2s,2000",
    "5m,300000",
    "1h,3600000",
    "1m30s,90000",
    "1.5s,1500",
    "0,0",
    "250us,0"
  })
  void parsesGoDurations(String text, long millis) {
    assertThat(GoDuration.parse(text).toMillis()).isEqualTo(millis);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "5", "s", "1d", "-1s", "1 s", "1s2", "ms500", "1.s"})
  void rejectsWhatGoRejects(String text) {
    assertThatThrownBy(() -> GoDuration.parse(text)).isInstanceOf(IllegalArgumentException.class);
  }

  @ParameterizedTest
  @CsvSource({"500,500ms", "2000,2s", "300000,5m", "3600000,1h", "1500,1500ms"})
  void formatsBack(long millis, String text) {
    assertThat(GoDuration.format(Duration.ofMillis(millis))).isEqualTo(text);
  }
}
